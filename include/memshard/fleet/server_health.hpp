// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_FLEET_SERVER_HEALTH_HPP_
#define MEMSHARD_FLEET_SERVER_HEALTH_HPP_

// fleet/server_health.hpp: where ejection is decided. ServerHealth holds one
// server's health and counters (shared by every client of a family);
// HealthPolicy applies the rules (consecutive failures eject, a retry interval
// later one request wins a probe lease, its outcome restores the server or
// ejects it again) against a clock that tests can replace; HealthRegistry
// keeps one ServerHealth per endpoint, so a membership change keeps the health
// and counters of the servers that stay. ServerStats is what a client reports.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "memshard/detail/clock.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/fleet/recovery_journal.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// ServerStats: one server's counters, as ShardedClient::stats() reads them.
/// Counters are shared by a client and all its clones.
struct ServerStats {
  Server server;
  std::uint64_t operations = 0;  ///< requests sent to the server
  std::uint64_t hits = 0;        ///< keys found by get / get_multi
  std::uint64_t misses = 0;      ///< keys not found by get / get_multi
  std::uint64_t errors = 0;      ///< failed requests (timeouts, connection and server errors)
  std::uint64_t ejections = 0;   ///< times the server was ejected
  /// Requests for its keys refused without reaching the wire while it was
  /// ejected (FailurePolicy::kFailFast).
  std::uint64_t refused = 0;
  /// Requests for its keys sent to another server while it was ejected
  /// (FailurePolicy::kFailover).
  std::uint64_t redirected = 0;
  std::uint32_t consecutive_failures = 0;
  /// Probes that failed since it was last healthy: each keeps it out 1.5
  /// times longer, up to ClientOptions::retry_interval_max.
  std::uint32_t probe_failures = 0;
  /// Times it reached the failure limit but stayed in, because too many
  /// servers were out already (ClientOptions::max_ejected_fraction).
  std::uint64_t kept_in = 0;
  bool ejected = false;  ///< ejected now (a probe may be due)
  /// Keys its journal holds now: writes it missed while out, deleted on it
  /// before it serves again (ClientOptions::journal_capacity).
  std::uint64_t journaled = 0;
  /// Writes it missed that its full journal could not remember (since it was
  /// last settled): while any, it is held out (ClientOptions::journal_overflow).
  std::uint64_t journal_lost = 0;
  std::uint64_t cleaned = 0;  ///< keys deleted on it from its journal
  std::uint64_t flushes = 0;  ///< times it was flushed after its journal overflowed
};

namespace detail {

/// ServerHealth: health and counters of one server, shared by every client of
/// a family (all atomics: clones run on other threads).
struct ServerHealth {
  std::atomic<std::uint64_t> operations{0};
  std::atomic<std::uint64_t> hits{0};
  std::atomic<std::uint64_t> misses{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> ejections{0};
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> redirected{0};
  std::atomic<std::uint32_t> consecutive_failures{0};
  /// Probes that failed since it was last healthy (each keeps it out longer).
  std::atomic<std::uint32_t> probe_failures{0};
  /// Times it reached the failure limit but stayed in: too many servers were
  /// out already (ClientOptions::max_ejected_fraction).
  std::atomic<std::uint64_t> kept_in{0};
  /// Clock time (ns) until which the server is ejected; 0 when healthy.
  std::atomic<std::int64_t> ejected_until{0};
  std::atomic<std::uint64_t> cleaned{0};
  std::atomic<std::uint64_t> flushes{0};
  /// The writes it missed while out (fleet/recovery_journal.hpp).
  RecoveryJournal journal;
  /// While one request probes an ejected server: the clock time (ns) at which
  /// its lease ends; 0 when none. A lease that is never released (the
  /// prober's thread died in an exception) simply runs out.
  std::atomic<std::int64_t> probe_until{0};

  /// stats: the counters and state now, for `server`.
  [[nodiscard]] auto stats(const Server& server) const -> ServerStats {
    ServerStats out;
    out.server = server;
    out.operations = operations.load(std::memory_order_relaxed);
    out.hits = hits.load(std::memory_order_relaxed);
    out.misses = misses.load(std::memory_order_relaxed);
    out.errors = errors.load(std::memory_order_relaxed);
    out.ejections = ejections.load(std::memory_order_relaxed);
    out.refused = refused.load(std::memory_order_relaxed);
    out.redirected = redirected.load(std::memory_order_relaxed);
    out.consecutive_failures = consecutive_failures.load(std::memory_order_relaxed);
    out.probe_failures = probe_failures.load(std::memory_order_relaxed);
    out.kept_in = kept_in.load(std::memory_order_relaxed);
    out.ejected = ejected_until.load(std::memory_order_relaxed) != 0;
    out.cleaned = cleaned.load(std::memory_order_relaxed);
    out.flushes = flushes.load(std::memory_order_relaxed);
    if (journal.pending()) {
      out.journaled = journal.size();
      out.journal_lost = journal.lost();
    }
    return out;
  }
};

/// HealthClock: the monotonic clock health decisions read, in ns. Tests pass
/// a function of their own.
using HealthClock = std::int64_t (*)() noexcept;

/// HealthChange: what one recorded outcome did to a server.
enum class HealthChange : std::uint8_t {
  kNone,
  kEjected,      ///< a healthy server reached the failure limit and was ejected
  kKeptIn,       ///< it reached the limit, but too many servers are out (fail-open)
  kProbeFailed,  ///< its probe failed: ejected again, for longer
  kRestored,     ///< its probe succeeded: back in
};

/// HealthPolicy: the ejection rules, applied to a ServerHealth.
///
/// - `failure_limit` consecutive server failures (timeouts, connection
///   failures) eject a server for `retry_interval`; any other outcome resets
///   the count. An ejection the caller does not allow (may_eject false: too
///   many servers are out already) leaves it in.
/// - Once the interval has passed, one request wins a probe lease (try_probe)
///   and is sent; its failure ejects the server again at once, for 1.5 times
///   longer than the last time (up to `retry_max`; 0: 30 times
///   `retry_interval`), plus up to a fifth more
///   at random so that clients do not probe in step; anything else restores
///   it. The first probe comes exactly `retry_interval` after the ejection. The lease lasts `lease`
///   and ends early when the probe's outcome is recorded or it is released.
///
/// All members are noexcept and lock-free.
class HealthPolicy {
 public:
  /// kBackoff: how much longer each failed probe keeps a server out.
  static constexpr double kBackoff = 1.5;
  /// kJitter: the most, as a fraction of the interval, added at random.
  static constexpr double kJitter = 0.2;

