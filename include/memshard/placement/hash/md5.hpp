// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_MD5_HPP_
#define MEMSHARD_PLACEMENT_HASH_MD5_HPP_

// placement/hash/md5.hpp: MD5 (RFC 1321) as a Hasher, with access to the whole digest.
//
// Md5{}(key) is the first four digest bytes read little-endian, as libmemcached's
// MEMCACHED_HASH_MD5 and every ketama implementation read it. Md5::words(key)
// returns all four little-endian words: a weighted ketama ring takes four points
// from each digest.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "memshard/detail/bytes.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

inline constexpr std::array<std::uint32_t, 64> kMd5Sines = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

inline constexpr std::array<int, 16> kMd5Shifts = {7, 12, 17, 22, 5, 9,  14, 20,
                                                   4, 11, 16, 23, 6, 10, 15, 21};

using Md5Words = std::array<std::uint32_t, 4>;

/// md5_steps: MD5's 64 steps on registers a, b, c, d and message words m.
/// `Word` is std::uint32_t, or a vector of them whose lanes are separate
/// messages (Md5Lanes).
template <class Word>
constexpr void md5_steps(Word& a, Word& b, Word& c, Word& d, const Word* m) noexcept {
  // One step: a = b + rotl(a + f + K[i] + m[g], s), then rotate the registers.
  // `b` is the register the previous step just produced, so everything that
  // does not wait on it (`early`) is summed first; MD5 is bound by this chain.
  auto step = [&](Word early, Word f, std::size_t i, std::size_t g) {
    const Word sum = (a + kMd5Sines[i] + m[g] + early) + f;
    const int s = kMd5Shifts[(i / 16) * 4 + i % 4];
    const Word next = b + ((sum << s) | (sum >> (32 - s)));
    a = d;
    d = c;
    c = b;
    b = next;
  };
  const Word zero{};
#pragma GCC unroll 16
  for (std::size_t i = 0; i < 16; ++i) {
    step(zero, d ^ (b & (c ^ d)), i, i);
  }
#pragma GCC unroll 16
  for (std::size_t i = 16; i < 32; ++i) {
    // G = (d & b) | (~d & c): the two terms share no bit, so | is +.
    step(~d & c, d & b, i, (5 * i + 1) % 16);
  }
#pragma GCC unroll 16
  for (std::size_t i = 32; i < 48; ++i) {
    step(zero, b ^ (c ^ d), i, (3 * i + 5) % 16);
  }
#pragma GCC unroll 16
  for (std::size_t i = 48; i < 64; ++i) {
    step(zero, c ^ (b | ~d), i, (7 * i) % 16);
  }
}

/// md5_compress: folds one 64-byte block at `block` into `state`.
constexpr void md5_compress(Md5Words& state, const char* block) noexcept {
  std::array<std::uint32_t, 16> m{};
  for (std::size_t i = 0; i < 16; ++i) {
    m[i] = load_le32(block + 4 * i);
  }
  std::uint32_t a = state[0];
  std::uint32_t b = state[1];
  std::uint32_t c = state[2];
  std::uint32_t d = state[3];
  md5_steps(a, b, c, d, m.data());
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
}

/// md5_words: the MD5 digest of `bytes` as four little-endian words.
[[nodiscard]] constexpr auto md5_words(std::string_view bytes) noexcept -> Md5Words {
  Md5Words state = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  const std::size_t size = bytes.size();
  std::size_t done = 0;
  for (; size - done >= 64; done += 64) {
    md5_compress(state, bytes.data() + done);
  }
  // The tail, the 0x80 marker and the bit length fill one or two last blocks.
  std::array<char, 128> tail{};
  const std::size_t rest = size - done;
  if (std::is_constant_evaluated()) {
    for (std::size_t i = 0; i < rest; ++i) {
      tail[i] = bytes[done + i];
    }
  } else if (rest != 0) {
    std::memcpy(tail.data(), bytes.data() + done, rest);
  }
  tail[rest] = static_cast<char>(0x80);
  const std::size_t tail_size = rest < 56 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(size) * 8U;
  for (std::size_t i = 0; i < 8; ++i) {
    tail[tail_size - 8 + i] = static_cast<char>(static_cast<unsigned char>(bits >> (8 * i)));
  }
  md5_compress(state, tail.data());
  if (tail_size == 128) {
    md5_compress(state, tail.data() + 64);
  }
  return state;
}

/// kMd5LanesMaxKey: the longest key md5_first_words_x4 takes (a key, the
/// 0x80 marker and the 8-byte length fill one 64-byte block).
inline constexpr std::size_t kMd5LanesMaxKey = 55;

