// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PROFILES_HPP_
#define MEMSHARD_PROFILES_HPP_

// profiles.hpp: named placements that reproduce a real client key for key, as
// typed constructors (memshard::profiles::*) and through the runtime factory
// make_locator(profile name, servers, options). kProfiles lists every name.
//
// | profiles                           | reproduce                                    |
// |------------------------------------|----------------------------------------------|
// | libmemcached-modula, -ketama,      | libmemcached 1.1's distributions (checked in |
// | -ketama-weighted, -ketama-spy      | process against memcached_server_by_key)     |
// | php-memcached, -libketama,         | PHP new Memcached() (aliases of the          |
// | -consistent                        | libmemcached profiles, by PHP option)        |
// | php-memcache, php-memcache-standard| PHP new Memcache() (pecl memcache)           |
// | twemproxy-ketama, twemproxy-modula | twemproxy (nutcracker)                       |
// | spymemcached-ketama, -ketama-      | spymemcached (Java)                          |
// | libmemcached, -arraymod            |                                              |
// | cache-memcached,                   | Perl Cache::Memcached and                    |
// | cache-memcached-fast               | Cache::Memcached::Fast                       |
// | python-memcache,                   | python-memcache and pymemcache's HashClient  |
// | pymemcache-rendezvous(-bytes)      | (str or bytes keys)                          |
// | dalli                              | Ruby Dalli 3                                 |
// | gomemcache                         | Go gomemcache                                |
// | modulo-crc32, ring-crc32           | the classic crc32 % N and crc32 ring         |
//
// The golden tables in tests/golden/ record where the real clients put keys;
// tests/golden_test.cpp holds every profile to them.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/any_locator.hpp"
#include "memshard/continuum_locators.hpp"
#include "memshard/crc32.hpp"
#include "memshard/detail/bytes.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/hash_tag.hpp"
#include "memshard/hashers.hpp"
#include "memshard/java_string.hpp"
#include "memshard/ketama_locator.hpp"
#include "memshard/md5.hpp"
#include "memshard/modulo_locator.hpp"
#include "memshard/one_at_a_time.hpp"
#include "memshard/rendezvous_locator.hpp"
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

