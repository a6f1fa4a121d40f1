// SPDX-License-Identifier: MIT
// md5.hpp: RFC 1321 vectors, the word and digest views, hash_many, and
// libhashkit's MD5 at every length across the block boundaries.
#include "memshard/placement/hash/md5.hpp"

#include <libhashkit-1.0/hashkit.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/detail/bytes.hpp"
#include "memshard/placement/hash/hasher.hpp"
#include "support/hasher_conformance.hpp"
#include "support/hashkit_reference.hpp"

namespace memshard::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Md5, HasherConformanceTest, Md5);
INSTANTIATE_TYPED_TEST_SUITE_P(Md5, BatchHasherConformanceTest, Md5);
static_assert(kConstantEvaluable<Md5>);

using Md5HashkitPairs = ::testing::Types<HashkitPair<Md5, HASHKIT_HASH_MD5>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Md5, HashkitConformanceTest, Md5HashkitPairs);

}  // namespace memshard::testing

namespace md5_test {
namespace {

using memshard::Md5;

// Compile-time known answers.
static_assert(memshard::Hasher<Md5>);
static_assert(Md5{}("") == 0xD98C1DD4U);  // d41d8cd9... read little-endian
static_assert(Md5::digest("abc")[0] == 0x90 && Md5::digest("abc")[15] == 0x72);

auto hex(const Md5::Digest& digest) -> std::string {
  std::string out;
  memshard::detail::append_hex(out, digest);
  return out;
}

TEST(Md5Test, Rfc1321Suite) {
  struct Vector {
    std::string_view input;
    std::string_view digest;
  };
  constexpr std::array<Vector, 7> kSuite = {{
      {"", "d41d8cd98f00b204e9800998ecf8427e"},
      {"a", "0cc175b9c0f1b6a831c399e269772661"},
      {"abc", "900150983cd24fb0d6963f7d28e17f72"},
      {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
      {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
      {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
       "d174ab98d277d9f5a5611c2c9f419d9f"},
      {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
       "57edf4a22be3c955ac49da2e2107b67a"},
  }};
  for (const auto& vector : kSuite) {
    EXPECT_EQ(hex(Md5::digest(vector.input)), vector.digest) << vector.input;
  }
}

TEST(Md5Test, HashManyEqualsOneKeyAtATime) {
  // Every length from 0 to 80 (one block holds up to 55 bytes), in shuffled
  // order so that short and long keys interleave in the four-key batches.
  std::mt19937 rng(11);
  std::vector<std::string> keys;
  for (int round = 0; round < 5; ++round) {
    for (std::size_t length = 0; length <= 80; ++length) {
      std::string key(length, '\0');
      for (char& byte : key) {
        byte = static_cast<char>(rng());
      }
      keys.push_back(std::move(key));
    }
  }
  std::shuffle(keys.begin(), keys.end(), rng);
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4},
                                  std::size_t{5}, keys.size()}) {
    const std::vector<std::string_view> views(keys.begin(),
                                              keys.begin() + static_cast<std::ptrdiff_t>(count));
    std::vector<std::uint32_t> out(count + 1, 0xdeadbeef);
    Md5::hash_many(views, out);
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(out[i], Md5{}(views[i]))
          << "key " << i << " of " << count << ", " << views[i].size() << " bytes";
    }
    EXPECT_EQ(out[count], 0xdeadbeefU) << "wrote past the keys";
  }
}

TEST(Md5Test, WordsAreTheDigestLittleEndian) {
  const std::string key = "10.0.0.1-7";
  const auto digest = Md5::digest(key);
  const auto words = Md5::words(key);
  for (std::size_t i = 0; i < 4; ++i) {
    const std::uint32_t expected = static_cast<std::uint32_t>(digest[4 * i]) |
                                   static_cast<std::uint32_t>(digest[4 * i + 1]) << 8U |
                                   static_cast<std::uint32_t>(digest[4 * i + 2]) << 16U |
                                   static_cast<std::uint32_t>(digest[4 * i + 3]) << 24U;
    EXPECT_EQ(words[i], expected) << i;
  }
  EXPECT_EQ(Md5{}(key), words[0]);
}

TEST(Md5Test, EveryLengthAcrossBlockBoundariesMatchesLibhashkit) {
  std::string key;
  for (std::size_t length = 0; length <= 200; ++length) {
    unsigned char expected[16];
    libhashkit_md5_signature(reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                             expected);
    const auto digest = Md5::digest(key);
    EXPECT_TRUE(std::equal(digest.begin(), digest.end(), expected)) << "length " << length;
    key.push_back(static_cast<char>(0x30 + length % 200));
  }
}

}  // namespace
}  // namespace md5_test
