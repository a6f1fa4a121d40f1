// SPDX-License-Identifier: MIT
// migration/detail/rate_limiter.hpp on a fake clock (no sleeps): each budget alone and
// both together, unlimited budgets, the burst bound after idling, requests
// larger than a bucket, wait_time matching try_acquire, slow_down / restore,
// and a clock that does not move forward.

#include "memshard/migration/detail/rate_limiter.hpp"

#include <chrono>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace rate_limiter_test {
namespace {

using memshard::detail::RateBudget;
using memshard::detail::RateLimiter;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

std::int64_t fake_ns = 0;

auto fake_now() noexcept -> std::int64_t { return fake_ns; }

void advance(nanoseconds by) { fake_ns += by.count(); }

class RateLimiterTest : public ::testing::Test {
 protected:
  void SetUp() override { fake_ns = 1'000'000'000'000; }
};

/// granted: how many try_acquire(ops, bytes) succeed in a row now.
auto granted(RateLimiter& limiter, std::uint64_t ops, std::uint64_t bytes) -> int {
  int count = 0;
  while (count < 100'000 && limiter.try_acquire(ops, bytes)) {
    ++count;
  }
  return count;
}

TEST_F(RateLimiterTest, OperationBudgetAndBurst) {
  RateLimiter limiter({.ops_per_second = 100, .bytes_per_second = 0, .burst = milliseconds{100}},
                      &fake_now);
  EXPECT_EQ(granted(limiter, 1, 1'000'000), 10);  // a full bucket: 100/s x 0.1 s
  advance(milliseconds{10});
  EXPECT_EQ(granted(limiter, 1, 0), 1);
  // Idle for a minute: still only one burst.
  advance(std::chrono::seconds{60});
  EXPECT_EQ(granted(limiter, 1, 0), 10);
  // Over one simulated second in 1 ms steps: the rate, plus nothing more.
  int total = 0;
  for (int step = 0; step < 1'000; ++step) {
    advance(milliseconds{1});
    total += granted(limiter, 1, 0);
  }
  EXPECT_EQ(total, 100);
}

TEST_F(RateLimiterTest, ByteBudget) {
  RateLimiter limiter({.ops_per_second = 0, .bytes_per_second = 10'000, .burst = milliseconds{100}},
                      &fake_now);
  EXPECT_EQ(granted(limiter, 1, 100), 10);  // 1000 bytes of burst
  EXPECT_FALSE(limiter.try_acquire(1, 1));
  advance(milliseconds{10});  // 100 bytes
  EXPECT_FALSE(limiter.try_acquire(1, 101));
  EXPECT_TRUE(limiter.try_acquire(1, 100));
  EXPECT_FALSE(limiter.try_acquire(1, 1));
  // Operations are free under a byte budget only.
  advance(milliseconds{100});
  EXPECT_TRUE(limiter.try_acquire(1'000'000, 0));
  // From a full bucket, over one simulated second in 1 ms steps: the bucket
  // plus a second's bytes, nothing more.
  int total = granted(limiter, 1, 50);
  for (int step = 0; step < 1'000; ++step) {
    advance(milliseconds{1});
    total += granted(limiter, 1, 50);
  }
  EXPECT_EQ(total, (1'000 + 10'000) / 50);
}

TEST_F(RateLimiterTest, BothBudgetsMustPayAndNeitherIsTakenAlone) {
  RateLimiter limiter(
      {.ops_per_second = 100, .bytes_per_second = 1'000, .burst = milliseconds{1000}}, &fake_now);
  // Bytes run out first: 1000 bytes / 200 = 5, while 100 operations remain.
  EXPECT_EQ(granted(limiter, 1, 200), 5);
  // A refused request takes nothing: the 95 operations are still there.
  EXPECT_EQ(granted(limiter, 1, 0), 95);
  EXPECT_FALSE(limiter.try_acquire(1, 0));
  advance(milliseconds{10});  // 1 operation, 10 bytes
  EXPECT_FALSE(limiter.try_acquire(1, 11));
  EXPECT_TRUE(limiter.try_acquire(1, 10));
}

TEST_F(RateLimiterTest, UnlimitedBudgets) {
  RateLimiter limiter(RateBudget{}, &fake_now);
  EXPECT_EQ(granted(limiter, 1'000, std::numeric_limits<std::uint64_t>::max()), 100'000);
  EXPECT_EQ(limiter.wait_time(1'000, 1'000'000), nanoseconds{0});
  EXPECT_EQ(limiter.ops_rate(), 0);
  EXPECT_EQ(limiter.bytes_rate(), 0);
  // Huge requests and rates stay in range.
  RateLimiter huge({.ops_per_second = std::numeric_limits<std::uint64_t>::max(),
                    .bytes_per_second = 1,
                    .burst = milliseconds{100}},
                   &fake_now);
  EXPECT_TRUE(huge.try_acquire(std::numeric_limits<std::uint64_t>::max(), 1));
  // A full bucket pays for any amount: then the debt is huge, but in range.
  EXPECT_EQ(huge.wait_time(0, std::numeric_limits<std::uint64_t>::max()), std::chrono::seconds{1});
  advance(std::chrono::seconds{1});
  EXPECT_TRUE(huge.try_acquire(0, std::numeric_limits<std::uint64_t>::max()));
  EXPECT_GT(huge.wait_time(0, 1), std::chrono::hours{24 * 365});
}

TEST_F(RateLimiterTest, RequestLargerThanTheBucketWaitsForAFullOneAndGoesIntoDebt) {
  RateLimiter limiter({.ops_per_second = 0, .bytes_per_second = 1'000, .burst = milliseconds{100}},
                      &fake_now);
  // The bucket holds 100 bytes; a 1000-byte item goes through when it is full.
  EXPECT_TRUE(limiter.try_acquire(1, 1'000));
  // 900 bytes of debt, then a full bucket again: 1 s.
  EXPECT_EQ(limiter.wait_time(1, 1'000), milliseconds{1'000});
  advance(milliseconds{999});
  EXPECT_FALSE(limiter.try_acquire(1, 1'000));
  advance(milliseconds{1});
  EXPECT_TRUE(limiter.try_acquire(1, 1'000));
}

TEST_F(RateLimiterTest, WaitTimeIsWhenTryAcquireSucceeds) {
  RateLimiter limiter({.ops_per_second = 50, .bytes_per_second = 4'000, .burst = milliseconds{200}},
                      &fake_now);
  EXPECT_EQ(limiter.wait_time(1, 100), nanoseconds{0});
  EXPECT_EQ(granted(limiter, 1, 100), 8);  // 800 bytes of burst; 10 operations
  // Bytes: 100 more at 4000/s = 25 ms; an operation is there already.
  EXPECT_EQ(limiter.wait_time(1, 100), milliseconds{25});
  advance(milliseconds{24});
  EXPECT_FALSE(limiter.try_acquire(1, 100));
  EXPECT_EQ(limiter.wait_time(1, 100), milliseconds{1});
  advance(milliseconds{1});
  EXPECT_TRUE(limiter.try_acquire(1, 100));
  // Operations: 9 taken, 155 ms from a full bucket; an operation costs 20 ms,
  // and the bucket holds 200 ms.
  EXPECT_EQ(granted(limiter, 1, 0), 2);
  EXPECT_EQ(limiter.wait_time(1, 0), milliseconds{15});
  EXPECT_EQ(limiter.wait_time(2, 0), milliseconds{35});
}

TEST_F(RateLimiterTest, SlowDownAndRestore) {
  RateLimiter limiter({.ops_per_second = 1'000, .bytes_per_second = 0, .burst = milliseconds{100}},
                      &fake_now);
  EXPECT_EQ(granted(limiter, 1, 0), 100);
  limiter.slow_down(4);
  EXPECT_EQ(limiter.slowdown(), 4);
  EXPECT_EQ(limiter.ops_rate(), 250);
  advance(std::chrono::seconds{1});
  EXPECT_EQ(granted(limiter, 1, 0), 25);  // the burst at the lower rate
  limiter.slow_down(2);                   // cumulative
  EXPECT_EQ(limiter.ops_rate(), 125);
  EXPECT_EQ(limiter.wait_time(1, 0), milliseconds{8});
  // Restored: what filled while slowed (a full 12.5) is kept, not a full bucket.
  advance(std::chrono::seconds{1});
  limiter.restore();
  EXPECT_EQ(limiter.slowdown(), 1);
  EXPECT_EQ(granted(limiter, 1, 0), 12);
  // A full bucket is trimmed to the lower burst at once.
  advance(std::chrono::seconds{1});
  limiter.slow_down(4);
  EXPECT_EQ(granted(limiter, 1, 0), 25);
  limiter.restore();
  advance(std::chrono::seconds{1});
  EXPECT_EQ(granted(limiter, 1, 0), 100);
  // Factors of 1 or below, and NaN, do nothing; the total factor is bounded.
  limiter.slow_down(0.5);
  limiter.slow_down(1);
  limiter.slow_down(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(limiter.slowdown(), 1);
  for (int i = 0; i < 20; ++i) {
    limiter.slow_down(10);
  }
  EXPECT_EQ(limiter.slowdown(), RateLimiter::kMaxSlowdown);
}

TEST_F(RateLimiterTest, NoBurstPacesEveryRequest) {
  for (const milliseconds burst : {milliseconds{0}, milliseconds{-5}}) {
    RateLimiter limiter({.ops_per_second = 10, .bytes_per_second = 0, .burst = burst}, &fake_now);
    EXPECT_TRUE(limiter.try_acquire(1, 0));
    EXPECT_FALSE(limiter.try_acquire(1, 0));
    EXPECT_EQ(limiter.wait_time(1, 0), milliseconds{100});
    advance(milliseconds{99});
    EXPECT_FALSE(limiter.try_acquire(1, 0));
    advance(milliseconds{1});
    EXPECT_TRUE(limiter.try_acquire(1, 0));
    advance(std::chrono::seconds{10});
  }
}

TEST_F(RateLimiterTest, ClockThatStandsStillOrGoesBack) {
  RateLimiter limiter({.ops_per_second = 10, .bytes_per_second = 0, .burst = milliseconds{1000}},
                      &fake_now);
  EXPECT_EQ(granted(limiter, 1, 0), 10);
  advance(-std::chrono::seconds{5});
  EXPECT_FALSE(limiter.try_acquire(1, 0));
  advance(std::chrono::seconds{5});
  EXPECT_FALSE(limiter.try_acquire(1, 0));
  advance(milliseconds{100});
  EXPECT_TRUE(limiter.try_acquire(1, 0));
}

}  // namespace
}  // namespace rate_limiter_test
