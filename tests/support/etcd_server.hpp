// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_ETCD_SERVER_HPP_
#define MEMSHARD_TESTS_SUPPORT_ETCD_SERVER_HPP_

// support/etcd_server.hpp: EtcdServer, a real etcd (Debian etcd-server) that a test starts for
// itself: one member on free loopback ports, with a data directory of its own that goes with
// the object. It is started with a short election timeout (200 ms), so that it is ready in a
// fraction of a second and its shortest lease is 1 s. stop() stops it for good (no restart
// on the same ports: another process may take a port meanwhile; a test that needs a broken
// connection puts a FaultProxy in front instead); pause() and resume() stop and continue the
// process (a hung etcd); kill() crashes it. EtcdCluster starts several members as one cluster
// (its leader killed, the whole cluster paused).

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/memcached_server.hpp"

namespace memshard::testing {

/// EtcdServer: see the file comment.
///
/// **Example**:
///   memshard::testing::EtcdServer etcd;
///   memshard::EtcdClient client(etcd.url());   // "etcd://127.0.0.1:<port>"
class EtcdServer {
 public:
  /// kStartTimeout: how long one start may take before it counts as failed.
  static constexpr std::chrono::milliseconds kStartTimeout{20'000};
  /// kStopTimeout: how long stop() waits after SIGTERM before SIGKILL.
  static constexpr std::chrono::milliseconds kStopTimeout{5'000};
  /// kStartAttempts: fresh ports tried when etcd exits during start-up (another process took a
  /// port between the probe and etcd's bind).
  static constexpr int kStartAttempts = 5;

  EtcdServer() : EtcdServer(std::vector<std::string>{}) {}

  /// EtcdServer: also answering clients on `extra_hosts` (other addresses of this host, such as
  /// 127.0.0.2), on the same port: a test can then cut some clients off by address.
  explicit EtcdServer(std::vector<std::string> extra_hosts)
      : EtcdServer(Deferred{}, "memshard-test") {
    extra_hosts_ = std::move(extra_hosts);
    std::string last_failure;
    for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
      client_port_ = detail::free_port();
      peer_port_ = detail::free_port();
      if (peer_port_ == client_port_) {
        continue;
      }
      spawn(name_ + "=" + peer_url());
      std::optional<std::string> failure = wait_until_healthy();
      if (!failure) {
        return;
      }
      last_failure = std::move(*failure);
      forget_data();
    }
    remove_data_dir();
    detail::throw_error("etcd ('" + binary_ + "') did not start after " +
                        std::to_string(kStartAttempts) + " attempts; last: " + last_failure);
  }
  EtcdServer(const EtcdServer&) = delete;
  auto operator=(const EtcdServer&) -> EtcdServer& = delete;
  EtcdServer(EtcdServer&&) = delete;
  auto operator=(EtcdServer&&) -> EtcdServer& = delete;
  ~EtcdServer() {
    stop();
    remove_data_dir();
  }

  /// url: the store URL of this etcd, "etcd://127.0.0.1:<client port>".
  [[nodiscard]] auto url() const -> std::string { return "etcd://" + endpoint(); }
  /// endpoint: "127.0.0.1:<client port>".
  [[nodiscard]] auto endpoint() const -> std::string {
    return "127.0.0.1:" + std::to_string(client_port_);
  }
  [[nodiscard]] auto client_port() const noexcept -> std::uint16_t { return client_port_; }
  [[nodiscard]] auto pid() const noexcept -> pid_t { return child_ ? child_->pid() : -1; }
  [[nodiscard]] auto running() const noexcept -> bool { return child_ && child_->running(); }

  /// stop: stops etcd (SIGTERM, then SIGKILL after kStopTimeout) and reaps it; the data
  /// directory stays. Does nothing when stopped.
  void stop() noexcept {
    if (!child_) {
      return;
    }
    if (paused_) {
      ::kill(child_->pid(), SIGCONT);
      paused_ = false;
    }
    child_->terminate();
    child_->stop(kStopTimeout);
    child_.reset();
  }

  /// kill: SIGKILL (a crash: no goodbye to the cluster's other members), then reaps it.
  void kill() noexcept {
    if (!child_) {
      return;
    }
    child_->kill();
    child_.reset();
    paused_ = false;
  }

  /// pause, resume: SIGSTOP and SIGCONT, an etcd that takes connections and answers nothing.
  /// Each returns once every thread of etcd stopped (or runs again): the signal alone does not
  /// wait for that, and a request could slip in before the stop.
  void pause() {
    if (child_ && !paused_ && ::kill(child_->pid(), SIGSTOP) == 0) {
      paused_ = true;
      wait_until_stopped(true);
    }
  }
  void resume() {
    if (child_ && paused_ && ::kill(child_->pid(), SIGCONT) == 0) {
      paused_ = false;
      wait_until_stopped(false);
    }
  }

  /// log: etcd's output since it was last started (the last 4 KiB).
  [[nodiscard]] auto log() const -> std::string {
    std::string text = log_->contents();
    return text.size() > 4096 ? text.substr(text.size() - 4096) : text;
  }

  /// healthy: whether etcd answers GET /health with "true" within `timeout`.
  [[nodiscard]] auto healthy(std::chrono::milliseconds timeout = std::chrono::milliseconds{
                                 1'000}) const -> bool {
    return get("/health", timeout).find("\"health\":\"true\"") != std::string::npos;
  }

  /// get: etcd's whole reply to GET `path` (headers included), "" when none came in `timeout`.
  [[nodiscard]] auto get(std::string_view path,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds{5'000}) const
      -> std::string {
    const auto deadline = detail::Clock::now() + timeout;
    int error = 0;
    const detail::FileDescriptor fd = detail::connect_loopback(client_port_, deadline, error);
    if (!fd.valid()) {
      return {};
    }
    const std::string request = "GET " + std::string(path) + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      return {};
    }
    std::string reply;
    char buffer[4096];  // NOLINT(modernize-avoid-c-arrays)
    while (detail::wait_for(fd.get(), POLLIN, deadline)) {
      const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
      if (n <= 0) {
        break;
      }
      reply.append(buffer, static_cast<std::size_t>(n));
    }
    return reply;
  }

  /// metric: the value of the unlabelled counter `name` in etcd's /metrics (0 when absent), for
  /// example "etcd_mvcc_range_total", the reads etcd served.
  [[nodiscard]] auto metric(std::string_view name) const -> std::uint64_t {
    const std::string metrics = get("/metrics");
    const std::string line_start = "\n" + std::string(name) + " ";
    const std::size_t at = metrics.find(line_start);
    if (at == std::string::npos) {
      return 0;
    }
    return std::stoull(metrics.substr(at + line_start.size()));
  }

 private:
  friend class EtcdCluster;
  struct Deferred {};

  // A member named `name` that is not started yet (see spawn).
  EtcdServer(Deferred /*unused*/, std::string name)
      : binary_(choose_binary()),
        data_dir_(make_data_dir()),
        log_(open_log()),
        name_(std::move(name)) {}

  [[nodiscard]] auto peer_url() const -> std::string {
    return "http://127.0.0.1:" + std::to_string(peer_port_);
  }

  // After a start that failed: a fresh data directory for the next attempt.
  void forget_data() noexcept {
    std::error_code ignored;
    std::filesystem::remove_all(data_dir_ / "member", ignored);
  }

  // Polls /proc until every thread of etcd is stopped (T), or none is, for at most 5 s.
  void wait_until_stopped(bool stopped) const {
    const auto deadline = detail::Clock::now() + std::chrono::seconds{5};
    const std::filesystem::path tasks =
        std::filesystem::path("/proc") / std::to_string(child_->pid()) / "task";
    while (detail::Clock::now() < deadline) {
      bool all = true;
      std::error_code error;
      for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
        std::ifstream stat(task.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const std::size_t close = line.rfind(')');  // the state follows the command's name
        const char state =
            close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
        const bool is_stopped = state == 'T' || state == 't';
        all = all && is_stopped == stopped;
      }
      if (all && !error) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{1});
    }
    detail::throw_error(std::string("etcd did not ") + (stopped ? "stop" : "continue") +
                        " within 5 s of the signal");
  }

  [[nodiscard]] static auto choose_binary() -> std::string {
    if (const char* env = std::getenv("MEMSHARD_ETCD"); env != nullptr && *env != '\0') {
      return env;
    }
#ifdef MEMSHARD_ETCD_BINARY
    if (std::string_view(MEMSHARD_ETCD_BINARY).size() > 0) {
      return MEMSHARD_ETCD_BINARY;
    }
#endif
    return "etcd";
  }

  // In memory (/dev/shm) where there is one: etcd syncs its log on every write, and a disk busy
  // with builds beside the tests can hold a sync for seconds, far past the tests' deadlines.
  [[nodiscard]] static auto make_data_dir() -> std::filesystem::path {
    std::error_code error;
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm", error) && ::access("/dev/shm", W_OK | X_OK) == 0
            ? std::filesystem::path("/dev/shm")
            : std::filesystem::temp_directory_path();
    std::string pattern = base / "memshard-etcd-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      detail::throw_error("cannot create a data directory for etcd: " + detail::errno_text(errno));
    }
    return pattern;
  }

  void remove_data_dir() noexcept {
    std::error_code ignored;
    std::filesystem::remove_all(data_dir_, ignored);
  }

  [[nodiscard]] static auto open_log() -> std::unique_ptr<Fd> {
    std::string path = std::filesystem::temp_directory_path() / "memshard-etcd-log-XXXXXX";
    auto log = std::make_unique<Fd>(::mkostemp(path.data(), O_CLOEXEC));
    ::unlink(path.c_str());
    return log;
  }

  // Starts etcd on the chosen ports as a member of `initial_cluster` ("name=peer-url,..."),
  // without waiting for it.
  void spawn(const std::string& initial_cluster) {
    const std::string path = detail::find_in_path(binary_);
    if (path.empty()) {
      detail::throw_error("etcd binary '" + binary_ +
                          "' not found in PATH (install etcd-server, or set MEMSHARD_ETCD)");
    }
    const std::string client = "http://127.0.0.1:" + std::to_string(client_port_);
    std::string listen = client;
    for (const std::string& host : extra_hosts_) {
      listen += ",http://" + host + ":" + std::to_string(client_port_);
    }
    std::vector<std::string> args = {"--name",
                                     name_,
                                     "--data-dir",
                                     data_dir_.string(),
                                     "--listen-client-urls",
                                     listen,
                                     "--advertise-client-urls",
                                     client,
                                     "--listen-peer-urls",
                                     peer_url(),
                                     "--initial-advertise-peer-urls",
                                     peer_url(),
                                     "--initial-cluster",
                                     initial_cluster,
                                     "--heartbeat-interval",
                                     "20",
                                     "--election-timeout",
                                     "200",
                                     "--logger",
                                     "zap",
                                     "--log-level",
                                     "warn"};
    if (::ftruncate(log_->get(), 0) != 0) {
      detail::throw_error("cannot truncate the etcd log: " + detail::errno_text(errno));
    }
    child_ = std::make_unique<ChildProcess>(path, std::move(args), -1, log_->get(), log_->get());
  }

  // Waits until the spawned etcd reports itself healthy (a member of a cluster: once the
  // cluster has a leader). Returns nothing on success, or why it failed in a way new ports may
  // fix (it exited: a port taken meanwhile); throws when it stays unhealthy.
  auto wait_until_healthy() -> std::optional<std::string> {
    const auto deadline = detail::Clock::now() + kStartTimeout;
    auto pause = std::chrono::milliseconds{5};
    while (detail::Clock::now() < deadline) {
      if (child_->wait_for(std::chrono::milliseconds{0})) {
        child_.reset();
        return "etcd exited during start-up; its output: " + log();
      }
      if (healthy(std::chrono::milliseconds{500})) {
        return std::nullopt;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds{100});
    }
    stop();
    detail::throw_error("etcd did not become healthy on " + endpoint() + " within " +
                        std::to_string(kStartTimeout.count()) + " ms; its output: " + log());
  }

  std::string binary_;
  std::filesystem::path data_dir_;
  std::unique_ptr<Fd> log_;
  std::string name_;
  std::vector<std::string> extra_hosts_;  // where it also answers clients
  std::uint16_t client_port_ = 0;
  std::uint16_t peer_port_ = 0;
  std::unique_ptr<ChildProcess> child_;
  bool paused_ = false;
};

/// EtcdCluster: `size` etcd members on free loopback ports forming one cluster (each an
/// EtcdServer with its own data directory), for the tests of faults a single etcd cannot show:
/// its leader killed, a minority lost. url() names every member, as a member process's store URL
/// would.
class EtcdCluster {
 public:
  explicit EtcdCluster(std::size_t size = 3) {
    std::string last_failure;
    for (int attempt = 1; attempt <= EtcdServer::kStartAttempts; ++attempt) {
      members_.clear();
      std::vector<std::uint16_t> ports;
      std::string initial;
      for (std::size_t i = 0; i < size; ++i) {
        auto member = std::unique_ptr<EtcdServer>(
            new EtcdServer(EtcdServer::Deferred{}, "memshard-test-" + std::to_string(i)));
        member->client_port_ = detail::free_port();
        member->peer_port_ = detail::free_port();
        ports.push_back(member->client_port_);
        ports.push_back(member->peer_port_);
        initial += (initial.empty() ? "" : ",") + member->name_ + "=" + member->peer_url();
        members_.push_back(std::move(member));
      }
      std::sort(ports.begin(), ports.end());
      if (std::adjacent_find(ports.begin(), ports.end()) != ports.end()) {
        continue;
      }
      for (auto& member : members_) {
        member->spawn(initial);
      }
      std::optional<std::string> failure;
      for (auto& member : members_) {
        if (!failure) {
          failure = member->wait_until_healthy();
        }
      }
      if (!failure) {
        return;
      }
      last_failure = std::move(*failure);
    }
    members_.clear();
    detail::throw_error("an etcd cluster of " + std::to_string(size) + " did not start after " +
                        std::to_string(EtcdServer::kStartAttempts) +
                        " attempts; last: " + last_failure);
  }

