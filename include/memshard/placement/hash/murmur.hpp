// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_MURMUR_HPP_
#define MEMSHARD_PLACEMENT_HASH_MURMUR_HPP_

// placement/hash/murmur.hpp: MurmurHash2 (32-bit) as libmemcached's MEMCACHED_HASH_MURMUR
// computes it: seed = 0xdeadbeef * length, little-endian words.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memshard/detail/bytes.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Murmur: libmemcached's and twemproxy's "murmur" (MurmurHash2, 32-bit, with
/// the length-dependent seed 0xdeadbeef * length).
struct Murmur {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "murmur"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    constexpr std::uint32_t kM = 0x5bd1e995U;
    const auto length = static_cast<std::uint32_t>(bytes.size());
    std::uint32_t h = (0xdeadbeefU * length) ^ length;
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    for (; left >= 4; left -= 4, p += 4) {
      std::uint32_t k = detail::load_le32(p);
      k *= kM;
      k ^= k >> 24U;
      k *= kM;
      h *= kM;
      h ^= k;
    }
    auto byte = [p](std::size_t i) {
      return static_cast<std::uint32_t>(static_cast<unsigned char>(p[i]));
    };
    switch (left) {
      case 3:
        h ^= byte(2) << 16U;
        [[fallthrough]];
      case 2:
        h ^= byte(1) << 8U;
        [[fallthrough]];
      case 1:
        h ^= byte(0);
        h *= kM;
        break;
      default:
        break;
    }
    h ^= h >> 13U;
    h *= kM;
    h ^= h >> 15U;
    return h;
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_MURMUR_HPP_
