// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_FLEET_MEMBER_HPP_
#define MEMSHARD_COORDINATION_FLEET_MEMBER_HPP_

// coordination/fleet_member.hpp: join_fleet() and FleetMember, a process's part in a fleet whose
// record lives in etcd (coordination/fleet_admin.hpp has the keys). Joining reads the record and
// builds a client on it before the first call; from then on the member follows the record:
//
//   - a thread watches the record (EtcdWatch) and reads it again every third of the lease TTL
//     (a watch that missed something is caught up by the next read);
//   - each newer record is served by the whole client family at the start of its next call
//     (Fleet::serve: the phase's placement, and beside it the other placement of the change,
//     read through in the window or only invalidated); calls already running end on the phase
//     they began on;
//   - once every call that began before it has ended, the member acknowledges: it writes the
//     record's epoch under its key, which is bound to a lease it keeps alive (LeaseKeeper). The
//     coordinator moves on only when every live member acknowledged (fleet_phases.hpp), so two
//     members never serve phases further apart than one step.
//
// Destroying the member stops the thread and revokes the lease: the fleet stops waiting for it at
// once. A member that cannot renew its lease is fenced by its own clock (LeaseKeeper::fenced()).

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "memshard/client/client_options.hpp"
#include "memshard/client/make_client.hpp"
#include "memshard/coordination/etcd_client.hpp"
#include "memshard/coordination/etcd_watch.hpp"
#include "memshard/coordination/fleet_admin.hpp"
#include "memshard/coordination/fleet_record.hpp"
#include "memshard/coordination/lease_keeper.hpp"
#include "memshard/coordination/store_status.hpp"
#include "memshard/coordination/store_url.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/fleet/fleet.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// FleetOptions: how a process takes part in a fleet.
struct FleetOptions {
  /// lease_ttl: the TTL of the lease the member's key is bound to. The trade-off: a member that
  /// crashed or hung holds a change back at most this long; an etcd outage longer than this
  /// fences every member (their reads miss, their stores are refused). Keep it well over the time
  /// etcd needs to elect a leader (seconds).
  std::chrono::seconds lease_ttl{30};
  /// join_timeout: how long join_fleet() waits for etcd before it gives up (ConfigError).
  std::chrono::milliseconds join_timeout{5'000};
  /// member_id: the member's name under the fleet's members; empty: host-pid-random.
  std::string member_id;
  /// etcd: the bounds of each request the member sends (the join's are within join_timeout).
  EtcdOptions etcd;
};

namespace detail {

/// serve_record: makes the family of `fleet` serve `record`'s phase
/// (coordination/fleet_phases.hpp): steady on its placement A; a change's phase 1 on A with B only
/// invalidated; 2 the window on B read through A; 3 on B with A only invalidated; 4 on B alone.
/// Throws ConfigError for a placement that cannot be built (which validate_fleet_record() refuses
/// first).
inline void serve_record(Fleet<AnyLocator>& fleet, const FleetRecord& record) {
  using Second = Fleet<AnyLocator>::SecondPlacement;
  const FleetPlacement& now = record.placement;
  if (!record.change || record.change->phase == FleetPhase::kSteady) {
    fleet.serve(now.servers, placement_locator(now), std::nullopt);
    return;
  }
  const FleetChange& change = *record.change;
  const FleetPlacement& next = change.next;
  switch (change.phase) {
    case FleetPhase::kPrepare:
      fleet.serve(now.servers, placement_locator(now),
                  Second{next.servers, placement_locator(next), false, {}, false});
      return;
    case FleetPhase::kReadThrough:
    case FleetPhase::kSettle: {
      // The window, then beside its last readers (their kStrict placeholders read as misses).
      MigrationOptions options;
      options.consistency = change.consistency;
      // Phase-1 readers, beside the window, still read A: a copy forward that deleted A's copy
      // would turn their hits into misses. The commit's sweep deletes A's copies instead.
      options.move_on_copy = MoveOnCopy::kNever;
      fleet.serve(next.servers, placement_locator(next),
                  Second{now.servers, placement_locator(now),
                         change.phase == FleetPhase::kReadThrough, options, true});
      return;
    }
    case FleetPhase::kDone:
    case FleetPhase::kSteady:
      fleet.serve(next.servers, placement_locator(next), std::nullopt);
      return;
  }
}

/// This host's name ("localhost" when it has none), for the member's registration.
[[nodiscard]] inline auto member_host() -> std::string {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') {
    return "localhost";
  }
  return std::string(name.data());
}

/// A member id nobody else picks: host-pid-random, in the characters a name may use.
[[nodiscard]] inline auto default_member_id() -> std::string {
  std::string host = member_host().substr(0, 64);
  for (char& c : host) {
    c = fleet_name_char(c) ? c : '-';
  }
  std::random_device device;
  return host + "-" + std::to_string(::getpid()) + "-" + std::to_string(device() % 1'000'000U);
}

}  // namespace detail

