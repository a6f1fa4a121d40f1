// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MIGRATION_MIGRATION_PATHS_HPP_
#define MEMSHARD_MIGRATION_MIGRATION_PATHS_HPP_

// migration/migration_paths.hpp: MigrationPaths, what an operation does in a
// migration window once it knows a key's old and new owner (two members):
// read the old owner, copy forward with add and validate the copy, move a key
// before an operation that needs its base, invalidate the old copy after a
// write. The rules and the hazards they answer are in docs/migration.md.
//
// Every request goes through the ClientCore like any other (the health of the
// servers, ejection, probes), with two differences: a read of the old owner
// is bounded by the migration's fallback timeout, and its failure is a miss,
// never an error.
//
// Requests go over the meta protocol (MetaPool) where the server has it:
// `mg <key> v f t c` reads value, flags, cas and the exact remaining TTL in
// one round trip; `ms <key> ... ME T F c` adds the copy and answers its cas;
// `md <key> C<cas>` deletes only the copy this client stored (a revocation)
// or the old copy it read (a move), never a newer value. A server without
// meta commands, or a client with SASL credentials (the meta connection
// speaks text, which memcached -S refuses), gets the same steps through
// libmemcached, with the TTL cap.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string_view>
#include <utility>

#include "memshard/client/client_core.hpp"
#include "memshard/client/result.hpp"
#include "memshard/detail/clock.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/migration/migration.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/connection_pool.hpp"
#include "memshard/wire/detail/meta_protocol.hpp"
#include "memshard/wire/detail/metadump.hpp"
#include "memshard/wire/meta_connection.hpp"
#include "memshard/wire/meta_pool.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// OldRead: what a read of the old owner found.
struct OldRead {
  enum class Kind : std::uint8_t {
    kHit,      ///< found: `item`, and `ttl` when the server told it
    kMiss,     ///< not there
    kSkipped,  ///< not read: the server is tainted, ejected or failed
  };
  Kind kind = Kind::kMiss;
  Item item;
  /// The remaining time to live in seconds, -1 for "never expires"; empty
  /// when the server could not say.
  std::optional<std::int64_t> ttl;
};

/// CopyOutcome: what copy_forward() did: a KeyMigration (kCopied,
/// kAlreadyPresent, kRevoked, kTooShort or kNewOwnerFailed) and, for
/// kCopied, the copy's cas when the server told it (else 0).
struct CopyOutcome {
  KeyMigration result = KeyMigration::kNewOwnerFailed;
  std::uint64_t cas = 0;
};

/// MigrationPaths: see the file comment. A short-lived view made by an
/// operation: `core`, `meta`, `options` and `state` outlive it, and the first
/// `placed` members are the new placement's. Not thread-safe.
class MigrationPaths {
 public:
  MigrationPaths(ClientCore& core, MetaPool& meta, const MigrationOptions& options,
                 MigrationState& state, std::size_t placed) noexcept
      : core_(&core), meta_(&meta), options_(&options), state_(&state), placed_(placed) {}

  [[nodiscard]] auto state() noexcept -> MigrationState& { return *state_; }
  [[nodiscard]] auto counters() noexcept -> MigrationState::Counters& { return state_->counters(); }

  /// fallback_deadline: when a read of an old owner that starts now must
  /// end: the fallback timeout from now, or the call's deadline when that
  /// comes first.
  [[nodiscard]] auto fallback_deadline() noexcept -> std::int64_t;

  /// read_old: reads `key` on old owner `old` within the fallback timeout.
  auto read_old(std::size_t old, std::string_view key) -> OldRead;

  /// read: reads `key` on member `s` (a new owner) within the client's
  /// timeouts.
  auto read(std::size_t s, std::string_view key) -> OldRead { return fetch(s, key, io_deadline()); }

  /// copy_forward: stores the old owner's `found` item on `fresh` with add,
  /// then validates it: when the old copy changed or vanished meanwhile, the
  /// copy is deleted again (a writer invalidated it); otherwise, by the move
  /// rule, the old copy is deleted.
  auto copy_forward(std::size_t fresh, std::size_t old, std::string_view key, const OldRead& found)
      -> CopyOutcome;

