// SPDX-License-Identifier: MIT
// one_at_a_time.hpp: Jenkins' one-at-a-time hash as libmemcached computes it
// (its default), against libhashkit.
#include "memshard/placement/hash/one_at_a_time.hpp"

#include <libhashkit-1.0/hashkit.h>

#include <cstdint>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/placement/hash/hasher.hpp"
#include "support/hasher_conformance.hpp"
#include "support/hashkit_reference.hpp"

namespace memshard::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(OneAtATime, HasherConformanceTest, OneAtATime);
static_assert(kConstantEvaluable<OneAtATime>);

using OneAtATimeHashkitPairs = ::testing::Types<HashkitPair<OneAtATime, HASHKIT_HASH_DEFAULT>>;
INSTANTIATE_TYPED_TEST_SUITE_P(OneAtATime, HashkitConformanceTest, OneAtATimeHashkitPairs);

}  // namespace memshard::testing

namespace one_at_a_time_test {
namespace {

using memshard::OneAtATime;

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

}  // namespace
}  // namespace one_at_a_time_test
