// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_DEADLINE_WATCH_HPP_
#define MEMSHARD_WIRE_DEADLINE_WATCH_HPP_

// wire/deadline_watch.hpp: how a libmemcached call is held to a wall-clock
// deadline. libmemcached bounds each wait by its poll (or connect) timeout,
// not the call: a server that trickles its reply keeps one call alive for as
// long as bytes keep coming. It reads the timeout afresh at every wait,
// though. So while a call runs, DeadlineWatch, one thread per process shared
// by every client, lowers the timeouts of the handle in use to what is left
// of the call's deadline, every kTick, and to zero once it has passed; the
// next wait then ends the call with MEMCACHED_TIMEOUT. A wait ends at most
// kTick after the deadline. CallWatch is one client's slot; WatchedCall arms
// it around one call. docs/architecture.md has the reasoning.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "memshard/client/client_options.hpp"
#include "memshard/detail/clock.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

class DeadlineWatch;
class WatchSeat;

/// CallWatch: one client's slot in the DeadlineWatch: the handle its call
/// uses and the call's deadline while a call runs. Owned by one client (one
/// thread); the watch thread only lowers the handle's timeouts.
class CallWatch {
 public:
  CallWatch() = default;
  CallWatch(const CallWatch&) = delete;
  auto operator=(const CallWatch&) -> CallWatch& = delete;
  CallWatch(CallWatch&&) = delete;
  auto operator=(CallWatch&&) -> CallWatch& = delete;
  ~CallWatch() = default;

 private:
  friend class DeadlineWatch;
  friend class WatchedCall;
  friend class WatchSeat;

  static constexpr std::uint32_t kIdle = 0;
  static constexpr std::uint32_t kArmed = 1;
  static constexpr std::uint32_t kBusy = 2;  // the watch thread is lowering timeouts

  std::atomic<std::uint32_t> state_{kIdle};
  // Published by the owner before state_ becomes kArmed (release), read by
  // the watch thread after it takes kBusy (acquire); written back by it
  // before it returns the slot to kArmed.
  memcached_st* memc_ = nullptr;
  std::int64_t deadline_ = 0;    // 0: the thread sets it when it first sees the call
  std::int64_t budget_ns_ = 0;   // a call's budget, for such a deadline (set once)
  std::int32_t poll_ms_ = 0;     // the client's own poll timeout
  std::int32_t connect_ms_ = 0;  // the client's own connect timeout
  bool lowered_ = false;         // the handle's timeouts were lowered
};

/// DeadlineWatch: the process's watch thread (see the file comment). Made by
/// shared(); lives while any client holds it. The thread sleeps while no
/// call has been armed for a second, and the next call wakes it.
class DeadlineWatch {
 public:
  /// kTick: how often armed calls are looked at; a call ends at most this
  /// much (plus scheduling) after its deadline.
  static constexpr std::chrono::milliseconds kTick{4};

  /// shared: the process's watch, started with its first client; throws
  /// std::system_error when no thread can be started.
  [[nodiscard]] static auto shared() -> std::shared_ptr<DeadlineWatch>;

  DeadlineWatch(const DeadlineWatch&) = delete;
  auto operator=(const DeadlineWatch&) -> DeadlineWatch& = delete;
  DeadlineWatch(DeadlineWatch&&) = delete;
  auto operator=(DeadlineWatch&&) -> DeadlineWatch& = delete;
  ~DeadlineWatch();

  /// enroll: adds a client's slot (until withdraw).
  void enroll(CallWatch& slot);

  /// withdraw: removes a slot; afterwards the thread never touches it.
  void withdraw(CallWatch& slot) noexcept;

  /// asleep: whether the thread sleeps now (no call armed for a second).
  [[nodiscard]] auto asleep() const noexcept -> bool {
    return sleeping_.load(std::memory_order_seq_cst);
  }

  /// lowered: how many times a running call's timeouts were lowered (for
  /// tests and benchmarks).
  [[nodiscard]] auto lowered() const noexcept -> std::uint64_t {
    return lowered_.load(std::memory_order_relaxed);
  }

 private:
  friend class WatchedCall;

  DeadlineWatch() : thread_([this] { loop(); }) {}

  // Called after a slot became kArmed: wakes the thread if it sleeps.
  void armed() noexcept;

