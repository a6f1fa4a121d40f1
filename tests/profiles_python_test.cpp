// SPDX-License-Identifier: MIT
// Python (profiles/python.hpp): python-memcache's and pymemcache's typed
// constructors place keys as their registry entries do.
#include <random>

#include "gtest/gtest.h"
#include "memshard/profiles/python.hpp"
#include "memshard/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace {

using memshard::testing::FleetShape;
using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

TEST(PythonProfileTest, TypedConstructorsEqualTheirRegistryEntries) {
  std::mt19937 rng(31);
  const auto servers = random_fleet(rng, 7, FleetShape{.weights = true});
  EXPECT_TRUE(same_placement(profiles::python_memcache(servers), "python-memcache", servers));
  EXPECT_TRUE(
      same_placement(profiles::pymemcache_rendezvous(servers), "pymemcache-rendezvous", servers));
  EXPECT_TRUE(same_placement(profiles::pymemcache_rendezvous_bytes(servers),
                             "pymemcache-rendezvous-bytes", servers));
}

}  // namespace
