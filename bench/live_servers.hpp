// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_LIVE_SERVERS_HPP_
#define MEMSHARD_BENCH_LIVE_SERVERS_HPP_

// live_servers.hpp: the real memcached servers a benchmark runs against: the
// ones named in MEMSHARD_SERVERS, or local processes it starts and stops;
// either way, checked empty before the benchmark writes anything (see
// run_keys.hpp).

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/placement/server.hpp"
#include "run_keys.hpp"
#include "support/memcached_server.hpp"

namespace memshard::bench {

/// LiveServers: MEMSHARD_SERVERS (between `min_given` and `max_given`
/// servers), or else `local_count` memcached processes on loopback, stopped
/// with this object. Either way the servers must be empty (require_empty:
/// curr_items 0, unless MEMSHARD_BENCH_ALLOW_NONEMPTY=1), and the benchmark
/// writes only keys under run_prefix().
class LiveServers {
 public:
  /// Starts or names the servers, checks that they are empty, and records
  /// nothing (see add_context). Throws std::runtime_error for a server that
  /// is not empty.
  LiveServers(std::size_t min_given, std::size_t max_given, std::size_t local_count) {
    if (const char* list = std::getenv("MEMSHARD_SERVERS"); list != nullptr && *list != '\0') {
      servers_ = parse_servers(list);
      if (servers_.size() < min_given || servers_.size() > max_given) {
        throw std::invalid_argument("MEMSHARD_SERVERS needs " + std::to_string(min_given) + " to " +
                                    std::to_string(max_given) + " servers for this benchmark");
      }
      std::cerr << "memshard: using MEMSHARD_SERVERS (" << servers_.size() << " servers)\n";
    } else {
      for (std::size_t i = 0; i < local_count; ++i) {
        local_.emplace_back();
        servers_.push_back(parse_server(local_.back().spec()));
      }
      std::cerr << "memshard: started " << local_.size() << " local memcached servers:";
      for (const auto& server : local_) {
        std::cerr << ' ' << server.spec();
      }
      std::cerr << '\n';
    }
    require_empty(servers_);
    std::cerr << "memshard: every key written starts with '" << run_prefix() << "'\n";
  }

  /// The same, then add_context(context_prefix).
  LiveServers(std::size_t min_given, std::size_t max_given, std::size_t local_count,
              const std::string& context_prefix)
      : LiveServers(min_given, max_given, local_count) {
    add_context(context_prefix);
  }

  /// add_context: records the list, its source and the memcached version as
  /// benchmark context under `<prefix>servers`, `...server_source` and
  /// `...memcached_version` (the last for local servers only).
  void add_context(const std::string& prefix) const {
    benchmark::AddCustomContext(prefix + "servers", endpoints());
    benchmark::AddCustomContext(prefix + "server_source",
                                started_here() ? "local" : "MEMSHARD_SERVERS");
    if (started_here()) {
      benchmark::AddCustomContext(prefix + "memcached_version", memcached_version());
    }
  }

  /// endpoints: "host:port,host:port,...", in list order.
  [[nodiscard]] auto endpoints() const -> std::string {
    std::string specs;
    for (const Server& server : servers_) {
      specs.append(specs.empty() ? "" : ",").append(server.endpoint());
    }
    return specs;
  }

  /// memcached_version: the first local server's answer to "version"
  /// ("VERSION 1.6.18"), or "" for MEMSHARD_SERVERS.
  [[nodiscard]] auto memcached_version() const -> std::string {
    if (local_.empty()) {
      return {};
    }
    std::string version = local_.front().command("version\r\n");
    while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) {
      version.pop_back();
    }
    return version;
  }

  [[nodiscard]] auto servers() const noexcept -> const std::vector<Server>& { return servers_; }
  /// started_here: whether the servers are local processes (not MEMSHARD_SERVERS).
  [[nodiscard]] auto started_here() const noexcept -> bool { return !local_.empty(); }

 private:
  std::vector<testing::MemcachedServer> local_;
  std::vector<Server> servers_;
};

}  // namespace memshard::bench

#endif  // MEMSHARD_BENCH_LIVE_SERVERS_HPP_
