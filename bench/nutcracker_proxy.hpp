// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_NUTCRACKER_PROXY_HPP_
#define MEMSHARD_BENCH_NUTCRACKER_PROXY_HPP_

// nutcracker_proxy.hpp: NutcrackerProxy, a twemproxy (nutcracker) child
// process on 127.0.0.1 in front of a list of memcached servers, owned by a
// benchmark.
//
// The proxy runs in the foreground with one memcached pool (md5 keys, ketama
// distribution, hosts never ejected) written to a private temporary directory
// with its log. It listens on a port the kernel picked (its stats on another),
// is ready when the constructor returns (a get through it reached a server and
// came back), and is killed and reaped when the object is destroyed. If the
// owning process dies first, the kernel kills the proxy (parent-death
// signal). Linux only.
//
// The binary is $MEMSHARD_NUTCRACKER, else "nutcracker" from PATH, else
// /usr/sbin/nutcracker. find_nutcracker() answers "" when there is none, so a
// caller can do without the proxy.

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "memshard/server.hpp"
#include "support/memcached_server.hpp"

namespace memshard::bench {

/// find_nutcracker: the nutcracker executable to run, or "" when none is found.
[[nodiscard]] inline auto find_nutcracker() -> std::string {
  if (const char* given = std::getenv("MEMSHARD_NUTCRACKER"); given != nullptr && *given != '\0') {
    std::string path = testing::detail::find_in_path(given);
    return !path.empty() && ::access(path.c_str(), X_OK) == 0 ? path : std::string();
  }
  if (std::string found = testing::detail::find_in_path("nutcracker"); !found.empty()) {
    return found;
  }
  if (::access("/usr/sbin/nutcracker", X_OK) == 0) {
    return "/usr/sbin/nutcracker";
  }
  return {};
}

/// NutcrackerProxy: one nutcracker process proxying to `servers`. Move-less.
/// The constructor throws std::runtime_error (naming the cause, with the
/// proxy's log) and leaves no process when the proxy does not start or does
/// not answer within `start_timeout`.
class NutcrackerProxy {
 public:
  NutcrackerProxy(std::string binary, std::span<const Server> servers,
                  std::chrono::milliseconds start_timeout = std::chrono::milliseconds{10'000})
      : binary_(std::move(binary)), start_timeout_(start_timeout) {
    if (servers.empty()) {
      throw std::invalid_argument("nutcracker: no servers to proxy to");
    }
    make_directory();
    try {
      std::string last;
      // A port the kernel reported free may be taken before the proxy binds it.
      for (int attempt = 0; attempt < 5; ++attempt) {
        port_ = testing::detail::free_port();
        stats_port_ = testing::detail::free_port();
        if (stats_port_ == port_) {
          continue;
        }
        write_config(servers);
        const std::string why = launch();
        if (why.empty()) {
          return;
        }
        last = why;
      }
      throw std::runtime_error("nutcracker did not start: " + last);
    } catch (...) {
      stop();
      remove_directory();
      throw;
    }
  }

  NutcrackerProxy(const NutcrackerProxy&) = delete;
  auto operator=(const NutcrackerProxy&) -> NutcrackerProxy& = delete;
  NutcrackerProxy(NutcrackerProxy&&) = delete;
  auto operator=(NutcrackerProxy&&) -> NutcrackerProxy& = delete;

  ~NutcrackerProxy() {
    stop();
    remove_directory();
  }

  [[nodiscard]] auto port() const noexcept -> std::uint16_t { return port_; }
  [[nodiscard]] auto stats_port() const noexcept -> std::uint16_t { return stats_port_; }
  [[nodiscard]] auto endpoint() const -> std::string {
    return "127.0.0.1:" + std::to_string(port_);
  }
  [[nodiscard]] auto pid() const noexcept -> pid_t { return pid_; }

  /// version: what `nutcracker -V` printed at start ("nutcracker-0.5.0"), or "".
  [[nodiscard]] auto version() const -> const std::string& { return version_; }

  /// log: the proxy's log so far (its last 2000 bytes).
  [[nodiscard]] auto log() const -> std::string {
    std::ifstream in(log_path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  /// stop: kills the proxy (SIGTERM, SIGKILL if it lingers) and reaps it. Never throws.
  void stop() noexcept {
    if (pid_ <= 0) {
      return;
    }
    ::kill(pid_, SIGTERM);
    if (!reap_within(std::chrono::milliseconds{2000})) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
  }

 private:
  [[nodiscard]] auto config_path() const -> std::string { return directory_ + "/memshard.yml"; }
  [[nodiscard]] auto log_path() const -> std::string { return directory_ + "/nutcracker.log"; }

  void make_directory() {
    std::string path = std::filesystem::temp_directory_path() / "memshard-nutcracker-XXXXXX";
    if (::mkdtemp(path.data()) == nullptr) {
      throw std::runtime_error("nutcracker: cannot create a directory in " + path + ": " +
                               std::generic_category().message(errno));
    }
    directory_ = path;
  }

  void remove_directory() noexcept {
    if (!directory_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(directory_, ignored);
      directory_.clear();
    }
  }

  // One pool, "memshard", holding every server with its weight (whole, >= 1).
  void write_config(std::span<const Server> servers) const {
    std::ofstream out(config_path(), std::ios::trunc);
    out << "memshard:\n"
        << "  listen: 127.0.0.1:" << port_ << "\n"
        << "  hash: md5\n"
        << "  distribution: ketama\n"
        << "  timeout: 1000\n"
        << "  server_retry_timeout: 2000\n"
        << "  auto_eject_hosts: false\n"
        << "  servers:\n";
    for (const Server& server : servers) {
      const long weight = std::max(1L, std::lround(server.weight));
      out << "   - " << server.host << ':' << server.port << ':' << weight << "\n";
    }
    out.close();
    if (!out) {
      throw std::runtime_error("nutcracker: cannot write " + config_path());
    }
  }

  // Starts the proxy and waits until it answers; "" on success, else why this
  // attempt failed (the process exited: perhaps a port was taken).
  auto launch() -> std::string {
    if (version_.empty()) {
      version_ = read_version();
    }
    std::vector<std::string> args = {
        binary_, "-c",       config_path(), "-o", log_path(), "-s", std::to_string(stats_port_),
        "-a",    "127.0.0.1"};
    std::vector<char*> argv;
    for (std::string& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t child = ::fork();
    if (child < 0) {
      throw std::runtime_error("nutcracker: fork() failed: " +
                               std::generic_category().message(errno));
    }
    if (child == 0) {
      exec_child(argv.data(), parent);
    }
    pid_ = child;
    return wait_until_ready();
  }

  // In the child, between fork and exec: async-signal-safe calls only.
  [[noreturn]] static void exec_child(char* const* argv, pid_t parent) noexcept {
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
    sigset_t all{};
    ::sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127);
    }
    ::execv(argv[0], argv);
    ::_exit(127);
  }

  // `nutcracker -V`, run once: proves the binary runs and names its version.
  [[nodiscard]] auto read_version() const -> std::string {
    const std::string out_path = directory_ + "/version.txt";
    std::vector<std::string> args = {binary_, "-V"};
    std::vector<char*> argv;
    for (std::string& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    const pid_t child = ::fork();
    if (child < 0) {
      throw std::runtime_error("nutcracker: fork() failed");
    }
    if (child == 0) {
      const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      throw std::runtime_error("nutcracker: '" + binary_ + " -V' failed (status " +
                               std::to_string(status) + ")");
    }
    std::ifstream in(out_path);
    std::string line;
    std::getline(in, line);
    const std::size_t at = line.find("nutcracker-");
    return at == std::string::npos ? line : line.substr(at);
  }

  // Polls, with a growing pause, until a get through the proxy comes back
  // with a miss or a hit from a server, or the start timeout passes.
  auto wait_until_ready() -> std::string {
    const auto deadline = testing::detail::Clock::now() + start_timeout_;
    auto pause = std::chrono::microseconds{500};
    std::string last = "no attempt yet";
    for (;;) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return "nutcracker (" + config_path() + ", port " + std::to_string(port_) +
               ") exited with status " + std::to_string(status) + "; its log: " + log();
      }
      const auto now = testing::detail::Clock::now();
      if (now >= deadline) {
        break;
      }
      try {
        const std::string reply = testing::detail::exchange(
            port_, "get memshard-client:proxy-probe\r\n",
            std::min(deadline, now + std::chrono::milliseconds{1000}), "nutcracker " + endpoint());
        if (reply == "END\r\n" || reply.starts_with("VALUE ")) {
          return {};
        }
        last = "answered '" + reply.substr(0, 200) + "'";
      } catch (const std::runtime_error& error) {
        last = error.what();
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds{50'000});
    }
    const pid_t stuck = pid_;
    stop();
    throw std::runtime_error("nutcracker (pid " + std::to_string(stuck) + ") did not answer on " +
                             endpoint() + " within " + std::to_string(start_timeout_.count()) +
                             " ms; last: " + last + "; its log: " + log());
  }

  auto reap_within(std::chrono::milliseconds timeout) noexcept -> bool {
    const auto deadline = testing::detail::Clock::now() + timeout;
    auto pause = std::chrono::microseconds{200};
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_ || (done < 0 && errno == ECHILD)) {
        return true;
      }
      if (testing::detail::Clock::now() >= deadline) {
        return false;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds{20'000});
    }
  }

  std::string binary_;
  std::chrono::milliseconds start_timeout_;
  std::string directory_;
  std::string version_;
  std::uint16_t port_ = 0;
  std::uint16_t stats_port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace memshard::bench

#endif  // MEMSHARD_BENCH_NUTCRACKER_PROXY_HPP_
