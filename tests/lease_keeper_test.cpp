// SPDX-License-Identifier: MIT
// lease_keeper_test.cpp: LeaseKeeper against a real etcd: the key bound to a lease kept alive
// past its TTL, revoked at once with the keeper, the fence before etcd could expire the lease
// when etcd stops answering, a new lease once it answers again, and the refusals.

#include "memshard/coordination/lease_keeper.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "support/etcd_server.hpp"
#include "support/memcached_server.hpp"

namespace lease_keeper_test {
namespace {

using memshard::EtcdClient;
using memshard::LeaseKeeper;
using memshard::LeaseOptions;
using memshard::StoreErrc;
using memshard::testing::EtcdServer;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A short lease, with room for a loaded machine: a keep-alive every 667 ms, fenced 1.5 s after
// the last one etcd answered.
auto short_lease() -> LeaseOptions {
  LeaseOptions options;
  options.ttl = seconds{2};
  options.margin = milliseconds{500};
  options.etcd.request_timeout = milliseconds{1'000};
  options.etcd.connect_timeout = milliseconds{100};
  return options;
}

// The value under `key` ("" when there is none) and its lease.
auto read(EtcdClient& etcd, const std::string& key) -> std::pair<std::string, std::int64_t> {
  const auto got = etcd.get(key);
  if (!got.ok() || got->entries.empty()) {
    return {"", 0};
  }
  return {got->entries[0].value, got->entries[0].lease};
}

TEST(LeaseKeeperTest, TheKeyIsBoundToALeaseKeptAlivePastItsTtl) {
  EtcdServer etcd;
  EtcdClient client(etcd.url());
  LeaseKeeper keeper(client.endpoints(), "members/a", short_lease());
  EXPECT_TRUE(keeper.fenced());  // nothing granted yet
  const auto before = Clock::now();
  ASSERT_TRUE(keeper.start("one").ok());
  EXPECT_FALSE(keeper.fenced());
  EXPECT_NE(keeper.lease(), 0);
  EXPECT_EQ(keeper.granted_ttl(), seconds{2});
  EXPECT_EQ(keeper.margin(), milliseconds{500});
  EXPECT_EQ(keeper.fence_at(), keeper.renewed_at() + seconds{2} - milliseconds{500});
  EXPECT_GE(keeper.renewed_at(), before);
  EXPECT_EQ(read(client, "members/a"), std::make_pair(std::string("one"), keeper.lease()));
  ASSERT_TRUE(keeper.update("two").ok());
  // Past its TTL the key is still there, under the same lease, never fenced meanwhile.
  const auto until = Clock::now() + seconds{3};
  while (Clock::now() < until) {
    EXPECT_FALSE(keeper.fenced());
    std::this_thread::sleep_for(milliseconds{50});
  }
  EXPECT_EQ(read(client, "members/a"), std::make_pair(std::string("two"), keeper.lease()));
  EXPECT_EQ(keeper.renewals(), 0U);
  EXPECT_GT(keeper.renewed_at(), before + seconds{2});  // renewed since
}

TEST(LeaseKeeperTest, DestroyingTheKeeperRemovesTheKeyAtOnce) {
  EtcdServer etcd;
  EtcdClient client(etcd.url());
  LeaseOptions options;  // 30 s: only a revocation removes the key within this test
  auto keeper = std::make_unique<LeaseKeeper>(client.endpoints(), "members/a", options);
  ASSERT_TRUE(keeper->start("here").ok());
  ASSERT_EQ(read(client, "members/a").first, "here");
  keeper.reset();
  EXPECT_EQ(read(client, "members/a").first, "");
}

TEST(LeaseKeeperTest, FencedBeforeEtcdCouldExpireTheLeaseAndBackWithANewOne) {
  EtcdServer etcd;
  EtcdClient client(etcd.url());
  LeaseKeeper keeper(client.endpoints(), "members/a", short_lease());
  ASSERT_TRUE(keeper.start("v").ok());
  const std::int64_t first = keeper.lease();
  etcd.pause();
  const auto paused = Clock::now();
  const auto deadline = paused + seconds{10};
  while (!keeper.fenced() && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds{5});
  }
  const auto noticed = Clock::now();
  ASSERT_TRUE(keeper.fenced());
  // Noticed before etcd could have expired the lease: etcd counts the TTL from when it received
  // the last keep-alive it answered, which is after the keeper sent it.
  EXPECT_LT(noticed, keeper.renewed_at() + keeper.granted_ttl());
  EXPECT_EQ(keeper.fence_at(), keeper.renewed_at() + keeper.granted_ttl() - keeper.margin());
  EXPECT_LE(keeper.renewed_at(), paused);
  etcd.resume();
  const auto back_by = Clock::now() + seconds{10};
  while (keeper.fenced() && Clock::now() < back_by) {
    std::this_thread::sleep_for(milliseconds{5});
  }
  ASSERT_FALSE(keeper.fenced());
  // Either the old lease survived (etcd paused too) or the key is back under a new one.
  const auto until = Clock::now() + seconds{10};
  auto now_read = read(client, "members/a");
  while (now_read.second != keeper.lease() && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds{10});
    now_read = read(client, "members/a");
  }
  EXPECT_EQ(now_read, std::make_pair(std::string("v"), keeper.lease()));
  EXPECT_TRUE(keeper.lease() == first || keeper.renewals() >= 1U);
}

TEST(LeaseKeeperTest, AStartEtcdDoesNotAnswerFailsInTimeAndKeepsNothing) {
  LeaseOptions options = short_lease();
  LeaseKeeper keeper({{"127.0.0.1", memshard::testing::detail::free_port()}}, "members/a", options);
  const auto start = Clock::now();
  const auto started = keeper.start("v");
  EXPECT_LT(Clock::now() - start, seconds{2});
  EXPECT_EQ(started.code(), StoreErrc::kUnreachable) << started;
  EXPECT_TRUE(keeper.fenced());
  EXPECT_EQ(keeper.lease(), 0);
}

TEST(LeaseKeeperTest, TheDefaultMarginIsATenthOfTheTtlAndAtLeast200Ms) {
  const std::vector<memshard::StoreEndpoint> endpoints = {{"127.0.0.1", 2379}};
  LeaseOptions options;
  EXPECT_EQ(LeaseKeeper(endpoints, "k", options).margin(), milliseconds{3'000});
  options.ttl = seconds{1};
  EXPECT_EQ(LeaseKeeper(endpoints, "k", options).margin(), milliseconds{200});
}

TEST(LeaseKeeperTest, BadOptionsThrowAtConstruction) {
  const std::vector<memshard::StoreEndpoint> endpoints = {{"127.0.0.1", 2379}};
  LeaseOptions zero;
  zero.ttl = seconds{0};
  EXPECT_THROW(LeaseKeeper(endpoints, "k", zero), memshard::ConfigError);
  LeaseOptions wide;
  wide.ttl = seconds{2};
  wide.margin = milliseconds{2'000};
  EXPECT_THROW(LeaseKeeper(endpoints, "k", wide), memshard::ConfigError);
  LeaseOptions long_ttl;
  long_ttl.ttl = std::chrono::hours{25};
  EXPECT_THROW(LeaseKeeper(endpoints, "k", long_ttl), memshard::ConfigError);
}

}  // namespace
}  // namespace lease_keeper_test
