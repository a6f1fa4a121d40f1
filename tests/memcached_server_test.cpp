// SPDX-License-Identifier: MIT
// memcached_server_test.cpp: the RAII memcached process that the live-server
// tests and the benchmarks use: start-up on free ports, the raw command
// client, stop/restart, clean-up, and clear failures for a bad binary.

#include "support/memcached_server.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace memcached_server_test {
namespace {

using memshard::testing::MemcachedServer;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// ScopedEnv: sets (or, with nullopt, unsets) an environment variable for one
// scope and restores the old value.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str()); old != nullptr) {
      old_ = old;
    }
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  auto operator=(const ScopedEnv&) -> ScopedEnv& = delete;
  ScopedEnv(ScopedEnv&&) = delete;
  auto operator=(ScopedEnv&&) -> ScopedEnv& = delete;
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// process_gone: true when `pid` is no live process: absent, or a zombie left
// to its new parent.
auto process_gone(pid_t pid) -> bool {
  if (::kill(pid, 0) != 0) {
    return errno == ESRCH;
  }
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const auto close = text.rfind(')');
  if (text.empty() || close == std::string::npos) {
    return true;
  }
  return close + 2 < text.size() && text[close + 2] == 'Z';
}

// wait_until: polls `done` with a short back-off until it holds or `timeout`
// passes; returns its last value.
template <class Predicate>
auto wait_until(Predicate done, milliseconds timeout) -> bool {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::microseconds{200};
  while (!done()) {
    if (Clock::now() >= deadline) {
      return done();
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds{20'000});
  }
  return true;
}

// TempDir: a directory anyone may read and search (the server may run as
// "nobody"), removed with its contents at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "memshard-test-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp failed");
    }
    path_ = pattern;
    std::filesystem::permissions(
        path_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                   std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                   std::filesystem::perms::others_exec);
  }
  TempDir(const TempDir&) = delete;
  auto operator=(const TempDir&) -> TempDir& = delete;
  TempDir(TempDir&&) = delete;
  auto operator=(TempDir&&) -> TempDir& = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  // write_file: a file `name` holding `text` with mode `mode`; its path.
  auto write_file(const std::string& name, std::string_view text, mode_t mode) const
      -> std::string {
    const std::filesystem::path file = path_ / name;
    std::ofstream(file) << text;
    ::chmod(file.c_str(), mode);
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

// start_failure: the message of the exception the constructor throws, and how
// long it took; fails the test if nothing is thrown.
auto start_failure(const std::string& binary, milliseconds start_timeout, milliseconds& elapsed)
    -> std::string {
  const auto begin = Clock::now();
  std::string message;
  try {
    MemcachedServer server(binary, start_timeout);
    ADD_FAILURE() << "a server started with binary '" << server.binary() << "'";
  } catch (const std::runtime_error& error) {
    message = error.what();
  }
  elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - begin);
  return message;
}

TEST(MemcachedServerTest, TwoServersListenOnDistinctKernelPorts) {
  MemcachedServer a;
  MemcachedServer b;
  EXPECT_NE(a.port(), 0);
  EXPECT_NE(b.port(), 0);
  EXPECT_NE(a.port(), b.port());
  EXPECT_NE(a.pid(), b.pid());
  EXPECT_TRUE(a.running());
  EXPECT_TRUE(b.running());
  EXPECT_EQ(MemcachedServer::host(), "127.0.0.1");
  EXPECT_EQ(a.spec(), "127.0.0.1:" + std::to_string(a.port()));
  EXPECT_TRUE(a.command("version\r\n").starts_with("VERSION "));
  EXPECT_TRUE(b.command("version").starts_with("VERSION ")) << "a missing \\r\\n is added";
}

