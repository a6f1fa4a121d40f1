// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MIGRATION_DETAIL_RATE_LIMITER_HPP_
#define MEMSHARD_MIGRATION_DETAIL_RATE_LIMITER_HPP_

// migration/detail/rate_limiter.hpp: RateLimiter, a token bucket over two budgets
// (operations per second and bytes per second), on a clock the caller may
// replace, with a slow-down for backing off when the target servers evict.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "memshard/detail/compiled.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// RateClock: the monotonic clock a RateLimiter reads, in ns. Tests pass a
/// function of their own.
using RateClock = std::int64_t (*)() noexcept;

/// rate_clock_now: std::chrono::steady_clock now, in ns since its epoch.
[[nodiscard]] inline auto rate_clock_now() noexcept -> std::int64_t {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// RateBudget: the limits of a RateLimiter.
struct RateBudget {
  /// ops_per_second: operations allowed per second; 0 means unlimited.
  std::uint64_t ops_per_second = 0;
  /// bytes_per_second: bytes allowed per second; 0 means unlimited.
  std::uint64_t bytes_per_second = 0;
  /// burst: how much may be taken at once after an idle spell, as time at the
  /// rate (each bucket holds rate x burst).
  std::chrono::milliseconds burst{100};
};

/// RateLimiter: a token bucket per budget. A request of `ops` operations and
/// `bytes` bytes is granted when both buckets can pay for it, and then takes
/// from both; otherwise it takes nothing. Buckets refill at their rate and
/// never hold more than their burst. A request larger than a whole bucket is
/// granted once that bucket is full and leaves it in debt, so an item larger
/// than the byte burst still goes through, at the average rate.
///
/// slow_down(factor) divides both rates by `factor` (cumulatively, down to
/// 1/kMaxSlowdown of the budget) and trims the buckets to the lower burst;
/// restore() brings the full budget back. Time already passed is paid at the
/// rate that held then.
///
/// Each bucket is kept as the time at which it will be full again (the
/// generic cell rate algorithm), in integer ns, so that equal budgets and
/// clocks always give the same answers. A clock that goes back only delays.
///
/// Every member is O(1), noexcept and allocation-free. Not thread-safe: one
/// driver (the warmer's step) uses it.
///
/// **Example**:
///   RateLimiter limiter({.ops_per_second = 500, .bytes_per_second = 8'000'000});
///   if (limiter.try_acquire(1, item_bytes)) copy(item);
///   else wait_up_to(limiter.wait_time(1, item_bytes));
class RateLimiter {
 public:
  /// kMaxSlowdown: the largest cumulative slow-down factor.
  static constexpr double kMaxSlowdown = 1024;

  /// RateLimiter: full buckets under `budget` (a negative burst counts as 0),
  /// timed by `clock`.
  explicit RateLimiter(RateBudget budget, RateClock clock = &rate_clock_now) noexcept;

  /// try_acquire: takes `ops` operations and `bytes` bytes from the buckets if
  /// both can pay now, and returns true; otherwise takes nothing, returns false.
  [[nodiscard]] auto try_acquire(std::uint64_t ops, std::uint64_t bytes) noexcept -> bool;

  /// wait_time: how long from now until try_acquire(ops, bytes) would succeed,
  /// if nothing else takes from the buckets and the rates stay; zero when it
  /// would succeed now.
  [[nodiscard]] auto wait_time(std::uint64_t ops, std::uint64_t bytes) const noexcept
      -> std::chrono::nanoseconds;

  /// slow_down: divides the current rates by `factor` (values of 1 or below,
  /// and NaN, do nothing; the cumulative factor stops at kMaxSlowdown).
  void slow_down(double factor) noexcept;

  /// restore: the full budget again (what the buckets hold is kept).
  void restore() noexcept { rescale(1); }

  /// slowdown: the cumulative slow-down factor now (1 when restored).
  [[nodiscard]] auto slowdown() const noexcept -> double { return slowdown_; }

  /// ops_rate: operations per second allowed now (0: unlimited).
  [[nodiscard]] auto ops_rate() const noexcept -> double {
    return static_cast<double>(budget_.ops_per_second) / slowdown_;
  }

  /// bytes_rate: bytes per second allowed now (0: unlimited).
  [[nodiscard]] auto bytes_rate() const noexcept -> double {
    return static_cast<double>(budget_.bytes_per_second) / slowdown_;
  }

  /// budget: the budget given at construction.
  [[nodiscard]] auto budget() const noexcept -> const RateBudget& { return budget_; }

 private:
  /// kMaxCost: a bound on any one cost, far from overflow.
  static constexpr std::int64_t kMaxCost = std::int64_t{1} << 61;

  /// cost_ns: how long `amount` units take to refill at `rate` per second,
  /// slowed down; 0 when unlimited.
  [[nodiscard]] auto cost_ns(std::uint64_t rate, std::uint64_t amount) const noexcept
      -> std::int64_t;

  /// burst_ns: a bucket's depth, in time.
  [[nodiscard]] auto burst_ns() const noexcept -> std::int64_t {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(budget_.burst).count();
  }

  /// shortfall: how long until a bucket full at `full_at` pays for `cost`
  /// (a full bucket pays for any cost); 0 when it can now.
  [[nodiscard]] auto shortfall(std::int64_t full_at, std::uint64_t rate, std::int64_t cost,
                               std::int64_t now) const noexcept -> std::int64_t;

  static void take(std::int64_t& full_at, std::uint64_t rate, std::int64_t cost,
                   std::int64_t now) noexcept;

  /// rescale: the buckets' contents kept in units, at the slow-down `factor`:
  /// a bucket that was `debt` ns from full at the old rate holds burst - debt
  /// ns of the old rate's units, trimmed to the new burst.
  void rescale(double factor) noexcept;

  RateBudget budget_;
  RateClock clock_;
  std::int64_t ops_full_at_ = 0;
  std::int64_t bytes_full_at_ = 0;
  double slowdown_ = 1;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE RateLimiter::RateLimiter(RateBudget budget, RateClock clock) noexcept
    : budget_(budget), clock_(clock) {
  budget_.burst = std::max(budget_.burst, std::chrono::milliseconds{0});
  const std::int64_t now = clock_();
  ops_full_at_ = now;
  bytes_full_at_ = now;
}

MEMSHARD_DETAIL_INLINE auto RateLimiter::try_acquire(std::uint64_t ops,
                                                     std::uint64_t bytes) noexcept -> bool {
  const std::int64_t now = clock_();
  const std::int64_t ops_cost = cost_ns(budget_.ops_per_second, ops);
  const std::int64_t bytes_cost = cost_ns(budget_.bytes_per_second, bytes);
  if (shortfall(ops_full_at_, budget_.ops_per_second, ops_cost, now) > 0 ||
      shortfall(bytes_full_at_, budget_.bytes_per_second, bytes_cost, now) > 0) {
    return false;
  }
  take(ops_full_at_, budget_.ops_per_second, ops_cost, now);
  take(bytes_full_at_, budget_.bytes_per_second, bytes_cost, now);
  return true;
}

MEMSHARD_DETAIL_INLINE auto RateLimiter::wait_time(std::uint64_t ops,
                                                   std::uint64_t bytes) const noexcept
    -> std::chrono::nanoseconds {
  const std::int64_t now = clock_();
  return std::chrono::nanoseconds{std::max(
      shortfall(ops_full_at_, budget_.ops_per_second, cost_ns(budget_.ops_per_second, ops), now),
      shortfall(bytes_full_at_, budget_.bytes_per_second, cost_ns(budget_.bytes_per_second, bytes),
                now))};
}

MEMSHARD_DETAIL_INLINE void RateLimiter::slow_down(double factor) noexcept {
  if (!(factor > 1)) {
    return;
  }
  rescale(std::min(slowdown_ * factor, kMaxSlowdown));
}

MEMSHARD_DETAIL_INLINE auto RateLimiter::cost_ns(std::uint64_t rate,
                                                 std::uint64_t amount) const noexcept
    -> std::int64_t {
  if (rate == 0 || amount == 0) {
    return 0;
  }
  constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
  const std::uint64_t whole = amount / rate;
  const std::uint64_t part = amount % rate;
  if (whole >= static_cast<std::uint64_t>(kMaxCost) / kNsPerSecond) {
    return kMaxCost;
  }
  std::uint64_t exact = whole * kNsPerSecond;
  if (rate <= std::numeric_limits<std::uint64_t>::max() / kNsPerSecond) {
    exact += (part * kNsPerSecond + rate - 1) / rate;  // rounded up
  } else {
    exact += static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(part) / static_cast<double>(rate) * 1e9));
  }
  const auto base = static_cast<std::int64_t>(exact);
  if (slowdown_ == 1) {
    return base;
  }
  const double slowed = std::ceil(static_cast<double>(base) * slowdown_);
  return slowed >= static_cast<double>(kMaxCost) ? kMaxCost : static_cast<std::int64_t>(slowed);
}

