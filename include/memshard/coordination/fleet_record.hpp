// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_FLEET_RECORD_HPP_
#define MEMSHARD_COORDINATION_FLEET_RECORD_HPP_

// coordination/fleet_record.hpp: FleetRecord, what every process of a fleet agrees on, as it
// is kept in etcd: the placement in use (servers, profile and its options), the client options
// that change where a key goes or what is sent for it and so must be the same in every member,
// and the change in progress, if any, with its phase (docs/fleet.md):
//
//   phase          reads                        writes and deletes
//   0 steady       the placement                the placement
//   1 prepare      the placement (A)            A, and invalidate the next placement's (B's) owner
//   2 read-through B, then A with a copy forward B, and invalidate A   (a migration only)
//   3 settle       B only                       B, and invalidate A
//   4 done         B                            B
//
// A record is written whole, as JSON, and read strictly: anything unexpected makes it a bad
// record (StoreErrc::kBadReply), never a guess. `epoch` grows by one with every write of the
// record, so that a member can say which record it serves.

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/client/client_options.hpp"
#include "memshard/codecs/json.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/coordination/store_status.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/placement/key_prefix.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// FleetPlacement: where a fleet's keys go: its servers and the profile that places keys on
/// them (a name make_locator takes, with its options).
struct FleetPlacement {
  std::vector<Server> servers;
  std::string profile;
  ProfileOptions profile_options;

  friend auto operator==(const FleetPlacement& a, const FleetPlacement& b) -> bool {
    return a.servers == b.servers && a.profile == b.profile &&
           a.profile_options.hash == b.profile_options.hash &&
           a.profile_options.points == b.profile_options.points &&
           a.profile_options.weighted == b.profile_options.weighted &&
           a.profile_options.hash_tag == b.profile_options.hash_tag;
  }
};

namespace detail {

/// placement_locator: the locator of a record's placement. Throws ConfigError for one that
/// cannot be built (which validate_fleet_record() refuses first).
[[nodiscard]] inline auto placement_locator(const FleetPlacement& placement)
    -> std::shared_ptr<const AnyLocator> {
  return std::make_shared<const AnyLocator>(
      make_locator(placement.profile, placement.servers, placement.profile_options));
}

}  // namespace detail

/// FleetPhase: where a change stands (see the file comment).
enum class FleetPhase : std::uint8_t {
  kSteady = 0,
  kPrepare = 1,
  kReadThrough = 2,
  kSettle = 3,
  kDone = 4,
};

/// FleetChangeKind: a migration (phases 1 to 4, with the read-through window) or a direct switch
/// (phases 1, 3, 4: no copies, only hits lost).
enum class FleetChangeKind : std::uint8_t { kMigrate, kReconfigure };

/// FleetChange: a change in progress: its kind, its phase and the placement it moves to.
struct FleetChange {
  FleetChangeKind kind = FleetChangeKind::kMigrate;
  FleetPhase phase = FleetPhase::kPrepare;
  FleetPlacement next;
  MigrationConsistency consistency = MigrationConsistency::kFast;
  /// Whether the read-through window opened (phase 2) at any time: the next placement's servers
  /// may hold copies, which an abort must not leave behind unnoticed.
  bool copied = false;

  friend auto operator==(const FleetChange&, const FleetChange&) -> bool = default;
};

/// FleetRecord: see the file comment.
struct FleetRecord {
  std::int64_t epoch = 1;
  FleetPlacement placement;
  /// The client options every member must share (a member whose own differ cannot join).
  std::string key_prefix;
  PrefixHashing prefix_hashing = PrefixHashing::kBareKey;
  FailurePolicy failure_policy = FailurePolicy::kFailFast;
  std::optional<FleetChange> change;
  /// The servers ("host:port") that may hold copies nothing keeps current: those an aborted
  /// read-through window copied values to, and those a change's sweep could not clean
  /// (FleetAdmin): a later change onto one of them waits until it is flushed.
  std::vector<std::string> stale_copies;

