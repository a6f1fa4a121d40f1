// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_DETAIL_FAN_HANDLE_HPP_
#define MEMSHARD_WIRE_DETAIL_FAN_HANDLE_HPP_

// wire/detail/fan_handle.hpp: FanHandle, one libmemcached handle that holds every
// server of a client, for multi-gets.
//
// With one handle per server, the replies of a multi-get can only be read one
// server after another: the client waits for the first server while later
// replies are already there. A handle that holds all the servers lets
// libmemcached poll all their sockets and parse whichever reply is ready.
//
// Placement stays memshard's. The handle distributes with MODULA over a
// custom hash function that answers, for each key of the request in turn, the
// server memshard has already chosen (FanRoutes); MODULA takes it modulo the
// server count, which leaves an index unchanged. libmemcached's own
// consistent distributions, and their 100-server limit, are never used.

#include <libhashkit-1.0/hashkit.h>
#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <vector>

#include "memshard/client/client_options.hpp"
#include "memshard/detail/clock.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/memcached_handle.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// FanRoutes: the servers of one request's keys, read by the hash function
/// while libmemcached sends the request.
struct FanRoutes {
  /// Marks a server's first key in the request: libmemcached connects to a
  /// server at its first key, so that is where the connect timeout is cut to
  /// what is left of the call's deadline.
  static constexpr std::uint32_t kFirst = 1U << 31;
  /// Marks a server's second key: by then its first key's connect has been
  /// tried, and a failure there is its real cause. libmemcached's own retry
  /// clock answers the later keys with SERVER_TEMPORARILY_DISABLED, recorded
  /// over it.
  static constexpr std::uint32_t kSecond = 1U << 30;

  const char* const* keys = nullptr;       ///< the request's key pointers
  const std::size_t* lengths = nullptr;    ///< and lengths
  const std::uint32_t* servers = nullptr;  ///< each key's server, maybe | kFirst
  std::size_t count = 0;
  std::size_t next = 0;  ///< the key libmemcached should hash next
  memcached_st* memc = nullptr;
  std::int64_t deadline_ns = 0;          ///< steady_clock
  std::uint64_t connect_timeout_ms = 0;  ///< the configured connect timeout
  std::uint64_t poll_ms = 0;             ///< the handle's poll timeout now
  /// Per server: the first failure recorded on its connection during the
  /// request (MEMCACHED_SUCCESS when none), and the errno then.
  std::vector<memcached_return_t> causes;
  std::vector<int> errnos;

  /// begin: a request over `server_count` servers starts.
  void begin(std::size_t server_count) {
    causes.assign(server_count, MEMCACHED_SUCCESS);
    errnos.assign(server_count, 0);
  }

  /// note_cause: records server `s`'s failure so far, if it has one and no
  /// earlier one was recorded.
  void note_cause(std::uint32_t s) noexcept {
    const memcached_return_t rc =
        memcached_server_error_return(memcached_server_instance_by_position(memc, s));
    if (s < causes.size() && memcached_failed(rc) && memcached_success(causes[s])) {
      causes[s] = rc;
      errnos[s] = memcached_last_error_errno(memc);
    }
  }

  /// cause: the real failure of server `s` when its connection reports `own`:
  /// `own`, unless that is libmemcached's retry clock refusing after a
  /// failure recorded earlier in the request.
  [[nodiscard]] auto cause(std::size_t s, memcached_return_t own) const noexcept
      -> memcached_return_t {
    const bool clock =
        own == MEMCACHED_SERVER_TEMPORARILY_DISABLED || own == MEMCACHED_SERVER_MARKED_DEAD;
    return clock && s < causes.size() && memcached_failed(causes[s]) ? causes[s] : own;
  }

  /// left_ms: what is left of the deadline, in whole ms (0 once past it).
  [[nodiscard]] auto left_ms() const noexcept -> std::uint64_t {
    const std::int64_t left = (deadline_ns - coarse_now_ns()) / 1'000'000;
    return left > 0 ? static_cast<std::uint64_t>(left) : 0;
  }

  /// set_poll: sets the handle's poll timeout to `ms` (0: libmemcached gives
  /// up at once on anything that would wait).
  void set_poll(std::uint64_t ms) noexcept {
    if (ms != poll_ms) {
      poll_ms = ms;
      (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, ms);
    }
  }

