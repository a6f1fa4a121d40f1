// SPDX-License-Identifier: MIT
// fleet/run.cpp: memshard-fleet's commands over FleetAdmin.

#include "fleet/run.hpp"

#include <chrono>
#include <memshard/codecs/json.hpp>
#include <memshard/coordination/fleet_admin.hpp>
#include <memshard/errors.hpp>
#include <memshard/placement/server.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fleet/command_line.hpp"

namespace memshard::fleet_tool {
namespace {

auto servers_text(const std::vector<Server>& servers) -> std::string {
  std::string out;
  for (const Server& server : servers) {
    out.append(out.empty() ? "" : " ").append(server.endpoint());
    if (server.weight != 1) {
      out.append(":").append(std::to_string(server.weight));
      while (out.back() == '0') {
        out.pop_back();
      }
      if (out.back() == '.') {
        out.pop_back();
      }
    }
    if (!server.name.empty()) {
      out.append(server.weight == 1 ? ":1:" : ":").append(server.name);
    }
  }
  return out;
}

void print_placement(std::ostream& out, std::string_view indent, const FleetPlacement& placement) {
  out << indent << "profile: " << placement.profile << '\n';
  const ProfileOptions& options = placement.profile_options;
  if (!options.hash.empty()) {
    out << indent << "hash: " << options.hash << '\n';
  }
  if (options.points != 0) {
    out << indent << "points: " << options.points << '\n';
  }
  if (options.weighted) {
    out << indent << "weighted: " << (*options.weighted ? "true" : "false") << '\n';
  }
  if (!options.hash_tag.empty()) {
    out << indent << "hash_tag: " << options.hash_tag << '\n';
  }
  out << indent << "servers: " << servers_text(placement.servers) << '\n';
}

auto show(FleetAdmin& admin, const FleetCommandLine& command, std::ostream& out, std::ostream& err)
    -> int {
  StoreResult<FleetView> view = admin.show(command.name);
  if (!view) {
    err << kProgram << ": " << view.status().message() << '\n';
    return kExitFailed;
  }
  const FleetRecord& record = view->record;
  if (command.json) {
    out << "{\"name\":\"" << command.name << "\",\"revision\":" << view->mod_revision
        << ",\"record\":" << encode_fleet_record(record) << "}\n";
    return kExitOk;
  }
  out << "fleet " << command.name << " (epoch " << record.epoch << ", etcd revision "
      << view->mod_revision << ")\n";
  print_placement(out, "  ", record.placement);
  if (!record.key_prefix.empty()) {
    out << "  key_prefix: " << record.key_prefix << '\n';
  }
  out << "  prefix_hashing: " << detail::prefix_hashing_name(record.prefix_hashing) << '\n';
  out << "  failure_policy: " << detail::failure_policy_name(record.failure_policy) << '\n';
  if (!record.change) {
    out << "  change: none (steady)\n";
    return kExitOk;
  }
  out << "  change: " << to_string(record.change->kind) << ", phase "
      << static_cast<int>(record.change->phase) << " (" << to_string(record.change->phase)
      << "), consistency " << detail::consistency_name(record.change->consistency) << '\n';
  print_placement(out, "    next ", record.change->next);
  return kExitOk;
}

auto members(FleetAdmin& admin, const FleetCommandLine& command, std::ostream& out,
             std::ostream& err) -> int {
  // The record first: a fleet that does not exist is an error, not an empty list.
  StoreResult<FleetView> view = admin.show(command.name);
  if (!view) {
    err << kProgram << ": " << view.status().message() << '\n';
    return kExitFailed;
  }
  StoreResult<std::vector<FleetMemberInfo>> list = admin.members(command.name);
  if (!list) {
    err << kProgram << ": " << list.status().message() << '\n';
    return kExitFailed;
  }
  const std::int64_t epoch = view->record.epoch;
  if (command.json) {
    Value::List entries;
    for (const FleetMemberInfo& member : list.value()) {
      entries.push_back(Value::map({{"id", member.id},
                                    {"epoch", member.epoch},
                                    {"host", member.host},
                                    {"pid", member.pid},
                                    {"readable", member.readable},
                                    {"current", member.epoch == epoch}}));
    }
    CodecResult<std::string> text = json_encode(Value::map(
        {{"name", command.name}, {"epoch", epoch}, {"members", Value::list(std::move(entries))}}));
    if (!text) {
      err << kProgram << ": a member's registration is not UTF-8\n";
      return kExitFailed;
    }
    out << text.value() << '\n';
    return kExitOk;
  }
  std::size_t current = 0;
  for (const FleetMemberInfo& member : list.value()) {
    current += member.epoch == epoch ? 1 : 0;
    if (!member.readable) {
      out << member.id << "  (a registration that cannot be read)\n";
      continue;
    }
    out << member.id << "  epoch " << member.epoch << (member.epoch == epoch ? "" : " (behind)")
        << "  " << member.host << "  pid " << member.pid << '\n';
  }
  out << list->size() << " live member" << (list->size() == 1 ? "" : "s") << ", " << current
      << " serving epoch " << epoch << '\n';
  return kExitOk;
}

auto create(FleetAdmin& admin, const FleetCommandLine& command, std::ostream& out,
            std::ostream& err) -> int {
  FleetRecord record;
  record.placement.servers = parse_servers(command.servers);
  record.placement.profile = command.profile;
  record.placement.profile_options = command.profile_options;
  record.key_prefix = command.key_prefix;
  record.prefix_hashing = command.prefix_hashing;
  record.failure_policy = command.failure_policy;
  const StoreStatus created = admin.create(command.name, std::move(record));
  if (!created) {
    err << kProgram << ": " << created.message() << '\n';
    return kExitFailed;
  }
  out << "created fleet " << command.name << '\n';
  return kExitOk;
}

// The progress of a command, on `err`, one line each time the count of members changes.
auto progress_line(std::ostream& err, const std::string& name) -> FleetProgressFn {
  return [&err, name](const FleetProgress& progress) {
    err << kProgram << ": " << name << ": epoch " << progress.epoch << " (phase "
        << static_cast<int>(progress.phase) << ", " << to_string(progress.phase)
        << "): " << progress.acknowledged << " of " << progress.live << " live member"
        << (progress.live == 1 ? "" : "s") << '\n';
  };
}

auto change(FleetAdmin& admin, const FleetCommandLine& command, std::ostream& out,
            std::ostream& err) -> int {
  FleetCommand order;
  switch (command.action) {
    case FleetAction::kMigrate:
      order.kind = FleetCommandKind::kMigrate;
      break;
    case FleetAction::kReconfigure:
      order.kind = FleetCommandKind::kReconfigure;
      break;
    case FleetAction::kCommit:
      order.kind = FleetCommandKind::kCommit;
      break;
    default:
      order.kind = FleetCommandKind::kAbort;
      break;
  }
  if (!command.servers.empty()) {
    // The profile and its options as the fleet has them, unless the command names others.
    StoreResult<FleetView> view = admin.show(command.name);
    if (!view) {
      err << kProgram << ": " << view.status().message() << '\n';
      return kExitFailed;
    }
    order.next = view->record.placement;
    order.next.servers = parse_servers(command.servers);
    if (!command.profile.empty()) {
      order.next.profile = command.profile;
      order.next.profile_options = command.profile_options;
    }
    order.consistency = command.consistency;
    order.flushed = command.flushed;
  }
  const StoreStatus applied =
      admin.apply(command.name, order, command.timeout, progress_line(err, command.name));
  if (!applied) {
    err << kProgram << ": " << applied.message() << '\n';
    return kExitFailed;
  }
  for (const SweptServer& swept : admin.last_sweep().servers) {
    if (swept.ok()) {
      err << kProgram << ": swept " << swept.server << ": " << swept.deleted << " of "
          << swept.listed << " listed keys deleted (placed elsewhere)\n";
    } else {
      err << kProgram << ": " << swept.server << ": not swept whole (" << swept.error
          << "): recorded as holding stale copies\n";
    }
  }
  StoreResult<FleetView> now = admin.show(command.name);
  const std::int64_t epoch = now ? now->record.epoch : 0;
  switch (order.kind) {
    case FleetCommandKind::kMigrate:
      out << "fleet " << command.name << ": every live member reads through to the new placement"
          << " (epoch " << epoch << "); commit or abort next\n";
      break;
    case FleetCommandKind::kAbort:
      out << "fleet " << command.name << ": back on its placement (epoch " << epoch << ")\n";
      break;
    default:
      out << "fleet " << command.name << ": on its new placement (epoch " << epoch << ")\n";
      break;
  }
  return kExitOk;
}

auto evict(FleetAdmin& admin, const FleetCommandLine& command, std::ostream& out, std::ostream& err)
    -> int {
  const StoreStatus evicted = admin.evict(command.name, command.member);
  if (!evicted) {
    err << kProgram << ": " << evicted.message() << '\n';
    return kExitFailed;
  }
  out << "evicted " << command.member << " from fleet " << command.name << '\n';
  return kExitOk;
}

}  // namespace

auto run(std::span<const std::string_view> args, std::string_view store_from_environment,
         std::ostream& out, std::ostream& err) -> int {
  const ParsedFleetCommandLine parsed = parse_fleet_command_line(args, store_from_environment);
  if (!parsed.ok()) {
    err << kProgram << ": " << parsed.error << '\n';
    return kExitUsage;
  }
  const FleetCommandLine& command = parsed.command;
  if (command.action == FleetAction::kHelp) {
    print_usage(out);
    return kExitOk;
  }
  if (command.action == FleetAction::kVersion) {
    print_version(out);
    return kExitOk;
  }
  try {
    EtcdOptions options;
    options.request_timeout =
        std::min<std::chrono::milliseconds>(command.timeout, std::chrono::seconds{5});
    options.connect_timeout = std::min(options.connect_timeout, options.request_timeout);
    FleetSweep sweep;
    sweep.enabled = !command.no_sweep;
    sweep.bounds.server_timeout = command.timeout;
    FleetAdmin admin(command.store, options, sweep);
    switch (command.action) {
      case FleetAction::kCreate:
        return create(admin, command, out, err);
      case FleetAction::kShow:
        return show(admin, command, out, err);
      case FleetAction::kMembers:
        return members(admin, command, out, err);
      case FleetAction::kMigrate:
      case FleetAction::kCommit:
      case FleetAction::kAbort:
      case FleetAction::kReconfigure:
        return change(admin, command, out, err);
      case FleetAction::kEvict:
        return evict(admin, command, out, err);
      default:
        break;
    }
  } catch (const ConfigError& error) {
    err << kProgram << ": " << error.what() << '\n';
    return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace memshard::fleet_tool
