// SPDX-License-Identifier: MIT
// locate_run_test.cpp: memshard-locate's run() in process: every command line it
// must refuse, with exit status 2, nothing on the output, and a message naming
// the problem (usage errors pointing to --help); and the actions it carries out.

#include <gtest/gtest.h>

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "locate/command_line.hpp"
#include "locate/run.hpp"
#include "tools/locate_support.hpp"

namespace locate_run_test {
namespace {

namespace tool = memshard::locate_tool;
using tool::testing::kPrefix;
using tool::testing::run_in_process;
using tool::testing::RunResult;

/// ConfigCase: a command line the library refuses, and words its message must hold.
struct ConfigCase {
  std::vector<std::string> args;
  std::vector<std::string> message_parts;
};

TEST(LocateRunTest, ConfigurationErrorsExitTwoNamingTheProblem) {
  const std::string kKetama = "libmemcached-ketama-weighted";
  // clang-format off
  const std::vector<ConfigCase> cases = {
    {{"--profile", "libmemcached-ketamaa", "--server", "a:11211"},
     {"unknown profile", "libmemcached-ketamaa"}},
    {{"--profile", kKetama, "--hash", "sha1", "--server", "a:11211"}, {"unknown hash", "sha1"}},
    {{"--profile", kKetama, "--server", "cache-a:notaport"}, {"port", "cache-a:notaport"}},
    {{"--profile", kKetama, "--server", "a:70000"}, {"port", "a:70000"}},
    {{"--profile", kKetama, "--server", "a:0"}, {"port", "a:0"}},
    {{"--profile", kKetama, "--server", "[::1:11211"}, {"']'", "[::1:11211"}},
    {{"--profile", kKetama, "--server", "[::1]x:11211"}, {"']'", "[::1]x:11211"}},
    {{"--profile", kKetama, "--server", ":11211"}, {"empty host", ":11211"}},
    {{"--profile", kKetama, "--server", "a:11211:heavy"}, {"weight", "a:11211:heavy"}},
    {{"--profile", kKetama, "--server", "a:11211:0"}, {"weight", "a:11211:0"}},
    {{"--profile", kKetama, "--server", "a:11211:1:"}, {"empty name", "a:11211:1:"}},
    {{"--profile", kKetama, "--server", "a:11211", "--server", "b:11211:1:x y"}, {"b:11211:1:x y"}},
    {{"--profile", kKetama, "--server", "a:11211", "--server", "b:11211", "--server", "a:11211"},
     {"listed twice", "a:11211"}},
    {{"--profile", "ring-crc32", "--server", "a:11211:1:shard", "--server", "b:11211:1:shard"},
     {"name used twice", "shard"}},
    {{"--profile", "modulo-crc32", "--points", "10", "--server", "a:11211"},
     {"points", "modulo-crc32"}},
    {{"--profile", "libmemcached-modula", "--points", "10", "--server", "a:11211"},
     {"points", "libmemcached-modula"}},
    {{"--profile", kKetama, "--points", "10", "--server", "a:11211"}, {"multiple of 4", "10"}},
    {{"--profile", kKetama, "--server", "a:11211:1.5"}, {"whole-number weights", "a:11211"}},
    {{"--profile", "dalli", "--hash", "md5", "--server", "a:11211"},
     {"takes no hash option", "dalli"}},
    {{"--profile", "twemproxy-ketama", "--hash", "crc", "--server", "a:11211"},
     {"not a twemproxy hash", "crc"}},
    {{"--profile", kKetama, "--weighted", "true", "--server", "a:11211"},
     {"only the spymemcached ketama profiles take weighted", kKetama}},
    {{"--profile", "spymemcached-ketama", "--weighted", "false", "--server", "a:11211:2"},
     {"weighted=true", "a:11211"}},
    {{"--profile", "dalli", "--hash-tag", "{}", "--server", "a:11211"},
     {"only the twemproxy profiles take hash_tag", "dalli"}},
    {{"--profile", "twemproxy-ketama", "--hash-tag", "{}}", "--server", "a:11211"},
     {"a hash tag is two characters", "{}}"}},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-profile", "ketama2"},
     {"B (the --to-* side)", "unknown profile", "ketama2"}},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-server", "b:0"},
     {"B (the --to-* side)", "port", "b:0"}},
    {{"--compare", "--profile", "libmemcached-modula", "--server", "a:11211", "--to-points", "8"},
     {"B (the --to-* side)", "points", "libmemcached-modula"}},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--to-weighted", "true"},
     {"B (the --to-* side)", "weighted"}},
    {{"--compare", "--profile", kKetama, "--server", "a:11211:1.5", "--to-profile", "dalli"},
     {"whole-number weights", "a:11211"}},
    {{"--compare", "--profile", kKetama, "--server", "a:11211", "--prefix", std::string(246, 'p'),
      "--sample", "10"},
     {"--sample's keys are too long for A's key prefix", "key:9 is sent as 251 bytes"}},
  };
  // clang-format on
  for (const ConfigCase& error : cases) {
    SCOPED_TRACE(testing::PrintToString(error.args));
    const RunResult result = run_in_process(error.args, "user:42\nuser:43\n");
    EXPECT_EQ(result.status, tool::kExitError) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_TRUE(result.err.starts_with(kPrefix)) << result.err;
    EXPECT_EQ(result.err.find("memshard: "), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find("--help"), std::string::npos) << result.err;
    for (const std::string& part : error.message_parts) {
      EXPECT_NE(result.err.find(part), std::string::npos) << "'" << part << "' in " << result.err;
    }
  }
}

