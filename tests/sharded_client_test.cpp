// SPDX-License-Identifier: MIT
// ShardedClient against real memcached servers started by the tests: every
// operation's hit, miss and error paths, keys on the server the locator names
// (asked directly), key and value checks before the wire, multi-get, and the
// construction errors.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"
#include "support/multi_get_modes.hpp"
#include "support/server_set.hpp"

namespace sharded_client_test {
namespace {

using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::Errc;
using memshard::Expiry;
using memshard::MultiGetMode;
using memshard::Protocol;
using memshard::Server;
using memshard::testing::MemcachedServer;
using memshard::testing::ServerSet;

static_assert(!std::is_copy_constructible_v<memshard::ShardedClient<memshard::AnyLocator>>);
static_assert(std::is_nothrow_move_constructible_v<memshard::ShardedClient<memshard::AnyLocator>>);

// The fleet shared by a suite: four servers, flushed before every test.
class Fleet {
 public:
  static constexpr std::size_t kServers = 4;

  static void start() {
    if (!servers_) {
      servers_ = std::make_unique<ServerSet>(kServers);
    }
  }
  static void stop() { servers_.reset(); }
  static auto server(std::size_t i) -> MemcachedServer& { return (*servers_)[i]; }
  static auto list() -> std::vector<Server> { return servers_->list(); }
  static void flush() { ASSERT_TRUE(servers_->reset()); }
  // Every server's count of connections accepted since it started.
  static auto total_connections() -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> out;
    for (const auto& server : *servers_) {
      const std::string stats = server.command("stats");
      const std::string field = "STAT total_connections ";
      const auto at = stats.find(field);
      EXPECT_NE(at, std::string::npos) << stats;
      out.push_back(at == std::string::npos ? 0 : std::stoull(stats.substr(at + field.size())));
    }
    return out;
  }
  // Whether server `i` holds `key`, asked directly over the text protocol.
  static auto holds(std::size_t i, std::string_view key) -> bool {
    return (*servers_)[i].command("get " + std::string(key)).starts_with("VALUE ");
  }

 private:
  static inline std::unique_ptr<ServerSet> servers_;
};

using memshard::testing::kMultiGetModes;
using memshard::testing::mode_name;
using memshard::testing::with_mode;

template <class L, Protocol kProtocol>
struct Config {
  using Locator = L;
  static constexpr Protocol protocol = kProtocol;
};

template <class C>
class ShardedClientTest : public ::testing::Test {
 protected:
  using Client = memshard::ShardedClient<typename C::Locator>;

  static void SetUpTestSuite() { Fleet::start(); }
  static void TearDownTestSuite() { Fleet::stop(); }
  void SetUp() override { Fleet::flush(); }

  static auto make_client(ClientOptions options = {}) -> Client {
    options.protocol = C::protocol;
    return Client(Fleet::list(), options);
  }
};

using Configs = ::testing::Types<Config<memshard::ModuloLocator<memshard::Crc32>, Protocol::kText>,
                                 Config<memshard::KetamaLocator<memshard::Md5>, Protocol::kText>,
                                 Config<memshard::KetamaLocator<memshard::Md5>, Protocol::kBinary>>;
class ConfigNames {
 public:
  template <class C>
  static auto GetName(int) -> std::string {
    std::string name = std::is_same_v<typename C::Locator, memshard::ModuloLocator<memshard::Crc32>>
                           ? "Modulo"
                           : "Ketama";
    return name + (C::protocol == Protocol::kText ? "Text" : "Binary");
  }
};
TYPED_TEST_SUITE(ShardedClientTest, Configs, ConfigNames);

TYPED_TEST(ShardedClientTest, SetThenGetFromTheServerTheLocatorNames) {
  auto client = this->make_client();
  std::vector<int> per_server(Fleet::kServers);
  for (int i = 0; i < 200; ++i) {
    const std::string key = "user:" + std::to_string(i);
    ASSERT_TRUE(client.set(key, "value-" + std::to_string(i), Expiry{}, 7U).ok());
    const std::size_t owner = client.server_index_for(key);
    ++per_server[owner];
    for (std::size_t s = 0; s < Fleet::kServers; ++s) {
      ASSERT_EQ(Fleet::holds(s, key), s == owner) << key << " on server " << s;
    }
    const auto got = client.get(key);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(got.value().has_value());
    EXPECT_EQ(got.value()->value, "value-" + std::to_string(i));
    EXPECT_EQ(got.value()->flags, 7U);
    EXPECT_NE(got.value()->cas, 0U);
  }
  for (std::size_t s = 0; s < Fleet::kServers; ++s) {
    EXPECT_GT(per_server[s], 10) << "server " << s;
  }
}

TYPED_TEST(ShardedClientTest, MissIsAnEmptyValueNotAnError) {
  auto client = this->make_client();
  const auto got = client.get("never-stored");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got.value().has_value());
  EXPECT_EQ(got.code(), Errc::kOk);
}

