// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_GENERIC_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_GENERIC_HPP_

// placement/profiles/generic.hpp: the two placements of the PHP articles, which no one
// client owns: `crc32(key) % N` (modulo-crc32) and a ring of 64 CRC-32 points
// per server (ring-crc32), as typed constructors and registry entries.

#include <cstddef>
#include <span>

#include "memshard/detail/compiled.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/profiles/libhashkit_hashes.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// kRingCrc32Points: points per server of the ring-crc32 profile.
inline constexpr std::size_t kRingCrc32Points = 64;

/// modulo_crc32: `crc32(key) % N` with the full IEEE CRC-32 (the PHP articles'
/// modulo, Go gomemcache). Weights ignored.
template <Hasher Hash = Crc32>
[[nodiscard]] auto modulo_crc32(std::span<const Server> servers, Hash hash = {})
    -> ModuloLocator<Hash> {
  return ModuloLocator<Hash>(servers, ModuloOptions{}, hash);
}

namespace detail {
struct MakeModuloCrc32 {
  using default_hash = Crc32;
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& /*options*/,
                   Hash hash = {}) {
    return modulo_crc32<Hash>(servers, hash);
  }
};
}  // namespace detail

/// kModuloCrc32Profile: the registry entry of modulo_crc32.
MEMSHARD_DETAIL_DECLARE_ENTRY(kModuloCrc32Profile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kModuloCrc32Profile{
    .name = "modulo-crc32",
    .summary = "full CRC-32 % N (the PHP articles)",
    .default_hash = Crc32::name(),
    .hashes = kLibhashkitHashes<detail::MakeModuloCrc32>,
};
#endif

/// ring_crc32_options: 64 points "name-i" per server (the server's name, or
/// "host:port" without one), one full CRC-32 per point.
[[nodiscard]] inline auto ring_crc32_options(std::size_t points = 0) -> KetamaOptions {
  KetamaOptions options;
  options.format = PointFormat::kName;
  options.point_hash = PointHash::kKeyHash;
  options.count = PointCount::kFixed;
  options.points_per_server = points != 0 ? points : kRingCrc32Points;
  options.ties = TieBreak::kFirstServer;
  return options;
}

/// ring_crc32: the articles' consistent-hashing ring: 64 points per server,
/// full CRC-32 for points and keys, first point >= hash, wrap. Weights ignored.
template <Hasher Hash = Crc32>
[[nodiscard]] auto ring_crc32(std::span<const Server> servers, std::size_t points = 0,
                              Hash hash = {}) -> KetamaLocator<Hash> {
  return KetamaLocator<Hash>(servers, ring_crc32_options(points), hash);
}

namespace detail {
struct MakeRingCrc32 {
  using default_hash = Crc32;
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& options, Hash hash = {}) {
    return ring_crc32<Hash>(servers, options.points, hash);
  }
};
}  // namespace detail

/// kRingCrc32Profile: the registry entry of ring_crc32.
MEMSHARD_DETAIL_DECLARE_ENTRY(kRingCrc32Profile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kRingCrc32Profile{
    .name = "ring-crc32",
    .summary = "64 points name-i per server, full CRC-32 for points and keys",
    .default_hash = Crc32::name(),
    .hashes = kLibhashkitHashes<detail::MakeRingCrc32>,
    .has_points = true,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_GENERIC_HPP_
