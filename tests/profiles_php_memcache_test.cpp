// SPDX-License-Identifier: MIT
// pecl memcache (placement/profiles/php_memcache.hpp): both hash strategies' typed
// constructors place keys as their registry entries do, for both names of
// pecl's hash vocabulary.
#include <random>

#include "gtest/gtest.h"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/profiles/php_memcache.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace profiles_php_memcache_test {
namespace {

using memshard::testing::FleetShape;
using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

TEST(PhpMemcacheProfileTest, TypedConstructorsEqualTheRegistryForBothHashes) {
  std::mt19937 rng(41);
  const auto servers = random_fleet(rng, 6, FleetShape{.weights = true});
  EXPECT_TRUE(same_placement(profiles::php_memcache(servers), "php-memcache", servers));
  EXPECT_TRUE(same_placement(profiles::php_memcache<memshard::Crc32>(servers), "php-memcache",
                             servers, {.hash = "crc32"}));
  EXPECT_TRUE(same_placement(profiles::php_memcache<memshard::Fnv1a_32>(servers), "php-memcache",
                             servers, {.hash = "fnv"}));
  EXPECT_TRUE(
      same_placement(profiles::php_memcache_standard(servers), "php-memcache-standard", servers));
  EXPECT_TRUE(same_placement(profiles::php_memcache_standard<memshard::Fnv1a_32>(servers),
                             "php-memcache-standard", servers, {.hash = "fnv"}));
}

}  // namespace
}  // namespace profiles_php_memcache_test
