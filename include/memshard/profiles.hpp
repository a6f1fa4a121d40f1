// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PROFILES_HPP_
#define MEMSHARD_PROFILES_HPP_

// profiles.hpp: named placements that reproduce a real client key for key, as
// typed constructors (memshard::profiles::*) and through the runtime factory
// make_locator(profile name, servers, options).
//
// | profile                      | reproduces                                         |
// |------------------------------|----------------------------------------------------|
// | libmemcached-modula          | libmemcached MODULA (default hash one_at_a_time)   |
// | libmemcached-ketama          | libmemcached 1.1 CONSISTENT / KETAMA               |
// | libmemcached-ketama-weighted | libmemcached KETAMA_WEIGHTED = libketama = PHP      |
// |                              | OPT_LIBKETAMA_COMPATIBLE = pylibmc ketama_weighted |
// | libmemcached-ketama-spy      | libmemcached CONSISTENT_KETAMA_SPY                 |
// | modulo-crc32                 | crc32(key) % N (gomemcache, the PHP articles)      |
// | ring-crc32                   | 64 points "name-i" per server, crc32 everywhere    |

#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "memshard/any_locator.hpp"
#include "memshard/crc32.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/hashers.hpp"
#include "memshard/ketama_locator.hpp"
#include "memshard/md5.hpp"
#include "memshard/modulo_locator.hpp"
#include "memshard/one_at_a_time.hpp"
#include "memshard/server.hpp"