class FleetMember;

/// join_fleet: joins the fleet `fleet_name` whose record lives in the etcd cluster of
/// `store_url` (`etcd://host:port[,host:port...]`): reads the record, builds the client on its
/// placement and phase, registers the member (acknowledging the record's epoch) and starts
/// following the record (see the file comment). `options` are the client's: the record's key
/// prefix, prefix hashing and failure policy apply (a value set here that differs from the
/// record's is an error). Throws ConfigError when the URL or options are bad, the fleet does not
/// exist, or etcd does not answer within `fleet_options.join_timeout`.
///
/// **Example**:
///   memshard::FleetMember member = memshard::join_fleet("etcd://10.0.0.5:2379", "web");
///   member.client().set("user:42", "...");
[[nodiscard]] inline auto join_fleet(std::string_view store_url, std::string_view fleet_name,
                                     ClientOptions options = {}, FleetOptions fleet_options = {})
    -> FleetMember;

/// FleetMember: see the file comment. Movable; client() stays the same object when it moves.
class FleetMember {
 public:
  FleetMember(FleetMember&&) noexcept = default;
  auto operator=(FleetMember&&) noexcept -> FleetMember& = default;
  FleetMember(const FleetMember&) = delete;
  auto operator=(const FleetMember&) -> FleetMember& = delete;
  /// Stops following and revokes the lease (bounded by the etcd request timeout).
  ~FleetMember() = default;

  /// client: the member's client, placed as the fleet's record says; its clones follow too.
  [[nodiscard]] auto client() noexcept -> ShardedClient<AnyLocator>& { return state_->client; }

  /// id: the member's name under the fleet's members.
  [[nodiscard]] auto id() const noexcept -> const std::string& { return state_->id; }

  /// epoch: the epoch of the newest record the member serves and acknowledged.
  [[nodiscard]] auto epoch() const -> std::int64_t {
    const std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->acked;
  }

  /// record: the newest record the member serves (acknowledged or about to be).
  [[nodiscard]] auto record() const -> FleetRecord { return state_->current(); }

  /// fenced: whether the member's client family is fenced now (fleet/fence_gate.hpp): its lease
  /// may have lapsed, or it has not yet caught up with the record since it did. Its calls then
  /// read misses and refuse writes (Errc::kFenced), whose keys are deleted before it serves
  /// again.
  [[nodiscard]] auto fenced() const noexcept -> bool { return state_->fleet.gate().closed(); }

  /// lost_keys: how many refused writes' keys the member could not keep while fenced (beyond
  /// detail::FenceGate::kDefaultCapacity, 100,000): their older values may be served once it serves
  /// again.
  [[nodiscard]] auto lost_keys() const -> std::uint64_t { return state_->fleet.gate().lost(); }

  /// last_error: why the newest record could not be served (empty when it was).
  [[nodiscard]] auto last_error() const -> std::string {
    const std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->error;
  }

 private:
  friend auto join_fleet(std::string_view store_url, std::string_view fleet_name,
                         ClientOptions options, FleetOptions fleet_options) -> FleetMember;

