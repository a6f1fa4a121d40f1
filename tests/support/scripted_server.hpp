// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_SCRIPTED_SERVER_HPP_
#define MEMSHARD_TESTS_SUPPORT_SCRIPTED_SERVER_HPP_

// support/scripted_server.hpp: ScriptedServer, a listener on 127.0.0.1 that
// answers each request line with what a test's script says, for replies no
// real memcached sends on demand (a value followed by an error line). It
// stands in for no server's behaviour beyond those lines; everything else in
// the suites runs against real memcached.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "support/memcached_server.hpp"

namespace memshard::testing {

/// ScriptedServer: accepts any number of connections and answers every
/// complete request line ("...\r\n") with `script(line, connection)`, where
/// `connection` counts accepted connections from 0. One thread serves all
/// connections, polling in 20 ms steps; the destructor stops it and closes
/// everything. Counts connections accepted and closed by the peer.
class ScriptedServer {
 public:
  using Script = std::function<std::string(std::string_view line, std::size_t connection)>;

  explicit ScriptedServer(Script script)
      : script_(std::move(script)), listener_(detail::listen_loopback(port_)) {
    thread_ = std::thread([this] { serve(); });
  }
  ScriptedServer(const ScriptedServer&) = delete;
  auto operator=(const ScriptedServer&) -> ScriptedServer& = delete;
  ScriptedServer(ScriptedServer&&) = delete;
  auto operator=(ScriptedServer&&) -> ScriptedServer& = delete;
  ~ScriptedServer() {
    stop_ = true;
    thread_.join();
  }

  [[nodiscard]] auto port() const noexcept -> std::uint16_t { return port_; }
  [[nodiscard]] auto spec() const -> std::string { return "127.0.0.1:" + std::to_string(port_); }
  /// accepted: connections accepted so far.
  [[nodiscard]] auto accepted() const noexcept -> std::size_t { return accepted_.load(); }
  /// closed: connections the client closed so far.
  [[nodiscard]] auto closed() const noexcept -> std::size_t { return closed_.load(); }

 private:
  struct Connection {
    detail::FileDescriptor fd;
    std::size_t index = 0;
    std::string pending;
  };

  void serve() {
    std::vector<Connection> connections;
    while (!stop_) {
      std::vector<pollfd> fds;
      fds.push_back(pollfd{listener_.get(), POLLIN, 0});
      for (const Connection& connection : connections) {
        fds.push_back(pollfd{connection.fd.get(), POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 20) <= 0) {
        continue;
      }
      for (std::size_t c = connections.size(); c-- > 0;) {
        if ((fds[c + 1].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
          continue;
        }
        char buffer[4096];
        const ssize_t got = ::read(connections[c].fd.get(), buffer, sizeof buffer);
        if (got <= 0) {
          connections.erase(connections.begin() + static_cast<std::ptrdiff_t>(c));
          ++closed_;
          continue;
        }
        connections[c].pending.append(buffer, static_cast<std::size_t>(got));
        for (std::size_t end; (end = connections[c].pending.find("\r\n")) != std::string::npos;) {
          const std::string line = connections[c].pending.substr(0, end);
          connections[c].pending.erase(0, end + 2);
          const std::string reply = script_(line, connections[c].index);
          for (std::size_t sent = 0; sent < reply.size();) {
            const ssize_t wrote = ::send(connections[c].fd.get(), reply.data() + sent,
                                         reply.size() - sent, MSG_NOSIGNAL);
            if (wrote <= 0) {
              break;
            }
            sent += static_cast<std::size_t>(wrote);
          }
        }
      }
      // New connections last: fds holds only the connections polled above.
      if ((fds[0].revents & POLLIN) != 0) {
        detail::FileDescriptor accepted(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (accepted.valid()) {
          connections.push_back(Connection{std::move(accepted), accepted_.fetch_add(1), {}});
        }
      }
    }
  }

  Script script_;
  std::uint16_t port_ = 0;  // set by the listener's initializer, so declared before it
  detail::FileDescriptor listener_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> accepted_{0};
  std::atomic<std::size_t> closed_{0};
  std::thread thread_;
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_SCRIPTED_SERVER_HPP_
