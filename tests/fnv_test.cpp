// SPDX-License-Identifier: MIT
// fnv.hpp: FNV-1 and FNV-1a, 32 and 64 bits (reduced as libmemcached does),
// against published values and libhashkit.
#include "memshard/placement/hash/fnv.hpp"

#include <libhashkit-1.0/hashkit.h>

#include "gtest/gtest.h"
#include "memshard/placement/hash/hasher.hpp"
#include "support/hasher_conformance.hpp"
#include "support/hashkit_reference.hpp"

namespace memshard::testing {

using FnvHashers = ::testing::Types<Fnv1_32, Fnv1a_32, Fnv1_64, Fnv1a_64>;
INSTANTIATE_TYPED_TEST_SUITE_P(Fnv, HasherConformanceTest, FnvHashers);
static_assert(kConstantEvaluable<Fnv1_32> && kConstantEvaluable<Fnv1a_32> &&
              kConstantEvaluable<Fnv1_64> && kConstantEvaluable<Fnv1a_64>);

using FnvHashkitPairs = ::testing::Types<
    HashkitPair<Fnv1_64, HASHKIT_HASH_FNV1_64>, HashkitPair<Fnv1a_64, HASHKIT_HASH_FNV1A_64>,
    HashkitPair<Fnv1_32, HASHKIT_HASH_FNV1_32>, HashkitPair<Fnv1a_32, HASHKIT_HASH_FNV1A_32>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Fnv, HashkitConformanceTest, FnvHashkitPairs);

}  // namespace memshard::testing

namespace fnv_test {
namespace {

using memshard::Fnv1_32;
using memshard::Fnv1_64;
using memshard::Fnv1a_32;

// Compile-time known answers.
static_assert(Fnv1a_32{}("") == 0x811C9DC5U);
static_assert(Fnv1a_32{}("a") == 0xE40C292CU);
static_assert(Fnv1_32{}("a") == 0x050C5D7EU);
static_assert(Fnv1_64{}("a") == 0x8601B7BEU);  // low half of FNV-1 64 "a" = 0xaf63bd4c8601b7be

}  // namespace
}  // namespace fnv_test
