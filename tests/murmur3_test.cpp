// SPDX-License-Identifier: MIT
// murmur3.hpp: MurmurHash3 x86_32 (pymemcache's rendezvous score): the
// reference implementation's known answers and its streaming form.
#include "memshard/placement/hash/murmur3.hpp"

#include <random>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/placement/hash/hasher.hpp"
#include "support/hasher_conformance.hpp"

namespace memshard::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Murmur3, HasherConformanceTest, Murmur3_32);
INSTANTIATE_TYPED_TEST_SUITE_P(Murmur3, StreamingHasherConformanceTest, Murmur3_32);
static_assert(kConstantEvaluable<Murmur3_32>);

}  // namespace memshard::testing

namespace murmur3_test {
namespace {

using memshard::Murmur3_32;

static_assert(memshard::Hasher<Murmur3_32>);
// MurmurHash3 x86_32, seed 0: the reference implementation's known answers.
static_assert(Murmur3_32{}("") == 0U);
static_assert(Murmur3_32::hash("", 1) == 0x514E28B7U);
static_assert(Murmur3_32{}("hello") == 0x248BFA47U);
static_assert(Murmur3_32{}("The quick brown fox jumps over the lazy dog") == 0x2E4FF723U);

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

}  // namespace
}  // namespace murmur3_test
