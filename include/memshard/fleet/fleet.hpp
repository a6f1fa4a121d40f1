// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_FLEET_FLEET_HPP_
#define MEMSHARD_FLEET_FLEET_HPP_

// fleet/fleet.hpp: Fleet, the membership a client and all its clones share:
// an immutable FleetSnapshot (the server list, its locator and the servers'
// health) that reconfigure() replaces as a whole.
//
// Readers never lock: a client keeps the snapshot it last used and compares
// one atomic generation number at the start of each operation; only when it
// changed does it take the new snapshot (under the fleet's mutex, once per
// change). An operation runs entirely on the snapshot it started with.
//
// A migration (begin_migration) publishes a snapshot with two placements: the
// new one, which places every key, and the old one, kept to read the keys
// whose owner changed (migration/migration.hpp); its end publishes a snapshot
// with one of them again. A fleet's member (serve()) publishes the phases of
// its record's changes the same way: two placements, the second one either
// read through or only invalidated.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/detail/throw.hpp"
#include "memshard/fleet/call_tracker.hpp"
#include "memshard/fleet/fence_gate.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/migration/migration.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/placement/key_prefix.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/server.hpp"
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

/// FleetSnapshot: one published state of a fleet: its members, the locator
/// that places keys on the first `placed` of them (`locate(key)` indexes
/// `members.servers`), the old placement while a migration runs, and the
/// generation that published it. Keys are sent keys; the placement hashes
/// them without their first `placement_skip` bytes (KeyPrefix). Without a migration every member is
/// placed. Immutable, so any number of threads read it.
template <Locator L>
struct FleetSnapshot {
  Membership members;
  std::shared_ptr<const L> locator;
  std::size_t placed = 0;  ///< members [0, placed) are the placement's servers
  std::shared_ptr<const MigrationPlacement<L>> migration;  ///< null without one
  std::uint64_t generation = 0;
  std::size_t placement_skip = 0;  ///< KeyPrefix::placement_skip() of the family
  /// The gate every call checks while the family follows a fleet's record (Fleet::serve), null
  /// otherwise (fleet/fence_gate.hpp).
  detail::FenceGate* fence = nullptr;

