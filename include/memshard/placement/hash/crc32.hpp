// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_CRC32_HPP_
#define MEMSHARD_PLACEMENT_HASH_CRC32_HPP_

// placement/hash/crc32.hpp: the IEEE CRC-32 (zlib, PHP crc32(), Go hash/crc32) and the 15-bit
// reduction of it that libmemcached calls "crc" (and twemproxy "crc32").
//
// The two are different functions with different names on purpose: "crc32" in
// a peer's configuration may mean either, and they place keys differently.

#include <array>
#include <cstdint>
#include <string_view>

#include "memshard/placement/hash/hasher.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

inline constexpr std::array<std::uint32_t, 256> kCrc32Table = [] {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int bit = 0; bit < 8; ++bit) {
      c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1U) : c >> 1U;
    }
    table[n] = c;
  }
  return table;
}();

}  // namespace detail

/// Crc32: the full IEEE CRC-32 (reflected polynomial 0xEDB88320, initial value
/// and final xor 0xFFFFFFFF). Crc32{}("123456789") == 0xCBF43926.
struct Crc32 {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "crc32"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    std::uint32_t crc = 0xFFFFFFFFU;
    for (const char c : bytes) {
      crc = detail::kCrc32Table[(crc ^ static_cast<unsigned char>(c)) & 0xFFU] ^ (crc >> 8U);
    }
    return ~crc;
  }
};

/// LibmemcachedCrc: libmemcached's MEMCACHED_HASH_CRC, `(crc32 >> 16) & 0x7fff`.
/// Only 15 bits: with it, a ketama ring of 2^32 positions uses 32768 of them.
/// twemproxy calls this function "crc32"; Cache::Memcached uses it too.
struct LibmemcachedCrc {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "crc"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    return (Crc32{}(bytes) >> 16U) & 0x7FFFU;
  }
};

/// Fold15: `(Inner(key) >> 16) & 0x7fff`, except that 0 becomes 1: the hash
/// of python-memcache (Inner = Crc32) and of pecl memcache's "standard"
/// strategy (Inner = Crc32, or its FNV-1a).
template <Hasher Inner>
struct Fold15 {
  /// "fold15": not a name any factory accepts; the profiles that use it name
  /// the inner hash (crc32, fnv) themselves.
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "fold15"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    const std::uint32_t folded = (Inner{}(bytes) >> 16U) & 0x7FFFU;
    return folded == 0 ? 1U : folded;
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_CRC32_HPP_
