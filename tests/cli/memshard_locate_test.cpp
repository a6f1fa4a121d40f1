// SPDX-License-Identifier: MIT
// memshard_locate_test.cpp: runs the memshard-locate binary as a child process and
// checks its answers against make_locator in this process, its key checks, its
// error messages and its exit statuses.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memshard/memshard.hpp>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/child_process.hpp"

namespace {

using memshard::testing::lines_of;
using memshard::testing::RunResult;

constexpr const char* kLocatePath = MEMSHARD_LOCATE_PATH;
constexpr std::string_view kPrefix = "memshard-locate: ";

/// argv_for: a null-terminated argv for the tool; points into `args`.
auto argv_for(std::vector<std::string>& args) -> std::vector<char*> {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(kLocatePath));
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  return argv;
}

/// wait_for: the exit status of child `pid`, or 128 + the signal that ended it.
auto wait_for(pid_t pid) -> int {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return -1;
    }
  }
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

/// run_locate: runs the tool with `args` and `input` on its standard input, and
/// collects its standard output, standard error and exit status.
auto run_locate(std::vector<std::string> args, std::string_view input) -> RunResult {
  return memshard::testing::run_program(kLocatePath, std::move(args), input);
}

auto split_fields(std::string_view line) -> std::vector<std::string> {
  std::vector<std::string> fields;
  for (;;) {
    const auto tab = line.find('\t');
    fields.emplace_back(line.substr(0, tab));
    if (tab == std::string_view::npos) {
      return fields;
    }
    line.remove_prefix(tab + 1);
  }
}

/// same_lines: compares two outputs line by line and names the first difference.
auto same_lines(std::string_view actual, std::string_view expected) -> testing::AssertionResult {
  const std::vector<std::string> got = lines_of(actual);
  const std::vector<std::string> want = lines_of(expected);
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] != want[i]) {
      return testing::AssertionFailure()
             << "line " << i + 1 << ": got '" << got[i] << "', expected '" << want[i] << "'";
    }
  }
  if (got.size() != want.size()) {
    return testing::AssertionFailure()
           << got.size() << " lines, expected " << want.size() << " lines";
  }
  if (!actual.empty() && !actual.ends_with('\n')) {
    return testing::AssertionFailure() << "the output does not end with a newline";
  }
  return testing::AssertionSuccess();
}

