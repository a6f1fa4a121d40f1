// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MIGRATION_MIGRATION_WINDOW_HPP_
#define MEMSHARD_MIGRATION_MIGRATION_WINDOW_HPP_

// migration/migration_window.hpp: what a client's operations do while its fleet
// is in a migration (docs/migration.md): MigrationWindow, made by an
// operation for its snapshot, decides which keys moved (two locator lookups,
// no I/O) and applies the rules of MigrationPaths to them; MigratedMultiGet
// is the second fan-out of a multi-get, to the old owners of the moved keys
// that missed, with its own scratch. ShardedClient calls them only when its
// snapshot has a migration.

#include <libmemcached-1.0/memcached.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/client/client_core.hpp"
#include "memshard/client/multi_get.hpp"
#include "memshard/client/result.hpp"
#include "memshard/fleet/fleet.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/migration/migration.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/migration/migration_paths.hpp"
#include "memshard/placement/key.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/meta_pool.hpp"
#include "memshard/wire/per_server_multi_get.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// WriteRule: what a write does to a moved key's old copy.
enum class WriteRule : std::uint8_t {
  kInvalidate,  ///< delete the old copy after the write (set, cas)
  kMoveFirst,   ///< move the key to the new owner before the write (add)
  kMoveOnMiss,  ///< the write needs the old value: when the new owner lacks
                ///< the key, move it and write again (incr, append, touch...)
};

/// MigrationWindow: see the file comment. `core`, `meta` and `snapshot` (which
/// has a migration) outlive it. Not thread-safe: one client, one thread.
template <Locator L>
class MigrationWindow {
 public:
  MigrationWindow(ClientCore& core, MetaPool& meta, const FleetSnapshot<L>& snapshot) noexcept
      : core_(&core), meta_(&meta), snapshot_(&snapshot), migration_(snapshot.migration.get()) {}

  /// paths: the rules, for this snapshot's migration.
  [[nodiscard]] auto paths() const noexcept -> MigrationPaths {
    return MigrationPaths(*core_, *meta_, migration_->options, *migration_->state,
                          snapshot_->placed);
  }

  /// strict: whether the migration is MigrationConsistency::kStrict.
  [[nodiscard]] auto strict() const noexcept -> bool {
    return migration_->options.consistency == MigrationConsistency::kStrict;
  }

  /// looks_like_placeholder: whether a value found for `key` at member `at` may be a kStrict
  /// lease's placeholder: an empty value without flags, on the key's new owner, for a key that
  /// moves (a failover server or a staying key never holds one).
  [[nodiscard]] auto looks_like_placeholder(std::string_view key, std::size_t at,
                                            std::string_view value,
                                            std::uint32_t flags) const noexcept -> bool {
    return strict() && value.empty() && flags == 0 && at == snapshot_->locate(key) &&
           migration_->old_owner(key) != at;
  }

  /// after_get: a get that read `key` at member `at` and found `item`: counts
  /// the hit, or reads a moved key's old owner and copies it forward (`item`
  /// then holds what it found, with the new owner's cas).
  void after_get(std::string_view key, std::size_t at, std::optional<Item>& item) {
    const bool placeholder = item && looks_like_placeholder(key, at, item->value, item->flags);
    if (!migration_->read_through) {
      // A phase that only invalidates: reads stay on the placement. Beside a kStrict window (a
      // fleet's phase 3), a reader there may hold a lease on this key: its placeholder is a miss,
      // and what its holder filled in since is read again.
      if (placeholder) {
        item = paths().read_unless_placeholder(at, key);
      }
      return;
    }
    MigrationState::Counters& c = migration_->state->counters();
    if (placeholder) {
      // What a lease's placeholder looks like to a plain get (a probe reads
      // the ordinary way): read it again with a lease.
      std::optional<Result<std::optional<Item>>> leased =
          strict_get(key, Route{at, false, Status()});
      if (leased) {
        item = leased->ok() ? std::move(*leased).value() : std::nullopt;
        return;
      }
    }
    if (item) {
      MigrationState::count(c.new_hits);
      return;
    }
    const std::size_t old = migration_->old_owner(key);
    if (old == at) {
      MigrationState::count(c.same_owner_misses);
      return;
    }
    MigrationPaths path = paths();
    OldRead found = path.read_old(old, key);
    if (found.kind != OldRead::Kind::kHit) {
      MigrationState::count(found.kind == OldRead::Kind::kMiss ? c.fallback_misses
                                                               : c.fallback_skipped);
      return;
    }
    MigrationState::count(c.fallback_hits);
    if (at != snapshot_->locate(key)) {
      // A failover server stands in for the ejected new owner: it gets no
      // copy (nothing would invalidate it once the owner is back).
      item.emplace(std::move(found.item));
      item->cas = 0;
      return;
    }
    const CopyOutcome copy = path.copy_forward(at, old, key, found);
    item.emplace(std::move(found.item));
    // The old owner's cas means nothing on the new one: answer the copy's, or
    // read the new owner's item (a copy, or what a writer stored meanwhile).
    item->cas = 0;
    if (copy.result == KeyMigration::kCopied && copy.cas != 0) {
      item->cas = copy.cas;
      return;
    }
    OldRead fresh = path.read(at, key);
    if (fresh.kind == OldRead::Kind::kHit) {
      item = std::move(fresh.item);
    }
  }