// Two servers that twemproxy would call by the same name (its name, or "host"
// / "host:port" off 11211) are refused, as twemproxy refuses them.
inline void require_unique_twemproxy_names(std::span<const Server> servers,
                                           std::string_view profile) {
  std::vector<std::string> names;
  for (const Server& server : servers) {
    if (!server.name.empty()) {
      names.push_back(server.name);
    } else {
      names.push_back(server.port == kDefaultPort
                          ? server.host
                          : server.host + ":" + std::to_string(server.port));
    }
  }
  std::sort(names.begin(), names.end());
  const auto duplicate = std::adjacent_find(names.begin(), names.end());
  if (duplicate != names.end()) {
    memshard::detail::throw_config_error(std::string(profile) + " needs unique server names",
                                         *duplicate);
  }
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

// ---------------------------------------------------------------------------
// twemproxy (nutcracker 0.5)

/// twemproxy_name: the name twemproxy hashes and sorts a server by: its name
/// when it has one, else "host", or "host:port" off port 11211.
[[nodiscard]] inline auto twemproxy_name(const Server& server) -> std::string {
  if (!server.name.empty()) {
    return server.name;
  }
  return server.port == kDefaultPort ? server.host
                                     : server.host + ":" + std::to_string(server.port);
}

/// kTwemproxyMaxPointString: the longest point string twemproxy hashes whole.
inline constexpr std::size_t kTwemproxyMaxPointString = 85;

/// twemproxy_ketama_options: twemproxy's ketama: points "name-i" (name as in
/// twemproxy_name), always md5 x4 and the float32 weighted count of 160 per
/// server, ties to the server whose name sorts first by (length, bytes).
[[nodiscard]] inline auto twemproxy_ketama_options() -> KetamaOptions {
  KetamaOptions options;
  options.points_per_server = kKetamaPoints;
  options.format = PointFormat::kNameOrLibmemcached;
  options.point_hash = PointHash::kMd5x4;
  options.count = PointCount::kWeightedFloat32;
  options.ties = TieBreak::kNameOrder;
  return options;
}

/// twemproxy_ketama: a twemproxy pool with `distribution: ketama` and
/// `hash: <Hash>` (default md5). For a pool with `hash_tag`, wrap the locator
/// in a HashTagLocator (make_locator's hash_tag option does). A server's name (`host:port:weight
/// name` in nutcracker.yml) replaces its address in the point strings.
template <Hasher Hash = Md5>
[[nodiscard]] auto twemproxy_ketama(std::span<const Server> servers) -> KetamaLocator<Hash> {
  detail::require_whole_weights(servers, "twemproxy-ketama");
  detail::require_unique_twemproxy_names(servers, "twemproxy-ketama");
  validate_servers(servers);
  // twemproxy formats point strings into an 86-byte buffer; a longer string is
  // cut short but hashed at its full length, reading past the buffer, so no
  // placement can be reproduced: such names are refused.
  const KetamaOptions options = twemproxy_ketama_options();
  for (std::size_t s = 0; s < servers.size(); ++s) {
    const std::size_t count = KetamaLocator<Hash>::point_count(servers, s, options);
    const std::size_t last = count >= 4 ? count / 4 - 1 : 0;
    const std::size_t length = twemproxy_name(servers[s]).size() + 1 + std::to_string(last).size();
    if (length > kTwemproxyMaxPointString) {
      memshard::detail::throw_config_error(
          "twemproxy-ketama server name too long (twemproxy's point strings hold 85 bytes)",
          twemproxy_name(servers[s]));
    }
  }
  return KetamaLocator<Hash>(servers, options);
}

/// twemproxy_modula: a twemproxy pool with `distribution: modula`: each server
/// repeated `weight` times, servers sorted by (length, bytes) of their
/// twemproxy_name, and the key on slot `Hash(key) % total weight`.
template <Hasher Hash = Md5>
[[nodiscard]] auto twemproxy_modula(std::span<const Server> servers) -> ModuloLocator<Hash> {
  detail::require_whole_weights(servers, "twemproxy-modula");
  detail::require_unique_twemproxy_names(servers, "twemproxy-modula");
  validate_servers(servers);
  std::vector<std::uint32_t> order(servers.size());
  std::vector<std::string> names(servers.size());
  for (std::size_t s = 0; s < servers.size(); ++s) {
    order[s] = static_cast<std::uint32_t>(s);
    names[s] = twemproxy_name(servers[s]);
  }
  std::stable_sort(order.begin(), order.end(), [&names](std::uint32_t a, std::uint32_t b) {
    return names[a].size() != names[b].size() ? names[a].size() < names[b].size()
                                              : names[a] < names[b];
  });
  std::vector<std::uint32_t> buckets;
  for (const std::uint32_t s : order) {
    if (servers[s].weight > 1e6) {
      memshard::detail::throw_config_error("twemproxy-modula weight too large",
                                           servers[s].endpoint());
    }
    buckets.insert(buckets.end(), static_cast<std::size_t>(servers[s].weight), s);
  }
  return ModuloLocator<Hash>(servers, ModuloBuckets{std::move(buckets)});
}

// ---------------------------------------------------------------------------
// spymemcached 2.12 (Java)

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

/// spymemcached_arraymod: spymemcached's ArrayModNodeLocator, `Hash(key) % N`
/// (NATIVE_HASH = JavaStringHash, the default; CRC_HASH = LibmemcachedCrc).
template <Hasher Hash = JavaStringHash>
[[nodiscard]] auto spymemcached_arraymod(std::span<const Server> servers) -> ModuloLocator<Hash> {
  return ModuloLocator<Hash>(servers);
}

// ---------------------------------------------------------------------------
// Perl and Python

/// cache_memcached: Perl Cache::Memcached: a bucket list with each server
/// repeated `weight` times, `buckets[crc % buckets]` with the 15-bit crc.
[[nodiscard]] inline auto cache_memcached(std::span<const Server> servers)
    -> ModuloLocator<LibmemcachedCrc> {
  return ModuloLocator<LibmemcachedCrc>(servers, ModuloOptions{.weighted = true});
}

/// python_memcache: python-memcache's Client: Cache::Memcached's bucket list,
/// but a crc of 0 counts as 1.
[[nodiscard]] inline auto python_memcache(std::span<const Server> servers)
    -> ModuloLocator<Fold15<Crc32>> {
  return ModuloLocator<Fold15<Crc32>>(servers, ModuloOptions{.weighted = true});
}

/// cache_memcached_fast_compat: Perl Cache::Memcached::Fast's default
/// dispatch (fractional weights allowed); see CompatContinuumLocator.
[[nodiscard]] inline auto cache_memcached_fast_compat(std::span<const Server> servers)
    -> CompatContinuumLocator<LibmemcachedCrc> {
  return CompatContinuumLocator<LibmemcachedCrc>(servers);
}

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
[[nodiscard]] inline auto cache_memcached_fast_ketama(std::span<const Server> servers,
                                                      std::size_t points) -> KetamaLocator<Crc32> {
  return KetamaLocator<Crc32>(servers, cache_memcached_fast_ketama_options(points));
}

/// pymemcache_rendezvous: pymemcache's HashClient (RendezvousHash, murmur3):
/// node "host:port", score murmur3_32("node-key") over the key's characters
/// (str keys: each code point's low byte, see RendezvousInput).
[[nodiscard]] inline auto pymemcache_rendezvous(std::span<const Server> servers)
    -> RendezvousLocator {
  return RendezvousLocator(servers, RendezvousInput::kCodePointLowBytes);
}

/// pymemcache_rendezvous_bytes: the same HashClient used with bytes keys: the
/// score string holds Python's repr of the key, "host:port-b'key'".
[[nodiscard]] inline auto pymemcache_rendezvous_bytes(std::span<const Server> servers)
    -> RendezvousLocator {
  return RendezvousLocator(servers, RendezvousInput::kPythonBytesRepr);
}

// ---------------------------------------------------------------------------
// PHP, Ruby, Go

/// php_memcache: pecl memcache (`new Memcache()`), hash_strategy consistent:
/// 160 x weight points "host:port-i" looked up through 1024 buckets; Hash is
/// Crc32 (memcache.hash_function=crc32, the default) or Fnv1a_32 (fnv).
template <Hasher Hash = Crc32>
[[nodiscard]] auto php_memcache(std::span<const Server> servers) -> BucketedRingLocator<Hash> {
  return BucketedRingLocator<Hash>(servers, kKetamaPoints);
}

/// php_memcache_standard: pecl memcache with hash_strategy standard: a bucket
/// list of each server `weight` times, `(Hash(key) >> 16) & 0x7fff` (0 -> 1).
template <Hasher Hash = Crc32>
[[nodiscard]] auto php_memcache_standard(std::span<const Server> servers)
    -> ModuloLocator<Fold15<Hash>> {
  return ModuloLocator<Fold15<Hash>>(servers, ModuloOptions{.weighted = true});
}

/// dalli_options: Ruby Dalli's ring: floor(N x 160 x w / W) points "host:port:i"
/// per server, each the first four bytes of SHA-1, big-endian; a key (full
/// CRC-32) goes to the last point <= its hash, below the first point to the
/// last point.
[[nodiscard]] inline auto dalli_options() -> KetamaOptions {
  KetamaOptions options;
  options.points_per_server = kKetamaPoints;
  options.format = PointFormat::kNameColon;
  options.point_hash = PointHash::kSha1;
  options.count = PointCount::kWeightedShare;
  options.ties = TieBreak::kFirstServer;
  options.search = RingSearch::kLastAtOrBefore;
  return options;
}

/// dalli: Ruby Dalli 3.0's ring. Dalli hashes the key as it stores it,
/// namespace included and long keys shortened: pass dalli_key(key, namespace).
[[nodiscard]] inline auto dalli(std::span<const Server> servers) -> KetamaLocator<Crc32> {
  detail::require_whole_weights(servers, "dalli");  // Dalli reads weights with Integer()
  return KetamaLocator<Crc32>(servers, dalli_options());
}

/// dalli_key: the key Dalli stores (and hashes) for `key` under `name_space`:
/// "name_space:key" when a namespace is set; a result longer than 250
/// characters (UTF-8 code points, as Ruby counts a UTF-8 String) becomes its
/// first 212 characters (213 with a namespace) + ":md5:" + the hex MD5 of the
/// whole namespaced key. Use it to read from memshard what a Ruby service
/// wrote: pass the result as the key.
[[nodiscard]] inline auto dalli_key(std::string_view key, std::string_view name_space = {})
    -> std::string {
  std::string full;
  if (!name_space.empty()) {
    full.append(name_space).append(":");
  }
  full.append(key);
  // Ruby's characters of a UTF-8 String: a valid sequence is one, and so is
  // every byte that starts no valid sequence.
  const auto character_size = [&full](std::size_t at) -> std::size_t {
    const auto lead = static_cast<unsigned char>(full[at]);
    const std::size_t size = lead < 0x80U                     ? 1
                             : lead >= 0xC2U && lead <= 0xDFU ? 2
                             : lead >= 0xE0U && lead <= 0xEFU ? 3
                             : lead >= 0xF0U && lead <= 0xF4U ? 4
                                                              : 1;
    if (size == 1 || at + size > full.size()) {
      return 1;
    }
    std::uint32_t cp = lead & (0x7FU >> size);
    for (std::size_t k = 1; k < size; ++k) {
      const auto next = static_cast<unsigned char>(full[at + k]);
      if ((next & 0xC0U) != 0x80U) {
        return 1;
      }
      cp = (cp << 6U) | (next & 0x3FU);
    }
    const bool valid =
        (size == 2 || (size == 3 && cp >= 0x800U && (cp < 0xD800U || cp > 0xDFFFU)) ||
         (size == 4 && cp >= 0x10000U && cp <= 0x10FFFFU));
    return valid ? size : 1;
  };
  std::size_t characters = 0;
  for (std::size_t at = 0; at < full.size(); at += character_size(at)) {
    ++characters;
  }
  if (characters <= 250) {
    return full;
  }
  const std::size_t keep = name_space.empty() ? 212 : 213;
  std::size_t cut = 0;
  for (std::size_t seen = 0; seen < keep; ++seen) {
    cut += character_size(cut);
  }
  std::string out = full.substr(0, cut);
  out.append(":md5:");
  memshard::detail::append_hex(out, Md5::digest(full));
  return out;
}

/// gomemcache: Go's gomemcache ServerList: full CRC-32 % N (= modulo_crc32).
[[nodiscard]] inline auto gomemcache(std::span<const Server> servers) -> ModuloLocator<Crc32> {
  return ModuloLocator<Crc32>(servers);
}

}  // namespace profiles