/// random_keys: `count` distinct valid keys of 1 to 250 bytes (printable ASCII
/// and bytes >= 0x80), the same in every run.
auto random_keys(std::size_t count, std::uint32_t seed) -> std::vector<std::string> {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> short_length(1, 40);
  std::uniform_int_distribution<int> any_length(1, 250);
  std::uniform_int_distribution<int> byte(0x21, 0x7e + 0x80);
  std::set<std::string> seen;
  std::vector<std::string> keys;
  while (keys.size() < count) {
    const int length = keys.size() % 10 == 0 ? any_length(random) : short_length(random);
    std::string key;
    for (int i = 0; i < length; ++i) {
      int value = byte(random);
      if (value > 0x7e) {
        value += 1;  // 0x7f, DEL, is a control byte: skip it, into 0x80..0xff
      }
      key.push_back(static_cast<char>(static_cast<unsigned char>(value)));
    }
    if (memshard::is_valid_key(key) && seen.insert(key).second) {
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

auto join_lines(const std::vector<std::string>& lines, std::string_view end = "\n") -> std::string {
  std::string text;
  for (const std::string& line : lines) {
    text.append(line).append(end);
  }
  return text;
}

/// ServerCase: a --server argument and the Server it must mean, written out
/// by hand so that the expected placement does not depend on the parser.
struct ServerCase {
  std::string spec;
  memshard::Server server;
};

/// LocateCase: one configuration to run the tool with.
struct LocateCase {
  std::string label;
  std::string profile;
  std::string hash;        // empty: no --hash
  std::size_t points = 0;  // 0: no --points
  std::vector<ServerCase> servers;
};

/// PrintTo: names a case in test output.
void PrintTo(const LocateCase& config, std::ostream* out) { *out << config.label; }

auto locate_args(const LocateCase& config) -> std::vector<std::string> {
  std::vector<std::string> args = {"--profile", config.profile};
  if (!config.hash.empty()) {
    args.insert(args.end(), {"--hash", config.hash});
  }
  if (config.points != 0) {
    args.insert(args.end(), {"--points", std::to_string(config.points)});
  }
  for (const ServerCase& server : config.servers) {
    args.insert(args.end(), {"--server", server.spec});
  }
  return args;
}

auto servers_of(const LocateCase& config) -> std::vector<memshard::Server> {
  std::vector<memshard::Server> servers;
  for (const ServerCase& server : config.servers) {
    servers.push_back(server.server);
  }
  return servers;
}

/// expected_output: what the tool must print for `keys`, computed in process.
auto expected_output(const LocateCase& config, const std::vector<std::string>& keys)
    -> std::string {
  const std::vector<memshard::Server> servers = servers_of(config);
  const memshard::AnyLocator locator =
      memshard::make_locator(config.profile, servers, {config.hash, config.points, {}});
  std::string out;
  for (const std::string& key : keys) {
    const std::size_t index = locator.locate(key);
    out.append(key)
        .append("\t")
        .append(std::to_string(index))
        .append("\t")
        .append(servers[index].endpoint())
        .append("\n");
  }
  return out;
}

auto server(std::string host, std::uint16_t port, double weight = 1, std::string name = {})
    -> memshard::Server {
  return memshard::Server{std::move(host), port, weight, std::move(name)};
}

// A fleet with weights, a name, a non-default port and an IPv6 host.
auto mixed_fleet() -> std::vector<ServerCase> {
  return {
      {"10.0.0.1:11211", server("10.0.0.1", 11211)},
      {"10.0.0.2:11212:2", server("10.0.0.2", 11212, 2)},
      {"cache-c.example:11211:3:cache-c", server("cache-c.example", 11211, 3, "cache-c")},
      {"[2001:db8::7]:11300", server("2001:db8::7", 11300)},
  };
}

auto locate_cases() -> std::vector<LocateCase> {
  return {
      {"KetamaWeightedMixedFleet", "libmemcached-ketama-weighted", "", 0, mixed_fleet()},
      {"KetamaWeightedFnv1Points80", "libmemcached-ketama-weighted", "fnv1_32", 80, mixed_fleet()},
      {"KetamaUnweighted",
       "libmemcached-ketama",
       "",
       0,
       {{"cache-a:11211", server("cache-a", 11211)},
        {"cache-b:11211", server("cache-b", 11211)},
        {"cache-c:11213", server("cache-c", 11213)},
        {"[::1]:11211", server("::1", 11211)},
        {"192.168.1.5:11211:1:east", server("192.168.1.5", 11211, 1, "east")}}},
      {"KetamaWeightedBranchFnv1a", "libmemcached-ketama", "fnv1a_32", 0, mixed_fleet()},
      {"KetamaSpyMurmurPoints50",
       "libmemcached-ketama-spy",
       "murmur",
       50,
       {{"10.1.0.1:11211", server("10.1.0.1", 11211)},
        {"10.1.0.2:11211", server("10.1.0.2", 11211)},
        {"10.1.0.3:22122", server("10.1.0.3", 22122)}}},
      {"Modula",
       "libmemcached-modula",
       "",
       0,
       {{"m1:11211", server("m1", 11211)},
        {"m2:11211:4", server("m2", 11211, 4)},
        {"m3:11211", server("m3", 11211)},
        {"m4:11211", server("m4", 11211)},
        {"[fd00::5]:11211", server("fd00::5", 11211)},
        {"m6:11211", server("m6", 11211)},
        {"m7:11211", server("m7", 11211)}}},
      {"ModuloCrc32Fnv1_64",
       "modulo-crc32",
       "fnv1_64",
       0,
       {{"a.example:11211:0.5", server("a.example", 11211, 0.5)},
        {"b.example:11211", server("b.example", 11211)},
        {"c.example:11211", server("c.example", 11211)}}},
      {"RingCrc32NamesWithColons",
       "ring-crc32",
       "",
       0,
       {{"10.0.0.1:11211:1:cache:a", server("10.0.0.1", 11211, 1, "cache:a")},
        {"10.0.0.2:11211:1:cache:b", server("10.0.0.2", 11211, 1, "cache:b")},
        {"[fd00::2]:11211:1:cache:c:2", server("fd00::2", 11211, 1, "cache:c:2")}}},
      {"RingCrc32Points7",
       "ring-crc32",
       "",
       7,
       {{"r1:11211", server("r1", 11211)},
        {"r2:11211", server("r2", 11211)},
        {"r3:11211", server("r3", 11211)}}},
      {"OneServer",
       "libmemcached-ketama-weighted",
       "",
       0,
       {{"[::1]:11311:1:only", server("::1", 11311, 1, "only")}}},
  };
}

class LocateMatchesLibraryTest : public testing::TestWithParam<LocateCase> {};

TEST_P(LocateMatchesLibraryTest, ThousandRandomKeys) {
  const LocateCase& config = GetParam();
  for (const ServerCase& entry : config.servers) {
    ASSERT_EQ(memshard::parse_server(entry.spec), entry.server) << entry.spec;
  }
  const std::vector<std::string> keys = random_keys(1000, 20240611);
  const std::string expected = expected_output(config, keys);

  // Every server gets keys, so a tool that ignored part of the list would fail.
  std::set<std::string> indexes;
  for (const std::string& line : lines_of(expected)) {
    indexes.insert(split_fields(line).at(1));
  }
  ASSERT_EQ(indexes.size(), config.servers.size());

  const RunResult result = run_locate(locate_args(config), join_lines(keys));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_TRUE(same_lines(result.out, expected));
}

INSTANTIATE_TEST_SUITE_P(Profiles, LocateMatchesLibraryTest, testing::ValuesIn(locate_cases()),
                         [](const testing::TestParamInfo<LocateCase>& param_info) {
                           return param_info.param.label;
                         });

TEST(LocateOutputTest, ExactLineFormat) {
  const RunResult result = run_locate({"--profile", "libmemcached-ketama-weighted", "--server",
                                       "[::1]:11211:1:a:b", "--server", "10.0.0.9:11299:3"},
                                      "user:42\n");
  ASSERT_EQ(result.status, 0) << result.err;
  const std::vector<memshard::Server> servers = {server("::1", 11211, 1, "a:b"),
                                                 server("10.0.0.9", 11299, 3)};
  const std::size_t index =
      memshard::profiles::libmemcached_ketama_weighted(servers).locate("user:42");
  const std::array<std::string_view, 2> endpoints = {"[::1]:11211", "10.0.0.9:11299"};
  EXPECT_EQ(result.out,
            "user:42\t" + std::to_string(index) + "\t" + std::string(endpoints.at(index)) + "\n");
}

TEST(LocateOutputTest, IndexFollowsServerOrderOnARing) {
  const std::vector<std::string> specs = {"a.example:11211", "b.example:11211:2",
                                          "c.example:11211"};
  const std::vector<std::string> keys = random_keys(1000, 7);
  const RunResult forward = run_locate({"--profile", "libmemcached-ketama-weighted", "--server",
                                        specs[0], "--server", specs[1], "--server", specs[2]},
                                       join_lines(keys));
  const RunResult reversed = run_locate({"--profile", "libmemcached-ketama-weighted", "--server",
                                         specs[2], "--server", specs[1], "--server", specs[0]},
                                        join_lines(keys));
  ASSERT_EQ(forward.status, 0) << forward.err;
  ASSERT_EQ(reversed.status, 0) << reversed.err;
  const std::vector<std::string> forward_lines = lines_of(forward.out);
  const std::vector<std::string> reversed_lines = lines_of(reversed.out);
  ASSERT_EQ(forward_lines.size(), keys.size());
  ASSERT_EQ(reversed_lines.size(), keys.size());
  std::set<std::string> used;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::vector<std::string> f = split_fields(forward_lines[i]);
    const std::vector<std::string> r = split_fields(reversed_lines[i]);
    ASSERT_EQ(f.size(), 3U) << forward_lines[i];
    ASSERT_EQ(r.size(), 3U) << reversed_lines[i];
    // A ring places by server, not by position: the same server either way,
    // numbered by its position in each command line.
    ASSERT_EQ(f[2], r[2]) << keys[i];
    const auto f_index = std::stoul(f[1]);
    const auto r_index = std::stoul(r[1]);
    ASSERT_EQ(f_index + r_index, 2U) << keys[i];
    ASSERT_EQ(specs.at(f_index).substr(0, f[2].size()), f[2]) << keys[i];
    used.insert(f[2]);
  }
  EXPECT_EQ(used.size(), 3U);
}

TEST(LocateOutputTest, IndexFollowsServerOrderOnModulo) {
  const std::vector<std::string> keys = random_keys(1000, 8);
  const RunResult forward =
      run_locate({"--profile", "modulo-crc32", "--server", "a:11211", "--server", "b:11211"},
                 join_lines(keys));
  const RunResult reversed =
      run_locate({"--profile", "modulo-crc32", "--server", "b:11211", "--server", "a:11211"},
                 join_lines(keys));
  ASSERT_EQ(forward.status, 0) << forward.err;
  ASSERT_EQ(reversed.status, 0) << reversed.err;
  const std::vector<std::string> forward_lines = lines_of(forward.out);
  const std::vector<std::string> reversed_lines = lines_of(reversed.out);
  ASSERT_EQ(forward_lines.size(), keys.size());
  ASSERT_EQ(reversed_lines.size(), keys.size());
  const memshard::Crc32 crc32;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::vector<std::string> f = split_fields(forward_lines[i]);
    const std::vector<std::string> r = split_fields(reversed_lines[i]);
    // Modulo places by position: the same index, so the other server.
    const std::string index = std::to_string(crc32(keys[i]) % 2);
    ASSERT_EQ(f.at(1), index) << keys[i];
    ASSERT_EQ(r.at(1), index) << keys[i];
    ASSERT_EQ(f.at(2), index == "0" ? "a:11211" : "b:11211") << keys[i];
    ASSERT_EQ(r.at(2), index == "0" ? "b:11211" : "a:11211") << keys[i];
  }
}

TEST(LocateOutputTest, OptionsTakeTheEqualsForm) {
  const std::vector<std::string> keys = random_keys(200, 9);
  const RunResult separate =
      run_locate({"--profile", "ring-crc32", "--hash", "fnv1a_32", "--points", "32", "--server",
                  "a:11211", "--server", "b:11211"},
                 join_lines(keys));
  const RunResult equals = run_locate({"--profile=ring-crc32", "--hash=fnv1a_32", "--points=32",
                                       "--server=a:11211", "--server=b:11211"},
                                      join_lines(keys));
  ASSERT_EQ(separate.status, 0) << separate.err;
  EXPECT_EQ(equals.status, 0) << equals.err;
  EXPECT_TRUE(same_lines(equals.out, separate.out));
  const LocateCase config{"",
                          "ring-crc32",
                          "fnv1a_32",
                          32,
                          {{"a:11211", server("a", 11211)}, {"b:11211", server("b", 11211)}}};
  EXPECT_TRUE(same_lines(separate.out, expected_output(config, keys)));
}

TEST(LocateOutputTest, LargeInputMatchesLibrary) {
  // Several megabytes in and out: the tool's buffers fill and refill many times.
  const LocateCase config{"", "libmemcached-ketama", "", 0, mixed_fleet()};
  const std::vector<std::string> keys = random_keys(100000, 11);
  const RunResult result = run_locate(locate_args(config), join_lines(keys));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_TRUE(same_lines(result.out, expected_output(config, keys)));
}

const LocateCase kSmallFleet{"",
                             "libmemcached-ketama-weighted",
                             "",
                             0,
                             {{"a:11211", server("a", 11211)},
                              {"b:11211", server("b", 11211)},
                              {"c:11211", server("c", 11211)}}};

auto key_error_line(std::size_t line, std::string_view key) -> std::string {
  const auto problem = memshard::check_key(key);
  if (!problem) {
    throw std::logic_error("a valid key was given as invalid");
  }
  return std::string(kPrefix) + "line " + std::to_string(line) + ": " + problem->message() + "\n";
}

TEST(LocateKeysTest, InvalidKeysAreReportedAndSkipped) {
  const std::string too_long(251, 'k');
  const std::string longest(250, 'l');
  const std::vector<std::string> lines = {
      "good:1",                     // 1
      "",                           // 2 empty
      "has space",                  // 3
      too_long,                     // 4
      "ctl\x01x",                   // 5
      "good:2",                     // 6
      longest,                      // 7 valid: exactly the limit
      std::string("nul\0byte", 8),  // 8
      "del\x7f",                    // 9
      "tab\there",                  // 10
      "utf8:\xc3\xa9t\xc3\xa9",     // 11 valid
      "last",                       // 12, without a newline
  };
  std::string input = join_lines(lines);
  input.pop_back();

  const RunResult result = run_locate(locate_args(kSmallFleet), input);
  EXPECT_EQ(result.status, 1);
  EXPECT_TRUE(
      same_lines(result.out, expected_output(kSmallFleet, {"good:1", "good:2", longest,
                                                           "utf8:\xc3\xa9t\xc3\xa9", "last"})));
  std::string expected_err;
  for (const std::size_t line : std::vector<std::size_t>{2, 3, 4, 5, 8, 9, 10}) {
    expected_err += key_error_line(line, lines[line - 1]);
  }
  EXPECT_EQ(result.err, expected_err);
  // The messages name the problem.
  EXPECT_NE(result.err.find("line 2: key is empty"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("line 4: key is 251 bytes long"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("line 5: key has a control byte 0x01 at offset 3"), std::string::npos)
      << result.err;
}

TEST(LocateKeysTest, OnlyInvalidKeysPrintNothingAndExitOne) {
  const RunResult result = run_locate(locate_args(kSmallFleet), "\n\nbad key\n");
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            key_error_line(1, "") + key_error_line(2, "") + key_error_line(3, "bad key"));
}

TEST(LocateKeysTest, EmptyInputPrintsNothing) {
  const RunResult result = run_locate(locate_args(kSmallFleet), "");
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
}

TEST(LocateKeysTest, LastLineWithoutNewline) {
  const RunResult result = run_locate(locate_args(kSmallFleet), "first\nsecond");
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(same_lines(result.out, expected_output(kSmallFleet, {"first", "second"})));
}

TEST(LocateKeysTest, CrlfInputGivesTheSameAnswers) {
  const std::vector<std::string> keys = random_keys(1000, 12);
  const RunResult lf = run_locate(locate_args(kSmallFleet), join_lines(keys));
  const RunResult crlf = run_locate(locate_args(kSmallFleet), join_lines(keys, "\r\n"));
  ASSERT_EQ(lf.status, 0) << lf.err;
  EXPECT_EQ(crlf.status, 0) << crlf.err;
  EXPECT_EQ(crlf.err, "");
  EXPECT_EQ(crlf.out.find('\r'), std::string::npos);
  EXPECT_TRUE(same_lines(crlf.out, lf.out));
  EXPECT_TRUE(same_lines(crlf.out, expected_output(kSmallFleet, keys)));
}

TEST(LocateKeysTest, CrlfStripsOneCarriageReturnOnly) {
  const RunResult result = run_locate(locate_args(kSmallFleet), "alpha\r\n\r\ngamma\r\r\ndelta\r");
  EXPECT_EQ(result.status, 1);
  EXPECT_TRUE(same_lines(result.out, expected_output(kSmallFleet, {"alpha", "delta"})));
  EXPECT_EQ(result.err, key_error_line(2, "") + key_error_line(3, "gamma\r"));
}

TEST(LocateKeysTest, VeryLongLinesAreMeasuredAndSkipped) {
  // Lengths around the sizes a reader may use for its buffer, with LF and CRLF
  // ends; each is followed by a valid key that must still be placed.
  const std::vector<std::size_t> lengths = {65535,   65536,   65537,          1048575,
                                            1048576, 1048577, 3 * 1048576 + 5};
  std::string input;
  std::string expected_err;
  std::vector<std::string> valid;
  std::size_t line = 0;
  for (const std::size_t length : lengths) {
    for (const std::string_view end : {"\n", "\r\n"}) {
      const std::string key(length, 'x');
      input.append(key).append(end);
      expected_err += key_error_line(++line, key);
      valid.push_back("after:" + std::to_string(length) + ":" + std::to_string(end.size()));
      input.append(valid.back()).append(end);
      ++line;
    }
  }
  input.append(std::string(2 * 1048576, 'y'));  // a last line without a newline
  expected_err += key_error_line(++line, std::string(2 * 1048576, 'y'));

  const RunResult result = run_locate(locate_args(kSmallFleet), input);
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, expected_err);
  EXPECT_TRUE(same_lines(result.out, expected_output(kSmallFleet, valid)));
}

TEST(LocateKeysTest, AnswersEachKeyBeforeTheNextIsWritten) {
  // A script may write one key and wait for its answer: the tool must not hold
  // answers back until the end of its input.
  std::signal(SIGPIPE, SIG_IGN);
  std::array<int, 2> to_child{};
  std::array<int, 2> from_child{};
  ASSERT_EQ(::pipe(to_child.data()), 0);
  ASSERT_EQ(::pipe(from_child.data()), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  for (const int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) {
    posix_spawn_file_actions_addclose(&actions, fd);
  }
  std::vector<std::string> args = locate_args(kSmallFleet);
  std::vector<char*> argv = argv_for(args);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, kLocatePath, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  ASSERT_EQ(spawned, 0);

  // Reads one line, giving up after 20 seconds without output.
  std::string pending;
  auto read_line = [&]() -> std::string {
    for (;;) {
      if (const auto newline = pending.find('\n'); newline != std::string::npos) {
        std::string line = pending.substr(0, newline + 1);
        pending.erase(0, newline + 1);
        return line;
      }
      pollfd ready{from_child[0], POLLIN, 0};
      if (::poll(&ready, 1, 20000) != 1) {
        return "(no answer within 20 s)";
      }
      std::array<char, 4096> chunk{};
      const ssize_t count = ::read(from_child[0], chunk.data(), chunk.size());
      if (count <= 0) {
        return "(end of output)";
      }
      pending.append(chunk.data(), static_cast<std::size_t>(count));
    }
  };
  std::vector<std::string> answers;
  for (const std::string_view key : {"first:key\n", "second:key\n", "third:key\n"}) {
    EXPECT_EQ(::write(to_child[1], key.data(), key.size()), static_cast<ssize_t>(key.size()));
    answers.push_back(read_line());
  }
  ::close(to_child[1]);
  EXPECT_EQ(read_line(), "(end of output)");
  ::close(from_child[0]);
  EXPECT_EQ(wait_for(pid), 0);
  EXPECT_EQ(join_lines(answers, ""),
            expected_output(kSmallFleet, {"first:key", "second:key", "third:key"}));
}

TEST(LocateWeightedTest, WeightedIsTheLibrarysOption) {
  const std::vector<std::string> keys = random_keys(1000, 13);
  const std::vector<memshard::Server> weighted_fleet = {
      server("10.2.0.1", 11211), server("10.2.0.2", 11211, 2), server("10.2.0.3", 11211, 3)};
  const std::vector<memshard::Server> equal_fleet = {
      server("10.2.0.1", 11211), server("10.2.0.2", 11211), server("10.2.0.3", 11211)};
  struct Case {
    std::string profile;
    bool weighted;
    const std::vector<memshard::Server>* servers;
    std::vector<std::string> specs;
  };
  const std::vector<Case> cases = {
      {"spymemcached-ketama",
       true,
       &weighted_fleet,
       {"10.2.0.1:11211", "10.2.0.2:11211:2", "10.2.0.3:11211:3"}},
      {"spymemcached-ketama",
       false,
       &equal_fleet,
       {"10.2.0.1:11211", "10.2.0.2:11211", "10.2.0.3:11211"}},
      {"spymemcached-ketama-libmemcached",
       true,
       &equal_fleet,
       {"10.2.0.1:11211", "10.2.0.2:11211", "10.2.0.3:11211"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--profile", c.profile, "--weighted",
                                     c.weighted ? "true" : "false"};
    for (const std::string& spec : c.specs) {
      args.insert(args.end(), {"--server", spec});
    }
    const RunResult result = run_locate(args, join_lines(keys));
    ASSERT_EQ(result.status, 0) << result;
    const memshard::AnyLocator locator =
        memshard::make_locator(c.profile, *c.servers, {"", 0, c.weighted});
    std::string expected;
    for (const std::string& key : keys) {
      const std::size_t index = locator.locate(key);
      expected += key + "\t" + std::to_string(index) + "\t" + (*c.servers)[index].endpoint() + "\n";
    }
    EXPECT_TRUE(same_lines(result.out, expected)) << c.profile << " weighted=" << c.weighted;
  }
}

TEST(LocateHashTagTest, HashTagIsTheLibrarysOption) {
  std::vector<std::string> keys = random_keys(500, 17);
  for (std::size_t i = 0; i < keys.size(); i += 3) {
    keys[i] = "user:{" + std::to_string(i % 7) + "}:" + keys[i];
  }
  const std::vector<memshard::Server> fleet = {server("10.3.0.1", 11211), server("10.3.0.2", 11211),
                                               server("10.3.0.3", 22122)};
  for (const std::string profile : {"twemproxy-ketama", "twemproxy-modula"}) {
    const RunResult result =
        run_locate({"--profile", profile, "--hash-tag", "{}", "--server", "10.3.0.1:11211",
                    "--server", "10.3.0.2:11211", "--server", "10.3.0.3:22122"},
                   join_lines(keys));
    ASSERT_EQ(result.status, 0) << result;
    memshard::ProfileOptions options;
    options.hash_tag = "{}";
    const memshard::AnyLocator locator = memshard::make_locator(profile, fleet, options);
    std::string expected;
    for (const std::string& key : keys) {
      const std::size_t index = locator.locate(key);
      expected += key + "\t" + std::to_string(index) + "\t" + fleet[index].endpoint() + "\n";
    }
    EXPECT_TRUE(same_lines(result.out, expected)) << profile;
  }
}

// ---------------------------------------------------------------------------
// --compare: the report is checked against the same comparison made in process
// with make_locator.

/// Side: one placement of a comparison, fully given.
struct Side {
  std::string profile;
  std::vector<std::string> specs;  ///< --server arguments
  memshard::ProfileOptions options;

  [[nodiscard]] auto servers() const -> std::vector<memshard::Server> {
    std::vector<memshard::Server> servers;
    for (const std::string& spec : specs) {
      servers.push_back(memshard::parse_server(spec));
    }
    return servers;
  }
};

/// side_args: the command-line options for `side`, prefixed "--" (side A) or
/// "--to-" (side B).
auto side_args(const Side& side, std::string_view prefix) -> std::vector<std::string> {
  const std::string p(prefix);
  std::vector<std::string> args = {p + "profile", side.profile};
  if (!side.options.hash.empty()) {
    args.insert(args.end(), {p + "hash", side.options.hash});
  }
  if (side.options.points != 0) {
    args.insert(args.end(), {p + "points", std::to_string(side.options.points)});
  }
  if (side.options.weighted) {
    args.insert(args.end(), {p + "weighted", *side.options.weighted ? "true" : "false"});
  }
  for (const std::string& spec : side.specs) {
    args.insert(args.end(), {p + "server", spec});
  }
  return args;
}

/// compare_args: --compare A against B, with `extra` options at the end.
auto compare_args(const Side& a, const Side& b, const std::vector<std::string>& extra = {})
    -> std::vector<std::string> {
  std::vector<std::string> args = {"--compare"};
  for (const std::vector<std::string>& part : {side_args(a, "--"), side_args(b, "--to-"), extra}) {
    args.insert(args.end(), part.begin(), part.end());
  }
  return args;
}

/// ReportRow: one server's row in a report's table.
struct ReportRow {
  std::string label;
  std::size_t keys = 0;    ///< held (A) or holds (B)
  std::size_t moved = 0;   ///< left (A) or arrived (B)
  bool only_here = false;  ///< marked "not in B" (A) or "not in A" (B)

  auto operator==(const ReportRow&) const -> bool = default;
};

/// Report: the numbers of a --compare report.
struct Report {
  std::string a_description;  ///< the "A: ..." line without "A: "
  std::string b_description;
  std::size_t keys = 0;
  std::size_t moved = 0;
  std::vector<ReportRow> a_rows;
  std::vector<ReportRow> b_rows;
  std::vector<std::string> moved_keys;  ///< --per-key lines: key<TAB>from<TAB>to

  auto operator==(const Report&) const -> bool = default;
};

void PrintTo(const Report& report, std::ostream* out) {
  *out << "{A: " << report.a_description << "; B: " << report.b_description << "; keys "
       << report.keys << ", moved " << report.moved << "; A rows:";
  for (const ReportRow& row : report.a_rows) {
    *out << " [" << row.label << " " << row.keys << " " << row.moved << (row.only_here ? " *" : "")
         << "]";
  }
  *out << "; B rows:";
  for (const ReportRow& row : report.b_rows) {
    *out << " [" << row.label << " " << row.keys << " " << row.moved << (row.only_here ? " *" : "")
         << "]";
  }
  *out << "; " << report.moved_keys.size() << " per-key lines}";
}

auto trim_right(std::string text) -> std::string {
  while (!text.empty() && text.back() == ' ') {
    text.pop_back();
  }
  return text;
}

/// parse_row: "label  keys  moved[  not in X]".
auto parse_row(std::string line) -> ReportRow {
  ReportRow row;
  if (const auto note = line.find("  not in "); note != std::string::npos) {
    row.only_here = true;
    line.erase(note);
  }
  auto last_number = [&line]() -> std::size_t {
    line = trim_right(line);
    const auto space = line.rfind(' ');
    const std::size_t value = std::stoul(line.substr(space + 1));
    line.erase(space);
    return value;
  };
  row.moved = last_number();
  row.keys = last_number();
  row.label = trim_right(line);
  return row;
}

/// parse_report: the numbers of the tool's --compare output.
auto parse_report(std::string_view out) -> Report {
  Report report;
  std::vector<ReportRow>* table = nullptr;
  for (const std::string& line : lines_of(out)) {
    if (line.find('\t') != std::string::npos) {
      report.moved_keys.push_back(line);
    } else if (line.empty()) {
      table = nullptr;
    } else if (line.starts_with("A: ")) {
      report.a_description = line.substr(3);
    } else if (line.starts_with("B: ")) {
      report.b_description = line.substr(3);
    } else if (line.starts_with("keys: ")) {
      report.keys = std::stoul(line.substr(6));
    } else if (line.starts_with("moved: ")) {
      report.moved = std::stoul(line.substr(7));
    } else if (line.starts_with("A server")) {
      table = &report.a_rows;
    } else if (line.starts_with("B server")) {
      table = &report.b_rows;
    } else if (table != nullptr) {
      table->push_back(parse_row(line));
    } else {
      throw std::runtime_error("unexpected report line: " + line);
    }
  }
  return report;
}

/// sample_keys: the keys --sample N compares: key:0 to key:<N-1>.
auto sample_keys(std::size_t count) -> std::vector<std::string> {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < count; ++i) {
    keys.push_back("key:" + std::to_string(i));
  }
  return keys;
}

auto label_of(const memshard::Server& s) -> std::string {
  return s.name.empty() ? s.endpoint() : s.endpoint() + " (" + s.name + ")";
}

auto same_server(const memshard::Server& x, const memshard::Server& y) -> bool {
  return x.host == y.host && x.port == y.port && x.name == y.name;
}

auto description_of(const Side& side, const memshard::AnyLocator& locator) -> std::string {
  const std::size_t count = side.specs.size();
  return std::string(locator.description()) + ", " + std::to_string(count) +
         (count == 1 ? " server" : " servers");
}

/// expected_report: the comparison of `a` and `b` over `keys`, made in process.
auto expected_report(const Side& a, const Side& b, const std::vector<std::string>& keys,
                     bool per_key) -> Report {
  const std::vector<memshard::Server> a_servers = a.servers();
  const std::vector<memshard::Server> b_servers = b.servers();
  const memshard::AnyLocator a_locator = memshard::make_locator(a.profile, a_servers, a.options);
  const memshard::AnyLocator b_locator = memshard::make_locator(b.profile, b_servers, b.options);
  Report report;
  report.a_description = description_of(a, a_locator);
  report.b_description = description_of(b, b_locator);
  auto rows = [](const std::vector<memshard::Server>& mine,
                 const std::vector<memshard::Server>& other) {
    std::vector<ReportRow> out;
    for (const memshard::Server& s : mine) {
      const bool shared = std::any_of(other.begin(), other.end(), [&s](const memshard::Server& o) {
        return same_server(s, o);
      });
      out.push_back({label_of(s), 0, 0, !shared});
    }
    return out;
  };
  report.a_rows = rows(a_servers, b_servers);
  report.b_rows = rows(b_servers, a_servers);
  for (const std::string& key : keys) {
    const std::size_t i = a_locator.locate(key);
    const std::size_t j = b_locator.locate(key);
    ++report.keys;
    ++report.a_rows[i].keys;
    ++report.b_rows[j].keys;
    if (!same_server(a_servers[i], b_servers[j])) {
      ++report.moved;
      ++report.a_rows[i].moved;
      ++report.b_rows[j].moved;
      if (per_key) {
        report.moved_keys.push_back(key + "\t" + label_of(a_servers[i]) + "\t" +
                                    label_of(b_servers[j]));
      }
    }
  }
  return report;
}

/// run_compare: runs --compare of `a` against `b` over --sample `count` keys
/// and checks the report against the in-process comparison.
auto run_compare(const Side& a, const Side& b, std::size_t count, bool per_key = false) -> Report {
  std::vector<std::string> extra = {"--sample", std::to_string(count)};
  if (per_key) {
    extra.emplace_back("--per-key");
  }
  const RunResult result = run_locate(compare_args(a, b, extra), "");
  EXPECT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "");
  const Report report = parse_report(result.out);
  EXPECT_EQ(report, expected_report(a, b, sample_keys(count), per_key)) << result.out;
  return report;
}

auto four_servers() -> std::vector<std::string> {
  return {"10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211", "10.0.0.4:11211"};
}

auto five_servers() -> std::vector<std::string> {
  std::vector<std::string> specs = four_servers();
  specs.emplace_back("10.0.0.5:11211");
  return specs;
}

TEST(LocateCompareTest, IdenticalConfigurationsMoveNothing) {
  const Side a{"libmemcached-ketama-weighted", {"a:11211", "b:11211:2", "c:11211"}, {}};
  const Report report = run_compare(a, a, 10000);
  EXPECT_EQ(report.keys, 10000U);
  EXPECT_EQ(report.moved, 0U);
  // B defaults to A entirely: --compare without any --to-* option.
  std::vector<std::string> args = {"--compare"};
  for (const std::string& arg : side_args(a, "--")) {
    args.push_back(arg);
  }
  args.insert(args.end(), {"--sample", "10000", "--fail-if-moved", "--per-key"});
  const RunResult result = run_locate(args, "");
  EXPECT_EQ(result.status, 0) << result;
  EXPECT_EQ(parse_report(result.out), report);
  EXPECT_NE(result.out.find("moved: 0 (0.00%)\n"), std::string::npos) << result.out;
}

TEST(LocateCompareTest, ModulaFourToFiveServersMovesMostKeys) {
  const Side a{"libmemcached-modula", four_servers(), {}};
  const Side b{"libmemcached-modula", five_servers(), {}};
  const Report report = run_compare(a, b, 10000);
  ASSERT_EQ(report.keys, 10000U);
  // Hash % 4 vs hash % 5: a key stays only when both agree, about 1 in 5.
  EXPECT_GE(report.moved, 7000U);
  EXPECT_LE(report.moved, 9000U);
  EXPECT_TRUE(report.b_rows.back().only_here);
}

TEST(LocateCompareTest, KetamaFourToFiveServersMovesAFifthOntoTheNewServer) {
  const Side a{"libmemcached-ketama-weighted", four_servers(), {}};
  const Side b{"libmemcached-ketama-weighted", five_servers(), {}};
  const Report report = run_compare(a, b, 10000, true);
  ASSERT_EQ(report.keys, 10000U);
  EXPECT_GE(report.moved, 1200U);
  EXPECT_LE(report.moved, 2800U);
  // Consistent hashing: keys move only onto the new server, never between
  // two servers that were already there.
  ASSERT_EQ(report.moved_keys.size(), report.moved);
  for (const std::string& line : report.moved_keys) {
    const std::vector<std::string> fields = split_fields(line);
    ASSERT_EQ(fields.size(), 3U) << line;
    EXPECT_TRUE(fields[0].starts_with("key:")) << line;
    EXPECT_NE(fields[1], "10.0.0.5:11211") << line;
    EXPECT_EQ(fields[2], "10.0.0.5:11211") << line;
  }
  for (std::size_t j = 0; j + 1 < report.b_rows.size(); ++j) {
    EXPECT_EQ(report.b_rows[j].moved, 0U) << report.b_rows[j].label;
  }
  EXPECT_EQ(report.b_rows.back().moved, report.moved);
  EXPECT_EQ(report.b_rows.back().keys, report.moved);
}

TEST(LocateCompareTest, AliasProfilesAgree) {
  const std::vector<std::string> fleet = {"m1:11211", "m2:11211", "m3:11211:4", "m4:11212"};
  const Side php{"php-memcached", fleet, {}};
  const Side libmemcached{"libmemcached-modula", fleet, {}};
  EXPECT_EQ(run_compare(php, libmemcached, 10000).moved, 0U);
  const Side php_libketama{"php-memcached-libketama", fleet, {}};
  const Side ketama_weighted{"libmemcached-ketama-weighted", fleet, {}};
  EXPECT_EQ(run_compare(php_libketama, ketama_weighted, 10000).moved, 0U);
  const Side gomemcache{"gomemcache", fleet, {}};
  const Side modulo_crc32{"modulo-crc32", fleet, {}};
  EXPECT_EQ(run_compare(gomemcache, modulo_crc32, 10000).moved, 0U);
}

TEST(LocateCompareTest, TwemproxyKetamaAgreesWithLibketamaOnUnnamedServers) {
  // Unnamed, twemproxy hashes "host" (port 11211) or "host:port", as
  // libmemcached does, with the same md5 x4 points and weights.
  const std::vector<std::string> fleet = {"10.0.0.1:11211", "10.0.0.2:11212:2", "cache-c:11211:3",
                                          "[fd00::4]:11300"};
  const Side twemproxy{"twemproxy-ketama", fleet, {}};
  const Side libketama{"libmemcached-ketama-weighted", fleet, {}};
  const Report report = run_compare(twemproxy, libketama, 10000);
  EXPECT_EQ(report.moved, 0U);
  for (const ReportRow& row : report.a_rows) {
    EXPECT_GT(row.keys, 0U) << row.label;
  }
}

TEST(LocateCompareTest, ServersAreMatchedByIdentityNotPosition) {
  // A ring places by server: the same servers in another order move nothing.
  const Side ring{"libmemcached-ketama-weighted", {"a:11211", "b:11211", "c:11211"}, {}};
  const Side ring_reversed{"libmemcached-ketama-weighted", {"c:11211", "b:11211", "a:11211"}, {}};
  EXPECT_EQ(run_compare(ring, ring_reversed, 5000).moved, 0U);
  // Modulo places by position: two servers swapped move every key.
  const Side modulo{"modulo-crc32", {"a:11211", "b:11211"}, {}};
  const Side modulo_swapped{"modulo-crc32", {"b:11211", "a:11211"}, {}};
  const Report swapped = run_compare(modulo, modulo_swapped, 5000);
  EXPECT_EQ(swapped.moved, 5000U);
  // A weight is not part of a server's identity: a heavier server is the same server.
  const Side heavier{"libmemcached-ketama-weighted", {"a:11211", "b:11211:3", "c:11211"}, {}};
  const Report reweighted = run_compare(ring, heavier, 5000);
  EXPECT_GT(reweighted.moved, 0U);
  for (const ReportRow& row : reweighted.b_rows) {
    EXPECT_FALSE(row.only_here) << row.label;
  }
  // The heavier server gains keys (the others lose points too: libketama
  // divides 160 x N points by the total weight).
  EXPECT_GT(reweighted.b_rows[1].keys, reweighted.a_rows[1].keys);
  EXPECT_GT(reweighted.b_rows[1].moved, reweighted.moved / 2);
}

TEST(LocateCompareTest, NamesArePartOfAServersIdentity) {
  const Side a{"ring-crc32", {"10.0.0.1:11211:1:cache-x"}, {}};
  const Side b{"ring-crc32", {"10.0.0.1:11211:1:cache-y"}, {}};
  const Report report = run_compare(a, b, 100, true);
  EXPECT_EQ(report.moved, 100U);
  ASSERT_EQ(report.moved_keys.size(), 100U);
  EXPECT_EQ(report.moved_keys.front(), "key:0\t10.0.0.1:11211 (cache-x)\t10.0.0.1:11211 (cache-y)");
  ASSERT_EQ(report.a_rows.size(), 1U);
  EXPECT_EQ(report.a_rows[0], (ReportRow{"10.0.0.1:11211 (cache-x)", 100, 100, true}));
}

TEST(LocateCompareTest, ToOptionsSetSideB) {
  const std::vector<std::string> fleet = {"a:11211", "b:11211", "c:11211"};
  run_compare({"ring-crc32", fleet, {}}, {"ring-crc32", fleet, {"", 16, {}}}, 2000);
  run_compare({"libmemcached-ketama", fleet, {}},
              {"libmemcached-ketama", fleet, {"fnv1a_32", 0, {}}}, 2000);
  run_compare({"spymemcached-ketama", {"a:11211", "b:11211"}, {"", 0, true}},
              {"spymemcached-ketama", {"a:11211", "b:11211"}, {"", 0, false}}, 2000);
  run_compare({"twemproxy-ketama", fleet, {"crc32", 0, {}}},
              {"twemproxy-ketama", fleet, {"crc32a", 0, {}}}, 2000);
}

TEST(LocateCompareTest, OptionsCarryOverToBOnlyWithinTheSameProfile) {
  auto run_descriptions = [](const std::vector<std::string>& args) {
    const RunResult result = run_locate(args, "");
    EXPECT_EQ(result.status, 0) << result;
    const Report report = parse_report(result.out);
    return std::pair(report.a_description, report.b_description);
  };
  // Same profile: B takes A's hash and points; servers from --to-server.
  EXPECT_EQ(run_descriptions({"--compare", "--profile", "ring-crc32", "--hash", "fnv1a_32",
                              "--points", "32", "--server", "a:11211", "--to-server", "a:11211",
                              "--to-server", "b:11211", "--sample", "10"}),
            std::pair(std::string("ring-crc32 hash=fnv1a_32 points=32, 1 server"),
                      std::string("ring-crc32 hash=fnv1a_32 points=32, 2 servers")));
  // Same profile named again with --to-profile: the same.
  EXPECT_EQ(run_descriptions({"--compare", "--profile", "spymemcached-ketama", "--weighted", "true",
                              "--server", "a:11211", "--to-profile", "spymemcached-ketama",
                              "--sample", "10"})
                .second,
            "spymemcached-ketama weighted=true, 1 server");
  // Another profile: B's own defaults ("crc32" is not the same hash for
  // twemproxy and libmemcached), and A's servers.
  EXPECT_EQ(run_descriptions({"--compare", "--profile", "twemproxy-ketama", "--hash", "crc32",
                              "--server", "a:11211", "--server", "b:11211", "--to-profile",
                              "libmemcached-ketama-weighted", "--sample", "10"}),
            std::pair(std::string("twemproxy-ketama hash=crc32, 2 servers"),
                      std::string("libmemcached-ketama-weighted hash=md5, 2 servers")));
  EXPECT_EQ(run_descriptions({"--compare", "--profile", "ring-crc32", "--points", "8", "--server",
                              "a:11211", "--to-profile", "libmemcached-modula", "--sample", "10"})
                .second,
            "libmemcached-modula hash=one_at_a_time, 1 server");
}

TEST(LocateCompareTest, SampleKeysAreKeyColonIndex) {
  const Side a{"modulo-crc32", {"a:11211", "b:11211"}, {}};
  const Side b{"modulo-crc32", {"b:11211", "a:11211"}, {}};
  // --sample ignores standard input, even invalid lines there.
  const RunResult result =
      run_locate(compare_args(a, b, {"--sample", "3", "--per-key"}), "bad key\n\n");
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "");
  const std::vector<std::string> lines = lines_of(result.out);
  ASSERT_GE(lines.size(), 4U) << result.out;
  EXPECT_TRUE(lines[0].starts_with("key:0\t")) << result.out;
  EXPECT_TRUE(lines[1].starts_with("key:1\t")) << result.out;
  EXPECT_TRUE(lines[2].starts_with("key:2\t")) << result.out;
  EXPECT_EQ(lines[3], "");  // a blank line between the moved keys and the report
  EXPECT_NE(result.out.find("\nkeys: 3 (key:0 to key:2)\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\nmoved: 3 (100.00%)\n"), std::string::npos) << result.out;
}

