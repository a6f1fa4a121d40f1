// SPDX-License-Identifier: MIT
// locate_command_line_test.cpp: memshard-locate's command line in process: what
// the arguments parse into, which usage errors they give (as values), how B's
// options default to A's, and the --help, --version and --list-profiles texts.

#include <gtest/gtest.h>

#include <memshard/placement.hpp>
#include <memshard/placement/key_prefix.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "locate/command_line.hpp"
#include "tools/locate_support.hpp"

namespace locate_command_line_test {
namespace {

namespace tool = memshard::locate_tool;
using tool::Action;
using tool::testing::lines_of;
using tool::testing::parse;

/// listed_hashes: the hash names a profile takes, as the profile table gives them.
auto listed_hashes(const memshard::ProfileInfo& profile) -> std::string {
  return memshard::hash_names(profile);
}

TEST(LocateCommandLineTest, EveryOptionInBothForms) {
  const tool::CommandLine expected{.action = Action::kCompare,
                                   .from = {.profile = "ring-crc32",
                                            .hash = "fnv1a_32",
                                            .points = 32,
                                            .weighted = false,
                                            .hash_tag = "{}",
                                            .server_specs = {"a:11211", "b:11211:2"}},
                                   .to = {.profile = "libmemcached-ketama",
                                          .hash = "md5",
                                          .points = 40,
                                          .weighted = true,
                                          .hash_tag = "[]",
                                          .server_specs = {"c:11211"}},
                                   .sample = 5,
                                   .per_key = true,
                                   .fail_if_moved = true};
  const tool::ParsedCommandLine separate = parse({"--compare",
                                                  "--per-key",
                                                  "--fail-if-moved",
                                                  "--profile",
                                                  "ring-crc32",
                                                  "--hash",
                                                  "fnv1a_32",
                                                  "--points",
                                                  "32",
                                                  "--weighted",
                                                  "false",
                                                  "--hash-tag",
                                                  "{}",
                                                  "--server",
                                                  "a:11211",
                                                  "--server",
                                                  "b:11211:2",
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
                                                  "c:11211",
                                                  "--sample",
                                                  "5"});
  const tool::ParsedCommandLine equals = parse(
      {"--compare", "--per-key", "--fail-if-moved", "--profile=ring-crc32", "--hash=fnv1a_32",
       "--points=32", "--weighted=false", "--hash-tag={}", "--server=a:11211", "--server=b:11211:2",
       "--to-profile=libmemcached-ketama", "--to-hash=md5", "--to-points=40", "--to-weighted=true",
       "--to-hash-tag=[]", "--to-server=c:11211", "--sample=5"});
  EXPECT_TRUE(separate.ok()) << separate.error;
  EXPECT_TRUE(equals.ok()) << equals.error;
  EXPECT_TRUE(separate.command == expected);
  EXPECT_TRUE(equals.command == expected);
  // Without --compare: locate, and nothing of B.
  EXPECT_TRUE(parse({"--profile", "ring-crc32", "--server", "a:1"}).command ==
              (tool::CommandLine{.action = Action::kLocate,
                                 .from = {.profile = "ring-crc32", .server_specs = {"a:1"}}}));
}

TEST(LocateCommandLineTest, PrefixOptionsInBothForms) {
  using memshard::PrefixHashing;
  const tool::CommandLine expected{
      .action = Action::kCompare,
      .from = {.server_specs = {"a:11211"},
               .prefix = "app:",
               .prefix_hashing = PrefixHashing::kBareKey},
      .to = {.prefix = "ns:", .prefix_hashing = PrefixHashing::kPrefixedKey}};
  const tool::ParsedCommandLine separate =
      parse({"--compare", "--server", "a:11211", "--prefix", "app:", "--prefix-hashing", "bare",
             "--to-prefix", "ns:", "--to-prefix-hashing", "prefixed", "--profile", "dalli"});
  const tool::ParsedCommandLine equals =
      parse({"--compare", "--server=a:11211", "--prefix=app:", "--prefix-hashing=bare",
             "--to-prefix=ns:", "--to-prefix-hashing=prefixed", "--profile=dalli"});
  tool::CommandLine with_profile = expected;
  with_profile.from.profile = "dalli";
  ASSERT_TRUE(separate.ok()) << separate.error;
  ASSERT_TRUE(equals.ok()) << equals.error;
  EXPECT_TRUE(separate.command == with_profile);
  EXPECT_TRUE(equals.command == with_profile);
  // Locating: --prefix alone (its hashing unset: bare, as libmemcached); a value
  // may start with '-'; the longest prefix is 249 bytes.
  EXPECT_TRUE(
      parse({"--profile", "dalli", "--server", "a:1", "--prefix", "-x-"}).command ==
      (tool::CommandLine{.from = {.profile = "dalli", .server_specs = {"a:1"}, .prefix = "-x-"}}));
  const std::string longest(249, 'p');
  EXPECT_EQ(
      parse({"--profile", "dalli", "--server", "a:1", "--prefix", longest}).command.from.prefix,
      longest);
  // --prefix= is no prefix: B's way to drop A's (its hashing then needs a prefix).
  const tool::ParsedCommandLine dropped = parse(
      {"--compare", "--profile", "dalli", "--server", "a:1", "--prefix", "app:", "--to-prefix="});
  ASSERT_TRUE(dropped.ok()) << dropped.error;
  EXPECT_EQ(dropped.command.to.prefix, std::optional<std::string>(""));
  EXPECT_EQ(parse({"--compare", "--profile", "dalli", "--server", "a:1", "--prefix",
                   "app:", "--to-prefix", ""})
                .command.to.prefix,
            std::optional<std::string>(""));
  // --to-prefix-hashing alone: B takes A's prefix.
  const tool::ParsedCommandLine rehashed =
      parse({"--compare", "--profile", "php-memcached", "--server", "a:1", "--prefix",
             "app:", "--to-prefix-hashing", "prefixed"});
  ASSERT_TRUE(rehashed.ok()) << rehashed.error;
  EXPECT_EQ(rehashed.command.to.prefix_hashing, PrefixHashing::kPrefixedKey);
  EXPECT_FALSE(rehashed.command.to.prefix.has_value());
}

/// UsageCase: arguments, and the usage error they must give.
struct UsageCase {
  std::vector<std::string> args;
  std::string error;
};

TEST(LocateCommandLineTest, UsageErrorsAreValues) {
  // (locate_run_test.cpp checks how run() reports them.)
  const std::string kKetama = "libmemcached-ketama-weighted";
  // clang-format off
  const std::vector<UsageCase> cases = {
    {{}, "missing --profile NAME (see --list-profiles)"},
    {{"--server", "a:11211"}, "missing --profile NAME (see --list-profiles)"},
    {{"--profile", kKetama}, "missing --server SPEC (at least one server)"},
    {{"--profile", kKetama, "--frobnicate", "--server", "a:11211"},
     "unknown option '--frobnicate'"},
    {{"-x", "--profile", kKetama, "--server", "a:11211"}, "unknown option '-x'"},
    {{"--profile", kKetama, "--colour=red", "--server", "a:11211"}, "unknown option '--colour'"},
    {{"--profile", kKetama, "--server", "a:11211", "user:42"},
     "unexpected argument 'user:42' (keys are read from standard input)"},
    {{"--server", "a:11211", "--profile"}, "option --profile needs a value"},
    {{"--profile", kKetama, "--server", "--hash", "md5"}, "option --server needs a value"},
    {{"--profile", kKetama, "--server", "a:11211", "--hash"}, "option --hash needs a value"},
    {{"--profile", kKetama, "--server", "a:11211", "--points"}, "option --points needs a value"},
    {{"--profile=", "--server", "a:11211"}, "option --profile needs a value"},
    {{"--profile", kKetama, "--points", "many", "--server", "a:11211"},
     "--points needs a positive whole number, not 'many'"},
    {{"--profile", kKetama, "--points", "0", "--server", "a:11211"},
     "--points needs a positive whole number, not '0'"},
    {{"--profile", kKetama, "--points", "-4", "--server", "a:11211"},
     "--points needs a positive whole number, not '-4'"},
    {{"--profile", kKetama, "--points", "16x", "--server", "a:11211"},
     "--points needs a positive whole number, not '16x'"},
    {{"--profile", kKetama, "--points", "99999999999999999999999", "--server", "a:11211"},
     "--points needs a positive whole number, not '99999999999999999999999'"},
    {{"--profile", kKetama, "--profile", "modulo-crc32", "--server", "a:11211"},
     "--profile given twice"},
    {{"--profile", kKetama, "--hash", "md5", "--hash", "crc", "--server", "a:11211"},
     "--hash given twice"},
    {{"--profile", "spymemcached-ketama", "--weighted", "yes", "--server", "a:11211"},
     "--weighted needs true or false, not 'yes'"},
    {{"--profile", "spymemcached-ketama", "--weighted", "true", "--weighted=false", "--server",
      "a:11211"},
     "--weighted given twice"},
    {{"--profile", "spymemcached-ketama", "--server", "a:11211", "--weighted"},
     "option --weighted needs a value"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--sample", "0"},
     "--sample needs a positive whole number, not '0'"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--sample", "lots"},
     "--sample needs a positive whole number, not 'lots'"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--sample=10k"},
     "--sample needs a positive whole number, not '10k'"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--sample", "-5"},
     "--sample needs a positive whole number, not '-5'"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--sample"},
     "option --sample needs a value"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--sample", "5", "--sample", "6"},
     "--sample given twice"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-profile", kKetama,
      "--to-profile", kKetama},
     "--to-profile given twice"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-points", "0"},
     "--to-points needs a positive whole number, not '0'"},
    {{"--compare", "--profile", "spymemcached-ketama", "--server", "a:11211", "--to-weighted", "1"},
     "--to-weighted needs true or false, not '1'"},
    {{"--compare=yes", "--profile", kKetama, "--server", "a:11211"},
     "option --compare takes no value"},
    {{"--compare", "--per-key=true", "--profile", kKetama, "--server", "a:11211"},
     "option --per-key takes no value"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-sample", "4"},
     "unknown option '--to-sample'"},
    {{"--compare", "--to-profile", kKetama, "--server", "a:11211"},
     "missing --profile NAME (see --list-profiles)"},
    {{"--compare", "--profile", kKetama, "--to-server", "a:11211"},
     "missing --server SPEC (at least one server)"},
    {{"--profile", kKetama, "--server", "a:11211", "--sample", "10"},
     "option --sample is only for --compare"},
    {{"--profile", kKetama, "--server", "a:11211", "--to-server", "b:11211"},
     "option --to-server is only for --compare"},
    {{"--profile", kKetama, "--to-hash=crc", "--server", "a:11211"},
     "option --to-hash is only for --compare"},
    {{"--profile", kKetama, "--server", "a:11211", "--per-key"},
     "option --per-key is only for --compare"},
    {{"--fail-if-moved", "--profile", kKetama, "--server", "a:11211"},
     "option --fail-if-moved is only for --compare"},
    // Key prefixes: KeyPrefix's rules, the two hashings, and a hashing needs a prefix.
    {{"--profile", kKetama, "--server", "a:11211", "--prefix", "a b"},
     "--prefix: key prefix holds a space or control character: a b"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix=tab\there"},
     "--prefix: key prefix holds a space or control character: tab\there"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix", std::string(250, 'p')},
     "--prefix: key prefix leaves no room for a key (at most 249 bytes): 250 bytes"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-prefix", "x\x7f"},
     "--to-prefix: key prefix holds a space or control character: x\x7f"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix"}, "option --prefix needs a value"},
    {{"--profile", kKetama, "--prefix", "--server", "a:11211"}, "option --prefix needs a value"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix", "a:", "--prefix", "b:"},
     "--prefix given twice"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix", "a:", "--prefix-hashing", "hash"},
     "--prefix-hashing needs bare or prefixed, not 'hash'"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix", "a:", "--prefix-hashing",
      "bare_key"},
     "--prefix-hashing needs bare or prefixed, not 'bare_key'"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix", "a:", "--prefix-hashing="},
     "option --prefix-hashing needs a value"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix", "a:", "--prefix-hashing", "bare",
      "--prefix-hashing", "prefixed"},
     "--prefix-hashing given twice"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix-hashing", "prefixed"},
     "option --prefix-hashing needs --prefix P"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix=", "--prefix-hashing", "prefixed"},
     "option --prefix-hashing needs --prefix P"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-prefix", "b:",
      "--prefix-hashing", "bare"},
     "option --prefix-hashing needs --prefix P"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-prefix-hashing", "bare"},
     "option --to-prefix-hashing needs a prefix for B (--prefix or --to-prefix)"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--prefix", "a:", "--to-prefix=",
      "--to-prefix-hashing", "prefixed"},
     "option --to-prefix-hashing needs a prefix for B (--prefix or --to-prefix)"},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-prefix-hashing", "sideways"},
     "--to-prefix-hashing needs bare or prefixed, not 'sideways'"},
    {{"--profile", kKetama, "--server", "a:11211", "--to-prefix", "b:"},
     "option --to-prefix is only for --compare"},
    {{"--profile", kKetama, "--server", "a:11211", "--prefix", "a:", "--to-prefix-hashing",
      "prefixed"},
     "option --to-prefix-hashing is only for --compare"},
    // An error before --help still counts; the first option that needs --compare is named.
    {{"--bogus", "--help"}, "unknown option '--bogus'"},
    {{"--profile", kKetama, "--per-key", "--sample", "3", "--server", "a:1"},
     "option --per-key is only for --compare"},
  };
  // clang-format on
  for (const UsageCase& usage : cases) {
    const tool::ParsedCommandLine parsed = parse(usage.args);
    EXPECT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error, usage.error) << testing::PrintToString(usage.args);
  }
}