  friend auto operator==(const FleetRecord&, const FleetRecord&) -> bool = default;
};

/// to_string: "steady", "prepare", "read-through", "settle", "done".
[[nodiscard]] constexpr auto to_string(FleetPhase phase) noexcept -> std::string_view {
  switch (phase) {
    case FleetPhase::kSteady:
      return "steady";
    case FleetPhase::kPrepare:
      return "prepare";
    case FleetPhase::kReadThrough:
      return "read-through";
    case FleetPhase::kSettle:
      return "settle";
    case FleetPhase::kDone:
      return "done";
  }
  return "unknown";
}

/// to_string: "migrate", "reconfigure".
[[nodiscard]] constexpr auto to_string(FleetChangeKind kind) noexcept -> std::string_view {
  return kind == FleetChangeKind::kMigrate ? "migrate" : "reconfigure";
}

namespace detail {

inline constexpr std::int64_t kFleetRecordFormat = 1;

[[nodiscard]] inline auto prefix_hashing_name(PrefixHashing hashing) -> std::string_view {
  return hashing == PrefixHashing::kBareKey ? "bare-key" : "prefixed-key";
}
[[nodiscard]] inline auto failure_policy_name(FailurePolicy policy) -> std::string_view {
  return policy == FailurePolicy::kFailFast ? "fail-fast" : "failover";
}
[[nodiscard]] inline auto consistency_name(MigrationConsistency consistency) -> std::string_view {
  return consistency == MigrationConsistency::kFast ? "fast" : "strict";
}

[[nodiscard]] inline auto placement_value(const FleetPlacement& placement) -> Value {
  Value::List servers;
  for (const Server& server : placement.servers) {
    servers.push_back(Value::map({{"host", server.host},
                                  {"port", server.port},
                                  {"weight", server.weight},
                                  {"name", server.name}}));
  }
  const ProfileOptions& options = placement.profile_options;
  return Value::map({{"servers", Value::list(std::move(servers))},
                     {"profile", placement.profile},
                     {"hash", options.hash},
                     {"points", static_cast<std::int64_t>(options.points)},
                     {"weighted", options.weighted ? Value(*options.weighted) : Value()},
                     {"hash_tag", options.hash_tag}});
}

// RecordReader: reads the fields of a record's JSON, remembering the first thing wrong.
class RecordReader {
 public:
  [[nodiscard]] auto error() const noexcept -> const std::string& { return error_; }
  [[nodiscard]] auto ok() const noexcept -> bool { return error_.empty(); }

  auto fail(std::string what) -> bool {
    if (error_.empty()) {
      error_ = std::move(what);
    }
    return false;
  }

  // The members of `object`, exactly the `names` and no other.
  auto exactly(const Value& object, std::initializer_list<std::string_view> names,
               std::string_view what) -> bool {
    if (!object.is_map()) {
      return fail(std::string(what) + " is not an object");
    }
    for (const auto& [key, value] : object.as_map()) {
      (void)value;
      bool known = false;
      for (const std::string_view name : names) {
        known = known || (key.is_string() && key.as_string() == name);
      }
      if (!known) {
        return fail(std::string(what) + " has an unknown member");
      }
    }
    for (const std::string_view name : names) {
      if (object.find(name) == nullptr) {
        return fail(std::string(what) + " lacks '" + std::string(name) + "'");
      }
    }
    return true;
  }

  auto text(const Value& object, std::string_view name) -> std::string {
    const Value* value = object.find(name);
    if (value == nullptr || !value->is_string()) {
      fail("'" + std::string(name) + "' is not a string");
      return {};
    }
    return value->as_string();
  }

  auto integer(const Value& object, std::string_view name, std::int64_t low, std::int64_t high)
      -> std::int64_t {
    const Value* value = object.find(name);
    if (value == nullptr || !value->is_int() || value->as_int() < low || value->as_int() > high) {
      fail("'" + std::string(name) + "' is not an integer from " + std::to_string(low) + " to " +
           std::to_string(high));
      return low;
    }
    return value->as_int();
  }

