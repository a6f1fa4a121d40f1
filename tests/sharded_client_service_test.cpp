// SPDX-License-Identifier: MIT
// ShardedClient's calls for service code, against real memcached servers:
// key prefixes placed and sent exactly as libmemcached's namespace does (a
// libmemcached handle on the same servers reads what memshard wrote and the
// other way round), the key rules on the sent key, default_expiry (the TTL
// the server holds), get_or_load's four outcomes, incr_with_initial,
// multi-gets over any range of keys, the batch writes (per-key answers, a
// dead server's keys, a migration window), and the observer's added and
// removed servers; the typed calls (get_value, set_value, add_value,
// get_values) with a peer's codec.
#include <libmemcached-1.0/memcached.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/client/make_client.hpp"
#include "memshard/codecs/php_memcached_codec.hpp"
#include "memshard/codecs/php_serialize.hpp"
#include "memshard/codecs/plain_codec.hpp"
#include "memshard/sharded_client.hpp"
#include "support/memcached_server.hpp"
#include "support/server_set.hpp"

namespace sharded_client_service_test {
namespace {

using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::Errc;
using memshard::Expiry;
using memshard::PrefixHashing;
using memshard::Protocol;
using memshard::Server;
using memshard::ServerEvent;
using memshard::ServerEventKind;
using memshard::testing::MemcachedServer;
using memshard::testing::ServerSet;

constexpr std::size_t kServers = 3;
constexpr int kKeys = 200;

// The servers shared by the suite, ready and empty before every test.
class ServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(kServers); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  static auto list() -> std::vector<Server> { return servers_->list(); }
  static auto server(std::size_t i) -> const MemcachedServer& { return (*servers_)[i]; }
  // The server that holds exactly `key` (asked over the text protocol), or
  // kServers when none or several do.
  static auto holder(std::string_view key) -> std::size_t {
    std::size_t found = kServers;
    for (std::size_t i = 0; i < kServers; ++i) {
      if (server(i).command("get " + std::string(key)).starts_with("VALUE ")) {
        if (found != kServers) {
          return kServers;
        }
        found = i;
      }
    }
    return found;
  }
  // The TTL server `i` holds for `key` (meta get's t flag: -1 for never).
  static auto ttl(std::size_t i, std::string_view key) -> std::string {
    const std::string reply = server(i).command("mg " + std::string(key) + " t");
    const auto at = reply.find(" t");
    return at == std::string::npos ? reply : reply.substr(at + 2, reply.find('\r') - at - 2);
  }

 private:
  static inline std::unique_ptr<ServerSet> servers_;
};

auto key_of(int i) -> std::string { return "user:" + std::to_string(i) + ":profile"; }
auto value_of(int i) -> std::string { return "value-" + std::to_string(i); }

// ---- key prefixes against libmemcached's namespace ---------------------------

struct MemcachedFree {
  void operator()(memcached_st* memc) const noexcept { memcached_free(memc); }
};
using Memcached = std::unique_ptr<memcached_st, MemcachedFree>;

struct PrefixCase {
  const char* name;
  const char* profile;  // the memshard profile of this libmemcached placement
  bool ketama;          // MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, else the default modula
  PrefixHashing hashing;
  const char* prefix;
};

void PrintTo(const PrefixCase& c, std::ostream* out) { *out << c.name; }

const PrefixCase kPrefixCases[] = {
    {"ModulaBareKey", "libmemcached-modula", false, PrefixHashing::kBareKey, "app:"},
    {"ModulaPrefixedKey", "libmemcached-modula", false, PrefixHashing::kPrefixedKey, "app:"},
    {"KetamaBareKey", "libmemcached-ketama-weighted", true, PrefixHashing::kBareKey,
     "svc.v2|tenant-7_"},
    {"KetamaPrefixedKey", "libmemcached-ketama-weighted", true, PrefixHashing::kPrefixedKey,
     "svc.v2|tenant-7_"},
};

class PrefixTest : public ServiceTest, public ::testing::WithParamInterface<PrefixCase> {
 protected:
  // libmemcached on the same servers, with the case's namespace and hashing.
  static auto libmemcached(const PrefixCase& c) -> Memcached {
    Memcached memc(memcached(nullptr, 0));
    if (!memc) {
      throw std::runtime_error("memcached() returned NULL");
    }
    if (c.ketama) {
      memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    }
    if (c.hashing == PrefixHashing::kPrefixedKey) {
      memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY, 1);
    }
    if (memcached_failed(
            memcached_callback_set(memc.get(), MEMCACHED_CALLBACK_NAMESPACE, c.prefix))) {
      throw std::runtime_error("MEMCACHED_CALLBACK_NAMESPACE refused");
    }
    for (const Server& s : list()) {
      if (memcached_failed(memcached_server_add(memc.get(), s.host.c_str(), s.port))) {
        throw std::runtime_error("memcached_server_add failed");
      }
    }
    return memc;
  }
  static auto client(const PrefixCase& c, PrefixHashing hashing) {
    ClientOptions options;
    options.key_prefix = c.prefix;
    options.prefix_hashing = hashing;
    return memshard::make_client(c.profile, list(), {}, options);
  }
};

