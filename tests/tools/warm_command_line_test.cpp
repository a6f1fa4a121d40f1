// SPDX-License-Identifier: MIT
// warm_command_line_test.cpp: memshard-warm's arguments (warm/command_line.hpp):
// both spellings of each placement option, the numbers, the switches, and
// every refusal as a value.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "warm/command_line.hpp"

namespace warm_command_line_test {
namespace {

namespace tool = memshard::warm_tool;

auto parse(const std::vector<std::string>& args) -> tool::ParsedWarmCommandLine {
  const std::vector<std::string_view> views(args.begin(), args.end());
  return tool::parse_warm_command_line(views);
}

auto error_of(const std::vector<std::string>& args) -> std::string { return parse(args).error; }

const std::vector<std::string> kMinimal = {"--from",         "libmemcached-modula",
                                           "--from-servers", "a:11211,b:11211",
                                           "--to-servers",   "a:11211,b:11211,c:11211"};

auto with(std::vector<std::string> args, const std::vector<std::string>& more)
    -> std::vector<std::string> {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(WarmCommandLineTest, TheBriefForm) {
  const auto parsed =
      parse(with(kMinimal, {"--to", "libmemcached-ketama", "--ops-per-second", "500",
                            "--bytes-per-second=0", "--min-ttl", "30", "--json", "--quiet"}));
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  const tool::WarmCommandLine& command = parsed.command;
  EXPECT_EQ(command.action, tool::WarmAction::kWarm);
  EXPECT_EQ(command.from.profile, "libmemcached-modula");
  EXPECT_EQ(command.from.server_specs, std::vector<std::string>{"a:11211,b:11211"});
  EXPECT_EQ(command.to.profile, "libmemcached-ketama");
  EXPECT_EQ(command.to.server_specs, std::vector<std::string>{"a:11211,b:11211,c:11211"});
  EXPECT_EQ(command.ops_per_second, 500U);
  EXPECT_EQ(command.bytes_per_second, 0U);
  EXPECT_EQ(command.min_ttl, 30U);
  EXPECT_TRUE(command.json);
  EXPECT_TRUE(command.quiet);
}

TEST(WarmCommandLineTest, MemshardLocateSpellingsMeanTheSame) {
  const auto brief = parse({"--from", "ring-crc32", "--from-servers", "a:1", "--hash-tag", "{}",
                            "--to", "ring-crc32", "--to-servers", "a:1", "--to-points", "40"});
  const auto locate =
      parse({"--profile=ring-crc32", "--server", "a:1", "--hash-tag", "{}", "--to-profile",
             "ring-crc32", "--to-server", "a:1", "--to-points", "40"});
  ASSERT_TRUE(brief.ok()) << brief.error;
  ASSERT_TRUE(locate.ok()) << locate.error;
  EXPECT_EQ(brief.command, locate.command);
  EXPECT_EQ(brief.command.from.hash_tag, "{}");
  EXPECT_EQ(brief.command.to.points, 40U);
  const auto weighted = parse(with(kMinimal, {"--weighted", "true", "--to-weighted=false", "--hash",
                                              "md5", "--to-hash", "crc"}));
  ASSERT_TRUE(weighted.ok()) << weighted.error;
  EXPECT_EQ(weighted.command.from.weighted, true);
  EXPECT_EQ(weighted.command.to.weighted, false);
  EXPECT_EQ(weighted.command.from.hash, "md5");
  EXPECT_EQ(weighted.command.to.hash, "crc");
  EXPECT_FALSE(parse(kMinimal).command.json);
}

TEST(WarmCommandLineTest, HelpAndVersionWin) {
  EXPECT_EQ(parse({"--help", "--frobnicate"}).command.action, tool::WarmAction::kHelp);
  EXPECT_EQ(parse({"-h"}).command.action, tool::WarmAction::kHelp);
  EXPECT_EQ(parse({"--version"}).command.action, tool::WarmAction::kVersion);
  EXPECT_FALSE(parse({"--frobnicate", "--help"}).ok());
}

TEST(WarmCommandLineTest, Refusals) {
  EXPECT_EQ(error_of({}),
            "missing --from PROFILE, the old fleet's profile (see memshard-locate "
            "--list-profiles)");
  EXPECT_EQ(error_of({"--from", "x"}), "missing --from-servers LIST, the old fleet's servers");
  EXPECT_EQ(error_of({"--from", "x", "--from-servers", "a:1"}),
            "missing --to-servers LIST, the new fleet's servers");
  EXPECT_EQ(error_of(with(kMinimal, {"--frobnicate"})), "unknown option '--frobnicate'");
  EXPECT_EQ(error_of(with(kMinimal, {"stray"})), "unexpected argument 'stray'");
  EXPECT_EQ(error_of(with(kMinimal, {"--ops-per-second"})),
            "option --ops-per-second needs a value");
  EXPECT_EQ(error_of(with(kMinimal, {"--ops-per-second", "--json"})),
            "option --ops-per-second needs a value");
  EXPECT_EQ(error_of(with(kMinimal, {"--ops-per-second", "-5"})),
            "--ops-per-second needs a whole number, not '-5'");
  EXPECT_EQ(error_of(with(kMinimal, {"--min-ttl", "1.5"})),
            "--min-ttl needs a whole number, not '1.5'");
  EXPECT_EQ(error_of(with(kMinimal, {"--json=yes"})), "option --json takes no value");
  EXPECT_EQ(error_of(with(kMinimal, {"--profile", "y"})),
            "--profile given twice (or with its other spelling)");
  EXPECT_EQ(error_of(with(kMinimal, {"--points", "0"})),
            "--points needs a positive whole number, not '0'");
  EXPECT_EQ(error_of(with(kMinimal, {"--to-weighted", "yes"})),
            "--to-weighted needs true or false, not 'yes'");
  EXPECT_EQ(error_of(with(kMinimal, {"--min-ttl="})), "option --min-ttl needs a value");
}

}  // namespace
}  // namespace warm_command_line_test