namespace memshard {
namespace profiles {
namespace detail {

// libmemcached keeps weights as uint32_t: a fractional weight cannot be
// expressed there, so it is refused rather than silently changed.
inline void require_whole_weights(std::span<const Server> servers, std::string_view profile) {
  for (const Server& server : servers) {
    if (server.weight != std::floor(server.weight) || server.weight > 4294967295.0) {
      memshard::detail::throw_config_error(
          std::string(profile) + " needs whole-number weights (libmemcached stores uint32)",
          server.endpoint());
    }
  }
}

[[nodiscard]] inline auto any_weight_above_one(std::span<const Server> servers) noexcept -> bool {
  for (const Server& server : servers) {
    if (server.weight > 1) {
      return true;
    }
  }
  return false;
}

}  // namespace detail

/// kLibmemcachedPoints: libmemcached's MEMCACHED_POINTS_PER_SERVER (unweighted rings).
inline constexpr std::size_t kLibmemcachedPoints = 100;
/// kKetamaPoints: libketama's 160 points per server (MEMCACHED_POINTS_PER_SERVER_KETAMA).
inline constexpr std::size_t kKetamaPoints = 160;
/// kRingCrc32Points: points per server of the ring-crc32 profile.
inline constexpr std::size_t kRingCrc32Points = 64;

/// libmemcached_modula: libmemcached's MODULA distribution, `Hash(key) % N`,
/// weights ignored. Default hash one_at_a_time (MEMCACHED_HASH_DEFAULT); this is
/// also PHP `new Memcached()` with default options.
template <Hasher Hash = OneAtATime>
[[nodiscard]] auto libmemcached_modula(std::span<const Server> servers) -> ModuloLocator<Hash> {
  detail::require_whole_weights(servers, "libmemcached-modula");
  return ModuloLocator<Hash>(servers);
}

/// libmemcached_ketama_options: the ring libmemcached 1.1 builds for
/// CONSISTENT / KETAMA: 100 points "host-i" (or "host:port-i") per server, each
/// hashed with the key hash. When any server has a weight above 1, libmemcached
/// switches to the weighted md5 x4 ring but keeps the key hash; so does this.
[[nodiscard]] inline auto libmemcached_ketama_options(std::span<const Server> servers,
                                                      std::size_t points = 0) -> KetamaOptions {
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

/// libmemcached_ketama: libmemcached 1.1 CONSISTENT / KETAMA (the key hash is
/// one_at_a_time unless set otherwise: in 1.x "ketama" no longer means md5).
/// PHP's `DISTRIBUTION_CONSISTENT`. `points` overrides the points per server
/// (0 keeps libmemcached's), which no libmemcached client can match.
template <Hasher Hash = OneAtATime>
[[nodiscard]] auto libmemcached_ketama(std::span<const Server> servers, std::size_t points = 0)
    -> KetamaLocator<Hash> {
  detail::require_whole_weights(servers, "libmemcached-ketama");
  return KetamaLocator<Hash>(servers, libmemcached_ketama_options(servers, points));
}

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
                                                std::size_t points = 0) -> KetamaLocator<Hash> {
  detail::require_whole_weights(servers, "libmemcached-ketama-weighted");
  return KetamaLocator<Hash>(servers, libmemcached_ketama_weighted_options(points));
}

/// libmemcached_ketama_spy_options: CONSISTENT_KETAMA_SPY: points
/// "/host:port-i"; unweighted 100 points hashed with the key hash, or, with a
/// weight above 1, the weighted md5 x4 ring.
[[nodiscard]] inline auto libmemcached_ketama_spy_options(std::span<const Server> servers,
                                                          std::size_t points = 0) -> KetamaOptions {
  KetamaOptions options = libmemcached_ketama_options(servers, points);
  options.format = PointFormat::kSlashHostPort;
  return options;
}

/// libmemcached_ketama_spy: libmemcached's CONSISTENT_KETAMA_SPY distribution.
/// Note that libmemcached's SPY ring is not spymemcached's own (which takes 160
/// md5 x4 points and breaks ties the other way).
template <Hasher Hash = OneAtATime>
[[nodiscard]] auto libmemcached_ketama_spy(std::span<const Server> servers, std::size_t points = 0)
    -> KetamaLocator<Hash> {
  detail::require_whole_weights(servers, "libmemcached-ketama-spy");
  return KetamaLocator<Hash>(servers, libmemcached_ketama_spy_options(servers, points));
}

/// modulo_crc32: `crc32(key) % N` with the full IEEE CRC-32 (the PHP articles'
/// modulo, Go gomemcache). Weights ignored.
template <Hasher Hash = Crc32>
[[nodiscard]] auto modulo_crc32(std::span<const Server> servers) -> ModuloLocator<Hash> {
  return ModuloLocator<Hash>(servers);
}

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
[[nodiscard]] auto ring_crc32(std::span<const Server> servers, std::size_t points = 0)
    -> KetamaLocator<Hash> {
  return KetamaLocator<Hash>(servers, ring_crc32_options(points));
}

}  // namespace profiles

/// ProfileInfo: one entry of the profile table.
struct ProfileInfo {
  std::string_view name;
  std::string_view default_hash;
  bool has_points;  ///< whether the profile is a ring (takes a points option)
  std::string_view summary;
};

/// kProfiles: every profile make_locator knows.
inline constexpr std::array<ProfileInfo, 6> kProfiles = {{
    {"libmemcached-modula", "one_at_a_time", false,
     "libmemcached MODULA: hash % N, weights ignored (PHP new Memcached() default)"},
    {"libmemcached-ketama", "one_at_a_time", true,
     "libmemcached 1.1 CONSISTENT/KETAMA: 100 points host-i per server, key hash for points"},
    {"libmemcached-ketama-weighted", "md5", true,
     "libmemcached KETAMA_WEIGHTED = libketama = PHP OPT_LIBKETAMA_COMPATIBLE: 160 md5 x4 "
     "points, weighted"},
    {"libmemcached-ketama-spy", "one_at_a_time", true,
     "libmemcached CONSISTENT_KETAMA_SPY: 100 points /host:port-i per server"},
    {"modulo-crc32", "crc32", false, "full CRC-32 % N (gomemcache, the PHP articles)"},
    {"ring-crc32", "crc32", true, "64 points name-i per server, full CRC-32 for points and keys"},
}};

/// ProfileOptions: run-time overrides for make_locator.
struct ProfileOptions {
  /// A hash name from kHashNames; empty keeps the profile's default.
  std::string hash;
  /// Points per server for ring profiles; 0 keeps the profile's default.
  std::size_t points = 0;
};

/// find_profile: the entry for `name`, or nullptr.
[[nodiscard]] inline auto find_profile(std::string_view name) noexcept -> const ProfileInfo* {
  for (const ProfileInfo& profile : kProfiles) {
    if (profile.name == name) {
      return &profile;
    }
  }
  return nullptr;
}

/// make_locator: builds the placement of profile `name` for `servers`.
/// Throws ConfigError for an unknown profile or hash, a points option on a
/// modulo profile, or an invalid server list.
///
/// **Example**:
///   auto locator = memshard::make_locator("libmemcached-ketama-weighted",
///                                         memshard::parse_servers("a:11211,b:11211"));
///   std::size_t index = locator.locate("user:42");
[[nodiscard]] inline auto make_locator(std::string_view name, std::span<const Server> servers,
                                       const ProfileOptions& options = {}) -> AnyLocator {
  const ProfileInfo* profile = find_profile(name);
  if (profile == nullptr) {
    std::string known;
    for (const ProfileInfo& entry : kProfiles) {
      known.append(known.empty() ? "" : ", ").append(entry.name);
    }
    memshard::detail::throw_config_error("unknown profile (known: " + known + ")", name);
  }
  if (options.points != 0 && !profile->has_points) {
    memshard::detail::throw_config_error("profile takes no points option", name);
  }
  const std::string_view hash = options.hash.empty() ? profile->default_hash : options.hash;
  std::string description(name);
  description.append(" hash=").append(hash);
  if (options.points != 0) {
    description.append(" points=").append(std::to_string(options.points));
  }
  const std::size_t points = options.points;
  return visit_hasher(hash, [&]<class Hash>(Hash) -> AnyLocator {
    if (name == "libmemcached-modula") {
      return AnyLocator(profiles::libmemcached_modula<Hash>(servers), description);
    }
    if (name == "libmemcached-ketama") {
      return AnyLocator(profiles::libmemcached_ketama<Hash>(servers, points), description);
    }
    if (name == "libmemcached-ketama-weighted") {
      return AnyLocator(profiles::libmemcached_ketama_weighted<Hash>(servers, points), description);
    }
    if (name == "libmemcached-ketama-spy") {
      return AnyLocator(profiles::libmemcached_ketama_spy<Hash>(servers, points), description);
    }
    if (name == "modulo-crc32") {
      return AnyLocator(profiles::modulo_crc32<Hash>(servers), description);
    }
    return AnyLocator(profiles::ring_crc32<Hash>(servers, points), description);
  });
}

}  // namespace memshard

#endif  // MEMSHARD_PROFILES_HPP_