/// ProfileOptions: run-time overrides for make_locator.
struct ProfileOptions {
  /// A hash name in the profile's own vocabulary (see ProfileInfo::hashes);
  /// empty keeps the profile's default.
  std::string hash;
  /// Points per server for ring profiles that take it; 0 keeps the default.
  /// For cache-memcached-fast it is `ketama_points` (0: the default dispatch).
  std::size_t points = 0;
  /// For the spymemcached ketama profiles: whether the Java locator was given a
  /// weights map. Unset: true when any weight is not 1.
  std::optional<bool> weighted = std::nullopt;
  /// For the twemproxy profiles: the pool's `hash_tag` (two characters, e.g.
  /// "{}"); empty for none. Only the tagged part of a key is hashed.
  std::string hash_tag = {};
};

/// ProfileInfo: one entry of the profile table.
struct ProfileInfo {
  std::string_view name;
  /// The default hash, and every hash name the profile accepts ("" if none).
  std::string_view default_hash;
  std::string_view hashes;
  bool has_points;    ///< whether the profile takes a points option
  bool has_weighted;  ///< whether the profile takes a weighted option
  bool has_hash_tag;  ///< whether the profile takes a hash_tag option
  std::string_view summary;
  /// Builds the locator; `hash` is never empty when `hashes` is not.
  AnyLocator (*build)(std::span<const Server> servers, std::string_view hash,
                      const ProfileOptions& options, std::string description);
};

