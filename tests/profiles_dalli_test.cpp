// SPDX-License-Identifier: MIT
// Dalli (profiles/dalli.hpp): the typed constructor places keys as its
// registry entry does, and Dalli's stored keys go where dalli_key says.
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "memshard/profiles/dalli.hpp"
#include "memshard/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace {

using memshard::testing::FleetShape;
using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

TEST(DalliProfileTest, TypedConstructorEqualsItsRegistryEntry) {
  std::mt19937 rng(51);
  for (const bool weights : {false, true}) {
    const auto servers = random_fleet(rng, 8, FleetShape{.weights = weights});
    EXPECT_TRUE(same_placement(profiles::dalli(servers), "dalli", servers));
  }
}

TEST(DalliProfileTest, DalliKeyPrefixesTheNamespace) {
  EXPECT_EQ(profiles::dalli_key("user:42"), "user:42");
  EXPECT_EQ(profiles::dalli_key("user:42", "app"), "app:user:42");
  const std::string longest(250, 'k');
  EXPECT_EQ(profiles::dalli_key(longest), longest);
  const std::string shortened = profiles::dalli_key(longest + "k");
  EXPECT_EQ(shortened.substr(0, 212), longest.substr(0, 212));
  EXPECT_EQ(shortened.substr(212, 5), ":md5:");
  EXPECT_EQ(shortened.size(), 212U + 5U + 32U);
}

}  // namespace
