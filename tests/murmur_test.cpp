// SPDX-License-Identifier: MIT
// murmur.hpp: libmemcached's MurmurHash2 (seed 0xdeadbeef * length), against
// libhashkit.
#include "memshard/placement/hash/murmur.hpp"

#include <libhashkit-1.0/hashkit.h>

#include "gtest/gtest.h"
#include "memshard/placement/hash/hasher.hpp"
#include "support/hasher_conformance.hpp"
#include "support/hashkit_reference.hpp"

namespace memshard::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Murmur, HasherConformanceTest, Murmur);
static_assert(kConstantEvaluable<Murmur>);

using MurmurHashkitPairs = ::testing::Types<HashkitPair<Murmur, HASHKIT_HASH_MURMUR>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Murmur, HashkitConformanceTest, MurmurHashkitPairs);

static_assert(Hasher<Murmur>);

}  // namespace memshard::testing