// What libmemcached stores under its namespace, memshard finds, on the
// server it names, under prefix + key.
TEST_P(PrefixTest, ReadsWhatLibmemcachedWrote) {
  const PrefixCase& c = GetParam();
  const Memcached memc = libmemcached(c);
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = key_of(i);
    const std::string value = value_of(i);
    ASSERT_EQ(memcached_set(memc.get(), key.data(), key.size(), value.data(), value.size(), 0, 0),
              MEMCACHED_SUCCESS);
  }
  auto reader = client(c, c.hashing);
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = key_of(i);
    auto hit = reader.get(key);
    ASSERT_TRUE(hit.ok()) << hit.status();
    ASSERT_TRUE(hit->has_value()) << c.name << ": memshard misses " << key;
    EXPECT_EQ((*hit)->value, value_of(i));
    EXPECT_EQ(holder(c.prefix + key), reader.server_index_for(key)) << key;
  }
}

// What memshard stores, libmemcached reads back through its namespace, and
// the server memshard names holds it under prefix + key (never the bare key).
TEST_P(PrefixTest, WritesWhatLibmemcachedReads) {
  const PrefixCase& c = GetParam();
  auto writer = client(c, c.hashing);
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(writer.set(key_of(i), value_of(i)).ok());
  }
  const Memcached memc = libmemcached(c);
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = key_of(i);
    std::size_t length = 0;
    std::uint32_t flags = 0;
    memcached_return_t rc = MEMCACHED_SUCCESS;
    const std::unique_ptr<char, decltype(&std::free)> value(
        memcached_get(memc.get(), key.data(), key.size(), &length, &flags, &rc), &std::free);
    ASSERT_EQ(rc, MEMCACHED_SUCCESS) << c.name << ": libmemcached misses " << key;
    EXPECT_EQ(std::string_view(value.get(), length), value_of(i));
    EXPECT_EQ(holder(c.prefix + key), writer.server_index_for(key));
    EXPECT_EQ(holder(key), kServers) << "the bare key went on the wire: " << key;
  }
}

// The other hashing places some keys elsewhere: the option matters, and the
// two tests above would see it.
TEST_P(PrefixTest, TheOtherHashingMissesKeys) {
  const PrefixCase& c = GetParam();
  const PrefixHashing other =
      c.hashing == PrefixHashing::kBareKey ? PrefixHashing::kPrefixedKey : PrefixHashing::kBareKey;
  auto writer = client(c, c.hashing);
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(writer.set(key_of(i), value_of(i)).ok());
  }
  auto wrong = client(c, other);
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back(key_of(i));
  }
  const memshard::MultiGetResult read = wrong.get_multi(keys);
  EXPECT_GT(kKeys - static_cast<int>(read.hits()), kKeys / 4);
  EXPECT_LT(read.hits(), static_cast<std::size_t>(kKeys));
}