TEST(MemcachedServerTest, SetThenGetRoundTripsThroughCommand) {
  MemcachedServer server;
  EXPECT_EQ(server.command("set greeting 7 0 5\r\nhello\r\n"), "STORED\r\n");
  EXPECT_EQ(server.command("get greeting\r\n"), "VALUE greeting 7 5\r\nhello\r\nEND\r\n");
  EXPECT_EQ(server.command("get absent\r\n"), "END\r\n");
  // A value whose bytes look like the end of a listing.
  EXPECT_EQ(server.command("set tricky 0 0 5\r\nEND\r\n\r\n"), "STORED\r\n");
  EXPECT_EQ(server.command("get tricky greeting\r\n"),
            "VALUE tricky 0 5\r\nEND\r\n\r\nVALUE greeting 7 5\r\nhello\r\nEND\r\n");
  EXPECT_EQ(server.command("delete greeting\r\n"), "DELETED\r\n");
  EXPECT_EQ(server.command("flush_all\r\n"), "OK\r\n");
  EXPECT_EQ(server.command("get tricky\r\n"), "END\r\n");
}

TEST(MemcachedServerTest, StatsIsReadToItsEndAndNamesTheProcess) {
  MemcachedServer server;
  const std::string stats = server.command("stats\r\n");
  EXPECT_TRUE(stats.ends_with("END\r\n")) << stats;
  EXPECT_NE(stats.find("STAT pid " + std::to_string(server.pid()) + "\r\n"), std::string::npos);
  const std::string settings = server.command("stats settings\r\n");
  EXPECT_TRUE(settings.ends_with("END\r\n")) << settings;
  EXPECT_NE(settings.find("STAT tcpport " + std::to_string(server.port()) + "\r\n"),
            std::string::npos)
      << settings;
  EXPECT_NE(settings.find("STAT udpport 0\r\n"), std::string::npos) << settings;
  EXPECT_NE(settings.find("STAT num_threads 1\r\n"), std::string::npos) << settings;
  EXPECT_EQ(server.command("stats reset\r\n"), "RESET\r\n");
}

TEST(MemcachedServerTest, ReplyCompletenessFollowsTheProtocol) {
  using memshard::testing::detail::reply_complete;
  EXPECT_FALSE(reply_complete("get k\r\n", ""));
  EXPECT_FALSE(reply_complete("get k\r\n", "VALUE k 0 5\r\nEND\r\n"));
  EXPECT_FALSE(reply_complete("get k\r\n", "VALUE k 0 5\r\nEND\r\n\r\n"));
  EXPECT_TRUE(reply_complete("get k\r\n", "VALUE k 0 5\r\nEND\r\n\r\nEND\r\n"));
  EXPECT_TRUE(reply_complete("get k\r\n", "END\r\n"));
  EXPECT_TRUE(reply_complete("gets k\r\n", "CLIENT_ERROR bad command line format\r\n"));
  EXPECT_FALSE(reply_complete("stats\r\n", "STAT pid 1\r\n"));
  EXPECT_TRUE(reply_complete("stats\r\n", "STAT pid 1\r\nEND\r\n"));
  EXPECT_TRUE(reply_complete("set k 0 0 1\r\nv\r\n", "STORED\r\n"));
  EXPECT_FALSE(reply_complete("set k 0 0 1\r\nv\r\n", "STOR"));
  EXPECT_FALSE(reply_complete("mg k v\r\n", "VA 2\r\nh"));
  EXPECT_TRUE(reply_complete("mg k v\r\n", "VA 2\r\nhi\r\n"));
  EXPECT_TRUE(reply_complete("mg k v\r\n", "EN\r\n"));
}

TEST(MemcachedServerTest, StopMakesConnectionsFailAndIsIdempotent) {
  MemcachedServer server;
  const pid_t pid = server.pid();
  ASSERT_TRUE(server.accepts_connections());
  server.stop();
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.pid(), -1);
  EXPECT_TRUE(process_gone(pid));
  EXPECT_FALSE(server.accepts_connections());
  EXPECT_THROW(static_cast<void>(server.command("version\r\n", milliseconds{500})),
               std::runtime_error);
  server.stop();
  EXPECT_FALSE(server.running());
}

