// SPDX-License-Identifier: MIT
// locate_main_test.cpp: the built memshard-locate binary, for what only it shows:
// its exit statuses, keys read from standard input and answers written to
// standard output (at once, for a caller that waits for each), errors on
// standard error, and --help. Everything else is checked in process by the
// other locate_*_test.cpp files; here the binary must agree with run().

#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <string>
#include <vector>

#include "locate/command_line.hpp"
#include "support/child_process.hpp"
#include "tools/locate_support.hpp"

namespace locate_main_test {
namespace {

namespace tool = memshard::locate_tool;
using tool::testing::join_lines;
using tool::testing::random_keys;
using tool::testing::run_in_process;
using tool::testing::RunResult;

constexpr const char* kLocatePath = MEMSHARD_LOCATE_PATH;

auto run_binary(const std::vector<std::string>& args, const std::string& input = {}) -> RunResult {
  return memshard::testing::run_program(kLocatePath, args, input);
}

/// expect_same_run: the binary and run() agree on `args` and `input`.
void expect_same_run(const std::vector<std::string>& args, const std::string& input, int status) {
  const RunResult binary = run_binary(args, input);
  const RunResult in_process = run_in_process(args, input);
  EXPECT_EQ(binary.status, status) << binary;
  EXPECT_EQ(in_process.status, status) << in_process;
  EXPECT_TRUE(binary.out == in_process.out) << binary;
  EXPECT_EQ(binary.err, in_process.err);
}

const std::vector<std::string> kFleet = {
    "--profile", "libmemcached-ketama-weighted", "--server", "a:11211", "--server", "b:11211:2"};

auto with(std::vector<std::string> args, const std::vector<std::string>& more)
    -> std::vector<std::string> {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(LocateMainTest, HelpVersionAndProfilesExitZero) {
  const RunResult help = run_binary({"--help"}, "user:42\n");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.err, "");
  EXPECT_TRUE(help.out.starts_with("Usage: memshard-locate")) << help.out;
  expect_same_run({"--help"}, "", 0);
  expect_same_run({"--version"}, "", 0);
  expect_same_run({"--list-profiles"}, "", 0);
}

TEST(LocateMainTest, KeysFromStandardInputToStandardOutput) {
  // Several megabytes, so that standard input is read many times.
  const std::string keys = join_lines(random_keys(100000, 11));
  expect_same_run(kFleet, keys, 0);
  expect_same_run(kFleet, "good\r\nbad key\n\nlast", 1);
}

TEST(LocateMainTest, ExitStatuses) {
  expect_same_run(with(kFleet, {"--frobnicate"}), "user:42\n", 2);
  const RunResult usage = run_binary({"--profile", "ring-crc32"}, "user:42\n");
  EXPECT_EQ(usage.out, "");
  EXPECT_EQ(usage.err,
            "memshard-locate: missing --server SPEC (at least one server)\n"
            "Try 'memshard-locate --help' for more information.\n");
  expect_same_run({"--profile", "ring-crc32", "--server", "a:0"}, "user:42\n", 2);
  const std::vector<std::string> compare = {"--compare", "--profile",   "libmemcached-modula",
                                            "--server",  "a:11211",     "--to-server",
                                            "a:11211",   "--to-server", "b:11211"};
  expect_same_run(with(compare, {"--per-key", "--fail-if-moved"}), "user:1\nuser:2\nuser:3\n", 3);
  expect_same_run(with(compare, {"--fail-if-moved"}), "", 0);
  expect_same_run(with(compare, {"--sample", "100"}), "", 0);
}

TEST(LocateMainTest, AnswersEachKeyBeforeTheNextIsWritten) {
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
  std::vector<std::string> args = kFleet;
  std::vector<char*> argv = {const_cast<char*>(kLocatePath)};
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
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
  std::string answers;
  for (const std::string_view key : {"first:key\n", "second:key\n", "third:key\n"}) {
    EXPECT_EQ(::write(to_child[1], key.data(), key.size()), static_cast<ssize_t>(key.size()));
    answers += read_line();
  }
  ::close(to_child[1]);
  EXPECT_EQ(read_line(), "(end of output)");
  ::close(from_child[0]);
  int status = -1;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(answers, run_in_process(kFleet, "first:key\nsecond:key\nthird:key\n").out);
}

}  // namespace
}  // namespace locate_main_test