  HealthPolicy(std::uint32_t failure_limit, std::chrono::milliseconds retry_interval,
               std::chrono::milliseconds lease, HealthClock clock = &steady_now_ns,
               std::chrono::milliseconds retry_max = std::chrono::milliseconds{0}) noexcept
      : failure_limit_(std::max<std::uint32_t>(failure_limit, 1)),
        retry_ns_(to_ns(retry_interval)),
        retry_max_ns_(retry_max.count() > 0 ? std::max(retry_ns_, to_ns(retry_max))
                                            : retry_ns_ * 30),
        lease_ns_(to_ns(lease)),
        clock_(clock) {}

  /// now: the policy's clock.
  [[nodiscard]] auto now() const noexcept -> std::int64_t { return clock_(); }

  /// failure_limit: consecutive failures that eject.
  [[nodiscard]] auto failure_limit() const noexcept -> std::uint32_t { return failure_limit_; }

  /// is_ejected: whether the server is out (a probe may be due).
  [[nodiscard]] static auto is_ejected(const ServerHealth& health) noexcept -> bool {
    return health.ejected_until.load(std::memory_order_relaxed) != 0;
  }

  /// try_probe: whether this request may probe the ejected server: its retry
  /// interval has passed and no other request holds a live lease on it. The
  /// winner must record its outcome (record) or release the lease.
  [[nodiscard]] auto try_probe(ServerHealth& health) const noexcept -> bool;

  /// release_probe: gives a won lease back without an outcome.
  static void release_probe(ServerHealth& health) noexcept {
    health.probe_until.store(0, std::memory_order_release);
  }

  /// ejects_next: whether one more failure would eject the healthy server
  /// (the caller then decides may_eject).
  [[nodiscard]] auto ejects_next(const ServerHealth& health) const noexcept -> bool;

  /// interval: how long an ejection lasts after `probe_failures` failed
  /// probes, without jitter: retry_interval * 1.5^n, at most retry_max.
  [[nodiscard]] auto interval(std::uint32_t probe_failures) const noexcept -> std::int64_t;

  /// record: one request's outcome. `server_failure`: a timeout or connection
  /// failure; `probe`: the request held the probe lease; `may_eject`: an
  /// ejection is allowed (fail-open). Answers what changed.
  auto record(ServerHealth& health, bool server_failure, bool probe,
              bool may_eject = true) const noexcept -> HealthChange;

 private:
  [[nodiscard]] static auto to_ns(std::chrono::milliseconds duration) noexcept -> std::int64_t {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
  }

  // `ns` plus up to kJitter of it, drawn from the clock and the server's
  // address (different servers, and clients ejecting at other instants, get
  // other draws).
  [[nodiscard]] auto with_jitter(std::int64_t ns, const ServerHealth& health) const noexcept
      -> std::int64_t;

