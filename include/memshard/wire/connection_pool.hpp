// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_CONNECTION_POOL_HPP_
#define MEMSHARD_WIRE_CONNECTION_POOL_HPP_

// wire/connection_pool.hpp: where a client's connections live.
// ConnectionPool holds one libmemcached handle per server (opened on first
// use) and the fan handle that multi-gets read all servers through, keeps
// them across membership changes for the servers that stay, and bounds the
// waits of one call by its deadline. One client, one pool: clones have their
// own. validate_wire_servers refuses, at construction, what libmemcached
// would refuse later.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/client/client_options.hpp"
#include "memshard/detail/clock.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/fleet/fleet.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/fan_handle.hpp"
#include "memshard/wire/detail/memcached_handle.hpp"
#include "memshard/wire/return_codes.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// kMaxWireHost: the longest host name libmemcached 1.1 accepts
/// (MEMCACHED_NI_MAXHOST - 1).
inline constexpr std::size_t kMaxWireHost = MEMCACHED_NI_MAXHOST - 1;

/// validate_wire_servers: throws ConfigError for a server libmemcached would
/// refuse when the client first connects (a host name over kMaxWireHost
/// bytes), so that no operation ever throws for configuration.
inline void validate_wire_servers(std::span<const Server> servers) {
  for (const Server& server : servers) {
    if (server.host.size() > kMaxWireHost) {
      throw_config_error(
          "host name is longer than libmemcached accepts (" + std::to_string(kMaxWireHost) +
              " bytes)",
          server.host.substr(0, 40) + "... (" + std::to_string(server.host.size()) + " bytes)");
    }
  }
}

/// ConnectionPool: a client's connections to the members of its fleet
/// snapshot, in the members' order. Not thread-safe (one client, one thread).
class ConnectionPool {
 public:
  explicit ConnectionPool(const ClientOptions& options) : options_(options) {}

  ConnectionPool(ConnectionPool&&) noexcept = default;
  auto operator=(ConnectionPool&&) noexcept -> ConnectionPool& = default;
  ConnectionPool(const ConnectionPool&) = delete;
  auto operator=(const ConnectionPool&) -> ConnectionPool& = delete;
  ~ConnectionPool() = default;

  /// bind: moves to `members` (which must outlive the next bind). Connections
  /// to servers in both lists (same host:port) are kept; the others close.
  /// The fan handle always closes: it holds the old list.
  void bind(const Membership& members);

  /// options: the client's options.
  [[nodiscard]] auto options() const noexcept -> const ClientOptions& { return options_; }

  /// handle: server `s`'s own handle, connected on first use.
  auto handle(std::size_t s) -> MemcachedHandle&;

  /// has_handle: whether server `s` has a handle now.
  [[nodiscard]] auto has_handle(std::size_t s) const noexcept -> bool {
    return static_cast<bool>(handles_[s]);
  }

  /// last_errno: the errno of the last failure on server `s`'s handle (0
  /// when none or no handle).
  [[nodiscard]] auto last_errno(std::size_t s) const noexcept -> int {
    return handles_[s] ? memcached_last_error_errno(handles_[s].native_handle()) : 0;
  }

  /// drop: closes server `s`'s handle (a fresh one next time: libmemcached's
  /// own dead-server clock must never refuse a request memshard decides to
  /// send, and a handle may hold unread replies).
  void drop(std::size_t s) noexcept { handles_[s].reset(); }

  /// fan: the handle holding every server, for multi-gets; a new one when a
  /// server failed since it was made (its connection there may be dead too).
  auto fan() -> FanHandle&;

  /// drop_fan: closes the fan handle.
  void drop_fan() noexcept;

  /// server_failed: a server failed on some connection: the next multi-get
  /// opens a fresh fan handle.
  void server_failed() noexcept { fan_stale_ = true; }

  /// limit_wait: shortens a handle's waits so that they end by `deadline`
  /// (steady clock ns); at least 1 ms, so an answer that has already arrived
  /// is still read.
  void limit_wait(memcached_st* memc, std::int64_t deadline) const noexcept;

