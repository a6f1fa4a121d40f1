// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_SPYMEMCACHED_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_SPYMEMCACHED_HPP_

// placement/profiles/spymemcached.hpp: spymemcached 2.12 (Java): KetamaNodeLocator with
// either node key format, and ArrayModNodeLocator with spymemcached's hash
// vocabulary (kSpymemcachedHashes), as typed constructors and registry entries.

#include <array>
#include <span>
#include <string>

#include "memshard/detail/compiled.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/java_string.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/profiles/detail/server_checks.hpp"
#include "memshard/placement/profiles/ketama_points.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// spymemcached_ketama_options: KetamaNodeLocator with KETAMA_HASH: 160 md5 x4
/// points per server ("nodekey-r"), or with a weights map the float32 weighted
/// count; equal points go to the server listed last. `libmemcached_format`
/// selects KetamaNodeKeyFormatter.Format.LIBMEMCACHED ("host" or "host:port")
/// over SPYMEMCACHED ("host:port"). A server's name, when set, is the whole
/// node key (Java derives it from InetSocketAddress, which may involve DNS:
/// state it exactly).
[[nodiscard]] inline auto spymemcached_ketama_options(bool weighted, bool libmemcached_format)
    -> KetamaOptions {
  KetamaOptions options;
  options.points_per_server = kKetamaPoints;
  options.format = libmemcached_format ? PointFormat::kNameOrLibmemcached : PointFormat::kName;
  options.point_hash = PointHash::kMd5x4;
  options.count = weighted ? PointCount::kWeightedFloat32 : PointCount::kFixed;
  options.ties = TieBreak::kLastServer;
  return options;
}

/// spymemcached_ketama: spymemcached's KetamaConnectionFactory. `weighted`
/// says whether the locator was given a weights map (weights then must be
/// whole numbers, as Java's Integer).
template <Hasher Hash = Md5>
[[nodiscard]] auto spymemcached_ketama(std::span<const Server> servers, bool weighted,
                                       bool libmemcached_format = false) -> KetamaLocator<Hash> {
  detail::require_whole_weights(servers, "spymemcached-ketama");
  if (!weighted && detail::any_weight_above_one(servers)) {
    memshard::detail::throw_config_error(
        "spymemcached-ketama without a weights map ignores weights: pass weighted=true",
        servers.front().endpoint());
  }
  return KetamaLocator<Hash>(servers, spymemcached_ketama_options(weighted, libmemcached_format));
}

/// spymemcached_ketama_libmemcached: spymemcached's ketama with
/// KetamaNodeKeyFormatter.Format.LIBMEMCACHED node keys
/// (= spymemcached_ketama(servers, weighted, true)).
template <Hasher Hash = Md5>
[[nodiscard]] auto spymemcached_ketama_libmemcached(std::span<const Server> servers, bool weighted)
    -> KetamaLocator<Hash> {
  return spymemcached_ketama<Hash>(servers, weighted, true);
}

namespace detail {

// The weighted option of the ketama entries: unset, true when any weight is
// not 1 (a Java caller with weights passes a weights map).
[[nodiscard]] inline auto spy_weighted(std::span<const Server> servers,
                                       const ProfileOptions& options) noexcept -> bool {
  if (options.weighted.has_value()) {
    return *options.weighted;
  }
  for (const Server& server : servers) {
    if (server.weight != 1) {
      return true;
    }
  }
  return false;
}

// The registry's builders: the library defines them in the compiled mode, with the entries.
#if MEMSHARD_DETAIL_DEFINITIONS
inline auto make_spymemcached_ketama(std::span<const Server> servers, const ProfileOptions& options,
                                     std::string description) -> AnyLocator {
  return AnyLocator(spymemcached_ketama(servers, spy_weighted(servers, options)),
                    std::move(description));
}

inline auto make_spymemcached_ketama_libmemcached(std::span<const Server> servers,
                                                  const ProfileOptions& options,
                                                  std::string description) -> AnyLocator {
  return AnyLocator(spymemcached_ketama_libmemcached(servers, spy_weighted(servers, options)),
                    std::move(description));
}
#endif

}  // namespace detail

/// kSpymemcachedKetamaProfile: the registry entry of spymemcached_ketama
/// (SPYMEMCACHED node keys).
MEMSHARD_DETAIL_DECLARE_ENTRY(kSpymemcachedKetamaProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kSpymemcachedKetamaProfile{
    .name = "spymemcached-ketama",
    .summary = "spymemcached KetamaConnectionFactory, SPYMEMCACHED node keys (host:port-r)",
    .has_weighted = true,
    .build = &detail::make_spymemcached_ketama,
};
#endif

/// kSpymemcachedKetamaLibmemcachedProfile: the registry entry of
/// spymemcached_ketama_libmemcached.
MEMSHARD_DETAIL_DECLARE_ENTRY(kSpymemcachedKetamaLibmemcachedProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kSpymemcachedKetamaLibmemcachedProfile{
    .name = "spymemcached-ketama-libmemcached",
    .summary = "spymemcached ketama with KetamaNodeKeyFormatter.Format.LIBMEMCACHED node keys",
    .has_weighted = true,
    .build = &detail::make_spymemcached_ketama_libmemcached,
};
#endif

/// kSpymemcachedHashes: spymemcached's DefaultHashAlgorithm names that
/// ArrayModNodeLocator takes, each building `Make::make<H>`: java_string
/// (NATIVE_HASH, String.hashCode) and crc (CRC_HASH, the 15-bit crc).
template <class Make>
inline constexpr std::array<HashChoice, 2> kSpymemcachedHashes = {{
    {.name = JavaStringHash::name(), .build = &detail::make_any_with<Make, JavaStringHash>},
    {.name = LibmemcachedCrc::name(), .build = &detail::make_any_with<Make, LibmemcachedCrc>},
}};

/// spymemcached_arraymod: spymemcached's ArrayModNodeLocator, `Hash(key) % N`
/// (NATIVE_HASH = JavaStringHash, the default; CRC_HASH = LibmemcachedCrc).
template <Hasher Hash = JavaStringHash>
[[nodiscard]] auto spymemcached_arraymod(std::span<const Server> servers) -> ModuloLocator<Hash> {
  return ModuloLocator<Hash>(servers);
}

namespace detail {
struct MakeSpymemcachedArraymod {
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& /*options*/) {
    return spymemcached_arraymod<Hash>(servers);
  }
};
}  // namespace detail

/// kSpymemcachedArraymodProfile: the registry entry of spymemcached_arraymod.
MEMSHARD_DETAIL_DECLARE_ENTRY(kSpymemcachedArraymodProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kSpymemcachedArraymodProfile{
    .name = "spymemcached-arraymod",
    .summary = "spymemcached ArrayModNodeLocator: hash % N (NATIVE_HASH or CRC_HASH)",
    .default_hash = JavaStringHash::name(),
    .hashes = kSpymemcachedHashes<detail::MakeSpymemcachedArraymod>,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_SPYMEMCACHED_HPP_