TYPED_TEST(ShardedClientTest, BinaryValuesSurviveTheRoundTrip) {
  auto client = this->make_client();
  std::string value;
  for (int byte = 0; byte < 256; ++byte) {
    value.push_back(static_cast<char>(byte));
  }
  value += "\r\nEND\r\n";
  ASSERT_TRUE(client.set("binary", value).ok());
  EXPECT_EQ(client.get("binary").value()->value, value);
  ASSERT_TRUE(client.set("empty", "").ok());
  EXPECT_EQ(client.get("empty").value()->value, "");
}

TYPED_TEST(ShardedClientTest, AddReplaceAppendPrepend) {
  auto client = this->make_client();
  EXPECT_EQ(client.replace("k", "x").code(), Errc::kNotStored);
  EXPECT_EQ(client.append("k", "x").code(), Errc::kNotStored);
  EXPECT_EQ(client.prepend("k", "x").code(), Errc::kNotStored);
  EXPECT_FALSE(client.get("k").value().has_value());
  EXPECT_TRUE(client.add("k", "middle").ok());
  EXPECT_EQ(client.add("k", "other").code(), Errc::kNotStored);
  EXPECT_TRUE(client.append("k", ">").ok());
  EXPECT_TRUE(client.prepend("k", "<").ok());
  EXPECT_EQ(client.get("k").value()->value, "<middle>");
  EXPECT_TRUE(client.replace("k", "new", Expiry{}, 3U).ok());
  const auto got = client.get("k");
  EXPECT_EQ(got.value()->value, "new");
  EXPECT_EQ(got.value()->flags, 3U);
}

TYPED_TEST(ShardedClientTest, CasDetectsConcurrentChange) {
  auto client = this->make_client();
  EXPECT_EQ(client.cas("c", "v", 12345).code(), Errc::kNotFound);
  ASSERT_TRUE(client.set("c", "one").ok());
  const std::uint64_t first = client.get("c").value()->cas;
  ASSERT_TRUE(client.cas("c", "two", first).ok());
  EXPECT_EQ(client.cas("c", "three", first).code(), Errc::kExists);
  EXPECT_EQ(client.get("c").value()->value, "two");
}

TYPED_TEST(ShardedClientTest, RemoveAndTouch) {
  auto client = this->make_client();
  EXPECT_EQ(client.remove("r").code(), Errc::kNotFound);
  EXPECT_EQ(client.touch("r", Expiry::after(std::chrono::seconds(60))).code(), Errc::kNotFound);
  ASSERT_TRUE(client.set("r", "v").ok());
  EXPECT_TRUE(client.touch("r", Expiry::after(std::chrono::seconds(60))).ok());
  EXPECT_TRUE(client.remove("r").ok());
  EXPECT_FALSE(client.get("r").value().has_value());
}