  std::uint32_t failure_limit_;
  std::int64_t retry_ns_;
  std::int64_t retry_max_ns_;
  std::int64_t lease_ns_;
  HealthClock clock_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto HealthPolicy::try_probe(ServerHealth& health) const noexcept -> bool {
  const std::int64_t until = health.ejected_until.load(std::memory_order_acquire);
  if (until == 0) {
    return false;
  }
  const std::int64_t now = clock_();
  if (now < until) {
    return false;
  }
  std::int64_t lease = health.probe_until.load(std::memory_order_acquire);
  if (lease != 0 && now < lease) {
    return false;
  }
  return health.probe_until.compare_exchange_strong(lease, now + lease_ns_,
                                                    std::memory_order_acq_rel);
}

MEMSHARD_DETAIL_INLINE auto HealthPolicy::ejects_next(const ServerHealth& health) const noexcept
    -> bool {
  return !is_ejected(health) &&
         health.consecutive_failures.load(std::memory_order_relaxed) + 1 >= failure_limit_;
}

MEMSHARD_DETAIL_INLINE auto HealthPolicy::interval(std::uint32_t probe_failures) const noexcept
    -> std::int64_t {
  double ns = static_cast<double>(retry_ns_);
  for (std::uint32_t i = 0; i < probe_failures && ns < static_cast<double>(retry_max_ns_); ++i) {
    ns *= kBackoff;
  }
  return std::min(static_cast<std::int64_t>(ns), retry_max_ns_);
}

MEMSHARD_DETAIL_INLINE auto HealthPolicy::record(ServerHealth& health, bool server_failure,
                                                 bool probe, bool may_eject) const noexcept
    -> HealthChange {
  HealthChange change = HealthChange::kNone;
  if (server_failure) {
    const std::uint32_t failures =
        health.consecutive_failures.fetch_add(1, std::memory_order_relaxed) + 1;
    if (probe) {
      const std::uint32_t step = health.probe_failures.fetch_add(1, std::memory_order_relaxed) + 1;
      health.ejected_until.store(clock_() + with_jitter(interval(step), health),
                                 std::memory_order_release);  // never 0: clock_() > 0
      change = HealthChange::kProbeFailed;
    } else if (failures >= failure_limit_ && !is_ejected(health)) {
      if (may_eject) {
        std::int64_t expected = 0;
        if (health.ejected_until.compare_exchange_strong(expected, clock_() + retry_ns_,
                                                         std::memory_order_acq_rel)) {
          health.ejections.fetch_add(1, std::memory_order_relaxed);
          change = HealthChange::kEjected;
        }
      } else {
        health.kept_in.fetch_add(1, std::memory_order_relaxed);
        change = HealthChange::kKeptIn;
      }
    }
  } else {
    health.consecutive_failures.store(0, std::memory_order_relaxed);
    if (probe) {
      health.probe_failures.store(0, std::memory_order_relaxed);
      if (health.ejected_until.exchange(0, std::memory_order_acq_rel) != 0) {
        change = HealthChange::kRestored;
      }
    }
  }
  if (probe) {
    release_probe(health);
  }
  return change;
}

MEMSHARD_DETAIL_INLINE auto HealthPolicy::with_jitter(std::int64_t ns,
                                                      const ServerHealth& health) const noexcept
    -> std::int64_t {
  std::uint64_t x = static_cast<std::uint64_t>(clock_()) ^
                    (static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&health)) << 7U);
  x ^= x >> 33U;  // a 64-bit finalizer (murmur3's fmix64)
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33U;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33U;
  const double fraction = static_cast<double>(x >> 11U) * 0x1.0p-53 * kJitter;
  return ns + static_cast<std::int64_t>(static_cast<double>(ns) * fraction);
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

/// HealthRegistry: one ServerHealth per endpoint (host:port), shared by a
/// family of clients, so that a membership change keeps the health and
/// counters of the servers that stay. Thread-safe.
class HealthRegistry {
 public:
  /// acquire: the health of each of `servers`, in order. Entries no client
  /// holds any more are forgotten here (fleets whose addresses churn), once
  /// per call: O((n + m) log m) for n servers and m entries.
  [[nodiscard]] auto acquire(std::span<const Server> servers)
      -> std::vector<std::shared_ptr<ServerHealth>>;

  /// size: the endpoints remembered now (some may be unused until the next
  /// acquire).
  [[nodiscard]] auto size() const -> std::size_t;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::weak_ptr<ServerHealth>> entries_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto HealthRegistry::acquire(std::span<const Server> servers)
    -> std::vector<std::shared_ptr<ServerHealth>> {
  std::vector<std::shared_ptr<ServerHealth>> out;
  out.reserve(servers.size());
  const std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(entries_, [](const auto& entry) { return entry.second.expired(); });
  for (const Server& server : servers) {
    std::weak_ptr<ServerHealth>& slot = entries_[server.endpoint()];
    std::shared_ptr<ServerHealth> health = slot.lock();
    if (!health) {
      health = std::make_shared<ServerHealth>();
      slot = health;
    }
    out.push_back(std::move(health));
  }
  return out;
}

MEMSHARD_DETAIL_INLINE auto HealthRegistry::size() const -> std::size_t {
  const std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_FLEET_SERVER_HEALTH_HPP_
