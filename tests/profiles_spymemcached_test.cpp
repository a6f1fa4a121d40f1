// SPDX-License-Identifier: MIT
// spymemcached (profiles/spymemcached.hpp): the typed constructors place keys
// as their registry entries do, with and without a weights map, and for both
// names of spymemcached's hash vocabulary.
#include <random>

#include "gtest/gtest.h"
#include "memshard/crc32.hpp"
#include "memshard/java_string.hpp"
#include "memshard/profiles/registry.hpp"
#include "memshard/profiles/spymemcached.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace {

using memshard::testing::FleetShape;
using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

TEST(SpymemcachedProfileTest, KetamaConstructorsEqualTheirRegistryEntries) {
  std::mt19937 rng(12);
  const auto equal = random_fleet(rng, 8);
  EXPECT_TRUE(
      same_placement(profiles::spymemcached_ketama(equal, false), "spymemcached-ketama", equal));
  EXPECT_TRUE(same_placement(profiles::spymemcached_ketama_libmemcached(equal, false),
                             "spymemcached-ketama-libmemcached", equal));
  // Weighted when asked, or by default when some weight is not 1.
  EXPECT_TRUE(same_placement(profiles::spymemcached_ketama(equal, true), "spymemcached-ketama",
                             equal, {.weighted = true}));
  const auto heavy = random_fleet(rng, 8, FleetShape{.weights = true});
  EXPECT_TRUE(
      same_placement(profiles::spymemcached_ketama(heavy, true), "spymemcached-ketama", heavy));
  EXPECT_TRUE(same_placement(profiles::spymemcached_ketama_libmemcached(heavy, true),
                             "spymemcached-ketama-libmemcached", heavy));
}

TEST(SpymemcachedProfileTest, LibmemcachedNodeKeysAreTheKetamaFormatOption) {
  std::mt19937 rng(13);
  const auto servers = random_fleet(rng, 6);
  EXPECT_TRUE(same_placement(profiles::spymemcached_ketama(servers, false, true),
                             "spymemcached-ketama-libmemcached", servers));
}

TEST(SpymemcachedProfileTest, ArrayModEqualsTheRegistryForBothHashes) {
  std::mt19937 rng(14);
  const auto servers = random_fleet(rng, 5);
  EXPECT_TRUE(
      same_placement(profiles::spymemcached_arraymod(servers), "spymemcached-arraymod", servers));
  EXPECT_TRUE(same_placement(profiles::spymemcached_arraymod<memshard::JavaStringHash>(servers),
                             "spymemcached-arraymod", servers, {.hash = "java_string"}));
  EXPECT_TRUE(same_placement(profiles::spymemcached_arraymod<memshard::LibmemcachedCrc>(servers),
                             "spymemcached-arraymod", servers, {.hash = "crc"}));
}

}  // namespace
