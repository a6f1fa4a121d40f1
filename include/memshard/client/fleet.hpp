// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_FLEET_HPP_
#define MEMSHARD_CLIENT_FLEET_HPP_

// client/fleet.hpp: Fleet, the membership a client and all its clones share:
// an immutable FleetSnapshot (the server list, its locator and the servers'
// health) that reconfigure() replaces as a whole.
//
// Readers never lock: a client keeps the snapshot it last used and compares
// one atomic generation number at the start of each operation; only when it
// changed does it take the new snapshot (under the fleet's mutex, once per
// change). An operation runs entirely on the snapshot it started with.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "memshard/client/server_health.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/locator.hpp"
#include "memshard/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Membership: a server list and each server's health, in the same order.
/// Immutable once published.
struct Membership {
  std::vector<Server> servers;
  std::vector<std::shared_ptr<detail::ServerHealth>> health;

  /// size: the number of servers.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return servers.size(); }
};

/// FleetSnapshot: one published state of a fleet: its members and the locator
/// built for them (`locator->locate(key)` indexes `members.servers`), and the
/// generation that published it. Immutable, so any number of threads read it.
/// (A migration adds a second placement here, over the same members.)
template <Locator L>
struct FleetSnapshot {
  Membership members;
  std::shared_ptr<const L> locator;
  std::uint64_t generation = 0;
};

/// Fleet: the shared membership of a family of clients (a client and its
/// clones). publish() replaces the snapshot; every client of the family moves
/// to it at the start of its next operation, while calls already running
/// finish on the snapshot they started with. The health of servers that stay
/// is kept (HealthRegistry). Thread-safe.
template <Locator L>
class Fleet {
 public:
  /// LocatorFactory: builds the locator for a server list.
  using LocatorFactory = std::function<std::shared_ptr<const L>(std::span<const Server>)>;

  /// Publishes `servers` with `locator`; `factory` (may be empty) builds the
  /// locators of later server lists (build). Throws ConfigError.
  Fleet(std::vector<Server> servers, std::shared_ptr<const L> locator, LocatorFactory factory)
      : factory_(std::move(factory)) {
    publish(std::move(servers), std::move(locator));
  }

  Fleet(const Fleet&) = delete;
  auto operator=(const Fleet&) -> Fleet& = delete;
  Fleet(Fleet&&) = delete;
  auto operator=(Fleet&&) -> Fleet& = delete;
  ~Fleet() = default;

  /// generation: the generation of the current snapshot; one atomic load.
  [[nodiscard]] auto generation() const noexcept -> std::uint64_t {
    return generation_.load(std::memory_order_acquire);
  }

  /// current: the current snapshot.
  [[nodiscard]] auto current() const -> std::shared_ptr<const FleetSnapshot<L>> {
    const std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }

  /// has_factory: whether build() can make a locator.
  [[nodiscard]] auto has_factory() const noexcept -> bool { return static_cast<bool>(factory_); }

  /// build: the locator the factory makes for `servers`. Throws ConfigError
  /// when there is no factory.
  [[nodiscard]] auto build(std::span<const Server> servers) const -> std::shared_ptr<const L> {
    if (!factory_) {
      detail::throw_config_error("reconfigure needs a locator factory",
                                 "construct the client with one, or pass the new locator");
    }
    return factory_(servers);
  }

  /// publish: moves the fleet to `servers` with `locator`, which must have
  /// been built for them. Throws ConfigError and leaves the fleet as it was.
  void publish(std::vector<Server> servers, std::shared_ptr<const L> locator) {
    validate_servers(servers);
    if (!locator) {
      detail::throw_config_error("locator is null", std::to_string(servers.size()) + " servers");
    }
    if (locator->size() != servers.size()) {
      detail::throw_config_error("locator does not match the server list",
                                 std::to_string(servers.size()) + " servers");
    }
    auto next = std::make_shared<FleetSnapshot<L>>();
    next->members.health = registry_.acquire(servers);
    next->members.servers = std::move(servers);
    next->locator = std::move(locator);
    const std::lock_guard<std::mutex> lock(mutex_);
    next->generation = generation_.load(std::memory_order_relaxed) + 1;
    current_ = std::move(next);
    generation_.store(current_->generation, std::memory_order_release);
  }

 private:
  LocatorFactory factory_;
  detail::HealthRegistry registry_;
  mutable std::mutex mutex_;
  std::shared_ptr<const FleetSnapshot<L>> current_;
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_FLEET_HPP_
