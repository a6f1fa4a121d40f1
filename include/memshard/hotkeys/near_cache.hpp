// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_HOTKEYS_NEAR_CACHE_HPP_
#define MEMSHARD_HOTKEYS_NEAR_CACHE_HPP_

// hotkeys/near_cache.hpp: NearCache, an in-process copy of a client family's hot keys
// (ClientOptions::near_cache, with ClientOptions::hot_keys): a get of a hot key is answered from
// it while its copy is younger than `ttl`; an older copy is checked with a cas-only meta get
// (`mg <key> c`: no value crosses the wire when the item is unchanged) and served again, or
// read anew. The copy's age counts from the moment its read began, so a write made by another
// process is served at most `ttl` after it was made (the staleness bound). A write or a delete
// of the key through the family drops the copy at once, and a read that began before it does
// not store its answer (each key's version moves on at every drop).
//
// Which keys: the family's hot keys of the last window (HotKeyWatch), admitted once a window;
// a key that cooled is dropped. Bounded in bytes: a value that would take the copies past
// max_bytes is not kept. Never used in a migration window or by a fenced fleet member (the
// client does not ask it then).

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "memshard/client/client_core.hpp"
#include "memshard/client/result.hpp"
#include "memshard/hotkeys/detail/meta_call.hpp"
#include "memshard/hotkeys/near_cache_options.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/meta_protocol.hpp"
#include "memshard/wire/meta_connection.hpp"
#include "memshard/wire/meta_pool.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

namespace detail {

/// NearCache: see the file comment. Thread-safe (a family's clients share it).
class NearCache {
 public:
  explicit NearCache(const NearCacheOptions& options)
      : ttl_ns_(std::chrono::nanoseconds(options.ttl).count()), max_bytes_(options.max_bytes) {}

  /// Found: a hot key's copy: `item` when it holds one (fresh: younger than ttl), and the
  /// version a read of the key stores its answer under.
  struct Found {
    std::optional<Item> item;
    bool fresh = false;
    std::uint64_t version = 0;
  };

  /// find: the copy of the sent key `key` at `now_ns`, or nothing when the key is not hot.
  [[nodiscard]] auto find(std::string_view key, std::int64_t now_ns) const -> std::optional<Found> {
    const Shard& shard = shard_of(key);
    const std::shared_lock<std::shared_mutex> lock(shard.mutex);
    const auto at = shard.entries.find(key);
    if (at == shard.entries.end()) {
      return std::nullopt;
    }
    const Entry& entry = at->second;
    Found found;
    found.version = entry.version;
    if (entry.held) {
      found.item = Item{entry.value, entry.flags, entry.cas};
      found.fresh = now_ns - entry.read_at < ttl_ns_;
    }
    return found;
  }

  /// store: keeps `item` (nothing: a miss) as the copy of `key`, read from `read_at`, unless the
  /// key cooled or was written since `version` was found, or the value does not fit.
  void store(std::string_view key, const std::optional<Item>& item, std::uint64_t version,
             std::int64_t read_at) {
    Shard& shard = shard_of(key);
    const std::unique_lock<std::shared_mutex> lock(shard.mutex);
    const auto at = shard.entries.find(key);
    if (at == shard.entries.end() || at->second.version != version) {
      return;
    }
    Entry& entry = at->second;
    release(entry);
    if (!item || !reserve(item->value.size())) {
      return;
    }
    entry.value = item->value;
    entry.flags = item->flags;
    entry.cas = item->cas;
    entry.read_at = read_at;
    entry.held = true;
    stored_.fetch_add(1, std::memory_order_relaxed);
  }

  /// renew: the copy of `key`, found unchanged by a check that began at `read_at`, is young
  /// again, unless the key was written since `version`.
  void renew(std::string_view key, std::uint64_t version, std::int64_t read_at) {
    Shard& shard = shard_of(key);
    const std::unique_lock<std::shared_mutex> lock(shard.mutex);
    const auto at = shard.entries.find(key);
    if (at != shard.entries.end() && at->second.version == version && at->second.held) {
      at->second.read_at = read_at;
    }
  }

  /// drop: a write or a delete of `key` through the family: its copy goes, and a read begun
  /// before stores nothing.
  void drop(std::string_view key) {
    Shard& shard = shard_of(key);
    {
      const std::shared_lock<std::shared_mutex> lock(shard.mutex);
      if (shard.entries.find(key) == shard.entries.end()) {
        return;  // not hot: nothing to drop
      }
    }
    const std::unique_lock<std::shared_mutex> lock(shard.mutex);
    const auto at = shard.entries.find(key);
    if (at != shard.entries.end()) {
      ++at->second.version;
      if (at->second.held) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
      }
      release(at->second);
    }
  }

