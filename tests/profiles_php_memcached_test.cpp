// SPDX-License-Identifier: MIT
// PHP's Memcached names (placement/profiles/php_memcached.hpp): each typed constructor
// places keys as its registry entry does, and as the libmemcached profile it
// is an alias of.
#include <random>

#include "gtest/gtest.h"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/profiles/libmemcached.hpp"
#include "memshard/placement/profiles/php_memcached.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace profiles_php_memcached_test {
namespace {

using memshard::testing::FleetShape;
using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

TEST(PhpMemcachedProfileTest, TypedConstructorsEqualTheirRegistryEntries) {
  std::mt19937 rng(5);
  for (const bool weights : {false, true}) {
    const auto servers = random_fleet(rng, 11, FleetShape{.weights = weights});
    EXPECT_TRUE(same_placement(profiles::php_memcached(servers), "php-memcached", servers));
    EXPECT_TRUE(same_placement(profiles::php_memcached<memshard::Murmur>(servers), "php-memcached",
                               servers, {"murmur", 0}));
    EXPECT_TRUE(same_placement(profiles::php_memcached_libketama(servers),
                               "php-memcached-libketama", servers));
    EXPECT_TRUE(same_placement(profiles::php_memcached_libketama<memshard::Fnv1a_32>(servers, 80),
                               "php-memcached-libketama", servers, {"fnv1a_32", 80}));
    EXPECT_TRUE(same_placement(profiles::php_memcached_consistent(servers),
                               "php-memcached-consistent", servers));
    EXPECT_TRUE(same_placement(profiles::php_memcached_consistent<memshard::Md5>(servers, 40),
                               "php-memcached-consistent", servers, {"md5", 40}));
  }
}

TEST(PhpMemcachedProfileTest, EachIsTheLibmemcachedProfileOfItsOption) {
  std::mt19937 rng(6);
  for (const bool weights : {false, true}) {
    const auto servers = random_fleet(rng, 9, FleetShape{.weights = weights});
    EXPECT_TRUE(same_placement(profiles::libmemcached_modula(servers), "php-memcached", servers));
    EXPECT_TRUE(same_placement(profiles::libmemcached_ketama_weighted(servers),
                               "php-memcached-libketama", servers));
    EXPECT_TRUE(same_placement(profiles::libmemcached_ketama(servers), "php-memcached-consistent",
                               servers));
  }
}

}  // namespace
}  // namespace profiles_php_memcached_test
