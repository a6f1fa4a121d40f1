// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_CHILD_PROCESS_HPP_
#define MEMSHARD_TESTS_SUPPORT_CHILD_PROCESS_HPP_

// support/child_process.hpp: child processes for tests and benchmarks:
// ChildProcess starts a program in the background, watches it and kills it
// with the owning object (or when the owning process dies); run_program runs a
// program of the project (an example, the command-line tool) with given input,
// and collects its exit status and output, killing it if it does not finish in
// time.

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

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

/// exit_code: what a waitpid() status says: the exit status, or 128 + the
/// signal that ended the process.
[[nodiscard]] inline auto exit_code(int status) noexcept -> int {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// UserIds: the user and group a child switches to before exec.
struct UserIds {
  uid_t uid;  ///< the user
  gid_t gid;  ///< its group
};

/// ChildProcess: one program started as a child process, watched through a
/// pidfd (readable once it exits; where there is none, by polling waitpid),
/// and killed and reaped when the object is destroyed. If this process dies first, the kernel kills
/// the child (parent-death signal). Neither copied nor moved. Linux only.
class ChildProcess {
 public:
  /// ChildProcess: starts `program` (a path) with `args`; its standard input,
  /// output and error are the descriptors `in`, `out` and `err` (-1:
  /// /dev/null), no other descriptor stays open in it, and no signal is
  /// blocked. With `run_as` (and privileges), it becomes that user before
  /// exec, best effort. `env` ("NAME=value" entries) is added to the
  /// inherited environment, replacing a variable of the same name. Throws
  /// std::system_error (with exec's errno) when the program cannot be
  /// executed, std::runtime_error for other failures.
  ChildProcess(const std::string& program, std::vector<std::string> args, int in = -1, int out = -1,
               int err = -1, std::optional<UserIds> run_as = std::nullopt,
               std::vector<std::string> env = {}) {
    std::vector<char*> argv = {const_cast<char*>(program.c_str())};
    for (std::string& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    // Built before fork: the child may only make async-signal-safe calls.
    std::vector<char*> envp;
    if (!env.empty()) {
      for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string_view name(*entry, std::string_view(*entry).find('='));
        const bool replaced = std::any_of(env.begin(), env.end(), [name](const std::string& e) {
          return e.size() > name.size() && e.compare(0, name.size(), name) == 0 &&
                 e[name.size()] == '=';
        });
        if (!replaced) {
          envp.push_back(*entry);
        }
      }
      for (std::string& entry : env) {
        envp.push_back(entry.data());
      }
      envp.push_back(nullptr);
    }
    // The pipe closes on a successful exec; otherwise the child sends errno.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) {
      fail("pipe2");
    }
    const Fd report_read(report[0]);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
      ::close(report[1]);
      fail("fork");
    }
    if (pid_ == 0) {
      exec_child(argv.data(), envp.empty() ? nullptr : envp.data(), {in, out, err}, run_as,
                 report[1], parent);
    }
    ::close(report[1]);
    int exec_error = 0;
    ssize_t got = 0;
    do {
      got = ::read(report_read.get(), &exec_error, sizeof exec_error);
    } while (got < 0 && errno == EINTR);
    if (got == static_cast<ssize_t>(sizeof exec_error)) {
      kill();
      throw std::system_error(exec_error, std::generic_category(), "cannot start " + program);
    }
    // The child stays a zombie until waitpid, so the pidfd refers to it even
    // if it has already exited. (The system call directly: glibc 2.36's
    // <sys/pidfd.h> lacks extern "C" for C++.) Without pidfds (valgrind does
    // not know the call), the waits poll waitpid instead.
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0U));
  }

  ChildProcess(const ChildProcess&) = delete;
  auto operator=(const ChildProcess&) -> ChildProcess& = delete;
  ChildProcess(ChildProcess&&) = delete;
  auto operator=(ChildProcess&&) -> ChildProcess& = delete;

  ~ChildProcess() {
    kill();
    if (pidfd_ >= 0) {
      ::close(pidfd_);
    }
  }

  /// pid: the child's process id.
  [[nodiscard]] auto pid() const noexcept -> pid_t { return pid_; }

  /// running: whether the child has not exited (even if it was killed from
  /// outside). Does not reap it.
  [[nodiscard]] auto running() const noexcept -> bool {
    if (status_) {
      return false;
    }
    if (pidfd_ < 0) {
      siginfo_t info{};
      return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
             info.si_pid == 0;
    }
    pollfd entry{pidfd_, POLLIN, 0};
    return ::poll(&entry, 1, 0) == 0;
  }

  /// status: how the child ended, as waitpid() reported it, once reaped.
  [[nodiscard]] auto status() const noexcept -> std::optional<int> { return status_; }

  /// wait_for: waits at most `timeout` (0: only looks) for the child to exit;
  /// its exit_code() once it has (it is then reaped), nullopt while it runs.
  auto wait_for(std::chrono::milliseconds timeout) -> std::optional<int> {
    if (!status_ && !exited_by(child_process_detail::Clock::now() + timeout)) {
      if (errno != 0) {
        fail("poll");
      }
      return std::nullopt;
    }
    return exit_code(*status_);
  }

  /// terminate: asks the child to end (SIGTERM, sent once). Never throws.
  void terminate() noexcept {
    if (!status_ && !terminated_) {
      ::kill(pid_, SIGTERM);
      terminated_ = true;
    }
  }

  /// stop: asks the child to end (terminate()), gives it `grace`, then
  /// kills it (SIGKILL); it is reaped. Never throws.
  void stop(std::chrono::milliseconds grace) noexcept {
    if (!status_) {
      terminate();
      static_cast<void>(exited_by(child_process_detail::Clock::now() + grace));
    }
    kill();
  }

  /// kill: kills the child (SIGKILL) unless it has exited, and reaps it.
  /// Never throws.
  void kill() noexcept {
    if (!status_) {
      ::kill(pid_, SIGKILL);
      reap();
    }
  }

 private:
  // In the child, between fork and exec: async-signal-safe calls only.
  [[noreturn]] static void exec_child(char* const* argv, char* const* envp, std::array<int, 3> fds,
                                      std::optional<UserIds> run_as, int report,
                                      pid_t parent) noexcept {
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int target = 0; target < 3; ++target) {
      const int fd = fds[static_cast<std::size_t>(target)];
      ::dup2(fd >= 0 ? fd : null_fd, target);
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Descriptors the parent opened without O_CLOEXEC (sockets) must not stay
    // open in the child. Best effort: old kernels refuse the call.
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
    sigset_t all{};
    ::sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    // The user first: a later setuid() would clear the parent-death signal.
    if (run_as && ::setgroups(0, nullptr) == 0 && ::setgid(run_as->gid) == 0 &&
        ::setuid(run_as->uid) != 0) {
      // Still the same user: the program itself may drop privileges.
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == parent) {  // else the parent is already gone
      if (envp != nullptr) {
        ::execve(argv[0], argv, envp);
      } else {
        ::execv(argv[0], argv);
      }
    }
    const int error = errno;
    if (::write(report, &error, sizeof error) < 0) {
      ::_exit(126);
    }
    ::_exit(127);
  }

  // Waits on the pidfd until `deadline`; true once the child has exited and
  // is reaped. False with errno 0 at the deadline, with errno set when poll
  // fails.
  auto exited_by(child_process_detail::Clock::time_point deadline) noexcept -> bool {
    if (pidfd_ < 0) {
      return reaped_by(deadline);
    }
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          deadline - child_process_detail::Clock::now());
      pollfd entry{pidfd_, POLLIN, 0};
      const int ready =
          ::poll(&entry, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
      if (ready > 0) {
        reap();
        return true;
      }
      if (ready == 0) {
        errno = 0;
        return false;
      }
      if (errno != EINTR) {
        return false;
      }
    }
  }

  // Without a pidfd: polls waitpid, with a growing pause, until `deadline`.
  auto reaped_by(child_process_detail::Clock::time_point deadline) noexcept -> bool {
    auto pause = std::chrono::microseconds{200};
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_ || (done < 0 && errno != EINTR)) {
        status_ = done == pid_ ? status : SIGKILL;
        return true;
      }
      if (child_process_detail::Clock::now() >= deadline) {
        errno = 0;
        return false;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds{20'000});
    }
  }

  void reap() noexcept {
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    status_ = done == pid_ ? status : SIGKILL;
  }

  pid_t pid_ = -1;
  int pidfd_ = -1;
  std::optional<int> status_;
  bool terminated_ = false;
};

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
  ChildProcess child(program, std::move(args), in.get(), out.get(), err.get());
  const std::optional<int> code = child.wait_for(timeout);
  if (!code) {
    child.kill();
    throw std::runtime_error(program + " did not finish within " + std::to_string(timeout.count()) +
                             " ms; its output so far:\n" + out.contents() + err.contents());
  }
  RunResult result;
  result.status = *code;
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