MEMSHARD_DETAIL_INLINE auto RateLimiter::shortfall(std::int64_t full_at, std::uint64_t rate,
                                                   std::int64_t cost,
                                                   std::int64_t now) const noexcept
    -> std::int64_t {
  if (rate == 0) {
    return 0;
  }
  const std::int64_t debt = std::max<std::int64_t>(full_at - now, 0);
  const std::int64_t allowance = std::max<std::int64_t>(burst_ns() - cost, 0);
  return std::max<std::int64_t>(debt - allowance, 0);
}

MEMSHARD_DETAIL_INLINE void RateLimiter::take(std::int64_t& full_at, std::uint64_t rate,
                                              std::int64_t cost, std::int64_t now) noexcept {
  if (rate != 0) {
    full_at = std::max(full_at, now) + cost;
  }
}

MEMSHARD_DETAIL_INLINE void RateLimiter::rescale(double factor) noexcept {
  const std::int64_t now = clock_();
  const double ratio = factor / slowdown_;
  const auto rescale_one = [&](std::int64_t& full_at, std::uint64_t rate) {
    if (rate == 0) {
      return;
    }
    const auto burst = static_cast<double>(burst_ns());
    const auto debt = static_cast<double>(std::max<std::int64_t>(full_at - now, 0));
    const double scaled = std::max(burst - (burst - debt) * ratio, 0.0);
    full_at = now + static_cast<std::int64_t>(std::min(scaled, static_cast<double>(kMaxCost)));
  };
  rescale_one(ops_full_at_, budget_.ops_per_second);
  rescale_one(bytes_full_at_, budget_.bytes_per_second);
  slowdown_ = factor;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_MIGRATION_DETAIL_RATE_LIMITER_HPP_
