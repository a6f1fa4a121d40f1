// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_CLIENT_CORE_HPP_
#define MEMSHARD_CLIENT_CLIENT_CORE_HPP_

// client/client_core.hpp: ClientCore, everything of a client that does not
// depend on its locator type: the checks before the wire (key rules, value
// size), the route of a key whose server is ejected (probe, failover or
// refusal), and finish(), which turns libmemcached's answer into a Status and
// records it in the server's health. Every operation goes through it.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/client/client_options.hpp"
#include "memshard/client/result.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/fleet/fleet.hpp"
#include "memshard/fleet/recovery_journal.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/observability/server_event.hpp"
#include "memshard/placement/key.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/connection_pool.hpp"
#include "memshard/wire/deadline_watch.hpp"
#include "memshard/wire/return_codes.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// Route: where one request goes: `server`, whether it holds that server's
/// probe lease, and a failure when it goes nowhere.
struct Route {
  std::size_t server = 0;
  bool probe = false;
  Status status;
};

/// capped_exptime: a memcached exptime (`wire`: 0 for never, relative seconds
/// up to 30 days, else a Unix time) that ends at most `cap` seconds after
/// `unix_now`, as relative seconds.
[[nodiscard]] constexpr auto capped_exptime(std::time_t wire, std::int64_t cap,
                                            std::int64_t unix_now) noexcept -> std::time_t {
  constexpr std::int64_t kRelativeLimit = 60 * 60 * 24 * 30;
  const auto value = static_cast<std::int64_t>(wire);
  if (value == 0) {
    return static_cast<std::time_t>(cap);
  }
  if (value <= kRelativeLimit) {
    return static_cast<std::time_t>(std::min(value, cap));
  }
  const std::int64_t left = value - unix_now;
  if (left <= 0) {
    return wire;  // already past: memcached treats it as expired
  }
  return static_cast<std::time_t>(std::min(left, cap));
}

/// ClientCore: the locator-independent part of a client (see the file
/// comment). Not thread-safe: one client, one thread.
class ClientCore {
 public:
  explicit ClientCore(const ClientOptions& options)
      : pool_(options),
        policy_(options.failure_limit, options.retry_interval,
                options.connect_timeout + options.io_timeout + options.retry_interval,
                &steady_now_ns, options.retry_cap()),
        budget_ns_(
            std::chrono::duration_cast<std::chrono::nanoseconds>(options.call_budget()).count()),
        short_budget_(options.call_budget() < options.io_timeout ||
                      options.call_budget() < options.connect_timeout),
        seat_(budget_ns_) {}

  /// bind: moves to `members` (kept alive by the caller's snapshot).
  void bind(const Membership& members);

  [[nodiscard]] auto options() const noexcept -> const ClientOptions& { return pool_.options(); }
  [[nodiscard]] auto pool() noexcept -> ConnectionPool& { return pool_; }
  [[nodiscard]] auto policy() const noexcept -> const HealthPolicy& { return policy_; }
  [[nodiscard]] auto members() const noexcept -> const Membership& { return *members_; }
  [[nodiscard]] auto health(std::size_t s) const noexcept -> ServerHealth& {
    return *members_->health[s];
  }

  /// deadline: when a call that starts at `now` (steady clock ns) must end:
  /// its budget from now, or the caller's deadline when that comes first.
  [[nodiscard]] auto deadline(std::int64_t now) const noexcept -> std::int64_t;

  /// caller_deadline: the deadline of the caller's DeadlineScope (steady
  /// clock ns), 0 when none.
  [[nodiscard]] auto caller_deadline() const noexcept -> std::int64_t { return caller_deadline_; }

  /// set_caller_deadline: DeadlineScope's (0: none).
  void set_caller_deadline(std::int64_t deadline) noexcept;

  /// start_call: a public call begins; its deadline starts with its first
  /// use (call_deadline).
  void start_call() noexcept { call_deadline_ = 0; }

  /// call_deadline: the deadline of the call under way, set by its first use
  /// (routing that must clean a server, or the requests themselves), so that
  /// work done for one call shares one deadline.
  [[nodiscard]] auto call_deadline() noexcept -> std::int64_t;