TEST(MemcachedServerTest, RestartComesBackEmptyOnTheSamePort) {
  MemcachedServer server;
  const std::uint16_t port = server.port();
  ASSERT_EQ(server.command("set k 0 0 1\r\nv\r\n"), "STORED\r\n");
  server.stop();
  ASSERT_FALSE(server.accepts_connections());
  server.restart();
  EXPECT_EQ(server.port(), port);
  EXPECT_TRUE(server.running());
  EXPECT_TRUE(server.accepts_connections());
  EXPECT_EQ(server.command("get k\r\n"), "END\r\n") << "a restarted server starts empty";
  // restart() on a running server replaces the process.
  const pid_t before = server.pid();
  ASSERT_EQ(server.command("set k 0 0 1\r\nv\r\n"), "STORED\r\n");
  server.restart();
  EXPECT_EQ(server.port(), port);
  EXPECT_TRUE(process_gone(before));
  EXPECT_EQ(server.command("get k\r\n"), "END\r\n");
}

TEST(MemcachedServerTest, DestructorKillsAndReapsTheProcess) {
  pid_t pid = -1;
  {
    MemcachedServer server;
    pid = server.pid();
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, 0), 0);
  }
  errno = 0;
  EXPECT_EQ(::kill(pid, 0), -1) << "the process still exists";
  EXPECT_EQ(errno, ESRCH);
  int status = 0;
  errno = 0;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), -1) << "the process was not reaped";
  EXPECT_EQ(errno, ECHILD);
}

