// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_FLEET_ADMIN_HPP_
#define MEMSHARD_COORDINATION_FLEET_ADMIN_HPP_

// coordination/fleet_admin.hpp: FleetAdmin, the operator's side of a fleet kept in etcd:
// create a fleet, read its record and its members, and carry a command (migrate, commit, abort,
// reconfigure) through its phases (coordination/fleet_phases.hpp), writing each next record only
// once every live member serves the one before it, and exactly once (a transaction on the
// record's revision: a second coordinator's write makes this one stop, never both write).
// evict() removes a member known to be dead instead of waiting for its lease to lapse.
//
// Where a fleet lives in etcd, under kFleetRoot ("memshard/fleets/"):
//   <root><name>/record            the FleetRecord, as JSON (coordination/fleet_record.hpp)
//   <root><name>/members/<id>      one per live member, bound to the member's lease: the epoch
//                                  of the record it serves, its host and process id, as JSON
// A fleet's name is 1 to 128 letters, digits, '.', '_' or '-'.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/codecs/json.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/coordination/etcd_client.hpp"
#include "memshard/coordination/etcd_watch.hpp"
#include "memshard/coordination/fleet_phases.hpp"
#include "memshard/coordination/fleet_record.hpp"
#include "memshard/coordination/store_status.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/migration/sweeper.hpp"
#include "memshard/placement/key_prefix.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// kFleetRoot: the etcd prefix every fleet lives under.
inline constexpr std::string_view kFleetRoot = "memshard/fleets/";

/// FleetView: a fleet's record as read, with the etcd revision it was last written at (what a
/// change must still find to replace it).
struct FleetView {
  FleetRecord record;
  std::int64_t mod_revision = 0;
};

/// FleetMemberInfo: one live member as it registered: its id (the last part of its key), the
/// epoch of the record it serves, where it runs, and the lease its key is bound to. A
/// registration that cannot be read is listed with `readable` false and epoch 0: it
/// acknowledges nothing, so a change waits for it (or for its lease to lapse) as for any
/// member that has not caught up.
struct FleetMemberInfo {
  std::string id;
  std::int64_t epoch = 0;
  std::string host;
  std::int64_t pid = 0;
  std::int64_t lease = 0;
  bool readable = true;
};

/// FleetProgress: where a command waits: the record it wrote last (its epoch and phase) and how
/// many of the live members serve it.
struct FleetProgress {
  std::int64_t epoch = 0;
  FleetPhase phase = FleetPhase::kSteady;
  std::size_t acknowledged = 0;
  std::size_t live = 0;
};

/// FleetProgressFn: told each time the count of members serving the record changes.
using FleetProgressFn = std::function<void(const FleetProgress&)>;

/// FleetSweep: whether and how FleetAdmin::apply sweeps the servers a change leaves copies on
/// (coordination/fleet_phases.hpp, migration/sweeper.hpp).
struct FleetSweep {
  /// enabled: sweep. Without it, each server that would have been swept is put in the record's
  /// stale_copies instead, so that a later change onto it waits until it is flushed.
  bool enabled = true;
  /// bounds: each server's sweep (its key prefix and placement come from the record).
  SweepOptions bounds;
};

