// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_CLIENT_POOL_HPP_
#define MEMSHARD_CLIENT_CLIENT_POOL_HPP_

// client/client_pool.hpp: ClientPool, a bounded set of clients of one family for a
// pool of threads, and ClientLease, the RAII handle a thread holds while it
// uses one of them. A ShardedClient is used by one thread at a time; a server
// with many worker threads leases a client per request instead of keeping one
// per thread: at most max_clients clients (and their connections) exist, idle
// ones are reused warm (last returned, first leased again), and a thread that
// finds none free waits up to a deadline and then gets Errc::kTimeout, never
// an exception. Every client of a pool is the prototype it was built from or
// a clone() of it: one family, one fleet, so a reconfigure() through any
// lease moves them all.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memshard/client/result.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// ClientPoolOptions: the bound of a ClientPool and its default wait.
struct ClientPoolOptions {
  /// The most clients the pool holds, the prototype included; at least 1.
  std::size_t max_clients = 16;
  /// How long acquire() without an argument waits for a free client; not
  /// negative (0: never wait, as try_acquire()).
  std::chrono::milliseconds acquire_timeout{1000};
};

/// validate_pool_options: throws ConfigError for a zero max_clients or a
/// negative acquire_timeout.
inline void validate_pool_options(const ClientPoolOptions& options) {
  if (options.max_clients == 0) {
    detail::throw_config_error("max_clients must be at least 1", "0");
  }
  if (options.acquire_timeout.count() < 0) {
    detail::throw_config_error("acquire_timeout must not be negative",
                               std::to_string(options.acquire_timeout.count()) + " ms");
  }
}

template <Locator L>
class ClientPool;

namespace detail {

/// ClientPoolState: what a ClientPool shares with its leases (through a
/// shared_ptr), so that it lives until the pool and its last lease are gone.
/// Every member function is thread-safe.
template <Locator L>
class ClientPoolState {
 public:
  /// Slot: one client of the pool, at a stable address, and its link in the
  /// idle list (intrusive, so that giving a client back never allocates).
  struct Slot {
    explicit Slot(ShardedClient<L>&& made) noexcept : client(std::move(made)) {}
    ShardedClient<L> client;
    Slot* next_idle = nullptr;
  };

  ClientPoolState(ShardedClient<L> prototype, std::size_t max_clients) : max_clients_(max_clients) {
    if (max_clients > 1) {
      seed_.emplace(prototype.clone());
    }
    slots_.push_back(std::make_unique<Slot>(std::move(prototype)));
    push_idle(slots_.back().get());
    made_.store(1, std::memory_order_relaxed);
  }

  ClientPoolState(const ClientPoolState&) = delete;
  auto operator=(const ClientPoolState&) -> ClientPoolState& = delete;
  ClientPoolState(ClientPoolState&&) = delete;
  auto operator=(ClientPoolState&&) -> ClientPoolState& = delete;
  ~ClientPoolState() = default;

  /// take: an idle client, else a new clone while fewer than max_clients
  /// exist, else waits up to `timeout` (none when it is not positive) for
  /// either. nullptr when the time ran out. A clone that throws frees its
  /// place (and wakes a waiter to use it) before the exception leaves.
  [[nodiscard]] auto take(std::chrono::milliseconds timeout) -> Slot* {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!available()) {
      if (timeout.count() <= 0) {
        return nullptr;
      }
      waiting_.fetch_add(1, std::memory_order_relaxed);
      const bool ready = wait(lock, timeout);
      waiting_.fetch_sub(1, std::memory_order_relaxed);
      if (!ready) {
        return nullptr;
      }
    }
    if (Slot* slot = idle_head_; slot != nullptr) {
      idle_head_ = slot->next_idle;
      slot->next_idle = nullptr;
      idle_.fetch_sub(1, std::memory_order_relaxed);
      return slot;
    }
    made_.fetch_add(1, std::memory_order_relaxed);  // this place is ours now
    lock.unlock();
    try {
      return make_slot();
    } catch (...) {
      lock.lock();
      made_.fetch_sub(1, std::memory_order_relaxed);
      lock.unlock();
      ready_.notify_one();
      throw;
    }
  }