TEST(LocateCommandLineTest, SideBTakesAOptionsOnlyWithinTheSameProfile) {
  const tool::SideArgs a{.profile = "ring-crc32",
                         .hash = "fnv1a_32",
                         .points = 32,
                         .weighted = true,
                         .hash_tag = "{}",
                         .server_specs = {"a:11211"}};
  // Nothing given for B: B is A.
  EXPECT_TRUE(tool::side_b(a, {}) == a);
  // B's own options win (A's profile named again); B's servers replace A's entirely.
  EXPECT_TRUE(tool::side_b(a, {.profile = "ring-crc32", .points = 8, .server_specs = {"b:1"}}) ==
              (tool::SideArgs{.profile = "ring-crc32",
                              .hash = "fnv1a_32",
                              .points = 8,
                              .weighted = true,
                              .hash_tag = "{}",
                              .server_specs = {"b:1"}}));
  // Another profile: none of A's hash, points, weighted or hash tag ("crc32" is
  // not the same hash for twemproxy and libmemcached), but A's servers.
  EXPECT_TRUE(tool::side_b(a, {.profile = "libmemcached-modula"}) ==
              (tool::SideArgs{.profile = "libmemcached-modula", .server_specs = {"a:11211"}}));
}

TEST(LocateCommandLineTest, SideBTakesAPrefixWhateverTheProfile) {
  using memshard::PrefixHashing;
  const tool::SideArgs a{.profile = "php-memcached",
                         .server_specs = {"a:11211"},
                         .prefix = "app:",
                         .prefix_hashing = PrefixHashing::kBareKey};
  EXPECT_TRUE(tool::side_b(a, {}) == a);
  // Another profile keeps A's prefix and hashing (they are the application's).
  EXPECT_TRUE(tool::side_b(a, {.profile = "dalli"}) ==
              (tool::SideArgs{.profile = "dalli",
                              .server_specs = {"a:11211"},
                              .prefix = "app:",
                              .prefix_hashing = PrefixHashing::kBareKey}));
  // Each of B's own wins on its own.
  EXPECT_TRUE(tool::side_b(a, {.prefix_hashing = PrefixHashing::kPrefixedKey}) ==
              (tool::SideArgs{.profile = "php-memcached",
                              .server_specs = {"a:11211"},
                              .prefix = "app:",
                              .prefix_hashing = PrefixHashing::kPrefixedKey}));
  EXPECT_TRUE(tool::side_b(a, {.prefix = "ns:"}) ==
              (tool::SideArgs{.profile = "php-memcached",
                              .server_specs = {"a:11211"},
                              .prefix = "ns:",
                              .prefix_hashing = PrefixHashing::kBareKey}));
  EXPECT_EQ(tool::side_b(a, {.prefix = ""}).prefix, std::optional<std::string>(""));
  // Without a prefix on A, B has none either.
  const tool::SideArgs bare{.profile = "php-memcached", .server_specs = {"a:11211"}};
  EXPECT_FALSE(tool::side_b(bare, {.profile = "dalli"}).prefix.has_value());
}