TYPED_TEST(ShardedClientTest, IncrementAndDecrement) {
  auto client = this->make_client();
  EXPECT_EQ(client.incr("n").code(), Errc::kNotFound);
  ASSERT_TRUE(client.set("n", "10").ok());
  EXPECT_EQ(client.incr("n", 5).value(), 15U);
  EXPECT_EQ(client.decr("n", 3).value(), 12U);
  EXPECT_EQ(client.decr("n", 100).value(), 0U);  // memcached stops at zero
  ASSERT_TRUE(client.set("text", "abc").ok());
  const auto bad = client.incr("text");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Errc::kInvalidArgument) << bad.status();
  EXPECT_THROW((void)bad.value(), memshard::BadResultAccess);
}

TYPED_TEST(ShardedClientTest, ItemsExpire) {
  auto client = this->make_client();
  ASSERT_TRUE(client.set("short", "v", Expiry::after(std::chrono::seconds(1))).ok());
  ASSERT_TRUE(client.set("long", "v", Expiry::after(std::chrono::hours(24 * 90))).ok());
  // memcached counts whole seconds: the item is gone within about two.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    gone = !client.get("short").value().has_value();
    if (!gone) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_TRUE(gone);
  // 90 days is sent as an absolute time, not as seconds since 1970.
  EXPECT_TRUE(client.get("long").value().has_value());
}

TYPED_TEST(ShardedClientTest, InvalidKeysNeverReachTheWire) {
  auto client = this->make_client();
  std::vector<std::string> stored;
  for (int i = 0; i < 40; ++i) {
    stored.push_back("keep:" + std::to_string(i));
    ASSERT_TRUE(client.set(stored.back(), "v").ok());
  }
  const auto before = client.stats();
  const std::vector<std::string> bad = {"a\r\nflush_all",
                                        "a\r\nflush_all\r\n",
                                        "with space",
                                        std::string("nul\0byte", 8),
                                        "tab\tkey",
                                        "del\x7f",
                                        std::string(251, 'k'),
                                        ""};
  for (const auto& key : bad) {
    EXPECT_EQ(client.set(key, "x").code(), Errc::kInvalidKey) << key;
    EXPECT_EQ(client.add(key, "x").code(), Errc::kInvalidKey);
    EXPECT_EQ(client.get(key).code(), Errc::kInvalidKey);
    EXPECT_EQ(client.remove(key).code(), Errc::kInvalidKey);
    EXPECT_EQ(client.incr(key).code(), Errc::kInvalidKey);
    EXPECT_EQ(client.touch(key, Expiry{}).code(), Errc::kInvalidKey);
    EXPECT_EQ(client.cas(key, "x", 1).code(), Errc::kInvalidKey);
  }
  EXPECT_NE(client.set("a\r\nflush_all", "x").detail().find("control byte 0x0d"),
            std::string::npos);
  // Nothing was sent, and every key is still on its server.
  const auto after = client.stats();
  for (std::size_t s = 0; s < Fleet::kServers; ++s) {
    EXPECT_EQ(after[s].operations, before[s].operations);
  }
  for (const auto& key : stored) {
    EXPECT_TRUE(Fleet::holds(client.server_index_for(key), key)) << key;
  }
  EXPECT_TRUE(client.set(std::string(250, 'k'), "longest legal key").ok());
}

TYPED_TEST(ShardedClientTest, TooLargeValueIsRefusedAndChangesNothing) {
  auto client = this->make_client();
  ASSERT_TRUE(client.set("big", "old").ok());
  const std::string huge(client.options().max_value_size + 1, 'x');
  const auto refused = client.set("big", huge);
  EXPECT_EQ(refused.code(), Errc::kValueTooLarge);
  EXPECT_EQ(refused.rc(), MEMCACHED_E2BIG);
  EXPECT_EQ(client.get("big").value()->value, "old");
  const std::string largest(client.options().max_value_size, 'y');
  EXPECT_TRUE(client.set("big", largest).ok());
  EXPECT_EQ(client.get("big").value()->value, largest);
}