  /// placement_key: the part of the sent key `key` that the placement hashes.
  [[nodiscard]] auto placement_key(std::string_view key) const noexcept -> std::string_view {
    return detail::placement_part(key, placement_skip);
  }
  /// locate: the member index of the sent key `key` (a placed server).
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return locator->locate(placement_key(key));
  }

  /// servers: the placement's server list (the retiring servers of a
  /// migration left out).
  [[nodiscard]] auto servers() const -> std::vector<Server> {
    return {members.servers.begin(), members.servers.begin() + static_cast<std::ptrdiff_t>(placed)};
  }
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
  /// locators of later server lists (build). Every snapshot places a key
  /// without its first `placement_skip` bytes (KeyPrefix::placement_skip).
  /// Throws ConfigError.
  Fleet(std::vector<Server> servers, std::shared_ptr<const L> locator, LocatorFactory factory,
        std::size_t placement_skip = 0)
      : factory_(std::move(factory)), placement_skip_(placement_skip) {
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

  /// settled_generation: generation() read in the total order of the seats' marks (seq_cst),
  /// for a call that just marked its seat (fleet/call_tracker.hpp).
  [[nodiscard]] auto settled_generation() const noexcept -> std::uint64_t {
    return generation_.load(std::memory_order_seq_cst);
  }

  /// gate: the fence of a family that follows a fleet's record (fleet/fence_gate.hpp): closed
  /// until the member opens it; checked by the calls only once serve() was called.
  [[nodiscard]] auto gate() noexcept -> detail::FenceGate& { return gate_; }

  /// calls: which generation each client of the family is calling on (fleet/call_tracker.hpp).
  [[nodiscard]] auto calls() noexcept -> detail::CallTracker& { return calls_; }

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
  /// Throws ConfigError while a migration runs (end it first).
  void publish(std::vector<Server> servers, std::shared_ptr<const L> locator) {
    check(servers, locator);
    auto next = std::make_shared<FleetSnapshot<L>>();
    next->placed = servers.size();
    next->members.health = registry_.acquire(servers);
    next->members.servers = std::move(servers);
    next->locator = std::move(locator);
    const std::lock_guard<std::mutex> lock(mutex_);
    check_unmanaged();
    if (current_ && current_->migration) {
      detail::throw_config_error("a migration is running",
                                 "commit_migration() or abort_migration() first");
    }
    install(std::move(next));
  }

  /// begin_migration: publishes `servers` with `locator` as the placement,
  /// keeping the current one as the old placement of a migration. Throws
  /// ConfigError (and changes nothing) when a migration already runs or the
  /// list is invalid.
  void begin_migration(std::vector<Server> servers, std::shared_ptr<const L> locator,
                       const MigrationOptions& options) {
    check(servers, locator);
    validate_migration_options(options);
    const std::lock_guard<std::mutex> lock(mutex_);
    check_unmanaged();
    if (current_->migration) {
      detail::throw_config_error("a migration is already running",
                                 "commit_migration() or abort_migration() first");
    }
    check_aborted_copies(servers, options);
    install(paired(std::move(servers), std::move(locator), current_->servers(), current_->locator,
                   options, true, true));
  }

  /// SecondPlacement: the other placement of a fleet's change, served beside the one that places
  /// keys (serve()).
  struct SecondPlacement {
    std::vector<Server> servers;
    std::shared_ptr<const L> locator;
    /// A migration window (misses read it and copy forward), or only invalidated by every write.
    bool read_through = false;
    MigrationOptions options;  ///< the window's (read_through)
    /// Whether a delete reaches it first (MigrationPlacement::deleted_first): where a window
    /// copies from. False for the next placement of a change (phase 1).
    bool deleted_first = true;
  };

  /// serve: publishes `servers` placed by `locator`, beside `second` when given: a phase of a
  /// fleet's change (coordination/fleet_phases.hpp), whatever the fleet served before. A window
  /// that was open ends (its copies in flight revoke themselves; its counters become the last
  /// migration's). A fleet served so is managed from then on: its record decides, so publish(),
  /// begin_migration() and end_migration() throw ConfigError. Throws ConfigError for an invalid
  /// list, locator or options, and changes nothing.
  void serve(std::vector<Server> servers, std::shared_ptr<const L> locator,
             std::optional<SecondPlacement> second) {
    check(servers, locator);
    if (second) {
      check(second->servers, second->locator);
      validate_migration_options(second->options);
    }
    std::shared_ptr<FleetSnapshot<L>> next;
    if (second) {
      next = paired(std::move(servers), std::move(locator), std::move(second->servers),
                    std::move(second->locator), second->options, second->read_through,
                    second->deleted_first);
    } else {
      next = std::make_shared<FleetSnapshot<L>>();
      next->placed = servers.size();
      next->members.health = registry_.acquire(servers);
      next->members.servers = std::move(servers);
      next->locator = std::move(locator);
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    managed_ = true;
    if (current_->migration) {
      current_->migration->state->end();
      if (current_->migration->read_through) {
        last_state_ = current_->migration->state;
      }
    }
    install(std::move(next));
  }

  /// managed: whether serve() drives this fleet.
  [[nodiscard]] auto managed() const -> bool {
    const std::lock_guard<std::mutex> lock(mutex_);
    return managed_;
  }

  /// end_migration: publishes the new placement alone (`commit`) or the old
  /// one again. Answers whether a migration was running.
  auto end_migration(bool commit) -> bool {
    const std::lock_guard<std::mutex> lock(mutex_);
    check_unmanaged();
    if (!current_->migration) {
      return false;
    }
    const MigrationPlacement<L>& migration = *current_->migration;
    // Copies in flight revoke themselves from here on (MigrationState::end).
    migration.state->end();
    last_state_ = migration.state;
    if (!commit) {
      for (std::size_t m = 0; m < current_->members.size(); ++m) {
        if (migration.state->received_copies(m)) {
          aborted_copies_.insert(current_->members.servers[m].endpoint());
        }
      }
    }
    auto next = std::make_shared<FleetSnapshot<L>>();
    std::vector<Server> servers = commit ? current_->servers() : migration.servers;
    next->placed = servers.size();
    next->members.health = registry_.acquire(servers);
    next->members.servers = std::move(servers);
    next->locator = commit ? current_->locator : migration.locator;
    install(std::move(next));
    return true;
  }

  /// last_migration_stats: the counters of the last migration that ended
  /// (`active` false), all zero when none has.
  [[nodiscard]] auto last_migration_stats() const -> MigrationStats {
    const std::lock_guard<std::mutex> lock(mutex_);
    return last_state_ ? last_state_->stats() : MigrationStats{};
  }

 private:
  // The snapshot that places keys on `servers` by `locator`, beside `second_servers` placed by
  // `second` (mapped onto the same members: `servers`, then the servers only the second list has).
  auto paired(std::vector<Server> servers, std::shared_ptr<const L> locator,
              std::vector<Server> second_servers, std::shared_ptr<const L> second,
              const MigrationOptions& options, bool read_through, bool deleted_first)
      -> std::shared_ptr<FleetSnapshot<L>> {
    auto next = std::make_shared<FleetSnapshot<L>>();
    auto placement = std::make_shared<MigrationPlacement<L>>();
    next->placed = servers.size();
    std::vector<Server> members = std::move(servers);
    for (const Server& server : second_servers) {
      std::size_t m = 0;
      while (m < members.size() &&
             (members[m].host != server.host || members[m].port != server.port)) {
        ++m;
      }
      if (m == members.size()) {
        members.push_back(server);  // a server only the second placement has
      }
      placement->member_of.push_back(m);
    }
    placement->locator = std::move(second);
    placement->placement_skip = placement_skip_;
    placement->servers = std::move(second_servers);
    placement->options = options;
    placement->read_through = read_through;
    placement->deleted_first = deleted_first;
    placement->state = std::make_shared<detail::MigrationState>(members.size());
    next->members.health = registry_.acquire(members);
    next->members.servers = std::move(members);
    next->locator = std::move(locator);
    next->migration = std::move(placement);
    return next;
  }

  // The caller holds the mutex.
  void check_unmanaged() const {
    if (managed_) {
      detail::throw_config_error("this client follows a fleet's record",
                                 "change the fleet with memshard-fleet or FleetAdmin");
    }
  }

  // A new window must not place keys on a server that an aborted window
  // copied values to: no writer invalidated those copies after the abort,
  // so they would be served as fresh hits. The caller who flushed them says
  // so (MigrationOptions::aborted_copies_flushed). The caller holds the mutex.
  void check_aborted_copies(std::span<const Server> servers, const MigrationOptions& options) {
    if (aborted_copies_.empty()) {
      return;
    }
    if (options.aborted_copies_flushed) {
      for (const Server& server : servers) {
        aborted_copies_.erase(server.endpoint());
      }
      return;
    }
    std::string holding;
    for (const Server& server : servers) {
      if (aborted_copies_.contains(server.endpoint())) {
        holding.append(holding.empty() ? "" : ", ").append(server.endpoint());
      }
    }
    if (!holding.empty()) {
      detail::throw_config_error(
          "an aborted migration copied values to these servers, which may now be stale (flush "
          "them, then set MigrationOptions::aborted_copies_flushed)",
          holding);
    }
  }

  static void check(std::span<const Server> servers, const std::shared_ptr<const L>& locator) {
    validate_servers(servers);
    if (!locator) {
      detail::throw_config_error("locator is null", std::to_string(servers.size()) + " servers");
    }
    if (locator->size() != servers.size()) {
      detail::throw_config_error("locator does not match the server list",
                                 std::to_string(servers.size()) + " servers");
    }
  }

  // Publishes `next`; the caller holds the mutex.
  void install(std::shared_ptr<FleetSnapshot<L>> next) {
    next->placement_skip = placement_skip_;
    next->fence = managed_ ? &gate_ : nullptr;
    next->generation = generation_.load(std::memory_order_relaxed) + 1;
    current_ = std::move(next);
    // seq_cst: ordered against the seats' marks (fleet/call_tracker.hpp).
    generation_.store(current_->generation, std::memory_order_seq_cst);
  }

  LocatorFactory factory_;
  std::size_t placement_skip_ = 0;
  detail::HealthRegistry registry_;
  mutable std::mutex mutex_;
  std::shared_ptr<const FleetSnapshot<L>> current_;
  std::shared_ptr<const detail::MigrationState> last_state_;  // of the last window that ended
  std::set<std::string> aborted_copies_;  // endpoints an aborted window copied to
  bool managed_ = false;                  // serve() drives it
  std::atomic<std::uint64_t> generation_{0};
  detail::CallTracker calls_;
  detail::FenceGate gate_;
};

namespace detail {

/// FleetOf: the Fleet a client family shares, for the part that makes the family follow a fleet's
/// record (coordination/fleet_member.hpp). A friend of ShardedClient; nothing else reaches it.
template <Locator L>
struct FleetOf {
  template <class Client>
  [[nodiscard]] static auto of(Client& client) noexcept -> Fleet<L>& {
    return *client.fleet_;
  }
  /// remove_unfenced: deletes the sent key `key` by the current phase's rules, whatever the
  /// gate says: the keys of the writes a fenced family refused, before it serves again.
  template <class Client>
  static auto remove_unfenced(Client& client, std::string_view key) {
    const CallMark mark = client.enter();
    client.core_.start_call();
    struct Unfenced {
      bool& flag;
      explicit Unfenced(bool& on) noexcept : flag(on) { flag = true; }
      Unfenced(const Unfenced&) = delete;
      auto operator=(const Unfenced&) -> Unfenced& = delete;
      ~Unfenced() { flag = false; }
    } const unfenced{client.unfenced_};
    return client.remove_sent(key);
  }
};

}  // namespace detail

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_FLEET_FLEET_HPP_