  /// strict_get: a get of `key` (valid) routed `route` under kStrict
  /// (MigrationPaths::strict_read); nothing when the key did not move, the
  /// route is a probe or goes nowhere, or the new owner has no meta commands:
  /// then the client reads the ordinary way.
  auto strict_get(std::string_view key, const Route& route)
      -> std::optional<Result<std::optional<Item>>> {
    if (route.probe) {  // probes go the ordinary way
      HealthPolicy::release_probe(core_->health(route.server));
      return std::nullopt;
    }
    const std::size_t old = migration_->old_owner(key);
    if (!migration_->read_through || !route.status.ok() || old == route.server ||
        route.server != snapshot_->locate(key)) {
      return std::nullopt;  // a failover route reads the ordinary way (no lease, no copy)
    }
    MigrationPaths::StrictRead read = paths().strict_read(route.server, old, key);
    if (!read.by_meta) {
      return std::nullopt;
    }
    if (!read.status.ok()) {
      return Result<std::optional<Item>>(std::move(read.status));
    }
    ServerHealth& health = core_->health(route.server);
    (read.item ? health.hits : health.misses).fetch_add(1, std::memory_order_relaxed);
    return Result<std::optional<Item>>(std::move(read.item), std::move(read.status));
  }

  /// write: runs the write `call()` on `key` and applies `rule` to the old
  /// copy of a moved key.
  /// Every step (the move, the write, the invalidation) keeps to the call's
  /// one deadline; an invalidation the deadline leaves no time for is left
  /// in the old server's recovery journal.
  /// In a phase that only invalidates, every rule is kInvalidate.
  template <class Call>
  auto write(std::string_view key, WriteRule rule, Call&& call) -> Status {
    if (!is_valid_key(key) || core_->expired()) {
      return call();  // refused before the wire, or unsent
    }
    (void)core_->call_deadline();  // the steps share the call's deadline from here
    const std::size_t old = migration_->old_owner(key);
    const std::size_t owner = snapshot_->locate(key);
    if (!migration_->read_through) {
      rule = WriteRule::kInvalidate;  // nothing moves: the other copy is only deleted
    }
    if (rule == WriteRule::kMoveFirst && old != owner) {
      (void)paths().move(owner, old, key);
      return call();
    }
    Status status = call();
    const std::size_t at = status.server() == Status::kNoServer ? owner : status.server();
    if (old == at) {
      return status;
    }
    if (rule == WriteRule::kMoveOnMiss && at == owner &&
        (status.code() == Errc::kNotFound || status.code() == Errc::kNotStored)) {
      if (paths().move(at, old, key)) {
        return call();
      }
      return status;
    }
    paths().invalidate(old, key);
    return status;
  }

  /// remove: deletes a moved key on its old owner first, then (`call()`) on
  /// the new one (in a fleet's phase 1 the other way round: MigrationPlacement::deleted_first);
  /// kNotFound only when neither had it.
  template <class Call>
  auto remove(std::string_view key, Call&& call) -> Status {
    if (!is_valid_key(key) || core_->expired()) {
      return call();
    }
    const std::size_t old = migration_->old_owner(key);
    if (old == snapshot_->locate(key)) {
      return call();
    }
    (void)core_->call_deadline();  // both deletes share the call's deadline
    if (!migration_->deleted_first) {
      // A fleet's phase 1: the other placement is where a window copies to, this one where it
      // copies from (the source first).
      Status status = call();
      const memcached_return_t second = paths().invalidate(old, key);
      if (status.code() == Errc::kNotFound && second == MEMCACHED_SUCCESS) {
        return Status(Errc::kOk, MEMCACHED_SUCCESS, status.server());  // on the other one
      }
      return status;
    }
    const memcached_return_t first = paths().invalidate(old, key);
    Status status = call();
    if (status.code() == Errc::kNotFound && first == MEMCACHED_SUCCESS) {
      return Status(Errc::kOk, MEMCACHED_SUCCESS, status.server());  // it was on the old owner
    }
    return status;
  }

