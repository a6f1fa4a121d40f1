// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_LEASE_KEEPER_HPP_
#define MEMSHARD_COORDINATION_LEASE_KEEPER_HPP_

// coordination/lease_keeper.hpp: LeaseKeeper, a process's presence in etcd: a key bound to a
// lease that a thread of the keeper's own keeps alive, and the fence, the moment from which the
// process must stop trusting what it knows because etcd may already have expired its lease.
//
// The fence is measured on this process's monotonic clock from the moment it SENT its last
// keep-alive that etcd answered (earlier than etcd received it), plus the TTL etcd granted,
// minus a margin for the two clocks' rates: etcd cannot expire the lease before it. So a
// process cut off from etcd, paused by SIGSTOP, or stalled past that moment knows it is fenced
// as soon as it looks, without asking anyone. A keep-alive is sent every third of the TTL (and
// every 200 ms while one fails); when etcd says the lease is gone, the keeper grants a new one
// and puts the key again (`renewals()` counts them: whoever trusts the key's contents must
// re-read what it serves first). Destroying the keeper revokes the lease at once, so the key
// goes without waiting for the TTL.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "memshard/coordination/etcd_client.hpp"
#include "memshard/coordination/store_status.hpp"
#include "memshard/coordination/store_url.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// LeaseOptions: the lease a LeaseKeeper holds.
struct LeaseOptions {
  /// ttl: the lease's time to live. A process that stops (crash, SIGSTOP, partition) holds its
  /// key this long at most; an etcd outage longer than this fences the process.
  std::chrono::seconds ttl{30};
  /// margin: how long before the lease could lapse the process counts itself fenced (clock-rate
  /// error, scheduling). 0: a tenth of the TTL, at least 200 ms.
  std::chrono::milliseconds margin{0};
  /// etcd: the bounds of each request (a keep-alive included).
  EtcdOptions etcd;
};

/// LeaseKeeper: see the file comment. Thread-safe.
class LeaseKeeper {
 public:
  using Clock = std::chrono::steady_clock;

