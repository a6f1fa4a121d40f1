// SPDX-License-Identifier: MIT
// fleet/server_health.hpp without a server: the ejection rules of
// HealthPolicy on a clock the test moves by hand, and HealthRegistry's one
// ServerHealth per endpoint.

#include "memshard/fleet/server_health.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "memshard/placement/server.hpp"

namespace server_health_test {
namespace {

using memshard::detail::HealthChange;
using memshard::detail::HealthPolicy;
using memshard::detail::HealthRegistry;
using memshard::detail::ServerHealth;
using std::chrono::milliseconds;

std::atomic<std::int64_t> fake_now{1'000'000'000};

auto fake_clock() noexcept -> std::int64_t { return fake_now.load(); }

void advance(milliseconds by) { fake_now += std::chrono::nanoseconds(by).count(); }

constexpr milliseconds kRetry{2000};
constexpr milliseconds kLease{3000};

auto policy(std::uint32_t limit = 2) -> HealthPolicy {
  return HealthPolicy(limit, kRetry, kLease, &fake_clock);
}

TEST(HealthPolicyTest, ConsecutiveServerFailuresEjectAtTheLimit) {
  const HealthPolicy rules = policy(3);
  ServerHealth health;
  EXPECT_EQ(rules.record(health, true, false), HealthChange::kNone);
  EXPECT_FALSE(rules.ejects_next(health));
  EXPECT_EQ(rules.record(health, true, false), HealthChange::kNone);
  EXPECT_FALSE(HealthPolicy::is_ejected(health));
  EXPECT_TRUE(rules.ejects_next(health));
  EXPECT_EQ(rules.record(health, true, false), HealthChange::kEjected);  // the third
  EXPECT_TRUE(HealthPolicy::is_ejected(health));
  EXPECT_FALSE(rules.ejects_next(health));
  EXPECT_EQ(health.ejections.load(), 1U);
  EXPECT_EQ(health.consecutive_failures.load(), 3U);
  // Failing again while out neither counts a second ejection nor restores.
  EXPECT_EQ(rules.record(health, true, false), HealthChange::kNone);
  EXPECT_EQ(health.ejections.load(), 1U);
  EXPECT_TRUE(health.stats(memshard::Server{"a", 1, 1, ""}).ejected);
}

TEST(HealthPolicyTest, AnyOtherOutcomeResetsTheCount) {
  const HealthPolicy rules = policy(2);
  ServerHealth health;
  (void)rules.record(health, true, false);
  (void)rules.record(health, false, false);  // a hit, a miss, not_stored, ...
  EXPECT_EQ(health.consecutive_failures.load(), 0U);
  (void)rules.record(health, true, false);
  EXPECT_FALSE(HealthPolicy::is_ejected(health));
}

TEST(HealthPolicyTest, OneProbeLeaseOnceTheRetryIntervalHasPassed) {
  const HealthPolicy rules = policy(1);
  ServerHealth health;
  EXPECT_FALSE(rules.try_probe(health)) << "a healthy server is not probed";
  (void)rules.record(health, true, false);
  EXPECT_FALSE(rules.try_probe(health)) << "the retry interval has not passed";
  advance(kRetry - milliseconds(1));
  EXPECT_FALSE(rules.try_probe(health));
  advance(milliseconds(1));
  EXPECT_TRUE(rules.try_probe(health));
  EXPECT_FALSE(rules.try_probe(health)) << "only one request holds the lease";
  // A lease that is never given back runs out.
  advance(kLease - milliseconds(1));
  EXPECT_FALSE(rules.try_probe(health));
  advance(milliseconds(1));
  EXPECT_TRUE(rules.try_probe(health));
  HealthPolicy::release_probe(health);
  EXPECT_TRUE(rules.try_probe(health)) << "a released lease can be won at once";
}

TEST(HealthPolicyTest, AProbesOutcomeRestoresOrEjectsAgain) {
  const HealthPolicy rules = policy(2);
  ServerHealth health;
  (void)rules.record(health, true, false);
  (void)rules.record(health, true, false);
  advance(kRetry);
  ASSERT_TRUE(rules.try_probe(health));
  // The probe fails: out again, for 1.5 retry intervals (plus jitter up to a
  // fifth), however the count stands, and the lease is free.
  EXPECT_EQ(rules.record(health, true, true), HealthChange::kProbeFailed);
  EXPECT_TRUE(HealthPolicy::is_ejected(health));
  EXPECT_EQ(health.probe_until.load(), 0);
  EXPECT_EQ(health.probe_failures.load(), 1U);
  advance(kRetry * 3 / 2 - milliseconds(1));
  EXPECT_FALSE(rules.try_probe(health));
  advance(kRetry * 3 / 10 + milliseconds(1));
  ASSERT_TRUE(rules.try_probe(health));
  EXPECT_EQ(rules.record(health, false, true), HealthChange::kRestored);
  EXPECT_FALSE(HealthPolicy::is_ejected(health));
  EXPECT_EQ(health.probe_until.load(), 0);
  EXPECT_EQ(health.probe_failures.load(), 0U);
  EXPECT_EQ(health.ejections.load(), 1U) << "one ejection, probed twice";
}

TEST(HealthPolicyTest, FailedProbesBackOffByHalfWithJitterUpToTheCap) {
  const HealthPolicy rules(1, kRetry, kLease, &fake_clock, kRetry * 5);
  EXPECT_EQ(rules.interval(0), std::chrono::nanoseconds(kRetry).count());
  EXPECT_EQ(rules.interval(1), std::chrono::nanoseconds(kRetry * 3 / 2).count());
  EXPECT_EQ(rules.interval(2), std::chrono::nanoseconds(kRetry * 9 / 4).count());
  EXPECT_EQ(rules.interval(100), std::chrono::nanoseconds(kRetry * 5).count());
  // Probe after probe fails; each wait is within [interval, 1.2 interval].
  ServerHealth health;
  (void)rules.record(health, true, false);
  std::int64_t previous = 0;
  for (std::uint32_t step = 1; step <= 8; ++step) {
    advance(kRetry * 6);
    ASSERT_TRUE(rules.try_probe(health)) << step;
    const std::int64_t from = fake_clock();
    ASSERT_EQ(rules.record(health, true, true), HealthChange::kProbeFailed);
    const std::int64_t wait = health.ejected_until.load() - from;
    EXPECT_GE(wait, rules.interval(step)) << step;
    EXPECT_LE(wait, rules.interval(step) + rules.interval(step) / 5) << step;
    EXPECT_GE(wait, previous * 4 / 5) << "never much shorter than the last wait";
    previous = wait;
  }
}

TEST(HealthPolicyTest, ClientsDrawDifferentJitter) {
  const HealthPolicy rules(1, kRetry, kLease, &fake_clock);
  std::vector<ServerHealth> healths(8);
  std::vector<std::int64_t> waits;
  for (ServerHealth& health : healths) {
    (void)rules.record(health, true, false);
    advance(kRetry);
    ASSERT_TRUE(rules.try_probe(health));
    (void)rules.record(health, true, true);
    waits.push_back(health.ejected_until.load() - fake_clock());
  }
  std::sort(waits.begin(), waits.end());
  EXPECT_LT(waits.front(), waits.back()) << "eight servers, one draw";
}

TEST(HealthPolicyTest, AnEjectionNotAllowedKeepsTheServerIn) {
  const HealthPolicy rules = policy(2);
  ServerHealth health;
  (void)rules.record(health, true, false);
  EXPECT_EQ(rules.record(health, true, false, false), HealthChange::kKeptIn);
  EXPECT_FALSE(HealthPolicy::is_ejected(health));
  EXPECT_EQ(health.kept_in.load(), 1U);
  EXPECT_EQ(rules.record(health, true, false, true), HealthChange::kEjected);
}

TEST(HealthPolicyTest, AFailureThatIsNotAProbeDoesNotRestore) {
  const HealthPolicy rules = policy(1);
  ServerHealth health;
  (void)rules.record(health, true, false);
  (void)rules.record(health, false, false);  // a failover request elsewhere, say
  EXPECT_TRUE(HealthPolicy::is_ejected(health)) << "only a probe brings a server back";
}

TEST(HealthPolicyTest, ThreadsRaceForOneLease) {
  const HealthPolicy rules = policy(1);
  ServerHealth health;
  (void)rules.record(health, true, false);
  advance(kRetry);
  std::atomic<int> winners{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (rules.try_probe(health)) {
          ++winners;
        }
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(winners.load(), 1);
}

TEST(HealthRegistryTest, OneHealthPerEndpointWhileSomeoneHoldsIt) {
  HealthRegistry registry;
  const std::vector<memshard::Server> first = memshard::parse_servers("a:1,b:2,c:3");
  auto held = registry.acquire(first);
  ASSERT_EQ(held.size(), 3U);
  held[1]->hits = 7;
  // The same endpoint under another weight or name is the same server.
  const std::vector<memshard::Server> second = memshard::parse_servers("b:2:5:bee,d:4");
  auto again = registry.acquire(second);
  EXPECT_EQ(again[0].get(), held[1].get());
  EXPECT_EQ(again[0]->hits.load(), 7U);
  EXPECT_NE(again[1].get(), held[0].get());
  // Endpoints nobody holds any more are forgotten at the next acquire.
  held.clear();
  EXPECT_EQ(registry.size(), 4U);
  (void)registry.acquire(second);
  EXPECT_EQ(registry.size(), 2U);
}

}  // namespace
}  // namespace server_health_test