  void loop();

  // Lowers the timeouts of every armed call; answers whether any was armed.
  auto scan(std::int64_t now) noexcept -> bool;

  // What is left of the slot's deadline, in whole ms (0 once it passed),
  // becomes the handle's timeouts where it is shorter than the client's. A
  // wait that starts after this reads the new value; one under way ends by
  // the value it read, at most a tick older. Written at every tick (the
  // owner may set its own, shorter, waits meanwhile).
  void lower(CallWatch& slot, std::int64_t now) noexcept;

  std::mutex mutex_;  // slots_, stop_, woken_
  std::condition_variable wake_;
  std::vector<CallWatch*> slots_;
  bool stop_ = false;
  bool woken_ = false;
  std::atomic<bool> sleeping_{false};
  std::atomic<std::uint64_t> lowered_{0};
  std::thread thread_;  // last: starts once everything above exists
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto DeadlineWatch::shared() -> std::shared_ptr<DeadlineWatch> {
  static std::mutex mutex;
  static std::weak_ptr<DeadlineWatch> current;
  const std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<DeadlineWatch> watch = current.lock();
  if (!watch) {
    watch = std::shared_ptr<DeadlineWatch>(new DeadlineWatch());
    current = watch;
  }
  return watch;
}

MEMSHARD_DETAIL_INLINE DeadlineWatch::~DeadlineWatch() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

MEMSHARD_DETAIL_INLINE void DeadlineWatch::enroll(CallWatch& slot) {
  const std::lock_guard<std::mutex> lock(mutex_);
  slots_.push_back(&slot);
}

MEMSHARD_DETAIL_INLINE void DeadlineWatch::withdraw(CallWatch& slot) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::erase(slots_, &slot);
}

MEMSHARD_DETAIL_INLINE void DeadlineWatch::armed() noexcept {
  if (sleeping_.load(std::memory_order_seq_cst)) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      woken_ = true;
    }
    wake_.notify_one();
  }
}

MEMSHARD_DETAIL_INLINE void DeadlineWatch::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::int64_t last_busy = steady_now_ns();
  constexpr std::int64_t kIdleNs = 1'000'000'000;
  while (!stop_) {
    const std::int64_t now = steady_now_ns();
    if (scan(now)) {
      last_busy = now;
    } else if (now - last_busy > kIdleNs) {
      // Sleep until a call is armed. A call armed before sleeping_ was set
      // is found by the scan after it; one armed after sees sleeping_.
      sleeping_.store(true, std::memory_order_seq_cst);
      if (!scan(steady_now_ns())) {
        wake_.wait(lock, [this] { return stop_ || woken_; });
      }
      woken_ = false;
      sleeping_.store(false, std::memory_order_seq_cst);
      last_busy = steady_now_ns();
      continue;
    }
    (void)wake_.wait_for(lock, kTick, [this] { return stop_; });
  }
}

MEMSHARD_DETAIL_INLINE auto DeadlineWatch::scan(std::int64_t now) noexcept -> bool {
  bool any = false;
  for (CallWatch* slot : slots_) {
    std::uint32_t expected = CallWatch::kArmed;
    if (slot->state_.load(std::memory_order_seq_cst) != CallWatch::kArmed ||
        !slot->state_.compare_exchange_strong(expected, CallWatch::kBusy,
                                              std::memory_order_acquire)) {
      continue;
    }
    any = true;
    lower(*slot, now);
    slot->state_.store(CallWatch::kArmed, std::memory_order_release);
  }
  return any;
}

