// SPDX-License-Identifier: MIT
// wire/connection_pool.hpp against real memcached: handles open on first
// use, survive a membership change for the servers that stay (same host and
// port, whatever the index), close for the others; the fan handle is new after
// a server failure or a change; waits are cut to a deadline and restored; and
// what libmemcached would refuse is refused before any handle exists.

#include "memshard/wire/connection_pool.hpp"

#include <libmemcached-1.0/memcached.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/detail/clock.hpp"
#include "memshard/errors.hpp"
#include "memshard/fleet/fleet.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/placement/server.hpp"
#include "support/memcached_server.hpp"

namespace connection_pool_test {
namespace {

using memshard::ClientOptions;
using memshard::Membership;
using memshard::Server;
using memshard::detail::ConnectionPool;
using memshard::testing::MemcachedServer;

auto connections(const MemcachedServer& server) -> std::uint64_t {
  const std::string stats = server.command("stats");
  const std::string field = "STAT total_connections ";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoull(stats.substr(at + field.size()));
}

auto members(const std::vector<const MemcachedServer*>& servers) -> Membership {
  Membership out;
  for (const MemcachedServer* server : servers) {
    out.servers.push_back(memshard::parse_server(server->spec()));
  }
  memshard::detail::HealthRegistry registry;
  out.health = registry.acquire(out.servers);
  return out;
}

auto store(ConnectionPool& pool, std::size_t s) -> memcached_return_t {
  return memcached_set(pool.handle(s).native_handle(), "k", 1, "v", 1, 0, 0);
}

TEST(ConnectionPoolTest, ServersThatStayKeepTheirConnections) {
  const MemcachedServer a;
  const MemcachedServer b;
  const MemcachedServer c;
  const Membership before = members({&a, &b});
  const Membership after = members({&b, &c});  // b moves from index 1 to 0
  ConnectionPool pool{ClientOptions{}};
  pool.bind(before);
  EXPECT_FALSE(pool.has_handle(0));
  ASSERT_EQ(store(pool, 0), MEMCACHED_SUCCESS);
  ASSERT_EQ(store(pool, 1), MEMCACHED_SUCCESS);
  const std::uint64_t b_connections = connections(b);
  pool.bind(after);
  EXPECT_TRUE(pool.has_handle(0)) << "b's connection follows it to its new index";
  EXPECT_FALSE(pool.has_handle(1));
  ASSERT_EQ(store(pool, 0), MEMCACHED_SUCCESS);
  ASSERT_EQ(store(pool, 1), MEMCACHED_SUCCESS);
  // b answered on the connection it had (the stats request is one of its own).
  EXPECT_EQ(connections(b), b_connections + 1);
  pool.drop(0);
  EXPECT_FALSE(pool.has_handle(0));
}

TEST(ConnectionPoolTest, TheFanHandleIsNewAfterAFailureOrAChange) {
  const MemcachedServer a;
  const Membership one = members({&a});
  const Membership two = members({&a});
  ConnectionPool pool{ClientOptions{}};
  pool.bind(one);
  // Addresses may be reused once freed: mark each fan handle instead.
  int mark = 0;
  const auto marked = [&] { return memcached_get_user_data(pool.fan().native_handle()) == &mark; };
  (void)memcached_set_user_data(pool.fan().native_handle(), &mark);
  EXPECT_TRUE(marked()) << "the same fan handle while nothing happens";
  pool.server_failed();
  EXPECT_FALSE(marked()) << "a new one after a server failure";
  (void)memcached_set_user_data(pool.fan().native_handle(), &mark);
  pool.bind(two);
  EXPECT_FALSE(marked()) << "a new one after a membership change";
  pool.drop_fan();
}

TEST(ConnectionPoolTest, WaitsAreCutToTheDeadlineAndRestored) {
  const MemcachedServer a;
  const Membership one = members({&a});
  ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds(700);
  options.io_timeout = std::chrono::milliseconds(900);
  ConnectionPool pool(options);
  pool.bind(one);
  memcached_st* memc = pool.handle(0).native_handle();
  const auto poll = [&] { return memcached_behavior_get(memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT); };
  const auto connect = [&] {
    return memcached_behavior_get(memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT);
  };
  pool.limit_wait(memc, memshard::detail::steady_now_ns() + 200'000'000);  // 200 ms left
  EXPECT_LE(poll(), 200U);
  EXPECT_GE(poll(), 150U);
  EXPECT_LE(connect(), 200U);
  pool.limit_wait(memc, memshard::detail::steady_now_ns() - 1);  // past it
  EXPECT_EQ(poll(), 1U) << "a reply already there is still read";
  pool.limit_wait(memc, memshard::detail::steady_now_ns() + 60'000'000'000);
  EXPECT_EQ(poll(), 900U) << "never longer than the configured timeout";
  EXPECT_EQ(connect(), 700U);
  pool.limit_wait(memc, memshard::detail::steady_now_ns());
  pool.restore_wait(memc);
  EXPECT_EQ(poll(), 900U);
  EXPECT_EQ(connect(), 700U);
}

TEST(ConnectionPoolTest, HostNamesLibmemcachedRefusesAreRefusedFirst) {
  const std::vector<Server> fine = {
      Server{std::string(memshard::detail::kMaxWireHost, 'h'), 11211, 1, ""}};
  EXPECT_NO_THROW(memshard::detail::validate_wire_servers(fine));
  const std::vector<Server> too_long = {
      Server{std::string(memshard::detail::kMaxWireHost + 1, 'h'), 11211, 1, ""}};
  EXPECT_THROW(memshard::detail::validate_wire_servers(too_long), memshard::ConfigError);
  // What libmemcached itself says about both.
  memcached_st* memc = memcached_create(nullptr);
  ASSERT_NE(memc, nullptr);
  EXPECT_EQ(memcached_server_add(memc, fine[0].host.c_str(), 11211), MEMCACHED_SUCCESS);
  EXPECT_NE(memcached_server_add(memc, too_long[0].host.c_str(), 11211), MEMCACHED_SUCCESS);
  memcached_free(memc);
}

}  // namespace
}  // namespace connection_pool_test
