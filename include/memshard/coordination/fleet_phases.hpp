// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_FLEET_PHASES_HPP_
#define MEMSHARD_COORDINATION_FLEET_PHASES_HPP_

// coordination/fleet_phases.hpp: the way an operator's command takes a fleet's record, one
// phase at a time (coordination/fleet_record.hpp has the phases). fleet_step() gives the record
// that comes next, or says the command is done or cannot go on; it does no I/O. FleetAdmin
// writes each step only once every live member acknowledged the record before it, so that at
// most two adjacent phases are ever served at once:
//
//   migrate      steady A -> 1 prepare -> 2 read-through    (done: every member reads through)
//   commit       2 -> 3 settle -> 4 done -> steady B         (a migration)
//                1 -> 3 settle -> 4 done -> steady B         (a switch begun by reconfigure)
//   reconfigure  steady A -> 1 prepare -> 3 settle -> 4 done -> steady B
//   abort        2 -> 1 -> steady A; 1 -> steady A           (3 and 4 are past turning back)
//
// While phase 1 is served, every write invalidates B's owner of its key, so copies made in a
// read-through window stay current through a step back from 2 to 1. Once the fleet is steady on
// A again, nothing keeps them current: an abort of a change that opened its window
// (FleetChange::copied) leaves B's servers in `stale_copies`, and a later change onto one of
// them is refused until the operator says it was flushed (FleetCommand::flushed), which clears
// it. Likewise, from phase 4 on nothing keeps A's copies of the keys that moved current, and a
// later change could bring a key back to them. FleetAdmin sweeps them before it writes those
// records (migration/sweeper.hpp): A's servers in phase 3, B's in phase 1 of an abort; a
// server it could not sweep whole is put (or left) in `stale_copies`.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memshard/coordination/fleet_record.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// FleetCommandKind: what the operator asks for.
enum class FleetCommandKind : std::uint8_t { kMigrate, kCommit, kAbort, kReconfigure };

/// FleetCommand: a command and, for migrate and reconfigure, where to.
struct FleetCommand {
  FleetCommandKind kind = FleetCommandKind::kMigrate;
  FleetPlacement next;  ///< migrate, reconfigure: the placement to move to
  MigrationConsistency consistency = MigrationConsistency::kFast;  ///< migrate
  bool flushed = false;  ///< migrate, reconfigure: `next`'s servers were flushed since an abort
};

/// FleetStep: what comes after a record on a command's way: the next record to write, or done,
/// or the reason the command cannot go on from there.
struct FleetStep {
  std::optional<FleetRecord> next;
  bool done = false;
  std::string refused;
};

namespace detail {

[[nodiscard]] inline auto placement_endpoints(const FleetPlacement& placement)
    -> std::vector<std::string> {
  std::vector<std::string> out;
  for (const Server& server : placement.servers) {
    out.push_back(server.endpoint());
  }
  return out;
}

[[nodiscard]] inline auto advanced(FleetRecord record) -> FleetRecord {
  ++record.epoch;
  return record;
}

[[nodiscard]] inline auto refuse(std::string why) -> FleetStep {
  return FleetStep{std::nullopt, false, std::move(why)};
}

[[nodiscard]] inline auto write(FleetRecord next) -> FleetStep {
  return FleetStep{std::move(next), false, {}};
}

[[nodiscard]] inline auto describe(const FleetRecord& record) -> std::string {
  if (!record.change) {
    return "the fleet is steady";
  }
  return "a " + std::string(to_string(record.change->kind)) + " is in phase " +
         std::to_string(static_cast<int>(record.change->phase)) + " (" +
         std::string(to_string(record.change->phase)) + ")";
}

// A new change from a steady record to `command.next`.
[[nodiscard]] inline auto begin(const FleetRecord& current, const FleetCommand& command,
                                FleetChangeKind kind) -> FleetStep {
  if (command.next == current.placement) {
    return refuse("the fleet is placed so already");
  }
  FleetRecord next = advanced(current);
  std::vector<std::string> held;
  for (const std::string& endpoint : placement_endpoints(command.next)) {
    if (std::find(next.stale_copies.begin(), next.stale_copies.end(), endpoint) !=
        next.stale_copies.end()) {
      held.push_back(endpoint);
    }
  }
  if (!held.empty() && !command.flushed) {
    std::string list;
    for (const std::string& endpoint : held) {
      list.append(list.empty() ? "" : ", ").append(endpoint);
    }
    return refuse(list + " may hold copies nothing kept current (an aborted read-through " +
                  "window's, or a sweep's that failed): flush them, then say so (flushed)");
  }
  std::erase_if(next.stale_copies, [&](const std::string& endpoint) {
    return std::find(held.begin(), held.end(), endpoint) != held.end();
  });
  next.change = FleetChange{kind, FleetPhase::kPrepare, command.next, command.consistency};
  return write(std::move(next));
}

// The change in `current` moved to `phase`.
[[nodiscard]] inline auto to_phase(const FleetRecord& current, FleetPhase phase) -> FleetStep {
  FleetRecord next = advanced(current);
  next.change->phase = phase;
  return write(std::move(next));
}

// The change in `current` ended: steady on its next placement (commit) or its old one (abort,
// which leaves the next placement's servers in stale_copies when the window opened).
[[nodiscard]] inline auto settle(const FleetRecord& current, bool commit) -> FleetStep {
  FleetRecord next = advanced(current);
  if (commit) {
    next.placement = current.change->next;
  } else if (current.change->copied) {
    for (const std::string& endpoint : placement_endpoints(current.change->next)) {
      if (std::find(next.stale_copies.begin(), next.stale_copies.end(), endpoint) ==
          next.stale_copies.end()) {
        next.stale_copies.push_back(endpoint);
      }
    }
  }
  next.change.reset();
  return write(std::move(next));
}

}  // namespace detail