  auto word(const Value& object, std::string_view name, std::string_view first,
            std::string_view second) -> bool {
    const std::string value = text(object, name);
    if (value != first && value != second) {
      fail("'" + std::string(name) + "' is neither " + std::string(first) + " nor " +
           std::string(second));
    }
    return value == second;
  }

  auto placement(const Value& object, std::string_view what) -> FleetPlacement {
    FleetPlacement out;
    if (!exactly(object, {"servers", "profile", "hash", "points", "weighted", "hash_tag"}, what)) {
      return out;
    }
    const Value* servers = object.find("servers");
    if (!servers->is_list() || servers->as_list().empty()) {
      fail(std::string(what) + ": 'servers' is not a list of servers");
      return out;
    }
    for (const Value& entry : servers->as_list()) {
      if (!exactly(entry, {"host", "port", "weight", "name"}, "a server")) {
        return out;
      }
      Server server;
      server.host = text(entry, "host");
      server.port = static_cast<std::uint16_t>(integer(entry, "port", 1, 65535));
      const Value* weight = entry.find("weight");
      if (weight->is_float()) {
        server.weight = weight->as_double();
      } else if (weight->is_int()) {
        server.weight = static_cast<double>(weight->as_int());
      } else {
        fail("a server's 'weight' is not a number");
      }
      server.name = text(entry, "name");
      out.servers.push_back(std::move(server));
    }
    out.profile = text(object, "profile");
    out.profile_options.hash = text(object, "hash");
    out.profile_options.points =
        static_cast<std::size_t>(integer(object, "points", 0, std::int64_t{1} << 20U));
    const Value* weighted = object.find("weighted");
    if (weighted->is_bool()) {
      out.profile_options.weighted = weighted->as_bool();
    } else if (!weighted->is_null()) {
      fail("'weighted' is neither a boolean nor null");
    }
    out.profile_options.hash_tag = text(object, "hash_tag");
    return out;
  }

 private:
  std::string error_;
};

}  // namespace detail

/// validate_fleet_record: throws ConfigError unless `record` could serve: valid servers (none
/// twice), a profile make_locator knows that accepts the options given, the same for the change's
/// next placement, which must differ from the current one, and an epoch of at least 1.
inline void validate_fleet_record(const FleetRecord& record) {
  if (record.epoch < 1) {
    detail::throw_config_error("fleet record: the epoch starts at 1", std::to_string(record.epoch));
  }
  const auto check = [](const FleetPlacement& placement) {
    validate_servers(placement.servers);
    // Builds the locator once: an unknown profile, or options it does not take, throw here.
    (void)make_locator(placement.profile, placement.servers, placement.profile_options);
  };
  check(record.placement);
  if (record.change) {
    check(record.change->next);
    if (record.change->next == record.placement) {
      detail::throw_config_error("fleet record: a change to the placement already in use",
                                 record.placement.profile);
    }
    const FleetPhase phase = record.change->phase;
    if (phase == FleetPhase::kSteady ||
        (phase == FleetPhase::kReadThrough && record.change->kind != FleetChangeKind::kMigrate)) {
      detail::throw_config_error("fleet record: a change cannot be in the phase", to_string(phase));
    }
  }
}