  /// give_back: returns a client taken with take() and wakes one waiter.
  void give_back(Slot* slot) noexcept {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      push_idle(slot);
    }
    ready_.notify_one();
  }

  [[nodiscard]] auto size() const noexcept -> std::size_t {
    return made_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] auto idle() const noexcept -> std::size_t {
    return idle_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] auto waiting() const noexcept -> std::size_t {
    return waiting_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] auto max_clients() const noexcept -> std::size_t { return max_clients_; }

 private:
  // Whether take() can go on now (mutex_ held).
  [[nodiscard]] auto available() const noexcept -> bool {
    return idle_head_ != nullptr || made_.load(std::memory_order_relaxed) < max_clients_;
  }

  // Waits until available() or `timeout` from now (mutex_ held); answers
  // available(). A timeout too long for the steady clock waits without end.
  auto wait(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout) -> bool {
    const auto now = std::chrono::steady_clock::now();
    const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::time_point::max() - now);
    const auto ready = [this] { return available(); };
    if (timeout >= room) {
      ready_.wait(lock, ready);
      return true;
    }
    return ready_.wait_until(lock, now + timeout, ready);
  }

  // A new client of the family, cloned from the seed (one clone at a time:
  // the seed is a client like any other), registered in slots_.
  auto make_slot() -> Slot* {
    std::unique_ptr<Slot> slot;
    {
      const std::lock_guard<std::mutex> lock(seed_mutex_);
      slot = std::make_unique<Slot>(seed_->clone());
    }
    Slot* made = slot.get();
    const std::lock_guard<std::mutex> lock(mutex_);
    slots_.push_back(std::move(slot));
    return made;
  }

  // Pushes `slot` on the idle list (mutex_ held).
  void push_idle(Slot* slot) noexcept {
    slot->next_idle = idle_head_;
    idle_head_ = slot;
    idle_.fetch_add(1, std::memory_order_relaxed);
  }

  const std::size_t max_clients_;
  std::mutex mutex_;                          // guards slots_, idle_head_ and the counts' changes
  std::condition_variable ready_;             // a client was given back, or a place freed
  std::vector<std::unique_ptr<Slot>> slots_;  // every client made
  Slot* idle_head_ = nullptr;                 // the idle clients, last returned first
  std::atomic<std::size_t> made_{0};          // clients made or being made
  std::atomic<std::size_t> idle_{0};          // clients on the idle list
  std::atomic<std::size_t> waiting_{0};       // threads blocked in take()
  std::mutex seed_mutex_;                     // one clone() of seed_ at a time
  // The source of clones, never leased: clone() must not run on a client
  // another thread is using. No connections (it never makes a call); none
  // when max_clients is 1.
  std::optional<ShardedClient<L>> seed_;
};

}  // namespace detail

/// ClientLease: one client of a ClientPool, leased to its holder until the
/// lease ends (destroyed, reset() or assigned over), which gives the client
/// back to the pool and wakes one thread waiting in acquire(). Move-only; a
/// moved-from or reset lease is empty (its operator bool is false).
///
/// The lease holds the pool's shared state through a shared_ptr: it may
/// outlive the ClientPool object that made it, and its client stays usable
/// until the lease ends (the last lease of a destroyed pool then destroys the
/// pool's clients).
///
/// Threads: like the ShardedClient it gives access to, one lease is used by
/// one thread at a time; it may be moved to, and end on, another thread.
/// Every operation of a lease is O(1) and noexcept.
template <Locator L>
class ClientLease {
 public:
  using Client = ShardedClient<L>;

  /// An empty lease.
  ClientLease() noexcept = default;
  ClientLease(ClientLease&& other) noexcept
      : state_(std::move(other.state_)), slot_(std::exchange(other.slot_, nullptr)) {}
  auto operator=(ClientLease&& other) noexcept -> ClientLease& {
    if (this != &other) {
      reset();
      state_ = std::move(other.state_);
      slot_ = std::exchange(other.slot_, nullptr);
    }
    return *this;
  }
  ClientLease(const ClientLease&) = delete;
  auto operator=(const ClientLease&) -> ClientLease& = delete;
  ~ClientLease() { reset(); }

  /// operator->, operator*: the leased client (the lease must not be empty).
  [[nodiscard]] auto operator->() const noexcept -> Client* { return &slot_->client; }
  [[nodiscard]] auto operator*() const noexcept -> Client& { return slot_->client; }
  /// get: the leased client, or nullptr for an empty lease.
  [[nodiscard]] auto get() const noexcept -> Client* {
    return slot_ != nullptr ? &slot_->client : nullptr;
  }
  /// operator bool: whether the lease holds a client.
  explicit operator bool() const noexcept { return slot_ != nullptr; }

  /// reset: ends the lease now (the client goes back to the pool); nothing
  /// for an empty lease.
  void reset() noexcept {
    if (slot_ != nullptr) {
      state_->give_back(std::exchange(slot_, nullptr));
    }
    state_.reset();
  }

 private:
  friend class ClientPool<L>;
  using State = detail::ClientPoolState<L>;

  ClientLease(std::shared_ptr<State> state, typename State::Slot* slot) noexcept
      : state_(std::move(state)), slot_(slot) {}

  std::shared_ptr<State> state_;
  typename State::Slot* slot_ = nullptr;
};

