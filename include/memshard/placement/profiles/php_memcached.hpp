// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_PHP_MEMCACHED_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_PHP_MEMCACHED_HPP_

// placement/profiles/php_memcached.hpp: PHP's `new Memcached()` (the memcached
// extension, built on libmemcached): the libmemcached profiles under the names
// of PHP's options, as typed constructors and registry entries.

#include <cstddef>
#include <span>

#include "memshard/detail/compiled.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/profiles/libhashkit_hashes.hpp"
#include "memshard/placement/profiles/libmemcached.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// php_memcached: PHP `new Memcached()` with default options: libmemcached's
/// MODULA with one_at_a_time (= libmemcached_modula). `Hash` is
/// `Memcached::OPT_HASH`.
template <Hasher Hash = OneAtATime>
[[nodiscard]] auto php_memcached(std::span<const Server> servers) -> ModuloLocator<Hash> {
  return libmemcached_modula<Hash>(servers);
}

/// kPhpMemcachedProfile: the registry entry of php_memcached.
MEMSHARD_DETAIL_DECLARE_ENTRY(kPhpMemcachedProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kPhpMemcachedProfile{
    .name = "php-memcached",
    .summary = "PHP new Memcached(), default options (= libmemcached-modula)",
    .default_hash = OneAtATime::name(),
    .hashes = kLibhashkitHashes<detail::MakeLibmemcachedModula>,
};
#endif

/// php_memcached_libketama: PHP with `Memcached::OPT_LIBKETAMA_COMPATIBLE`:
/// md5 keys on the weighted md5 x4 ring (= libmemcached_ketama_weighted).
template <Hasher Hash = Md5>
[[nodiscard]] auto php_memcached_libketama(std::span<const Server> servers, std::size_t points = 0)
    -> KetamaLocator<Hash> {
  return libmemcached_ketama_weighted<Hash>(servers, points);
}

/// kPhpMemcachedLibketamaProfile: the registry entry of php_memcached_libketama.
MEMSHARD_DETAIL_DECLARE_ENTRY(kPhpMemcachedLibketamaProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kPhpMemcachedLibketamaProfile{
    .name = "php-memcached-libketama",
    .summary = "PHP Memcached::OPT_LIBKETAMA_COMPATIBLE (= libmemcached-ketama-weighted)",
    .default_hash = Md5::name(),
    .hashes = kLibhashkitHashes<detail::MakeLibmemcachedKetamaWeighted>,
    .has_points = true,
};
#endif

/// php_memcached_consistent: PHP with `OPT_DISTRIBUTION =>
/// DISTRIBUTION_CONSISTENT` (= libmemcached_ketama).
template <Hasher Hash = OneAtATime>
[[nodiscard]] auto php_memcached_consistent(std::span<const Server> servers, std::size_t points = 0)
    -> KetamaLocator<Hash> {
  return libmemcached_ketama<Hash>(servers, points);
}

/// kPhpMemcachedConsistentProfile: the registry entry of php_memcached_consistent.
MEMSHARD_DETAIL_DECLARE_ENTRY(kPhpMemcachedConsistentProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kPhpMemcachedConsistentProfile{
    .name = "php-memcached-consistent",
    .summary = "PHP OPT_DISTRIBUTION => DISTRIBUTION_CONSISTENT (= libmemcached-ketama)",
    .default_hash = OneAtATime::name(),
    .hashes = kLibhashkitHashes<detail::MakeLibmemcachedKetama>,
    .has_points = true,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_PHP_MEMCACHED_HPP_