  /// expired: whether this call's deadline, once set, has passed: a request
  /// of the call not sent yet is not sent at all (unsent()). One branch while
  /// the call has not read the clock.
  [[nodiscard]] auto expired() const noexcept -> bool {
    return call_deadline_ != 0 && steady_now_ns() >= call_deadline_;
  }

  /// unsent: the timeout of a request to `server` that was not sent because
  /// its call's deadline had passed; nothing is recorded in the server's
  /// health (nothing is known of it).
  [[nodiscard]] auto unsent(std::size_t server) const -> Status;

  /// watch: holds one libmemcached call on `memc` to `deadline` while the
  /// returned object lives (wire/deadline_watch.hpp).
  [[nodiscard]] auto watch(memcached_st* memc, std::int64_t now, std::int64_t deadline) noexcept
      -> WatchedCall {
    return seat_.call(memc, now, deadline, options());
  }

  /// watch_call: holds one single-key call on `memc` to the call's deadline:
  /// call_deadline() when this call started it already (cleaning a server),
  /// else its budget from now, set by the watch thread (no clock read here)
  /// unless the budget is shorter than a timeout and the first wait must be
  /// shortened now.
  [[nodiscard]] auto watch_call(memcached_st* memc) noexcept -> WatchedCall;

  /// deadline_cause: what a call that timed out at its deadline says.
  [[nodiscard]] auto deadline_cause() const -> std::string;

  /// check: the key rules and the value size, before anything reaches the
  /// wire; a failure Status, or nothing when both are fine.
  [[nodiscard]] auto check(std::string_view key, std::string_view value = {}) const
      -> std::optional<Status>;

  /// forget_avoid: the next failover route rebuilds its list of ejected
  /// servers (once per single operation; a multi-get builds it once).
  void forget_avoid() noexcept { avoid_ready_ = false; }

  /// route: where a key whose own server is `primary` goes now: there, a
  /// probe of it, `locate_avoiding(avoid)` (FailurePolicy::kFailover, when
  /// `failover` is true), or nowhere. A server whose journal holds keys is
  /// cleaned first (clean), by `deadline` (0: call_deadline()).
  template <class LocateAvoiding>
  auto route(std::size_t primary, bool failover, LocateAvoiding&& locate_avoiding,
             std::int64_t deadline = 0) -> Route {
    if (options().failure_policy == FailurePolicy::kFailover) {
      count_request();
    }
    if (caller_deadline_ != 0) [[unlikely]] {
      if (steady_now_ns() >= caller_deadline_) {
        return Route{primary, false,
                     Status(Errc::kTimeout, MEMCACHED_TIMEOUT, primary,
                            "the caller's deadline passed before the request was sent")};
      }
    }
    ServerHealth& own = health(primary);
    if (!HealthPolicy::is_ejected(own)) {
      if (!own.journal.pending()) [[likely]] {
        return Route{primary, false, Status()};
      }
      Status cleaned = clean(primary, false, deadline);
      if (cleaned.ok()) {
        return Route{primary, false, Status()};
      }
      if (cleaned.code() != Errc::kServerEjected) {
        return Route{primary, false, std::move(cleaned)};
      }
      // Held out: as if ejected.
    } else if (policy_.try_probe(own)) {
      if (own.journal.pending()) {
        Status cleaned = clean(primary, true, deadline);
        if (!cleaned.ok()) {
          return Route{primary, false, std::move(cleaned)};
        }
      }
      return Route{primary, true, Status()};
    }
    if (failover && options().failure_policy == FailurePolicy::kFailover && take_failover()) {
      if (!avoid_ready_) {
        for (std::size_t s = 0; s < avoid_.size(); ++s) {
          avoid_[s] = HealthPolicy::is_ejected(health(s)) || held(s) ? 1 : 0;
        }
        avoid_ready_ = true;
      }
      const std::size_t next = locate_avoiding(std::span<const std::uint8_t>(avoid_));
      if (next != primary && !HealthPolicy::is_ejected(health(next))) {
        own.redirected.fetch_add(1, std::memory_order_relaxed);
        if (health(next).journal.pending()) {
          Status cleaned = clean(next, false, deadline);
          if (!cleaned.ok()) {
            return Route{next, false, std::move(cleaned)};
          }
        }
        return Route{next, false, Status()};
      }
    }
    own.refused.fetch_add(1, std::memory_order_relaxed);
    if (!HealthPolicy::is_ejected(own)) {
      return Route{primary, false, held_status(primary)};
    }
    return Route{primary, false, ejected_status(primary)};
  }