#if defined(__GNUC__) || defined(__clang__)
/// Md5Lanes: four 32-bit lanes (one SSE2 register on x86-64).
using Md5Lanes = std::uint32_t __attribute__((vector_size(16)));

/// md5_first_words_x4: the first digest word of four keys of at most
/// kMd5LanesMaxKey bytes each, hashed side by side: MD5's steps depend on one
/// another, so one key leaves the processor idle between them; four keys in
/// the lanes of one vector fill those gaps.
[[nodiscard]] inline auto md5_first_words_x4(const std::string_view* keys) noexcept
    -> std::array<std::uint32_t, 4> {
  std::array<std::array<char, 64>, 4> blocks{};
  for (std::size_t lane = 0; lane < 4; ++lane) {
    const std::string_view key = keys[lane];
    if (!key.empty()) {
      std::memcpy(blocks[lane].data(), key.data(), key.size());
    }
    blocks[lane][key.size()] = static_cast<char>(0x80);
    const std::uint64_t bits = static_cast<std::uint64_t>(key.size()) * 8U;
    for (std::size_t i = 0; i < 8; ++i) {
      blocks[lane][56 + i] = static_cast<char>(static_cast<unsigned char>(bits >> (8 * i)));
    }
  }
  std::array<Md5Lanes, 16> m{};
  for (std::size_t i = 0; i < 16; ++i) {
    m[i] = Md5Lanes{load_le32(blocks[0].data() + 4 * i), load_le32(blocks[1].data() + 4 * i),
                    load_le32(blocks[2].data() + 4 * i), load_le32(blocks[3].data() + 4 * i)};
  }
  const Md5Lanes a0 = {0x67452301, 0x67452301, 0x67452301, 0x67452301};
  Md5Lanes a = a0;
  Md5Lanes b = {0xefcdab89, 0xefcdab89, 0xefcdab89, 0xefcdab89};
  Md5Lanes c = {0x98badcfe, 0x98badcfe, 0x98badcfe, 0x98badcfe};
  Md5Lanes d = {0x10325476, 0x10325476, 0x10325476, 0x10325476};
  md5_steps(a, b, c, d, m.data());
  const Md5Lanes first = a + a0;
  return {first[0], first[1], first[2], first[3]};
}
#endif

}  // namespace detail

/// Md5: MD5 reduced to its first four digest bytes, little-endian
/// (libmemcached MEMCACHED_HASH_MD5, the ketama key hash).
struct Md5 final {  // final: hash_many must always agree with operator()
  using Digest = std::array<unsigned char, 16>;
  using Words = std::array<std::uint32_t, 4>;

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "md5"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    return detail::md5_words(bytes)[0];
  }

  /// hash_many: operator() of every key, out[i] for keys[i] (out.size() >=
  /// keys.size()); keys of up to 55 bytes are hashed four at a time.
  static void hash_many(std::span<const std::string_view> keys,
                        std::span<std::uint32_t> out) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    std::array<std::string_view, 4> lanes{};
    std::array<std::size_t, 4> slots{};
    std::size_t filled = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].size() > detail::kMd5LanesMaxKey) {
        out[i] = detail::md5_words(keys[i])[0];
        continue;
      }
      lanes[filled] = keys[i];
      slots[filled] = i;
      if (++filled == 4) {
        const auto words = detail::md5_first_words_x4(lanes.data());
        for (std::size_t lane = 0; lane < 4; ++lane) {
          out[slots[lane]] = words[lane];
        }
        filled = 0;
      }
    }
    for (std::size_t lane = 0; lane < filled; ++lane) {
      out[slots[lane]] = detail::md5_words(lanes[lane])[0];
    }
#else
    for (std::size_t i = 0; i < keys.size(); ++i) {
      out[i] = detail::md5_words(keys[i])[0];
    }
#endif
  }

  /// words: the digest as four little-endian words; words(k)[i] is the ketama
  /// point LE32(digest, i).
  [[nodiscard]] static constexpr auto words(std::string_view bytes) noexcept -> Words {
    return detail::md5_words(bytes);
  }

  /// digest: the 16-byte MD5 digest, as RFC 1321 prints it.
  [[nodiscard]] static constexpr auto digest(std::string_view bytes) noexcept -> Digest {
    const Words words = detail::md5_words(bytes);
    Digest out{};
    for (std::size_t i = 0; i < 16; ++i) {
      out[i] = static_cast<unsigned char>(words[i / 4] >> (8 * (i % 4)));
    }
    return out;
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_MD5_HPP_
