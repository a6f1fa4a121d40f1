// SPDX-License-Identifier: MIT
// sweep_moved_keys (sweeper.hpp) against real memcached servers started by the tests: after a
// grow, the old servers keep only the keys that stay on them (another application's keys
// untouched, the counts adding up); a grow, writes on the new placement, a sweep and a shrink
// back read no old value; a copy written after its listing is left; servers that cannot be
// listed are reported, the others still swept; and the ConfigErrors.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"
#include "support/server_set.hpp"

namespace sweeper_test {
namespace {

using memshard::AnyLocator;
using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::Server;
using memshard::SweepOptions;
using memshard::SweepReport;
using memshard::SweptServer;
using memshard::testing::MemcachedServer;
using memshard::testing::ServerSet;
using Client = memshard::ShardedClient<AnyLocator>;

constexpr std::size_t kServers = 5;
constexpr std::size_t kKeys = 2000;
constexpr std::string_view kProfile = "libmemcached-ketama";

class SweeperTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(kServers); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  static auto list(std::size_t first, std::size_t count) -> std::vector<Server> {
    return servers_->list(first, count);
  }

  static auto options(std::string prefix = "app:") -> ClientOptions {
    ClientOptions options;
    options.key_prefix = std::move(prefix);
    options.connect_timeout = std::chrono::milliseconds{500};
    options.io_timeout = std::chrono::milliseconds{500};
    return options;
  }

  static auto key(std::size_t i) -> std::string { return "key:" + std::to_string(i); }

  // The test server at `s`.
  static auto at(const Server& s) -> MemcachedServer& { return servers_->of(s); }

  // Whether `s` holds the key sent as `sent`.
  static auto holds(const Server& s, std::string_view sent) -> bool {
    return at(s).command("mg " + std::string(sent) + " v").starts_with("VA ");
  }

  static auto writes(Client& client, std::string_view tag) -> ::testing::AssertionResult {
    for (std::size_t i = 0; i < kKeys; ++i) {
      const std::string value = std::string(tag) + "-" + std::to_string(i);
      if (auto set = client.set(key(i), value); !set) {
        return ::testing::AssertionFailure() << key(i) << ": " << set.message();
      }
    }
    return ::testing::AssertionSuccess();
  }

  static inline std::unique_ptr<ServerSet> servers_;
};

TEST_F(SweeperTest, AfterAGrowTheOldServersKeepOnlyTheKeysThatStay) {
  const std::vector<Server> before = list(0, 4);
  const std::vector<Server> after = list(0, 5);
  Client old_client = memshard::make_client(kProfile, before, {}, options());
  ASSERT_TRUE(writes(old_client, "v1"));
  // Another application's keys on the same servers: never the sweep's.
  Client other = memshard::make_client(kProfile, before, {}, options("other:"));
  for (std::size_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(other.set(key(i), "theirs"));
  }
  Client new_client = memshard::make_client(kProfile, after, {}, options());
  const SweepReport report = memshard::sweep_moved_keys(before, new_client);
  ASSERT_EQ(report.servers.size(), 4U);
  EXPECT_TRUE(report.complete());

  const AnyLocator placement = memshard::make_locator(kProfile, after);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < kKeys; ++i) {
    const std::string sent = "app:" + key(i);
    const Server& old_owner = before[memshard::make_locator(kProfile, before).locate(key(i))];
    const Server& new_owner = after[placement.locate(key(i))];
    if (new_owner.port == old_owner.port) {
      EXPECT_TRUE(holds(old_owner, sent)) << sent << " stays on " << old_owner.endpoint();
    } else {
      ++moved;
      EXPECT_FALSE(holds(old_owner, sent)) << sent << " moved away from " << old_owner.endpoint();
    }
  }
  EXPECT_GT(moved, kKeys / 10);
  std::uint64_t deleted = 0;
  std::uint64_t foreign = 0;
  for (const SweptServer& server : report.servers) {
    EXPECT_TRUE(server.ok()) << server.server << ": " << server.error;
    EXPECT_EQ(server.listed, server.foreign + server.staying + server.deleted + server.changed)
        << server.server;
    deleted += server.deleted;
    foreign += server.foreign;
  }
  EXPECT_EQ(deleted, moved);
  EXPECT_EQ(foreign, 100U);
  for (std::size_t i = 0; i < 100; ++i) {
    const auto got = other.get(key(i));
    ASSERT_TRUE(got && got->has_value()) << key(i);
    EXPECT_EQ((*got)->value, "theirs") << key(i);
  }
}