/// ClientPool: at most max_clients clients of one family, leased to threads
/// one at a time (ClientLease). It starts with the prototype and clones it on
/// demand, when every client made is leased and the bound allows one more; an
/// idle client is always leased before a new one is made, the last returned
/// first (its connections are the warmest). All its clients share the
/// prototype's fleet and options: a write through one lease is read through
/// any other, and a reconfigure() through one is seen by every client of the
/// pool from its next call. A client keeps its connections while idle.
///
/// acquire() waits (on a condition variable, up to its deadline) for a lease
/// to end when every client is leased and the bound is reached, then fails
/// with Errc::kTimeout: a full pool is an outcome, not an exception. Waiters
/// are not served in arrival order: a returned client goes to whichever
/// thread takes the pool's lock first.
///
/// Threads: every member function may be called from any number of threads
/// at once. The pool object itself must outlive calls on it (as any object),
/// but its leases may outlive it (see ClientLease). Move-only; a moved-from
/// pool may only be destroyed or assigned to.
///
/// Complexity: acquire() and try_acquire() are O(1) when they lease an idle
/// client; making one costs a clone() (O(servers), no I/O: a clone opens its
/// connections on first use). A lease's end is O(1) and never allocates.
///
/// Exception guarantee: the constructor throws ConfigError for invalid
/// options. acquire() and try_acquire() throw only what clone() or allocation
/// throws (std::bad_alloc), and then leave the pool as it was (strong
/// guarantee). The accessors and lease operations are noexcept.
///
/// **Example**:
///   memshard::ClientPool pool(memshard::make_client("libmemcached-ketama-weighted", servers),
///                             {.max_clients = 8});
///   // On any worker thread:
///   auto lease = pool.acquire(std::chrono::milliseconds(50));
///   if (!lease) return fallback(lease.status());       // Errc::kTimeout: all 8 in use
///   auto user = (*lease)->get("user:42");               // this thread's client, for now
///   // The client goes back to the pool when the lease ends.
template <Locator L>
class ClientPool {
 public:
  using Client = ShardedClient<L>;
  using Lease = ClientLease<L>;

  /// Takes `prototype` as the pool's first client (idle, leased first). The
  /// others are cloned from one more clone made here and never leased (none
  /// when max_clients is 1): it makes no calls, so it opens no connections.
  /// Throws ConfigError for invalid options (validate_pool_options).
  explicit ClientPool(Client prototype, ClientPoolOptions options = {})
      : options_(checked(options)),
        state_(std::make_shared<State>(std::move(prototype), options.max_clients)) {}

  ClientPool(ClientPool&&) noexcept = default;
  auto operator=(ClientPool&&) noexcept -> ClientPool& = default;
  ClientPool(const ClientPool&) = delete;
  auto operator=(const ClientPool&) -> ClientPool& = delete;
  ~ClientPool() = default;

  /// acquire: a lease on an idle client, or on a new one while the bound
  /// allows, else waits up to `timeout` for a lease to end. Fails with
  /// Errc::kTimeout (server Status::kNoServer, nothing sent) when the time
  /// runs out; a timeout of 0 or less never waits.
  ///
  /// **Example**:
  ///   auto leased = pool.acquire(std::chrono::milliseconds(20));
  ///   if (leased) {
  ///     memshard::ClientLease<memshard::AnyLocator> lease = std::move(leased).value();
  ///     lease->set("k", "v");
  ///   }
  [[nodiscard]] auto acquire(std::chrono::milliseconds timeout) -> Result<Lease> {
    if (typename State::Slot* slot = state_->take(timeout); slot != nullptr) {
      return Result<Lease>(Lease(state_, slot), Status());
    }
    const std::chrono::milliseconds waited =
        timeout.count() > 0 ? timeout : std::chrono::milliseconds::zero();
    return Result<Lease>(Status(Errc::kTimeout, MEMCACHED_TIMEOUT, Status::kNoServer,
                                "client pool: no client free within " +
                                    std::to_string(waited.count()) + " ms (all " +
                                    std::to_string(state_->max_clients()) + " leased)"));
  }

  /// acquire: the same, waiting up to ClientPoolOptions::acquire_timeout.
  [[nodiscard]] auto acquire() -> Result<Lease> { return acquire(options_.acquire_timeout); }

  /// try_acquire: acquire() without waiting for another thread's lease to
  /// end: Errc::kTimeout at once when every client is leased and the bound
  /// is reached. (It may make a client, and takes the pool's lock briefly.)
  [[nodiscard]] auto try_acquire() -> Result<Lease> {
    return acquire(std::chrono::milliseconds(0));
  }

  /// size: the clients made so far (or being made), the prototype included;
  /// at most max_clients().
  [[nodiscard]] auto size() const noexcept -> std::size_t { return state_->size(); }
  /// idle: the clients made and not leased now.
  [[nodiscard]] auto idle() const noexcept -> std::size_t { return state_->idle(); }
  /// waiting: the threads blocked in acquire() now.
  [[nodiscard]] auto waiting() const noexcept -> std::size_t { return state_->waiting(); }
  /// max_clients: the bound (ClientPoolOptions::max_clients).
  [[nodiscard]] auto max_clients() const noexcept -> std::size_t { return state_->max_clients(); }
  /// options: the options in force.
  [[nodiscard]] auto options() const noexcept -> const ClientPoolOptions& { return options_; }

 private:
  using State = detail::ClientPoolState<L>;

  [[nodiscard]] static auto checked(const ClientPoolOptions& options) -> const ClientPoolOptions& {
    validate_pool_options(options);
    return options;
  }

  ClientPoolOptions options_;
  std::shared_ptr<State> state_;  // shared with every lease
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_CLIENT_POOL_HPP_