  /// count_request: one more request, for the failover rate limit
  /// (ClientOptions::failover_rate): each adds that fraction of a token.
  void count_request() noexcept {
    failover_tokens_ = std::min(kFailoverBurst, failover_tokens_ + options().failover_rate);
  }

  /// notify: tells the application's observer, if any, of an event on
  /// `server`; an observer that throws is ignored.
  void notify(ServerEventKind kind, std::size_t server, std::string_view detail,
              std::uint64_t count = 0) const noexcept {
    notify(kind, members_->servers[server], detail, count);
  }

  /// notify: the same for `server`, which need not be a member (a server a
  /// reconfiguration removed).
  void notify(ServerEventKind kind, const Server& server, std::string_view detail,
              std::uint64_t count = 0) const noexcept;

  /// remember: after a write of `key` that failed on `server`, was refused
  /// there, or went to `copy_at` (a failover server's index) instead: the
  /// key is deleted on `server` (and on `copy_at`) before it serves again.
  void remember(std::size_t server, std::string_view key, std::size_t copy_at = kNoCopy);

  /// kNoCopy: remember() without a failover copy.
  static constexpr std::size_t kNoCopy = static_cast<std::size_t>(-1);

  /// held: whether server `s` is held out by its journal's overflow
  /// (JournalOverflow::kHold, before max_item_ttl has passed).
  [[nodiscard]] auto held(std::size_t s) const -> bool;

  /// clean: makes server `s` fit to serve before a request goes there: the
  /// keys its journal remembers are deleted on it (and their failover copies
  /// elsewhere), and an overflow is settled (JournalOverflow). Answers ok
  /// when it may serve; kServerEjected while it is held out or another
  /// client cleans it; kTimeout when `deadline` came first (what is left
  /// stays for the next request); the failure of a delete that failed on it
  /// (recorded in its health; `probe`: the request holds its probe lease).
  auto clean(std::size_t s, bool probe, std::int64_t deadline) -> Status;

  /// finish: libmemcached's answer `rc` to `operation` as a Status, recorded
  /// in the server's health. `cause`, when given, explains a failure;
  /// `own_handle`: the request ran on the server's own handle, whose errno
  /// then explains it.
  auto finish(const Route& route, memcached_return_t rc, std::string_view operation,
              std::string_view cause = {}, bool own_handle = true) -> Status;

  /// held_status: the failure of a request refused because its server's
  /// journal overflowed (JournalOverflow::kHold).
  [[nodiscard]] auto held_status(std::size_t server) const -> Status;

  /// ejected_status: the failure of a request refused because its server is
  /// ejected.
  [[nodiscard]] auto ejected_status(std::size_t server) const -> Status;

 private:
  static constexpr std::size_t kReplayBatch = 4096;  // journal entries taken at once
  static constexpr double kFailoverBurst = 100;      // failover tokens at most

  // Whether one more server may be ejected (the fail-open rule): fewer than
  // max_ejected_fraction of the members (at least one) are out now. Read
  // from the shared health without a lock: clients ejecting at the same
  // instant may pass it by one.
  [[nodiscard]] auto room_to_eject() const noexcept -> bool;

  // Takes one failover token if there is one (ClientOptions::failover_rate).
  auto take_failover() noexcept -> bool;

  // Whether a hold that began with a loss at `lost_at` is over.
  [[nodiscard]] auto hold_expired(std::int64_t lost_at) const noexcept -> bool;

  // One round of clean(): settles an overflow, or deletes one batch.
  auto clean_once(std::size_t s, bool probe, std::int64_t deadline) -> Status;

  // Deletes `key` on server `s` (its own handle) by `deadline`.
  auto erase(std::size_t s, std::string_view key, std::int64_t now, std::int64_t deadline)
      -> memcached_return_t;

  // Deletes the failover copy of a key cleaned on `s` (its server remembers
  // the key since the replay took it, so a failure here leaves it there).
  void erase_copy(std::size_t s, const JournalEntry& entry, std::int64_t deadline);

