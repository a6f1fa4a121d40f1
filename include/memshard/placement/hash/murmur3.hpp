// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_MURMUR3_HPP_
#define MEMSHARD_PLACEMENT_HASH_MURMUR3_HPP_

// placement/hash/murmur3.hpp: MurmurHash3 x86_32 with seed 0, the hash of pymemcache's
// rendezvous hashing. Not the same function as libmemcached's "murmur"
// (MurmurHash2, see murmur.hpp).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memshard/detail/bytes.hpp"
#include "memshard/placement/hash/hasher.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Murmur3_32: MurmurHash3 x86_32, seed 0, blocks read little-endian.
/// Murmur3_32{}("") == 0; Murmur3_32{}("hello") == 0x248bfa47.
struct Murmur3_32 {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "murmur3_32"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    return hash(bytes, 0);
  }

  /// hash: MurmurHash3 x86_32 of `bytes` with `seed`.
  [[nodiscard]] static constexpr auto hash(std::string_view bytes, std::uint32_t seed) noexcept
      -> std::uint32_t {
    std::uint32_t h = seed;
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    for (; left >= 4; left -= 4, p += 4) {
      h ^= mix(detail::load_le32(p));
      h = rotl(h, 13) * 5U + 0xe6546b64U;
    }
    std::uint32_t tail = 0;
    auto byte = [p](std::size_t i) {
      return static_cast<std::uint32_t>(static_cast<unsigned char>(p[i]));
    };
    switch (left) {
      case 3:
        tail ^= byte(2) << 16U;
        [[fallthrough]];
      case 2:
        tail ^= byte(1) << 8U;
        [[fallthrough]];
      case 1:
        tail ^= byte(0);
        h ^= mix(tail);
        break;
      default:
        break;
    }
    h ^= static_cast<std::uint32_t>(bytes.size());
    return fmix(h);
  }

  /// Stream: MurmurHash3 x86_32 over several pieces, as if concatenated:
  /// `Stream s; s.update(a); s.update(b); s.finish() == hash(a + b, 0)`.
  /// Copying a Stream forks the computation (hash a shared prefix once).
  class Stream {
   public:
    constexpr void update(std::string_view bytes) noexcept {
      total_ += bytes.size();
      std::size_t i = 0;
      while (carried_ != 0 && i < bytes.size()) {
        take(bytes[i++]);
      }
      for (; i + 4 <= bytes.size(); i += 4) {
        block(detail::load_le32(bytes.data() + i));
      }
      while (i < bytes.size()) {
        take(bytes[i++]);
      }
    }

    [[nodiscard]] constexpr auto finish() const noexcept -> std::uint32_t {
      std::uint32_t h = h_;
      if (carried_ != 0) {
        h ^= mix(carry_);
      }
      h ^= static_cast<std::uint32_t>(total_);
      return fmix(h);
    }

   private:
    constexpr void take(char c) noexcept {
      carry_ |= static_cast<std::uint32_t>(static_cast<unsigned char>(c)) << (8U * carried_);
      if (++carried_ == 4) {
        block(carry_);
        carry_ = 0;
        carried_ = 0;
      }
    }
    constexpr void block(std::uint32_t k) noexcept {
      h_ ^= mix(k);
      h_ = rotl(h_, 13) * 5U + 0xe6546b64U;
    }

    std::uint32_t h_ = 0;
    std::uint32_t carry_ = 0;
    unsigned carried_ = 0;
    std::size_t total_ = 0;
  };

 private:
  [[nodiscard]] static constexpr auto fmix(std::uint32_t h) noexcept -> std::uint32_t {
    h ^= h >> 16U;
    h *= 0x85ebca6bU;
    h ^= h >> 13U;
    h *= 0xc2b2ae35U;
    h ^= h >> 16U;
    return h;
  }
  [[nodiscard]] static constexpr auto rotl(std::uint32_t x, unsigned r) noexcept -> std::uint32_t {
    return (x << r) | (x >> (32U - r));
  }
  [[nodiscard]] static constexpr auto mix(std::uint32_t k) noexcept -> std::uint32_t {
    k *= 0xcc9e2d51U;
    k = rotl(k, 15);
    return k * 0x1b873593U;
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_MURMUR3_HPP_
