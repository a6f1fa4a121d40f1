// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_FLEET_CALL_TRACKER_HPP_
#define MEMSHARD_FLEET_CALL_TRACKER_HPP_

// fleet/call_tracker.hpp: CallTracker, which snapshot generation each client of a family is
// calling on, so that whoever changes the family's placement can wait until every call begun
// before the change has ended (the fleet's members acknowledge a phase only then: a read-through
// that read before a phase change and stores after it would otherwise store a value the new
// phase no longer protects; docs/fleet.md).
//
// Each client holds a Seat. A call marks its seat with the generation it runs on when it starts
// and clears it when it ends; a call inside a call (one that a callback makes) changes nothing,
// so the outer call counts whole. Marking costs a store on the client's own cache line and a
// re-read of the family's generation (CallTracker::Seat::enter), no lock and no shared write.
//
// The order that makes the wait exact: a client stores its generation (seq_cst), then reads the
// family's generation again; the family publishes a new generation (seq_cst), then reads the
// seats. Either the client sees the new generation (and moves to it before doing anything), or
// the waiter sees the client's seat.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// CallTracker: see the file comment. Thread-safe; each Seat is used by its client's thread.
class CallTracker {
 public:
  /// Seat: one client's mark. enter() and leave() come from the client's thread only.
  class Seat {
   public:
    /// enter: a call starts on `generation` (only the outermost call of a nest marks).
    /// Returns whether this call marked the seat (the outermost one).
    auto enter(std::uint64_t generation) noexcept -> bool {
      if (depth_++ != 0) {
        return false;
      }
      calling_.store(generation, std::memory_order_seq_cst);
      return true;
    }
    /// remark: the outermost call moved to `generation` before doing anything (it saw a newer
    /// generation right after marking).
    void remark(std::uint64_t generation) noexcept {
      calling_.store(generation, std::memory_order_seq_cst);
    }
    /// leave: the call that entered last ends.
    void leave() noexcept {
      if (--depth_ == 0) {
        calling_.store(0, std::memory_order_release);
      }
    }
    /// calling: the generation of the call under way, 0 when none.
    [[nodiscard]] auto calling() const noexcept -> std::uint64_t {
      return calling_.load(std::memory_order_seq_cst);
    }
    /// depth: how many calls are nested now (the client's thread only).
    [[nodiscard]] auto depth() const noexcept -> int { return depth_; }

   private:
    alignas(64) std::atomic<std::uint64_t> calling_{0};
    int depth_ = 0;
  };

  /// seat: a new seat of the family (a client, or a clone).
  [[nodiscard]] auto seat() -> std::shared_ptr<Seat> {
    auto seat = std::make_shared<Seat>();
    const std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(seats_, [](const std::weak_ptr<Seat>& s) { return s.expired(); });
    seats_.push_back(seat);
    return seat;
  }

  /// calls_before: how many seats are in a call on a generation below `generation`.
  [[nodiscard]] auto calls_before(std::uint64_t generation) const -> std::size_t {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::size_t count = 0;
    for (const std::weak_ptr<Seat>& weak : seats_) {
      if (const std::shared_ptr<Seat> seat = weak.lock()) {
        const std::uint64_t calling = seat->calling();
        count += calling != 0 && calling < generation ? 1 : 0;
      }
    }
    return count;
  }

  /// wait_before: waits until no call runs on a generation below `generation`, polling every
  /// millisecond until `deadline`. Returns whether none did by then. Call it after the
  /// generation was published.
  [[nodiscard]] auto wait_before(std::uint64_t generation,
                                 std::chrono::steady_clock::time_point deadline) const -> bool {
    while (calls_before(generation) != 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{1});
    }
    return true;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::weak_ptr<Seat>> seats_;
};

/// CallMark: one call's mark on its client's seat, cleared when the call ends (RAII).
class CallMark {
 public:
  explicit CallMark(CallTracker::Seat& seat) noexcept : seat_(&seat) {}
  CallMark(const CallMark&) = delete;
  auto operator=(const CallMark&) -> CallMark& = delete;
  CallMark(CallMark&&) = delete;
  auto operator=(CallMark&&) -> CallMark& = delete;
  ~CallMark() { seat_->leave(); }

 private:
  CallTracker::Seat* seat_;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_FLEET_CALL_TRACKER_HPP_
