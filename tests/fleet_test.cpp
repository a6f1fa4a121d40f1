// SPDX-License-Identifier: MIT
// fleet/fleet.hpp without a server: publishing snapshots, refusals that leave
// the fleet as it was, health kept for the servers that stay, and readers on
// other threads while the fleet changes.

#include "memshard/fleet/fleet.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "memshard/errors.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/server.hpp"

namespace fleet_test {
namespace {

using Ring = memshard::KetamaLocator<memshard::Md5>;
using memshard::Fleet;
using memshard::Server;

auto ring_factory() -> Fleet<Ring>::LocatorFactory {
  return [](std::span<const Server> servers) { return std::make_shared<const Ring>(servers); };
}

auto fleet_of(const char* list) -> std::unique_ptr<Fleet<Ring>> {
  auto servers = memshard::parse_servers(list);
  auto ring = std::make_shared<const Ring>(servers);
  return std::make_unique<Fleet<Ring>>(std::move(servers), std::move(ring), ring_factory());
}

TEST(FleetTest, PublishReplacesTheSnapshotAndKeepsHealthOfServersThatStay) {
  auto fleet = fleet_of("a:1,b:2,c:3");
  const auto before = fleet->current();
  EXPECT_EQ(before->generation, fleet->generation());
  before->members.health[1]->hits = 5;
  auto servers = memshard::parse_servers("b:2,c:3,d:4");
  fleet->publish(servers, fleet->build(servers));
  const auto after = fleet->current();
  EXPECT_EQ(after->generation, before->generation + 1);
  EXPECT_EQ(fleet->generation(), after->generation);
  EXPECT_EQ(after->members.health[0].get(), before->members.health[1].get());
  EXPECT_EQ(after->members.health[0]->hits.load(), 5U);
  // The old snapshot is untouched: calls running on it finish on it.
  EXPECT_EQ(before->members.servers.size(), 3U);
  EXPECT_EQ(before->members.servers[0].host, "a");
  EXPECT_EQ(after->locator->size(), 3U);
}

TEST(FleetTest, RefusalsLeaveTheFleetAsItWas) {
  auto fleet = fleet_of("a:1,b:2");
  const auto before = fleet->current();
  const std::uint64_t generation = fleet->generation();
  const auto three = memshard::parse_servers("a:1,b:2,c:3");
  EXPECT_THROW(fleet->publish({}, std::make_shared<const Ring>(three)), memshard::ConfigError);
  EXPECT_THROW(fleet->publish(three, nullptr), memshard::ConfigError);
  EXPECT_THROW(fleet->publish(three, std::make_shared<const Ring>(before->members.servers)),
               memshard::ConfigError);  // a locator for another list
  EXPECT_EQ(fleet->generation(), generation);
  EXPECT_EQ(fleet->current().get(), before.get());
}

TEST(FleetTest, WithoutAFactoryOnlyAGivenLocatorWorks) {
  auto servers = memshard::parse_servers("a:1,b:2");
  auto ring = std::make_shared<const Ring>(servers);
  Fleet<Ring> fleet(servers, ring, {});
  EXPECT_FALSE(fleet.has_factory());
  EXPECT_THROW((void)fleet.build(servers), memshard::ConfigError);
  auto more = memshard::parse_servers("a:1,b:2,c:3");
  fleet.publish(more, std::make_shared<const Ring>(more));
  EXPECT_EQ(fleet.current()->members.size(), 3U);
}

TEST(FleetTest, ReadersOnOtherThreadsAlwaysSeeAConsistentSnapshot) {
  auto fleet = fleet_of("a:1,b:2,c:3");
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> mismatches{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      std::uint64_t seen = 0;
      while (!stop.load()) {
        const std::uint64_t generation = fleet->generation();
        if (generation == seen) {
          continue;
        }
        const auto now = fleet->current();
        seen = now->generation;
        if (now->generation < generation || now->locator->size() != now->members.size() ||
            now->members.health.size() != now->members.size()) {
          ++mismatches;
        }
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    auto servers = memshard::parse_servers(i % 2 == 0 ? "a:1,b:2" : "a:1,b:2,c:3,d:4");
    fleet->publish(servers, fleet->build(servers));
  }
  stop = true;
  for (std::thread& reader : readers) {
    reader.join();
  }
  EXPECT_EQ(mismatches.load(), 0U);
  EXPECT_EQ(fleet->current()->members.size(), 4U);
}

TEST(FleetTest, AMigrationPlacesOnTheNewListAndKeepsTheOldOverOneMemberList) {
  auto fleet = fleet_of("a:1,b:2,c:3");
  const auto before = fleet->current();
  auto servers = memshard::parse_servers("b:2,c:3,d:4");
  fleet->begin_migration(servers, fleet->build(servers), memshard::MigrationOptions{});
  const auto during = fleet->current();
  ASSERT_TRUE(during->migration);
  EXPECT_EQ(during->placed, 3U);
  ASSERT_EQ(during->members.size(), 4U);  // b, c, d, then the retiring a
  EXPECT_EQ(during->members.servers[3].host, "a");
  EXPECT_EQ(during->servers().size(), 3U);
  EXPECT_EQ(during->servers()[2].host, "d");
  // Old indexes (a, b, c) map to members by host and port.
  EXPECT_EQ(during->migration->member_of, (std::vector<std::size_t>{3, 0, 1}));
  EXPECT_EQ(during->members.health[0].get(), before->members.health[1].get());
  EXPECT_EQ(during->migration->servers.size(), 3U);
  for (const char* key : {"k1", "k2", "k3", "k4", "k5"}) {
    const std::size_t old = before->locator->locate(key);
    EXPECT_EQ(during->members.servers[during->migration->old_owner(key)].port,
              before->members.servers[old].port);
  }
  // One migration at a time, and no reconfigure during one.
  EXPECT_THROW(fleet->begin_migration(servers, fleet->build(servers), {}), memshard::ConfigError);
  EXPECT_THROW(fleet->publish(servers, fleet->build(servers)), memshard::ConfigError);
  EXPECT_EQ(fleet->current(), during);
  // Commit keeps the new list; the retiring server is gone.
  EXPECT_TRUE(fleet->end_migration(true));
  const auto after = fleet->current();
  EXPECT_FALSE(after->migration);
  EXPECT_EQ(after->members.size(), 3U);
  EXPECT_EQ(after->placed, 3U);
  EXPECT_EQ(after->locator, during->locator);
  EXPECT_FALSE(fleet->end_migration(true));
}

TEST(FleetTest, AbortingAMigrationGoesBackToTheOldPlacement) {
  auto fleet = fleet_of("a:1,b:2");
  const auto before = fleet->current();
  auto servers = memshard::parse_servers("c:3");
  fleet->begin_migration(servers, fleet->build(servers), {});
  EXPECT_EQ(fleet->current()->members.size(), 3U);
  EXPECT_TRUE(fleet->end_migration(false));
  const auto back = fleet->current();
  EXPECT_EQ(back->locator, before->locator);
  EXPECT_EQ(back->members.size(), 2U);
  EXPECT_EQ(back->members.servers[1].host, "b");
  EXPECT_EQ(back->members.health[0].get(), before->members.health[0].get());
  EXPECT_GT(back->generation, before->generation + 1);
}

TEST(FleetTest, InvalidMigrationOptionsThrowAndChangeNothing) {
  auto fleet = fleet_of("a:1,b:2");
  const auto before = fleet->current();
  auto servers = memshard::parse_servers("c:3");
  memshard::MigrationOptions bad;
  bad.copy_ttl_cap = std::chrono::seconds{0};
  EXPECT_THROW(fleet->begin_migration(servers, fleet->build(servers), bad), memshard::ConfigError);
  EXPECT_EQ(fleet->current(), before);
}

TEST(FleetTest, ServedPhasesPlaceOnOneListBesideTheOtherAndRefuseTheClientsOwnChanges) {
  auto fleet = fleet_of("a:1,b:2");
  const auto before = fleet->current();
  auto next = memshard::parse_servers("b:2,c:3");
  Fleet<Ring>::SecondPlacement second;
  second.servers = next;
  second.locator = fleet->build(next);
  // Bad lists throw and change nothing (the fleet is not managed yet).
  auto bad = second;
  bad.locator = nullptr;
  EXPECT_THROW(fleet->serve(before->servers(), before->locator, bad), memshard::ConfigError);
  EXPECT_FALSE(fleet->managed());
  EXPECT_EQ(fleet->current(), before);
  // Phase 1: placed on a, b; c beside them, only invalidated.
  fleet->serve(before->servers(), before->locator, second);
  const auto prepare = fleet->current();
  EXPECT_TRUE(fleet->managed());
  ASSERT_TRUE(prepare->migration);
  EXPECT_FALSE(prepare->migration->read_through);
  EXPECT_EQ(prepare->fence, &fleet->gate());  // the calls check the gate from now on
  EXPECT_EQ(before->fence, nullptr);
  EXPECT_EQ(prepare->placed, 2U);
  ASSERT_EQ(prepare->members.size(), 3U);
  EXPECT_EQ(prepare->members.servers[2].host, "c");
  EXPECT_EQ(prepare->migration->member_of, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(prepare->members.health[0].get(), before->members.health[0].get());
  EXPECT_THROW(fleet->publish(next, fleet->build(next)), memshard::ConfigError);
  EXPECT_THROW(fleet->begin_migration(next, fleet->build(next), {}), memshard::ConfigError);
  EXPECT_THROW((void)fleet->end_migration(true), memshard::ConfigError);
  EXPECT_EQ(fleet->current(), prepare);
  // Steady on the next list.
  fleet->serve(next, second.locator, std::nullopt);
  const auto steady = fleet->current();
  EXPECT_FALSE(steady->migration);
  EXPECT_EQ(steady->members.size(), 2U);
  EXPECT_EQ(steady->generation, prepare->generation + 1);
}

}  // namespace
}  // namespace fleet_test
