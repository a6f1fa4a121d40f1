// SPDX-License-Identifier: MIT
// crc32.hpp: the full IEEE CRC-32, libmemcached's 15-bit crc and the 15-bit
// fold with its zero rule (python-memcache, pecl memcache).
#include "memshard/placement/hash/crc32.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/hasher.hpp"
#include "support/hasher_conformance.hpp"
#include "support/hashkit_reference.hpp"

namespace memshard::testing {

using Crc32Hashers = ::testing::Types<Crc32, LibmemcachedCrc, Fold15<Crc32>, Fold15<Fnv1a_32>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Crc32, HasherConformanceTest, Crc32Hashers);
static_assert(kConstantEvaluable<Crc32> && kConstantEvaluable<LibmemcachedCrc> &&
              kConstantEvaluable<Fold15<Crc32>> && kConstantEvaluable<Fold15<Fnv1a_32>>);

using Crc32HashkitPairs = ::testing::Types<HashkitPair<LibmemcachedCrc, HASHKIT_HASH_CRC>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Crc32, HashkitConformanceTest, Crc32HashkitPairs);

}  // namespace memshard::testing

namespace crc32_test {
namespace {

using memshard::Crc32;
using memshard::Fold15;
using memshard::LibmemcachedCrc;

// Compile-time known answers.
static_assert(memshard::Hasher<Crc32> && memshard::Hasher<Fold15<Crc32>>);
static_assert(Crc32{}("123456789") == 0xCBF43926U);
static_assert(Crc32{}("") == 0U);
static_assert(LibmemcachedCrc{}("123456789") == ((0xCBF43926U >> 16U) & 0x7FFFU));

TEST(Crc32Test, PublishedVectors) {
  EXPECT_EQ(Crc32{}("The quick brown fox jumps over the lazy dog"), 0x414FA339U);
  EXPECT_EQ(Crc32{}("a"), 0xE8B7BE43U);
  EXPECT_EQ(LibmemcachedCrc{}("a"), (0xE8B7BE43U >> 16U) & 0x7FFFU);
}

TEST(Crc32Test, MatchesBitwiseDefinitionOnRandomBytes) {
  // The textbook bit-at-a-time CRC-32, independent of the table.
  auto bitwise = [](std::string_view bytes) {
    std::uint32_t crc = 0xFFFFFFFFU;
    for (const char c : bytes) {
      crc ^= static_cast<unsigned char>(c);
      for (int bit = 0; bit < 8; ++bit) {
        crc = (crc >> 1U) ^ (0xEDB88320U & (0U - (crc & 1U)));
      }
    }
    return ~crc;
  };
  std::mt19937 rng(1234);
  for (int i = 0; i < 3000; ++i) {
    std::string key(rng() % 301, '\0');
    for (char& c : key) {
      c = static_cast<char>(rng());
    }
    ASSERT_EQ(Crc32{}(key), bitwise(key)) << "length " << key.size();
  }
}

TEST(Fold15Test, HighBitsOfTheInnerHashWithZeroAsOne) {
  std::mt19937 rng(11);
  int zeros = 0;
  for (int i = 0; i < 200000; ++i) {
    // Appended rather than "k" + std::to_string(...): g++ 12 at -O2 warns falsely
    // (-Wstringop-overflow) on that operator+ inlined here.
    std::string key = "k";
    key += std::to_string(rng());
    const std::uint32_t folded = (Crc32{}(key) >> 16U) & 0x7FFFU;
    EXPECT_EQ(Fold15<Crc32>{}(key), folded == 0 ? 1U : folded);
    zeros += folded == 0 ? 1 : 0;
    EXPECT_EQ(Fold15<memshard::Fnv1a_32>{}(key),
              std::max((memshard::Fnv1a_32{}(key) >> 16U) & 0x7FFFU, 1U));
  }
  EXPECT_GT(zeros, 0) << "the zero rule was never exercised";
}

}  // namespace
}  // namespace crc32_test
