// SPDX-License-Identifier: MIT
// client/client_core.hpp without a server: the checks before the wire, where
// a key goes while its server is ejected (probe, failover, refusal), and what
// finish() records in the server's health. No request is sent: finish() is
// handed libmemcached's codes directly.

#include "memshard/client/client_core.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/fleet/fleet.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/placement/server.hpp"

namespace client_core_test {
namespace {

using memshard::ClientOptions;
using memshard::Errc;
using memshard::FailurePolicy;
using memshard::detail::ClientCore;
using memshard::detail::HealthPolicy;
using memshard::detail::HealthRegistry;
using memshard::detail::Route;

auto members_of(const char* list, HealthRegistry& registry) -> memshard::Membership {
  memshard::Membership members;
  members.servers = memshard::parse_servers(list);
  members.health = registry.acquire(members.servers);
  return members;
}

auto options(FailurePolicy policy) -> ClientOptions {
  ClientOptions out;
  out.failure_limit = 2;
  out.retry_interval = std::chrono::hours(1);  // no probe during a test
  out.failure_policy = policy;
  out.max_ejected_fraction = 1;  // these tests eject most servers
  out.max_value_size = 10;
  return out;
}

// Ejects server `s` through finish(), as two failed requests would.
void eject(ClientCore& core, std::size_t s) {
  for (int i = 0; i < 2; ++i) {
    (void)core.finish(Route{s, false, {}}, MEMCACHED_CONNECTION_FAILURE, "get");
  }
  ASSERT_TRUE(HealthPolicy::is_ejected(core.health(s)));
}

TEST(ClientCoreTest, ChecksKeysAndValuesBeforeTheWire) {
  HealthRegistry registry;
  const auto members = members_of("a:1,b:2", registry);
  ClientCore core(options(FailurePolicy::kFailFast));
  core.bind(members);
  EXPECT_FALSE(core.check("fine", "0123456789").has_value());
  const auto bad_key = core.check("two words");
  ASSERT_TRUE(bad_key.has_value());
  EXPECT_EQ(bad_key->code(), Errc::kInvalidKey);
  const auto too_large = core.check("fine", "01234567890");
  ASSERT_TRUE(too_large.has_value());
  EXPECT_EQ(too_large->code(), Errc::kValueTooLarge);
  EXPECT_NE(too_large->message().find("max_value_size is 10"), std::string::npos);
  // A bad key is named first, whatever the value.
  EXPECT_EQ(core.check("", "01234567890")->code(), Errc::kInvalidKey);
}

TEST(ClientCoreTest, FinishRecordsOutcomesAndEjectsAtTheLimit) {
  HealthRegistry registry;
  const auto members = members_of("a:1,b:2", registry);
  ClientCore core(options(FailurePolicy::kFailFast));
  core.bind(members);
  const memshard::Status miss = core.finish(Route{1, false, {}}, MEMCACHED_NOTFOUND, "get");
  EXPECT_EQ(miss.code(), Errc::kNotFound);
  EXPECT_EQ(miss.server(), 1U);
  EXPECT_NE(miss.message().find("get on b:2"), std::string::npos) << miss;
  const memshard::Status timeout =
      core.finish(Route{1, false, {}}, MEMCACHED_TIMEOUT, "set", "no reply");
  EXPECT_NE(timeout.message().find("(no reply)"), std::string::npos) << timeout;
  EXPECT_FALSE(HealthPolicy::is_ejected(core.health(1)));
  (void)core.finish(Route{1, false, {}}, MEMCACHED_TIMEOUT, "set");
  EXPECT_TRUE(HealthPolicy::is_ejected(core.health(1)));
  const auto stats = core.health(1).stats(members.servers[1]);
  EXPECT_EQ(stats.operations, 3U);
  EXPECT_EQ(stats.errors, 2U);
  EXPECT_EQ(stats.ejections, 1U);
  // A server error is an error but not a server failure.
  (void)core.finish(Route{0, false, {}}, MEMCACHED_SERVER_ERROR, "set");
  (void)core.finish(Route{0, false, {}}, MEMCACHED_SERVER_ERROR, "set");
  EXPECT_FALSE(HealthPolicy::is_ejected(core.health(0)));
  EXPECT_EQ(core.health(0).errors.load(), 2U);
}

TEST(ClientCoreTest, FailFastRefusesAnEjectedServersKeysAndMovesNothing) {
  HealthRegistry registry;
  const auto members = members_of("a:1,b:2,c:3", registry);
  ClientCore core(options(FailurePolicy::kFailFast));
  core.bind(members);
  eject(core, 1);
  const auto never = [](std::span<const std::uint8_t>) -> std::size_t {
    ADD_FAILURE() << "fail-fast asked for a failover server";
    return 0;
  };
  EXPECT_EQ(core.route(0, true, never).server, 0U);
  const Route refused = core.route(1, true, never);
  EXPECT_EQ(refused.status.code(), Errc::kServerEjected);
  EXPECT_EQ(refused.status.server(), 1U);
  EXPECT_EQ(core.health(1).refused.load(), 1U);
}

TEST(ClientCoreTest, FailoverAsksTheLocatorWithTheEjectedServersMarked) {
  HealthRegistry registry;
  const auto members = members_of("a:1,b:2,c:3", registry);
  ClientCore core(options(FailurePolicy::kFailover));
  core.bind(members);
  eject(core, 1);
  std::vector<std::uint8_t> seen;
  std::size_t asked = 0;
  const auto to_c = [&](std::span<const std::uint8_t> avoid) -> std::size_t {
    seen.assign(avoid.begin(), avoid.end());
    ++asked;
    return 2;
  };
  const Route moved = core.route(1, true, to_c);
  EXPECT_TRUE(moved.status.ok());
  EXPECT_EQ(moved.server, 2U);
  EXPECT_EQ(seen, (std::vector<std::uint8_t>{0, 1, 0}));
  EXPECT_EQ(core.health(1).redirected.load(), 1U);
  // The list is built once until forgotten (a multi-get routes many keys).
  eject(core, 2);
  (void)core.route(1, true, to_c);
  EXPECT_EQ(seen, (std::vector<std::uint8_t>{0, 1, 0}));
  core.forget_avoid();
  const Route nowhere = core.route(1, true, to_c);
  EXPECT_EQ(seen, (std::vector<std::uint8_t>{0, 1, 1}));
  EXPECT_EQ(nowhere.status.code(), Errc::kServerEjected) << "the answer is ejected too";
  EXPECT_EQ(asked, 3U);
  // A locator that cannot fail over is never asked.
  EXPECT_EQ(core.route(1, false, to_c).status.code(), Errc::kServerEjected);
  EXPECT_EQ(asked, 3U);
}

TEST(ClientCoreTest, AProbeGoesToTheEjectedServerAndItsOutcomeDecides) {
  HealthRegistry registry;
  const auto members = members_of("a:1,b:2", registry);
  ClientOptions probing = options(FailurePolicy::kFailFast);
  probing.retry_interval = std::chrono::milliseconds(1);
  ClientCore core(probing);
  core.bind(members);
  eject(core, 1);
  const auto until = core.health(1).ejected_until.load();
  while (core.policy().now() < until) {
  }
  const auto never = [](std::span<const std::uint8_t>) -> std::size_t { return 0; };
  const Route probe = core.route(1, true, never);
  ASSERT_TRUE(probe.probe);
  EXPECT_EQ(core.route(1, true, never).status.code(), Errc::kServerEjected)
      << "one probe at a time";
  (void)core.finish(probe, MEMCACHED_SUCCESS, "get");
  EXPECT_FALSE(HealthPolicy::is_ejected(core.health(1)));
  EXPECT_FALSE(core.route(1, true, never).probe);
}

TEST(CappedExptimeTest, EveryFormOfExpiryEndsWithinTheCap) {
  using memshard::detail::capped_exptime;
  constexpr std::int64_t kNow = 1'800'000'000;
  EXPECT_EQ(capped_exptime(0, 60, kNow), 60);                // never -> the cap
  EXPECT_EQ(capped_exptime(30, 60, kNow), 30);               // shorter: kept
  EXPECT_EQ(capped_exptime(3600, 60, kNow), 60);             // longer: capped
  EXPECT_EQ(capped_exptime(kNow + 40, 60, kNow), 40);        // absolute, 40 s left
  EXPECT_EQ(capped_exptime(kNow + 9000, 60, kNow), 60);      // absolute, later
  EXPECT_EQ(capped_exptime(kNow - 5, 60, kNow), kNow - 5);   // past: expired as it is
  static_assert(capped_exptime(2'592'000, 60, kNow) == 60);  // 30 days is relative
}

}  // namespace
}  // namespace client_core_test
