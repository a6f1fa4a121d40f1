// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_CHILD_PROCESS_HPP_
#define MEMSHARD_TESTS_SUPPORT_CHILD_PROCESS_HPP_

// support/child_process.hpp: runs a program of the project (an example, the
// command-line tool) as a child process with given input, and collects its exit
// status and output, killing it if it does not finish in time.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

extern char** environ;  // NOLINT: the POSIX environment, passed on to the child

namespace memshard::testing {
namespace child_process_detail {
using Clock = std::chrono::steady_clock;
}  // namespace child_process_detail

/// kRunTimeout: how long one run may take before it counts as hung.
inline constexpr std::chrono::milliseconds kRunTimeout{120'000};

[[noreturn]] inline void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::generic_category().message(errno));
}

/// Fd: owns one file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {
    if (fd_ < 0) {
      fail("cannot open a descriptor");
    }
  }
  Fd(const Fd&) = delete;
  auto operator=(const Fd&) -> Fd& = delete;
  Fd(Fd&&) = delete;
  auto operator=(Fd&&) -> Fd& = delete;
  ~Fd() { ::close(fd_); }

  [[nodiscard]] auto get() const noexcept -> int { return fd_; }

  /// contents: everything written to the file.
  [[nodiscard]] auto contents() const -> std::string {
    struct stat info {};
    if (::fstat(fd_, &info) != 0) {
      fail("fstat");
    }
    std::string text(static_cast<std::size_t>(info.st_size), '\0');
    const ssize_t n = ::pread(fd_, text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return text;
  }

 private:
  int fd_;
};

/// RunResult: what one run of a program did.
struct RunResult {
  int status = -1;  ///< exit status, or 128 + the signal that ended it
  std::string out;
  std::string err;
};

inline auto operator<<(std::ostream& os, const RunResult& run) -> std::ostream& {
  return os << "exit status " << run.status << "\n--- stdout:\n"
            << run.out << "--- stderr:\n"
            << run.err;
}

/// run_program: runs `program` with `args` and `input` on its standard input,
/// waits at most `timeout` (then kills it and throws), and returns its exit
/// status and output.
inline auto run_program(const std::string& program, std::vector<std::string> args,
                        std::string_view input = {},
                        std::chrono::milliseconds timeout = kRunTimeout) -> RunResult {
  const Fd in(::memfd_create("stdin", MFD_CLOEXEC));
  for (std::size_t done = 0; done < input.size();) {
    const ssize_t n = ::write(in.get(), input.data() + done, input.size() - done);
    if (n < 0) {
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::lseek(in.get(), 0, SEEK_SET) != 0) {
    fail("lseek");
  }
  const Fd out(::memfd_create("stdout", MFD_CLOEXEC));
  const Fd err(::memfd_create("stderr", MFD_CLOEXEC));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.get(), STDERR_FILENO);
  std::vector<char*> argv = {const_cast<char*>(program.c_str())};
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    errno = spawned;
    fail("cannot start " + program);
  }
  // A pidfd turns readable when the child exits: poll() waits for that or the deadline. (The
  // system call directly: glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++.) The child stays
  // a zombie until waitpid, so the pidfd refers to it even if it has already exited.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0U));
  if (pidfd < 0) {
    const int error = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    errno = error;
    fail("pidfd_open");
  }
  const Fd exited(pidfd);
  const auto deadline = child_process_detail::Clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - child_process_detail::Clock::now());
    pollfd entry{exited.get(), POLLIN, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready > 0) {
      break;
    }
    if (ready == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      throw std::runtime_error(program + " did not finish within " +
                               std::to_string(timeout.count()) + " ms; its output so far:\n" +
                               out.contents() + err.contents());
    }
    if (errno != EINTR) {
      fail("poll");
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      fail("waitpid");
    }
  }
  RunResult result;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = out.contents();
  result.err = err.contents();
  return result;
}

inline auto lines_of(std::string_view text) -> std::vector<std::string> {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    lines.emplace_back(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
  }
  return lines;
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_CHILD_PROCESS_HPP_
