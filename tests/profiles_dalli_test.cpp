// SPDX-License-Identifier: MIT
// Dalli (placement/profiles/dalli.hpp): the typed constructor places keys as its
// registry entry does, refuses the server lists Dalli cannot tell apart and
// fails over as a ring, and Dalli's stored keys are what dalli_key says.
#include <random>
#include <span>
#include <string>

#include "gtest/gtest.h"
#include "memshard/placement/profiles/dalli.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/locator_checks.hpp"
#include "support/same_placement.hpp"

namespace profiles_dalli_test {
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

TEST(DalliProfileTest, ServersThatWouldShareEveryPointAreRefused) {
  // A name equal to another server's "host:port".
  EXPECT_THROW(static_cast<void>(
                   profiles::dalli(memshard::parse_servers("a:11211,b:11211:1:a:11211,c:11211"))),
               memshard::ConfigError);
}

// Ejecting a server moves only its own keys, each to a server not ejected.
TEST(DalliProfileTest, FailoverMovesOnlyTheAvoidedServersKeys) {
  const auto make = [](std::span<const memshard::Server> servers) {
    return profiles::dalli(servers);
  };
  static_assert(memshard::FailoverLocator<decltype(make(std::span<const memshard::Server>{}))>);
  memshard::testing::expect_avoiding_keeps_live_servers_keys(make, true);
  memshard::testing::expect_all_avoided_answers_locate(make, true);
  memshard::testing::expect_ejecting_one_moves_only_its_keys(make, true);
}

TEST(DalliProfileTest, DalliKeyNamespacesAndShortensKeysAsDalliStoresThem) {
  using profiles::dalli_key;
  EXPECT_EQ(dalli_key("user:1"), "user:1");
  EXPECT_EQ(dalli_key("user:1", "app"), "app:user:1");
  const std::string exact(250, 'k');
  EXPECT_EQ(dalli_key(exact), exact);
  // Over 250 characters: a prefix, ":md5:", and the hex MD5 of the whole key.
  const std::string long_key(251, 'k');
  const std::string cut = dalli_key(long_key);
  EXPECT_EQ(cut.size(), 212U + 5U + 32U);
  EXPECT_EQ(cut.substr(0, 212), std::string(212, 'k'));
  EXPECT_EQ(cut.substr(212, 5), ":md5:");
  const std::string namespaced = dalli_key(std::string(247, 'k'), "app");  // 251 characters
  EXPECT_EQ(namespaced.substr(0, 213), "app:" + std::string(209, 'k'));
  EXPECT_EQ(namespaced.size(), 213U + 5U + 32U);
  // Characters, not bytes: 200 two-byte characters are 400 bytes but short.
  std::string wide;
  for (int i = 0; i < 200; ++i) {
    wide += "\xC3\xA9";
  }
  EXPECT_EQ(dalli_key(wide), wide);
  // A byte that starts no valid sequence counts as a character, as in Ruby.
  EXPECT_NE(dalli_key(std::string(250, 'a') + "\x80"), std::string(250, 'a') + "\x80");
}

}  // namespace
}  // namespace profiles_dalli_test
