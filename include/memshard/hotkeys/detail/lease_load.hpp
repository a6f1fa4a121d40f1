// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_HOTKEYS_DETAIL_LEASE_LOAD_HPP_
#define MEMSHARD_HOTKEYS_DETAIL_LEASE_LOAD_HPP_

// hotkeys/detail/lease_load.hpp: LeaseLoad, get_or_load with a lease (LoadOptions::lease_ttl),
// over memcached's meta commands on the server a key's route names (its owner, or the failover
// server that stands in for it):
//
//   `mg <key> v f c N<lease_ttl>` answers one of
//   - a value (no W, no Z): a hit;
//   - W on a placeholder it just made (an empty item that lives lease_ttl): this caller won the
//     lease; it runs the loader and fills the placeholder with `ms <key> C<its cas>`. A write or
//     a delete of the key meanwhile changed that cas, so a value loaded before it is never
//     stored over it;
//   - Z on a placeholder: another caller loads; this one reads again after a backoff, until the
//     value is there or too little of the call's time is left for one more read (Errc::kTimeout:
//     it never runs the loader while the lease holds, nor after a read again failed); a
//     placeholder that lapsed (its loader vanished) makes the next read win;
//   - X (delete_stale() marked the value stale): W, this caller reloads and fills it as above;
//     Z, it answers the stale value while another reloads.
//
// A loader that throws, or answers std::nullopt, gives its placeholder back (`md <key> C<cas>`)
// so that the next caller need not wait out the lease. A server without meta commands, SASL, or
// a route that is an ejected server's probe leave the call to the plain get_or_load.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "memshard/client/client_core.hpp"
#include "memshard/client/result.hpp"
#include "memshard/detail/clock.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/hotkeys/detail/meta_call.hpp"
#include "memshard/hotkeys/load_options.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/meta_protocol.hpp"
#include "memshard/wire/meta_connection.hpp"
#include "memshard/wire/meta_pool.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// LeaseLoad: see the file comment. One call's; `core` and `meta` outlive it.
class LeaseLoad {
 public:
  /// Loaded: a get_or_load's answer: the value (empty when the loader said "do not cache")
  /// with what the cache did, or the failure (Errc::kTimeout) of a caller that waited out its
  /// deadline for another's load.
  using Loaded = Result<std::optional<std::string>>;

  LeaseLoad(ClientCore& core, MetaPool& meta, const LoadOptions& options) noexcept
      : core_(&core), meta_(&meta), options_(&options) {}

  /// Read: one leased read: the reply, or the failure; by_meta false when the server cannot
  /// take a lease (no meta commands, SASL).
  struct Read {
    Status status;
    MetaReply reply;
    bool by_meta = true;
  };

  /// read: `mg <key> v f c N<lease_ttl>` on route.server.
  auto read(const Route& route, std::string_view key) -> Read;

  /// fill: stores the loaded `value` over the placeholder or stale item whose cas is
  /// `lease_cas`; Errc::kNotStored when a write or a delete changed it meanwhile.
  auto fill(const Route& route, std::string_view key, std::string_view value, std::time_t exptime,
            std::uint32_t flags, std::uint64_t lease_cas) -> Status;

  /// give_back: deletes the placeholder whose cas is `lease_cas`, if it is still there.
  void give_back(const Route& route, std::string_view key, std::uint64_t lease_cas);

  /// placeholder: whether `key` on member `s`, which a plain get found empty and without flags,
  /// is a lease's placeholder (a load under way), which a reader takes for a miss. Read again
  /// by meta; false when it cannot be (then the empty value stands).
  static auto placeholder(ClientCore& core, MetaPool& meta, std::size_t s, std::string_view key)
      -> bool;

  /// mark_stale: `md <key> I T<stale_ttl>` on member `s`: the item stays, marked stale, for
  /// stale_ttl (LoadOptions: the next leased read reloads it while the others read the stale
  /// value); libmemcached's code for the answer, or nothing when `s` has no meta commands.
  static auto mark_stale(ClientCore& core, MetaPool& meta, std::size_t s, std::string_view key,
                         std::chrono::seconds stale_ttl) -> std::optional<memcached_return_t>;

