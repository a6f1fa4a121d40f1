// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MIGRATION_MIGRATION_HPP_
#define MEMSHARD_MIGRATION_MIGRATION_HPP_

// migration/migration.hpp: the state a live migration adds to a fleet snapshot:
// MigrationPlacement, the old placement kept next to the new one (over the
// same members), and MigrationState, the counters and tainted servers every
// client of the family shares while the migration runs.
//
// During a migration the members are the new server list followed by the
// servers that only the old list has (the retiring ones); the new locator
// places keys on the first ones, the old locator's indexes are mapped onto
// the members by host and port, so a server in both lists is one member with
// one connection and one health.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "memshard/detail/compiled.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/placement/key_prefix.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// MigrationState: the counters of one migration and its tainted servers,
/// shared by the family. Every counter is a relaxed atomic. Thread-safe.
class MigrationState {
 public:
  /// The counters, one per MigrationStats field of the same name.
  struct Counters {
    std::atomic<std::uint64_t> new_hits{0};
    std::atomic<std::uint64_t> same_owner_misses{0};
    std::atomic<std::uint64_t> fallback_hits{0};
    std::atomic<std::uint64_t> fallback_misses{0};
    std::atomic<std::uint64_t> fallback_skipped{0};
    std::atomic<std::uint64_t> copies_stored{0};
    std::atomic<std::uint64_t> copies_present{0};
    std::atomic<std::uint64_t> copies_revoked{0};
    std::atomic<std::uint64_t> copies_failed{0};
    std::atomic<std::uint64_t> copies_ttl_exact{0};
    std::atomic<std::uint64_t> copies_ttl_capped{0};
    std::atomic<std::uint64_t> copies_skipped{0};
    std::atomic<std::uint64_t> old_copies_moved{0};
    std::atomic<std::uint64_t> invalidations{0};
    std::atomic<std::uint64_t> invalidations_failed{0};
    std::atomic<std::uint64_t> counters_moved{0};
    std::atomic<std::uint64_t> leases_won{0};
    std::atomic<std::uint64_t> leases_busy{0};
  };

  /// A state for `members` members, none tainted.
  explicit MigrationState(std::size_t members)
      : taint_(std::make_unique<std::atomic<std::uint8_t>[]>(members)),
        copied_(std::make_unique<std::atomic<std::uint8_t>[]>(members)),
        size_(members) {}

  /// count: adds one to `counter`.
  static void count(std::atomic<std::uint64_t>& counter) noexcept {
    counter.fetch_add(1, std::memory_order_relaxed);
  }

  [[nodiscard]] auto counters() noexcept -> Counters& { return counters_; }

  /// tainted: whether member `m` lost an invalidation in this migration, so
  /// that its copies may be stale and it is no longer read.
  [[nodiscard]] auto tainted(std::size_t m) const noexcept -> bool {
    return m < size_ && taint_[m].load(std::memory_order_acquire) != 0;
  }

  /// taint: marks member `m` (counted once).
  void taint(std::size_t m) noexcept;

  /// copied_to: member `m` received a copy of this migration (a read-through,
  /// a move or a lease's fill): after an abort it may hold values that no
  /// writer invalidates.
  void copied_to(std::size_t m) noexcept;

  /// received_copies: whether member `m` received a copy.
  [[nodiscard]] auto received_copies(std::size_t m) const noexcept -> bool {
    return m < size_ && copied_[m].load(std::memory_order_relaxed) != 0;
  }

  /// end: the window ends (commit or abort), before the fleet publishes the
  /// snapshot without it. From then on writers no longer invalidate old
  /// copies, so a copy made across the end cannot be validated: ended()
  /// tells the copy to revoke itself.
  void end() noexcept { ended_.store(true, std::memory_order_seq_cst); }

  /// ended: whether end() was called.
  [[nodiscard]] auto ended() const noexcept -> bool {
    return ended_.load(std::memory_order_seq_cst);
  }

  /// stats: the counters as MigrationStats (`active` while the window runs).
  [[nodiscard]] auto stats() const noexcept -> MigrationStats;

 private:
  Counters counters_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> taint_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> copied_;
  std::size_t size_ = 0;
  std::atomic<std::uint64_t> tainted_{0};
  std::atomic<bool> ended_{false};
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE void MigrationState::taint(std::size_t m) noexcept {
  if (m < size_ && taint_[m].exchange(1, std::memory_order_acq_rel) == 0) {
    tainted_.fetch_add(1, std::memory_order_relaxed);
  }
}

MEMSHARD_DETAIL_INLINE void MigrationState::copied_to(std::size_t m) noexcept {
  if (m < size_) {
    copied_[m].store(1, std::memory_order_relaxed);
  }
}

MEMSHARD_DETAIL_INLINE auto MigrationState::stats() const noexcept -> MigrationStats {
  const auto get = [](const std::atomic<std::uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  const Counters& c = counters_;
  MigrationStats out;
  out.active = !ended();
  out.new_hits = get(c.new_hits);
  out.same_owner_misses = get(c.same_owner_misses);
  out.fallback_hits = get(c.fallback_hits);
  out.fallback_misses = get(c.fallback_misses);
  out.fallback_skipped = get(c.fallback_skipped);
  out.copies_stored = get(c.copies_stored);
  out.copies_present = get(c.copies_present);
  out.copies_revoked = get(c.copies_revoked);
  out.copies_failed = get(c.copies_failed);
  out.copies_ttl_exact = get(c.copies_ttl_exact);
  out.copies_ttl_capped = get(c.copies_ttl_capped);
  out.copies_skipped = get(c.copies_skipped);
  out.old_copies_moved = get(c.old_copies_moved);
  out.invalidations = get(c.invalidations);
  out.invalidations_failed = get(c.invalidations_failed);
  out.tainted_servers = get(tainted_);
  out.counters_moved = get(c.counters_moved);
  out.leases_won = get(c.leases_won);
  out.leases_busy = get(c.leases_busy);
  return out;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail

/// MigrationPlacement: the old placement of a running migration (or, in a fleet's invalidating
/// phases, the other placement of its change): its locator and server list, each of its servers'
/// member index, the options and the shared state. Immutable; the state's counters change.
template <Locator L>
struct MigrationPlacement {
  std::shared_ptr<const L> locator;    ///< the placement the migration leaves
  std::vector<Server> servers;         ///< its server list (abort_migration() goes back to it)
  std::vector<std::size_t> member_of;  ///< old server index -> member index
  MigrationOptions options;
  std::shared_ptr<detail::MigrationState> state;
  std::size_t placement_skip = 0;  ///< as FleetSnapshot::placement_skip
  /// read_through: whether a key that misses on its owner is read on its other owner and copied
  /// forward (a migration window). False for the phases of a fleet's change that only invalidate
  /// (coordination/fleet_phases.hpp): no read goes to this placement and nothing is copied to or
  /// from it; every write still deletes its key's copy there.
  bool read_through = true;
  /// deleted_first: whether a delete reaches this placement before the one that places keys.
  /// True where a window copies from (the old placement of a window, the first of a fleet's
  /// change in its phase 3); false in a fleet's phase 1, whose other placement is where the
  /// window will copy to. A delete goes to the copies' source first, so that a read-through
  /// between its two steps finds nothing to copy, or copies what its second step deletes.
  bool deleted_first = true;

  /// old_owner: the member that held the sent key `key` under the old
  /// placement.
  [[nodiscard]] auto old_owner(std::string_view key) const noexcept -> std::size_t {
    return member_of[locator->locate(detail::placement_part(key, placement_skip))];
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_MIGRATION_MIGRATION_HPP_
