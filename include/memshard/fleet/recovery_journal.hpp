// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_FLEET_RECOVERY_JOURNAL_HPP_
#define MEMSHARD_FLEET_RECOVERY_JOURNAL_HPP_

// fleet/recovery_journal.hpp: RecoveryJournal, what makes a server that was
// out come back without stale values. A write or delete that failed on a
// server, was refused because it was ejected, or went to a failover server
// instead, leaves the server's old value behind; the journal remembers the
// key (and where a failover copy went), and before the server serves again a
// client deletes those keys on it (and the copies elsewhere). A journal that
// could not remember everything (full) holds its server out until its
// overflow is settled: by a flush, or once every value it could not remember
// has expired. One per server, shared by a client family; thread-safe.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memshard/detail/compiled.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// JournalEntry: a key to delete on the journal's server, and the endpoint
/// (host:port) of the server that holds a failover copy of it, if any.
struct JournalEntry {
  std::string key;
  std::string copy_at;
};

/// Remembered: what RecoveryJournal::remember did: whether it began an
/// overflow, and the endpoint of an earlier failover copy of the key that a
/// new one replaced (that server must be cleaned of the key too).
struct Remembered {
  bool began_overflow = false;
  std::string replaced_copy;
};

/// RecoveryJournal: see the file comment.
class RecoveryJournal {
 public:
  /// pending: whether anything must happen before the server serves again
  /// (keys to delete, or an overflow to settle). One relaxed load: the check
  /// every request makes.
  [[nodiscard]] auto pending() const noexcept -> bool {
    return pending_.load(std::memory_order_acquire);
  }

  /// remember: `key` must be deleted on the server before it serves again
  /// (and on `copy_at` too, when not empty). With `capacity` keys remembered
  /// already, the key is lost instead and the journal overflows at `now`
  /// (steady clock ns).
  auto remember(std::string_view key, std::string_view copy_at, std::size_t capacity,
                std::int64_t now) -> Remembered;

  /// size: the keys remembered now (a replay under way holds some outside).
  [[nodiscard]] auto size() const -> std::size_t;

  /// lost: keys that could not be remembered since the last settle.
  [[nodiscard]] auto lost() const -> std::uint64_t;

  /// overflowed: whether a key could not be remembered, and when the last
  /// one was lost.
  [[nodiscard]] auto overflow() const -> std::pair<bool, std::int64_t>;

  /// take: moves up to `limit` entries into `out` for one client to delete;
  /// false when another client is replaying (the caller must not use the
  /// server meanwhile). True with an empty `out` when nothing is left but
  /// possibly an overflow. The taker must call give_back.
  auto take(std::vector<JournalEntry>& out, std::size_t limit) -> bool;

  /// give_back: ends a replay; `unfinished` are the entries not deleted.
  /// When the key was remembered again meanwhile, the newer entry wins; it
  /// takes the older one's failover copy only if it names none. (The taker
  /// had the servers of the copies it took remember their keys already.)
  void give_back(std::vector<JournalEntry>& unfinished) noexcept;

  /// settle: the overflow is dealt with (the server was flushed, or every
  /// lost value has expired). With `flushed`, remembered keys go too.
  void settle(bool flushed) noexcept;

 private:
  void update_pending() noexcept {
    pending_.store(overflowed_ || !entries_.empty() || replaying_, std::memory_order_release);
  }

  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::string> entries_;  // key -> failover copy's endpoint
  bool overflowed_ = false;
  bool replaying_ = false;
  std::int64_t lost_at_ = 0;
  std::uint64_t lost_ = 0;
  std::atomic<bool> pending_{false};
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto RecoveryJournal::remember(std::string_view key,
                                                      std::string_view copy_at,
                                                      std::size_t capacity, std::int64_t now)
    -> Remembered {
  Remembered out;
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = entries_.find(std::string(key));
  if (found != entries_.end()) {
    if (!copy_at.empty() && found->second != copy_at) {
      out.replaced_copy = std::move(found->second);
      found->second.assign(copy_at);
    }
  } else if (entries_.size() < capacity) {
    entries_.emplace(std::string(key), std::string(copy_at));
  } else {
    out.began_overflow = !overflowed_;
    overflowed_ = true;
    lost_at_ = now;
    ++lost_;
  }
  pending_.store(true, std::memory_order_release);
  return out;
}

MEMSHARD_DETAIL_INLINE auto RecoveryJournal::size() const -> std::size_t {
  const std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

MEMSHARD_DETAIL_INLINE auto RecoveryJournal::lost() const -> std::uint64_t {
  const std::lock_guard<std::mutex> lock(mutex_);
  return lost_;
}

MEMSHARD_DETAIL_INLINE auto RecoveryJournal::overflow() const -> std::pair<bool, std::int64_t> {
  const std::lock_guard<std::mutex> lock(mutex_);
  return {overflowed_, lost_at_};
}

MEMSHARD_DETAIL_INLINE auto RecoveryJournal::take(std::vector<JournalEntry>& out, std::size_t limit)
    -> bool {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (replaying_) {
    return false;
  }
  replaying_ = true;
  out.clear();
  auto it = entries_.begin();
  while (it != entries_.end() && out.size() < limit) {
    out.push_back(JournalEntry{it->first, std::move(it->second)});
    it = entries_.erase(it);
  }
  return true;
}

MEMSHARD_DETAIL_INLINE void RecoveryJournal::give_back(
    std::vector<JournalEntry>& unfinished) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (JournalEntry& entry : unfinished) {
    try {
      auto [it, added] = entries_.try_emplace(std::move(entry.key), std::move(entry.copy_at));
      // `entry` was moved from only if it was added.
      if (!added && it->second.empty()) {
        it->second = std::move(entry.copy_at);
      }
    } catch (...) {  // out of memory: the key is lost, as on overflow
      overflowed_ = true;
      ++lost_;
    }
  }
  unfinished.clear();
  replaying_ = false;
  update_pending();
}

MEMSHARD_DETAIL_INLINE void RecoveryJournal::settle(bool flushed) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  overflowed_ = false;
  lost_ = 0;
  if (flushed) {
    entries_.clear();
  }
  update_pending();
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_FLEET_RECOVERY_JOURNAL_HPP_