  /// position: where `key` is in the request. libmemcached hashes the keys
  /// in order, with the caller's pointers, so this is nearly always `next`.
  [[nodiscard]] auto position(const char* key, std::size_t length) const noexcept -> std::size_t {
    if (next < count && keys[next] == key) {
      return next;
    }
    for (std::size_t at = next; at < count; ++at) {  // a key skipped
      if (keys[at] == key) {
        return at;
      }
    }
    for (std::size_t at = 0; at < count; ++at) {  // a copy of a key
      if (lengths[at] == length && std::memcmp(keys[at], key, length) == 0) {
        return at;
      }
    }
    return count;
  }
};

/// fan_server: the hashkit function of a FanHandle (`context` is FanRoutes).
/// libmemcached calls it for each key before sending it, which is also where
/// the request's waits are kept within its deadline: a server that stops
/// reading must not cost a poll timeout per key.
inline auto fan_server(const char* key, std::size_t length, void* context) -> std::uint32_t {
  FanRoutes& routes = *static_cast<FanRoutes*>(context);
  const std::size_t at = routes.position(key, length);
  if (at == routes.count) {
    return 0;  // not a key of the request: libmemcached hashes nothing else
  }
  routes.next = at + 1;
  // Past the deadline, a write that would wait fails at once.
  const std::uint64_t left = routes.left_ms();
  if (left < routes.poll_ms) {
    routes.set_poll(left);
  }
  const std::uint32_t route = routes.servers[at];
  const std::uint32_t server = route & ~(FanRoutes::kFirst | FanRoutes::kSecond);
  if ((route & FanRoutes::kFirst) != 0) {
    (void)memcached_behavior_set(
        routes.memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
        std::min(std::max<std::uint64_t>(left, 1), routes.connect_timeout_ms));
  } else if ((route & FanRoutes::kSecond) != 0) {
    routes.note_cause(server);
  }
  return server;
}

/// FanHandle: an owning, move-only libmemcached handle for all of a client's
/// servers (in the client's order), its routes and its fetch result. Creation
/// failure throws (std::bad_alloc, or ConfigError for a server libmemcached
/// refuses). Moves leave the source empty.
class FanHandle {
 public:
  FanHandle() = default;

  FanHandle(std::span<const Server> servers, const ClientOptions& options);

  [[nodiscard]] auto native_handle() const noexcept -> memcached_st* {
    return parts_ ? parts_->core.memc() : nullptr;
  }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(parts_); }

  /// routes: what the hash function answers during the next memcached_mget.
  [[nodiscard]] auto routes() noexcept -> FanRoutes& { return parts_->routes; }

  /// instance: the handle's connection to server `index`.
  [[nodiscard]] auto instance(std::size_t index) const noexcept -> const memcached_instance_st*;

  /// result: the caller-owned result for fetches (nullptr if libmemcached
  /// cannot make one).
  [[nodiscard]] auto result() noexcept -> memcached_result_st* { return parts_->core.result(); }

  /// reset: closes every connection and frees the handle.
  void reset() noexcept { parts_.reset(); }

 private:
  // On the heap: the hash function keeps the address of `routes`, and the
  // result must not move.
  struct Parts {
    explicit Parts(const ClientOptions& options) : core(options) {}
    HandleCore core;
    FanRoutes routes;
  };

  std::unique_ptr<Parts> parts_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE FanHandle::FanHandle(std::span<const Server> servers,
                                            const ClientOptions& options)
    : parts_(std::make_unique<Parts>(options)) {
  memcached_st* memc = parts_->core.memc();
  // A server that fails to connect is not tried again for its other keys of
  // the same request (each try could cost a connect timeout). The client
  // drops the whole handle after any failure, so the clock never outlives
  // one request.
  (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 3600);
  (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                               MEMCACHED_DISTRIBUTION_MODULA);
  hashkit_st hashkit;
  if (hashkit_create(&hashkit) == nullptr) {
    throw std::bad_alloc();
  }
  (void)hashkit_set_custom_function(&hashkit, fan_server, &parts_->routes);
  const memcached_return_t set = memcached_set_hashkit(memc, &hashkit);
  hashkit_free(&hashkit);
  if (memcached_failed(set)) {
    throw std::bad_alloc();
  }
  for (const Server& server : servers) {
    parts_->core.add(server);
  }
  parts_->routes.memc = memc;
  parts_->routes.connect_timeout_ms = static_cast<std::uint64_t>(options.connect_timeout.count());
}

MEMSHARD_DETAIL_INLINE auto FanHandle::instance(std::size_t index) const noexcept
    -> const memcached_instance_st* {
  return memcached_server_instance_by_position(parts_->core.memc(),
                                               static_cast<std::uint32_t>(index));
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_DETAIL_FAN_HANDLE_HPP_
