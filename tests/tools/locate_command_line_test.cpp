// SPDX-License-Identifier: MIT
// locate_command_line_test.cpp: memshard-locate's command line in process: what
// the arguments parse into, which usage errors they give (as values), how B's
// options default to A's, and the --help, --version and --list-profiles texts.

#include <gtest/gtest.h>

#include <memshard/memshard.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "locate/command_line.hpp"
#include "tools/locate_support.hpp"

namespace {

namespace tool = memshard::locate_tool;
using tool::Action;
using tool::testing::lines_of;
using tool::testing::parse;

/// listed_hashes: the hash names a profile takes, as the profile table gives them.
auto listed_hashes(const memshard::ProfileInfo& profile) -> std::string {
  return std::string(profile.hashes);
}

TEST(LocateCommandLineTest, LocateOptions) {
  const tool::ParsedCommandLine parsed =
      parse({"--profile", "ring-crc32", "--hash", "fnv1a_32", "--points", "32", "--weighted",
             "false", "--hash-tag", "{}", "--server", "a:11211", "--server", "b:11211:2"});
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  const tool::CommandLine& command = parsed.command;
  EXPECT_EQ(command.action, Action::kLocate);
  EXPECT_EQ(command.from.profile, "ring-crc32");
  EXPECT_EQ(command.from.hash, "fnv1a_32");
  EXPECT_EQ(command.from.points, 32U);
  EXPECT_EQ(command.from.weighted, false);
  EXPECT_EQ(command.from.hash_tag, "{}");
  EXPECT_EQ(command.from.server_specs, (std::vector<std::string>{"a:11211", "b:11211:2"}));
  EXPECT_FALSE(command.to.profile);
  EXPECT_TRUE(command.to.server_specs.empty());
  EXPECT_FALSE(command.sample);
  EXPECT_FALSE(command.per_key);
  EXPECT_FALSE(command.fail_if_moved);
}

TEST(LocateCommandLineTest, OptionsTakeTheEqualsForm) {
  const tool::ParsedCommandLine separate =
      parse({"--compare", "--profile", "ring-crc32", "--hash", "fnv1a_32", "--points", "32",
             "--server", "a:11211", "--server", "b:11211", "--to-points", "8", "--sample", "5"});
  const tool::ParsedCommandLine equals =
      parse({"--compare", "--profile=ring-crc32", "--hash=fnv1a_32", "--points=32",
             "--server=a:11211", "--server=b:11211", "--to-points=8", "--sample=5"});
  ASSERT_TRUE(separate.ok()) << separate.error;
  ASSERT_TRUE(equals.ok()) << equals.error;
  for (const tool::CommandLine* command : {&separate.command, &equals.command}) {
    EXPECT_EQ(command->action, Action::kCompare);
    EXPECT_EQ(command->from.profile, "ring-crc32");
    EXPECT_EQ(command->from.hash, "fnv1a_32");
    EXPECT_EQ(command->from.points, 32U);
    EXPECT_EQ(command->from.server_specs, (std::vector<std::string>{"a:11211", "b:11211"}));
    EXPECT_EQ(command->to.points, 8U);
    EXPECT_EQ(command->sample, 5U);
  }
}

TEST(LocateCommandLineTest, CompareOptions) {
  const tool::ParsedCommandLine parsed = parse({"--compare",
                                                "--per-key",
                                                "--fail-if-moved",
                                                "--profile",
                                                "twemproxy-ketama",
                                                "--server",
                                                "a:11211",
                                                "--to-profile",
                                                "libmemcached-ketama",
                                                "--to-hash",
                                                "md5",
                                                "--to-points",
                                                "40",
                                                "--to-weighted",
                                                "true",
                                                "--to-hash-tag",
                                                "[]",
                                                "--to-server",
                                                "b:11211",
                                                "--to-server",
                                                "c:11211"});
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  const tool::CommandLine& command = parsed.command;
  EXPECT_EQ(command.action, Action::kCompare);
  EXPECT_TRUE(command.per_key);
  EXPECT_TRUE(command.fail_if_moved);
  EXPECT_EQ(command.to.profile, "libmemcached-ketama");
  EXPECT_EQ(command.to.hash, "md5");
  EXPECT_EQ(command.to.points, 40U);
  EXPECT_EQ(command.to.weighted, true);
  EXPECT_EQ(command.to.hash_tag, "[]");
  EXPECT_EQ(command.to.server_specs, (std::vector<std::string>{"b:11211", "c:11211"}));
}

TEST(LocateCommandLineTest, InformationOptionsWinOverWhatFollows) {
  EXPECT_EQ(parse({"--help"}).command.action, Action::kHelp);
  EXPECT_EQ(parse({"-h"}).command.action, Action::kHelp);
  EXPECT_EQ(parse({"--version"}).command.action, Action::kVersion);
  EXPECT_EQ(parse({"--list-profiles"}).command.action, Action::kListProfiles);
  // The profile is checked only when a placement is built.
  const tool::ParsedCommandLine help = parse({"--profile", "nonexistent", "--help", "--bogus"});
  ASSERT_TRUE(help.ok()) << help.error;
  EXPECT_EQ(help.command.action, Action::kHelp);
  // An error before --help still counts.
  EXPECT_EQ(parse({"--bogus", "--help"}).error, "unknown option '--bogus'");
}

TEST(LocateCommandLineTest, UsageErrorsAreValues) {
  // Exact texts; every usage error is also run through the tool in locate_run_test.cpp.
  const std::string ketama = "libmemcached-ketama-weighted";
  EXPECT_EQ(parse({}).error, "missing --profile NAME (see --list-profiles)");
  EXPECT_EQ(parse({"--profile", ketama}).error, "missing --server SPEC (at least one server)");
  EXPECT_EQ(parse({"--profile", ketama, "--server", "a:1", "k"}).error,
            "unexpected argument 'k' (keys are read from standard input)");
  EXPECT_EQ(parse({"--profile", ketama, "--server"}).error, "option --server needs a value");
  EXPECT_EQ(parse({"--points", "0x10"}).error,
            "--points needs a positive whole number, not '0x10'");
  EXPECT_EQ(parse({"--weighted", "TRUE"}).error, "--weighted needs true or false, not 'TRUE'");
  EXPECT_EQ(parse({"--hash-tag", "{}", "--hash-tag", "[]"}).error, "--hash-tag given twice");
  EXPECT_EQ(parse({"--fail-if-moved=1"}).error, "option --fail-if-moved takes no value");
  EXPECT_EQ(parse({"--profile", ketama, "--server", "a:1", "--to-hash-tag", "{}"}).error,
            "option --to-hash-tag is only for --compare");
  // The first option that needs --compare is the one named.
  EXPECT_EQ(parse({"--profile", ketama, "--per-key", "--sample", "3", "--server", "a:1"}).error,
            "option --per-key is only for --compare");
  EXPECT_FALSE(parse({"--profile", ketama, "--server", "a:1", "--points", "-1"}).ok());
}

TEST(LocateCommandLineTest, SideBTakesAOptionsOnlyWithinTheSameProfile) {
  tool::SideArgs a;
  a.profile = "ring-crc32";
  a.hash = "fnv1a_32";
  a.points = 32;
  a.weighted = true;
  a.hash_tag = "{}";
  a.server_specs = {"a:11211"};
  // Nothing given for B: B is A.
  const tool::SideArgs same = tool::side_b(a, {});
  EXPECT_EQ(same.profile, a.profile);
  EXPECT_EQ(same.hash, a.hash);
  EXPECT_EQ(same.points, a.points);
  EXPECT_EQ(same.weighted, a.weighted);
  EXPECT_EQ(same.hash_tag, a.hash_tag);
  EXPECT_EQ(same.server_specs, a.server_specs);
  // B's own options win; B's servers replace A's entirely.
  tool::SideArgs to;
  to.profile = "ring-crc32";
  to.points = 8;
  to.server_specs = {"b:11211", "c:11211"};
  const tool::SideArgs own = tool::side_b(a, to);
  EXPECT_EQ(own.hash, "fnv1a_32");
  EXPECT_EQ(own.points, 8U);
  EXPECT_EQ(own.server_specs, to.server_specs);
  // Another profile: none of A's hash, points, weighted or hash tag, but A's servers.
  tool::SideArgs other;
  other.profile = "libmemcached-modula";
  const tool::SideArgs modula = tool::side_b(a, other);
  EXPECT_EQ(modula.profile, "libmemcached-modula");
  EXPECT_FALSE(modula.hash);
  EXPECT_FALSE(modula.points);
  EXPECT_FALSE(modula.weighted);
  EXPECT_FALSE(modula.hash_tag);
  EXPECT_EQ(modula.server_specs, a.server_specs);
}

TEST(LocateCommandLineTest, UsageNamesEveryOption) {
  std::ostringstream out;
  tool::print_usage(out);
  const std::string usage = out.str();
  EXPECT_TRUE(usage.starts_with("Usage: memshard-locate --profile NAME")) << usage;
  for (const std::string_view option :
       {"--profile", "--hash", "--points", "--weighted", "--hash-tag", "--server",
        "--list-profiles", "--help", "--version", "--compare", "--to-profile", "--to-hash",
        "--to-points", "--to-weighted", "--to-hash-tag", "--to-server", "--sample", "--per-key",
        "--fail-if-moved"}) {
    EXPECT_NE(usage.find(option), std::string::npos) << option;
  }
  // Hash names depend on the profile: the help sends the reader to --list-profiles.
  EXPECT_NE(usage.find("the names depend"), std::string::npos) << usage;
  EXPECT_NE(usage.find("see --list-profiles"), std::string::npos) << usage;
  EXPECT_NE(usage.find("key:0, key:1, ... key:<N-1>"), std::string::npos) << usage;
  EXPECT_NE(usage.find("3 with --fail-if-moved, some key moved (this wins over 1).\n"),
            std::string::npos);
}

TEST(LocateCommandLineTest, VersionIsTheLibraryVersion) {
  std::ostringstream out;
  tool::print_version(out);
  EXPECT_EQ(out.str(), "memshard-locate (memshard) " + std::to_string(MEMSHARD_VERSION_MAJOR) +
                           "." + std::to_string(MEMSHARD_VERSION_MINOR) + "." +
                           std::to_string(MEMSHARD_VERSION_PATCH) + "\n");
}

TEST(LocateCommandLineTest, ProfileHashesAreTheTables) {
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    EXPECT_EQ(tool::profile_hashes(profile), listed_hashes(profile)) << profile.name;
  }
}

