// SPDX-License-Identifier: MIT
// Python (placement/profiles/python.hpp): python-memcache's and pymemcache's typed
// constructors place keys as their registry entries do; pymemcache's
// rendezvous refuses servers it cannot tell apart and fails over.
#include <random>
#include <span>

#include "gtest/gtest.h"
#include "memshard/placement/profiles/python.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/locator_checks.hpp"
#include "support/same_placement.hpp"

namespace profiles_python_test {
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

TEST(PythonProfileTest, RendezvousServersThatWouldShareEveryScoreAreRefused) {
  // A name equal to another server's "host:port".
  EXPECT_THROW(static_cast<void>(profiles::pymemcache_rendezvous(
                   memshard::parse_servers("a:11211,b:11211:1:a:11211,c:11211"))),
               memshard::ConfigError);
}

// Ejecting a server moves only its own keys, each to a server not ejected.
TEST(PythonProfileTest, RendezvousFailoverMovesOnlyTheAvoidedServersKeys) {
  const auto make = [](std::span<const memshard::Server> servers) {
    return profiles::pymemcache_rendezvous(servers);
  };
  static_assert(memshard::FailoverLocator<decltype(make(std::span<const memshard::Server>{}))>);
  memshard::testing::expect_avoiding_keeps_live_servers_keys(make, true);
  memshard::testing::expect_all_avoided_answers_locate(make, true);
  memshard::testing::expect_ejecting_one_moves_only_its_keys(make, true);
}

}  // namespace
}  // namespace profiles_python_test