/// fleet_step: see the file comment. `target` is the placement the command ends on (for commit,
/// the change's next placement when the command began; for abort, the placement in use then): a
/// commit, an abort or a switch is done once the record is steady on it, so that a command
/// carried on after a restart finds where it stopped. (FleetAdmin refuses to begin a commit or
/// an abort on a steady fleet.)
[[nodiscard]] inline auto fleet_step(const FleetRecord& current, const FleetCommand& command,
                                     const FleetPlacement& target) -> FleetStep {
  const std::optional<FleetChange>& change = current.change;
  switch (command.kind) {
    case FleetCommandKind::kMigrate:
      if (!change) {
        return detail::begin(current, command, FleetChangeKind::kMigrate);
      }
      if (change->kind == FleetChangeKind::kMigrate && change->next == command.next) {
        if (change->phase == FleetPhase::kPrepare) {
          FleetStep open = detail::to_phase(current, FleetPhase::kReadThrough);
          open.next->change->copied = true;
          return open;
        }
        if (change->phase == FleetPhase::kReadThrough) {
          return FleetStep{std::nullopt, true, {}};
        }
      }
      return detail::refuse(detail::describe(current));
    case FleetCommandKind::kReconfigure:
    case FleetCommandKind::kCommit:
      if (!change) {
        if (current.placement == target && command.kind == FleetCommandKind::kCommit) {
          return FleetStep{std::nullopt, true, {}};
        }
        if (command.kind == FleetCommandKind::kCommit) {
          return detail::refuse("no change is in progress");
        }
        if (current.placement == target) {
          return FleetStep{std::nullopt, true, {}};
        }
        return detail::begin(current, command, FleetChangeKind::kReconfigure);
      }
      if (command.kind == FleetCommandKind::kReconfigure &&
          (change->kind != FleetChangeKind::kReconfigure || change->next != command.next)) {
        return detail::refuse(detail::describe(current));
      }
      switch (change->phase) {
        case FleetPhase::kPrepare:
          if (change->kind == FleetChangeKind::kMigrate) {
            return detail::refuse("the read-through window is not open yet (migrate first)");
          }
          return detail::to_phase(current, FleetPhase::kSettle);
        case FleetPhase::kReadThrough:
          return detail::to_phase(current, FleetPhase::kSettle);
        case FleetPhase::kSettle:
          return detail::to_phase(current, FleetPhase::kDone);
        case FleetPhase::kDone:
          return detail::settle(current, true);
        case FleetPhase::kSteady:
          break;
      }
      return detail::refuse(detail::describe(current));
    case FleetCommandKind::kAbort:
      if (!change) {
        return current.placement == target ? FleetStep{std::nullopt, true, {}}
                                           : detail::refuse("no change is in progress");
      }
      if (change->phase == FleetPhase::kPrepare) {
        return detail::settle(current, false);
      }
      if (change->phase == FleetPhase::kReadThrough) {
        return detail::to_phase(current, FleetPhase::kPrepare);
      }
      return detail::refuse(detail::describe(current) + ": past turning back (commit it)");
  }
  return detail::refuse("unknown command");
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_FLEET_PHASES_HPP_
