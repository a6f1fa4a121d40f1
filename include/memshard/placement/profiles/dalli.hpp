// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_DALLI_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_DALLI_HPP_

// placement/profiles/dalli.hpp: Ruby Dalli 3's ring, as a typed constructor and a
// registry entry, and dalli_key(), the key Dalli stores (and hashes).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "memshard/detail/bytes.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/profiles/detail/server_checks.hpp"
#include "memshard/placement/profiles/ketama_points.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

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
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto dalli(std::span<const Server> servers)
    -> KetamaLocator<Crc32>;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto dalli(std::span<const Server> servers) -> KetamaLocator<Crc32> {
  detail::require_whole_weights(servers, "dalli");  // Dalli reads weights with Integer()
  return KetamaLocator<Crc32>(servers, dalli_options());
}
#endif

/// kDalliProfile: the registry entry of dalli.
MEMSHARD_DETAIL_DECLARE_ENTRY(kDalliProfile, ProfileInfo)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY ProfileInfo kDalliProfile{
    .name = "dalli",
    .summary = "Ruby Dalli 3: SHA-1 ring, key to the last point at or below",
    .build = &detail::make_any_from<&dalli>,
};
#endif

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

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_DALLI_HPP_