  /// restore_wait: undoes limit_wait.
  void restore_wait(memcached_st* memc) const noexcept;

  /// fetch_all: hands every result of an mget sent on `connection` (one of
  /// this pool's handles) to `sink(key, result)`; answers the final code
  /// (MEMCACHED_SUCCESS when the reply ended normally).
  template <class Sink>
  static auto fetch_all(MemcachedHandle& connection, Sink&& sink) -> memcached_return_t {
    memcached_st* memc = connection.native_handle();
    memcached_result_st* result = connection.result();
    if (result == nullptr) {
      return MEMCACHED_MEMORY_ALLOCATION_FAILURE;
    }
    memcached_return_t rc = MEMCACHED_SUCCESS;
    while ((keep_fetch_code(*result), memcached_fetch_result(memc, result, &rc)) != nullptr) {
      sink(
          std::string_view(memcached_result_key_value(result), memcached_result_key_length(result)),
          *result);
    }
    if (rc == MEMCACHED_END || rc == MEMCACHED_NOTFOUND) {
      return MEMCACHED_SUCCESS;
    }
    return rc;
  }

 private:
  ClientOptions options_;
  const Membership* members_ = nullptr;
  std::vector<MemcachedHandle> handles_;
  FanHandle fan_;
  bool fan_stale_ = false;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE void ConnectionPool::bind(const Membership& members) {
  std::vector<MemcachedHandle> handles(members.size());
  if (members_ != nullptr) {
    // The open connections by endpoint: O((n + m) log m), never n * m.
    std::map<std::pair<std::string_view, std::uint16_t>, std::size_t> open;
    for (std::size_t old = 0; old < members_->size(); ++old) {
      if (handles_[old]) {
        open.emplace(std::pair<std::string_view, std::uint16_t>(members_->servers[old].host,
                                                                members_->servers[old].port),
                     old);
      }
    }
    for (std::size_t s = 0; s < members.size() && !open.empty(); ++s) {
      const auto found = open.find({members.servers[s].host, members.servers[s].port});
      if (found != open.end()) {
        handles[s] = std::move(handles_[found->second]);
        open.erase(found);
      }
    }
  }
  members_ = &members;
  handles_ = std::move(handles);
  fan_.reset();
  fan_stale_ = false;
}

MEMSHARD_DETAIL_INLINE auto ConnectionPool::handle(std::size_t s) -> MemcachedHandle& {
  MemcachedHandle& handle = handles_[s];
  if (!handle) {
    handle = MemcachedHandle(members_->servers[s], options_);
  }
  return handle;
}

MEMSHARD_DETAIL_INLINE auto ConnectionPool::fan() -> FanHandle& {
  if (fan_stale_) {
    fan_.reset();
    fan_stale_ = false;
  }
  if (!fan_) {
    fan_ = FanHandle(members_->servers, options_);
  }
  return fan_;
}

MEMSHARD_DETAIL_INLINE void ConnectionPool::drop_fan() noexcept {
  fan_.reset();
  fan_stale_ = false;
}

MEMSHARD_DETAIL_INLINE void ConnectionPool::limit_wait(memcached_st* memc,
                                                       std::int64_t deadline) const noexcept {
  const std::int64_t left_ms = (deadline - steady_now_ns()) / 1'000'000;
  const auto wait = static_cast<std::uint64_t>(std::max<std::int64_t>(left_ms, 1));
  (void)memcached_behavior_set(
      memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT,
      std::min(wait, static_cast<std::uint64_t>(options_.io_timeout.count())));
  (void)memcached_behavior_set(
      memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
      std::min(wait, static_cast<std::uint64_t>(options_.connect_timeout.count())));
}

MEMSHARD_DETAIL_INLINE void ConnectionPool::restore_wait(memcached_st* memc) const noexcept {
  (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT,
                               static_cast<std::uint64_t>(options_.io_timeout.count()));
  (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
                               static_cast<std::uint64_t>(options_.connect_timeout.count()));
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_CONNECTION_POOL_HPP_