namespace profiles::detail {

// visit_twemproxy_hash: calls visit(H{}) for a hash named as nutcracker.yml
// names it ("crc32" is the 15-bit crc there, "crc32a" the full CRC-32).
template <class Visitor>
auto visit_twemproxy_hash(std::string_view name, Visitor&& visit) -> AnyLocator {
  if (name == "crc32") {
    return visit(LibmemcachedCrc{});
  }
  if (name == "crc32a") {
    return visit(Crc32{});
  }
  if (name == "crc" || name == "default") {  // memshard spellings that mean something else here
    memshard::detail::throw_config_error(
        "not a twemproxy hash (twemproxy says crc32 for the 15-bit crc, crc32a for CRC-32)", name);
  }
  if (name == "crc16" || name == "hsieh" || name == "jenkins") {
    memshard::detail::throw_config_error("twemproxy hash not supported by memshard", name);
  }
  return visit_hasher(name, std::forward<Visitor>(visit));
}

template <class Visitor>
auto visit_pecl_hash(std::string_view name, Visitor&& visit) -> AnyLocator {
  if (name == "crc32") {
    return visit(Crc32{});
  }
  if (name == "fnv") {
    return visit(Fnv1a_32{});
  }
  memshard::detail::throw_config_error("not a pecl memcache hash (crc32 or fnv)", name);
}

[[nodiscard]] inline auto spy_weighted(std::span<const Server> servers,
                                       const ProfileOptions& options) -> bool {
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

inline auto build_libmemcached_modula(std::span<const Server> servers, std::string_view hash,
                                      const ProfileOptions&, std::string description)
    -> AnyLocator {
  return visit_hasher(hash, [&]<class H>(H) {
    return AnyLocator(libmemcached_modula<H>(servers), std::move(description));
  });
}
inline auto build_libmemcached_ketama(std::span<const Server> servers, std::string_view hash,
                                      const ProfileOptions& options, std::string description)
    -> AnyLocator {
  return visit_hasher(hash, [&]<class H>(H) {
    return AnyLocator(libmemcached_ketama<H>(servers, options.points), std::move(description));
  });
}
inline auto build_libmemcached_ketama_weighted(std::span<const Server> servers,
                                               std::string_view hash, const ProfileOptions& options,
                                               std::string description) -> AnyLocator {
  return visit_hasher(hash, [&]<class H>(H) {
    return AnyLocator(libmemcached_ketama_weighted<H>(servers, options.points),
                      std::move(description));
  });
}
inline auto build_libmemcached_ketama_spy(std::span<const Server> servers, std::string_view hash,
                                          const ProfileOptions& options, std::string description)
    -> AnyLocator {
  return visit_hasher(hash, [&]<class H>(H) {
    return AnyLocator(libmemcached_ketama_spy<H>(servers, options.points), std::move(description));
  });
}
inline auto build_modulo_crc32(std::span<const Server> servers, std::string_view hash,
                               const ProfileOptions&, std::string description) -> AnyLocator {
  return visit_hasher(hash, [&]<class H>(H) {
    return AnyLocator(modulo_crc32<H>(servers), std::move(description));
  });
}
inline auto build_ring_crc32(std::span<const Server> servers, std::string_view hash,
                             const ProfileOptions& options, std::string description) -> AnyLocator {
  return visit_hasher(hash, [&]<class H>(H) {
    return AnyLocator(ring_crc32<H>(servers, options.points), std::move(description));
  });
}
inline auto build_twemproxy_ketama(std::span<const Server> servers, std::string_view hash,
                                   const ProfileOptions&, std::string description) -> AnyLocator {
  return visit_twemproxy_hash(hash, [&]<class H>(H) {
    return AnyLocator(twemproxy_ketama<H>(servers), std::move(description));
  });
}
inline auto build_twemproxy_modula(std::span<const Server> servers, std::string_view hash,
                                   const ProfileOptions&, std::string description) -> AnyLocator {
  return visit_twemproxy_hash(hash, [&]<class H>(H) {
    return AnyLocator(twemproxy_modula<H>(servers), std::move(description));
  });
}
inline auto build_spymemcached_ketama(std::span<const Server> servers, std::string_view,
                                      const ProfileOptions& options, std::string description)
    -> AnyLocator {
  return AnyLocator(spymemcached_ketama(servers, spy_weighted(servers, options), false),
                    std::move(description));
}
inline auto build_spymemcached_ketama_libmemcached(std::span<const Server> servers,
                                                   std::string_view, const ProfileOptions& options,
                                                   std::string description) -> AnyLocator {
  return AnyLocator(spymemcached_ketama(servers, spy_weighted(servers, options), true),
                    std::move(description));
}
inline auto build_spymemcached_arraymod(std::span<const Server> servers, std::string_view hash,
                                        const ProfileOptions&, std::string description)
    -> AnyLocator {
  if (hash == "java_string") {
    return AnyLocator(spymemcached_arraymod<JavaStringHash>(servers), std::move(description));
  }
  if (hash == "crc") {
    return AnyLocator(spymemcached_arraymod<LibmemcachedCrc>(servers), std::move(description));
  }
  memshard::detail::throw_config_error("not a spymemcached-arraymod hash (java_string or crc)",
                                       hash);
}
inline auto build_cache_memcached(std::span<const Server> servers, std::string_view,
                                  const ProfileOptions&, std::string description) -> AnyLocator {
  return AnyLocator(cache_memcached(servers), std::move(description));
}
inline auto build_python_memcache(std::span<const Server> servers, std::string_view,
                                  const ProfileOptions&, std::string description) -> AnyLocator {
  return AnyLocator(python_memcache(servers), std::move(description));
}
inline auto build_cache_memcached_fast(std::span<const Server> servers, std::string_view,
                                       const ProfileOptions& options, std::string description)
    -> AnyLocator {
  if (options.points == 0) {
    return AnyLocator(cache_memcached_fast_compat(servers), std::move(description));
  }
  return AnyLocator(cache_memcached_fast_ketama(servers, options.points), std::move(description));
}
inline auto build_pymemcache_rendezvous(std::span<const Server> servers, std::string_view,
                                        const ProfileOptions&, std::string description)
    -> AnyLocator {
  return AnyLocator(pymemcache_rendezvous(servers), std::move(description));
}
inline auto build_pymemcache_rendezvous_bytes(std::span<const Server> servers, std::string_view,
                                              const ProfileOptions&, std::string description)
    -> AnyLocator {
  return AnyLocator(pymemcache_rendezvous_bytes(servers), std::move(description));
}
inline auto build_php_memcache(std::span<const Server> servers, std::string_view hash,
                               const ProfileOptions&, std::string description) -> AnyLocator {
  return visit_pecl_hash(hash, [&]<class H>(H) {
    return AnyLocator(php_memcache<H>(servers), std::move(description));
  });
}
inline auto build_php_memcache_standard(std::span<const Server> servers, std::string_view hash,
                                        const ProfileOptions&, std::string description)
    -> AnyLocator {
  return visit_pecl_hash(hash, [&]<class H>(H) {
    return AnyLocator(php_memcache_standard<H>(servers), std::move(description));
  });
}
inline auto build_dalli(std::span<const Server> servers, std::string_view, const ProfileOptions&,
                        std::string description) -> AnyLocator {
  return AnyLocator(dalli(servers), std::move(description));
}
inline auto build_gomemcache(std::span<const Server> servers, std::string_view,
                             const ProfileOptions&, std::string description) -> AnyLocator {
  return AnyLocator(gomemcache(servers), std::move(description));
}

inline constexpr std::string_view kLibmemcachedHashes =
    "one_at_a_time, md5, crc, crc32, fnv1_32, fnv1a_32, fnv1_64, fnv1a_64, murmur";
inline constexpr std::string_view kTwemproxyHashes =
    "md5, one_at_a_time, crc32 (15-bit), crc32a, fnv1_32, fnv1a_32, fnv1_64, fnv1a_64, murmur";

}  // namespace profiles::detail

/// kProfiles: every profile make_locator knows.
inline constexpr std::array<ProfileInfo, 23> kProfiles = {{
    {"libmemcached-modula", "one_at_a_time", profiles::detail::kLibmemcachedHashes, false, false,
     false, "libmemcached MODULA: hash % N, weights ignored",
     &profiles::detail::build_libmemcached_modula},
    {"libmemcached-ketama", "one_at_a_time", profiles::detail::kLibmemcachedHashes, true, false,
     false, "libmemcached 1.1 CONSISTENT/KETAMA: 100 points host-i per server, key hash for points",
     &profiles::detail::build_libmemcached_ketama},
    {"libmemcached-ketama-weighted", "md5", profiles::detail::kLibmemcachedHashes, true, false,
     false, "libmemcached KETAMA_WEIGHTED = libketama: 160 md5 x4 points, weighted",
     &profiles::detail::build_libmemcached_ketama_weighted},
    {"libmemcached-ketama-spy", "one_at_a_time", profiles::detail::kLibmemcachedHashes, true, false,
     false, "libmemcached CONSISTENT_KETAMA_SPY: 100 points /host:port-i per server",
     &profiles::detail::build_libmemcached_ketama_spy},
    {"php-memcached", "one_at_a_time", profiles::detail::kLibmemcachedHashes, false, false, false,
     "PHP new Memcached(), default options (= libmemcached-modula)",
     &profiles::detail::build_libmemcached_modula},
    {"php-memcached-libketama", "md5", profiles::detail::kLibmemcachedHashes, true, false, false,
     "PHP Memcached::OPT_LIBKETAMA_COMPATIBLE (= libmemcached-ketama-weighted)",
     &profiles::detail::build_libmemcached_ketama_weighted},
    {"php-memcached-consistent", "one_at_a_time", profiles::detail::kLibmemcachedHashes, true,
     false, false, "PHP OPT_DISTRIBUTION => DISTRIBUTION_CONSISTENT (= libmemcached-ketama)",
     &profiles::detail::build_libmemcached_ketama},
    {"twemproxy-ketama", "md5", profiles::detail::kTwemproxyHashes, false, false, true,
     "twemproxy distribution: ketama (hash: as in nutcracker.yml, default md5)",
     &profiles::detail::build_twemproxy_ketama},
    {"twemproxy-modula", "md5", profiles::detail::kTwemproxyHashes, false, false, true,
     "twemproxy distribution: modula (hash: as in nutcracker.yml, default md5)",
     &profiles::detail::build_twemproxy_modula},
    {"spymemcached-ketama", "", "", false, true, false,
     "spymemcached KetamaConnectionFactory, SPYMEMCACHED node keys (host:port-r)",
     &profiles::detail::build_spymemcached_ketama},
    {"spymemcached-ketama-libmemcached", "", "", false, true, false,
     "spymemcached ketama with KetamaNodeKeyFormatter.Format.LIBMEMCACHED node keys",
     &profiles::detail::build_spymemcached_ketama_libmemcached},
    {"spymemcached-arraymod", "java_string", "java_string, crc", false, false, false,
     "spymemcached ArrayModNodeLocator: hash % N (NATIVE_HASH or CRC_HASH)",
     &profiles::detail::build_spymemcached_arraymod},
    {"cache-memcached", "", "", false, false, false,
     "Perl Cache::Memcached: weighted bucket list, 15-bit crc",
     &profiles::detail::build_cache_memcached},
    {"cache-memcached-fast", "", "", true, false, false,
     "Perl Cache::Memcached::Fast: default dispatch, or ketama_points with points=K",
     &profiles::detail::build_cache_memcached_fast},
    {"python-memcache", "", "", false, false, false,
     "python-memcache Client: weighted bucket list, 15-bit crc (0 counts as 1)",
     &profiles::detail::build_python_memcache},
    {"pymemcache-rendezvous", "", "", false, false, false,
     "pymemcache HashClient: rendezvous hashing with murmur3_32 (str keys)",
     &profiles::detail::build_pymemcache_rendezvous},
    {"pymemcache-rendezvous-bytes", "", "", false, false, false,
     "pymemcache HashClient used with bytes keys (it hashes their repr, b'...')",
     &profiles::detail::build_pymemcache_rendezvous_bytes},
    {"php-memcache", "crc32", "crc32, fnv", false, false, false,
     "PHP new Memcache() (pecl memcache), hash_strategy consistent: 1024-bucket ring",
     &profiles::detail::build_php_memcache},
    {"php-memcache-standard", "crc32", "crc32, fnv", false, false, false,
     "pecl memcache hash_strategy standard: weighted bucket list",
     &profiles::detail::build_php_memcache_standard},
    {"dalli", "", "", false, false, false,
     "Ruby Dalli 3: SHA-1 ring, key to the last point at or below", &profiles::detail::build_dalli},
    {"gomemcache", "", "", false, false, false, "Go gomemcache: full CRC-32 % N",
     &profiles::detail::build_gomemcache},
    {"modulo-crc32", "crc32", profiles::detail::kLibmemcachedHashes, false, false, false,
     "full CRC-32 % N (the PHP articles)", &profiles::detail::build_modulo_crc32},
    {"ring-crc32", "crc32", profiles::detail::kLibmemcachedHashes, true, false, false,
     "64 points name-i per server, full CRC-32 for points and keys",
     &profiles::detail::build_ring_crc32},
}};

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
/// Throws ConfigError for an unknown profile, a hash the profile does not take,
/// a points option on a profile without one, or an invalid server list.
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
  if (!options.hash.empty() && profile->hashes.empty()) {
    memshard::detail::throw_config_error("profile takes no hash option", name);
  }
  if (!options.hash_tag.empty() && !profile->has_hash_tag) {
    memshard::detail::throw_config_error("only the twemproxy profiles take hash_tag", name);
  }
  if (options.weighted.has_value() && !profile->has_weighted) {
    memshard::detail::throw_config_error("only the spymemcached ketama profiles take weighted",
                                         name);
  }
  const std::string_view hash = options.hash.empty() ? profile->default_hash : options.hash;
  std::string description(name);
  if (!hash.empty()) {
    description.append(" hash=").append(hash);
  }
  if (options.points != 0) {
    description.append(" points=").append(std::to_string(options.points));
  }
  if (options.weighted.has_value()) {
    description.append(*options.weighted ? " weighted=true" : " weighted=false");
  }
  if (!options.hash_tag.empty()) {
    const HashTag tag = HashTag::parse(options.hash_tag);
    description.append(" hash_tag=").append(options.hash_tag);
    const AnyLocator inner = profile->build(servers, hash, options, description);
    return AnyLocator(HashTagLocator<AnyLocator>(inner, tag), std::move(description));
  }
  return profile->build(servers, hash, options, std::move(description));
}

}  // namespace memshard

#endif  // MEMSHARD_PROFILES_HPP_