TEST(LocateCompareTest, ExactReportLayout) {
  // b:11211 is replaced by a named server: its keys (by crc32 % 2, user:4
  // alone) move there.
  const Side a{"modulo-crc32", {"a:11211", "b:11211"}, {}};
  const Side b{"modulo-crc32", {"a:11211", "new:11211:1:n"}, {}};
  const std::vector<std::string> keys = {"user:1", "user:2", "user:3", "user:4"};
  const RunResult result = run_locate(compare_args(a, b, {"--per-key"}), join_lines(keys));
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "user:4\tb:11211\tnew:11211 (n)\n"
            "\n"
            "A: modulo-crc32 hash=crc32, 2 servers\n"
            "B: modulo-crc32 hash=crc32, 2 servers\n"
            "keys: 4 (standard input)\n"
            "moved: 1 (25.00%)\n"
            "\n"
            "A server  held  left\n"
            "a:11211      3     0\n"
            "b:11211      1     1  not in B\n"
            "\n"
            "B server       holds  arrived\n"
            "a:11211            3        0\n"
            "new:11211 (n)      1        1  not in A\n");
  EXPECT_EQ(parse_report(result.out), expected_report(a, b, keys, true));
}

TEST(LocateCompareTest, StandardInputKeysWithInvalidLines) {
  const Side a{"libmemcached-modula", four_servers(), {}};
  const Side b{"libmemcached-modula", five_servers(), {}};
  const std::vector<std::string> valid = random_keys(500, 14);
  std::vector<std::string> lines = valid;
  lines.insert(lines.begin() + 10, "has space");
  lines.insert(lines.begin() + 20, "");
  const RunResult result = run_locate(compare_args(a, b, {"--per-key"}), join_lines(lines));
  EXPECT_EQ(result.status, 1) << result;
  EXPECT_EQ(result.err, key_error_line(11, "has space") + key_error_line(21, ""));
  EXPECT_EQ(parse_report(result.out), expected_report(a, b, valid, true));
  EXPECT_NE(result.out.find("\nkeys: 500 (standard input; 2 invalid lines skipped)\n"),
            std::string::npos)
      << result.out;
}

