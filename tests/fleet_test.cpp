// SPDX-License-Identifier: MIT
// client/fleet.hpp without a server: publishing snapshots, refusals that leave
// the fleet as it was, health kept for the servers that stay, and readers on
// other threads while the fleet changes.

#include "memshard/client/fleet.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "memshard/errors.hpp"
#include "memshard/ketama_locator.hpp"
#include "memshard/md5.hpp"
#include "memshard/server.hpp"

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

}  // namespace
