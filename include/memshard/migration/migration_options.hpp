// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MIGRATION_MIGRATION_OPTIONS_HPP_
#define MEMSHARD_MIGRATION_MIGRATION_OPTIONS_HPP_

// migration/migration_options.hpp: how a live migration behaves (MigrationOptions,
// MigrationConsistency, MoveOnCopy) and what it counted (MigrationStats).
// ShardedClient::begin_migration() takes the options; migration_stats()
// answers the counters.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "memshard/detail/throw.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// MigrationConsistency: how hard a migration works against stale copies.
enum class MigrationConsistency : std::uint8_t {
  /// kFast (the default): a copy forward is validated afterwards (the old
  /// copy's cas is read again, and the copy revoked when it changed). Works
  /// while clients that know nothing of the migration read the same fleet. A
  /// concurrent reader can see a copy between its store and its revocation
  /// (every revocation is counted: MigrationStats::copies_revoked).
  kFast,
  /// kStrict: the new owner's slot is leased (meta `mg N`) before the old
  /// owner is read and filled only with the lease's cas, so no stale copy is
  /// ever stored. Only for fleets whose every reader goes through memshard: a
  /// lease's placeholder reads as an empty value to a plain `get`.
  kStrict,
};

/// MoveOnCopy: whether a copy forward deletes the old copy.
enum class MoveOnCopy : std::uint8_t {
  /// kAuto (the default): when the old server stays in the new server list
  /// (its copy would only take memory there), never for a retiring server,
  /// which keeps serving the window's fallback reads.
  kAuto,
  kAlways,  ///< delete the old copy after every copy forward
  kNever,   ///< keep old copies until they expire or are evicted
};

/// MigrationOptions: the settings of one migration (begin_migration()).
struct MigrationOptions {
  /// consistency: see MigrationConsistency.
  MigrationConsistency consistency = MigrationConsistency::kFast;
  /// move_on_copy: see MoveOnCopy.
  MoveOnCopy move_on_copy = MoveOnCopy::kAuto;
  /// copy_ttl_cap: the expiry of a copy whose source's remaining time to
  /// live cannot be read (a server without meta commands). Must be positive:
  /// a copy never gets "never expires" unless its source had it.
  std::chrono::seconds copy_ttl_cap{3600};
  /// min_copy_ttl: a source with less time left than this is not copied.
  std::chrono::seconds min_copy_ttl{1};
  /// fallback_timeout: the longest a read of the old owner may take; 0 means
  /// half of the client's connect_timeout + io_timeout. A fallback that runs
  /// out is a miss, never an error.
  std::chrono::milliseconds fallback_timeout{0};
  /// lease_ttl: kStrict: how long a lease's placeholder lives when its
  /// holder never fills it (a crashed reader); others read the old owner
  /// meanwhile.
  std::chrono::seconds lease_ttl{3};
  /// aborted_copies_flushed: the caller flushed the servers that an earlier,
  /// aborted window copied values to. Without it, begin_migration() refuses
  /// (ConfigError) a window that places keys on such a server: no writer
  /// invalidated its copies after the abort, so they would be served as
  /// fresh hits.
  bool aborted_copies_flushed = false;
};

/// validate_migration_options: throws ConfigError for options that cannot
/// work (a non-positive TTL cap, a negative minimum or timeout).
inline void validate_migration_options(const MigrationOptions& options) {
  if (options.copy_ttl_cap.count() <= 0) {
    detail::throw_config_error("copy_ttl_cap must be positive (a copy must expire)",
                               std::to_string(options.copy_ttl_cap.count()) + " s");
  }
  if (options.copy_ttl_cap.count() > 60LL * 60 * 24 * 30) {
    detail::throw_config_error("copy_ttl_cap must be at most 30 days",
                               std::to_string(options.copy_ttl_cap.count()) + " s");
  }
  if (options.min_copy_ttl.count() < 0) {
    detail::throw_config_error("min_copy_ttl must not be negative",
                               std::to_string(options.min_copy_ttl.count()) + " s");
  }
  if (options.lease_ttl.count() <= 0 || options.lease_ttl.count() > 60LL * 60 * 24 * 30) {
    detail::throw_config_error("lease_ttl must be positive and at most 30 days",
                               std::to_string(options.lease_ttl.count()) + " s");
  }
  if (options.fallback_timeout.count() < 0) {
    detail::throw_config_error("fallback_timeout must not be negative",
                               std::to_string(options.fallback_timeout.count()) + " ms");
  }
}