  /// migrate_key: copies `key` (valid), routed `route`, to its new owner
  /// (ShardedClient::migrate_key).
  auto migrate_key(std::string_view key, const Route& route) -> KeyMigration {
    if (!route.status.ok()) {
      return KeyMigration::kNewOwnerFailed;
    }
    if (route.probe) {  // the new owner is ejected: a copy is no probe
      HealthPolicy::release_probe(core_->health(route.server));
      return KeyMigration::kNewOwnerFailed;
    }
    if (!migration_->read_through) {
      return KeyMigration::kNoMigration;  // no window is open: nothing is copied
    }
    const std::size_t old = migration_->old_owner(key);
    if (old == route.server) {
      return KeyMigration::kSameOwner;
    }
    if (route.server != snapshot_->locate(key)) {
      return KeyMigration::kNewOwnerFailed;  // a failover server gets no copy
    }
    MigrationPaths path = paths();
    const OldRead found = path.read_old(old, key);
    if (found.kind != OldRead::Kind::kHit) {
      return found.kind == OldRead::Kind::kMiss ? KeyMigration::kNotOnOldOwner
                                                : KeyMigration::kOldOwnerUnavailable;
    }
    return path.copy_forward(route.server, old, key, found).result;
  }

 private:
  ClientCore* core_;
  MetaPool* meta_;
  const FleetSnapshot<L>* snapshot_;
  const MigrationPlacement<L>* migration_;
};