TYPED_TEST(ShardedClientTest, ServerRefusalOfALargeValueIsNotAServerFailure) {
  // With the client limit above the server's (1 MiB), the server refuses.
  ClientOptions options;
  options.max_value_size = 4 * 1024 * 1024;
  options.failure_limit = 1;
  auto client = this->make_client(options);
  const std::string huge(2 * 1024 * 1024, 'x');
  const auto refused = client.set("huge", huge);
  EXPECT_EQ(refused.code(), Errc::kValueTooLarge) << refused;
  const std::size_t owner = client.server_index_for("huge");
  EXPECT_EQ(client.stats()[owner].ejections, 0U);
  EXPECT_TRUE(client.set("huge", "small").ok());
}

TYPED_TEST(ShardedClientTest, MultiGetReturnsExactlyTheStoredValues) {
  auto client = this->make_client();
  std::vector<std::string> keys;
  std::vector<std::uint8_t> stored;
  std::mt19937 rng(5);
  for (int i = 0; i < 300; ++i) {
    keys.push_back("multi:" + std::to_string(i));
    stored.push_back(rng() % 4 != 0 ? 1 : 0);
    if (stored.back() != 0) {
      ASSERT_TRUE(
          client.set(keys.back(), "v" + std::to_string(i), Expiry{}, static_cast<std::uint32_t>(i))
              .ok());
    }
  }
  const auto missing =
      static_cast<std::size_t>(std::find(stored.begin(), stored.end(), 0) - stored.begin());
  keys.push_back("multi:7");      // a duplicate
  keys.push_back("bad key");      // invalid
  keys.push_back(keys[missing]);  // a duplicate of a miss
  keys.push_back("multi:7");      // and again
  stored.push_back(stored[7]);
  stored.push_back(0);
  stored.push_back(0);
  stored.push_back(stored[7]);
  std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    auto reader = this->make_client(with_mode({}, mode));
    const auto result = reader.get_multi(views);
    ASSERT_EQ(result.items.size(), keys.size());
    std::vector<int> servers_hit(Fleet::kServers);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == "bad key") {
        EXPECT_EQ(result.statuses[i].code(), Errc::kInvalidKey);
        EXPECT_FALSE(result.items[i].has_value());
        continue;
      }
      ASSERT_TRUE(result.statuses[i].ok()) << keys[i] << ": " << result.statuses[i];
      ASSERT_EQ(result.items[i].has_value(), stored[i] != 0) << keys[i];
      if (result.items[i]) {
        const std::string number = keys[i].substr(6);
        EXPECT_EQ(result.items[i]->value, "v" + number);
        EXPECT_EQ(result.items[i]->flags, static_cast<std::uint32_t>(std::stoi(number)));
        ++servers_hit[client.server_index_for(keys[i])];
      }
    }
    for (std::size_t s = 0; s < Fleet::kServers; ++s) {
      EXPECT_GT(servers_hit[s], 0) << s;
    }
    const auto counted = std::count(stored.begin(), stored.end(), 1);
    EXPECT_EQ(result.hits(), static_cast<std::size_t>(counted));
    EXPECT_EQ(result.failures(), 1U);
  }
}

TYPED_TEST(ShardedClientTest, MultiGetFindsFewHitsAmongManyMisses) {
  // Long runs of misses between a server's hits: the replies cannot be matched
  // by walking each server's keys a few steps.
  auto client = this->make_client();
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) {
    keys.push_back("sparse:" + std::to_string(i));
    if (i % 37 == 0) {
      ASSERT_TRUE(client.set(keys.back(), "v" + std::to_string(i)).ok());
    }
  }
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    auto reader = this->make_client(with_mode({}, mode));
    const auto result = reader.get_multi(views);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(result.statuses[i].ok()) << keys[i] << ": " << result.statuses[i];
      ASSERT_EQ(result.items[i].has_value(), i % 37 == 0) << keys[i];
      if (result.items[i]) {
        EXPECT_EQ(result.items[i]->value, "v" + std::to_string(i));
      }
    }
    EXPECT_EQ(result.hits(), 28U);  // 0, 37, ..., 999
  }
}