  /// load: get_or_load of the sent key `key` under a lease. `route_of()` routes the key (a
  /// Route, the failover server included) and `exptime_for(route)` gives the store's exptime
  /// on it; `loader()` answers a std::optional<std::string>. Nothing when the call must go
  /// the plain way (the file comment).
  template <class RouteOf, class ExptimeFor, class Loader>
  auto load(std::string_view key, RouteOf&& route_of, ExptimeFor&& exptime_for, std::uint32_t flags,
            Loader& loader) -> std::optional<Loaded> {
    const std::int64_t deadline = core_->call_deadline();
    // A read again is made only with this much of the call's time left for its answer, so that
    // the end of a wait is never a server's timeout: a quarter of the call's time, at most 20 ms.
    const std::int64_t reserve = std::min<std::int64_t>(
        20'000'000, std::max<std::int64_t>(deadline - steady_now_ns(), 0) / 4);
    std::int64_t backoff = std::chrono::nanoseconds(options_->first_poll).count();
    const std::int64_t max_backoff = std::chrono::nanoseconds(options_->max_poll).count();
    for (bool first = true;; first = false) {
      Route route = route_of();
      if (route.probe) {  // an ejected server's probe: the plain way, which takes its own
        HealthPolicy::release_probe(core_->health(route.server));
        if (first) {
          return std::nullopt;
        }
        route.status = core_->ejected_status(route.server);
      }
      Read got;
      if (route.status.ok()) {
        got = read(route, key);
        if (!got.by_meta) {
          if (first) {
            return std::nullopt;
          }
          got.status = Status(Errc::kProtocolError, MEMCACHED_NOT_SUPPORTED, route.server,
                              "get_or_load: the server stopped answering meta commands");
        }
      } else {
        got.status = std::move(route.status);
      }
      if (!got.status.ok() || got.reply.kind != MetaReplyKind::kValue) {
        if (got.status.ok()) {
          got.status = Status(Errc::kProtocolError, MEMCACHED_PROTOCOL_ERROR, route.server,
                              "get_or_load: a leased read answered no item");
        }
        if (!first) {  // another caller holds the lease: its loader runs, not this one
          return Loaded(std::move(got.status));
        }
        // The cache cannot be read: the loader's answer, not stored (as without a lease).
        return Loaded(loader(), std::move(got.status));
      }
      ServerHealth& health = core_->health(route.server);
      MetaReply& reply = got.reply;
      if (reply.won) {
        health.misses.fetch_add(1, std::memory_order_relaxed);
        return load_won(route, key, exptime_for(route), flags, reply, loader);
      }
      if (!reply.win_sent || reply.stale) {  // a value, or a stale one while another reloads
        health.hits.fetch_add(1, std::memory_order_relaxed);
        return Loaded(std::optional<std::string>(std::move(reply.value)),
                      Status(Errc::kOk, MEMCACHED_SUCCESS, route.server));
      }
      // Another caller's placeholder: wait for its value, within the call's deadline. A read
      // again needs time left for its answer; the wait's end is no server's fault.
      const std::int64_t now = steady_now_ns();
      if (now + backoff + reserve >= deadline) {
        std::this_thread::sleep_for(
            std::chrono::nanoseconds(std::max<std::int64_t>(deadline - now, 0)));
        return Loaded(Status(Errc::kTimeout, MEMCACHED_TIMEOUT, route.server,
                             "get_or_load: another caller's load (its lease) did not fill the "
                             "key before this call's deadline; the loader did not run"));
      }
      std::this_thread::sleep_for(std::chrono::nanoseconds(backoff));
      backoff = std::min(backoff * 2, max_backoff);
    }
  }

 private:
  template <class Loader>
  auto load_won(const Route& route, std::string_view key, std::time_t exptime, std::uint32_t flags,
                const MetaReply& reply, Loader& loader) -> Loaded {
    const std::uint64_t lease_cas = reply.cas.value_or(0);
    std::optional<std::string> loaded;
    try {
      loaded = loader();
    } catch (...) {
      if (!reply.stale) {
        give_back(route, key, lease_cas);
      }
      throw;
    }
    if (!loaded) {
      give_back(route, key, lease_cas);  // nothing to cache: a stale value goes too
      return Loaded(std::move(loaded), Status(Errc::kOk, MEMCACHED_SUCCESS, route.server));
    }
    if (auto refused = core_->check(key, *loaded)) {  // too large: not stored
      if (!reply.stale) {
        give_back(route, key, lease_cas);
      }
      return Loaded(std::move(loaded), std::move(*refused));
    }
    Status stored = fill(route, key, *loaded, exptime, flags, lease_cas);
    return Loaded(std::move(loaded), std::move(stored));
  }

  ClientCore* core_;
  MetaPool* meta_;
  const LoadOptions* options_;
};