/// MigratedMultiGet: a multi-get in a migration window: the placement's
/// fan-out (the client's own), then at most one more for the moved keys that
/// missed, grouped by old owner; what they find is copied forward and
/// reported as a hit (its cas the copy's, or 0). Under kStrict a moved key
/// that missed, or whose value is empty without flags (what a lease's
/// placeholder looks like to the text protocol), is read again with a lease,
/// one key after another. Its scratch is kept between calls.
class MigratedMultiGet {
 public:
  /// run: `first_round(keys, on_hit, on_failure)` is the placement's
  /// multi-get, which routes through `plan`; `on_throw()` cleans up after a
  /// callback that threw.
  template <Locator L, class FirstRound, class OnThrow, class OnHit, class OnFailure>
  void run(std::span<const std::string_view> keys, const FleetSnapshot<L>& snapshot,
           ClientCore& core, MetaPool& meta, BatchPlan& plan, PerServerMultiGet& per_server,
           FirstRound&& first_round, OnThrow&& on_throw, OnHit& on_hit, OnFailure& on_failure) {
    const MigrationPlacement<L>& migration = *snapshot.migration;
    if (!migration.read_through) {  // a phase that only invalidates
      if (migration.options.consistency != MigrationConsistency::kStrict) {
        first_round(keys, on_hit, on_failure);
        return;
      }
      // Beside a kStrict window: a lease's placeholder is a miss (MigrationWindow::after_get).
      const MigrationWindow<L> window(core, meta, snapshot);
      MigrationPaths path = window.paths();
      auto hit = [&](std::size_t index, const ItemView& item) {
        const std::size_t at = plan.server_of[index];
        if (window.looks_like_placeholder(keys[index], at, item.value, item.flags)) {
          if (const std::optional<Item> now = path.read_unless_placeholder(at, keys[index])) {
            on_hit(index, ItemView{now->value, now->flags, now->cas});
          }
          return;
        }
        on_hit(index, item);
      };
      first_round(keys, hit, on_failure);
      return;
    }
    MigrationState::Counters& c = migration.state->counters();
    const MigrationWindow<L> window(core, meta, snapshot);
    const bool strict = window.strict();
    seen_.assign(keys.size(), 0);
    auto hit = [&](std::size_t index, const ItemView& item) {
      if (strict && item.value.empty() && item.flags == 0 &&
          migration.old_owner(keys[index]) != plan.server_of[index]) {
        return;  // maybe a placeholder: read again below
      }
      seen_[index] = 1;
      MigrationState::count(c.new_hits);
      on_hit(index, item);
    };
    auto failure = [&](std::size_t index, const Status& status) {
      seen_[index] = 1;
      on_failure(index, status);
    };
    first_round(keys, hit, failure);
    // The moved keys that missed.
    moved_keys_.clear();
    moved_index_.clear();
    moved_to_.clear();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (seen_[i] != 0 || plan.server_of[i] == BatchPlan::kNone) {
        continue;
      }
      const std::size_t at = plan.server_of[i];
      if (migration.old_owner(keys[i]) == at) {
        MigrationState::count(c.same_owner_misses);
        continue;
      }
      moved_keys_.push_back(keys[i]);
      moved_index_.push_back(i);
      moved_to_.push_back(at);
    }
    if (moved_keys_.empty()) {
      return;
    }
    MigrationPaths path = window.paths();
    if (strict) {
      strict_round(path, snapshot, on_hit, on_failure);
      return;
    }
    plan.reset(moved_keys_.size(), snapshot.members.size());
    for (std::size_t j = 0; j < moved_keys_.size(); ++j) {
      const std::size_t old = migration.old_owner(moved_keys_[j]);
      if (migration.state->tainted(old)) {
        MigrationState::count(c.fallback_skipped);
        continue;
      }
      if (plan.probing(old)) {
        plan.assign(j, Route{old, false, Status()});
        continue;
      }
      Route route = core.route(old, false, [old](auto) { return old; });
      if (!route.status.ok()) {
        MigrationState::count(c.fallback_skipped);
        continue;
      }
      plan.assign(j, route);
    }
    if (plan.used.empty()) {
      return;
    }
    found_.assign(moved_keys_.size(), OldRead{});
    auto old_hit = [this](std::size_t j, const ItemView& item) {
      OldRead& slot = found_[j];
      slot.kind = OldRead::Kind::kHit;
      slot.item.value.assign(item.value);
      slot.item.flags = item.flags;
      slot.item.cas = item.cas;
    };
    auto old_failure = [this](std::size_t j, const Status&) {
      if (found_[j].kind != OldRead::Kind::kHit) {
        found_[j].kind = OldRead::Kind::kSkipped;
      }
    };
    try {
      per_server.run(std::span<const std::string_view>(moved_keys_), plan, path.fallback_deadline(),
                     core, old_hit, old_failure);
    } catch (...) {
      on_throw();
      throw;
    }
    for (std::size_t j = 0; j < moved_keys_.size(); ++j) {
      if (plan.server_of[j] == BatchPlan::kNone) {
        continue;
      }
      OldRead& slot = found_[j];
      if (slot.kind != OldRead::Kind::kHit) {
        MigrationState::count(slot.kind == OldRead::Kind::kMiss ? c.fallback_misses
                                                                : c.fallback_skipped);
        continue;
      }
      MigrationState::count(c.fallback_hits);
      std::uint64_t cas = 0;
      if (moved_to_[j] == snapshot.locate(moved_keys_[j])) {  // a failover server gets no copy
        cas = path.copy_forward(moved_to_[j], plan.server_of[j], moved_keys_[j], slot).cas;
      }
      on_hit(moved_index_[j], ItemView{slot.item.value, slot.item.flags, cas});
    }
  }

 private:
  // The moved keys of a kStrict multi-get, one strict read each (a lease
  // cannot be taken by a text multi-get); new owners without meta commands
  // are read the kFast way.
  template <Locator L, class OnHit, class OnFailure>
  void strict_round(MigrationPaths& path, const FleetSnapshot<L>& snapshot, OnHit& on_hit,
                    OnFailure& on_failure) {
    for (std::size_t j = 0; j < moved_keys_.size(); ++j) {
      const std::string_view key = moved_keys_[j];
      const std::size_t old = snapshot.migration->old_owner(key);
      // A failover server gets no lease and no copy: the old copy is read.
      const bool placed = moved_to_[j] == snapshot.locate(key);
      MigrationPaths::StrictRead read;
      read.by_meta = false;
      if (placed) {
        read = path.strict_read(moved_to_[j], old, key);
      }
      if (!read.by_meta) {
        OldRead found = path.read_old(old, key);
        if (found.kind != OldRead::Kind::kHit) {
          continue;
        }
        const std::uint64_t cas = placed ? path.copy_forward(moved_to_[j], old, key, found).cas : 0;
        read.item = std::move(found.item);
        read.item->cas = cas;
      } else if (!read.status.ok()) {
        on_failure(moved_index_[j], read.status);
        continue;
      }
      if (read.item) {
        on_hit(moved_index_[j], ItemView{read.item->value, read.item->flags, read.item->cas});
      }
    }
  }

  std::vector<std::uint8_t> seen_;  // per key: answered by the first round
  std::vector<std::string_view> moved_keys_;
  std::vector<std::size_t> moved_index_;  // its index in the request
  std::vector<std::size_t> moved_to_;     // its new owner (where it was read)
  std::vector<OldRead> found_;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_MIGRATION_MIGRATION_WINDOW_HPP_