TEST(MemcachedServerTest, SeesAProcessKilledFromOutside) {
  MemcachedServer server;
  ASSERT_EQ(::kill(server.pid(), SIGKILL), 0);
  EXPECT_TRUE(wait_until([&] { return !server.running(); }, milliseconds{10'000}));
  server.stop();  // reaps the dead process
  EXPECT_EQ(server.pid(), -1);
  server.restart();
  EXPECT_TRUE(server.command("version\r\n").starts_with("VERSION "));
}

TEST(MemcachedServerTest, MovesTransferOwnership) {
  MemcachedServer a;
  const pid_t pid = a.pid();
  const std::uint16_t port = a.port();
  MemcachedServer b(std::move(a));
  EXPECT_EQ(b.pid(), pid);
  EXPECT_EQ(b.port(), port);
  EXPECT_FALSE(a.running());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(a.pid(), -1);     // NOLINT(bugprone-use-after-move)
  a.stop();                   // NOLINT(bugprone-use-after-move): must not touch b's process
  EXPECT_TRUE(b.running());
  EXPECT_TRUE(b.command("version\r\n").starts_with("VERSION "));

  MemcachedServer c;
  const pid_t replaced = c.pid();
  c = std::move(b);
  EXPECT_TRUE(process_gone(replaced)) << "move assignment stops the server it replaces";
  EXPECT_EQ(c.pid(), pid);
  EXPECT_TRUE(c.command("version\r\n").starts_with("VERSION "));
}

TEST(MemcachedServerTest, EnvironmentOverridesTheConstructorPath) {
  const ScopedEnv env("MEMSHARD_MEMCACHED", std::string(MEMSHARD_MEMCACHED_BINARY));
  MemcachedServer server("/nonexistent/memcached");
  EXPECT_EQ(server.binary(), MEMSHARD_MEMCACHED_BINARY);
  EXPECT_TRUE(server.command("version\r\n").starts_with("VERSION "));
}

TEST(MemcachedServerTest, MissingBinaryInEnvironmentThrowsAClearErrorQuickly) {
  const std::string missing = "/nonexistent/memshard-no-such-memcached";
  const ScopedEnv env("MEMSHARD_MEMCACHED", missing);
  milliseconds elapsed{};
  const std::string message = start_failure({}, MemcachedServer::kStartTimeout, elapsed);
  EXPECT_NE(message.find(missing), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  EXPECT_NE(message.find("MEMSHARD_MEMCACHED"), std::string::npos) << message;
  EXPECT_LT(elapsed, milliseconds{5'000});
}

TEST(MemcachedServerTest, BinaryMissingFromPathIsNamed) {
  const ScopedEnv env("MEMSHARD_MEMCACHED", std::nullopt);
  milliseconds elapsed{};
  const std::string message =
      start_failure("memshard-no-such-memcached", MemcachedServer::kStartTimeout, elapsed);
  EXPECT_NE(message.find("'memshard-no-such-memcached' not found in PATH"), std::string::npos)
      << message;
  EXPECT_LT(elapsed, milliseconds{5'000});
}

TEST(MemcachedServerTest, NonExecutableFileIsReported) {
  const TempDir dir;
  const std::string file = dir.write_file("not-executable", "#!/bin/sh\n", 0644);
  const ScopedEnv env("MEMSHARD_MEMCACHED", file);
  milliseconds elapsed{};
  const std::string message = start_failure({}, MemcachedServer::kStartTimeout, elapsed);
  EXPECT_NE(message.find("cannot execute memcached binary '" + file + "'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
}

TEST(MemcachedServerTest, BinaryThatExitsIsRetriedThenReportedWithItsOutput) {
  const TempDir dir;
  const std::string script =
      dir.write_file("fails", "#!/bin/sh\necho 'failed to listen' >&2\nexit 3\n", 0755);
  const ScopedEnv env("MEMSHARD_MEMCACHED", script);
  milliseconds elapsed{};
  const std::string message = start_failure({}, MemcachedServer::kStartTimeout, elapsed);
  EXPECT_NE(message.find("did not start after " + std::to_string(MemcachedServer::kStartAttempts) +
                         " attempts"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("exited with status 3"), std::string::npos) << message;
  EXPECT_NE(message.find("failed to listen"), std::string::npos) << message;
  EXPECT_LT(elapsed, milliseconds{10'000});
}

TEST(MemcachedServerTest, BinaryThatNeverAnswersTimesOutAndIsKilled) {
  const TempDir dir;
  const std::string script = dir.write_file("silent", "#!/bin/sh\nexec sleep 60\n", 0755);
  const ScopedEnv env("MEMSHARD_MEMCACHED", script);
  milliseconds elapsed{};
  const std::string message = start_failure({}, milliseconds{300}, elapsed);
  EXPECT_NE(message.find("did not answer on 127.0.0.1:"), std::string::npos) << message;
  EXPECT_NE(message.find("within 300 ms"), std::string::npos) << message;
  EXPECT_LT(elapsed, milliseconds{5'000});
  // The message names the pid; that process must be gone.
  const auto at = message.find("pid ");
  ASSERT_NE(at, std::string::npos) << message;
  const pid_t pid = std::stoi(message.substr(at + 4));
  EXPECT_TRUE(process_gone(pid));
}

TEST(MemcachedServerTest, ServerDiesWithTheProcessThatStartedIt) {
  // This process adopts orphaned descendants, so it can reap the server and
  // read how it ended.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t owner = ::fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    ::close(fds[0]);
    pid_t server_pid = -1;
    try {
      MemcachedServer server;
      server_pid = server.pid();
      if (::write(fds[1], &server_pid, sizeof server_pid) < 0) {
        ::_exit(2);
      }
      for (;;) {
        ::pause();  // until the test kills this process
      }
    } catch (...) {
      if (::write(fds[1], &server_pid, sizeof server_pid) < 0) {
        ::_exit(2);
      }
      ::_exit(1);
    }
  }
  ::close(fds[1]);
  pid_t server_pid = -1;
  const ssize_t got = ::read(fds[0], &server_pid, sizeof server_pid);
  ::close(fds[0]);
  ::kill(owner, SIGKILL);
  int status = 0;
  ::waitpid(owner, &status, 0);
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof server_pid));
  ASSERT_GT(server_pid, 0) << "the child could not start a server";
  int server_status = 0;
  const bool reaped =
      wait_until([&] { return ::waitpid(server_pid, &server_status, WNOHANG) == server_pid; },
                 milliseconds{10'000});
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  if (!reaped) {
    ::kill(server_pid, SIGKILL);
    ::waitpid(server_pid, &server_status, 0);
    FAIL() << "memcached " << server_pid << " outlived the process that started it";
  }
  EXPECT_TRUE(WIFSIGNALED(server_status));
  EXPECT_EQ(WTERMSIG(server_status), SIGKILL);
}

}  // namespace
}  // namespace memcached_server_test
