// SPDX-License-Identifier: MIT
// Every hasher: published vectors, compile-time answers, and libhashkit (the
// hash library inside libmemcached) on many random keys.
#include "memshard/hashers.hpp"

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

namespace {

using memshard::Crc32;
using memshard::Fnv1_32;
using memshard::Fnv1_64;
using memshard::Fnv1a_32;
using memshard::Fnv1a_64;
using memshard::LibmemcachedCrc;
using memshard::Md5;
using memshard::Murmur;
using memshard::OneAtATime;

// Compile-time known answers.
static_assert(memshard::Hasher<Crc32> && memshard::Hasher<Md5> && memshard::Hasher<Murmur>);
static_assert(Crc32{}("123456789") == 0xCBF43926U);
static_assert(Crc32{}("") == 0U);
static_assert(LibmemcachedCrc{}("123456789") == ((0xCBF43926U >> 16U) & 0x7FFFU));
static_assert(Fnv1a_32{}("") == 0x811C9DC5U);
static_assert(Fnv1a_32{}("a") == 0xE40C292CU);
static_assert(Fnv1_32{}("a") == 0x050C5D7EU);
static_assert(Fnv1_64{}("a") == 0x8601B7BEU);  // low half of FNV-1 64 "a" = 0xaf63bd4c8601b7be
static_assert(Md5{}("") == 0xD98C1DD4U);       // d41d8cd9... read little-endian
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

TEST(OneAtATimeTest, WidensBytesAsSignedChar) {
  // With unsigned widening, 0x80 would add 0x80; libmemcached adds 0xFFFFFF80.
  auto unsigned_oaat = [](std::string_view bytes) {
    std::uint32_t h = 0;
    for (const char c : bytes) {
      h += static_cast<unsigned char>(c);
      h += h << 10U;
      h ^= h >> 6U;
    }
    h += h << 3U;
    h ^= h >> 11U;
    h += h << 15U;
    return h;
  };
  EXPECT_EQ(OneAtATime{}("plain ascii"), unsigned_oaat("plain ascii"));
  EXPECT_NE(OneAtATime{}("\x80"), unsigned_oaat("\x80"));
}

// Each hasher against libhashkit's own function.
template <class Hash, hashkit_hash_algorithm_t kAlgorithm>
struct HashkitPair {
  using Hasher = Hash;
  static constexpr hashkit_hash_algorithm_t algorithm = kAlgorithm;
};

template <class Pair>
class HashkitConformanceTest : public ::testing::Test {};

using HashkitPairs = ::testing::Types<
    HashkitPair<OneAtATime, HASHKIT_HASH_DEFAULT>, HashkitPair<Md5, HASHKIT_HASH_MD5>,
    HashkitPair<LibmemcachedCrc, HASHKIT_HASH_CRC>, HashkitPair<Fnv1_64, HASHKIT_HASH_FNV1_64>,
    HashkitPair<Fnv1a_64, HASHKIT_HASH_FNV1A_64>, HashkitPair<Fnv1_32, HASHKIT_HASH_FNV1_32>,
    HashkitPair<Fnv1a_32, HASHKIT_HASH_FNV1A_32>, HashkitPair<Murmur, HASHKIT_HASH_MURMUR>>;
TYPED_TEST_SUITE(HashkitConformanceTest, HashkitPairs);

auto reference(std::string_view key, hashkit_hash_algorithm_t algorithm) -> std::uint32_t {
  return libhashkit_digest(key.data(), key.size(), algorithm);
}

TYPED_TEST(HashkitConformanceTest, RandomBytesOfEveryLengthUpTo300) {
  using Hash = typename TypeParam::Hasher;
  std::mt19937 rng(42);
  for (int i = 0; i < 5000; ++i) {
    std::string key(static_cast<std::size_t>(i % 301), '\0');
    for (char& c : key) {
      c = static_cast<char>(rng());  // includes bytes >= 0x80 and NUL
    }
    ASSERT_EQ(Hash{}(key), reference(key, TypeParam::algorithm))
        << Hash::name() << " length " << key.size();
  }
}

TYPED_TEST(HashkitConformanceTest, AllByteValuesForwardAndReversed) {
  using Hash = typename TypeParam::Hasher;
  std::string forward;
  for (int byte = 0; byte < 256; ++byte) {
    const std::string single(1, static_cast<char>(byte));
    ASSERT_EQ(Hash{}(single), reference(single, TypeParam::algorithm)) << byte;
    forward.push_back(static_cast<char>(byte));
  }
  const std::string reversed(forward.rbegin(), forward.rend());
  EXPECT_EQ(Hash{}(forward), reference(forward, TypeParam::algorithm));
  EXPECT_EQ(Hash{}(reversed), reference(reversed, TypeParam::algorithm));
}

TYPED_TEST(HashkitConformanceTest, ConstantEvaluationAgreesWithRunTime) {
  using Hash = typename TypeParam::Hasher;
  constexpr std::uint32_t kAtCompileTime = Hash{}("compile-time key \xC3\xA9 0123456789");
  const std::string key = "compile-time key \xC3\xA9 0123456789";
  EXPECT_EQ(kAtCompileTime, Hash{}(key));
  EXPECT_EQ(kAtCompileTime, reference(key, TypeParam::algorithm));
}

TEST(VisitHasherTest, EveryNameResolvesToTheHasherOfThatName) {
  for (const std::string_view name : memshard::kHashNames) {
    const std::string_view resolved =
        memshard::visit_hasher(name, [](auto hash) { return decltype(hash)::name(); });
    EXPECT_EQ(resolved, name);
  }
  EXPECT_EQ(memshard::visit_hasher("default", [](auto hash) { return decltype(hash)::name(); }),
            OneAtATime::name());
}

TEST(VisitHasherTest, UnknownNameThrowsListingTheKnownOnes) {
  try {
    (void)memshard::visit_hasher("sha1", [](auto hash) { return hash("x"); });
    FAIL() << "no exception";
  } catch (const memshard::ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("sha1"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("one_at_a_time"), std::string::npos);
  }
}

}  // namespace