TYPED_TEST(ShardedClientTest, VisitMultiHandsOutTheSameAnswersWithoutCopies) {
  auto client = this->make_client();
  std::vector<std::string> keys;
  for (int i = 0; i < 120; ++i) {
    keys.push_back("visit:" + std::to_string(i));
    if (i % 3 != 0) {
      ASSERT_TRUE(client.set(keys.back(), "value " + std::to_string(i), Expiry{}, 5U).ok());
    }
  }
  keys.push_back("visit:1");  // a duplicate
  keys.push_back("bad\nkey");
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    auto reader = this->make_client(with_mode({}, mode));
    std::vector<int> hits(keys.size());
    std::vector<Errc> failures(keys.size(), Errc::kOk);
    reader.visit_multi(
        views,
        [&](std::size_t index, const memshard::ItemView& item) {
          ++hits[index];
          EXPECT_EQ(item.value, "value " + keys[index].substr(6)) << keys[index];
          EXPECT_EQ(item.flags, 5U);
          EXPECT_NE(item.cas, 0U);
        },
        [&](std::size_t index, const memshard::Status& status) {
          failures[index] = status.code();
        });
    const auto owned = reader.get_multi(views);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(hits[i], owned.items[i].has_value() ? 1 : 0) << keys[i];
      EXPECT_EQ(failures[i], owned.statuses[i].code()) << keys[i];
    }
    EXPECT_EQ(hits[keys.size() - 2], 1);  // the duplicate was answered too
    EXPECT_EQ(failures.back(), Errc::kInvalidKey);
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 81);  // 80 stored + the duplicate
  }
}

TYPED_TEST(ShardedClientTest, MultiGetModesDifferOnlyInConnections) {
  // kPolled opens one more connection per server, at the first multi-get, and
  // keeps it; kPerServer reads through the servers' own connections.
  std::vector<std::string> keys;
  auto writer = this->make_client();
  for (int i = 0; i < 100; ++i) {
    keys.push_back("conn:" + std::to_string(i));
    ASSERT_TRUE(writer.set(keys.back(), "v").ok());
  }
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    auto client = this->make_client(with_mode({}, mode));
    for (const auto& key : keys) {
      ASSERT_TRUE(client.get(key).ok());  // every server's own connection is open
    }
    const auto before = Fleet::total_connections();
    for (int round = 0; round < 20; ++round) {
      ASSERT_EQ(client.get_multi(views).hits(), keys.size());
    }
    const auto after = Fleet::total_connections();
    for (std::size_t s = 0; s < Fleet::kServers; ++s) {
      // The stats request itself is one connection.
      EXPECT_EQ(after[s] - before[s], mode == MultiGetMode::kPolled ? 2U : 1U) << s;
    }
  }
}

TYPED_TEST(ShardedClientTest, StatsCountOperationsHitsAndMisses) {
  auto client = this->make_client();
  ASSERT_TRUE(client.set("s", "v").ok());
  (void)client.get("s");
  (void)client.get("s");
  (void)client.get("absent-key-for-stats");
  const auto stats = client.stats();
  std::uint64_t operations = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  for (const auto& entry : stats) {
    operations += entry.operations;
    hits += entry.hits;
    misses += entry.misses;
    EXPECT_EQ(entry.errors, 0U);
    EXPECT_FALSE(entry.ejected);
  }
  EXPECT_EQ(operations, 4U);
  EXPECT_EQ(hits, 2U);
  EXPECT_EQ(misses, 1U);
  EXPECT_EQ(stats[client.server_index_for("s")].hits, 2U);
}

