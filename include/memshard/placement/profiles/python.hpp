// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_PYTHON_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_PYTHON_HPP_

// placement/profiles/python.hpp: python-memcache's Client and pymemcache's HashClient
// (with str or bytes keys), as typed constructors and registry entries.

#include <span>

#include "memshard/detail/compiled.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/locators/rendezvous_locator.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// python_memcache: python-memcache's Client: Cache::Memcached's bucket list,
/// but a crc of 0 counts as 1.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto python_memcache(std::span<const Server> servers)
    -> ModuloLocator<Fold15<Crc32>>;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto python_memcache(std::span<const Server> servers)
    -> ModuloLocator<Fold15<Crc32>> {
  return ModuloLocator<Fold15<Crc32>>(servers, ModuloOptions{.weighted = true});
}
#endif

/// kPythonMemcacheProfile: the registry entry of python_memcache.
MEMSHARD_DETAIL_DECLARE_ENTRY(kPythonMemcacheProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kPythonMemcacheProfile{
    .name = "python-memcache",
    .summary = "python-memcache Client: weighted bucket list, 15-bit crc (0 counts as 1)",
    .build = &detail::make_any_from<&python_memcache>,
};
#endif

/// pymemcache_rendezvous: pymemcache's HashClient (RendezvousHash, murmur3):
/// node "host:port", score murmur3_32("node-key") over the key's characters
/// (str keys: each code point's low byte, see RendezvousInput).
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto pymemcache_rendezvous(std::span<const Server> servers)
    -> RendezvousLocator;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto pymemcache_rendezvous(std::span<const Server> servers)
    -> RendezvousLocator {
  return RendezvousLocator(servers, RendezvousInput::kCodePointLowBytes);
}
#endif

/// kPymemcacheRendezvousProfile: the registry entry of pymemcache_rendezvous.
MEMSHARD_DETAIL_DECLARE_ENTRY(kPymemcacheRendezvousProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kPymemcacheRendezvousProfile{
    .name = "pymemcache-rendezvous",
    .summary = "pymemcache HashClient: rendezvous hashing with murmur3_32 (str keys)",
    .build = &detail::make_any_from<&pymemcache_rendezvous>,
};
#endif

/// pymemcache_rendezvous_bytes: the same HashClient used with bytes keys: the
/// score string holds Python's repr of the key, "host:port-b'key'".
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto pymemcache_rendezvous_bytes(
    std::span<const Server> servers) -> RendezvousLocator;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto pymemcache_rendezvous_bytes(std::span<const Server> servers)
    -> RendezvousLocator {
  return RendezvousLocator(servers, RendezvousInput::kPythonBytesRepr);
}
#endif

/// kPymemcacheRendezvousBytesProfile: the registry entry of
/// pymemcache_rendezvous_bytes.
MEMSHARD_DETAIL_DECLARE_ENTRY(kPymemcacheRendezvousBytesProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kPymemcacheRendezvousBytesProfile{
    .name = "pymemcache-rendezvous-bytes",
    .summary = "pymemcache HashClient used with bytes keys (it hashes their repr, b'...')",
    .build = &detail::make_any_from<&pymemcache_rendezvous_bytes>,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_PYTHON_HPP_