TEST(LocateRunTest, UsageErrorsPointToHelp) {
  // Every usage error is a value of parse_command_line (locate_command_line_test.cpp).
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--frobnicate", "--profile", "ring-crc32", "--server", "a:1"},
        std::vector<std::string>{"--compare", "--profile", "ring-crc32", "--to-server", "a:1"},
        std::vector<std::string>{"--profile", "ring-crc32", "--server", "a:1", "--prefix", "a b"},
        std::vector<std::string>{"--profile", "ring-crc32", "--server", "a:1", "--prefix-hashing",
                                 "prefixed"}}) {
    const RunResult result = run_in_process(args, "user:42\n");
    EXPECT_EQ(result.status, tool::kExitError);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "memshard-locate: " + tool::testing::parse(args).error +
                              "\nTry 'memshard-locate --help' for more information.\n");
  }
}

TEST(LocateRunTest, ConfigurationErrorFormat) {
  // The library's message without its "memshard: ", and no pointer to --help.
  EXPECT_EQ(run_in_process({"--profile", "libmemcached-ketama-weighted", "--server", "a:0"}).err,
            "memshard-locate: server port must be a number from 1 to 65535: a:0\n");
  const RunResult b = run_in_process(
      {"--compare", "--profile", "modulo-crc32", "--server", "a:1", "--to-profile", "nope"});
  EXPECT_TRUE(b.err.starts_with("memshard-locate: B (the --to-* side): unknown profile (known: "))
      << b.err;
  EXPECT_TRUE(b.err.ends_with("): nope\n")) << b.err;
}

TEST(LocateRunTest, ActionsPrintOnTheOutput) {
  std::ostringstream usage;
  tool::print_usage(usage);
  std::ostringstream version;
  tool::print_version(version);
  std::ostringstream profiles;
  tool::print_profiles(profiles);
  for (const auto& [args, text] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--help"}, usage.str()},
           {{"-h"}, usage.str()},
           {{"--profile", "nonexistent", "--help", "--bogus"}, usage.str()},
           {{"--version"}, version.str()},
           {{"--list-profiles"}, profiles.str()}}) {
    const RunResult result = run_in_process(args, "user:42\n");
    EXPECT_EQ(result.status, tool::kExitOk) << args.back();
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.out, text) << args.back();
  }
  const RunResult located =
      run_in_process({"--profile", "modulo-crc32", "--server", "a:11211"}, "user:42\n");
  EXPECT_EQ(located.status, tool::kExitOk);
  EXPECT_EQ(located.out, "user:42\t0\ta:11211\n");
  const RunResult compared = run_in_process(
      {"--compare", "--profile", "modulo-crc32", "--server", "a:11211", "--sample", "2"});
  EXPECT_EQ(compared.status, tool::kExitOk);
  EXPECT_NE(compared.out.find("\nkeys: 2 (key:0 to key:1)\n"), std::string::npos) << compared.out;
}

}  // namespace
}  // namespace locate_run_test
