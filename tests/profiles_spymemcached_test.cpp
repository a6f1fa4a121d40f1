// SPDX-License-Identifier: MIT
// spymemcached (placement/profiles/spymemcached.hpp): the typed constructors place keys
// as their registry entries do, with and without a weights map, and for both
// names of spymemcached's hash vocabulary; the ketama ring's tie rule and the
// server lists it refuses.
#include <random>

#include "gtest/gtest.h"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/java_string.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "memshard/placement/profiles/spymemcached.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace profiles_spymemcached_test {
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

// md5 x4 points never collide in practice, so no golden table shows a tie:
// the rule measured on spymemcached (the server added last) is pinned on the
// options, for every format; its effect is KetamaLocatorTiesTest's.
TEST(SpymemcachedProfileTest, KetamaBreaksTiesForTheLastServer) {
  EXPECT_EQ(profiles::spymemcached_ketama_options(false, false).ties,
            memshard::TieBreak::kLastServer);
  EXPECT_EQ(profiles::spymemcached_ketama_options(true, true).ties,
            memshard::TieBreak::kLastServer);
}

TEST(SpymemcachedProfileTest, KetamaRefusesServersItCannotTellApartOrWeighs) {
  // A name equal to another server's "host:port".
  EXPECT_THROW(static_cast<void>(profiles::spymemcached_ketama(
                   memshard::parse_servers("a:11211,b:11211:1:a:11211,c:11211"), false)),
               memshard::ConfigError);
  // Weights with no weights map: the Java locator would ignore them.
  EXPECT_THROW(static_cast<void>(memshard::make_locator(
                   "spymemcached-ketama", memshard::parse_servers("a:11211:2,b:11211"),
                   {.weighted = false})),
               memshard::ConfigError);
}

}  // namespace
}  // namespace profiles_spymemcached_test
