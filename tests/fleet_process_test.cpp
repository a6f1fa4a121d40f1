// SPDX-License-Identifier: MIT
// Many processes as one fleet (coordination/fleet_member.hpp), end to end: member processes
// (fleet_member_process.cpp), each with its own client, read and write shared keys while
// FleetAdmin moves the fleet through a migration and its commit, or through a reconfigure; their
// logs, merged, hold no wrong value, no stale read and no lost acknowledged write.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "memshard/fleet.hpp"
#include "support/child_process.hpp"
#include "support/etcd_server.hpp"
#include "support/fault_proxy.hpp"
#include "support/history.hpp"
#include "support/server_set.hpp"

#ifndef MEMSHARD_FLEET_MEMBER_PROCESS
#error "MEMSHARD_FLEET_MEMBER_PROCESS: the path of memshard_fleet_member_process"
#endif

namespace fleet_process_test {
namespace {

using memshard::FleetAdmin;
using memshard::FleetCommand;
using memshard::FleetCommandKind;
using memshard::MigrationConsistency;
using memshard::testing::ChildProcess;
using memshard::testing::EtcdServer;
using memshard::testing::History;
using memshard::testing::HistoryReport;
using memshard::testing::ServerSet;
using std::chrono::milliseconds;

constexpr std::size_t kMembers = 4;
constexpr std::size_t kKeys = 64;
constexpr milliseconds kWait{20'000};

// Enough calls were checked, and none broke a rule.
void expect_clean(const HistoryReport& report) {
  EXPECT_GT(report.hits, 1'000U);
  EXPECT_EQ(report.wrong_values, 0U);
  EXPECT_EQ(report.stale_reads, 0U);
  EXPECT_EQ(report.lost_writes, 0U);
}

class FleetProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(servers_.reset());
    char pattern[] = "/tmp/memshard-fleet-logs-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    logs_ = pattern;
  }
  void TearDown() override {
    members_.clear();  // killed, if a test failed before it stopped them
    std::error_code ignored;
    std::filesystem::remove_all(logs_, ignored);
  }

  auto placement(std::size_t count) -> memshard::FleetPlacement {
    return {servers_.list(0, count), "libmemcached-ketama", {}};
  }

  void start_members() {
    std::string all;
    for (const memshard::Server& server : servers_.list()) {
      all += (all.empty() ? "" : ",") + server.endpoint();
    }
    for (std::size_t m = 0; m < kMembers; ++m) {
      members_.push_back(std::make_unique<ChildProcess>(
          MEMSHARD_FLEET_MEMBER_PROCESS,
          std::vector<std::string>{m == 0 && proxy_ ? "etcd://" + proxy_->spec() : etcd_.url(),
                                   "web", std::to_string(m), std::to_string(kMembers),
                                   std::to_string(kKeys), "120", log_path(m), all},
          -1, -1, 2));
    }
    const auto until = std::chrono::steady_clock::now() + kWait;
    while (std::chrono::steady_clock::now() < until) {
      const auto members = admin_.members("web");
      if (members.ok() && members->size() == kMembers) {
        return;
      }
      std::this_thread::sleep_for(milliseconds{20});
    }
    FAIL() << "the members did not all join";
  }

  // Waits until the servers answered `calls` more gets and sets (the members' load goes on
  // meanwhile).
  void let_traffic_pass(std::uint64_t calls) {
    const std::uint64_t from = traffic();
    const auto until = std::chrono::steady_clock::now() + kWait;
    while (traffic() < from + calls && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(milliseconds{10});
    }
    ASSERT_GE(traffic(), from + calls) << "the members made too few calls";
  }

  auto traffic() -> std::uint64_t {
    std::uint64_t sum = 0;
    for (auto& server : servers_) {
      const std::string stats = server.command("stats");
      for (const char* name : {"STAT cmd_get ", "STAT cmd_set "}) {
        const auto at = stats.find(name);
        if (at != std::string::npos) {
          sum += std::stoull(stats.substr(at + std::string(name).size()));
        }
      }
    }
    return sum;
  }

  // A migration and its commit under `consistency`, with the members' load before, in the
  // window and after; the merged logs' report.
  auto migrate(MigrationConsistency consistency) -> HistoryReport;

  // Stops the members and checks their merged logs.
  auto stop_and_check() -> HistoryReport {
    for (auto& member : members_) {
      member->terminate();
    }
    std::vector<std::string> keys;
    for (std::size_t k = 0; k < kKeys; ++k) {
      keys.push_back("fleet:" + std::to_string(k));
    }
    History history(keys, kMembers);
    for (std::size_t m = 0; m < kMembers; ++m) {
      const auto code = members_[m]->wait_for(kWait);
      EXPECT_EQ(code, 0) << "member " << m;
      std::FILE* log = std::fopen(log_path(m).c_str(), "rb");
      if (log == nullptr) {
        ADD_FAILURE() << "no log of member " << m;
        continue;
      }
      memshard::testing::Call call;
      while (std::fread(&call, sizeof call, 1, log) == 1) {
        history.record(call);
      }
      std::fclose(log);
    }
    members_.clear();
    const HistoryReport report = history.check(milliseconds{2'000});
    std::printf("%s\n", report.summary().c_str());
    for (const std::string& example : report.examples) {
      std::printf("%s\n", example.c_str());
    }
    return report;
  }

  auto log_path(std::size_t member) const -> std::string {
    return (logs_ / ("member-" + std::to_string(member) + ".log")).string();
  }

  ServerSet servers_{5};
  EtcdServer etcd_;
  FleetAdmin admin_{etcd_.url()};
  std::filesystem::path logs_;
  std::vector<std::unique_ptr<ChildProcess>> members_;
  std::unique_ptr<memshard::testing::FaultProxy> proxy_;  // member 0's way to etcd, when set
};

TEST_F(FleetProcessTest, AStrictMigrationAcrossMemberProcessesServesNothingStale) {
  expect_clean(migrate(MigrationConsistency::kStrict));
}

TEST_F(FleetProcessTest, AFastMigrationAcrossMemberProcessesServesAlmostNothingStale) {
  const HistoryReport report = migrate(MigrationConsistency::kFast);
  EXPECT_GT(report.hits, 1'000U);
  EXPECT_EQ(report.wrong_values, 0U);
  EXPECT_LE(report.stale_reads * 10'000, report.hits) << "over 1e-4 of the hits";
  EXPECT_EQ(report.lost_writes, 0U);
}

auto FleetProcessTest::migrate(MigrationConsistency consistency) -> HistoryReport {
  memshard::FleetRecord record;
  record.placement = placement(4);
  EXPECT_TRUE(admin_.create("web", record).ok());
  start_members();
  let_traffic_pass(3'000);
  const FleetCommand migrate{FleetCommandKind::kMigrate, placement(5), consistency, false};
  const auto migrated = admin_.apply("web", migrate, kWait);
  EXPECT_TRUE(migrated.ok()) << migrated;
  let_traffic_pass(3'000);
  const auto committed =
      admin_.apply("web", FleetCommand{FleetCommandKind::kCommit, {}, {}, false}, kWait);
  EXPECT_TRUE(committed.ok()) << committed;
  let_traffic_pass(3'000);
  return stop_and_check();
}

// Two grows and two shrinks (3 -> 4 -> 5 -> 4 -> 3): a shrink brings keys back onto servers
// that lost them before, which the sweep of each commit emptied of their old copies.
TEST_F(FleetProcessTest, AReconfigureAcrossMemberProcessesServesNothingStale) {
  memshard::FleetRecord record;
  record.placement = placement(3);
  ASSERT_TRUE(admin_.create("web", record).ok());
  start_members();
  let_traffic_pass(3'000);
  std::uint64_t deleted = 0;
  for (const std::size_t count : {4U, 5U, 4U, 3U}) {
    const FleetCommand change{FleetCommandKind::kReconfigure, placement(count), {}, false};
    const auto changed = admin_.apply("web", change, kWait);
    ASSERT_TRUE(changed.ok()) << changed;
    ASSERT_TRUE(admin_.last_sweep().complete());
    for (const memshard::SweptServer& swept : admin_.last_sweep().servers) {
      deleted += swept.deleted;
    }
    let_traffic_pass(3'000);
  }
  EXPECT_GT(deleted, 0U);
  expect_clean(stop_and_check());
}

// A member stopped (SIGSTOP) before the migration and continued after its commit, and still
// cut off from etcd for a while once it runs again: the fleet moves on once its lease lapsed;
// woken, the member is fenced by its own clock before its first call, and serves again only on
// the newest record (without the fence it would serve its old phase all that while).
TEST_F(FleetProcessTest, AMemberStoppedAcrossAMigrationServesNothingFromItsOldPhase) {
  memshard::FleetRecord record;
  record.placement = placement(4);
  ASSERT_TRUE(admin_.create("web", record).ok());
  proxy_ = std::make_unique<memshard::testing::FaultProxy>(etcd_.client_port());
  start_members();
  let_traffic_pass(2'000);
  ASSERT_EQ(::kill(members_[0]->pid(), SIGSTOP), 0);
  proxy_->set_blackhole(memshard::testing::Direction::kBoth);
  const FleetCommand migrate{FleetCommandKind::kMigrate, placement(5),
                             MigrationConsistency::kStrict, false};
  const auto migrated = admin_.apply("web", migrate, kWait);  // once m0's lease lapsed
  ASSERT_TRUE(migrated.ok()) << migrated;
  let_traffic_pass(2'000);
  const auto committed =
      admin_.apply("web", FleetCommand{FleetCommandKind::kCommit, {}, {}, false}, kWait);
  ASSERT_TRUE(committed.ok()) << committed;
  ASSERT_EQ(::kill(members_[0]->pid(), SIGCONT), 0);
  let_traffic_pass(3'000);  // m0 runs, cut off: fenced
  proxy_->heal();
  const std::int64_t epoch = admin_.show("web")->record.epoch;
  const auto until = std::chrono::steady_clock::now() + kWait;
  bool back = false;
  while (!back && std::chrono::steady_clock::now() < until) {
    const auto members = admin_.members("web");
    for (const auto& member : members.ok() ? *members : std::vector<memshard::FleetMemberInfo>{}) {
      back = back || (member.id == "m0" && member.epoch == epoch);
    }
    std::this_thread::sleep_for(milliseconds{20});
  }
  ASSERT_TRUE(back) << "m0 did not catch up";
  let_traffic_pass(3'000);
  expect_clean(stop_and_check());
}

}  // namespace
}  // namespace fleet_process_test
