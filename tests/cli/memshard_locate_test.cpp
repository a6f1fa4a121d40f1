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
      memshard::make_locator(config.profile, servers, {config.hash, config.points});
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
  ASSERT_EQ(lines.size(), memshard::kProfiles.size()) << result.out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const memshard::ProfileInfo& profile = memshard::kProfiles.at(i);
    std::istringstream fields(lines[i]);
    std::string name;
    std::string hash;
    fields >> name >> hash;
    EXPECT_EQ(name, profile.name);
    EXPECT_EQ(hash, profile.default_hash);
    EXPECT_TRUE(lines[i].ends_with(profile.summary)) << lines[i];
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
         {"--profile", "--hash", "--points", "--server", "--list-profiles", "--version"}) {
      EXPECT_NE(result.out.find(option), std::string::npos) << option;
    }
    for (const std::string_view hash : memshard::kHashNames) {
      EXPECT_NE(result.out.find(hash), std::string::npos) << hash;
    }
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
