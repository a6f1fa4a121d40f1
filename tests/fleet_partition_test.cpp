// SPDX-License-Identifier: MIT
// A fleet's member partitioned from etcd by the kernel: in the test's own network namespace
// (support/netns_run.sh), etcd also answers on 127.0.0.2, the address one member process uses,
// and an nftables rule drops every packet to it. Meanwhile the coordinator migrates the fleet
// (once the member's lease lapsed) and commits; the member, fenced by its own clock, serves
// nothing stale and stores nothing from its old phase, and once the rule goes it comes back on
// the newest record. Where namespaces cannot be made (not root), the test skips.

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "memshard/fleet.hpp"
#include "support/etcd_server.hpp"
#include "support/fleet_processes.hpp"
#include "support/netns.hpp"
#include "support/server_set.hpp"

namespace fleet_partition_test {
namespace {

using memshard::FleetCommand;
using memshard::FleetCommandKind;
using memshard::MigrationConsistency;
using memshard::testing::FleetProcesses;

constexpr const char* kCutAddress = "127.0.0.2";  // the partitioned member's way to etcd

// The path of a network tool: from PATH, else /usr/sbin.
auto tool(const std::string& name) -> std::string {
  const std::string path = memshard::testing::detail::find_in_path(name);
  return path.empty() ? "/usr/sbin/" + name : path;
}

TEST(FleetPartitionTest, AMemberCutOffFromEtcdByTheFirewallIsFencedAndComesBack) {
  if (const auto why = memshard::testing::netns_unavailable()) {
    GTEST_SKIP() << "network namespace tests skipped: " << *why;
  }
  memshard::testing::netns_detail::run(tool("ip"), {"link", "set", "lo", "up"});
  memshard::testing::ServerSet servers(5);
  memshard::testing::EtcdServer etcd(std::vector<std::string>{kCutAddress});
  memshard::FleetAdmin admin(etcd.url());
  FleetProcesses fleet(servers, etcd.url(), admin);
  memshard::FleetRecord record;
  record.placement = fleet.placement(4);
  ASSERT_TRUE(admin.create("web", record).ok());
  const std::string cut_store =
      "etcd://" + std::string(kCutAddress) + ":" + std::to_string(etcd.client_port());
  fleet.start(4, [&](std::size_t m) { return m == 0 ? cut_store : etcd.url(); });
  fleet.let_traffic_pass(2'000);

  memshard::testing::netns_detail::run(
      tool("nft"), {"-f", "-"},
      "table inet memshard_partition {\n"
      "  chain out { type filter hook output priority 0; policy accept;\n"
      "    ip daddr " +
          std::string(kCutAddress) + " tcp dport " + std::to_string(etcd.client_port()) +
          " drop; }\n"
          "}\n");
  const FleetCommand migrate{FleetCommandKind::kMigrate, fleet.placement(5),
                             MigrationConsistency::kStrict, false};
  const auto migrated = admin.apply("web", migrate, FleetProcesses::kWait);  // once m0 lapsed
  ASSERT_TRUE(migrated.ok()) << migrated;
  fleet.let_traffic_pass(2'000);
  const auto committed = admin.apply("web", FleetCommand{FleetCommandKind::kCommit, {}, {}, false},
                                     FleetProcesses::kWait);
  ASSERT_TRUE(committed.ok()) << committed;
  fleet.let_traffic_pass(2'000);
  memshard::testing::netns_detail::run(tool("nft"),
                                       {"delete", "table", "inet", "memshard_partition"});
  fleet.wait_until_member_serves_the_record("m0");
  fleet.let_traffic_pass(3'000);
  const memshard::testing::HistoryReport report = fleet.stop_and_check();
  EXPECT_GT(report.hits, 1'000U);
  EXPECT_EQ(report.wrong_values, 0U);
  EXPECT_EQ(report.stale_reads, 0U);
  EXPECT_EQ(report.lost_writes, 0U);
  EXPECT_GT(fleet.fenced_calls(), 0U);  // m0's writes while it was cut off
}

}  // namespace
}  // namespace fleet_partition_test