/// KeyMigration: what ShardedClient::migrate_key() did with one key.
enum class KeyMigration : std::uint8_t {
  kNoMigration,          ///< no migration runs
  kInvalidKey,           ///< the key breaks the key rules; nothing was sent
  kSameOwner,            ///< its owner did not change: nothing to do
  kCopied,               ///< copied to the new owner (and validated)
  kAlreadyPresent,       ///< the new owner had it already
  kNotOnOldOwner,        ///< the old owner does not have it (expired, evicted, deleted)
  kRevoked,              ///< copied, then deleted again: the old copy changed meanwhile
  kTooShort,             ///< less than min_copy_ttl left: not copied
  kOldOwnerUnavailable,  ///< the old owner is ejected, tainted or failed
  kNewOwnerFailed,       ///< the new owner is ejected or refused the copy (or the client is fenced)
};

/// to_string: a short name for a KeyMigration ("copied", ...).
[[nodiscard]] constexpr auto to_string(KeyMigration outcome) noexcept -> std::string_view {
  switch (outcome) {
    case KeyMigration::kNoMigration:
      return "no_migration";
    case KeyMigration::kInvalidKey:
      return "invalid_key";
    case KeyMigration::kSameOwner:
      return "same_owner";
    case KeyMigration::kCopied:
      return "copied";
    case KeyMigration::kAlreadyPresent:
      return "already_present";
    case KeyMigration::kNotOnOldOwner:
      return "not_on_old_owner";
    case KeyMigration::kRevoked:
      return "revoked";
    case KeyMigration::kTooShort:
      return "too_short";
    case KeyMigration::kOldOwnerUnavailable:
      return "old_owner_unavailable";
    case KeyMigration::kNewOwnerFailed:
      return "new_owner_failed";
  }
  return "unknown";
}

/// MigrationStats: what a migration counted, summed over every client of the
/// family since begin_migration(). All zero (and `active` false) when no
/// migration is running.
struct MigrationStats {
  bool active = false;                     ///< a migration is running
  std::uint64_t new_hits = 0;              ///< reads of moved keys answered by the new owner
  std::uint64_t same_owner_misses = 0;     ///< misses of keys whose owner did not change
  std::uint64_t fallback_hits = 0;         ///< moved keys found on the old owner
  std::uint64_t fallback_misses = 0;       ///< moved keys on neither owner
  std::uint64_t fallback_skipped = 0;      ///< old owner ejected, tainted or failing: a miss
  std::uint64_t copies_stored = 0;         ///< copies forward stored on the new owner
  std::uint64_t copies_present = 0;        ///< the new owner had the key already
  std::uint64_t copies_revoked = 0;        ///< copies deleted again: the old copy changed
  std::uint64_t copies_failed = 0;         ///< copies the new owner could not take
  std::uint64_t copies_ttl_exact = 0;      ///< copies with the source's exact remaining TTL
  std::uint64_t copies_ttl_capped = 0;     ///< copies with copy_ttl_cap (TTL not readable)
  std::uint64_t copies_skipped = 0;        ///< sources with less than min_copy_ttl left
  std::uint64_t old_copies_moved = 0;      ///< old copies deleted after a copy (move on copy)
  std::uint64_t invalidations = 0;         ///< old copies deleted because of a write
  std::uint64_t invalidations_failed = 0;  ///< ... that could not be sent or failed
  std::uint64_t tainted_servers = 0;       ///< old servers no longer read (a lost invalidation)
  std::uint64_t counters_moved =
      0;                          ///< keys moved before incr/decr/append/prepend/touch/replace/add
  std::uint64_t leases_won = 0;   ///< kStrict: leases this family filled
  std::uint64_t leases_busy = 0;  ///< kStrict: another reader held the lease
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_MIGRATION_MIGRATION_OPTIONS_HPP_
