// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_TWEMPROXY_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_TWEMPROXY_HPP_

// placement/profiles/twemproxy.hpp: twemproxy (nutcracker 0.5) pools, `distribution:
// ketama` and `distribution: modula`, as typed constructors and registry
// entries, with nutcracker's hash vocabulary (kNutcrackerHashes).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/detail/compiled.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
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

namespace detail {
inline constexpr std::string_view kNotANutcrackerHash =
    "not a twemproxy hash (twemproxy says crc32 for the 15-bit crc, crc32a for CRC-32)";
inline constexpr std::string_view kUnsupportedNutcrackerHash =
    "twemproxy hash not supported by memshard";
}  // namespace detail

/// kNutcrackerHashes: the `hash:` names of nutcracker.yml, each building
/// `Make::make<H>` (typed for `Make::default_hash`, through RuntimeHash for the
/// others): md5, one_at_a_time, crc32 (the 15-bit crc), crc32a (the
/// full CRC-32), fnv1_32, fnv1a_32, fnv1_64, fnv1a_64, murmur. memshard's own
/// "crc" and "default" mean something else here and are refused, as are
/// crc16, hsieh and jenkins, which memshard does not implement.
template <class Make>
inline constexpr std::array<HashChoice, 14> kNutcrackerHashes = {{
    {.name = Md5::name(), .build = detail::vocabulary_build<Make, Md5>()},
    {.name = OneAtATime::name(), .build = detail::vocabulary_build<Make, OneAtATime>()},
    {.name = "crc32", .note = "15-bit", .build = detail::vocabulary_build<Make, LibmemcachedCrc>()},
    {.name = "crc32a", .build = detail::vocabulary_build<Make, Crc32>()},
    {.name = Fnv1_32::name(), .build = detail::vocabulary_build<Make, Fnv1_32>()},
    {.name = Fnv1a_32::name(), .build = detail::vocabulary_build<Make, Fnv1a_32>()},
    {.name = Fnv1_64::name(), .build = detail::vocabulary_build<Make, Fnv1_64>()},
    {.name = Fnv1a_64::name(), .build = detail::vocabulary_build<Make, Fnv1a_64>()},
    {.name = Murmur::name(), .build = detail::vocabulary_build<Make, Murmur>()},
    {.name = "crc", .refusal = detail::kNotANutcrackerHash},
    {.name = "default", .refusal = detail::kNotANutcrackerHash},
    {.name = "crc16", .refusal = detail::kUnsupportedNutcrackerHash},
    {.name = "hsieh", .refusal = detail::kUnsupportedNutcrackerHash},
    {.name = "jenkins", .refusal = detail::kUnsupportedNutcrackerHash},
}};

/// twemproxy_name: the name twemproxy hashes and sorts a server by: its name
/// when it has one, else "host", or "host:port" off port 11211.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto twemproxy_name(const Server& server) -> std::string;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto twemproxy_name(const Server& server) -> std::string {
  if (!server.name.empty()) {
    return server.name;
  }
  return server.port == kDefaultPort ? server.host
                                     : server.host + ":" + std::to_string(server.port);
}
#endif

namespace detail {

// Two servers that twemproxy would call by the same name (twemproxy_name) are
// refused, as twemproxy refuses them.
MEMSHARD_DETAIL_INLINE void require_unique_twemproxy_names(std::span<const Server> servers,
                                                           std::string_view profile);
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE void require_unique_twemproxy_names(std::span<const Server> servers,
                                                           std::string_view profile) {
  std::vector<std::string> names;
  names.reserve(servers.size());
  for (const Server& server : servers) {
    names.push_back(twemproxy_name(server));
  }
  std::sort(names.begin(), names.end());
  const auto duplicate = std::adjacent_find(names.begin(), names.end());
  if (duplicate != names.end()) {
    memshard::detail::throw_config_error(std::string(profile) + " needs unique server names",
                                         *duplicate);
  }
}
#endif

}  // namespace detail

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
[[nodiscard]] auto twemproxy_ketama(std::span<const Server> servers, Hash hash = {})
    -> KetamaLocator<Hash> {
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
  return KetamaLocator<Hash>(servers, options, hash);
}

namespace detail {
struct MakeTwemproxyKetama {
  using default_hash = Md5;
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& /*options*/,
                   Hash hash = {}) {
    return twemproxy_ketama<Hash>(servers, hash);
  }
};
}  // namespace detail

/// kTwemproxyKetamaProfile: the registry entry of twemproxy_ketama (its
/// hash_tag option wraps the locator in a HashTagLocator).
MEMSHARD_DETAIL_DECLARE_ENTRY(kTwemproxyKetamaProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kTwemproxyKetamaProfile{
    .name = "twemproxy-ketama",
    .summary = "twemproxy distribution: ketama (hash: as in nutcracker.yml, default md5)",
    .default_hash = Md5::name(),
    .hashes = kNutcrackerHashes<detail::MakeTwemproxyKetama>,
    .has_hash_tag = true,
};
#endif

/// twemproxy_modula: a twemproxy pool with `distribution: modula`: each server
/// repeated `weight` times, servers sorted by (length, bytes) of their
/// twemproxy_name, and the key on slot `Hash(key) % total weight`.
template <Hasher Hash = Md5>
[[nodiscard]] auto twemproxy_modula(std::span<const Server> servers, Hash hash = {})
    -> ModuloLocator<Hash> {
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
  return ModuloLocator<Hash>(servers, ModuloBuckets{std::move(buckets)}, hash);
}

namespace detail {
struct MakeTwemproxyModula {
  using default_hash = Md5;
  template <Hasher Hash>
  static auto make(std::span<const Server> servers, const ProfileOptions& /*options*/,
                   Hash hash = {}) {
    return twemproxy_modula<Hash>(servers, hash);
  }
};
}  // namespace detail

/// kTwemproxyModulaProfile: the registry entry of twemproxy_modula.
MEMSHARD_DETAIL_DECLARE_ENTRY(kTwemproxyModulaProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kTwemproxyModulaProfile{
    .name = "twemproxy-modula",
    .summary = "twemproxy distribution: modula (hash: as in nutcracker.yml, default md5)",
    .default_hash = Md5::name(),
    .hashes = kNutcrackerHashes<detail::MakeTwemproxyModula>,
    .has_hash_tag = true,
};
#endif

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_TWEMPROXY_HPP_
