// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_HOTKEYS_NEAR_CACHE_OPTIONS_HPP_
#define MEMSHARD_HOTKEYS_NEAR_CACHE_OPTIONS_HPP_

// hotkeys/near_cache_options.hpp: NearCacheOptions (ClientOptions::near_cache), how long a hot
// key's in-process copy is served without asking its server, and NearCacheStats, what the copies
// did (hotkeys/near_cache.hpp has the cache).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// NearCacheOptions: how long a hot key's in-process copy is served without asking its server,
/// and how many bytes the copies may take.
struct NearCacheOptions {
  /// The staleness bound: a copy older than this is checked (cas only) before it is served.
  std::chrono::milliseconds ttl{1000};
  /// The copies' values take at most this many bytes (keys and bookkeeping aside).
  std::size_t max_bytes = std::size_t{1} << 20;

  friend auto operator==(const NearCacheOptions&, const NearCacheOptions&) -> bool = default;
};

/// near_cache_options_error: why `options` are not valid (a ttl that is not positive or is over
/// a day, a max_bytes of 0), or nothing.
[[nodiscard]] inline auto near_cache_options_error(const NearCacheOptions& options)
    -> std::optional<std::string> {
  if (options.ttl.count() <= 0 || options.ttl > std::chrono::hours(24)) {
    return "ttl must be 1 ms to 1 day (" + std::to_string(options.ttl.count()) + " ms)";
  }
  if (options.max_bytes == 0) {
    return std::string("max_bytes must be positive (0)");
  }
  return std::nullopt;
}

/// NearCacheStats: what a family's near cache did, since it was made.
struct NearCacheStats {
  std::uint64_t hits = 0;         ///< gets answered from a copy younger than ttl
  std::uint64_t revalidated = 0;  ///< older copies found unchanged (cas) and served
  std::uint64_t changed = 0;      ///< older copies found changed or gone, read anew
  std::uint64_t stored = 0;       ///< values kept from a get of a hot key
  std::uint64_t dropped = 0;      ///< copies dropped by a write or delete through the family
  std::uint64_t keys = 0;         ///< hot keys admitted now
  std::uint64_t bytes = 0;        ///< the copies' values now
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_HOTKEYS_NEAR_CACHE_OPTIONS_HPP_