// A multi-get sends prefixed keys too, in both engines, from any range.
TEST_P(PrefixTest, MultiGetsUseThePrefix) {
  const PrefixCase& c = GetParam();
  const Memcached memc = libmemcached(c);
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back(key_of(i));
    if (i % 3 != 0) {
      const std::string value = value_of(i);
      ASSERT_EQ(memcached_set(memc.get(), keys.back().data(), keys.back().size(), value.data(),
                              value.size(), 0, 0),
                MEMCACHED_SUCCESS);
    }
  }
  for (const memshard::MultiGetMode mode :
       {memshard::MultiGetMode::kPolled, memshard::MultiGetMode::kPerServer}) {
    ClientOptions options;
    options.key_prefix = c.prefix;
    options.prefix_hashing = c.hashing;
    options.multi_get = mode;
    auto reader = memshard::make_client(c.profile, list(), {}, options);
    const memshard::MultiGetResult read = reader.get_multi(keys);
    for (int i = 0; i < kKeys; ++i) {
      const auto index = static_cast<std::size_t>(i);
      ASSERT_TRUE(read.statuses[index].ok()) << read.statuses[index];
      ASSERT_EQ(read.items[index].has_value(), i % 3 != 0) << keys[index];
      if (read.items[index]) {
        EXPECT_EQ(read.items[index]->value, value_of(i));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Libmemcached, PrefixTest, ::testing::ValuesIn(kPrefixCases),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST_F(ServiceTest, KeyRulesApplyToTheSentKey) {
  ClientOptions options;
  options.key_prefix = "app:";
  auto client = memshard::make_client("libmemcached-ketama-weighted", list(), {}, options);
  const std::string longest(memshard::kMaxKeyLength - 4, 'k');
  EXPECT_TRUE(client.set(longest, "v").ok());
  EXPECT_EQ(holder("app:" + longest), client.server_index_for(longest));
  const std::string one_more(memshard::kMaxKeyLength - 3, 'k');
  EXPECT_EQ(client.set(one_more, "v").code(), Errc::kInvalidKey);
  EXPECT_EQ(client.get(one_more).status().code(), Errc::kInvalidKey);
  const memshard::MultiGetResult read = client.get_multi({longest, one_more});
  EXPECT_TRUE(read.statuses[0].ok());
  EXPECT_EQ(read.statuses[1].code(), Errc::kInvalidKey);
  EXPECT_EQ(holder("app:" + one_more), kServers);
  EXPECT_EQ(client.stats()[client.server_index_for(one_more)].operations,
            client.server_index_for(one_more) == client.server_index_for(longest) ? 2U : 0U);
}

TEST_F(ServiceTest, BadPrefixesThrowAtConstruction) {
  for (const std::string& prefix :
       {std::string("a b"), std::string("a\r\nflush_all"), std::string(1, '\0'),
        std::string(memshard::kMaxKeyLength, 'p')}) {
    ClientOptions options;
    options.key_prefix = prefix;
    EXPECT_THROW((void)memshard::make_client("libmemcached-modula", list(), {}, options),
                 ConfigError)
        << prefix.size();
  }
  ClientOptions options;
  options.key_prefix = std::string(memshard::kMaxKeyLength - 1, 'p');
  EXPECT_NO_THROW((void)memshard::make_client("libmemcached-modula", list(), {}, options));
}

// ---- default_expiry ----------------------------------------------------------

TEST_F(ServiceTest, DefaultExpiryIsUsedByStoresGivenNone) {
  ClientOptions options;
  options.default_expiry = std::chrono::seconds(600);
  auto client = memshard::make_client("libmemcached-modula", list(), {}, options);
  ASSERT_TRUE(client.set("a", "1").ok());
  ASSERT_TRUE(client.add("b", "1").ok());
  ASSERT_TRUE(client.replace("b", "2").ok());
  ASSERT_TRUE(client.set("never", "1", Expiry::never()).ok());
  ASSERT_TRUE(client.set("minute", "1", Expiry::after(std::chrono::seconds(60))).ok());
  for (const char* key : {"a", "b"}) {
    const int left = std::stoi(ttl(client.server_index_for(key), key));
    EXPECT_GT(left, 590) << key;
    EXPECT_LE(left, 600) << key;
  }
  EXPECT_EQ(ttl(client.server_index_for("never"), "never"), "-1");
  EXPECT_LE(std::stoi(ttl(client.server_index_for("minute"), "minute")), 60);

  auto plain = memshard::make_client("libmemcached-modula", list());
  ASSERT_TRUE(plain.set("c", "1").ok());
  EXPECT_EQ(ttl(plain.server_index_for("c"), "c"), "-1");
}

TEST_F(ServiceTest, BadDefaultExpiryThrowsAtConstruction) {
  for (const auto expiry : {std::chrono::seconds(-1), std::chrono::seconds(4'000'000'000LL)}) {
    ClientOptions options;
    options.default_expiry = expiry;
    EXPECT_THROW((void)memshard::make_client("libmemcached-modula", list(), {}, options),
                 ConfigError);
  }
}

// ---- get_or_load ---------------------------------------------------------------

TEST_F(ServiceTest, GetOrLoadLoadsOnceThenHits) {
  ClientOptions options;
  options.key_prefix = "app:";
  auto client = memshard::make_client("libmemcached-ketama-weighted", list(), {}, options);
  int loads = 0;
  const auto loader = [&] {
    ++loads;
    return std::string("from the database");
  };
  auto first = client.get_or_load("row:1", loader, Expiry::after(std::chrono::seconds(300)), 5U);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first.status().ok()) << first.status();
  EXPECT_EQ(*first, "from the database");
  EXPECT_EQ(loads, 1);
  const std::size_t owner = client.server_index_for("row:1");
  EXPECT_EQ(holder("app:row:1"), owner);
  EXPECT_LE(std::stoi(ttl(owner, "app:row:1")), 300);

  auto second = client.get_or_load("row:1", loader);
  EXPECT_EQ(*second, "from the database");
  EXPECT_TRUE(second.status().ok());
  EXPECT_EQ(loads, 1);
  auto item = client.get("row:1");
  EXPECT_EQ((*item)->flags, 5U);
}

TEST_F(ServiceTest, GetOrLoadKeepsWhatAnotherProcessStoredFirst) {
  auto client = memshard::make_client("libmemcached-modula", list());
  auto other = client.clone();
  auto loaded = client.get_or_load("row:2", [&] {
    EXPECT_TRUE(other.set("row:2", "filled meanwhile").ok());
    return std::string("mine");
  });
  EXPECT_EQ(*loaded, "mine");
  EXPECT_EQ(loaded.status().code(), Errc::kNotStored);
  EXPECT_EQ((*client.get("row:2"))->value, "filled meanwhile");
}

TEST_F(ServiceTest, GetOrLoadStoresNothingWhenTheLoaderThrows) {
  auto client = memshard::make_client("libmemcached-modula", list());
  EXPECT_THROW((void)client.get_or_load(
                   "row:3", []() -> std::string { throw std::runtime_error("database down"); }),
               std::runtime_error);
  EXPECT_EQ(holder("row:3"), kServers);
}

TEST_F(ServiceTest, GetOrLoadAnswersTheLoaderWhenTheCacheFails) {
  MemcachedServer doomed;
  std::vector<Server> servers{memshard::parse_server(doomed.spec())};
  ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds(200);
  options.io_timeout = std::chrono::milliseconds(200);
  auto client = memshard::make_client("libmemcached-modula", servers, {}, options);
  doomed.stop();
  int loads = 0;
  auto loaded = client.get_or_load("row:4", [&] {
    ++loads;
    return std::string("fresh");
  });
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, "fresh");
  EXPECT_FALSE(loaded.status().ok());
  EXPECT_TRUE(memshard::is_server_failure(loaded.status().code())) << loaded.status();
  EXPECT_EQ(loads, 1);
  // Only the read was sent: no store after a failed get.
  EXPECT_EQ(client.stats()[0].operations, 1U);

  auto invalid = client.get_or_load("bad key", [] { return std::string("still served"); });
  EXPECT_EQ(*invalid, "still served");
  EXPECT_EQ(invalid.status().code(), Errc::kInvalidKey);
}

TEST_F(ServiceTest, GetOrLoadWithAnOptionalLoaderCachesOnlyWhatItReturns) {
  auto client = memshard::make_client("libmemcached-modula", list());
  int loads = 0;
  const auto missing = [&]() -> std::optional<std::string> {
    ++loads;
    return std::nullopt;  // no such row: nothing to cache
  };
  auto first = client.get_or_load("row:5", missing);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->has_value());
  EXPECT_EQ(holder("row:5"), kServers) << "a declined load was stored";
  auto second = client.get_or_load("row:5", missing);
  EXPECT_FALSE(second->has_value());
  EXPECT_EQ(loads, 2);

  const auto found = [&]() -> std::optional<const char*> {
    ++loads;
    return "a row";
  };
  auto third = client.get_or_load("row:5", found, Expiry::after(std::chrono::seconds(60)), 3U);
  ASSERT_TRUE(third.ok()) << third.status();
  ASSERT_TRUE(third->has_value());
  EXPECT_EQ(**third, "a row");
  EXPECT_EQ(holder("row:5"), client.server_index_for("row:5"));
  auto hit = client.get_or_load("row:5", missing);
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ(**hit, "a row");
  EXPECT_EQ(loads, 3);
  EXPECT_EQ((*client.get("row:5"))->flags, 3U);
}

// ---- incr_with_initial ---------------------------------------------------------

TEST_F(ServiceTest, IncrWithInitialCreatesThenCounts) {
  for (const Protocol protocol : {Protocol::kText, Protocol::kBinary}) {
    SCOPED_TRACE(protocol == Protocol::kText ? "text" : "binary");
    ClientOptions options;
    options.protocol = protocol;
    options.key_prefix = "c:";
    auto client = memshard::make_client("libmemcached-modula", list(), {}, options);
    const std::string key = protocol == Protocol::kText ? "hits-text" : "hits-binary";
    auto created = client.incr_with_initial(key, 5, 100, Expiry::after(std::chrono::seconds(120)));
    ASSERT_TRUE(created.ok()) << created.status();
    EXPECT_EQ(*created, 100U);
    const std::size_t owner = client.server_index_for(key);
    EXPECT_LE(std::stoi(ttl(owner, "c:" + key)), 120);
    auto counted = client.incr_with_initial(key, 5, 100);
    ASSERT_TRUE(counted.ok()) << counted.status();
    EXPECT_EQ(*counted, 105U);
    EXPECT_EQ((*client.get(key))->value, "105");

    ASSERT_TRUE(client.set(key + ":text", "not a number").ok());
    EXPECT_FALSE(client.incr_with_initial(key + ":text", 1, 0).ok());
  }
}

// ---- multi-gets over ranges --------------------------------------------------

TEST_F(ServiceTest, GetMultiTakesAnyRangeOfKeys) {
  auto client = memshard::make_client("libmemcached-ketama-weighted", list());
  ASSERT_TRUE(client.set("a", "1").ok());
  ASSERT_TRUE(client.set("c", "3").ok());
  const std::vector<std::string> strings{"a", "b", "c"};
  const std::array<const char*, 3> pointers{"a", "b", "c"};
  const std::vector<std::string_view> views{"a", "b", "c"};
  for (const memshard::MultiGetResult& read :
       {client.get_multi(strings), client.get_multi(pointers), client.get_multi(views),
        client.get_multi({"a", "b", "c"})}) {
    ASSERT_EQ(read.items.size(), 3U);
    EXPECT_EQ(read.items[0]->value, "1");
    EXPECT_FALSE(read.items[1].has_value());
    EXPECT_EQ(read.items[2]->value, "3");
  }
}

// ---- gat ------------------------------------------------------------------------

TEST_F(ServiceTest, GatReadsAndTouchesInOneCall) {
  ClientOptions options;
  options.key_prefix = "g:";
  auto client = memshard::make_client("libmemcached-ketama-weighted", list(), {}, options);
  ASSERT_TRUE(client.set("session", "state", Expiry::never(), 3U).ok());
  const std::size_t owner = client.server_index_for("session");
  ASSERT_EQ(ttl(owner, "g:session"), "-1");
  auto read = client.gat("session", Expiry::after(std::chrono::seconds(120)));
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->value, "state");
  EXPECT_EQ((*read)->flags, 3U);
  EXPECT_NE((*read)->cas, 0U);
  const int left = std::stoi(ttl(owner, "g:session"));
  EXPECT_GT(left, 100);
  EXPECT_LE(left, 120);
  EXPECT_EQ(client.stats()[owner].hits, 1U);

  auto missing = client.gat("nothing", Expiry::after(std::chrono::seconds(120)));
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(holder("g:nothing"), kServers);
  EXPECT_EQ(client.gat("bad key", Expiry::never()).status().code(), Errc::kInvalidKey);
}

// ---- batch writes -------------------------------------------------------------

TEST_F(ServiceTest, SetMultiStoresEveryKeyOnItsServer) {
  for (const Protocol protocol : {Protocol::kText, Protocol::kBinary}) {
    SetUp();
    SCOPED_TRACE(protocol == Protocol::kText ? "text" : "binary");
    ClientOptions options;
    options.protocol = protocol;
    options.key_prefix = "batch:";
    auto client = memshard::make_client("libmemcached-ketama-weighted", list(), {}, options);
    std::map<std::string, std::string> items;
    for (int i = 0; i < kKeys; ++i) {
      items.emplace(key_of(i), value_of(i));
    }
    const memshard::MultiWriteResult written =
        client.set_multi(items, Expiry::after(std::chrono::seconds(300)), 9U);
    ASSERT_EQ(written.statuses.size(), items.size());
    EXPECT_TRUE(written.ok()) << written.failures();
    std::uint64_t operations = 0;
    for (const memshard::ServerStats& stats : client.stats()) {
      operations += stats.operations;
    }
    EXPECT_EQ(operations, items.size());  // one request per key, in one pipeline per server
    for (const auto& [key, value] : items) {
      const std::size_t owner = client.server_index_for(key);
      ASSERT_EQ(holder("batch:" + key), owner) << key;
      EXPECT_LE(std::stoi(ttl(owner, "batch:" + key)), 300);
      auto item = client.get(key);
      ASSERT_TRUE(item.ok() && item->has_value()) << key;
      EXPECT_EQ((*item)->value, value);
      EXPECT_EQ((*item)->flags, 9U);
    }
  }
}

TEST_F(ServiceTest, AddMultiDeleteMultiAndTouchMultiAnswerPerKey) {
  auto client = memshard::make_client("libmemcached-modula", list());
  ASSERT_TRUE(client.set("b", "old").ok());
  const std::vector<std::pair<std::string, std::string>> items{
      {"a", "1"}, {"b", "2"}, {"c", "3"}, {"bad key", "4"}};
  const memshard::MultiWriteResult added = client.add_multi(items);
  ASSERT_EQ(added.statuses.size(), 4U);
  EXPECT_TRUE(added.statuses[0].ok());
  EXPECT_EQ(added.statuses[1].code(), Errc::kNotStored);
  EXPECT_TRUE(added.statuses[2].ok());
  EXPECT_EQ(added.statuses[3].code(), Errc::kInvalidKey);
  EXPECT_EQ(added.failures(), 2U);
  EXPECT_FALSE(added.ok());
  EXPECT_FALSE(added.all_answered()) << "the invalid key reached no server";
  EXPECT_EQ(added.unanswered(), 1U);
  EXPECT_EQ((*client.get("b"))->value, "old");
  EXPECT_EQ((*client.get("c"))->value, "3");

  const memshard::MultiWriteResult touched = client.touch_multi(
      std::vector<std::string>{"a", "missing"}, Expiry::after(std::chrono::seconds(90)));
  EXPECT_TRUE(touched.statuses[0].ok()) << touched.statuses[0];
  EXPECT_EQ(touched.statuses[1].code(), Errc::kNotFound);
  EXPECT_LE(std::stoi(ttl(client.server_index_for("a"), "a")), 90);

  const memshard::MultiWriteResult deleted = client.delete_multi({"a", "b", "missing"});
  EXPECT_TRUE(deleted.statuses[0].ok());
  EXPECT_TRUE(deleted.statuses[1].ok());
  EXPECT_EQ(deleted.statuses[2].code(), Errc::kNotFound);
  EXPECT_FALSE(deleted.ok()) << "a key was already gone";
  EXPECT_TRUE(deleted.all_answered()) << "yet every server answered";
  EXPECT_TRUE(client.add_multi(std::vector<std::pair<std::string, std::string>>{{"c", "again"}})
                  .all_answered());
  EXPECT_EQ(holder("a"), kServers);
  EXPECT_EQ(holder("b"), kServers);
  EXPECT_EQ(holder("c"), client.server_index_for("c"));

  std::vector<std::pair<std::string, std::string>> big{{"big", std::string(2'000'000, 'x')}};
  EXPECT_EQ(client.set_multi(big).statuses[0].code(), Errc::kValueTooLarge);
  EXPECT_EQ(holder("big"), kServers);
}

// A dead server fails only its own keys, and counts once toward its ejection
// however many keys it had; its missed writes are journaled.
TEST_F(ServiceTest, ADeadServerFailsItsKeysOnce) {
  MemcachedServer doomed;
  std::vector<Server> servers = list();
  servers.push_back(memshard::parse_server(doomed.spec()));
  ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds(300);
  options.io_timeout = std::chrono::milliseconds(300);
  options.failure_limit = 2;
  options.max_ejected_fraction = 1;
  auto client = memshard::make_client("libmemcached-ketama-weighted", servers, {}, options);
  doomed.stop();
  std::vector<std::pair<std::string, std::string>> items;
  for (int i = 0; i < kKeys; ++i) {
    items.emplace_back(key_of(i), value_of(i));
  }
  const memshard::MultiWriteResult written = client.set_multi(items);
  std::size_t on_dead = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (client.server_index_for(items[i].first) == kServers) {
      ++on_dead;
      EXPECT_TRUE(memshard::is_server_failure(written.statuses[i].code())) << written.statuses[i];
    } else {
      EXPECT_TRUE(written.statuses[i].ok()) << written.statuses[i];
    }
  }
  ASSERT_GT(on_dead, 1U);
  EXPECT_EQ(written.failures(), on_dead);
  const memshard::ServerStats dead = client.stats()[kServers];
  EXPECT_EQ(dead.consecutive_failures, 1U);
  EXPECT_FALSE(dead.ejected);
  EXPECT_EQ(dead.journaled, on_dead);
}

