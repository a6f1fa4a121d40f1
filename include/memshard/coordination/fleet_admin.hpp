// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_FLEET_ADMIN_HPP_
#define MEMSHARD_COORDINATION_FLEET_ADMIN_HPP_

// coordination/fleet_admin.hpp: FleetAdmin, the operator's side of a fleet kept in etcd:
// create a fleet, read its record and its members. (The changes, each moved through its phases
// once every live member acknowledged the last, come with the members that follow them.)
//
// Where a fleet lives in etcd, under kFleetRoot ("memshard/fleets/"):
//   <root><name>/record            the FleetRecord, as JSON (coordination/fleet_record.hpp)
//   <root><name>/members/<id>      one per live member, bound to the member's lease: the epoch
//                                  of the record it serves, its host and process id, as JSON
// A fleet's name is 1 to 128 letters, digits, '.', '_' or '-'.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/codecs/json.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/coordination/etcd_client.hpp"
#include "memshard/coordination/fleet_record.hpp"
#include "memshard/coordination/store_status.hpp"
#include "memshard/detail/throw.hpp"
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

namespace detail {

/// validate_fleet_name: throws ConfigError unless `name` is 1 to 128 of [A-Za-z0-9._-].
inline void validate_fleet_name(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 128;
  for (const char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-');
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
  /// Throws ConfigError for a bad store URL or options (see EtcdClient).
  explicit FleetAdmin(std::string_view store_url, EtcdOptions options = {})
      : etcd_(store_url, options) {}

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
    detail::validate_fleet_name(name);
    const std::string prefix = detail::fleet_members_prefix(name);
    StoreResult<StoreRange> got = etcd_.list(prefix);
    if (!got) {
      return got.status();
    }
    std::vector<FleetMemberInfo> out;
    for (const StoreEntry& entry : got->entries) {
      out.push_back(detail::parse_member(entry, prefix));
    }
    return out;
  }

 private:
  EtcdClient etcd_;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_FLEET_ADMIN_HPP_