  /// Throws ConfigError for bad endpoints or options (a TTL under 1 s or over a day, a margin
  /// not under the TTL).
  LeaseKeeper(std::vector<StoreEndpoint> endpoints, std::string key, LeaseOptions options = {})
      : options_(checked(options)),
        key_(std::move(key)),
        etcd_(std::move(endpoints), options_.etcd) {}
  LeaseKeeper(const LeaseKeeper&) = delete;
  auto operator=(const LeaseKeeper&) -> LeaseKeeper& = delete;
  LeaseKeeper(LeaseKeeper&&) = delete;
  auto operator=(LeaseKeeper&&) -> LeaseKeeper& = delete;
  /// Stops the keep-alives and revokes the lease (bounded by the request timeout).
  ~LeaseKeeper() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
      thread_.join();
    }
    const std::lock_guard<std::mutex> lock(etcd_mutex_);
    if (lease_ != 0) {
      (void)etcd_.revoke(lease_);
    }
  }

  /// start: grants the lease, puts `value` under the key bound to it, and starts the
  /// keep-alives. Once only; on failure nothing was kept (a lease granted is revoked).
  auto start(std::string value) -> StoreStatus {
    {
      const std::lock_guard<std::mutex> lock(etcd_mutex_);
      if (started_) {
        return {StoreErrc::kRejected, "lease keeper: started already"};
      }
      value_ = std::move(value);
      if (StoreStatus granted = register_key(); !granted) {
        return granted;
      }
      started_ = true;
    }
    thread_ = std::thread([this] { run(); });
    return {};
  }

  /// update: puts `value` under the key (bound to the current lease), and keeps it for a
  /// renewal. Not sent to a second endpoint once sent (see EtcdClient::put).
  auto update(std::string value) -> StoreStatus {
    const std::lock_guard<std::mutex> lock(etcd_mutex_);
    value_ = std::move(value);
    if (lease_ == 0) {
      return {StoreErrc::kRejected, "lease keeper: not started"};
    }
    StoreResult<std::int64_t> put = etcd_.put(key_, value_, lease_);
    return put ? StoreStatus() : put.status();
  }

  /// fenced: whether etcd may have expired the lease by now (or there never was one).
  [[nodiscard]] auto fenced() const noexcept -> bool { return Clock::now() >= fence_at(); }

  /// fence_at: the moment from which the process counts itself fenced.
  [[nodiscard]] auto fence_at() const noexcept -> Clock::time_point {
    return Clock::time_point(Clock::duration(fence_at_.load(std::memory_order_acquire)));
  }

  /// renewed_at: when the last keep-alive that etcd answered (or the grant) was sent.
  [[nodiscard]] auto renewed_at() const noexcept -> Clock::time_point {
    return Clock::time_point(Clock::duration(renewed_at_.load(std::memory_order_acquire)));
  }

  /// granted_ttl: the TTL etcd granted the current lease.
  [[nodiscard]] auto granted_ttl() const noexcept -> std::chrono::seconds {
    return std::chrono::seconds(granted_ttl_.load(std::memory_order_acquire));
  }

  /// margin: how long before the lease could lapse the fence falls.
  [[nodiscard]] auto margin() const noexcept -> std::chrono::milliseconds {
    return options_.margin;
  }

  /// lease: the current lease's id (0 before start()).
  [[nodiscard]] auto lease() const noexcept -> std::int64_t {
    return lease_.load(std::memory_order_acquire);
  }

  /// renewals: how many times the lease lapsed and the key was registered again under a new
  /// one.
  [[nodiscard]] auto renewals() const noexcept -> std::uint64_t { return renewals_.load(); }

 private:
  static auto checked(LeaseOptions options) -> LeaseOptions {
    if (options.ttl < std::chrono::seconds{1} || options.ttl > std::chrono::hours{24}) {
      detail::throw_config_error("lease: the TTL is 1 s to 24 h",
                                 std::to_string(options.ttl.count()) + " s");
    }
    if (options.margin.count() == 0) {
      options.margin = std::max<std::chrono::milliseconds>(
          std::chrono::duration_cast<std::chrono::milliseconds>(options.ttl) / 10,
          std::chrono::milliseconds{200});
    }
    if (options.margin.count() < 0 || options.margin >= options.ttl) {
      detail::throw_config_error("lease: the margin is under the TTL",
                                 std::to_string(options.margin.count()) + " ms");
    }
    return options;
  }

  // Grants a lease and puts the key under it; the caller holds etcd_mutex_.
  auto register_key() -> StoreStatus {
    const Clock::time_point sent = Clock::now();
    StoreResult<StoreLease> granted = etcd_.grant(options_.ttl);
    if (!granted) {
      return granted.status();
    }
    StoreResult<std::int64_t> put = etcd_.put(key_, value_, granted->id);
    if (!put) {
      (void)etcd_.revoke(granted->id);
      return put.status();
    }
    lease_.store(granted->id, std::memory_order_release);
    granted_ttl_.store(granted->ttl.count(), std::memory_order_release);
    renewed(sent, granted->ttl);
    return {};
  }

  void renewed(Clock::time_point sent, std::chrono::seconds ttl) noexcept {
    renewed_at_.store(sent.time_since_epoch().count(), std::memory_order_release);
    const Clock::time_point fence = sent + ttl - options_.margin;
    fence_at_.store(fence.time_since_epoch().count(), std::memory_order_release);
  }

  void run() {
    const auto period = std::chrono::duration_cast<std::chrono::milliseconds>(options_.ttl) / 3;
    std::chrono::milliseconds pause = period;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (wake_.wait_for(lock, pause, [this] { return stop_; })) {
          return;
        }
      }
      pause = renew() ? period : std::chrono::milliseconds{200};
    }
  }

  // One keep-alive (or a new lease once the old one is gone); whether it worked.
  auto renew() -> bool {
    const std::lock_guard<std::mutex> lock(etcd_mutex_);
    const Clock::time_point sent = Clock::now();
    StoreResult<std::chrono::seconds> kept = etcd_.keep_alive(lease_);
    if (!kept) {
      return false;  // the fence stands where the last answer put it
    }
    if (kept.value().count() > 0) {
      granted_ttl_.store(kept.value().count(), std::memory_order_release);
      renewed(sent, kept.value());
      return true;
    }
    // The lease lapsed: the key went with it. A new lease, the key again.
    if (!register_key()) {
      return false;
    }
    ++renewals_;
    return true;
  }

  const LeaseOptions options_;
  const std::string key_;
  std::mutex etcd_mutex_;  // etcd_, value_, started_ and the writes of lease_
  EtcdClient etcd_;
  std::string value_;
  bool started_ = false;
  // The current lease: written under etcd_mutex_, read by lease() without it.
  std::atomic<std::int64_t> lease_{0};
  std::atomic<std::int64_t> granted_ttl_{0};
  std::atomic<Clock::rep> renewed_at_{0};
  std::atomic<Clock::rep> fence_at_{0};  // the epoch of the steady clock: fenced until started
  std::atomic<std::uint64_t> renewals_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_LEASE_KEEPER_HPP_
