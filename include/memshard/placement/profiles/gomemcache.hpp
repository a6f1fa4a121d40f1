// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_GOMEMCACHE_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_GOMEMCACHE_HPP_

// placement/profiles/gomemcache.hpp: Go's gomemcache ServerList, as a typed constructor
// and a registry entry.

#include <span>

#include "memshard/detail/compiled.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// gomemcache: Go's gomemcache ServerList: full CRC-32 % N (= modulo_crc32).
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto gomemcache(std::span<const Server> servers)
    -> ModuloLocator<Crc32>;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto gomemcache(std::span<const Server> servers) -> ModuloLocator<Crc32> {
  return ModuloLocator<Crc32>(servers);
}
#endif

/// kGomemcacheProfile: the registry entry of gomemcache.
MEMSHARD_DETAIL_DECLARE_ENTRY(kGomemcacheProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kGomemcacheProfile{
    .name = "gomemcache",
    .summary = "Go gomemcache: full CRC-32 % N",
    .build = &detail::make_any_from<&gomemcache>,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_GOMEMCACHE_HPP_