  [[nodiscard]] auto size() const noexcept -> std::size_t { return members_.size(); }
  [[nodiscard]] auto member(std::size_t i) -> EtcdServer& { return *members_.at(i); }

  /// url: "etcd://127.0.0.1:<port>,127.0.0.1:<port>,..." (every member, in order).
  [[nodiscard]] auto url() const -> std::string {
    std::string out = "etcd://";
    for (std::size_t i = 0; i < members_.size(); ++i) {
      out += (i == 0 ? "" : ",") + members_[i]->endpoint();
    }
    return out;
  }

  /// leader: the member that says it leads (etcd_server_is_leader in its /metrics), polled until
  /// one does or `timeout` passes.
  [[nodiscard]] auto leader(std::chrono::milliseconds timeout = std::chrono::milliseconds{5'000})
      -> std::optional<std::size_t> {
    const auto deadline = detail::Clock::now() + timeout;
    do {
      for (std::size_t i = 0; i < members_.size(); ++i) {
        if (members_[i]->running() && members_[i]->metric("etcd_server_is_leader") == 1) {
          return i;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    } while (detail::Clock::now() < deadline);
    return std::nullopt;
  }

  /// pause, resume: every member (an etcd that is stopped as a whole).
  void pause() {
    for (auto& member : members_) {
      member->pause();
    }
  }
  void resume() {
    for (auto& member : members_) {
      member->resume();
    }
  }

 private:
  std::vector<std::unique_ptr<EtcdServer>> members_;
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_ETCD_SERVER_HPP_
