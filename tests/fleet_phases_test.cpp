// SPDX-License-Identifier: MIT
// fleet_phases_test.cpp: fleet_step, each command's way through the phases from every record
// it may meet, the epochs, the aborted copies, and every refusal.

#include "memshard/coordination/fleet_phases.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace fleet_phases_test {
namespace {

using memshard::fleet_step;
using memshard::FleetChangeKind;
using memshard::FleetCommand;
using memshard::FleetCommandKind;
using memshard::FleetPhase;
using memshard::FleetPlacement;
using memshard::FleetRecord;

auto placement(const char* servers) -> FleetPlacement {
  return {memshard::parse_servers(servers), "libmemcached-ketama", {}};
}

const FleetPlacement kA = placement("10.0.0.1:11211 10.0.0.2:11211");
const FleetPlacement kB = placement("10.0.0.1:11211 10.0.0.2:11211 10.0.0.3:11211");

auto steady(const FleetPlacement& on) -> FleetRecord {
  FleetRecord record;
  record.placement = on;
  return record;
}

// What a command's steps give from `record`: the phase of each record written (0 for steady),
// and the record it ends on; `refused` holds the reason when it stops short.
struct Drive {
  std::vector<int> phases;
  FleetRecord last;
  std::string refused;
};

auto drive(FleetRecord record, const FleetCommand& command, const FleetPlacement& target) -> Drive {
  Drive out;
  for (int steps = 0; steps < 10; ++steps) {
    const memshard::FleetStep step = fleet_step(record, command, target);
    if (step.done) {
      break;
    }
    if (!step.refused.empty()) {
      out.refused = step.refused;
      break;
    }
    EXPECT_EQ(step.next->epoch, record.epoch + 1);  // every write is a new epoch
    record = *step.next;
    out.phases.push_back(record.change ? static_cast<int>(record.change->phase) : 0);
  }
  out.last = record;
  return out;
}

auto migrate(const FleetPlacement& to, bool flushed = false) -> FleetCommand {
  return FleetCommand{FleetCommandKind::kMigrate, to, memshard::MigrationConsistency::kStrict,
                      flushed};
}
auto command(FleetCommandKind kind) -> FleetCommand { return FleetCommand{kind, {}, {}, false}; }

TEST(FleetPhasesTest, AMigrationOpensItsWindowThenCommitsToTheNewPlacement) {
  const Drive opened = drive(steady(kA), migrate(kB), kB);
  EXPECT_TRUE(opened.refused.empty()) << opened.refused;
  EXPECT_EQ(opened.phases, (std::vector<int>{1, 2}));
  ASSERT_TRUE(opened.last.change.has_value());
  EXPECT_EQ(opened.last.change->kind, FleetChangeKind::kMigrate);
  EXPECT_EQ(opened.last.change->next, kB);
  EXPECT_EQ(opened.last.change->consistency, memshard::MigrationConsistency::kStrict);
  EXPECT_TRUE(opened.last.change->copied);
  EXPECT_EQ(opened.last.epoch, 3);
  // Again: nothing to do.
  EXPECT_TRUE(drive(opened.last, migrate(kB), kB).phases.empty());

  const Drive committed = drive(opened.last, command(FleetCommandKind::kCommit), kB);
  EXPECT_TRUE(committed.refused.empty()) << committed.refused;
  EXPECT_EQ(committed.phases, (std::vector<int>{3, 4, 0}));
  EXPECT_EQ(committed.last.placement, kB);
  EXPECT_FALSE(committed.last.change.has_value());
  EXPECT_TRUE(committed.last.stale_copies.empty());
  EXPECT_EQ(committed.last.epoch, 6);
}

TEST(FleetPhasesTest, ASwitchSkipsTheWindow) {
  const FleetCommand to_b{FleetCommandKind::kReconfigure, kB, {}, false};
  const Drive switched = drive(steady(kA), to_b, kB);
  EXPECT_TRUE(switched.refused.empty()) << switched.refused;
  EXPECT_EQ(switched.phases, (std::vector<int>{1, 3, 4, 0}));
  EXPECT_EQ(switched.last.placement, kB);
  // A switch left at phase 1 (its coordinator gone) is finished by commit too.
  FleetRecord halfway = steady(kA);
  halfway.change =
      memshard::FleetChange{FleetChangeKind::kReconfigure, FleetPhase::kPrepare, kB, {}, false};
  EXPECT_EQ(drive(halfway, command(FleetCommandKind::kCommit), kB).phases,
            (std::vector<int>{3, 4, 0}));
}

TEST(FleetPhasesTest, AnAbortFromTheWindowStepsBackAndLeavesItsServersToFlush) {
  const FleetRecord window = drive(steady(kA), migrate(kB), kB).last;
  const Drive aborted = drive(window, command(FleetCommandKind::kAbort), kA);
  EXPECT_TRUE(aborted.refused.empty()) << aborted.refused;
  EXPECT_EQ(aborted.phases, (std::vector<int>{1, 0}));
  EXPECT_EQ(aborted.last.placement, kA);
  EXPECT_EQ(aborted.last.stale_copies,
            (std::vector<std::string>{"10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"}));
  // Onto those servers again only once flushed, which clears them.
  const Drive held = drive(aborted.last, migrate(kB), kB);
  EXPECT_NE(held.refused.find("flush"), std::string::npos) << held.refused;
  EXPECT_TRUE(held.phases.empty());
  const Drive flushed = drive(aborted.last, migrate(kB, true), kB);
  EXPECT_TRUE(flushed.refused.empty()) << flushed.refused;
  EXPECT_TRUE(flushed.last.stale_copies.empty());
}

TEST(FleetPhasesTest, AnAbortBeforeTheWindowLeavesNothingToFlush) {
  FleetRecord prepared = steady(kA);
  prepared.change =
      memshard::FleetChange{FleetChangeKind::kMigrate, FleetPhase::kPrepare, kB, {}, false};
  const Drive aborted = drive(prepared, command(FleetCommandKind::kAbort), kA);
  EXPECT_EQ(aborted.phases, (std::vector<int>{0}));
  EXPECT_TRUE(aborted.last.stale_copies.empty());
}

TEST(FleetPhasesTest, ACommandWhoseTargetIsReachedIsDone) {
  // Steady on its target: where a commit or an abort ends (FleetAdmin refuses to start one on a
  // steady fleet).
  EXPECT_TRUE(fleet_step(steady(kA), command(FleetCommandKind::kAbort), kA).done);
  EXPECT_TRUE(fleet_step(steady(kB), command(FleetCommandKind::kCommit), kB).done);
  EXPECT_TRUE(
      fleet_step(steady(kB), FleetCommand{FleetCommandKind::kReconfigure, kB, {}, false}, kB).done);
}

TEST(FleetPhasesTest, EveryCommandThatCannotGoOnSaysWhy) {
  const FleetRecord window = drive(steady(kA), migrate(kB), kB).last;
  FleetRecord settling = window;
  settling.change->phase = FleetPhase::kSettle;
  FleetRecord prepared = window;
  prepared.change->phase = FleetPhase::kPrepare;
  const FleetPlacement kC = placement("10.0.0.4:11211");
  const std::vector<std::tuple<FleetRecord, FleetCommand, std::string>> refusals = {
      {steady(kA), command(FleetCommandKind::kCommit), "no change"},
      {steady(kA), migrate(kA), "placed so already"},
      {window, migrate(kC), "in phase 2"},
      {window, FleetCommand{FleetCommandKind::kReconfigure, kB, {}, false}, "a migrate is"},
      {prepared, command(FleetCommandKind::kCommit), "migrate first"},
      {settling, command(FleetCommandKind::kAbort), "past turning back"},
  };
  for (const auto& [record, cmd, why] : refusals) {
    SCOPED_TRACE(why);
    const FleetPlacement target = cmd.kind == FleetCommandKind::kAbort ? record.placement
                                  : cmd.kind == FleetCommandKind::kCommit && record.change
                                      ? record.change->next
                                      : cmd.next;
    const memshard::FleetStep step = fleet_step(record, cmd, target);
    EXPECT_FALSE(step.done);
    EXPECT_FALSE(step.next.has_value());
    EXPECT_NE(step.refused.find(why), std::string::npos) << step.refused;
  }
}

}  // namespace
}  // namespace fleet_phases_test
