// SPDX-License-Identifier: MIT
// The compiled mode (client/detail/compiled_clients.hpp, CMake target memshard::compiled):
// this unit links the library, so MEMSHARD_COMPILED_LIB declares every listed client extern
// and compiles none of them; each must come whole from the library (a client it lacks does
// not link) and work against a real server, as make_client does.

#include "memshard/client/detail/compiled_clients.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/client/make_client.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/sharded_client.hpp"
#include "support/server_set.hpp"

#if !defined(MEMSHARD_COMPILED_LIB)
#error "compiled_clients_test must link memshard::compiled, which defines MEMSHARD_COMPILED_LIB"
#endif

namespace compiled_clients_test {
namespace {

using memshard::Server;
namespace profiles = memshard::profiles;

class CompiledClientsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<memshard::testing::ServerSet>(2); }
  static void TearDownTestSuite() { servers_.reset(); }

  static auto list() -> std::vector<Server> { return servers_->list(); }

  // A set and a get through `client`, under a key of its own.
  template <class L>
  static void round_trip(memshard::ShardedClient<L>& client, const std::string& key) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(client.set(key, "v:" + key).ok());
    const auto hit = client.get(key);
    ASSERT_TRUE(hit.ok()) << hit.status();
    ASSERT_TRUE(hit.value().has_value());
    EXPECT_EQ(hit.value()->value, "v:" + key);
  }

  template <class L>
  static void round_trip(L locator, const std::string& key) {
    memshard::ShardedClient<L> client(list(), std::move(locator));
    round_trip(client, key);
  }

 private:
  static std::unique_ptr<memshard::testing::ServerSet> servers_;
};

std::unique_ptr<memshard::testing::ServerSet> CompiledClientsTest::servers_;

TEST_F(CompiledClientsTest, MakeClientComesFromTheLibrary) {
  auto client = memshard::make_client("libmemcached-ketama-weighted", list());
  round_trip(client, "any");
}

// One client of each locator of MEMSHARD_DETAIL_COMPILED_LOCATORS, in its order.
TEST_F(CompiledClientsTest, EveryListedClientComesFromTheLibrary) {
  const std::vector<Server> servers = list();
  round_trip(memshard::make_locator("twemproxy-ketama", servers), "any-locator");
  round_trip(profiles::libmemcached_ketama_weighted(servers), "ketama-md5");
  round_trip(profiles::libmemcached_ketama(servers), "ketama-one-at-a-time");
  round_trip(profiles::ring_crc32(servers), "ketama-crc32");
  round_trip(profiles::libmemcached_modula(servers), "modulo-one-at-a-time");
  round_trip(profiles::twemproxy_modula(servers), "modulo-md5");
  round_trip(profiles::modulo_crc32(servers), "modulo-crc32");
  round_trip(profiles::cache_memcached(servers), "modulo-libmemcached-crc");
  round_trip(profiles::spymemcached_arraymod(servers), "modulo-java-string");
  round_trip(profiles::python_memcache(servers), "modulo-fold15");
  round_trip(profiles::cache_memcached_fast(servers), "compat-continuum");
  round_trip(profiles::php_memcache(servers), "bucketed-ring");
  round_trip(profiles::pymemcache_rendezvous(servers), "rendezvous");
}

// The list above and the library's are the same length: a client added to the library's list
// gets a round trip here.
#define MEMSHARD_TEST_COUNT(L) +1
static_assert(0 MEMSHARD_DETAIL_COMPILED_LOCATORS(MEMSHARD_TEST_COUNT) == 13);
#undef MEMSHARD_TEST_COUNT

}  // namespace
}  // namespace compiled_clients_test
