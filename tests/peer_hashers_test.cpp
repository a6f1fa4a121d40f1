// SPDX-License-Identifier: MIT
// The hashers that only the peer profiles need: MurmurHash3 (pymemcache),
// Java's String.hashCode (spymemcached), SHA-1 (Dalli) and the 15-bit fold
// with its zero rule (python-memcache, pecl memcache): published vectors and
// definitions written out independently here.
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/crc32.hpp"
#include "memshard/detail/bytes.hpp"
#include "memshard/fnv.hpp"
#include "memshard/hasher.hpp"
#include "memshard/java_string.hpp"
#include "memshard/murmur3.hpp"
#include "memshard/sha1.hpp"

namespace {

using memshard::Crc32;
using memshard::Fold15;
using memshard::JavaStringHash;
using memshard::Murmur3_32;
using memshard::Sha1;

static_assert(memshard::Hasher<Murmur3_32> && memshard::Hasher<JavaStringHash> &&
              memshard::Hasher<Sha1> && memshard::Hasher<Fold15<Crc32>>);
// MurmurHash3 x86_32, seed 0: the reference implementation's known answers.
static_assert(Murmur3_32{}("") == 0U);
static_assert(Murmur3_32::hash("", 1) == 0x514E28B7U);
static_assert(Murmur3_32{}("hello") == 0x248BFA47U);
static_assert(Murmur3_32{}("The quick brown fox jumps over the lazy dog") == 0x2E4FF723U);
// Java: "hello".hashCode() == 99162322, "".hashCode() == 0.
static_assert(JavaStringHash{}("hello") == 99162322U);
static_assert(JavaStringHash{}("") == 0U);
// FIPS 180-4 examples.
static_assert(Sha1::words("abc")[0] == 0xA9993E36U && Sha1::words("abc")[4] == 0x9CD0D89DU);

auto hex(const Sha1::Digest& digest) -> std::string {
  std::string out;
  memshard::detail::append_hex(out, digest);
  return out;
}

TEST(Sha1Test, Fips180Examples) {
  EXPECT_EQ(hex(Sha1::digest("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(hex(Sha1::digest("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(hex(Sha1::digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(hex(Sha1::digest(std::string(1000000, 'a'))),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  // The hasher is the first four digest bytes, big-endian.
  EXPECT_EQ(Sha1{}("abc"), 0xA9993E36U);
}

TEST(Sha1Test, PaddingAtEveryLengthAroundABlock) {
  // Lengths 54..66 cross the 56-byte padding boundary; a digest of the
  // message with one more byte must differ and digest() must equal words().
  for (std::size_t length = 50; length < 140; ++length) {
    const std::string message(length, 'x');
    const auto digest = Sha1::digest(message);
    const auto words = Sha1::words(message);
    EXPECT_EQ(static_cast<std::uint32_t>(digest[0]) << 24U |
                  static_cast<std::uint32_t>(digest[1]) << 16U |
                  static_cast<std::uint32_t>(digest[2]) << 8U | digest[3],
              words[0]);
    EXPECT_NE(digest, Sha1::digest(message + "x")) << length;
  }
}

// Java's hashCode over UTF-16 units, written out from its definition.
auto java_hash_utf16(std::u16string_view units) -> std::uint32_t {
  std::uint32_t h = 0;
  for (const char16_t unit : units) {
    h = h * 31U + unit;
  }
  return h;
}

TEST(JavaStringHashTest, DecodesUtf8IntoUtf16Units) {
  EXPECT_EQ(JavaStringHash{}("user:42"), java_hash_utf16(u"user:42"));
  EXPECT_EQ(JavaStringHash{}("caf\xC3\xA9"), java_hash_utf16(u"caf\u00E9"));
  EXPECT_EQ(JavaStringHash{}("\xE6\x9D\xB1\xE4\xBA\xAC"), java_hash_utf16(u"\u6771\u4EAC"));
  // U+1F600 is two UTF-16 units, D83D DE00.
  EXPECT_EQ(JavaStringHash{}("a\xF0\x9F\x98\x80z"), java_hash_utf16(u"a\xD83D\xDE00z"));
}

TEST(JavaStringHashTest, InvalidUtf8CountsEachBadByteAsReplacement) {
  EXPECT_EQ(JavaStringHash{}("a\xFFz"), java_hash_utf16(u"a\uFFFDz"));
  EXPECT_EQ(JavaStringHash{}("\xC3"), java_hash_utf16(u"\uFFFD"));            // truncated
  EXPECT_EQ(JavaStringHash{}("\xC0\xAF"), java_hash_utf16(u"\uFFFD\uFFFD"));  // overlong
  EXPECT_EQ(JavaStringHash{}("\xED\xA0\x80"),                                 // a surrogate
            java_hash_utf16(u"\uFFFD\uFFFD\uFFFD"));
}

TEST(Murmur3Test, StreamEqualsOneShotForEverySplit) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string text(rng() % 40, '\0');
    for (char& c : text) {
      c = static_cast<char>(rng());
    }
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
      for (std::size_t cut2 = cut; cut2 <= text.size(); cut2 += 3) {
        Murmur3_32::Stream stream;
        stream.update(std::string_view(text).substr(0, cut));
        stream.update(std::string_view(text).substr(cut, cut2 - cut));
        stream.update(std::string_view(text).substr(cut2));
        ASSERT_EQ(stream.finish(), Murmur3_32{}(text)) << cut << " " << cut2;
      }
    }
  }
}

TEST(Fold15Test, HighBitsOfTheInnerHashWithZeroAsOne) {
  std::mt19937 rng(11);
  int zeros = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::string key = "k" + std::to_string(rng());
    const std::uint32_t folded = (Crc32{}(key) >> 16U) & 0x7FFFU;
    EXPECT_EQ(Fold15<Crc32>{}(key), folded == 0 ? 1U : folded);
    zeros += folded == 0 ? 1 : 0;
    EXPECT_EQ(Fold15<memshard::Fnv1a_32>{}(key),
              std::max((memshard::Fnv1a_32{}(key) >> 16U) & 0x7FFFU, 1U));
  }
  EXPECT_GT(zeros, 0) << "the zero rule was never exercised";
}

}  // namespace
