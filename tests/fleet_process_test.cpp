// SPDX-License-Identifier: MIT
// Many processes as one fleet (coordination/fleet_member.hpp), end to end: member processes
// (fleet_member_process.cpp), each with its own client, read and write shared keys while
// FleetAdmin moves the fleet through a migration and its commit, or through a reconfigure; their
// logs, merged, hold no wrong value, no stale read and no lost acknowledged write. Also with
// eight members, and under etcd's faults: its leader killed (a 3-member cluster), and etcd
// stopped as a whole for less and for more than the members' lease TTL.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "memshard/fleet.hpp"
#include "support/child_process.hpp"
#include "support/etcd_server.hpp"
#include "support/fault_proxy.hpp"
#include "support/fleet_processes.hpp"
#include "support/history.hpp"
#include "support/server_set.hpp"

namespace fleet_process_test {
namespace {

using memshard::FleetAdmin;
using memshard::FleetCommand;
using memshard::FleetCommandKind;
using memshard::MigrationConsistency;
using memshard::testing::EtcdCluster;
using memshard::testing::EtcdServer;
using memshard::testing::FleetProcesses;
using memshard::testing::HistoryReport;
using memshard::testing::ServerSet;
using std::chrono::milliseconds;

constexpr std::size_t kMembers = 4;
constexpr auto kLeaseTtl = std::chrono::seconds{3};  // fleet_member_process's
constexpr milliseconds kWait = FleetProcesses::kWait;

// Enough calls were checked, and none broke a rule.
void expect_clean(const HistoryReport& report) {
  EXPECT_GT(report.hits, 1'000U);
  EXPECT_EQ(report.wrong_values, 0U);
  EXPECT_EQ(report.stale_reads, 0U);
  EXPECT_EQ(report.lost_writes, 0U);
}

class FleetProcessTest : public ::testing::Test {
 protected:
  // The etcd members of the store: 1, or a cluster.
  [[nodiscard]] virtual auto etcd_members() const -> std::size_t { return 1; }

  void SetUp() override {
    if (etcd_members() == 1) {
      etcd_ = std::make_unique<EtcdServer>();
      store_ = etcd_->url();
    } else {
      cluster_ = std::make_unique<EtcdCluster>(etcd_members());
      store_ = cluster_->url();
    }
    admin_ = std::make_unique<FleetAdmin>(store_);
    ASSERT_TRUE(servers_.reset());
    fleet_ = std::make_unique<FleetProcesses>(servers_, store_, *admin_);
  }
  void TearDown() override { fleet_.reset(); }

  [[nodiscard]] auto placement(std::size_t count) const -> memshard::FleetPlacement {
    return fleet_->placement(count);
  }
  void start_members(std::size_t count = kMembers) {
    fleet_->start(count, [this](std::size_t m) {
      return m == 0 && proxy_ ? "etcd://" + proxy_->spec() : store_;
    });
  }
  void let_traffic_pass(std::uint64_t calls) { fleet_->let_traffic_pass(calls); }
  auto stop_and_check() -> HistoryReport { return fleet_->stop_and_check(); }

  // A migration and its commit under `consistency` across `count` members, with the members'
  // load before, in the window and after; the merged logs' report.
  auto migrate(MigrationConsistency consistency, std::size_t count = kMembers) -> HistoryReport;

  // Creates the fleet "web" on the first `servers` servers, starts `members` members and lets
  // `calls` of their load pass.
  void start_fleet(std::size_t servers, std::size_t members, std::uint64_t calls = 2'000) {
    memshard::FleetRecord record;
    record.placement = placement(servers);
    ASSERT_TRUE(admin_->create("web", record).ok());
    start_members(members);
    let_traffic_pass(calls);
  }

  // Migrates the fleet to 5 servers under `consistency` and commits, each told of its progress
  // (`progress`), with `calls` of load in the window and after.
  void migrate_and_commit(MigrationConsistency consistency = MigrationConsistency::kStrict,
                          std::uint64_t calls = 2'000,
                          const memshard::FleetProgressFn& progress = {}) {
    const FleetCommand migrate{FleetCommandKind::kMigrate, placement(5), consistency, false};
    const auto migrated = admin_->apply("web", migrate, kWait, progress);
    ASSERT_TRUE(migrated.ok()) << migrated;
    let_traffic_pass(calls);
    const auto committed = admin_->apply(
        "web", FleetCommand{FleetCommandKind::kCommit, {}, {}, false}, kWait, progress);
    ASSERT_TRUE(committed.ok()) << committed;
    let_traffic_pass(calls);
  }

  ServerSet servers_{5};
  std::unique_ptr<EtcdServer> etcd_;      // the store, when it has one member
  std::unique_ptr<EtcdCluster> cluster_;  // the store, when it has several
  std::string store_;
  std::unique_ptr<FleetAdmin> admin_;
  std::unique_ptr<FleetProcesses> fleet_;
  std::unique_ptr<memshard::testing::FaultProxy> proxy_;  // member 0's way to etcd, when set
};

TEST_F(FleetProcessTest, AStrictMigrationAcrossEightMemberProcessesServesNothingStale) {
  expect_clean(migrate(MigrationConsistency::kStrict, 8));
}

TEST_F(FleetProcessTest, AFastMigrationAcrossMemberProcessesServesAlmostNothingStale) {
  const HistoryReport report = migrate(MigrationConsistency::kFast);
  EXPECT_GT(report.hits, 1'000U);
  EXPECT_EQ(report.wrong_values, 0U);
  EXPECT_LE(report.stale_reads * 10'000, report.hits) << "over 1e-4 of the hits";
  EXPECT_EQ(report.lost_writes, 0U);
}

auto FleetProcessTest::migrate(MigrationConsistency consistency, std::size_t count)
    -> HistoryReport {
  start_fleet(4, count, 3'000);
  migrate_and_commit(consistency, 3'000);
  return stop_and_check();
}

// Two grows and two shrinks (3 -> 4 -> 5 -> 4 -> 3) across eight members: a shrink brings keys
// back onto servers that lost them before, which the sweep of each commit emptied of their old
// copies.
TEST_F(FleetProcessTest, AReconfigureAcrossEightMemberProcessesServesNothingStale) {
  start_fleet(3, 8, 3'000);
  std::size_t before = 3;
  for (const std::size_t count : {4U, 5U, 4U, 3U}) {
    const FleetCommand change{FleetCommandKind::kReconfigure, placement(count), {}, false};
    const auto changed = admin_->apply("web", change, kWait);
    ASSERT_TRUE(changed.ok()) << changed;
    // Every old server swept whole (what it deleted depends on the keys the members wrote
    // meanwhile: each write deletes the old copy of its key).
    ASSERT_EQ(admin_->last_sweep().servers.size(), before);
    ASSERT_TRUE(admin_->last_sweep().complete());
    std::uint64_t listed = 0;
    for (const memshard::SweptServer& swept : admin_->last_sweep().servers) {
      listed += swept.listed;
    }
    EXPECT_GT(listed, 0U);
    before = count;
    let_traffic_pass(3'000);
  }
  expect_clean(stop_and_check());
}

// A member stopped (SIGSTOP) before the migration and continued after its commit, and still
// cut off from etcd for a while once it runs again: the fleet moves on once its lease lapsed;
// woken, the member is fenced by its own clock before its first call, and serves again only on
// the newest record (without the fence it would serve its old phase all that while).
TEST_F(FleetProcessTest, AMemberStoppedAcrossAMigrationServesNothingFromItsOldPhase) {
  proxy_ = std::make_unique<memshard::testing::FaultProxy>(etcd_->client_port());
  start_fleet(4, kMembers);
  ASSERT_EQ(::kill(fleet_->member(0).pid(), SIGSTOP), 0);
  proxy_->set_blackhole(memshard::testing::Direction::kBoth);
  migrate_and_commit();  // once m0's lease lapsed
  ASSERT_EQ(::kill(fleet_->member(0).pid(), SIGCONT), 0);
  let_traffic_pass(3'000);  // m0 runs, cut off: fenced
  proxy_->heal();
  fleet_->wait_until_member_serves_the_record("m0");
  let_traffic_pass(3'000);
  expect_clean(stop_and_check());
}

// Members join and leave while a migration and its commit go through their phases: at each
// phase's first progress report, a new member starts (it registers at epoch 0, so the phase
// waits for it) or one leaves (SIGTERM: it revokes its lease), in turn.
TEST_F(FleetProcessTest, MembersJoiningAndLeavingInEveryPhaseServeNothingStale) {
  start_fleet(4, 4);
  std::size_t events = 0;
  std::size_t next_to_leave = 0;
  std::optional<std::pair<std::int64_t, memshard::FleetPhase>> last;
  const memshard::FleetProgressFn churn = [&](const memshard::FleetProgress& progress) {
    const std::pair<std::int64_t, memshard::FleetPhase> now{progress.epoch, progress.phase};
    if (last == now) {
      return;
    }
    last = now;
    if (events++ % 2 == 0) {
      fleet_->start(1);
    } else {
      fleet_->leave(next_to_leave++);
    }
  };
  migrate_and_commit(MigrationConsistency::kStrict, 2'000, churn);
  EXPECT_GE(events, 5U);  // steady, 1, 2, then 3, 4 (and the steady record's bookkeeping)
  expect_clean(stop_and_check());
}

#ifdef MEMSHARD_FLEET_PATH
// The staggered rollout as an operator makes it: `memshard-fleet migrate`, then `commit`, while
// 4 or 8 member processes read and write; each member hears of each phase at its own moment.
struct Rollout {
  std::size_t members;
  MigrationConsistency consistency;
};

class FleetRolloutTest : public FleetProcessTest, public ::testing::WithParamInterface<Rollout> {
 protected:
  auto tool(std::vector<std::string> args) -> memshard::testing::RunResult {
    args.insert(args.begin(), {"--store", store_, "--timeout", "20"});
    return memshard::testing::run_program(MEMSHARD_FLEET_PATH, std::move(args), {},
                                          milliseconds{60'000});
  }
};

TEST_P(FleetRolloutTest, ThroughTheToolServesNothingStale) {
  const Rollout rollout = GetParam();
  start_fleet(4, rollout.members, 3'000);
  std::string servers;
  for (const memshard::Server& server : servers_.list()) {
    servers += (servers.empty() ? "" : " ") + server.endpoint();
  }
  const bool strict = rollout.consistency == MigrationConsistency::kStrict;
  const auto migrated =
      tool({"migrate", "web", "--servers", servers, "--consistency", strict ? "strict" : "fast"});
  ASSERT_EQ(migrated.status, 0) << migrated;
  let_traffic_pass(3'000);
  const auto committed = tool({"commit", "web"});
  ASSERT_EQ(committed.status, 0) << committed;
  EXPECT_NE(committed.err.find(": swept "), std::string::npos) << committed;
  let_traffic_pass(3'000);
  const HistoryReport report = stop_and_check();
  EXPECT_GT(report.hits, 1'000U);
  EXPECT_EQ(report.wrong_values, 0U);
  EXPECT_EQ(report.lost_writes, 0U);
  if (strict) {
    EXPECT_EQ(report.stale_reads, 0U);
  } else {
    EXPECT_LE(report.stale_reads * 10'000, report.hits) << "over 1e-4 of the hits";
  }
}

INSTANTIATE_TEST_SUITE_P(Members, FleetRolloutTest,
                         ::testing::Values(Rollout{4, MigrationConsistency::kStrict},
                                           Rollout{4, MigrationConsistency::kFast},
                                           Rollout{8, MigrationConsistency::kStrict},
                                           Rollout{8, MigrationConsistency::kFast}),
                         [](const ::testing::TestParamInfo<Rollout>& param_info) {
                           return std::to_string(param_info.param.members) +
                                  (param_info.param.consistency == MigrationConsistency::kStrict
                                       ? "Strict"
                                       : "Fast");
                         });
#endif

// The same against a 3-member etcd cluster, under its faults.
class FleetProcessClusterTest : public FleetProcessTest {
 protected:
  [[nodiscard]] auto etcd_members() const -> std::size_t override { return 3; }

  // The fleet on 4 servers, its members started and calling.
  void start() { start_fleet(4, kMembers); }
};

// The leader dies (SIGKILL) while the read-through window is open: the members' keep-alives and
// watches move to the other endpoints, the cluster elects another leader, and the commit goes
// through.
TEST_F(FleetProcessClusterTest, EtcdsLeaderKilledInTheMiddleOfAMigration) {
  start();
  const FleetCommand migrate{FleetCommandKind::kMigrate, placement(5),
                             MigrationConsistency::kStrict, false};
  const auto migrated = admin_->apply("web", migrate, kWait);
  ASSERT_TRUE(migrated.ok()) << migrated;
  const std::optional<std::size_t> leader = cluster_->leader();
  ASSERT_TRUE(leader.has_value());
  cluster_->member(*leader).kill();
  const std::optional<std::size_t> next = cluster_->leader();
  ASSERT_TRUE(next.has_value()) << "no leader after the kill";
  EXPECT_NE(*next, *leader);
  let_traffic_pass(2'000);
  const auto committed =
      admin_->apply("web", FleetCommand{FleetCommandKind::kCommit, {}, {}, false}, kWait);
  ASSERT_TRUE(committed.ok()) << committed;
  let_traffic_pass(2'000);
  expect_clean(stop_and_check());
}

// etcd stopped as a whole (every member SIGSTOPped) for a sixth of the lease TTL: no member
// fences itself (its lease's fence is TTL after its last answered keep-alive, less a margin),
// and a migration after it goes through.
TEST_F(FleetProcessClusterTest, EtcdStoppedForLessThanTheLeaseTtlCostsNothing) {
  start();
  cluster_->pause();
  std::this_thread::sleep_for(kLeaseTtl / 6);  // the outage itself
  cluster_->resume();
  let_traffic_pass(2'000);
  migrate_and_commit();
  expect_clean(stop_and_check());
  EXPECT_EQ(fleet_->fenced_calls(), 0U);
}

// etcd stopped as a whole for twice the lease TTL: every member fences itself by its own clock
// (writes refused with kFenced, reads missing) before etcd could expire its lease, and once etcd
// is back (it expires the leases it lost track of), registers under a new lease, serves the
// record again, and the next migration goes through.
TEST_F(FleetProcessClusterTest, EtcdStoppedForLongerThanTheLeaseTtlFencesEveryMember) {
  start();
  cluster_->pause();
  std::this_thread::sleep_for(kLeaseTtl * 2);  // the outage itself
  cluster_->resume();
  fleet_->wait_until_every_member_serves_the_record();
  let_traffic_pass(2'000);
  migrate_and_commit();
  expect_clean(stop_and_check());
  EXPECT_GT(fleet_->fenced_calls(), 0U);
}

}  // namespace
}  // namespace fleet_process_test