  // The member whose endpoint (host:port) is `endpoint`, other than `except`;
  // kNoCopy when none.
  [[nodiscard]] auto member_at(std::string_view endpoint, std::size_t except) const -> std::size_t;

  // Whether the call's deadline is the caller's (DeadlineScope), earlier
  // than its own budget.
  [[nodiscard]] auto cut_by_caller() const noexcept -> bool {
    return caller_deadline_ != 0 && call_deadline_ == caller_deadline_;
  }

  static constexpr std::int64_t kTickNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(DeadlineWatch::kTick).count();

  ConnectionPool pool_;
  HealthPolicy policy_;
  std::int64_t budget_ns_;                  // ClientOptions::call_budget()
  bool short_budget_;                       // the budget is shorter than a timeout
  bool explicit_deadline_ = short_budget_;  // a call reads the clock: short budget, or a scope
  std::int64_t caller_deadline_ = 0;        // DeadlineScope's, 0 when none
  WatchSeat seat_;
  std::int64_t call_deadline_ = 0;           // the current call's, once used
  double failover_tokens_ = kFailoverBurst;  // the failover rate limit's bucket
  const Membership* members_ = nullptr;
  std::vector<std::uint8_t> avoid_;  // per server: ejected (failover routing)
  std::vector<JournalEntry> batch_;  // the journal entries being replayed
  bool avoid_ready_ = false;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE void ClientCore::bind(const Membership& members) {
  members_ = &members;
  pool_.bind(members);
  avoid_.assign(members.size(), 0);
  avoid_ready_ = false;
}

MEMSHARD_DETAIL_INLINE auto ClientCore::deadline(std::int64_t now) const noexcept -> std::int64_t {
  const std::int64_t own = now + budget_ns_;
  return caller_deadline_ != 0 && caller_deadline_ < own ? caller_deadline_ : own;
}

MEMSHARD_DETAIL_INLINE void ClientCore::set_caller_deadline(std::int64_t deadline) noexcept {
  caller_deadline_ = deadline;
  explicit_deadline_ = short_budget_ || deadline != 0;
}

MEMSHARD_DETAIL_INLINE auto ClientCore::call_deadline() noexcept -> std::int64_t {
  if (call_deadline_ == 0) {
    call_deadline_ = deadline(steady_now_ns());
  }
  return call_deadline_;
}

MEMSHARD_DETAIL_INLINE auto ClientCore::unsent(std::size_t server) const -> Status {
  return Status(Errc::kTimeout, MEMCACHED_TIMEOUT, server,
                deadline_cause() + " before the request was sent");
}

MEMSHARD_DETAIL_INLINE auto ClientCore::watch_call(memcached_st* memc) noexcept -> WatchedCall {
  if (call_deadline_ != 0 || explicit_deadline_) [[unlikely]] {
    const std::int64_t now = steady_now_ns();
    if (call_deadline_ == 0) {
      call_deadline_ = deadline(now);
    }
    return seat_.call(memc, now, call_deadline_, options());
  }
  return seat_.call(memc, options());
}

MEMSHARD_DETAIL_INLINE auto ClientCore::deadline_cause() const -> std::string {
  if (cut_by_caller()) {
    return "the caller's deadline passed";
  }
  return "the call's deadline of " + std::to_string(options().call_budget().count()) + " ms passed";
}

MEMSHARD_DETAIL_INLINE auto ClientCore::check(std::string_view key, std::string_view value) const
    -> std::optional<Status> {
  const std::size_t max_value = options().max_value_size;
  if (value.size() <= max_value && is_valid_key(key)) {
    return std::nullopt;  // the common case, in one cheap pass
  }
  if (const auto problem = check_key(key)) {
    return Status(Errc::kInvalidKey, MEMCACHED_BAD_KEY_PROVIDED, Status::kNoServer,
                  problem->message());
  }
  if (value.size() > max_value) {
    return Status(Errc::kValueTooLarge, MEMCACHED_E2BIG, Status::kNoServer,
                  "value is " + std::to_string(value.size()) + " bytes, max_value_size is " +
                      std::to_string(max_value));
  }
  return std::nullopt;
}

MEMSHARD_DETAIL_INLINE void ClientCore::notify(ServerEventKind kind, const Server& server,
                                               std::string_view detail,
                                               std::uint64_t count) const noexcept {
  const ServerObserver& observer = options().on_server_event;
  if (!observer) {
    return;
  }
  try {
    observer(ServerEvent{kind, server, std::string(detail), count});
  } catch (...) {  // the observer's problem (or an allocation's), never the call's
  }
}

MEMSHARD_DETAIL_INLINE void ClientCore::remember(std::size_t server, std::string_view key,
                                                 std::size_t copy_at) {
  const std::size_t capacity = options().journal_capacity;
  if (capacity == 0) {
    return;
  }
  const Remembered done = health(server).journal.remember(
      key, copy_at == kNoCopy ? std::string_view() : members_->servers[copy_at].endpoint(),
      capacity, policy_.now());
  if (done.began_overflow && options().journal_overflow == JournalOverflow::kHold) [[unlikely]] {
    notify(ServerEventKind::kHeld, server, held_status(server).detail());
  }
  if (!done.replaced_copy.empty()) [[unlikely]] {
    // The key's copy moved to another failover server (the first one went
    // out too): the first keeps its older copy, so it is cleaned of the
    // key before it serves again, like the key's own server.
    if (const std::size_t first = member_at(done.replaced_copy, server); first != kNoCopy) {
      remember(first, key);
    }
  }
}

MEMSHARD_DETAIL_INLINE auto ClientCore::held(std::size_t s) const -> bool {
  const RecoveryJournal& journal = health(s).journal;
  if (!journal.pending() || options().journal_overflow == JournalOverflow::kFlush) {
    return false;
  }
  const auto [overflowed, lost_at] = journal.overflow();
  return overflowed && !hold_expired(lost_at);
}

MEMSHARD_DETAIL_INLINE auto ClientCore::clean(std::size_t s, bool probe, std::int64_t deadline)
    -> Status {
  if (deadline == 0) {
    deadline = call_deadline();
  }
  for (;;) {
    Status outcome = clean_once(s, probe, deadline);
    // More than one batch, or written meanwhile: go on.
    if (!outcome.ok() || !health(s).journal.pending()) {
      return outcome;
    }
  }
}

MEMSHARD_DETAIL_INLINE auto ClientCore::finish(const Route& route, memcached_return_t rc,
                                               std::string_view operation, std::string_view cause,
                                               bool own_handle) -> Status {
  const std::size_t server = route.server;
  ServerHealth& state = health(server);
  state.operations.fetch_add(1, std::memory_order_relaxed);
  // A bare FAILURE says no more than its errno (to_errc): the only case
  // where the handle's errno is read before the outcome is known.
  const Errc code = rc == MEMCACHED_FAILURE && cause.empty() && own_handle
                        ? to_errc(rc, pool_.last_errno(server))
                        : to_errc(rc);
  if (code == Errc::kOk && !route.probe &&
      state.consecutive_failures.load(std::memory_order_relaxed) == 0) [[likely]] {
    return Status(Errc::kOk, rc, server);  // a healthy server stays healthy: nothing to record
  }
  Status status;
  if (code != Errc::kOk) {
    std::string text(operation);
    text.append(" on ").append(members_->servers[server].endpoint()).append(": ");
    text.append(memcached_strerror(nullptr, rc));
    const int error = cause.empty() && own_handle ? pool_.last_errno(server) : 0;
    if (!cause.empty()) {
      text.append(" (").append(cause).append(")");
    } else if (error != 0) {
      text.append(" (").append(std::generic_category().message(error)).append(")");
    }
    status = Status(code, rc, server, std::move(text));
  } else {
    status = Status(Errc::kOk, rc, server);
  }
  const bool server_failure = is_server_failure(code);
  if (code == Errc::kTimeout && cut_by_caller() && steady_now_ns() + kTickNs >= call_deadline_)
      [[unlikely]] {
    // The caller's deadline, shorter than the call's own: nothing is known
    // of the server. The connection may hold half a reply: it goes.
    pool_.drop(server);
    if (route.probe) {
      HealthPolicy::release_probe(state);
    }
    return status;
  }
  if (server_failure) {
    state.errors.fetch_add(1, std::memory_order_relaxed);
    pool_.server_failed();
    pool_.drop(server);
  } else if (code == Errc::kServerError || code == Errc::kProtocolError ||
             code == Errc::kAuthFailure) {
    state.errors.fetch_add(1, std::memory_order_relaxed);
    if (code == Errc::kAuthFailure || (code == Errc::kProtocolError && own_handle)) {
      // libmemcached holds a server that refused the credentials as failed
      // until the next whole second: a fresh handle asks again at once. A
      // reply that made no sense may be followed by more of it: the
      // connection is never read again.
      pool_.drop(server);
    }
  }
  if (!server_failure && !route.probe &&
      state.consecutive_failures.load(std::memory_order_relaxed) == 0) [[likely]] {
    return status;  // a healthy server stays healthy: nothing to record (or write)
  }
  bool may_eject = true;
  if (server_failure && !route.probe && policy_.ejects_next(state)) {
    may_eject = room_to_eject();
  }
  const HealthChange change = policy_.record(state, server_failure, route.probe, may_eject);
  if (change != HealthChange::kNone) [[unlikely]] {
    static constexpr ServerEventKind kKinds[] = {
        ServerEventKind::kEjected, ServerEventKind::kEjected, ServerEventKind::kKeptIn,
        ServerEventKind::kProbeFailed, ServerEventKind::kRestored};
    notify(kKinds[static_cast<std::size_t>(change)], server, status.detail());
  }
  return status;
}

MEMSHARD_DETAIL_INLINE auto ClientCore::held_status(std::size_t server) const -> Status {
  const RecoveryJournal& journal = health(server).journal;
  return Status(Errc::kServerEjected, MEMCACHED_SUCCESS, server,
                members_->servers[server].endpoint() +
                    " is held out: " + std::to_string(journal.lost()) +
                    " writes it missed could not be remembered; it returns " +
                    (options().max_item_ttl.count() > 0
                         ? "max_item_ttl (" + std::to_string(options().max_item_ttl.count()) +
                               " s) after the last of them, or "
                         : std::string()) +
                    "once flush_server() flushes it");
}

MEMSHARD_DETAIL_INLINE auto ClientCore::ejected_status(std::size_t server) const -> Status {
  return Status(Errc::kServerEjected, MEMCACHED_SUCCESS, server,
                members_->servers[server].endpoint() + " is ejected after " +
                    std::to_string(options().failure_limit) + " consecutive failures");
}

MEMSHARD_DETAIL_INLINE auto ClientCore::room_to_eject() const noexcept -> bool {
  const std::size_t n = members_->size();
  const auto allowed = std::max<std::size_t>(
      1, static_cast<std::size_t>(options().max_ejected_fraction * static_cast<double>(n)));
  std::size_t out = 0;
  for (std::size_t s = 0; s < n && out < allowed; ++s) {
    out += HealthPolicy::is_ejected(health(s)) ? 1U : 0U;
  }
  return out < allowed;
}

MEMSHARD_DETAIL_INLINE auto ClientCore::take_failover() noexcept -> bool {
  if (failover_tokens_ < 1) {
    return false;
  }
  failover_tokens_ -= 1;
  return true;
}

MEMSHARD_DETAIL_INLINE auto ClientCore::hold_expired(std::int64_t lost_at) const noexcept -> bool {
  const auto ttl = options().max_item_ttl;
  return ttl.count() > 0 && policy_.now() - lost_at >
                                std::chrono::duration_cast<std::chrono::nanoseconds>(ttl).count();
}

MEMSHARD_DETAIL_INLINE auto ClientCore::clean_once(std::size_t s, bool probe, std::int64_t deadline)
    -> Status {
  ServerHealth& state = health(s);
  RecoveryJournal& journal = state.journal;
  if (const auto [overflowed, lost_at] = journal.overflow(); overflowed) {
    if (options().journal_overflow == JournalOverflow::kFlush) {
      memcached_st* memc = pool_.handle(s).native_handle();
      memcached_return_t rc = MEMCACHED_SUCCESS;
      {
        const WatchedCall watched = watch(memc, steady_now_ns(), deadline);
        rc = memcached_flush(memc, 0);
      }
      Status flushed = finish(Route{s, probe, Status()}, rc, "flush after journal overflow");
      if (!flushed.ok()) {
        return flushed;
      }
      state.flushes.fetch_add(1, std::memory_order_relaxed);
      journal.settle(true);
      notify(ServerEventKind::kFlushed, s, {});
      return Status(Errc::kOk, MEMCACHED_SUCCESS, s);
    }
    if (!hold_expired(lost_at)) {
      if (probe) {
        HealthPolicy::release_probe(state);
      }
      return held_status(s);
    }
    journal.settle(false);  // every value it could not remember has expired
  }
  if (!journal.take(batch_, kReplayBatch)) {
    if (probe) {
      HealthPolicy::release_probe(state);
    }
    return Status(Errc::kServerEjected, MEMCACHED_SUCCESS, s,
                  members_->servers[s].endpoint() +
                      " is being cleaned of writes it missed, by another client");
  }
  // While this replay runs (it may be long, and end at the deadline), the
  // keys it took are in no journal: the server of each failover copy
  // remembers the key first, so that it deletes the key before it serves,
  // should it serve meanwhile (a copy deleted below is deleted there once
  // more, which is harmless).
  for (const JournalEntry& entry : batch_) {
    if (!entry.copy_at.empty()) {
      if (const std::size_t c = member_at(entry.copy_at, s); c != kNoCopy) {
        remember(c, entry.key);
      }
    }
  }
  std::size_t done = 0;
  Status outcome(Errc::kOk, MEMCACHED_SUCCESS, s);
  for (; done < batch_.size(); ++done) {
    const std::int64_t now = steady_now_ns();
    if (now >= deadline) {
      if (probe) {
        HealthPolicy::release_probe(state);
      }
      outcome = Status(Errc::kTimeout, MEMCACHED_TIMEOUT, s,
                       "the call's deadline passed while " + members_->servers[s].endpoint() +
                           " was cleaned of writes it missed (" +
                           std::to_string(batch_.size() - done) + " keys left)");
      break;
    }
    JournalEntry& entry = batch_[done];
    const memcached_return_t rc = erase(s, entry.key, now, deadline);
    if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_NOTFOUND) {
      outcome = finish(Route{s, probe, Status()}, rc, "delete of a key it missed");
      if (outcome.ok()) {  // an answer that is not a failure of the server
        outcome = Status(Errc::kProtocolError, rc, s, outcome.message());
      }
      break;
    }
    state.cleaned.fetch_add(1, std::memory_order_relaxed);
    if (!entry.copy_at.empty()) {
      erase_copy(s, entry, deadline);
    }
  }
  if (done < batch_.size()) {
    batch_.erase(batch_.begin(), batch_.begin() + static_cast<std::ptrdiff_t>(done));
  } else {
    batch_.clear();
  }
  journal.give_back(batch_);
  if (done > 0) {
    notify(ServerEventKind::kCleaned, s, {}, done);
  }
  return outcome;
}

