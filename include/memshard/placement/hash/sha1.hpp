// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_SHA1_HPP_
#define MEMSHARD_PLACEMENT_HASH_SHA1_HPP_

// placement/hash/sha1.hpp: SHA-1 (FIPS 180-4), for the ring Ruby's Dalli builds: each point is
// the first four bytes of the SHA-1 digest of its point string, big-endian.
// SHA-1 is not used here for security, only to place keys like Dalli does.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memshard/placement/hash/hasher.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Sha1: Sha1::digest(bytes) is the 20-byte SHA-1 digest; as a Hasher,
/// Sha1{}(bytes) is the digest's first four bytes read big-endian (Dalli's
/// point value).
struct Sha1 {
  using Digest = std::array<std::uint8_t, 20>;

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "sha1"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    const std::array<std::uint32_t, 5> state = words(bytes);
    return state[0];
  }

  /// digest: the SHA-1 digest of `bytes`.
  [[nodiscard]] static constexpr auto digest(std::string_view bytes) noexcept -> Digest {
    const std::array<std::uint32_t, 5> state = words(bytes);
    Digest out{};
    for (std::size_t i = 0; i < 5; ++i) {
      for (std::size_t b = 0; b < 4; ++b) {
        out[i * 4 + b] = static_cast<std::uint8_t>(state[i] >> (24U - 8U * b));
      }
    }
    return out;
  }

  /// words: the digest as its five big-endian 32-bit words.
  [[nodiscard]] static constexpr auto words(std::string_view bytes) noexcept
      -> std::array<std::uint32_t, 5> {
    std::array<std::uint32_t, 5> state = {0x67452301U, 0xEFCDAB89U, 0x98BADCFEU, 0x10325476U,
                                          0xC3D2E1F0U};
    std::array<std::uint8_t, 64> block{};
    std::size_t fill = 0;
    for (const char c : bytes) {
      block[fill++] = static_cast<std::uint8_t>(c);
      if (fill == 64) {
        compress(state, block);
        fill = 0;
      }
    }
    // Padding: 0x80, zeros, then the message length in bits, big-endian.
    block[fill++] = 0x80;
    if (fill > 56) {
      while (fill < 64) {
        block[fill++] = 0;
      }
      compress(state, block);
      fill = 0;
    }
    while (fill < 56) {
      block[fill++] = 0;
    }
    const std::uint64_t bits = static_cast<std::uint64_t>(bytes.size()) * 8U;
    for (std::size_t b = 0; b < 8; ++b) {
      block[56 + b] = static_cast<std::uint8_t>(bits >> (56U - 8U * b));
    }
    compress(state, block);
    return state;
  }

 private:
  [[nodiscard]] static constexpr auto rotl(std::uint32_t x, unsigned r) noexcept -> std::uint32_t {
    return (x << r) | (x >> (32U - r));
  }

  static constexpr void compress(std::array<std::uint32_t, 5>& state,
                                 const std::array<std::uint8_t, 64>& block) noexcept {
    std::array<std::uint32_t, 80> w{};
    for (std::size_t t = 0; t < 16; ++t) {
      w[t] = static_cast<std::uint32_t>(block[4 * t]) << 24U |
             static_cast<std::uint32_t>(block[4 * t + 1]) << 16U |
             static_cast<std::uint32_t>(block[4 * t + 2]) << 8U |
             static_cast<std::uint32_t>(block[4 * t + 3]);
    }
    for (std::size_t t = 16; t < 80; ++t) {
      w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    }
    std::uint32_t a = state[0];
    std::uint32_t b = state[1];
    std::uint32_t c = state[2];
    std::uint32_t d = state[3];
    std::uint32_t e = state[4];
    for (std::size_t t = 0; t < 80; ++t) {
      std::uint32_t f = 0;
      std::uint32_t k = 0;
      if (t < 20) {
        f = (b & c) | (~b & d);
        k = 0x5A827999U;
      } else if (t < 40) {
        f = b ^ c ^ d;
        k = 0x6ED9EBA1U;
      } else if (t < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8F1BBCDCU;
      } else {
        f = b ^ c ^ d;
        k = 0xCA62C1D6U;
      }
      const std::uint32_t temp = rotl(a, 5) + f + e + k + w[t];
      e = d;
      d = c;
      c = rotl(b, 30);
      b = a;
      a = temp;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_SHA1_HPP_
