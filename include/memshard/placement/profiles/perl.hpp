// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_PERL_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_PERL_HPP_

// placement/profiles/perl.hpp: Perl's Cache::Memcached and Cache::Memcached::Fast, as
// typed constructors and registry entries.

#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "memshard/detail/compiled.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/continuum_locators.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// cache_memcached: Perl Cache::Memcached: a bucket list with each server
/// repeated `weight` times, `buckets[crc % buckets]` with the 15-bit crc.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto cache_memcached(std::span<const Server> servers)
    -> ModuloLocator<LibmemcachedCrc>;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto cache_memcached(std::span<const Server> servers)
    -> ModuloLocator<LibmemcachedCrc> {
  return ModuloLocator<LibmemcachedCrc>(servers, ModuloOptions{.weighted = true});
}
#endif

/// kCacheMemcachedProfile: the registry entry of cache_memcached.
MEMSHARD_DETAIL_DECLARE_ENTRY(kCacheMemcachedProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kCacheMemcachedProfile{
    .name = "cache-memcached",
    .summary = "Perl Cache::Memcached: weighted bucket list, 15-bit crc",
    .build = &detail::make_any_from<&cache_memcached>,
};
#endif

/// cache_memcached_fast_compat: Perl Cache::Memcached::Fast's default
/// dispatch (fractional weights allowed); see CompatContinuumLocator.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto cache_memcached_fast_compat(
    std::span<const Server> servers) -> CompatContinuumLocator<LibmemcachedCrc>;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto cache_memcached_fast_compat(std::span<const Server> servers)
    -> CompatContinuumLocator<LibmemcachedCrc> {
  return CompatContinuumLocator<LibmemcachedCrc>(servers);
}
#endif

/// cache_memcached_fast: Cache::Memcached::Fast with default options (no
/// `ketama_points`): its default dispatch (= cache_memcached_fast_compat). With
/// `ketama_points`, see cache_memcached_fast_ketama.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto cache_memcached_fast(std::span<const Server> servers)
    -> CompatContinuumLocator<LibmemcachedCrc>;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto cache_memcached_fast(std::span<const Server> servers)
    -> CompatContinuumLocator<LibmemcachedCrc> {
  return cache_memcached_fast_compat(servers);
}
#endif

/// cache_memcached_fast_ketama_options: Cache::Memcached::Fast with
/// `ketama_points => points`: `(int)(points * weight + 0.5)` points per server,
/// each the CRC-32 of host, NUL, port and the previous point (LE32, 0 for the
/// first); keys by full CRC-32; equal points go to the server listed first.
[[nodiscard]] inline auto cache_memcached_fast_ketama_options(std::size_t points) -> KetamaOptions {
  KetamaOptions options;
  options.points_per_server = points;
  options.format = PointFormat::kHostNulPortChained;
  options.point_hash = PointHash::kCrc32;
  options.count = PointCount::kScaledWeight;
  options.ties = TieBreak::kFirstServer;
  return options;
}

/// cache_memcached_fast_ketama: Cache::Memcached::Fast with ketama_points.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto cache_memcached_fast_ketama(
    std::span<const Server> servers, std::size_t points) -> KetamaLocator<Crc32>;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto cache_memcached_fast_ketama(std::span<const Server> servers,
                                                        std::size_t points)
    -> KetamaLocator<Crc32> {
  return KetamaLocator<Crc32>(servers, cache_memcached_fast_ketama_options(points));
}
#endif

namespace detail {
// The points option is ketama_points: 0, the default dispatch. The library defines it in the
// compiled mode, with the registry's entries.
#if MEMSHARD_DETAIL_DEFINITIONS
inline auto make_cache_memcached_fast(std::span<const Server> servers,
                                      const ProfileOptions& options, std::string description)
    -> AnyLocator {
  if (options.points == 0) {
    return AnyLocator(cache_memcached_fast(servers), std::move(description));
  }
  return AnyLocator(cache_memcached_fast_ketama(servers, options.points), std::move(description));
}
#endif
}  // namespace detail

/// kCacheMemcachedFastProfile: the registry entry of cache_memcached_fast, or
/// with the points option of cache_memcached_fast_ketama.
MEMSHARD_DETAIL_DECLARE_ENTRY(kCacheMemcachedFastProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kCacheMemcachedFastProfile{
    .name = "cache-memcached-fast",
    .summary = "Perl Cache::Memcached::Fast: default dispatch, or ketama_points with points=K",
    .has_points = true,
    .build = &detail::make_cache_memcached_fast,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_PERL_HPP_