MEMSHARD_DETAIL_INLINE void DeadlineWatch::lower(CallWatch& slot, std::int64_t now) noexcept {
  if (slot.deadline_ == 0) {
    // The call began within the last tick (the scan before missed it):
    // its deadline is taken to be a tick earlier than its budget from
    // now, so that it ends between budget - kTick and budget after it
    // began. The hot path reads no clock for this.
    slot.deadline_ =
        now + slot.budget_ns_ - std::chrono::duration_cast<std::chrono::nanoseconds>(kTick).count();
  }
  const std::int64_t left_ns = slot.deadline_ - now;
  const auto left = static_cast<std::int32_t>(
      std::clamp<std::int64_t>(left_ns / 1'000'000, 0, std::int64_t{1} << 30));
  if (left < slot.poll_ms_) {
    (void)memcached_behavior_set(slot.memc_, MEMCACHED_BEHAVIOR_POLL_TIMEOUT,
                                 static_cast<std::uint64_t>(left));
    slot.lowered_ = true;
    lowered_.fetch_add(1, std::memory_order_relaxed);
  }
  if (left < slot.connect_ms_) {
    (void)memcached_behavior_set(slot.memc_, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
                                 static_cast<std::uint64_t>(left));
    slot.lowered_ = true;
  }
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

/// WatchedCall: arms a client's slot for one call on `memc` that must end by
/// `deadline` (steady clock ns; `now` is the time read when it was set), and
/// disarms it when destroyed, putting the client's own timeouts back on the
/// handle if they were lowered. The first wait of the call is shortened here
/// already when the deadline is nearer than the client's timeouts. With no
/// watch (nullptr) it only does that.
class WatchedCall {
 public:
  WatchedCall(DeadlineWatch* watch, CallWatch& slot, memcached_st* memc, std::int64_t now,
              std::int64_t deadline, const ClientOptions& options) noexcept;

  /// The same for a call whose deadline is its budget from when it began,
  /// which the watch thread sets when it first sees the call (at most a tick
  /// late): nothing is lowered here, and no clock is read.
  WatchedCall(DeadlineWatch* watch, CallWatch& slot, memcached_st* memc,
              const ClientOptions& options) noexcept;

  WatchedCall(const WatchedCall&) = delete;
  auto operator=(const WatchedCall&) -> WatchedCall& = delete;
  WatchedCall(WatchedCall&&) = delete;
  auto operator=(WatchedCall&&) -> WatchedCall& = delete;

  ~WatchedCall() { end(); }

  /// end: disarms the slot now (before the handle may close) and puts the
  /// client's timeouts back if they were lowered. Idempotent.
  void end() noexcept;

  /// rearm: ends the call's watch and starts it again for a new `deadline`,
  /// on the same handle (a grace after the first deadline).
  void rearm(std::int64_t deadline) noexcept;

  /// passed: whether the deadline has come (within a tick: the last wait,
  /// lowered to the whole ms left, may end just before it), so that a
  /// timeout was the deadline's, not one wait's. After end() only.
  [[nodiscard]] auto passed() const noexcept -> bool;

 private:
  DeadlineWatch* watch_;
  CallWatch& slot_;
  bool ended_ = false;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE WatchedCall::WatchedCall(DeadlineWatch* watch, CallWatch& slot,
                                                memcached_st* memc, std::int64_t now,
                                                std::int64_t deadline,
                                                const ClientOptions& options) noexcept
    : watch_(watch), slot_(slot) {
  slot.memc_ = memc;
  slot.deadline_ = deadline;
  slot.poll_ms_ = static_cast<std::int32_t>(options.io_timeout.count());
  slot.connect_ms_ = static_cast<std::int32_t>(options.connect_timeout.count());
  slot.lowered_ = false;
  // At least 1 ms, so that an answer already there is still read.
  const auto left = static_cast<std::int32_t>(
      std::clamp<std::int64_t>((deadline - now) / 1'000'000, 1, std::int64_t{1} << 30));
  if (left < slot.poll_ms_) {
    (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT,
                                 static_cast<std::uint64_t>(left));
    slot.lowered_ = true;
  }
  if (left < slot.connect_ms_) {
    (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
                                 static_cast<std::uint64_t>(left));
    slot.lowered_ = true;
  }
  if (watch_ != nullptr) {
    slot.state_.store(CallWatch::kArmed, std::memory_order_seq_cst);
    watch_->armed();
  }
}

MEMSHARD_DETAIL_INLINE WatchedCall::WatchedCall(DeadlineWatch* watch, CallWatch& slot,
                                                memcached_st* memc,
                                                const ClientOptions& options) noexcept
    : watch_(watch), slot_(slot) {
  slot.memc_ = memc;
  slot.deadline_ = 0;
  if (slot.poll_ms_ == 0) [[unlikely]] {  // the client's timeouts, once
    slot.poll_ms_ = static_cast<std::int32_t>(options.io_timeout.count());
    slot.connect_ms_ = static_cast<std::int32_t>(options.connect_timeout.count());
  }
  slot.lowered_ = false;
  if (watch_ != nullptr) {
    slot.state_.store(CallWatch::kArmed, std::memory_order_seq_cst);
    watch_->armed();
  }
}

MEMSHARD_DETAIL_INLINE void WatchedCall::end() noexcept {
  if (ended_) {
    return;
  }
  ended_ = true;
  if (watch_ != nullptr) {
    std::uint32_t expected = CallWatch::kArmed;
    while (!slot_.state_.compare_exchange_weak(expected, CallWatch::kIdle,
                                               std::memory_order_acquire)) {
      expected = CallWatch::kArmed;  // kBusy: the thread is about to give it back
      std::this_thread::yield();
    }
  }
  if (slot_.lowered_) {
    (void)memcached_behavior_set(slot_.memc_, MEMCACHED_BEHAVIOR_POLL_TIMEOUT,
                                 static_cast<std::uint64_t>(slot_.poll_ms_));
    (void)memcached_behavior_set(slot_.memc_, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
                                 static_cast<std::uint64_t>(slot_.connect_ms_));
  }
}

MEMSHARD_DETAIL_INLINE void WatchedCall::rearm(std::int64_t deadline) noexcept {
  end();
  ended_ = false;
  slot_.deadline_ = deadline;
  slot_.lowered_ = false;
  if (watch_ != nullptr) {
    slot_.state_.store(CallWatch::kArmed, std::memory_order_seq_cst);
    watch_->armed();
  }
}

MEMSHARD_DETAIL_INLINE auto WatchedCall::passed() const noexcept -> bool {
  return slot_.deadline_ != 0 &&
         steady_now_ns() +
                 std::chrono::duration_cast<std::chrono::nanoseconds>(DeadlineWatch::kTick)
                     .count() >=
             slot_.deadline_;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

/// WatchSeat: a client's place in the process's DeadlineWatch: its slot,
/// enrolled for as long as the seat lives. Movable (the slot stays put).
/// Construction throws std::system_error when the watch thread cannot start.
class WatchSeat {
 public:
  /// A seat whose calls have `budget_ns` each (ClientOptions::call_budget()).
  explicit WatchSeat(std::int64_t budget_ns);
  WatchSeat(WatchSeat&&) noexcept = default;
  auto operator=(WatchSeat&& other) noexcept -> WatchSeat&;
  WatchSeat(const WatchSeat&) = delete;
  auto operator=(const WatchSeat&) -> WatchSeat& = delete;
  ~WatchSeat() { leave(); }

  /// call: arms the slot for one call on `memc` (see WatchedCall).
  [[nodiscard]] auto call(memcached_st* memc, std::int64_t now, std::int64_t deadline,
                          const ClientOptions& options) noexcept -> WatchedCall {
    return WatchedCall(watch_.get(), *slot_, memc, now, deadline, options);
  }

  /// call: arms the slot for one call on `memc` whose deadline is its
  /// budget from when it began (see WatchedCall).
  [[nodiscard]] auto call(memcached_st* memc, const ClientOptions& options) noexcept
      -> WatchedCall {
    return WatchedCall(watch_.get(), *slot_, memc, options);
  }

  /// watch: the process's watch.
  [[nodiscard]] auto watch() const noexcept -> const DeadlineWatch& { return *watch_; }

 private:
  void leave() noexcept;

  std::shared_ptr<DeadlineWatch> watch_;
  std::unique_ptr<CallWatch> slot_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE WatchSeat::WatchSeat(std::int64_t budget_ns)
    : watch_(DeadlineWatch::shared()), slot_(std::make_unique<CallWatch>()) {
  slot_->budget_ns_ = budget_ns;
  watch_->enroll(*slot_);
}

MEMSHARD_DETAIL_INLINE auto WatchSeat::operator=(WatchSeat&& other) noexcept -> WatchSeat& {
  if (this != &other) {
    leave();
    watch_ = std::move(other.watch_);
    slot_ = std::move(other.slot_);
  }
  return *this;
}

MEMSHARD_DETAIL_INLINE void WatchSeat::leave() noexcept {
  if (slot_) {
    watch_->withdraw(*slot_);
    slot_.reset();
  }
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_DEADLINE_WATCH_HPP_