namespace detail {

/// fleet_name_char: whether a fleet's or a member's name may hold `c`: [A-Za-z0-9._-].
[[nodiscard]] constexpr auto fleet_name_char(char c) noexcept -> bool {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

/// validate_fleet_name: throws ConfigError unless `name` is 1 to 128 of [A-Za-z0-9._-].
inline void validate_fleet_name(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 128;
  for (const char c : name) {
    ok = ok && fleet_name_char(c);
  }
  if (!ok) {
    throw_config_error("a fleet's name is 1 to 128 letters, digits, '.', '_' or '-'", name);
  }
}

[[nodiscard]] inline auto fleet_prefix(std::string_view name) -> std::string {
  return std::string(kFleetRoot) + std::string(name) + "/";
}
[[nodiscard]] inline auto fleet_record_key(std::string_view name) -> std::string {
  return fleet_prefix(name) + "record";
}
[[nodiscard]] inline auto fleet_members_prefix(std::string_view name) -> std::string {
  return fleet_prefix(name) + "members/";
}

/// member_value: the JSON a member registers under its key.
[[nodiscard]] inline auto member_value(std::int64_t epoch, std::string_view host, std::int64_t pid)
    -> std::string {
  CodecResult<std::string> text =
      json_encode(Value::map({{"epoch", epoch}, {"host", host}, {"pid", pid}}));
  return text ? std::move(text).value() : std::string("{}");
}

/// parse_member: a member's registration (see FleetMemberInfo for one that cannot be read).
[[nodiscard]] inline auto parse_member(const StoreEntry& entry, std::string_view members_prefix)
    -> FleetMemberInfo {
  FleetMemberInfo info;
  info.id = entry.key.substr(std::min(members_prefix.size(), entry.key.size()));
  info.lease = entry.lease;
  info.readable = false;
  DecodeLimits limits;
  limits.max_size = 1U << 16U;
  limits.max_depth = 4;
  CodecResult<Value> json = json_decode(entry.value, limits);
  if (!json || !json.value().is_map()) {
    return info;
  }
  const Value* epoch = json.value().find("epoch");
  const Value* host = json.value().find("host");
  const Value* pid = json.value().find("pid");
  if (epoch == nullptr || !epoch->is_int() || epoch->as_int() < 0 || host == nullptr ||
      !host->is_string() || pid == nullptr || !pid->is_int()) {
    return info;
  }
  info.epoch = epoch->as_int();
  info.host = host->as_string();
  info.pid = pid->as_int();
  info.readable = true;
  return info;
}

}  // namespace detail

/// FleetAdmin: see the file comment. Used by one thread at a time.
///
/// **Example**:
///   memshard::FleetAdmin admin("etcd://10.0.0.1:2379,10.0.0.2:2379");
///   memshard::FleetRecord record;
///   record.placement = {memshard::parse_servers("10.0.1.1 10.0.1.2"), "libmemcached-ketama", {}};
///   if (auto created = admin.create("web", record); !created) log(created.message());
class FleetAdmin {
 public:
  /// Throws ConfigError for a bad store URL or options (see EtcdClient), or a sweep's batch
  /// size of 0.
  explicit FleetAdmin(std::string_view store_url, EtcdOptions options = {}, FleetSweep sweep = {})
      : etcd_(store_url, options), sweep_(std::move(sweep)) {
    if (sweep_.bounds.batch_size == 0) {
      detail::throw_config_error("a sweep's batch size must be positive", "0");
    }
  }

  [[nodiscard]] auto etcd() noexcept -> EtcdClient& { return etcd_; }

  /// create: writes the first record of the fleet `name` (its epoch set to 1, any change
  /// dropped: a fleet starts steady). kRejected when the fleet exists. Throws ConfigError for a
  /// bad name or a record that cannot serve (validate_fleet_record).
  auto create(std::string_view name, FleetRecord record) -> StoreStatus {
    detail::validate_fleet_name(name);
    record.epoch = 1;
    record.change.reset();
    validate_fleet_record(record);
    StoreResult<StoreWrite> wrote =
        etcd_.put_if(detail::fleet_record_key(name), encode_fleet_record(record), 0);
    if (!wrote) {
      return wrote.status();
    }
    if (!wrote->succeeded) {
      return {StoreErrc::kRejected, "fleet " + std::string(name) + " exists"};
    }
    return {};
  }

  /// show: the fleet's record. kRejected when there is no such fleet, kBadReply when its record
  /// cannot be read.
  [[nodiscard]] auto show(std::string_view name) -> StoreResult<FleetView> {
    detail::validate_fleet_name(name);
    StoreResult<StoreRange> got = etcd_.get(detail::fleet_record_key(name));
    if (!got) {
      return got.status();
    }
    if (got->entries.empty()) {
      return StoreStatus(StoreErrc::kRejected, "no fleet " + std::string(name));
    }
    StoreResult<FleetRecord> record = decode_fleet_record(got->entries.front().value);
    if (!record) {
      return record.status();
    }
    return FleetView{std::move(record).value(), got->entries.front().mod_revision};
  }

  /// members: the fleet's live members, in the order of their ids (see FleetMemberInfo for a
  /// registration that cannot be read).
  [[nodiscard]] auto members(std::string_view name) -> StoreResult<std::vector<FleetMemberInfo>> {
    StoreResult<MemberList> listed = list_members(name);
    if (!listed) {
      return listed.status();
    }
    return std::move(listed).value().members;
  }

