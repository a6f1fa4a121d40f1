// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_SERVER_SET_HPP_
#define MEMSHARD_TESTS_SUPPORT_SERVER_SET_HPP_

// support/server_set.hpp: ServerSet, the real memcached servers a test suite
// shares: started together, listed as memshard Servers, and made ready for
// the next test (running, not paused, empty) by reset().

#include <signal.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/server.hpp"
#include "support/memcached_server.hpp"

namespace memshard::testing {

/// ServerSet: `count` MemcachedServers on free ports of 127.0.0.1; the
/// destructor stops them. A suite keeps one from SetUpTestSuite to
/// TearDownTestSuite and calls reset() in SetUp.
class ServerSet {
 public:
  explicit ServerSet(std::size_t count) {
    servers_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      servers_.emplace_back();
    }
  }

  [[nodiscard]] auto size() const noexcept -> std::size_t { return servers_.size(); }
  /// of: the server listening on `server`'s port (one of list()); throws std::out_of_range when
  /// none does.
  [[nodiscard]] auto of(const Server& server) -> MemcachedServer& {
    for (MemcachedServer& candidate : servers_) {
      if (candidate.port() == server.port) {
        return candidate;
      }
    }
    throw std::out_of_range("no test server on " + server.endpoint());
  }
  [[nodiscard]] auto operator[](std::size_t i) -> MemcachedServer& { return servers_[i]; }
  [[nodiscard]] auto operator[](std::size_t i) const -> const MemcachedServer& {
    return servers_[i];
  }
  [[nodiscard]] auto begin() noexcept { return servers_.begin(); }
  [[nodiscard]] auto end() noexcept { return servers_.end(); }
  [[nodiscard]] auto begin() const noexcept { return servers_.begin(); }
  [[nodiscard]] auto end() const noexcept { return servers_.end(); }

  /// list: the servers as memshard Servers, in order.
  [[nodiscard]] auto list() const -> std::vector<Server> { return list(0, servers_.size()); }

  /// list: servers [first, first + count) as memshard Servers, in order.
  [[nodiscard]] auto list(std::size_t first, std::size_t count) const -> std::vector<Server> {
    std::vector<Server> out;
    for (std::size_t i = first; i < first + count; ++i) {
      out.push_back(parse_server(servers_.at(i).spec()));
    }
    return out;
  }

  /// reset: every server running (a server a test stopped is restarted, one
  /// it paused resumed) and empty (flush_all); a failure names the server.
  [[nodiscard]] auto reset() -> ::testing::AssertionResult {
    for (MemcachedServer& server : servers_) {
      if (!server.running()) {
        server.restart();
      } else {
        (void)::kill(server.pid(), SIGCONT);
      }
      const std::string answer = server.command("flush_all");
      if (answer != "OK\r\n") {
        return ::testing::AssertionFailure()
               << server.spec() << " answered flush_all with '" << answer << "'";
      }
    }
    return ::testing::AssertionSuccess();
  }

 private:
  std::vector<MemcachedServer> servers_;
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_SERVER_SET_HPP_