  /// move: before an operation that needs the key's current value on the new
  /// owner (incr, append, replace, touch, add): reads the old copy, copies it
  /// to `fresh`, validates the copy as copy_forward() does (a delete or write
  /// that finished meanwhile revokes it: the operation then finds no value,
  /// as it would after that delete), and deletes the old one whatever the
  /// move rule says (a counter always moves). Answers whether a value was
  /// moved.
  auto move(std::size_t fresh, std::size_t old, std::string_view key) -> bool;

  /// invalidate: deletes the old copy after a write; answers the delete's
  /// code. A deletion that fails taints the old server (it is not read again
  /// in this migration, since its copy may now be stale), and one that fails
  /// or that the call's deadline left no time for leaves the key in the old
  /// server's recovery journal, which deletes it before the server serves
  /// again, in this window or after an abort.
  auto invalidate(std::size_t old, std::string_view key) -> memcached_return_t;

  /// StrictRead: what strict_read() found: the item, or a failure of the new
  /// owner; `by_meta` false when the new owner has no meta commands (then
  /// nothing was decided: the caller reads the kFast way).
  struct StrictRead {
    Status status;
    std::optional<Item> item;
    bool by_meta = true;
  };

  /// strict_read: a read of a moved key under MigrationConsistency::kStrict.
  /// `mg <key> N<lease> v f t c` on the new owner `fresh`: a value is the
  /// answer; a lease this call won (W) reads the old owner and fills the
  /// lease with `ms <key> C<lease cas>` (a writer who deleted or set the key
  /// meanwhile removed the lease, so the fill fails: no stale copy), or gives
  /// it back when the old owner has nothing; a lease another reader holds (Z)
  /// reads the old owner without copying.
  auto strict_read(std::size_t fresh, std::size_t old, std::string_view key) -> StrictRead;

  /// read_unless_placeholder: `key` on member `s` read again by meta, for a reader beside a
  /// kStrict window (a fleet's phase 3) whose plain get found what a lease's placeholder looks
  /// like (an empty value without flags): the item when it is a real one now (the lease's holder
  /// may have filled it since the first read), nothing when it is a placeholder (a miss to the
  /// reader), gone, or cannot be read by meta.
  auto read_unless_placeholder(std::size_t s, std::string_view key) -> std::optional<Item> {
    Fetched own = fetch_full(s, key, io_deadline());
    if (!own.by_meta || own.reply.win_sent || own.read.kind != OldRead::Kind::kHit) {
      return std::nullopt;
    }
    return std::move(own.read.item);
  }

  /// remove: deletes `key` on member `s` (only while its cas is `cas`, when
  /// not 0 and the server has meta commands): MEMCACHED_SUCCESS,
  /// MEMCACHED_NOTFOUND, MEMCACHED_DATA_EXISTS (another value), or a failure.
  auto remove(std::size_t s, std::string_view key, std::uint64_t cas) -> memcached_return_t {
    return delete_on(s, key, cas).rc;
  }

 private:
  using Deadline = std::int64_t;  // steady clock ns

  // Whether the copy of `found` just stored may stay: a writer deletes the
  // old copy before the new one, so an old copy that is unchanged now means
  // no write has finished since the read; and the window has not ended (from
  // then on writers no longer delete old copies, so the check proves nothing).
  auto still_valid(std::size_t old, std::string_view key, const OldRead& found) -> bool;

  void count_fallback(const OldRead& found) noexcept;

  [[nodiscard]] auto lease_seconds() const noexcept -> std::int32_t {
    return static_cast<std::int32_t>(options_->lease_ttl.count());
  }

  // Every request of a call ends by the call's one deadline (call_timeout,
  // or the caller's DeadlineScope).
  [[nodiscard]] auto io_deadline() noexcept -> Deadline { return core_->call_deadline(); }