  struct State {
    State(std::vector<StoreEndpoint> endpoints, std::string name, std::string member_id,
          const FleetOptions& options, ShardedClient<AnyLocator> made, FleetRecord record,
          std::unique_ptr<LeaseKeeper> registered)
        : fleet_name(std::move(name)),
          id(std::move(member_id)),
          host(detail::member_host()),
          client(std::move(made)),
          replayer(client.clone()),
          fleet(detail::FleetOf<AnyLocator>::of(client)),
          etcd(endpoints, options.etcd),
          keeper(std::move(registered)),
          served(std::move(record)),
          period(std::chrono::duration_cast<std::chrono::milliseconds>(options.lease_ttl) / 3) {}

    State(const State&) = delete;
    auto operator=(const State&) -> State& = delete;
    State(State&&) = delete;
    auto operator=(State&&) -> State& = delete;
    ~State() {
      {
        const std::lock_guard<std::mutex> lock(mutex);
        stop = true;
      }
      wake.notify_all();
      watch.reset();
      if (thread.joinable()) {
        thread.join();
      }
    }

    // The newest record seen, from the watch or a read; the follower serves it.
    void offer(FleetRecord record) {
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (record.epoch <= newest.value_or(served).epoch) {
          return;
        }
        newest = std::move(record);
      }
      wake.notify_all();
    }

    // The record as etcd has it now, when it answers.
    [[nodiscard]] auto fetch() -> std::optional<FleetRecord> {
      StoreResult<StoreRange> got = etcd.get(detail::fleet_record_key(fleet_name));
      if (!got || got->entries.empty()) {
        return std::nullopt;
      }
      StoreResult<FleetRecord> decoded = decode_fleet_record(got->entries.front().value);
      if (!decoded) {
        return std::nullopt;
      }
      return std::move(decoded).value();
    }

    // The follower: serves each newer record, reads the record every `period`, and keeps the
    // gate: open until the lease's fence while the lease is kept alive; once the lease may have
    // lapsed, closed until the member read the record again, served it, and deleted the keys of
    // the writes the gate refused.
    void follow() {
      using Clock = std::chrono::steady_clock;
      auto next_read = Clock::now() + period;
      bool lapsed = false;
      while (true) {
        std::optional<FleetRecord> record;
        {
          std::unique_lock<std::mutex> lock(mutex);
          wake.wait_until(lock, std::min(next_read, Clock::now() + kTick),
                          [this] { return stop || newest.has_value(); });
          if (stop) {
            return;
          }
          record.swap(newest);
        }
        // A lapse: calls were refused (the gate closed by the clock before the follower moved
        // it; its fence is never later than the lease's, so a lease that may have lapsed closed
        // it), or etcd did let the lease lapse (a new one): the fleet may have moved on without
        // this member.
        if (fleet.gate().closed() || keeper->renewals() != renewals_seen) {
          lapsed = true;
          fleet.gate().close();
        }
        if (record) {
          serve(std::move(*record));
        } else if (Clock::now() >= next_read) {
          if (std::optional<FleetRecord> read = fetch()) {
            offer(std::move(*read));
          }
          next_read = Clock::now() + period;
        }
        if (unacked != 0 && Clock::now() >= next_ack) {
          acknowledge(unacked);
        }
        if (lapsed) {
          lapsed = !recover();
        } else {
          fleet.gate().open_until(fence_ns());
        }
      }
    }

