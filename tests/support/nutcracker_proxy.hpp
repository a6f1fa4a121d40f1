// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_NUTCRACKER_PROXY_HPP_
#define MEMSHARD_TESTS_SUPPORT_NUTCRACKER_PROXY_HPP_

// support/nutcracker_proxy.hpp: NutcrackerProxy, a twemproxy (nutcracker)
// child process on 127.0.0.1 in front of a list of memcached servers.
//
// The proxy runs in the foreground with one memcached pool (md5 keys, ketama
// distribution, hosts never ejected) written to a private temporary directory
// with its log. It listens on a port the kernel picked (its stats on another),
// is ready when the constructor returns (a get through it reached a server and
// came back), and is stopped and reaped when the object is destroyed. It is a
// ChildProcess (support/child_process.hpp): if the owning process dies first,
// the kernel kills the proxy. Linux only.
//
// The binary is $MEMSHARD_NUTCRACKER, else "nutcracker" from PATH, else
// /usr/sbin/nutcracker. find_nutcracker() answers "" when there is none, so a
// caller can do without the proxy.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/placement/server.hpp"
#include "support/child_process.hpp"
#include "support/memcached_server.hpp"

namespace memshard::testing {

/// find_nutcracker: the nutcracker executable to run, or "" when none is found.
[[nodiscard]] inline auto find_nutcracker() -> std::string {
  if (const char* given = std::getenv("MEMSHARD_NUTCRACKER"); given != nullptr && *given != '\0') {
    std::string path = detail::find_in_path(given);
    return !path.empty() && ::access(path.c_str(), X_OK) == 0 ? path : std::string();
  }
  if (std::string found = detail::find_in_path("nutcracker"); !found.empty()) {
    return found;
  }
  if (::access("/usr/sbin/nutcracker", X_OK) == 0) {
    return "/usr/sbin/nutcracker";
  }
  return {};
}

/// NutcrackerProxy: one nutcracker process proxying to `servers`. Neither
/// copied nor moved. The constructor throws std::runtime_error (naming the
/// cause, with the proxy's log) and leaves no process when the proxy does not
/// start or does not answer within `start_timeout`.
class NutcrackerProxy {
 public:
  /// kStopTimeout: how long stop() waits after SIGTERM before SIGKILL.
  static constexpr std::chrono::milliseconds kStopTimeout{2'000};

  /// NutcrackerProxy: starts `binary` in front of `servers` (not empty).
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
        port_ = detail::free_port();
        stats_port_ = detail::free_port();
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

  /// port: the port the proxy listens on, on 127.0.0.1.
  [[nodiscard]] auto port() const noexcept -> std::uint16_t { return port_; }
  /// stats_port: the port of its stats.
  [[nodiscard]] auto stats_port() const noexcept -> std::uint16_t { return stats_port_; }
  /// endpoint: "127.0.0.1:<port>".
  [[nodiscard]] auto endpoint() const -> std::string {
    return "127.0.0.1:" + std::to_string(port_);
  }
  /// pid: the proxy's process id, or -1 once it is stopped.
  [[nodiscard]] auto pid() const noexcept -> pid_t { return child_ ? child_->pid() : -1; }

  /// version: what `nutcracker -V` printed at start ("nutcracker-0.5.0"), or "".
  [[nodiscard]] auto version() const -> const std::string& { return version_; }

  /// log: the proxy's log so far (its last 2000 bytes).
  [[nodiscard]] auto log() const -> std::string {
    std::ifstream in(log_path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  /// stop: stops the proxy (SIGTERM, SIGKILL if it lingers) and reaps it. Never throws.
  void stop() noexcept {
    if (child_) {
      child_->stop(kStopTimeout);
      child_.reset();
    }
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
    child_.emplace(binary_,
                   std::vector<std::string>{"-c", config_path(), "-o", log_path(), "-s",
                                            std::to_string(stats_port_), "-a", "127.0.0.1"});
    return wait_until_ready();
  }

  // `nutcracker -V`, run once: proves the binary runs and names its version.
  [[nodiscard]] auto read_version() const -> std::string {
    const RunResult run = run_program(binary_, {"-V"}, {}, start_timeout_);
    if (run.status != 0) {
      throw std::runtime_error("nutcracker: '" + binary_ + " -V' failed (exit status " +
                               std::to_string(run.status) + ")");
    }
    const std::vector<std::string> lines = lines_of(run.out + run.err);
    const std::string line = lines.empty() ? std::string() : lines.front();
    const std::size_t at = line.find("nutcracker-");
    return at == std::string::npos ? line : line.substr(at);
  }

  // Polls, with a growing pause spent waiting for the proxy to exit, until a
  // get through the proxy comes back with a miss or a hit from a server, or
  // the start timeout passes.
  auto wait_until_ready() -> std::string {
    const auto deadline = detail::Clock::now() + start_timeout_;
    auto pause = std::chrono::milliseconds{1};
    std::string last = "no attempt yet";
    for (;;) {
      const auto now = detail::Clock::now();
      if (now >= deadline) {
        break;
      }
      try {
        const std::string reply = detail::exchange(
            port_, "get memshard-client:proxy-probe\r\n",
            std::min(deadline, now + std::chrono::milliseconds{1000}), "nutcracker " + endpoint());
        if (reply == "END\r\n" || reply.starts_with("VALUE ")) {
          return {};
        }
        last = "answered '" + reply.substr(0, 200) + "'";
      } catch (const std::runtime_error& error) {
        last = error.what();
      }
      if (const std::optional<int> code = child_->wait_for(pause)) {
        child_.reset();
        return "nutcracker (" + config_path() + ", port " + std::to_string(port_) +
               ") exited with status " + std::to_string(*code) + "; its log: " + log();
      }
      pause = std::min(pause * 2, std::chrono::milliseconds{50});
    }
    const pid_t stuck = pid();
    stop();
    throw std::runtime_error("nutcracker (pid " + std::to_string(stuck) + ") did not answer on " +
                             endpoint() + " within " + std::to_string(start_timeout_.count()) +
                             " ms; last: " + last + "; its log: " + log());
  }

  std::string binary_;
  std::chrono::milliseconds start_timeout_;
  std::string directory_;
  std::string version_;
  std::uint16_t port_ = 0;
  std::uint16_t stats_port_ = 0;
  std::optional<ChildProcess> child_;
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_NUTCRACKER_PROXY_HPP_