  // The answer to one request: libmemcached's code for it (a meta reply
  // mapped), the meta reply, and the Status finish() made of it.
  struct Answer {
    memcached_return_t rc = MEMCACHED_SUCCESS;
    MetaReply reply;
    Status status;
    bool sent = true;  ///< false: the deadline had passed before it was sent
  };

  // One request to member `s` through its health: over the meta protocol
  // when it has it (`by_meta`), else through libmemcached (`by_handle`), both
  // bounded by `deadline`.
  template <class ByMeta, class ByHandle>
  auto request(std::size_t s, std::string_view operation, Deadline deadline, ByMeta&& by_meta,
               ByHandle&& by_handle) -> Answer {
    if (steady_now_ns() >= deadline) {
      // An earlier step took the call's time: not sent, nothing recorded.
      return {MEMCACHED_TIMEOUT, MetaReply{}, core_->unsent(s), false};
    }
    Route route = core_->route(s, false, [s](auto) { return s; });
    if (!route.status.ok()) {
      return {MEMCACHED_SERVER_TEMPORARILY_DISABLED, MetaReply{}, std::move(route.status)};
    }
    // memcached -S refuses text commands, and the meta connection cannot
    // authenticate: with SASL every request goes through libmemcached.
    if (!core_->options().sasl && meta_->supports_meta(s)) {
      const MetaDeadline until{std::chrono::nanoseconds(deadline)};
      MetaStatus connected;
      MetaConnection& link = meta_->connection(s, until, connected);
      MetaOutcome outcome = connected.ok() ? by_meta(link, until) : MetaOutcome{connected, {}};
      if ((outcome.ok() && outcome.reply.kind == MetaReplyKind::kError) ||
          outcome.status.code == MetaErrc::kNoMetaSupport) {
        meta_->mark_no_meta(s);  // memcached before 1.6: libmemcached from now on
      } else {
        const memcached_return_t rc = to_memcached_return(outcome.status, outcome.reply.kind);
        Status status = core_->finish(route, rc, operation, outcome.status.message, false);
        return {rc, std::move(outcome.reply), std::move(status)};
      }
    }
    memcached_st* memc = core_->pool().handle(s).native_handle();
    memcached_return_t rc = MEMCACHED_SUCCESS;
    {
      // Held to the deadline whatever the server does (deadline_watch.hpp).
      const WatchedCall watched = core_->watch(memc, steady_now_ns(), deadline);
      rc = by_handle(memc);
    }
    Status status = core_->finish(route, rc, operation);
    return {rc, MetaReply{}, std::move(status)};
  }

  // remove(), with the whole answer.
  auto delete_on(std::size_t s, std::string_view key, std::uint64_t cas) -> Answer;

  // What fetch_full() read: the item (OldRead), the meta reply's flags
  // (lease W, Z), the Status of the request and whether it went by meta.
  struct Fetched {
    OldRead read;
    MetaReply reply;
    Status status;
    bool by_meta = false;
  };

  // Reads `key` on `s`: value, flags, cas, and the TTL where meta tells it;
  // `lease`: vivify a missing key for that many seconds (meta only).
  auto fetch_full(std::size_t s, std::string_view key, Deadline deadline,
                  std::optional<std::int32_t> lease = std::nullopt) -> Fetched;

  auto fetch(std::size_t s, std::string_view key, Deadline deadline) -> OldRead {
    return std::move(fetch_full(s, key, deadline).read);
  }

  // add of a copy on `s`; MEMCACHED_NOTSTORED when the key is there already.
  // `cas` gets the copy's cas where meta tells it.
  auto add(std::size_t s, std::string_view key, const Item& item, std::time_t exptime,
           std::uint64_t& cas) -> memcached_return_t;

  // The exptime of a copy of `found`: its exact remaining TTL, else the cap;
  // nothing when too little is left.
  [[nodiscard]] auto copy_exptime(const OldRead& found) const -> std::optional<std::time_t>;

  // Whether a copy forward deletes the old copy (MoveOnCopy).
  [[nodiscard]] auto moves(std::size_t old) const noexcept -> bool;