TEST(LocateCommandLineTest, ListProfilesNamesEveryProfile) {
  std::ostringstream out;
  tool::print_profiles(out);
  const std::vector<std::string> lines = lines_of(out.str());
  // Each profile is a block: its name alone, then indented its summary, the
  // hashes it takes and whether it takes --points.
  ASSERT_EQ(lines.size(), 4 * memshard::kProfiles.size()) << out.str();
  for (std::size_t i = 0; i < memshard::kProfiles.size(); ++i) {
    const memshard::ProfileInfo& profile = memshard::kProfiles.at(i);
    EXPECT_EQ(lines[4 * i], profile.name);
    EXPECT_EQ(lines[4 * i + 1], "    " + std::string(profile.summary));
    const std::string& hashes = lines[4 * i + 2];
    EXPECT_TRUE(hashes.starts_with("    hash:   ")) << hashes;
    const std::string listed = listed_hashes(profile);
    if (listed.empty()) {
      EXPECT_EQ(hashes, "    hash:   fixed (no --hash)");
    } else {
      EXPECT_NE(hashes.find(std::string(profile.default_hash) + " (default)"), std::string::npos)
          << hashes;
      EXPECT_EQ(hashes.find(" (default)"), hashes.rfind(" (default)")) << hashes;
      std::string_view rest = listed;
      while (!rest.empty()) {
        const auto comma = rest.find(", ");
        EXPECT_NE(hashes.find(rest.substr(0, comma)), std::string::npos)
            << rest.substr(0, comma) << " in " << hashes;
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
      }
    }
    EXPECT_EQ(lines[4 * i + 3],
              std::string(profile.has_points ? "    points: yes (--points K)" : "    points: no") +
                  (profile.has_weighted ? "; weighted: yes (--weighted true|false)" : "") +
                  (profile.has_hash_tag ? "; hash tag: yes (--hash-tag XY)" : ""));
  }
}

TEST(LocateCommandLineTest, ListProfilesExactBlocks) {
  std::ostringstream out;
  tool::print_profiles(out);
  const std::string text = out.str();
  // A hash list with notes and the default first, and a profile with a fixed hash.
  EXPECT_NE(
      text.find("\ntwemproxy-ketama\n"
                "    twemproxy distribution: ketama (hash: as in nutcracker.yml, default md5)\n"
                "    hash:   md5 (default), one_at_a_time, crc32 (15-bit), crc32a, fnv1_32, "
                "fnv1a_32, fnv1_64, fnv1a_64, murmur\n"
                "    points: no; hash tag: yes (--hash-tag XY)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("\nspymemcached-ketama\n"
                      "    spymemcached KetamaConnectionFactory, SPYMEMCACHED node keys "
                      "(host:port-r)\n"
                      "    hash:   fixed (no --hash)\n"
                      "    points: no; weighted: yes (--weighted true|false)\n"),
            std::string::npos)
      << text;
}

}  // namespace