TEST(LocateCompareTest, EmptyInputComparesNothing) {
  const Side a{"libmemcached-modula", four_servers(), {}};
  const Side b{"libmemcached-modula", five_servers(), {}};
  const RunResult result = run_locate(compare_args(a, b, {"--fail-if-moved"}), "");
  EXPECT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(parse_report(result.out), expected_report(a, b, {}, false));
  EXPECT_NE(result.out.find("\nmoved: 0 (0.00%)\n"), std::string::npos) << result.out;
}

TEST(LocateCompareTest, FailIfMovedExitStatus) {
  const Side four{"libmemcached-ketama-weighted", four_servers(), {}};
  const Side five{"libmemcached-ketama-weighted", five_servers(), {}};
  struct Case {
    const Side* b;
    std::string input;
    bool fail_if_moved;
    int status;
  };
  const std::string valid = "user:1\nuser:2\nuser:3\nuser:4\nuser:5\nuser:6\nuser:7\nuser:8\n";
  const std::string some_invalid = valid + "bad key\n";
  // user:1 .. user:8 include a key that moves onto the fifth server.
  ASSERT_GT(expected_report(four, five, lines_of(valid), false).moved, 0U);
  const std::vector<Case> cases = {
      {&four, valid, true, 0},         // agree
      {&five, valid, true, 3},         // disagree
      {&five, valid, false, 0},        // disagree, but not asked to fail
      {&four, some_invalid, true, 1},  // agree, some lines invalid
      {&five, some_invalid, true, 3},  // disagree wins over invalid lines
      {&five, some_invalid, false, 1},
  };
  for (const Case& c : cases) {
    const RunResult result =
        run_locate(compare_args(four, *c.b,
                                c.fail_if_moved ? std::vector<std::string>{"--fail-if-moved"}
                                                : std::vector<std::string>{}),
                   c.input);
    EXPECT_EQ(result.status, c.status) << result;
    // The report is printed whatever the status.
    EXPECT_NE(result.out.find("\nmoved: "), std::string::npos) << result;
  }
  // With --sample too.
  const RunResult sampled =
      run_locate(compare_args(four, five, {"--sample", "1000", "--fail-if-moved"}), "");
  EXPECT_EQ(sampled.status, 3) << sampled;
}

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
  const RunResult result = run_locate(error.args, "user:42\nuser:43\n");
  EXPECT_EQ(result.status, 2) << result.err;
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