TYPED_TEST(ShardedClientTest, CloneSharesLocatorAndCounters) {
  auto client = this->make_client();
  auto other = client.clone();
  EXPECT_EQ(other.locator().get(), client.locator().get());
  ASSERT_TRUE(client.set("shared", "v").ok());
  EXPECT_EQ(other.get("shared").value()->value, "v");
  std::uint64_t operations = 0;
  for (const auto& entry : client.stats()) {
    operations += entry.operations;
  }
  EXPECT_EQ(operations, 2U);
}

TYPED_TEST(ShardedClientTest, ReconfigureMovesToTheNewPlacementOrKeepsTheOld) {
  auto servers = Fleet::list();
  std::vector<Server> three(servers.begin(), servers.begin() + 3);
  ClientOptions options;
  options.protocol = TypeParam::protocol;
  typename TestFixture::Client client(three, options);
  EXPECT_THROW(client.reconfigure({}), ConfigError);
  EXPECT_THROW(client.reconfigure({three[0], three[0]}), ConfigError);
  EXPECT_EQ(client.servers().size(), 3U);
  ASSERT_TRUE(client.set("before", "v").ok());
  const std::vector<std::string_view> before = {"before"};
  ASSERT_EQ(client.get_multi(before).hits(), 1U);  // multi-gets on the old list first
  client.reconfigure(servers);
  EXPECT_EQ(client.servers().size(), 4U);
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) {
    const std::string key = "after:" + std::to_string(i);
    ASSERT_TRUE(client.set(key, "v" + std::to_string(i)).ok());
    EXPECT_TRUE(Fleet::holds(client.server_index_for(key), key));
    EXPECT_EQ(client.server_index_for(key), typename TypeParam::Locator(servers).locate(key));
    keys.push_back(key);
  }
  // Multi-gets read the new list's servers too.
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  const auto result = client.get_multi(views);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(result.items[i].has_value()) << keys[i] << ": " << result.statuses[i];
    EXPECT_EQ(result.items[i]->value, "v" + std::to_string(i));
  }
}

TYPED_TEST(ShardedClientTest, EveryClientOfAFamilyFollowsAReconfigureMadeOnAnyOfThem) {
  auto servers = Fleet::list();
  std::vector<Server> three(servers.begin(), servers.begin() + 3);
  ClientOptions options;
  options.protocol = TypeParam::protocol;
  typename TestFixture::Client a(three, options);
  auto b = a.clone();  // taken before the change
  auto c = b.clone();
  ASSERT_TRUE(b.set("warm", "v").ok());  // b has connections to the old list
  c.reconfigure(servers);                // made on a clone, seen by all
  const typename TypeParam::Locator expected(servers);
  for (auto* client : {&a, &b, &c}) {
    EXPECT_EQ(client->servers().size(), 4U);
    EXPECT_EQ(client->locator().get(), c.locator().get());
    EXPECT_EQ(client->snapshot()->generation, c.snapshot()->generation);
  }
  std::size_t moved = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "family:" + std::to_string(i);
    ASSERT_EQ(b.server_index_for(key), expected.locate(key)) << key;
    ASSERT_EQ(a.server_for(key).port, servers[expected.locate(key)].port) << key;
    moved += typename TypeParam::Locator(three).locate(key) != expected.locate(key) ? 1U : 0U;
  }
  EXPECT_GT(moved, 0U) << "the test needs keys that the fourth server takes";
  // b writes through the new placement from its next operation on.
  for (int i = 0; i < 50; ++i) {
    const std::string key = "family:" + std::to_string(i);
    ASSERT_TRUE(b.set(key, "new").ok());
    EXPECT_TRUE(Fleet::holds(expected.locate(key), key)) << key;
  }
  const std::vector<std::string_view> views = {"family:1", "family:2", "family:3"};
  EXPECT_EQ(a.get_multi(views).hits(), 3U);
  // A reconfigure that fails changes nobody.
  EXPECT_THROW(a.reconfigure({}), ConfigError);
  EXPECT_EQ(c.servers().size(), 4U);
}