  /// wait_for_members: waits until every live member of the fleet serves epoch `epoch` or a
  /// later one (a member whose registration cannot be read serves none), or until `deadline`
  /// (kTimeout then, naming the members behind). It reads the members again whenever etcd
  /// streams a change of them (EtcdWatch), and at least every 500 ms, so a wait puts next to no
  /// load on etcd while it lasts.
  auto wait_for_members(std::string_view name, std::int64_t epoch, FleetPhase phase,
                        std::chrono::steady_clock::time_point deadline,
                        const FleetProgressFn& progress = {}) -> StoreStatus {
    FleetProgress last{epoch, phase, static_cast<std::size_t>(-1), 0};
    std::mutex mutex;
    std::condition_variable changed;
    bool news = false;
    std::unique_ptr<EtcdWatch> watch;  // after what its handler uses: it goes first
    while (true) {
      StoreResult<MemberList> list = list_members(name);
      if (!list) {
        return list.status();
      }
      FleetProgress now{epoch, phase, 0, list->members.size()};
      std::string behind;
      for (const FleetMemberInfo& member : list->members) {
        if (member.readable && member.epoch >= epoch) {
          ++now.acknowledged;
        } else {
          behind.append(behind.empty() ? "" : ", ").append(member.id);
        }
      }
      if (progress && (now.acknowledged != last.acknowledged || now.live != last.live)) {
        progress(now);
      }
      last = now;
      if (now.acknowledged == now.live) {
        return {};
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return {StoreErrc::kTimeout, std::to_string(now.acknowledged) + " of " +
                                         std::to_string(now.live) + " live members serve epoch " +
                                         std::to_string(epoch) + " (" +
                                         std::string(to_string(phase)) + "); behind: " + behind};
      }
      if (!watch) {
        watch = std::make_unique<EtcdWatch>(
            etcd_.endpoints(), detail::fleet_members_prefix(name), list->revision,
            [&](WatchUpdate) {
              const std::lock_guard<std::mutex> lock(mutex);
              news = true;
              changed.notify_all();
            },
            etcd_.options());
      }
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait_until(
          lock,
          std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds{500}),
          [&] { return news; });
      news = false;
    }
  }

  /// apply: carries `command` through its phases (see the file comment), each wait for the
  /// members bounded by `wait`. Returns once every live member serves the record the command
  /// ends on: the read-through window (migrate), the next placement alone (commit, reconfigure),
  /// the old placement (abort). Before the record that stops keeping a placement's copies
  /// invalidated, it sweeps them (FleetSweep; last_sweep() says what was done): in phase 3, the
  /// old placement's servers; in phase 1 of an abort after a read-through window, the abandoned
  /// placement's. A server not swept whole goes in the record's stale_copies. kRejected when the
  /// command cannot go on from the record found (a change already in progress, nothing to commit,
  /// past turning back, servers to flush, or another coordinator wrote meanwhile), kTimeout when
  /// members did not follow in time (the record stays at the phase reached: the command can be
  /// given again). Throws ConfigError for a bad name or a next placement that cannot serve.
  auto apply(std::string_view name, const FleetCommand& command, std::chrono::milliseconds wait,
             const FleetProgressFn& progress = {}) -> StoreStatus {
    last_sweep_ = {};
    StoreResult<FleetView> view = show(name);
    if (!view) {
      return view.status();
    }
    FleetView current = std::move(view).value();
    const std::optional<FleetChange>& change = current.record.change;
    FleetPlacement target = command.next;
    if (command.kind == FleetCommandKind::kCommit || command.kind == FleetCommandKind::kAbort) {
      if (!change) {
        return {StoreErrc::kRejected, "no change is in progress in fleet " + std::string(name)};
      }
      target = command.kind == FleetCommandKind::kCommit ? change->next : current.record.placement;
    } else {
      FleetRecord probe = current.record;
      probe.change = FleetChange{FleetChangeKind::kReconfigure, FleetPhase::kPrepare, command.next,
                                 command.consistency, false};
      if (!(command.next == current.record.placement)) {
        validate_fleet_record(probe);
      }
    }
    while (true) {
      const FleetPhase phase =
          current.record.change ? current.record.change->phase : FleetPhase::kSteady;
      const auto deadline = std::chrono::steady_clock::now() + wait;
      if (StoreStatus followed =
              wait_for_members(name, current.record.epoch, phase, deadline, progress);
          !followed) {
        return followed;
      }
      FleetStep step = fleet_step(current.record, command, target);
      if (step.done) {
        return {};
      }
      if (!step.next) {
        return {StoreErrc::kRejected, "fleet " + std::string(name) + ": " + step.refused};
      }
      sweep_before(current.record, *step.next);
      StoreResult<StoreWrite> wrote = etcd_.put_if(
          detail::fleet_record_key(name), encode_fleet_record(*step.next), current.mod_revision);
      if (!wrote) {
        return wrote.status();
      }
      if (!wrote->succeeded) {
        return {StoreErrc::kRejected, "fleet " + std::string(name) +
                                          ": its record changed meanwhile (another coordinator?)"};
      }
      current = FleetView{std::move(*step.next), wrote->revision};
    }
  }

