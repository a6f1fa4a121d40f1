// SPDX-License-Identifier: MIT
// migration/migration.hpp: MigrationState's counters and tainted servers (each
// counted once, also from many threads) and MigrationPlacement::old_owner.

#include "memshard/migration/migration.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/server.hpp"

namespace migration_test {
namespace {

using memshard::detail::MigrationState;

TEST(MigrationStateTest, CountersAddUpAndATaintIsCountedOnce) {
  MigrationState state(3);
  EXPECT_FALSE(state.tainted(1));
  MigrationState::count(state.counters().fallback_hits);
  MigrationState::count(state.counters().fallback_hits);
  MigrationState::count(state.counters().copies_revoked);
  state.taint(1);
  state.taint(1);
  state.taint(7);  // not a member: ignored
  EXPECT_TRUE(state.tainted(1));
  EXPECT_FALSE(state.tainted(0));
  EXPECT_FALSE(state.tainted(7));
  const memshard::MigrationStats stats = state.stats();
  EXPECT_TRUE(stats.active);
  EXPECT_EQ(stats.fallback_hits, 2U);
  EXPECT_EQ(stats.copies_revoked, 1U);
  EXPECT_EQ(stats.tainted_servers, 1U);
  EXPECT_EQ(stats.copies_stored, 0U);
}

TEST(MigrationStateTest, ThreadsCountWithoutLosingAny) {
  MigrationState state(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&state] {
      for (int i = 0; i < 1000; ++i) {
        MigrationState::count(state.counters().new_hits);
        state.taint(0);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(state.stats().new_hits, 4000U);
  EXPECT_EQ(state.stats().tainted_servers, 1U);
}

TEST(MigrationPlacementTest, OldOwnerMapsTheOldLocatorOntoMembers) {
  using Modulo = memshard::ModuloLocator<memshard::Crc32>;
  const auto servers = memshard::parse_servers("a:1,b:2");
  memshard::MigrationPlacement<Modulo> placement;
  placement.locator = std::make_shared<const Modulo>(servers);
  placement.member_of = {5, 3};
  for (const char* key : {"x", "y", "z", "w"}) {
    EXPECT_EQ(placement.old_owner(key), placement.locator->locate(key) == 0 ? 5U : 3U) << key;
  }
}

}  // namespace
}  // namespace migration_test