TYPED_TEST(ShardedClientTest, ACallRunningDuringAReconfigureFinishesOnItsSnapshot) {
  auto servers = Fleet::list();
  std::vector<Server> three(servers.begin(), servers.begin() + 3);
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    Fleet::flush();
    ClientOptions options = with_mode({}, mode);
    options.protocol = TypeParam::protocol;
    typename TestFixture::Client client(three, options);
    auto other = client.clone();
    std::vector<std::string> keys;
    for (int i = 0; i < 60; ++i) {
      keys.push_back("inflight:" + std::to_string(i));
      ASSERT_TRUE(client.set(keys.back(), "old").ok());
    }
    // Another client of the family moves to four servers while this call
    // reads: the call keeps reading where its snapshot placed the keys.
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    std::size_t hits = 0;
    client.visit_multi(
        views,
        [&](std::size_t, const memshard::ItemView& item) {
          if (hits++ == 0) {
            other.reconfigure(servers);
          }
          EXPECT_EQ(item.value, "old");
        },
        [&](std::size_t index, const memshard::Status& status) {
          ADD_FAILURE() << keys[index] << ": " << status;
        });
    EXPECT_EQ(hits, keys.size());
    EXPECT_EQ(client.servers().size(), 4U);
    // The next call uses the new placement: keys the fourth server took miss.
    const auto after = client.get_multi(views);
    const typename TypeParam::Locator old_ring(three);
    const typename TypeParam::Locator new_ring(servers);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const bool stayed =
          servers[new_ring.locate(keys[i])].port == three[old_ring.locate(keys[i])].port;
      EXPECT_EQ(after.items[i].has_value(), stayed) << keys[i];
    }
  }
}

TYPED_TEST(ShardedClientTest, MakeClientKeepsItsProfileAcrossReconfiguration) {
  // libmemcached-ketama: 100 one_at_a_time points per server, not the md5 ring.
  auto servers = Fleet::list();
  std::vector<Server> three(servers.begin(), servers.begin() + 3);
  ClientOptions options;
  options.protocol = TypeParam::protocol;
  auto client = memshard::make_client("libmemcached-ketama", three, {}, options);
  auto check_placement = [&](const std::vector<Server>& list) {
    const auto expected = memshard::make_locator("libmemcached-ketama", list);
    for (int i = 0; i < 200; ++i) {
      const std::string key = "profile:" + std::to_string(i);
      ASSERT_EQ(client.server_index_for(key), expected.locate(key)) << key;
    }
    const std::string key = "profile:stored";
    ASSERT_TRUE(client.set(key, "v").ok());
    EXPECT_TRUE(
        Fleet::holds(client.server_index_for(key) == 3 ? 3 : client.server_index_for(key), key));
  };
  check_placement(three);
  client.reconfigure(servers);
  check_placement(servers);
  EXPECT_THROW((void)memshard::make_client("no-such-profile", three), ConfigError);
}

// ---- construction -------------------------------------------------------------

using KetamaClient = memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>>;

// A Locator that cannot fail over.
struct FirstServer {
  [[nodiscard]] auto locate(std::string_view) const noexcept -> std::size_t { return 0; }
  [[nodiscard]] auto size() const noexcept -> std::size_t { return 2; }
};

