// SPDX-License-Identifier: MIT
// Perl (placement/profiles/perl.hpp): Cache::Memcached and Cache::Memcached::Fast's
// typed constructors place keys as their registry entries do; Cache::Memcached
// refuses fractional weights, and the Fast ketama ring's tie rule.
#include <random>

#include "gtest/gtest.h"
#include "memshard/placement/profiles/perl.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace profiles_perl_test {
namespace {

using memshard::testing::FleetShape;
using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

TEST(PerlProfileTest, CacheMemcachedEqualsItsRegistryEntry) {
  std::mt19937 rng(21);
  const auto servers = random_fleet(rng, 6, FleetShape{.weights = true});
  EXPECT_TRUE(same_placement(profiles::cache_memcached(servers), "cache-memcached", servers));
}

TEST(PerlProfileTest, CacheMemcachedFastEqualsItsRegistryEntryWithAndWithoutKetamaPoints) {
  std::mt19937 rng(22);
  auto servers = random_fleet(rng, 6, FleetShape{.weights = true});
  servers[2].weight = 0.5;  // Cache::Memcached::Fast takes fractional weights
  EXPECT_TRUE(
      same_placement(profiles::cache_memcached_fast(servers), "cache-memcached-fast", servers));
  EXPECT_TRUE(same_placement(profiles::cache_memcached_fast_compat(servers), "cache-memcached-fast",
                             servers));
  EXPECT_TRUE(same_placement(profiles::cache_memcached_fast_ketama(servers, 150),
                             "cache-memcached-fast", servers, {.points = 150}));
}

TEST(PerlProfileTest, CacheMemcachedRefusesFractionalWeights) {
  EXPECT_THROW(static_cast<void>(memshard::make_locator(
                   "cache-memcached", memshard::parse_servers("a:11211:1.5,b:11211"))),
               memshard::ConfigError);
}

// The rule measured on Cache::Memcached::Fast's ketama (the first server) is
// pinned on the options; its effect is KetamaLocatorTiesTest's.
TEST(PerlProfileTest, CacheMemcachedFastKetamaBreaksTiesForTheFirstServer) {
  EXPECT_EQ(profiles::cache_memcached_fast_ketama_options(150).ties,
            memshard::TieBreak::kFirstServer);
}

}  // namespace
}  // namespace profiles_perl_test