    // The lease's fence, in steady clock ns.
    [[nodiscard]] auto fence_ns() const noexcept -> std::int64_t {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 keeper->fence_at().time_since_epoch())
          .count();
    }

    // After a lapse, once the lease is kept alive again: the newest record served, the kept
    // keys deleted by its rules, the gate open. Whether it got that far.
    auto recover() -> bool {
      const std::uint64_t renewals = keeper->renewals();
      if (keeper->fenced()) {
        return false;
      }
      std::optional<FleetRecord> newest_read = fetch();
      if (!newest_read) {
        return false;
      }
      if (newest_read->epoch > current().epoch) {
        const std::int64_t epoch = newest_read->epoch;
        serve(std::move(*newest_read));
        if (current().epoch != epoch) {
          return false;  // it could not be served
        }
      }
      for (const std::string& key : fleet.gate().take()) {
        (void)detail::FleetOf<AnyLocator>::remove_unfenced(replayer, key);
      }
      if (keeper->fenced() || keeper->renewals() != renewals) {
        return false;  // lapsed again meanwhile: once more
      }
      renewals_seen = renewals;
      fleet.gate().open_until(fence_ns());
      return true;
    }

    [[nodiscard]] auto current() const -> FleetRecord {
      const std::lock_guard<std::mutex> lock(mutex);
      return served;
    }

    // Serves `record`, waits for the calls begun before it, then acknowledges it.
    void serve(FleetRecord record) {
      try {
        detail::serve_record(fleet, record);
      } catch (const ConfigError& refused) {
        const std::lock_guard<std::mutex> lock(mutex);
        error = refused.what();
        return;
      }
      {
        const std::lock_guard<std::mutex> lock(mutex);
        served = record;
        error.clear();
      }
      const std::uint64_t generation = fleet.settled_generation();
      while (!fleet.calls().wait_before(generation, std::chrono::steady_clock::now() + kTick)) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (stop || newest) {
          return;  // a newer record waits: it is acknowledged instead
        }
      }
      acknowledge(record.epoch);
    }

    // Writes `epoch` under the member's key; a failure is tried again a little later.
    void acknowledge(std::int64_t epoch) {
      if (!keeper->update(detail::member_value(epoch, host, ::getpid()))) {
        unacked = epoch;
        next_ack = std::chrono::steady_clock::now() + std::chrono::milliseconds{200};
        return;
      }
      unacked = 0;
      const std::lock_guard<std::mutex> lock(mutex);
      acked = epoch;
    }

    static constexpr std::chrono::milliseconds kTick{100};  // the follower's longest sleep

    const std::string fleet_name;
    const std::string id;
    const std::string host;
    ShardedClient<AnyLocator> client;
    ShardedClient<AnyLocator> replayer;  // the follower's clone of it
    Fleet<AnyLocator>& fleet;
    EtcdClient etcd;  // the follower's reads
    std::unique_ptr<LeaseKeeper> keeper;
    mutable std::mutex mutex;
    std::condition_variable wake;
    bool stop = false;
    FleetRecord served;                 // the newest record served
    std::optional<FleetRecord> newest;  // a newer record, waiting for the follower
    std::int64_t acked = 0;             // the epoch acknowledged last
    std::int64_t unacked = 0;           // the follower's: an epoch served, not acknowledged yet
    std::uint64_t renewals_seen = 0;    // the follower's: keeper->renewals() when last recovered
    std::chrono::steady_clock::time_point next_ack;  // when to try that again
    std::string error;                               // why the newest record could not be served
    std::chrono::milliseconds period;                // between reads of the record
    std::unique_ptr<EtcdWatch> watch;                // the record's changes
    std::thread thread;                              // follow()
  };

  explicit FleetMember(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}

  std::unique_ptr<State> state_;
};