TEST(ShardedClientConstructionTest, ConfigurationMistakesThrow) {
  const auto two = memshard::parse_servers("127.0.0.1:1,127.0.0.1:2");
  EXPECT_THROW(KetamaClient(std::vector<Server>{}), ConfigError);
  EXPECT_THROW(KetamaClient({two[0], two[0]}), ConfigError);
  auto weightless = two;
  weightless[1].weight = 0;
  EXPECT_THROW(KetamaClient{weightless}, ConfigError);
  ClientOptions options;
  options.io_timeout = std::chrono::milliseconds(0);
  EXPECT_THROW(KetamaClient(two, options), ConfigError);
  options = {};
  options.failure_limit = 0;
  EXPECT_THROW(KetamaClient(two, options), ConfigError);
  // A locator built for another list.
  const auto three = memshard::parse_servers("127.0.0.1:1,127.0.0.1:2,127.0.0.1:3");
  EXPECT_THROW(
      KetamaClient(two, std::make_shared<const memshard::KetamaLocator<memshard::Md5>>(three)),
      ConfigError);
  EXPECT_THROW(KetamaClient(two, std::shared_ptr<const memshard::KetamaLocator<memshard::Md5>>()),
               ConfigError);
  // Failover needs a locator that can skip a server.
  options = {};
  options.failure_policy = memshard::FailurePolicy::kFailover;
  EXPECT_THROW(
      memshard::ShardedClient<FirstServer>(two, std::make_shared<const FirstServer>(), options),
      ConfigError);
  EXPECT_NO_THROW(KetamaClient(two, options));
  // Also behind an AnyLocator, which always has locate_avoiding: a wrapped
  // locator without it would silently act as fail-fast.
  using AnyClient = memshard::ShardedClient<memshard::AnyLocator>;
  EXPECT_THROW(AnyClient(two, memshard::AnyLocator(FirstServer{}), options), ConfigError);
  EXPECT_NO_THROW(AnyClient(two, memshard::make_locator("libmemcached-ketama", two), options));
  // And when a reconfigure brings one.
  AnyClient client(two, memshard::make_locator("libmemcached-ketama", two), options);
  const auto other = memshard::parse_servers("127.0.0.1:1,127.0.0.1:3");
  EXPECT_THROW(
      client.reconfigure(other, std::make_shared<const memshard::AnyLocator>(FirstServer{})),
      ConfigError);
  EXPECT_EQ(client.servers()[1].port, 2);
}

TEST(ShardedClientConstructionTest, AHostLibmemcachedWouldRefuseIsRefusedAtConstruction) {
  // libmemcached takes host names of up to 1,024 bytes; a longer one used to
  // pass, then make the first operation throw.
  Server longest{std::string(memshard::detail::kMaxWireHost, 'h'), 11211, 1, ""};
  Server too_long{std::string(memshard::detail::kMaxWireHost + 1, 'h'), 11211, 1, ""};
  ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds(50);
  options.io_timeout = std::chrono::milliseconds(50);
  EXPECT_THROW(KetamaClient({too_long}, options), ConfigError);
  KetamaClient client({longest}, options);
  EXPECT_THROW(client.reconfigure({longest, too_long}), ConfigError);
  EXPECT_EQ(client.servers().size(), 1U);
  // The longest accepted name fails as a lookup, as a value: no throw.
  memshard::Result<std::optional<memshard::Item>> hit = client.get("k");
  EXPECT_NO_THROW(hit = client.get("k"));
  EXPECT_TRUE(memshard::is_server_failure(hit.code())) << hit.status();
}

TEST(ShardedClientConstructionTest, AnExplicitLocatorNeedsAnExplicitReplacement) {
  // The client cannot know how a given locator was configured, so it does not
  // guess one for a new server list.
  const auto two = memshard::parse_servers("127.0.0.1:1,127.0.0.1:2");
  const auto three = memshard::parse_servers("127.0.0.1:1,127.0.0.1:2,127.0.0.1:3");
  memshard::ShardedClient client(two, memshard::profiles::libmemcached_ketama(two));
  EXPECT_THROW(client.reconfigure(three), ConfigError);
  EXPECT_EQ(client.servers().size(), 2U);
  client.reconfigure(three, std::make_shared<const memshard::KetamaLocator<memshard::OneAtATime>>(
                                memshard::profiles::libmemcached_ketama(three)));
  EXPECT_EQ(client.servers().size(), 3U);
  EXPECT_EQ(client.locator()->points().size(), 300U);
}

}  // namespace
}  // namespace sharded_client_test