TEST(LocateInfoTest, ListProfilesNamesEveryProfile) {
  const RunResult result = run_locate({"--list-profiles"}, "");
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.err, "");
  const std::vector<std::string> lines = lines_of(result.out);
  // Each profile is a block: its name alone, then indented its summary, the
  // hashes it takes and whether it takes --points.
  std::vector<std::string> names;
  for (const std::string& line : lines) {
    if (!line.starts_with(" ")) {
      names.push_back(line);
    }
  }
  std::vector<std::string> expected_names;
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    expected_names.emplace_back(profile.name);
  }
  EXPECT_EQ(names, expected_names);
  ASSERT_EQ(lines.size(), 4 * memshard::kProfiles.size()) << result.out;
  for (std::size_t i = 0; i < memshard::kProfiles.size(); ++i) {
    const memshard::ProfileInfo& profile = memshard::kProfiles.at(i);
    EXPECT_EQ(lines[4 * i], profile.name);
    EXPECT_EQ(lines[4 * i + 1], "    " + std::string(profile.summary));
    const std::string& hashes = lines[4 * i + 2];
    EXPECT_TRUE(hashes.starts_with("    hash:")) << hashes;
    if (profile.hashes.empty()) {
      EXPECT_NE(hashes.find("fixed (no --hash)"), std::string::npos) << hashes;
    } else {
      EXPECT_NE(hashes.find(std::string(profile.default_hash) + " (default)"), std::string::npos)
          << hashes;
      const std::string listed = memshard::hash_names(profile);
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

TEST(LocateInfoTest, HelpPrintsUsageAndExitsZero) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"-h"},
        std::vector<std::string>{"--profile", "nonexistent", "--help"}}) {
    const RunResult result = run_locate(args, "user:42\n");
    EXPECT_EQ(result.status, 0) << args.back();
    EXPECT_EQ(result.err, "");
    EXPECT_TRUE(result.out.starts_with("Usage: memshard-locate")) << result.out;
    for (const std::string_view option :
         {"--profile", "--hash", "--points", "--weighted", "--server", "--list-profiles",
          "--version", "--compare", "--to-profile", "--to-hash", "--to-points", "--to-weighted",
          "--to-server", "--sample", "--per-key", "--fail-if-moved"}) {
      EXPECT_NE(result.out.find(option), std::string::npos) << option;
    }
    // Hash names depend on the profile: the help sends the reader to --list-profiles.
    EXPECT_NE(result.out.find("the names depend"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("see --list-profiles"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("key:0, key:1, ... key:<N-1>"), std::string::npos) << result.out;
  }
}

TEST(LocateInfoTest, VersionIsTheLibraryVersion) {
  const RunResult result = run_locate({"--version"}, "");
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out, "memshard-locate (memshard) " + std::to_string(MEMSHARD_VERSION_MAJOR) +
                            "." + std::to_string(MEMSHARD_VERSION_MINOR) + "." +
                            std::to_string(MEMSHARD_VERSION_PATCH) + "\n");
}

}  // namespace