// In a migration window every key follows the window's rules: after the
// commit, each is read on its new owner.
TEST_F(ServiceTest, BatchWritesInAMigrationWindow) {
  const std::vector<Server> all = list();
  auto client = memshard::make_client("libmemcached-ketama-weighted",
                                      std::vector<Server>(all.begin(), all.begin() + 2));
  std::vector<std::pair<std::string, std::string>> items;
  for (int i = 0; i < 50; ++i) {
    items.emplace_back(key_of(i), value_of(i));
  }
  ASSERT_TRUE(client.set_multi(items).ok());
  client.begin_migration(all);
  for (auto& item : items) {
    item.second += "-new";
  }
  ASSERT_TRUE(client.set_multi(items).ok());
  ASSERT_TRUE(client.commit_migration());
  for (const auto& [key, value] : items) {
    EXPECT_EQ(holder(key), client.server_index_for(key)) << key;
    EXPECT_EQ((*client.get(key))->value, value);
  }
  EXPECT_TRUE(client.delete_multi(std::vector<std::string>{key_of(0), key_of(1)}).ok());
  EXPECT_EQ(holder(key_of(0)), kServers);
}

// ---- server events of a reconfiguration -------------------------------------

TEST_F(ServiceTest, TheObserverHearsOfServersAddedAndRemoved) {
  std::vector<ServerEvent> events;
  ClientOptions options;
  options.on_server_event = [&](const ServerEvent& event) { events.push_back(event); };
  const std::vector<Server> all = list();
  auto client =
      memshard::make_client("libmemcached-ketama-weighted",
                            std::vector<Server>(all.begin(), all.begin() + 2), {}, options);
  client.reconfigure(std::vector<Server>(all.begin() + 1, all.end()));
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].kind, ServerEventKind::kAdded);
  EXPECT_EQ(events[0].server.port, all[2].port);
  EXPECT_EQ(events[0].detail, "reconfigure");
  EXPECT_EQ(events[1].kind, ServerEventKind::kRemoved);
  EXPECT_EQ(events[1].server.port, all[0].port);
  EXPECT_EQ(memshard::to_string(events[1].kind), "removed");

  events.clear();
  client.begin_migration(all);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].kind, ServerEventKind::kAdded);
  EXPECT_EQ(events[0].server.port, all[0].port);
  EXPECT_EQ(events[0].detail, "begin_migration");
  events.clear();
  EXPECT_TRUE(client.abort_migration());
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].kind, ServerEventKind::kRemoved);
  EXPECT_EQ(events[0].detail, "abort_migration");

  events.clear();
  EXPECT_THROW(client.reconfigure({}), ConfigError);
  EXPECT_TRUE(events.empty());
}

