// SPDX-License-Identifier: MIT
// sha1.hpp: SHA-1 (Dalli's ring points): the FIPS 180-4 examples and the
// padding around a block.
#include "memshard/placement/hash/sha1.hpp"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "memshard/detail/bytes.hpp"
#include "memshard/placement/hash/hasher.hpp"
#include "support/hasher_conformance.hpp"

namespace memshard::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Sha1, HasherConformanceTest, Sha1);
static_assert(kConstantEvaluable<Sha1>);

}  // namespace memshard::testing

namespace sha1_test {
namespace {

using memshard::Sha1;

static_assert(memshard::Hasher<Sha1>);
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

}  // namespace
}  // namespace sha1_test