  /// admit: the hot keys are now `keys`: a key that cooled goes with its copy, a new one is
  /// admitted without one.
  void admit(const std::vector<std::string>& keys) {
    for (std::size_t s = 0; s < kShards; ++s) {
      Shard& shard = shards_[s];
      const std::unique_lock<std::shared_mutex> lock(shard.mutex);
      for (auto at = shard.entries.begin(); at != shard.entries.end();) {
        if (std::find(keys.begin(), keys.end(), at->first) == keys.end()) {
          release(at->second);
          at = shard.entries.erase(at);
        } else {
          ++at;
        }
      }
      for (const std::string& key : keys) {
        if (&shard_of(key) == &shard) {
          shard.entries.try_emplace(key);
        }
      }
    }
  }

  /// count_hit, count_revalidated, count_changed: what a get did with a copy.
  void count_hit() noexcept { hits_.fetch_add(1, std::memory_order_relaxed); }
  void count_revalidated() noexcept { revalidated_.fetch_add(1, std::memory_order_relaxed); }
  void count_changed() noexcept { changed_.fetch_add(1, std::memory_order_relaxed); }

  /// stats: the counters, the keys admitted and the bytes held now.
  [[nodiscard]] auto stats() const -> NearCacheStats {
    NearCacheStats out;
    out.hits = hits_.load(std::memory_order_relaxed);
    out.revalidated = revalidated_.load(std::memory_order_relaxed);
    out.changed = changed_.load(std::memory_order_relaxed);
    out.stored = stored_.load(std::memory_order_relaxed);
    out.dropped = dropped_.load(std::memory_order_relaxed);
    out.bytes = bytes_.load(std::memory_order_relaxed);
    for (const Shard& shard : shards_) {
      const std::shared_lock<std::shared_mutex> lock(shard.mutex);
      out.keys += shard.entries.size();
    }
    return out;
  }

 private:
  static constexpr std::size_t kShards = 16;

  struct Entry {
    std::string value;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;
    std::int64_t read_at = 0;
    std::uint64_t version = 0;
    bool held = false;
  };
  struct KeyHash {  // finds a std::string key by a std::string_view
    using is_transparent = void;
    auto operator()(std::string_view key) const noexcept -> std::size_t {
      return std::hash<std::string_view>{}(key);
    }
  };
  struct Shard {
    mutable std::shared_mutex mutex;
    std::unordered_map<std::string, Entry, KeyHash, std::equal_to<>> entries;
  };

  [[nodiscard]] auto shard_of(std::string_view key) const noexcept -> const Shard& {
    return shards_[std::hash<std::string_view>{}(key) % kShards];
  }
  [[nodiscard]] auto shard_of(std::string_view key) noexcept -> Shard& {
    return shards_[std::hash<std::string_view>{}(key) % kShards];
  }

  // reserve: takes `size` bytes of the bound, or nothing when they do not fit.
  auto reserve(std::size_t size) noexcept -> bool {
    std::size_t held = bytes_.load(std::memory_order_relaxed);
    do {
      if (size > max_bytes_ || held > max_bytes_ - size) {
        return false;
      }
    } while (!bytes_.compare_exchange_weak(held, held + size, std::memory_order_relaxed));
    return true;
  }
  void release(Entry& entry) noexcept {
    if (entry.held) {
      bytes_.fetch_sub(entry.value.size(), std::memory_order_relaxed);
      entry.held = false;
      entry.value.clear();
      entry.value.shrink_to_fit();
    }
  }

  std::int64_t ttl_ns_;
  std::size_t max_bytes_;
  std::array<Shard, kShards> shards_;
  std::atomic<std::size_t> bytes_{0};
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> revalidated_{0};
  std::atomic<std::uint64_t> changed_{0};
  std::atomic<std::uint64_t> stored_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

/// cas_now: the cas unique `key` holds now on route.server, by a cas-only meta get (`mg <key>
/// c`: no value crosses the wire), recorded in the server's health; nothing when the key is
/// gone, is a lease's placeholder or stale, or the server cannot be asked by meta.
inline auto cas_now(ClientCore& core, MetaPool& meta, const Route& route, std::string_view key)
    -> std::optional<std::uint64_t> {
  const std::optional<MetaOutcome> answer =
      meta_call(core, meta, route.server, [&](MetaConnection& link, MetaDeadline until) {
        return link.get(key, MetaGetFlags{.cas = true}, until);
      });
  if (!answer) {
    return std::nullopt;
  }
  const memcached_return_t rc = to_memcached_return(answer->status, answer->reply.kind);
  (void)core.finish(route, rc == MEMCACHED_NOTFOUND ? MEMCACHED_SUCCESS : rc, "get",
                    answer->status.message, false);
  const bool found = answer->ok() && (answer->reply.kind == MetaReplyKind::kHeader ||
                                      answer->reply.kind == MetaReplyKind::kValue);
  if (!found || answer->reply.win_sent || answer->reply.stale) {
    return std::nullopt;
  }
  return answer->reply.cas;
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_HOTKEYS_NEAR_CACHE_HPP_