// The typed calls store exactly what php-memcached stores (its flags and
// bytes, seen raw on the server) and read it back as values; an item the
// codec cannot read fails that key alone with kCodecError and never counts
// against the server; a value the codec has no form for is never sent.
TEST_F(ServiceTest, TypedCallsStoreAndReadWhatThePeerStores) {
  auto client = memshard::make_client("libmemcached-ketama-weighted", list());
  const memshard::PhpMemcachedCodec php;
  const memshard::Value rows =
      memshard::Value::list({memshard::Value::map({{"id", 1}, {"name", "ann"}}),
                             memshard::Value::map({{"id", 2}, {"name", "bob"}, {"score", 2.5}})});
  ASSERT_TRUE(client.set_value("rows", rows, php).ok());
  const std::size_t at = holder("rows");
  ASSERT_LT(at, kServers);
  const std::string serialized = *memshard::php_serialize(rows);
  EXPECT_EQ(server(at).command("get rows"), "VALUE rows 4 " + std::to_string(serialized.size()) +
                                                "\r\n" + serialized + "\r\nEND\r\n");
  const auto read = client.get_value("rows", php);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_TRUE(read.value().has_value());
  EXPECT_EQ(*read.value(), rows);
  EXPECT_EQ(read.status().server(), at);

  const auto miss = client.get_value("absent", php);
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss.value().has_value());

  // php-memcached's type 1 is an integer: "abc" is not one.
  ASSERT_TRUE(client.set("bad", "abc", {}, 1).ok());
  const auto bad = client.get_value("bad", php);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Errc::kCodecError);
  EXPECT_NE(bad.status().message().find("php-memcached: an integer (type 1)"), std::string::npos)
      << bad.status().message();
  for (const auto& stats : client.stats()) {
    EXPECT_EQ(stats.errors, 0U);
    EXPECT_EQ(stats.consecutive_failures, 0U);
  }

  ASSERT_TRUE(client.add_value("count", 41, php).ok());
  EXPECT_EQ(client.add_value("count", 42, php).code(), Errc::kNotStored);
  EXPECT_EQ(*client.get_value("count", php).value(), memshard::Value(41));

  const auto many = client.get_values({"rows", "absent", "bad", "count"}, php);
  EXPECT_EQ(many.hits(), 2U);
  EXPECT_EQ(many.failures(), 1U);
  EXPECT_EQ(many.values[0], rows);
  EXPECT_FALSE(many.values[1].has_value());
  EXPECT_TRUE(many.statuses[1].ok());
  EXPECT_EQ(many.statuses[2].code(), Errc::kCodecError);
  EXPECT_EQ(many.values[3], memshard::Value(41));

  // Nothing is sent for a value the codec cannot encode.
  const memshard::PlainCodec plain;
  const memshard::Status refused = client.set_value("list", rows, plain);
  EXPECT_EQ(refused.code(), Errc::kCodecError);
  EXPECT_EQ(refused.message(),
            "codec_error: set_value: not_encodable: plain: only a string or bytes is stored as it "
            "is, not a list");
  EXPECT_FALSE(client.get("list").value().has_value());
}

}  // namespace
}  // namespace sharded_client_service_test
