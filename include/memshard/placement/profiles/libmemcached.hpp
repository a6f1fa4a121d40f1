// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_LIBMEMCACHED_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_LIBMEMCACHED_HPP_

// placement/profiles/libmemcached.hpp: libmemcached 1.1's distributions (MODULA,
// CONSISTENT / KETAMA, KETAMA_WEIGHTED, CONSISTENT_KETAMA_SPY) as typed
// constructors and registry entries. tests/profiles_libmemcached_test.cpp
// checks them in process against memcached_server_by_key.

#include <cstddef>
#include <span>

#include "memshard/detail/compiled.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/profiles/detail/server_checks.hpp"
#include "memshard/placement/profiles/ketama_points.hpp"
#include "memshard/placement/profiles/libhashkit_hashes.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// kLibmemcachedPoints: libmemcached's MEMCACHED_POINTS_PER_SERVER (unweighted rings).
inline constexpr std::size_t kLibmemcachedPoints = 100;

/// libmemcached_modula: libmemcached's MODULA distribution, `Hash(key) % N`,
/// weights ignored. Default hash one_at_a_time (MEMCACHED_HASH_DEFAULT); this is
/// also PHP `new Memcached()` with default options.
template <Hasher Hash = OneAtATime>
[[nodiscard]] auto libmemcached_modula(std::span<const Server> servers, Hash hash = {})
    -> ModuloLocator<Hash> {
  detail::require_whole_weights(servers, "libmemcached-modula");
  return ModuloLocator<Hash>(servers, ModuloOptions{}, hash);
}

namespace detail {
struct MakeLibmemcachedModula {
  using default_hash = OneAtATime;
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& /*options*/,
                   Hash hash = {}) {
    return libmemcached_modula<Hash>(servers, hash);
  }
};
}  // namespace detail

/// kLibmemcachedModulaProfile: the registry entry of libmemcached_modula.
MEMSHARD_DETAIL_DECLARE_ENTRY(kLibmemcachedModulaProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kLibmemcachedModulaProfile{
    .name = "libmemcached-modula",
    .summary = "libmemcached MODULA: hash % N, weights ignored",
    .default_hash = OneAtATime::name(),
    .hashes = kLibhashkitHashes<detail::MakeLibmemcachedModula>,
};
#endif

/// libmemcached_ketama_options: the ring libmemcached 1.1 builds for
/// CONSISTENT / KETAMA: 100 points "host-i" (or "host:port-i") per server, each
/// hashed with the key hash. When any server has a weight above 1, libmemcached
/// switches to the weighted md5 x4 ring but keeps the key hash; so does this.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto libmemcached_ketama_options(
    std::span<const Server> servers, std::size_t points = 0) -> KetamaOptions;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto libmemcached_ketama_options(std::span<const Server> servers,
                                                        std::size_t points) -> KetamaOptions {
  KetamaOptions options;
  options.format = PointFormat::kLibmemcached;
  options.ties = TieBreak::kFirstServer;
  if (detail::any_weight_above_one(servers)) {
    options.point_hash = PointHash::kMd5x4;
    options.count = PointCount::kWeightedFloat32;
    options.points_per_server = points != 0 ? points : kKetamaPoints;
  } else {
    options.point_hash = PointHash::kKeyHash;
    options.count = PointCount::kFixed;
    options.points_per_server = points != 0 ? points : kLibmemcachedPoints;
  }
  return options;
}
#endif

/// libmemcached_ketama: libmemcached 1.1 CONSISTENT / KETAMA (the key hash is
/// one_at_a_time unless set otherwise: in 1.x "ketama" no longer means md5).
/// PHP's `DISTRIBUTION_CONSISTENT`. `points` overrides the points per server
/// (0 keeps libmemcached's), which no libmemcached client can match.
template <Hasher Hash = OneAtATime>
[[nodiscard]] auto libmemcached_ketama(std::span<const Server> servers, std::size_t points = 0,
                                       Hash hash = {}) -> KetamaLocator<Hash> {
  detail::require_whole_weights(servers, "libmemcached-ketama");
  return KetamaLocator<Hash>(servers, libmemcached_ketama_options(servers, points), hash);
}

namespace detail {
struct MakeLibmemcachedKetama {
  using default_hash = OneAtATime;
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& options, Hash hash = {}) {
    return libmemcached_ketama<Hash>(servers, options.points, hash);
  }
};
}  // namespace detail

