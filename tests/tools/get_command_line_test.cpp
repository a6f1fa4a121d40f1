// SPDX-License-Identifier: MIT
// get_command_line_test.cpp: memshard-get's command line in process
// (get/command_line.hpp): every option in both forms, the keys and "--", the
// defaults, every refusal as a value (the codec spec included), what wins
// over what, and the --help, --version and --list-codecs texts.

#include <gtest/gtest.h>

#include <memshard/codecs/make_codec.hpp>
#include <memshard/placement/key_prefix.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "get/command_line.hpp"

namespace get_command_line_test {
namespace {

namespace tool = memshard::get_tool;
using tool::GetAction;

auto parse(const std::vector<std::string>& args) -> tool::ParsedGetCommandLine {
  const std::vector<std::string_view> views(args.begin(), args.end());
  return tool::parse_get_command_line(views);
}

auto error_of(const std::vector<std::string>& args) -> std::string { return parse(args).error; }

const std::vector<std::string> kMinimal = {"--profile", "libmemcached-modula", "--server",
                                           "a:11211"};

auto with(std::vector<std::string> args, const std::vector<std::string>& more)
    -> std::vector<std::string> {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(GetCommandLineTest, EveryOptionInBothForms) {
  const tool::GetCommandLine expected{
      .action = GetAction::kGet,
      .placement = {.profile = "ring-crc32",
                    .hash = "fnv1a_32",
                    .points = 32,
                    .weighted = false,
                    .hash_tag = "{}",
                    .server_specs = {"a:11211", "b:11211:2"},
                    .prefix = "app:",
                    .prefix_hashing = memshard::PrefixHashing::kPrefixedKey},
      .codec = "dalli:serializer=JSON,compress=false",
      .keys = {"user:42", "user:43"}};
  const auto separate = parse({"--profile",  "ring-crc32", "--hash",
                               "fnv1a_32",   "--points",   "32",
                               "--weighted", "false",      "--hash-tag",
                               "{}",         "--server",   "a:11211",
                               "user:42",    "--server",   "b:11211:2",
                               "--prefix",   "app:",       "--prefix-hashing",
                               "prefixed",   "--codec",    "dalli:serializer=JSON,compress=false",
                               "user:43"});
  ASSERT_TRUE(separate.ok()) << separate.error;
  EXPECT_EQ(separate.command, expected);
  const auto equals = parse({"user:42", "--profile=ring-crc32", "--hash=fnv1a_32", "--points=32",
                             "--weighted=false", "--hash-tag={}", "--server=a:11211",
                             "--server=b:11211:2", "--prefix=app:", "--prefix-hashing=prefixed",
                             "--codec=dalli:serializer=JSON,compress=false", "user:43"});
  ASSERT_TRUE(equals.ok()) << equals.error;
  EXPECT_EQ(equals.command, expected);
}

TEST(GetCommandLineTest, Defaults) {
  const auto parsed = parse(kMinimal);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  const tool::GetCommandLine& command = parsed.command;
  EXPECT_EQ(command.action, GetAction::kGet);
  EXPECT_EQ(command.codec, "plain");
  EXPECT_EQ(command.codec, tool::kDefaultCodec);
  EXPECT_TRUE(command.keys.empty());  // the keys come from standard input
  EXPECT_EQ(command.placement.profile, "libmemcached-modula");
  EXPECT_EQ(command.placement.server_specs, std::vector<std::string>{"a:11211"});
  EXPECT_FALSE(command.placement.hash);
  EXPECT_FALSE(command.placement.points);
  EXPECT_FALSE(command.placement.weighted);
  EXPECT_FALSE(command.placement.hash_tag);
  EXPECT_FALSE(command.placement.prefix);
  EXPECT_FALSE(command.placement.prefix_hashing);
  const auto bare =
      parse(with(kMinimal, {"--weighted", "true", "--prefix", "p:", "--prefix-hashing", "bare"}));
  ASSERT_TRUE(bare.ok()) << bare.error;
  EXPECT_EQ(bare.command.placement.weighted, true);
  EXPECT_EQ(bare.command.placement.prefix_hashing, memshard::PrefixHashing::kBareKey);
  // --prefix= is no prefix.
  const auto no_prefix = parse(with(kMinimal, {"--prefix="}));
  ASSERT_TRUE(no_prefix.ok()) << no_prefix.error;
  EXPECT_EQ(no_prefix.command.placement.prefix, "");
}

TEST(GetCommandLineTest, KeysInOrderAndAfterDoubleDash) {
  const auto parsed = parse(with(kMinimal, {"k1", "--codec", "php-memcached", "k2", "--", "-k3",
                                            "--server", "--", "", "k 5"}));
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  // Everything after "--" is a key, even an empty or invalid one: keys are
  // checked when they are read.
  EXPECT_EQ(parsed.command.keys,
            (std::vector<std::string>{"k1", "k2", "-k3", "--server", "--", "", "k 5"}));
  EXPECT_EQ(parsed.command.codec, "php-memcached");
  EXPECT_EQ(parsed.command.placement.server_specs, std::vector<std::string>{"a:11211"});
  // --help after "--" is a key too.
  EXPECT_EQ(parse(with(kMinimal, {"--", "--help"})).command.action, GetAction::kGet);
}

TEST(GetCommandLineTest, EveryCodecNameAndSpecIsAccepted) {
  for (const std::string_view name : memshard::codec_names()) {
    const auto parsed = parse(with(kMinimal, {"--codec", std::string(name)}));
    EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.error;
    EXPECT_EQ(parsed.command.codec, name);
  }
  for (const std::string spec :
       {"php-memcached:serializer=igbinary,compression=zlib", "dalli:serializer=JSON",
        "plain:flags=7", "pymemcache:serde=pickle_serde,max_depth=10"}) {
    const auto parsed = parse(with(kMinimal, {"--codec=" + spec}));
    EXPECT_TRUE(parsed.ok()) << spec << ": " << parsed.error;
    EXPECT_EQ(parsed.command.codec, spec);
  }
}

TEST(GetCommandLineTest, HelpVersionAndListCodecsWin) {
  EXPECT_EQ(parse({"--help", "--frobnicate"}).command.action, GetAction::kHelp);
  EXPECT_EQ(parse({"-h"}).command.action, GetAction::kHelp);
  EXPECT_EQ(parse({"--version", "--codec", "nope"}).command.action, GetAction::kVersion);
  EXPECT_EQ(parse({"--list-codecs"}).command.action, GetAction::kListCodecs);
  EXPECT_EQ(parse({"--codec", "nope", "--list-codecs"}).command.action, GetAction::kListCodecs);
  EXPECT_EQ(parse({"key", "--list-codecs", "--help"}).command.action, GetAction::kListCodecs);
  // Not over an error before them.
  EXPECT_FALSE(parse({"--frobnicate", "--help"}).ok());
  EXPECT_FALSE(parse({"--points", "x", "--list-codecs"}).ok());
}

TEST(GetCommandLineTest, Refusals) {
  EXPECT_EQ(error_of({}), "missing --profile NAME (see memshard-locate --list-profiles)");
  EXPECT_EQ(error_of({"k"}), "missing --profile NAME (see memshard-locate --list-profiles)");
  EXPECT_EQ(error_of({"--profile", "x", "k"}), "missing --server SPEC (at least one server)");
  EXPECT_EQ(error_of(with(kMinimal, {"--frobnicate"})),
            "unknown option '--frobnicate' (a key that starts with '-' goes after --)");
  EXPECT_EQ(error_of(with(kMinimal, {"-k"})),
            "unknown option '-k' (a key that starts with '-' goes after --)");
  EXPECT_EQ(error_of(with(kMinimal, {"--to-server=b:1"})),
            "unknown option '--to-server' (a key that starts with '-' goes after --)");
  EXPECT_EQ(error_of(with(kMinimal, {"--codec"})), "option --codec needs a value");
  EXPECT_EQ(error_of(with(kMinimal, {"--codec", "--server", "b:1"})),
            "option --codec needs a value");
  EXPECT_EQ(error_of(with(kMinimal, {"--codec="})), "option --codec needs a value");
  EXPECT_EQ(error_of(with(kMinimal, {"--server="})), "option --server needs a value");
  EXPECT_EQ(error_of(with(kMinimal, {"--list-codecs=yes"})), "option --list-codecs takes no value");
  EXPECT_EQ(error_of(with(kMinimal, {"--profile", "y"})), "--profile given twice");
  EXPECT_EQ(error_of(with(kMinimal, {"--hash", "a", "--hash=b"})), "--hash given twice");
  EXPECT_EQ(error_of(with(kMinimal, {"--codec", "plain", "--codec", "plain"})),
            "--codec given twice");
  EXPECT_EQ(error_of(with(kMinimal, {"--points", "0"})),
            "--points needs a positive whole number, not '0'");
  EXPECT_EQ(error_of(with(kMinimal, {"--points", "1.5"})),
            "--points needs a positive whole number, not '1.5'");
  EXPECT_EQ(error_of(with(kMinimal, {"--weighted", "yes"})),
            "--weighted needs true or false, not 'yes'");
  EXPECT_EQ(error_of(with(kMinimal, {"--prefix-hashing", "both"})),
            "--prefix-hashing needs bare or prefixed, not 'both'");
  EXPECT_EQ(error_of(with(kMinimal, {"--prefix-hashing", "bare"})),
            "option --prefix-hashing needs --prefix P");
  EXPECT_EQ(error_of(with(kMinimal, {"--prefix=", "--prefix-hashing", "bare"})),
            "option --prefix-hashing needs --prefix P");
  EXPECT_EQ(error_of(with(kMinimal, {"--prefix", "a b"})),
            "--prefix: key prefix holds a space or control character: a b");
}

TEST(GetCommandLineTest, TheCodecSpecIsCheckedAsAUsageError) {
  const std::string unknown = error_of(with(kMinimal, {"--codec", "memcache"}));
  EXPECT_TRUE(unknown.starts_with("--codec: unknown codec (known: php-memcached, ")) << unknown;
  EXPECT_TRUE(unknown.ends_with(", plain): memcache (see --list-codecs)")) << unknown;
  EXPECT_EQ(error_of(with(kMinimal, {"--codec", "php-memcached:serializer=yaml"})),
            "--codec: php-memcached setting serializer wants one of php, igbinary, json, "
            "msgpack: yaml (see --list-codecs)");
  EXPECT_EQ(error_of(with(kMinimal, {"--codec", "dalli:colour=blue"})),
            "--codec: dalli has no setting: colour (see --list-codecs)");
  EXPECT_EQ(error_of(with(kMinimal, {"--codec", "plain:flags"})),
            "--codec: a codec setting is name=value: flags (see --list-codecs)");
}

TEST(GetCommandLineTest, Texts) {
  std::ostringstream codecs;
  tool::print_codecs(codecs);
  EXPECT_EQ(codecs.str(),
            "php-memcached\nphp-memcache\nspymemcached\npython-memcache\npymemcache\npylibmc\n"
            "dalli\ncache-memcached\ncache-memcached-fast\nphp-session\nplain\n");
  std::ostringstream version;
  tool::print_version(version);
  std::string expected = "memshard-get (memshard) ";
  expected.append(std::to_string(MEMSHARD_VERSION_MAJOR)).append(".");
  expected.append(std::to_string(MEMSHARD_VERSION_MINOR)).append(".");
  expected.append(std::to_string(MEMSHARD_VERSION_PATCH)).append("\n");
  EXPECT_EQ(version.str(), expected);
  std::ostringstream usage;
  tool::print_usage(usage);
  const std::string help = usage.str();
  EXPECT_TRUE(help.starts_with("Usage: memshard-get --profile NAME --server SPEC")) << help;
  for (const std::string_view needle :
       {"{\"key\":\"K\",\"server\":\"host:port\",\"flags\":N,\"type\":\"T\",\"value\":V}",
        "{\"key\":\"K\",\"server\":\"host:port\",\"type\":\"miss\"}",
        "{\"key\":\"K\",\"server\":\"host:port\",\"flags\":N,\"error\":\"MESSAGE\"}",
        "a string that is not valid UTF-8\n               is printed as {\"base64\":\"...\"}",
        "an integer key as its decimal text", "read from standard input", "--list-codecs",
        "--prefix-hashing bare|prefixed", "\"inf\", \"-inf\" and \"nan\"", "Exit status: 0"}) {
    EXPECT_NE(help.find(needle), std::string::npos) << needle;
  }
  // Every line fits in 80 columns.
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 80U) << line;
  }
}

}  // namespace
}  // namespace get_command_line_test
