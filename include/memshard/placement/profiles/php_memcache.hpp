// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_PHP_MEMCACHE_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_PHP_MEMCACHE_HPP_

// placement/profiles/php_memcache.hpp: PHP's `new Memcache()` (pecl memcache), with
// hash_strategy consistent or standard and pecl's hash vocabulary
// (kPeclHashes), as typed constructors and registry entries.

#include <array>
#include <span>

#include "memshard/detail/compiled.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/locators/continuum_locators.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/profiles/ketama_points.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// kPeclHashes: the names of `memcache.hash_function`, each building
/// `Make::make<H>`: crc32 (the full CRC-32, the default) and fnv (FNV-1a 32).
template <class Make>
inline constexpr std::array<HashChoice, 2> kPeclHashes = {{
    {.name = "crc32", .build = &detail::make_any_with<Make, Crc32>},
    {.name = "fnv", .build = &detail::make_any_with<Make, Fnv1a_32>},
}};

/// php_memcache: pecl memcache (`new Memcache()`), hash_strategy consistent:
/// 160 x weight points "host:port-i" looked up through 1024 buckets; Hash is
/// Crc32 (memcache.hash_function=crc32, the default) or Fnv1a_32 (fnv).
template <Hasher Hash = Crc32>
[[nodiscard]] auto php_memcache(std::span<const Server> servers) -> BucketedRingLocator<Hash> {
  return BucketedRingLocator<Hash>(servers, kKetamaPoints);
}

namespace detail {
struct MakePhpMemcache {
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& /*options*/) {
    return php_memcache<Hash>(servers);
  }
};
}  // namespace detail

/// kPhpMemcacheProfile: the registry entry of php_memcache.
MEMSHARD_DETAIL_DECLARE_ENTRY(kPhpMemcacheProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kPhpMemcacheProfile{
    .name = "php-memcache",
    .summary = "PHP new Memcache() (pecl memcache), hash_strategy consistent: 1024-bucket ring",
    .default_hash = "crc32",
    .hashes = kPeclHashes<detail::MakePhpMemcache>,
};
#endif

/// php_memcache_standard: pecl memcache with hash_strategy standard: a bucket
/// list of each server `weight` times, `(Hash(key) >> 16) & 0x7fff` (0 -> 1).
template <Hasher Hash = Crc32>
[[nodiscard]] auto php_memcache_standard(std::span<const Server> servers)
    -> ModuloLocator<Fold15<Hash>> {
  return ModuloLocator<Fold15<Hash>>(servers, ModuloOptions{.weighted = true});
}

namespace detail {
struct MakePhpMemcacheStandard {
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& /*options*/) {
    return php_memcache_standard<Hash>(servers);
  }
};
}  // namespace detail

/// kPhpMemcacheStandardProfile: the registry entry of php_memcache_standard.
MEMSHARD_DETAIL_DECLARE_ENTRY(kPhpMemcacheStandardProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kPhpMemcacheStandardProfile{
    .name = "php-memcache-standard",
    .summary = "pecl memcache hash_strategy standard: weighted bucket list",
    .default_hash = "crc32",
    .hashes = kPeclHashes<detail::MakePhpMemcacheStandard>,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_PHP_MEMCACHE_HPP_