/// kLibmemcachedKetamaProfile: the registry entry of libmemcached_ketama.
MEMSHARD_DETAIL_DECLARE_ENTRY(kLibmemcachedKetamaProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kLibmemcachedKetamaProfile{
    .name = "libmemcached-ketama",
    .summary =
        "libmemcached 1.1 CONSISTENT/KETAMA: 100 points host-i per server, key hash for points",
    .default_hash = OneAtATime::name(),
    .hashes = kLibhashkitHashes<detail::MakeLibmemcachedKetama>,
    .has_points = true,
};
#endif

/// libmemcached_ketama_weighted_options: the classic libketama ring: weighted
/// float32 point counts (160 for equal weights), md5 x4 points.
[[nodiscard]] inline auto libmemcached_ketama_weighted_options(std::size_t points = 0)
    -> KetamaOptions {
  KetamaOptions options;
  options.format = PointFormat::kLibmemcached;
  options.point_hash = PointHash::kMd5x4;
  options.count = PointCount::kWeightedFloat32;
  options.points_per_server = points != 0 ? points : kKetamaPoints;
  options.ties = TieBreak::kFirstServer;
  return options;
}

/// libmemcached_ketama_weighted: libmemcached KETAMA_WEIGHTED, which is
/// libketama, PHP `Memcached::OPT_LIBKETAMA_COMPATIBLE` and pylibmc
/// `{"ketama_weighted": True}`: md5 keys on the weighted md5 x4 ring.
template <Hasher Hash = Md5>
[[nodiscard]] auto libmemcached_ketama_weighted(std::span<const Server> servers,
                                                std::size_t points = 0, Hash hash = {})
    -> KetamaLocator<Hash> {
  detail::require_whole_weights(servers, "libmemcached-ketama-weighted");
  return KetamaLocator<Hash>(servers, libmemcached_ketama_weighted_options(points), hash);
}

namespace detail {
struct MakeLibmemcachedKetamaWeighted {
  using default_hash = Md5;
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& options, Hash hash = {}) {
    return libmemcached_ketama_weighted<Hash>(servers, options.points, hash);
  }
};
}  // namespace detail

/// kLibmemcachedKetamaWeightedProfile: the registry entry of
/// libmemcached_ketama_weighted.
MEMSHARD_DETAIL_DECLARE_ENTRY(kLibmemcachedKetamaWeightedProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kLibmemcachedKetamaWeightedProfile{
    .name = "libmemcached-ketama-weighted",
    .summary = "libmemcached KETAMA_WEIGHTED = libketama: 160 md5 x4 points, weighted",
    .default_hash = Md5::name(),
    .hashes = kLibhashkitHashes<detail::MakeLibmemcachedKetamaWeighted>,
    .has_points = true,
};
#endif

/// libmemcached_ketama_spy_options: CONSISTENT_KETAMA_SPY: points
/// "/host:port-i"; unweighted 100 points hashed with the key hash, or, with a
/// weight above 1, the weighted md5 x4 ring.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto libmemcached_ketama_spy_options(
    std::span<const Server> servers, std::size_t points = 0) -> KetamaOptions;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto libmemcached_ketama_spy_options(std::span<const Server> servers,
                                                            std::size_t points) -> KetamaOptions {
  KetamaOptions options = libmemcached_ketama_options(servers, points);
  options.format = PointFormat::kSlashHostPort;
  return options;
}
#endif

/// libmemcached_ketama_spy: libmemcached's CONSISTENT_KETAMA_SPY distribution.
/// Note that libmemcached's SPY ring is not spymemcached's own (which takes 160
/// md5 x4 points and breaks ties the other way).
template <Hasher Hash = OneAtATime>
[[nodiscard]] auto libmemcached_ketama_spy(std::span<const Server> servers, std::size_t points = 0,
                                           Hash hash = {}) -> KetamaLocator<Hash> {
  detail::require_whole_weights(servers, "libmemcached-ketama-spy");
  return KetamaLocator<Hash>(servers, libmemcached_ketama_spy_options(servers, points), hash);
}

namespace detail {
struct MakeLibmemcachedKetamaSpy {
  using default_hash = OneAtATime;
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& options, Hash hash = {}) {
    return libmemcached_ketama_spy<Hash>(servers, options.points, hash);
  }
};
}  // namespace detail

/// kLibmemcachedKetamaSpyProfile: the registry entry of libmemcached_ketama_spy.
MEMSHARD_DETAIL_DECLARE_ENTRY(kLibmemcachedKetamaSpyProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kLibmemcachedKetamaSpyProfile{
    .name = "libmemcached-ketama-spy",
    .summary = "libmemcached CONSISTENT_KETAMA_SPY: 100 points /host:port-i per server",
    .default_hash = OneAtATime::name(),
    .hashes = kLibhashkitHashes<detail::MakeLibmemcachedKetamaSpy>,
    .has_points = true,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_LIBMEMCACHED_HPP_
