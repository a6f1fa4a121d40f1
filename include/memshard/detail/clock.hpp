// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_DETAIL_CLOCK_HPP_
#define MEMSHARD_DETAIL_CLOCK_HPP_

// detail/clock.hpp: the monotonic clock deadlines are kept in, read exactly or
// cheaply.

#include <chrono>
#include <cstdint>

#if defined(__linux__)
#include <time.h>
#endif

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// steady_now_ns: std::chrono::steady_clock now, in ns since its epoch.
[[nodiscard]] inline auto steady_now_ns() noexcept -> std::int64_t {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// coarse_now_ns: the same clock read cheaply, a few ms behind at most (Linux
/// CLOCK_MONOTONIC_COARSE, which steady_clock's CLOCK_MONOTONIC runs ahead
/// of by less than a scheduler tick): for checking deadlines per key.
[[nodiscard]] inline auto coarse_now_ns() noexcept -> std::int64_t {
#if defined(__linux__) && defined(CLOCK_MONOTONIC_COARSE)
  timespec now{};
  if (::clock_gettime(CLOCK_MONOTONIC_COARSE, &now) == 0) {
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  }
#endif
  return steady_now_ns();
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_DETAIL_CLOCK_HPP_