MEMSHARD_DETAIL_INLINE auto ClientCore::erase(std::size_t s, std::string_view key, std::int64_t now,
                                              std::int64_t deadline) -> memcached_return_t {
  memcached_st* memc = pool_.handle(s).native_handle();
  const WatchedCall watched = watch(memc, now, deadline);
  return delete_key(memc, key);
}

MEMSHARD_DETAIL_INLINE void ClientCore::erase_copy(std::size_t s, const JournalEntry& entry,
                                                   std::int64_t deadline) {
  const std::size_t c = member_at(entry.copy_at, s);
  if (c == kNoCopy || HealthPolicy::is_ejected(health(c))) {
    return;  // no longer a member, or out: it is cleaned when it returns
  }
  const memcached_return_t rc = erase(c, entry.key, steady_now_ns(), deadline);
  if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_NOTFOUND) {
    (void)finish(Route{c, false, Status()}, rc, "delete of a failover copy");
  }
}

MEMSHARD_DETAIL_INLINE auto ClientCore::member_at(std::string_view endpoint,
                                                  std::size_t except) const -> std::size_t {
  for (std::size_t c = 0; c < members_->size(); ++c) {
    if (c != except && members_->servers[c].endpoint() == endpoint) {
      return c;
    }
  }
  return kNoCopy;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_CLIENT_CORE_HPP_