#if MEMSHARD_DETAIL_DEFINITIONS

MEMSHARD_DETAIL_INLINE auto LeaseLoad::read(const Route& route, std::string_view key) -> Read {
  Read out;
  const std::size_t s = route.server;
  std::optional<MetaOutcome> answer =
      meta_call(*core_, *meta_, s, [&](MetaConnection& link, MetaDeadline until) {
        const auto lease = static_cast<std::int32_t>(options_->lease_ttl.count());
        return link.get(
            key,
            MetaGetFlags{.value = true, .client_flags = true, .cas = true, .vivify_ttl = lease},
            until);
      });
  if (!answer) {
    out.by_meta = false;
    return out;
  }
  const memcached_return_t rc = to_memcached_return(answer->status, answer->reply.kind);
  out.status = core_->finish(route, rc, "get_or_load", answer->status.message, false);
  if (rc == MEMCACHED_NOTFOUND) {
    out.status = Status(Errc::kOk, MEMCACHED_SUCCESS, s);  // no item (the reply says so)
  }
  out.reply = std::move(answer->reply);
  return out;
}

MEMSHARD_DETAIL_INLINE auto LeaseLoad::fill(const Route& route, std::string_view key,
                                            std::string_view value, std::time_t exptime,
                                            std::uint32_t flags, std::uint64_t lease_cas)
    -> Status {
  const std::size_t s = route.server;
  const MetaDeadline until{std::chrono::nanoseconds(core_->call_deadline())};
  MetaStatus connected;
  MetaConnection& link = meta_->connection(s, until, connected);
  MetaOutcome answer = connected.ok()
                           ? link.set(key, value,
                                      MetaSetFlags{.ttl = static_cast<std::int32_t>(exptime),
                                                   .client_flags = flags,
                                                   .cas = lease_cas},
                                      until)
                           : MetaOutcome{connected, {}};
  const memcached_return_t rc = to_memcached_return(answer.status, answer.reply.kind);
  Status status = core_->finish(route, rc, "set", answer.status.message, false);
  if (status.code() == Errc::kExists || status.code() == Errc::kNotFound) {
    return Status(Errc::kNotStored, rc, s,
                  "get_or_load: the key was written or deleted while it loaded; the loaded value "
                  "was not stored");
  }
  return status;
}

MEMSHARD_DETAIL_INLINE void LeaseLoad::give_back(const Route& route, std::string_view key,
                                                 std::uint64_t lease_cas) {
  const MetaDeadline until{std::chrono::nanoseconds(core_->call_deadline())};
  MetaStatus connected;
  MetaConnection& link = meta_->connection(route.server, until, connected);
  if (connected.ok()) {
    const MetaOutcome answer = link.remove(key, MetaDeleteFlags{.cas = lease_cas}, until);
    (void)core_->finish(route, to_memcached_return(answer.status, answer.reply.kind), "delete",
                        answer.status.message, false);
  }
}

MEMSHARD_DETAIL_INLINE auto LeaseLoad::placeholder(ClientCore& core, MetaPool& meta, std::size_t s,
                                                   std::string_view key) -> bool {
  const std::optional<MetaOutcome> answer =
      meta_call(core, meta, s, [&](MetaConnection& link, MetaDeadline until) {
        return link.get(key, MetaGetFlags{.value = true, .client_flags = true}, until);
      });
  // A placeholder: empty, no flags, its win sent and not a stale value. Gone since is a miss too.
  return answer && answer->ok() &&
         (answer->reply.kind == MetaReplyKind::kMiss ||
          (answer->reply.kind == MetaReplyKind::kValue && answer->reply.win_sent &&
           !answer->reply.stale && answer->reply.value.empty()));
}

MEMSHARD_DETAIL_INLINE auto LeaseLoad::mark_stale(ClientCore& core, MetaPool& meta, std::size_t s,
                                                  std::string_view key,
                                                  std::chrono::seconds stale_ttl)
    -> std::optional<memcached_return_t> {
  const std::optional<MetaOutcome> answer =
      meta_call(core, meta, s, [&](MetaConnection& link, MetaDeadline until) {
        const auto ttl = static_cast<std::int32_t>(stale_ttl.count());
        return link.remove(key, MetaDeleteFlags{.invalidate = true, .stale_ttl = ttl}, until);
      });
  if (!answer) {
    return std::nullopt;
  }
  return to_memcached_return(answer->status, answer->reply.kind);
}

#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_HOTKEYS_DETAIL_LEASE_LOAD_HPP_