TEST(LocateCommandLineTest, UsageNamesEveryOption) {
  std::ostringstream out;
  tool::print_usage(out);
  const std::string usage = out.str();
  EXPECT_TRUE(usage.starts_with("Usage: memshard-locate --profile NAME")) << usage;
  for (const std::string_view option : {"--profile",
                                        "--hash",
                                        "--points",
                                        "--weighted",
                                        "--hash-tag",
                                        "--server",
                                        "--list-profiles",
                                        "--help",
                                        "--version",
                                        "--compare",
                                        "--to-profile",
                                        "--to-hash",
                                        "--to-points",
                                        "--to-weighted",
                                        "--to-hash-tag",
                                        "--to-server",
                                        "--sample",
                                        "--per-key",
                                        "--fail-if-moved",
                                        "--prefix P",
                                        "--prefix-hashing bare|prefixed",
                                        "--to-prefix P",
                                        "--to-prefix-hashing bare|prefixed"}) {
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

TEST(LocateCommandLineTest, ListProfilesExactBlock) {
  // A hash list with notes, and its default first.
  std::ostringstream out;
  tool::print_profiles(out);
  EXPECT_NE(
      out.str().find("\ntwemproxy-ketama\n"
                     "    twemproxy distribution: ketama (hash: as in nutcracker.yml, default "
                     "md5)\n"
                     "    hash:   md5 (default), one_at_a_time, crc32 (15-bit), crc32a, "
                     "fnv1_32, fnv1a_32, fnv1_64, fnv1a_64, murmur\n"
                     "    points: no; hash tag: yes (--hash-tag XY)\n"),
      std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace locate_command_line_test