inline auto join_fleet(std::string_view store_url, std::string_view fleet_name,
                       ClientOptions options, FleetOptions fleet_options) -> FleetMember {
  detail::validate_fleet_name(fleet_name);
  std::vector<StoreEndpoint> endpoints = parse_store_url(store_url);
  if (fleet_options.join_timeout.count() <= 0) {
    detail::throw_config_error("fleet: join_timeout must be positive",
                               std::to_string(fleet_options.join_timeout.count()) + " ms");
  }
  if (fleet_options.member_id.empty()) {
    fleet_options.member_id = detail::default_member_id();
  }
  detail::validate_fleet_name(fleet_options.member_id);
  EtcdOptions join = fleet_options.etcd;
  join.request_timeout = std::min(join.request_timeout, fleet_options.join_timeout);
  join.connect_timeout = std::min(join.connect_timeout, fleet_options.join_timeout);
  const auto give_up = std::chrono::steady_clock::now() + fleet_options.join_timeout;
  EtcdClient etcd(endpoints, join);
  const auto read = [&] {
    StoreResult<StoreRange> got = etcd.get(detail::fleet_record_key(fleet_name));
    while (!got && got.status().code() != StoreErrc::kRejected &&
           std::chrono::steady_clock::now() + join.request_timeout < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
      got = etcd.get(detail::fleet_record_key(fleet_name));
    }
    if (!got) {
      detail::throw_config_error("fleet: etcd did not answer the join in time",
                                 std::string(store_url) + ": " + got.status().message());
    }
    if (got->entries.empty()) {
      detail::throw_config_error("fleet: no such fleet (create it with memshard-fleet create)",
                                 fleet_name);
    }
    return got;
  };
  (void)read();
  // Registered (at epoch 0: serving nothing yet) before the record is read for good: a
  // coordinator that writes a newer record from here on waits for this member, so the record
  // read below is at most one step behind what the fleet serves, never two.
  const std::string host = detail::member_host();
  // The fence falls a tenth of the TTL (at least 200 ms) before etcd could let the lease lapse,
  // and at least one call's budget before it: a call begun before the fence ends on its phase.
  const std::chrono::milliseconds margin =
      std::max({std::chrono::duration_cast<std::chrono::milliseconds>(fleet_options.lease_ttl) / 10,
                std::chrono::milliseconds{200}, options.call_budget()});
  if (margin >= fleet_options.lease_ttl) {
    detail::throw_config_error("fleet: lease_ttl must exceed the client's call budget",
                               std::to_string(fleet_options.lease_ttl.count()) + " s");
  }
  auto keeper = std::make_unique<LeaseKeeper>(
      endpoints, detail::fleet_members_prefix(fleet_name) + fleet_options.member_id,
      LeaseOptions{fleet_options.lease_ttl, margin, join});
  if (StoreStatus started = keeper->start(detail::member_value(0, host, ::getpid())); !started) {
    detail::throw_config_error("fleet: the member could not register", started.message());
  }
  StoreResult<StoreRange> got = read();
  StoreResult<FleetRecord> decoded = decode_fleet_record(got->entries.front().value);
  if (!decoded) {
    detail::throw_config_error("fleet: its record cannot be read", decoded.status().message());
  }
  FleetRecord record = std::move(decoded).value();
  const ClientOptions defaults;
  const auto agree = [&](bool same_as_record, bool left_default, std::string_view what) {
    if (!same_as_record && !left_default) {
      detail::throw_config_error("fleet: this client option must agree with the fleet's record",
                                 what);
    }
  };
  agree(options.key_prefix == record.key_prefix, options.key_prefix == defaults.key_prefix,
        "key_prefix");
  agree(options.prefix_hashing == record.prefix_hashing,
        options.prefix_hashing == defaults.prefix_hashing, "prefix_hashing");
  agree(options.failure_policy == record.failure_policy,
        options.failure_policy == defaults.failure_policy, "failure_policy");
  options.key_prefix = record.key_prefix;
  options.prefix_hashing = record.prefix_hashing;
  options.failure_policy = record.failure_policy;
  const FleetPlacement& placed = record.placement;
  ShardedClient<AnyLocator> client =
      make_client(placed.profile, placed.servers, placed.profile_options, options);
  const std::int64_t revision = got->revision;
  auto state = std::make_unique<FleetMember::State>(endpoints, std::string(fleet_name),
                                                    fleet_options.member_id, fleet_options,
                                                    std::move(client), record, std::move(keeper));
  detail::serve_record(state->fleet, record);  // no call has begun yet: nothing to wait for
  if (StoreStatus acked =
          state->keeper->update(detail::member_value(record.epoch, host, ::getpid()));
      !acked) {
    detail::throw_config_error("fleet: the member could not register", acked.message());
  }
  state->fleet.gate().open_until(state->fence_ns());
  state->acked = record.epoch;
  FleetMember::State* raw = state.get();
  state->watch = std::make_unique<EtcdWatch>(
      endpoints, detail::fleet_record_key(fleet_name), revision,
      [raw, key = detail::fleet_record_key(fleet_name)](WatchUpdate update) {
        for (const StoreEvent& event : update.events) {  // a resync's too: each key as written
          if (event.removed || event.entry.key != key) {
            continue;
          }
          StoreResult<FleetRecord> next = decode_fleet_record(event.entry.value);
          if (next) {
            raw->offer(std::move(next).value());
          }
        }
      },
      fleet_options.etcd);
  state->thread = std::thread([raw] { raw->follow(); });
  return FleetMember(std::move(state));
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_FLEET_MEMBER_HPP_
