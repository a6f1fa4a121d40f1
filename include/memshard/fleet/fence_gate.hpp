// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_FLEET_FENCE_GATE_HPP_
#define MEMSHARD_FLEET_FENCE_GATE_HPP_

// fleet/fence_gate.hpp: FenceGate, what stops a client family that follows a fleet's record
// (coordination/fleet_member.hpp) from serving once it can no longer be sure it serves the
// fleet's phase: from the fence on (a moment on the monotonic clock, which the member moves
// forward only while its lease is kept alive and it serves the newest record it knows), the
// family's calls do not touch the cache. Reads answer misses; stores, counters and touches are
// refused (Errc::kFenced); deletes are refused too, and the key of every refused write is kept,
// to be deleted once the member serves again (a store the application could not make may have
// left an older value behind, as a delete not made did). The gate is read by every call of a
// family that follows a fleet (a cheap clock), and by no other client.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/detail/clock.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// FenceGate: see the file comment. Thread-safe.
class FenceGate {
 public:
  /// kCoarseSlack: how far the cheap clock may run behind the exact one; the gate closes that
  /// much early.
  static constexpr std::int64_t kCoarseSlack = 20'000'000;  // 20 ms
  /// kDefaultCapacity: how many keys a gate keeps by default.
  static constexpr std::size_t kDefaultCapacity = 100'000;

  explicit FenceGate(std::size_t capacity = kDefaultCapacity) noexcept : capacity_(capacity) {}

  /// closed: whether the family must not serve now. Closed until a fence is first set. Out of
  /// line: the calls of a client that follows no fleet never come here, and keep their code small.
  [[nodiscard]] [[gnu::noinline]] auto closed() const noexcept -> bool {
    return coarse_now_ns() + kCoarseSlack >= fence_at_.load(std::memory_order_acquire);
  }

  /// fence_at: the moment (steady clock ns) from which the gate is closed.
  [[nodiscard]] auto fence_at() const noexcept -> std::int64_t {
    return fence_at_.load(std::memory_order_acquire);
  }

  /// open_until: serve until `fence_at` (steady clock ns).
  void open_until(std::int64_t fence_at) noexcept {
    fence_at_.store(fence_at, std::memory_order_release);
  }

  /// close: closed from now on, until open_until() again.
  void close() noexcept { fence_at_.store(0, std::memory_order_release); }

  /// keep: the sent key of a write refused while closed, deleted before the family serves
  /// again. Beyond the capacity it is counted as lost instead.
  void keep(std::string_view key) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (kept_.size() >= capacity_) {
      ++lost_;
      return;
    }
    kept_.emplace_back(key);
  }

  /// take: the keys kept so far (the gate keeps none from then on).
  [[nodiscard]] auto take() -> std::vector<std::string> {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    out.swap(kept_);
    return out;
  }

  /// kept: how many keys wait to be deleted.
  [[nodiscard]] auto kept() const -> std::size_t {
    const std::lock_guard<std::mutex> lock(mutex_);
    return kept_.size();
  }

  /// lost: how many keys could not be kept (the capacity was reached), since the gate began.
  [[nodiscard]] auto lost() const -> std::uint64_t {
    const std::lock_guard<std::mutex> lock(mutex_);
    return lost_;
  }

 private:
  std::atomic<std::int64_t> fence_at_{0};
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<std::string> kept_;
  std::uint64_t lost_ = 0;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_FLEET_FENCE_GATE_HPP_
