// SPDX-License-Identifier: MIT
// near_cache_test.cpp: the near cache of a client family's hot keys (hotkeys/near_cache.hpp,
// ClientOptions::near_cache) against real memcached: a hot key's gets answered without reaching
// its server; a copy past its ttl checked by cas and served again when unchanged; a write made
// by another process seen within the ttl; a write through the family seen at once; a key that is
// not hot never kept; nothing kept past max_bytes; no copy in a migration window; options refused.

#include "memshard/hotkeys/near_cache.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"

namespace near_cache_test {
namespace {

using memshard::ClientOptions;
using memshard::HotKeyOptions;
using memshard::NearCacheOptions;
using memshard::testing::MemcachedServer;
using Client = memshard::ShardedClient<memshard::KetamaLocator<>>;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto kPatience = std::chrono::seconds{10};  // a bound on every wait below

class NearCacheTest : public ::testing::Test {
 protected:
  MemcachedServer server_;
  std::vector<memshard::Server> servers_ = memshard::parse_servers(server_.spec());

  // Every operation counted, 50 ms windows, hot from 30% of 20 operations; copies for `ttl`.
  static auto options(milliseconds ttl, std::size_t max_bytes = std::size_t{1} << 20)
      -> ClientOptions {
    ClientOptions options;
    options.hot_keys = HotKeyOptions{
        .sample_every = 1, .share = 0.3, .window = milliseconds{50}, .min_operations = 20};
    options.near_cache = NearCacheOptions{.ttl = ttl, .max_bytes = max_bytes};
    return options;
  }
  // Gets `key` until the family keeps a copy of it (it became hot, and a get stored it).
  static auto heat(Client& client, const std::string& key) -> bool {
    const auto deadline = Clock::now() + kPatience;
    while (Clock::now() < deadline) {
      (void)client.get(key);
      if (client.near_cache_stats().stored > 0 && client.near_cache_stats().bytes > 0) {
        return true;
      }
    }
    return false;
  }
  auto value_of(Client& client, const std::string& key) -> std::string {
    auto got = client.get(key);
    return got.ok() && got->has_value() ? (*got)->value : std::string("<none>");
  }
};

TEST_F(NearCacheTest, AHotKeysGetsAreAnsweredWithoutItsServer) {
  Client client(servers_, options(milliseconds{60'000}));
  ASSERT_TRUE(client.set("page", "v1"));
  ASSERT_TRUE(heat(client, "page"));
  const std::uint64_t before = server_.gets_and_sets();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(value_of(client, "page"), "v1");
  }
  EXPECT_EQ(server_.gets_and_sets(), before) << "answered in process";
  EXPECT_GE(client.near_cache_stats().hits, 100U);
  Client clone = client.clone();
  EXPECT_EQ(value_of(clone, "page"), "v1");
  EXPECT_EQ(server_.gets_and_sets(), before) << "the family shares its copies";
}

TEST_F(NearCacheTest, AWriteElsewhereIsSeenWithinTheTtlAndAnUnchangedCopyIsCheckedByCas) {
  constexpr milliseconds kTtl{300};
  Client client(servers_, options(kTtl));
  Client elsewhere(servers_, ClientOptions{});  // another process's client
  ASSERT_TRUE(elsewhere.set("page", "v1"));
  ASSERT_TRUE(heat(client, "page"));
  // Past the ttl, unchanged: checked by cas and served again.
  const auto deadline = Clock::now() + kPatience;
  while (client.near_cache_stats().revalidated == 0 && Clock::now() < deadline) {
    EXPECT_EQ(value_of(client, "page"), "v1");
  }
  EXPECT_GT(client.near_cache_stats().revalidated, 0U);
  // Changed elsewhere: served at most the ttl after the write.
  ASSERT_TRUE(elsewhere.set("page", "v2"));
  const auto written = Clock::now();
  std::string seen;
  while ((seen = value_of(client, "page")) != "v2" && Clock::now() < deadline) {
    EXPECT_EQ(seen, "v1");
  }
  EXPECT_EQ(seen, "v2");
  EXPECT_LT(Clock::now() - written, kTtl + milliseconds{100});  // a coarse clock tick, a call
  EXPECT_GT(client.near_cache_stats().changed, 0U);
}

TEST_F(NearCacheTest, AWriteThroughTheFamilyIsSeenAtOnce) {
  Client client(servers_, options(milliseconds{60'000}));
  Client clone = client.clone();
  ASSERT_TRUE(client.set("page", "v1"));
  ASSERT_TRUE(heat(client, "page"));
  ASSERT_TRUE(clone.set("page", "v2"));
  EXPECT_EQ(value_of(client, "page"), "v2");
  ASSERT_TRUE(clone.remove("page"));
  EXPECT_EQ(value_of(client, "page"), "<none>");
  EXPECT_GE(client.near_cache_stats().dropped, 1U);
  ASSERT_TRUE(client.set_multi(std::vector<std::pair<std::string, std::string>>{{"page", "v3"}})
                  .statuses.front());
  EXPECT_EQ(value_of(client, "page"), "v3");
}

TEST_F(NearCacheTest, KeysThatAreNotHotAreNeverKept) {
  Client client(servers_, options(milliseconds{60'000}));
  for (int i = 0; i < 400; ++i) {  // 100 keys, 1% each: none hot
    (void)client.get("k" + std::to_string(i % 100));
  }
  const memshard::NearCacheStats stats = client.near_cache_stats();
  EXPECT_EQ(stats.stored, 0U);
  EXPECT_EQ(stats.bytes, 0U);
  EXPECT_EQ(stats.hits, 0U);
}

TEST_F(NearCacheTest, NothingIsKeptPastMaxBytes) {
  Client client(servers_, options(milliseconds{60'000}, 100));
  ASSERT_TRUE(client.set("big", std::string(101, 'x')));
  const auto deadline = Clock::now() + kPatience;
  while (client.near_cache_stats().keys == 0 && Clock::now() < deadline) {
    (void)client.get("big");  // hot, admitted, never kept
  }
  for (int i = 0; i < 20; ++i) {
    (void)client.get("big");
  }
  EXPECT_EQ(client.near_cache_stats().keys, 1U);
  EXPECT_EQ(client.near_cache_stats().bytes, 0U);
  EXPECT_EQ(client.near_cache_stats().hits, 0U);
}

TEST_F(NearCacheTest, NoCopyIsUsedInAMigrationWindow) {
  MemcachedServer other;
  Client client(servers_, options(milliseconds{60'000}));
  ASSERT_TRUE(client.set("page", "v1"));
  ASSERT_TRUE(heat(client, "page"));
  const std::uint64_t hits = client.near_cache_stats().hits;
  client.begin_migration(memshard::parse_servers(server_.spec() + "," + other.spec()));
  const std::uint64_t before = server_.gets_and_sets() + other.gets_and_sets();
  EXPECT_EQ(value_of(client, "page"), "v1");
  EXPECT_GT(server_.gets_and_sets() + other.gets_and_sets(), before);
  EXPECT_EQ(client.near_cache_stats().hits, hits);
}

TEST(NearCacheOptionsTest, InvalidOptionsAreRefusedAtConstruction) {
  const auto servers = memshard::parse_servers("127.0.0.1:11211");
  ClientOptions without_hot_keys;
  without_hot_keys.near_cache = NearCacheOptions{};
  EXPECT_THROW(Client(servers, without_hot_keys), memshard::ConfigError);
  for (const NearCacheOptions& wrong :
       {NearCacheOptions{.ttl = milliseconds{0}}, NearCacheOptions{.max_bytes = 0}}) {
    ClientOptions options;
    options.hot_keys = HotKeyOptions{};
    options.near_cache = wrong;
    EXPECT_THROW(Client(servers, options), memshard::ConfigError);
  }
}

}  // namespace
}  // namespace near_cache_test
