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

namespace {

namespace tool = memshard::locate_tool;
using tool::testing::kPrefix;
using tool::testing::run_in_process;
using tool::testing::RunResult;

/// ErrorCase: a command line the tool must refuse with exit status 2.
struct ErrorCase {
  std::string label;
  std::vector<std::string> args;
  std::vector<std::string> message_parts;  ///< each must appear on standard error
  bool usage = false;                      ///< a usage error, which points to --help
};

/// PrintTo: names a case in test output.
void PrintTo(const ErrorCase& error, std::ostream* out) { *out << error.label; }

auto error_cases() -> std::vector<ErrorCase> {
  const std::string ketama = "libmemcached-ketama-weighted";
  return {
      {"NoArguments", {}, {"missing --profile"}, true},
      {"NoProfile", {"--server", "a:11211"}, {"missing --profile"}, true},
      {"NoServer", {"--profile", ketama}, {"missing --server"}, true},
      {"UnknownOption",
       {"--profile", ketama, "--frobnicate", "--server", "a:11211"},
       {"unknown option", "--frobnicate"},
       true},
      {"UnknownShortOption",
       {"-x", "--profile", ketama, "--server", "a:11211"},
       {"unknown option", "'-x'"},
       true},
      {"UnknownOptionWithValue",
       {"--profile", ketama, "--colour=red", "--server", "a:11211"},
       {"unknown option", "--colour"},
       true},
      {"Positional",
       {"--profile", ketama, "--server", "a:11211", "user:42"},
       {"unexpected argument", "user:42"},
       true},
      {"ProfileWithoutValue",
       {"--server", "a:11211", "--profile"},
       {"--profile needs a value"},
       true},
      {"ServerFollowedByOption",
       {"--profile", ketama, "--server", "--hash", "md5"},
       {"--server needs a value"},
       true},
      {"HashWithoutValue",
       {"--profile", ketama, "--server", "a:11211", "--hash"},
       {"--hash needs a value"},
       true},
      {"PointsWithoutValue",
       {"--profile", ketama, "--server", "a:11211", "--points"},
       {"--points needs a value"},
       true},
      {"EmptyProfile", {"--profile=", "--server", "a:11211"}, {"--profile needs a value"}, true},
      {"PointsNotANumber",
       {"--profile", ketama, "--points", "many", "--server", "a:11211"},
       {"--points", "'many'"},
       true},
      {"PointsZero",
       {"--profile", ketama, "--points", "0", "--server", "a:11211"},
       {"--points", "'0'"},
       true},
      {"PointsNegative",
       {"--profile", ketama, "--points", "-4", "--server", "a:11211"},
       {"--points", "'-4'"},
       true},
      {"PointsTrailingText",
       {"--profile", ketama, "--points", "16x", "--server", "a:11211"},
       {"--points", "'16x'"},
       true},
      {"PointsTooLarge",
       {"--profile", ketama, "--points", "99999999999999999999999", "--server", "a:11211"},
       {"--points", "'99999999999999999999999'"},
       true},
      {"ProfileTwice",
       {"--profile", ketama, "--profile", "modulo-crc32", "--server", "a:11211"},
       {"--profile given twice"},
       true},
      {"HashTwice",
       {"--profile", ketama, "--hash", "md5", "--hash", "crc", "--server", "a:11211"},
       {"--hash given twice"},
       true},
      {"UnknownProfile",
       {"--profile", "libmemcached-ketamaa", "--server", "a:11211"},
       {"unknown profile", "libmemcached-ketamaa"}},
      {"UnknownHash",
       {"--profile", ketama, "--hash", "sha1", "--server", "a:11211"},
       {"unknown hash", "sha1"}},
      {"PortNotANumber",
       {"--profile", ketama, "--server", "cache-a:notaport"},
       {"port", "cache-a:notaport"}},
      {"PortOutOfRange", {"--profile", ketama, "--server", "a:70000"}, {"port", "a:70000"}},
      {"PortZero", {"--profile", ketama, "--server", "a:0"}, {"port", "a:0"}},
      {"UnclosedIpv6", {"--profile", ketama, "--server", "[::1:11211"}, {"']'", "[::1:11211"}},
      {"TextAfterIpv6", {"--profile", ketama, "--server", "[::1]x:11211"}, {"']'", "[::1]x:11211"}},
      {"EmptyHost", {"--profile", ketama, "--server", ":11211"}, {"empty host", ":11211"}},
      {"WeightNotANumber",
       {"--profile", ketama, "--server", "a:11211:heavy"},
       {"weight", "a:11211:heavy"}},
      {"WeightZero", {"--profile", ketama, "--server", "a:11211:0"}, {"weight", "a:11211:0"}},
      {"EmptyName", {"--profile", ketama, "--server", "a:11211:1:"}, {"empty name", "a:11211:1:"}},
      {"BadSecondServer",
       {"--profile", ketama, "--server", "a:11211", "--server", "b:11211:1:x y"},
       {"b:11211:1:x y"}},
      {"DuplicateServer",
       {"--profile", ketama, "--server", "a:11211", "--server", "b:11211", "--server", "a:11211"},
       {"listed twice", "a:11211"}},
      {"DuplicateName",
       {"--profile", "ring-crc32", "--server", "a:11211:1:shard", "--server", "b:11211:1:shard"},
       {"name used twice", "shard"}},
      {"PointsOnModulo",
       {"--profile", "modulo-crc32", "--points", "10", "--server", "a:11211"},
       {"points", "modulo-crc32"}},
      {"PointsOnModula",
       {"--profile", "libmemcached-modula", "--points", "10", "--server", "a:11211"},
       {"points", "libmemcached-modula"}},
      {"PointsNotMultipleOfFour",
       {"--profile", ketama, "--points", "10", "--server", "a:11211"},
       {"multiple of 4", "10"}},
      {"FractionalWeightOnLibmemcached",
       {"--profile", ketama, "--server", "a:11211:1.5"},
       {"whole-number weights", "a:11211"}},
      {"HashOnProfileWithFixedHash",
       {"--profile", "dalli", "--hash", "md5", "--server", "a:11211"},
       {"takes no hash option", "dalli"}},
      {"TwemproxyRefusesMemshardCrcSpelling",
       {"--profile", "twemproxy-ketama", "--hash", "crc", "--server", "a:11211"},
       {"not a twemproxy hash", "crc"}},
      // --weighted
      {"WeightedNotABoolean",
       {"--profile", "spymemcached-ketama", "--weighted", "yes", "--server", "a:11211"},
       {"--weighted needs true or false", "'yes'"},
       true},
      {"WeightedTwice",
       {"--profile", "spymemcached-ketama", "--weighted", "true", "--weighted=false", "--server",
        "a:11211"},
       {"--weighted given twice"},
       true},
      {"WeightedWithoutValue",
       {"--profile", "spymemcached-ketama", "--server", "a:11211", "--weighted"},
       {"--weighted needs a value"},
       true},
      {"WeightedOnKetama",
       {"--profile", ketama, "--weighted", "true", "--server", "a:11211"},
       {"only the spymemcached ketama profiles take weighted", ketama}},
      {"UnweightedSpyWithWeights",
       {"--profile", "spymemcached-ketama", "--weighted", "false", "--server", "a:11211:2"},
       {"weighted=true", "a:11211"}},
      {"HashTagOnDalli",
       {"--profile", "dalli", "--hash-tag", "{}", "--server", "a:11211"},
       {"only the twemproxy profiles take hash_tag", "dalli"}},
      {"HashTagOfThreeCharacters",
       {"--profile", "twemproxy-ketama", "--hash-tag", "{}}", "--server", "a:11211"},
       {"a hash tag is two characters", "{}}"}},
      // --compare
      {"CompareToProfileUnknown",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--to-profile", "ketama2"},
       {"B (the --to-* side)", "unknown profile", "ketama2"}},
      {"CompareSampleZero",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--sample", "0"},
       {"--sample needs a positive whole number", "'0'"},
       true},
      {"CompareSampleGarbage",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--sample", "lots"},
       {"--sample needs a positive whole number", "'lots'"},
       true},
      {"CompareSampleTrailingText",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--sample=10k"},
       {"--sample needs a positive whole number", "'10k'"},
       true},
      {"CompareSampleNegative",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--sample", "-5"},
       {"--sample needs a positive whole number", "'-5'"},
       true},
      {"CompareSampleWithoutValue",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--sample"},
       {"--sample needs a value"},
       true},
      {"CompareSampleTwice",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--sample", "5", "--sample", "6"},
       {"--sample given twice"},
       true},
      {"CompareToProfileTwice",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--to-profile", ketama,
        "--to-profile", ketama},
       {"--to-profile given twice"},
       true},
      {"CompareToPointsZero",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--to-points", "0"},
       {"--to-points needs a positive whole number", "'0'"},
       true},
      {"CompareToWeightedNotABoolean",
       {"--compare", "--profile", "spymemcached-ketama", "--server", "a:11211", "--to-weighted",
        "1"},
       {"--to-weighted needs true or false", "'1'"},
       true},
      {"CompareWithValue",
       {"--compare=yes", "--profile", ketama, "--server", "a:11211"},
       {"--compare takes no value"},
       true},
      {"ComparePerKeyWithValue",
       {"--compare", "--per-key=true", "--profile", ketama, "--server", "a:11211"},
       {"--per-key takes no value"},
       true},
      {"CompareUnknownToOption",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--to-sample", "4"},
       {"unknown option", "'--to-sample'"},
       true},
      {"CompareMissingProfile",
       {"--compare", "--to-profile", ketama, "--server", "a:11211"},
       {"missing --profile"},
       true},
      {"CompareMissingServer",
       {"--compare", "--profile", ketama, "--to-server", "a:11211"},
       {"missing --server"},
       true},
      {"CompareBadToServer",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--to-server", "b:0"},
       {"B (the --to-* side)", "port", "b:0"}},
      {"CompareToPointsOnModula",
       {"--compare", "--profile", "libmemcached-modula", "--server", "a:11211", "--to-points", "8"},
       {"B (the --to-* side)", "points", "libmemcached-modula"}},
      {"CompareToWeightedOnKetama",
       {"--compare", "--profile", ketama, "--server", "a:11211", "--to-weighted", "true"},
       {"B (the --to-* side)", "weighted"}},
      {"CompareBadSideA",
       {"--compare", "--profile", ketama, "--server", "a:11211:1.5", "--to-profile", "dalli"},
       {"whole-number weights", "a:11211"}},
      {"SampleWithoutCompare",
       {"--profile", ketama, "--server", "a:11211", "--sample", "10"},
       {"--sample is only for --compare"},
       true},
      {"ToServerWithoutCompare",
       {"--profile", ketama, "--server", "a:11211", "--to-server", "b:11211"},
       {"--to-server is only for --compare"},
       true},
      {"ToHashWithoutCompare",
       {"--profile", ketama, "--to-hash=crc", "--server", "a:11211"},
       {"--to-hash is only for --compare"},
       true},
      {"PerKeyWithoutCompare",
       {"--profile", ketama, "--server", "a:11211", "--per-key"},
       {"--per-key is only for --compare"},
       true},
      {"FailIfMovedWithoutCompare",
       {"--fail-if-moved", "--profile", ketama, "--server", "a:11211"},
       {"--fail-if-moved is only for --compare"},
       true},
  };
}

class LocateErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(LocateErrorTest, ExitsTwoNamingTheProblem) {
  const ErrorCase& error = GetParam();
  const RunResult result = run_in_process(error.args, "user:42\nuser:43\n");
  EXPECT_EQ(result.status, tool::kExitError) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_TRUE(result.err.starts_with(kPrefix)) << result.err;
  EXPECT_EQ(result.err.find("memshard: "), std::string::npos) << result.err;
  for (const std::string& part : error.message_parts) {
    EXPECT_NE(result.err.find(part), std::string::npos) << "'" << part << "' in " << result.err;
  }
  const bool points_to_help = result.err.find("--help") != std::string::npos;
  EXPECT_EQ(points_to_help, error.usage) << result.err;
}

INSTANTIATE_TEST_SUITE_P(CommandLines, LocateErrorTest, testing::ValuesIn(error_cases()),
                         [](const testing::TestParamInfo<ErrorCase>& param_info) {
                           return param_info.param.label;
                         });

TEST(LocateRunTest, UsageErrorFormat) {
  const RunResult result = run_in_process({"--frobnicate"});
  EXPECT_EQ(result.err,
            "memshard-locate: unknown option '--frobnicate'\n"
            "Try 'memshard-locate --help' for more information.\n");
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
           {{"--profile", "nonexistent", "--help"}, usage.str()},
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