// The leftover copies the sweep is for: a grow (through the migration window, where half the
// keys are read, and so moved), writes on the new placement alone, then a shrink back: without
// the sweep, the keys that come back to their first server find the copies the grow left there.
TEST_F(SweeperTest, AGrowASweepAndAShrinkBackReadNoOldValue) {
  const std::vector<Server> before = list(0, 4);
  const std::vector<Server> after = list(0, 5);
  Client client = memshard::make_client(kProfile, before, {}, options());
  ASSERT_TRUE(writes(client, "v1"));
  client.begin_migration(after);
  for (std::size_t i = 0; i < kKeys; i += 2) {
    ASSERT_TRUE(client.get(key(i)).ok()) << key(i);  // half the keys copied (moved) forward
  }
  client.commit_migration();
  ASSERT_TRUE(writes(client, "v2"));
  const SweepReport report = memshard::sweep_moved_keys(before, client);
  ASSERT_TRUE(report.complete());
  client.begin_migration(before);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < kKeys; ++i) {
    const auto got = client.get(key(i));
    if (got && got->has_value()) {
      ++hits;
      EXPECT_EQ((*got)->value, "v2-" + std::to_string(i)) << key(i);
    }
  }
  EXPECT_EQ(hits, kKeys);  // the keys come back through the window's read-through
  client.commit_migration();
}

TEST_F(SweeperTest, ACopyWrittenAfterItsListingIsLeft) {
  const Server server = list(0, 1).front();
  ASSERT_EQ(at(server).command("ms app:k 2 T0\r\nv1"), "HD\r\n");
  // Its listing's cas, then a new write: the delete for the old cas finds the item changed.
  const std::string seen = at(server).command("mg app:k c");
  ASSERT_TRUE(seen.starts_with("HD c")) << seen;
  const std::uint64_t cas = std::stoull(seen.substr(4));
  ASSERT_EQ(at(server).command("ms app:k 2 T0\r\nv2"), "HD\r\n");
  memshard::detail::MetaConnection link;
  ASSERT_TRUE(link.connect(server.host, server.port,
                           std::chrono::steady_clock::now() + std::chrono::seconds{2}));
  SweptServer report;
  memshard::detail::SweepBatch batch(link, report, 8, std::chrono::milliseconds{2000});
  ASSERT_TRUE(batch.add("app:k", cas));
  ASSERT_TRUE(batch.send());
  EXPECT_EQ(report.changed, 1U);
  EXPECT_EQ(report.deleted, 0U);
  EXPECT_TRUE(holds(server, "app:k"));
  // With the item's own cas, it goes.
  const std::string now = at(server).command("mg app:k c");
  ASSERT_TRUE(batch.add("app:k", std::stoull(now.substr(4))));
  ASSERT_TRUE(batch.send());
  EXPECT_EQ(report.deleted, 1U);
  EXPECT_FALSE(holds(server, "app:k"));
}

TEST_F(SweeperTest, ServersThatCannotBeListedAreReportedAndTheOthersSwept) {
  MemcachedServer gone;
  MemcachedServer no_dump = MemcachedServer::with_args({"-X"});
  const std::vector<Server> after = list(0, 2);
  std::vector<Server> swept = list(2, 1);
  swept.push_back(memshard::parse_server(gone.spec()));
  swept.push_back(memshard::parse_server(no_dump.spec()));
  ASSERT_EQ(at(swept[0]).command("ms app:k 1 T0\r\nx"), "HD\r\n");
  gone.stop();
  SweepOptions sweep;
  sweep.key_prefix = "app:";
  sweep.placement_skip = 4;
  sweep.io_timeout = std::chrono::milliseconds{500};
  const AnyLocator placement = memshard::make_locator(kProfile, after);
  const SweepReport report = memshard::sweep_moved_keys(swept, placement, after, sweep);
  ASSERT_EQ(report.servers.size(), 3U);
  EXPECT_FALSE(report.complete());
  EXPECT_TRUE(report.servers[0].ok()) << report.servers[0].error;
  EXPECT_EQ(report.servers[0].deleted, 1U);
  EXPECT_FALSE(holds(swept[0], "app:k"));
  EXPECT_NE(report.servers[1].error.find("connect"), std::string::npos) << report.servers[1].error;
  EXPECT_NE(report.servers[2].error.find("metadump"), std::string::npos) << report.servers[2].error;
}

TEST_F(SweeperTest, BadArgumentsAreConfigErrors) {
  const std::vector<Server> servers = list(0, 2);
  const AnyLocator placement = memshard::make_locator(kProfile, servers);
  SweepOptions zero;
  zero.batch_size = 0;
  EXPECT_THROW((void)memshard::sweep_moved_keys(servers, placement, servers, zero), ConfigError);
  EXPECT_THROW((void)memshard::sweep_moved_keys(servers, placement, list(0, 3)), ConfigError);
  Client client = memshard::make_client(kProfile, servers, {}, options());
  client.begin_migration(list(0, 3));
  EXPECT_THROW((void)memshard::sweep_moved_keys(servers, client), ConfigError);
}

}  // namespace
}  // namespace sweeper_test