  /// last_sweep: what the last sweep of apply() did (empty when it swept nothing).
  [[nodiscard]] auto last_sweep() const noexcept -> const SweepReport& { return last_sweep_; }

  /// evict: removes the member `member` of the fleet (revokes its lease), for a process known to
  /// be dead, so that changes stop waiting for it. kRejected when there is no such member.
  auto evict(std::string_view name, std::string_view member) -> StoreStatus {
    StoreResult<std::vector<FleetMemberInfo>> list = members(name);
    if (!list) {
      return list.status();
    }
    for (const FleetMemberInfo& info : list.value()) {
      if (info.id != member) {
        continue;
      }
      if (info.lease != 0) {
        StoreResult<bool> revoked = etcd_.revoke(info.lease);
        return revoked ? StoreStatus() : revoked.status();
      }
      StoreResult<std::int64_t> removed =
          etcd_.remove(detail::fleet_members_prefix(name) + std::string(member));
      return removed ? StoreStatus() : removed.status();
    }
    return {StoreErrc::kRejected,
            "fleet " + std::string(name) + " has no member " + std::string(member)};
  }

 private:
  struct MemberList {
    std::vector<FleetMemberInfo> members;
    std::int64_t revision = 0;  // the store's, when they were read
  };

  [[nodiscard]] auto list_members(std::string_view name) -> StoreResult<MemberList> {
    detail::validate_fleet_name(name);
    const std::string prefix = detail::fleet_members_prefix(name);
    StoreResult<StoreRange> got = etcd_.list(prefix);
    if (!got) {
      return got.status();
    }
    MemberList out;
    out.revision = got->revision;
    for (const StoreEntry& entry : got->entries) {
      out.members.push_back(detail::parse_member(entry, prefix));
    }
    return out;
  }

  // Sweeps, when `next` follows `current` and stops keeping copies invalidated (see apply), the
  // servers those copies are on, and records in next.stale_copies those not swept whole (an
  // abort's servers swept whole leave it).
  void sweep_before(const FleetRecord& current, FleetRecord& next) {
    if (!current.change) {
      return;
    }
    const FleetChange& change = *current.change;
    const bool commit = change.phase == FleetPhase::kSettle && next.change &&
                        next.change->phase == FleetPhase::kDone;
    const bool abort = change.phase == FleetPhase::kPrepare && !next.change && change.copied;
    if (!commit && !abort) {
      return;
    }
    const FleetPlacement& swept = commit ? current.placement : change.next;
    const FleetPlacement& kept = commit ? change.next : current.placement;
    last_sweep_ = {};
    if (sweep_.enabled) {
      SweepOptions options = sweep_.bounds;
      options.key_prefix = current.key_prefix;
      options.placement_skip =
          KeyPrefix(current.key_prefix, current.prefix_hashing).placement_skip();
      last_sweep_ =
          sweep_moved_keys(swept.servers, *detail::placement_locator(kept), kept.servers, options);
    } else {
      for (const Server& server : swept.servers) {
        last_sweep_.servers.push_back(
            SweptServer{server.endpoint(), 0, 0, 0, 0, 0, "sweeping is off"});
      }
    }
    std::vector<std::string>& stale = next.stale_copies;
    for (const SweptServer& server : last_sweep_.servers) {
      const auto at = std::find(stale.begin(), stale.end(), server.server);
      if (!server.ok() && at == stale.end()) {
        stale.push_back(server.server);
      } else if (server.ok() && abort && at != stale.end()) {
        stale.erase(at);
      }
    }
  }

  EtcdClient etcd_;
  FleetSweep sweep_;
  SweepReport last_sweep_;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_FLEET_ADMIN_HPP_