/// encode_fleet_record: the record as the JSON text kept in etcd. Throws ConfigError when a
/// text in it is not UTF-8 (JSON holds nothing else).
[[nodiscard]] inline auto encode_fleet_record(const FleetRecord& record) -> std::string {
  Value change;
  if (record.change) {
    change = Value::map({{"kind", to_string(record.change->kind)},
                         {"phase", static_cast<std::int64_t>(record.change->phase)},
                         {"next", detail::placement_value(record.change->next)},
                         {"consistency", detail::consistency_name(record.change->consistency)},
                         {"copied", record.change->copied}});
  }
  Value::List aborted;
  for (const std::string& endpoint : record.stale_copies) {
    aborted.emplace_back(endpoint);
  }
  const Value value =
      Value::map({{"format", detail::kFleetRecordFormat},
                  {"epoch", record.epoch},
                  {"placement", detail::placement_value(record.placement)},
                  {"key_prefix", record.key_prefix},
                  {"prefix_hashing", detail::prefix_hashing_name(record.prefix_hashing)},
                  {"failure_policy", detail::failure_policy_name(record.failure_policy)},
                  {"change", std::move(change)},
                  {"stale_copies", Value::list(std::move(aborted))}});
  CodecResult<std::string> text = json_encode(value);
  if (!text) {
    detail::throw_config_error("fleet record: not encodable as JSON (a text that is not UTF-8?)",
                               record.placement.profile);
  }
  return std::move(text).value();
}

/// decode_fleet_record: the record a JSON text holds, or kBadReply saying what is wrong with it
/// (the format, a member missing or unknown, a value out of range). It does not check that the
/// record could serve (validate_fleet_record does).
[[nodiscard]] inline auto decode_fleet_record(std::string_view text) -> StoreResult<FleetRecord> {
  DecodeLimits limits;
  limits.max_size = std::size_t{4} << 20U;
  limits.max_depth = 8;
  CodecResult<Value> json = json_decode(text, limits);
  if (!json) {
    return StoreStatus(StoreErrc::kBadReply, "fleet record: not JSON");
  }
  const Value& root = json.value();
  detail::RecordReader read;
  FleetRecord record;
  if (read.exactly(root,
                   {"format", "epoch", "placement", "key_prefix", "prefix_hashing",
                    "failure_policy", "change", "stale_copies"},
                   "the record")) {
    if (read.integer(root, "format", 1, 1) != detail::kFleetRecordFormat) {
      read.fail("an unknown format");
    }
    record.epoch = read.integer(root, "epoch", 1, std::numeric_limits<std::int64_t>::max());
    record.placement = read.placement(*root.find("placement"), "the placement");
    record.key_prefix = read.text(root, "key_prefix");
    record.prefix_hashing = read.word(root, "prefix_hashing", "bare-key", "prefixed-key")
                                ? PrefixHashing::kPrefixedKey
                                : PrefixHashing::kBareKey;
    record.failure_policy = read.word(root, "failure_policy", "fail-fast", "failover")
                                ? FailurePolicy::kFailover
                                : FailurePolicy::kFailFast;
    const Value& change = *root.find("change");
    if (!change.is_null() &&
        read.exactly(change, {"kind", "phase", "next", "consistency", "copied"}, "the change")) {
      FleetChange out;
      out.kind = read.word(change, "kind", "migrate", "reconfigure") ? FleetChangeKind::kReconfigure
                                                                     : FleetChangeKind::kMigrate;
      out.phase = static_cast<FleetPhase>(read.integer(change, "phase", 1, 4));
      out.next = read.placement(*change.find("next"), "the next placement");
      out.consistency = read.word(change, "consistency", "fast", "strict")
                            ? MigrationConsistency::kStrict
                            : MigrationConsistency::kFast;
      const Value* copied = change.find("copied");
      if (!copied->is_bool()) {
        read.fail("'copied' is not a boolean");
      } else {
        out.copied = copied->as_bool();
      }
      record.change = std::move(out);
    }
    const Value& aborted = *root.find("stale_copies");
    if (!aborted.is_list()) {
      read.fail("'stale_copies' is not a list");
    } else {
      for (const Value& endpoint : aborted.as_list()) {
        if (!endpoint.is_string()) {
          read.fail("'stale_copies' holds something other than text");
          break;
        }
        record.stale_copies.push_back(endpoint.as_string());
      }
    }
  }
  if (!read.ok()) {
    return StoreStatus(StoreErrc::kBadReply, "fleet record: " + read.error());
  }
  return record;
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_FLEET_RECORD_HPP_