  ClientCore* core_;
  MetaPool* meta_;
  const MigrationOptions* options_;
  MigrationState* state_;
  std::size_t placed_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto MigrationPaths::fallback_deadline() noexcept -> std::int64_t {
  std::chrono::milliseconds timeout = options_->fallback_timeout;
  if (timeout.count() == 0) {
    timeout = (core_->options().connect_timeout + core_->options().io_timeout) / 2;
  }
  const std::int64_t own =
      steady_now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  return std::min(own, core_->call_deadline());
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::read_old(std::size_t old, std::string_view key)
    -> OldRead {
  if (state_->tainted(old)) {
    return OldRead{OldRead::Kind::kSkipped, {}, std::nullopt};
  }
  return fetch(old, key, fallback_deadline());
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::copy_forward(std::size_t fresh, std::size_t old,
                                                         std::string_view key, const OldRead& found)
    -> CopyOutcome {
  MigrationState::Counters& c = counters();
  const std::optional<std::time_t> exptime = copy_exptime(found);
  if (!exptime) {
    MigrationState::count(c.copies_skipped);
    return {KeyMigration::kTooShort, 0};
  }
  std::uint64_t copy_cas = 0;
  const memcached_return_t added = add(fresh, key, found.item, *exptime, copy_cas);
  if (added == MEMCACHED_NOTSTORED) {
    MigrationState::count(c.copies_present);
    return {KeyMigration::kAlreadyPresent, 0};
  }
  if (!memcached_success(added)) {
    MigrationState::count(c.copies_failed);
    return {KeyMigration::kNewOwnerFailed, 0};
  }
  state_->copied_to(fresh);
  MigrationState::count(c.copies_stored);
  MigrationState::count(found.ttl ? c.copies_ttl_exact : c.copies_ttl_capped);
  if (!still_valid(old, key, found)) {
    (void)remove(fresh, key, copy_cas);
    MigrationState::count(c.copies_revoked);
    return {KeyMigration::kRevoked, 0};
  }
  if (moves(old) && remove(old, key, found.item.cas) == MEMCACHED_SUCCESS) {
    MigrationState::count(c.old_copies_moved);
  }
  return {KeyMigration::kCopied, copy_cas};
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::move(std::size_t fresh, std::size_t old,
                                                 std::string_view key) -> bool {
  const OldRead found = read_old(old, key);
  if (found.kind != OldRead::Kind::kHit) {
    if (found.kind == OldRead::Kind::kSkipped) {
      (void)invalidate(old, key);  // journals it when the old copy cannot be reached
    }
    return false;
  }
  bool moved = false;
  if (const std::optional<std::time_t> exptime = copy_exptime(found)) {
    std::uint64_t copy_cas = 0;
    moved = memcached_success(add(fresh, key, found.item, *exptime, copy_cas));
    if (moved) {
      state_->copied_to(fresh);
      if (still_valid(old, key, found)) {
        MigrationState::count(counters().counters_moved);
      } else {
        (void)remove(fresh, key, copy_cas);
        MigrationState::count(counters().copies_revoked);
        moved = false;
      }
    }
  }
  (void)invalidate(old, key);
  return moved;
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::invalidate(std::size_t old, std::string_view key)
    -> memcached_return_t {
  MigrationState::Counters& c = counters();
  MigrationState::count(c.invalidations);
  const Answer answer = delete_on(old, key, 0);
  if (answer.rc != MEMCACHED_SUCCESS && answer.rc != MEMCACHED_NOTFOUND) {
    MigrationState::count(c.invalidations_failed);
    core_->remember(old, key);
    if (answer.sent || core_->options().journal_capacity == 0) {
      state_->taint(old);
    }
  }
  return answer.rc;
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::strict_read(std::size_t fresh, std::size_t old,
                                                        std::string_view key) -> StrictRead {
  MigrationState::Counters& c = counters();
  StrictRead out;
  Fetched own = fetch_full(fresh, key, io_deadline(), lease_seconds());
  if (!own.by_meta && own.read.kind != OldRead::Kind::kSkipped) {
    out.by_meta = false;
    return out;
  }
  if (own.read.kind == OldRead::Kind::kSkipped) {
    out.status = std::move(own.status);
    return out;
  }
  out.status = Status(Errc::kOk, MEMCACHED_SUCCESS, fresh);
  const bool won = own.reply.won;
  if (own.read.kind == OldRead::Kind::kHit && !won && !own.reply.win_sent) {
    MigrationState::count(c.new_hits);  // a real value
    out.item = std::move(own.read.item);
    return out;
  }
  if (!won) {  // another reader holds the lease: read, never copy
    MigrationState::count(c.leases_busy);
    const OldRead found = read_old(old, key);
    count_fallback(found);
    if (found.kind == OldRead::Kind::kHit) {
      out.item = found.item;
      out.item->cas = 0;
    }
    return out;
  }
  const std::uint64_t lease_cas = own.reply.cas.value_or(0);
  const OldRead found = read_old(old, key);
  count_fallback(found);
  const std::optional<std::time_t> exptime =
      found.kind == OldRead::Kind::kHit ? copy_exptime(found) : std::nullopt;
  if (!exptime) {
    if (found.kind == OldRead::Kind::kHit) {
      MigrationState::count(c.copies_skipped);
    }
    (void)remove(fresh, key, lease_cas);  // give the lease back
    if (found.kind == OldRead::Kind::kHit) {
      out.item = found.item;
      out.item->cas = 0;
    }
    return out;
  }
  MigrationState::count(c.leases_won);
  out.item = found.item;
  out.item->cas = 0;
  Answer filled = request(
      fresh, "set", io_deadline(),
      [&](MetaConnection& link, MetaDeadline until) {
        return link.set(key, found.item.value,
                        MetaSetFlags{.ttl = static_cast<std::int32_t>(*exptime),
                                     .client_flags = found.item.flags,
                                     .cas = lease_cas,
                                     .return_cas = true},
                        until);
      },
      [](memcached_st*) { return MEMCACHED_NOT_SUPPORTED; });
  if (filled.rc == MEMCACHED_SUCCESS) {
    state_->copied_to(fresh);
    MigrationState::count(c.copies_stored);
    MigrationState::count(found.ttl ? c.copies_ttl_exact : c.copies_ttl_capped);
    out.item->cas = filled.reply.cas.value_or(0);
    if (moves(old) && remove(old, key, found.item.cas) == MEMCACHED_SUCCESS) {
      MigrationState::count(c.old_copies_moved);
    }
  } else if (filled.rc == MEMCACHED_DATA_EXISTS || filled.rc == MEMCACHED_NOTFOUND) {
    MigrationState::count(c.copies_revoked);  // a writer took the lease away
  } else {
    MigrationState::count(c.copies_failed);
  }
  return out;
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::still_valid(std::size_t old, std::string_view key,
                                                        const OldRead& found) -> bool {
  const OldRead again = fetch(old, key, fallback_deadline());
  return again.kind == OldRead::Kind::kHit && again.item.cas == found.item.cas && !state_->ended();
}

MEMSHARD_DETAIL_INLINE void MigrationPaths::count_fallback(const OldRead& found) noexcept {
  MigrationState::Counters& c = counters();
  MigrationState::count(found.kind == OldRead::Kind::kHit    ? c.fallback_hits
                        : found.kind == OldRead::Kind::kMiss ? c.fallback_misses
                                                             : c.fallback_skipped);
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::delete_on(std::size_t s, std::string_view key,
                                                      std::uint64_t cas) -> Answer {
  MetaDeleteFlags flags;
  if (cas != 0) {
    flags.cas = cas;
  }
  return request(
      s, "delete", io_deadline(),
      [&](MetaConnection& link, MetaDeadline deadline) {
        return link.remove(key, flags, deadline);
      },
      [&](memcached_st* memc) { return delete_key(memc, key); });
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::fetch_full(std::size_t s, std::string_view key,
                                                       Deadline deadline,
                                                       std::optional<std::int32_t> lease)
    -> Fetched {
  Fetched out;
  bool found = false;
  bool by_handle = false;
  MetaGetFlags flags{.value = true, .ttl = true, .client_flags = true, .cas = true};
  flags.vivify_ttl = lease;
  Answer answer = request(
      s, "get", deadline,
      [&](MetaConnection& link, MetaDeadline until) { return link.get(key, flags, until); },
      [&](memcached_st* memc) {
        by_handle = true;
        const char* keys[] = {key.data()};
        const std::size_t lengths[] = {key.size()};
        memcached_return_t code = memcached_mget(memc, keys, lengths, 1);
        if (memcached_success(code)) {
          code = ConnectionPool::fetch_all(
              core_->pool().handle(s), [&](std::string_view, const memcached_result_st& result) {
                found = true;
                out.read.item.value.assign(memcached_result_value(&result),
                                           memcached_result_length(&result));
                out.read.item.flags = memcached_result_flags(&result);
                out.read.item.cas = memcached_result_cas(&result);
              });
        }
        return code == MEMCACHED_SUCCESS && !found ? MEMCACHED_NOTFOUND : code;
      });
  out.by_meta = !by_handle && answer.rc != MEMCACHED_SERVER_TEMPORARILY_DISABLED;
  out.status = std::move(answer.status);
  if (answer.rc == MEMCACHED_NOTFOUND) {
    out.read.kind = OldRead::Kind::kMiss;
  } else if (answer.rc != MEMCACHED_SUCCESS) {
    out.read.kind = OldRead::Kind::kSkipped;
  } else {
    out.read.kind = OldRead::Kind::kHit;
    if (answer.reply.kind == MetaReplyKind::kValue) {
      out.read.item.value = std::move(answer.reply.value);
      out.read.item.flags = answer.reply.client_flags.value_or(0);
      out.read.item.cas = answer.reply.cas.value_or(0);
      out.read.ttl = answer.reply.ttl;
    }
  }
  out.reply = std::move(answer.reply);
  return out;
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::add(std::size_t s, std::string_view key,
                                                const Item& item, std::time_t exptime,
                                                std::uint64_t& cas) -> memcached_return_t {
  const Answer answer = request(
      s, "add", io_deadline(),
      [&](MetaConnection& link, MetaDeadline until) {
        return link.set(key, item.value,
                        MetaSetFlags{.ttl = static_cast<std::int32_t>(exptime),
                                     .client_flags = item.flags,
                                     .mode = MetaSetMode::kAdd,
                                     .return_cas = true},
                        until);
      },
      [&](memcached_st* memc) {
        const memcached_return_t code =
            memcached_add(memc, key.data(), key.size(), item.value.data(), item.value.size(),
                          exptime, item.flags);
        return code == MEMCACHED_DATA_EXISTS ? MEMCACHED_NOTSTORED : code;
      });
  cas = answer.reply.cas.value_or(0);
  return answer.rc;
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::copy_exptime(const OldRead& found) const
    -> std::optional<std::time_t> {
  if (!found.ttl) {
    return static_cast<std::time_t>(options_->copy_ttl_cap.count());
  }
  const std::int64_t ttl = *found.ttl;
  if (ttl < 0) {
    return 0;  // the source never expires, so neither does its copy
  }
  if (ttl == 0 || ttl < options_->min_copy_ttl.count()) {
    return std::nullopt;
  }
  // Over 30 days memcached reads an exptime as a date (on the client's clock
  // here: the meta reply tells no server time).
  return static_cast<std::time_t>(
      exptime_for_copy(std::chrono::seconds{ttl}, static_cast<std::int64_t>(std::time(nullptr))));
}

MEMSHARD_DETAIL_INLINE auto MigrationPaths::moves(std::size_t old) const noexcept -> bool {
  switch (options_->move_on_copy) {
    case MoveOnCopy::kAlways:
      return true;
    case MoveOnCopy::kNever:
      return false;
    case MoveOnCopy::kAuto:
      break;
  }
  return old < placed_;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_MIGRATION_MIGRATION_PATHS_HPP_
