// SPDX-License-Identifier: MIT
// gomemcache (placement/profiles/gomemcache.hpp): the typed constructor places keys as
// its registry entry does, which is modulo-crc32's placement.
#include <random>

#include "gtest/gtest.h"
#include "memshard/placement/profiles/gomemcache.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace profiles_gomemcache_test {
namespace {

using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

TEST(GomemcacheProfileTest, TypedConstructorEqualsItsRegistryEntryAndModuloCrc32) {
  std::mt19937 rng(61);
  const auto servers = random_fleet(rng, 9);
  EXPECT_TRUE(same_placement(profiles::gomemcache(servers), "gomemcache", servers));
  EXPECT_TRUE(same_placement(profiles::gomemcache(servers), "modulo-crc32", servers));
}

}  // namespace
}  // namespace profiles_gomemcache_test
