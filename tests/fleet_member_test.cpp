// SPDX-License-Identifier: MIT
// coordination/fleet_member.hpp against etcd and memcached servers started by the tests: joining
// reads the record before the first call (and fails clearly without a fleet, without etcd or with
// options that disagree), a member registers and acknowledges each record once its calls before
// it ended, a migration and a reconfigure driven by FleetAdmin move the member's client phase by
// phase, and a member destroyed leaves the fleet at once.

#include "memshard/coordination/fleet_member.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "memshard/coordination/fleet_admin.hpp"
#include "support/etcd_server.hpp"
#include "support/fault_proxy.hpp"
#include "support/server_set.hpp"

namespace fleet_member_test {
namespace {

using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::FleetAdmin;
using memshard::FleetCommand;
using memshard::FleetCommandKind;
using memshard::FleetMember;
using memshard::FleetOptions;
using memshard::FleetPhase;
using memshard::FleetRecord;
using memshard::Server;
using memshard::testing::EtcdServer;
using memshard::testing::ServerSet;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kWait{10'000};

// The member's acknowledged epoch once it reaches `epoch`, or at kWait: a member writes its
// acknowledgement to etcd before it notes it, so a coordinator can move on a moment before.
auto acked_epoch(const FleetMember& member, std::int64_t epoch) -> std::int64_t {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (member.epoch() < epoch && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds{5});
  }
  return member.epoch();
}

class FleetMemberTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(3); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  static auto list(std::size_t first, std::size_t count) -> std::vector<Server> {
    return servers_->list(first, count);
  }
  static auto placement(std::size_t first, std::size_t count) -> memshard::FleetPlacement {
    return {list(first, count), "libmemcached-ketama", {}};
  }
  void create(const std::string& prefix = "") {
    FleetRecord record;
    record.placement = placement(0, 2);
    record.key_prefix = prefix;
    const auto created = admin_.create("web", record);
    ASSERT_TRUE(created.ok()) << created;
  }
  static auto options() -> FleetOptions {
    FleetOptions options;
    options.lease_ttl = seconds{5};
    options.join_timeout = milliseconds{2'000};
    return options;
  }
  auto apply(FleetCommandKind kind, std::size_t first = 0, std::size_t count = 0)
      -> memshard::StoreStatus {
    FleetCommand command{kind, {}, memshard::MigrationConsistency::kFast, false};
    if (count != 0) {
      command.next = placement(first, count);
    }
    return admin_.apply("web", command, kWait);
  }
  // A key whose owner changes from servers 0-1 to servers 0-2.
  static auto moved_key() -> std::string {
    const auto before = memshard::make_locator("libmemcached-ketama", list(0, 2));
    const auto after = memshard::make_locator("libmemcached-ketama", list(0, 3));
    for (int i = 0;; ++i) {
      std::string key = "key:" + std::to_string(i);
      if (list(0, 2)[before.locate(key)].port != list(0, 3)[after.locate(key)].port) {
        return key;
      }
    }
  }

  EtcdServer etcd_;
  FleetAdmin admin_{etcd_.url()};
  static inline std::unique_ptr<ServerSet> servers_;
};

TEST_F(FleetMemberTest, JoiningServesTheRecordAndRegistersTheMemberAtItsEpoch) {
  create("app:");
  FleetOptions fleet_options = options();
  fleet_options.member_id = "m1";
  FleetMember member = memshard::join_fleet(etcd_.url(), "web", {}, fleet_options);
  EXPECT_EQ(member.id(), "m1");
  EXPECT_EQ(member.epoch(), 1);
  EXPECT_FALSE(member.fenced());
  EXPECT_EQ(member.client().servers(), list(0, 2));
  EXPECT_EQ(member.client().options().key_prefix, "app:");  // the record's
  ASSERT_TRUE(member.client().set("k", "v"));
  EXPECT_TRUE((*servers_)[0].command("get app:k").starts_with("VALUE") ||
              (*servers_)[1].command("get app:k").starts_with("VALUE"));
  const auto members = admin_.members("web");
  ASSERT_TRUE(members.ok()) << members.status();
  ASSERT_EQ(members->size(), 1U);
  EXPECT_EQ((*members)[0].id, "m1");
  EXPECT_EQ((*members)[0].epoch, 1);
  // The client's own changes would leave the fleet behind: refused.
  EXPECT_THROW(member.client().reconfigure(list(0, 3)), ConfigError);
}

TEST_F(FleetMemberTest, AMissingFleetSilentEtcdOrOptionsThatDisagreeAreConfigErrors) {
  EXPECT_THROW((void)memshard::join_fleet(etcd_.url(), "web", {}, options()), ConfigError);
  create("app:");
  ClientOptions other;
  other.key_prefix = "other:";
  EXPECT_THROW((void)memshard::join_fleet(etcd_.url(), "web", other, options()), ConfigError);
  ClientOptions slow;
  slow.call_timeout = seconds{5};  // a call could outlive the lease: no fence would hold
  EXPECT_THROW((void)memshard::join_fleet(etcd_.url(), "web", slow, options()), ConfigError);
  EXPECT_THROW((void)memshard::join_fleet("http://x", "web", {}, options()), ConfigError);
  EXPECT_THROW((void)memshard::join_fleet(etcd_.url(), "a/b", {}, options()), ConfigError);
  etcd_.pause();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)memshard::join_fleet(etcd_.url(), "web", {}, options()), ConfigError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, options().join_timeout + seconds{1});
  etcd_.resume();
  EXPECT_TRUE(admin_.members("web")->empty());  // nothing registered
}

TEST_F(FleetMemberTest, AMigrationMovesTheMembersClientPhaseByPhase) {
  create();
  FleetMember member = memshard::join_fleet(etcd_.url(), "web", {}, options());
  auto clone = member.client().clone();
  const std::string key = moved_key();
  ASSERT_TRUE(member.client().set(key, "v0"));
  // Prepare, then the window: the members acknowledged both before apply() returned.
  const auto migrated = apply(FleetCommandKind::kMigrate, 0, 3);
  ASSERT_TRUE(migrated.ok()) << migrated;
  const FleetRecord window = member.record();
  ASSERT_TRUE(window.change);
  EXPECT_EQ(window.change->phase, FleetPhase::kReadThrough);
  EXPECT_EQ(acked_epoch(member, window.epoch), window.epoch);
  auto hit = clone.get(key);  // read through the old owner, copied forward
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit.value().has_value());
  EXPECT_EQ(hit.value()->value, "v0");
  EXPECT_EQ(member.client().server_for(key).port, list(0, 3)[2].port);
  EXPECT_EQ(member.client().migration_stats().copies_stored, 1U);
  // Commit: settle, done, steady on the three servers.
  const auto committed = apply(FleetCommandKind::kCommit);
  ASSERT_TRUE(committed.ok()) << committed;
  EXPECT_FALSE(member.record().change);
  EXPECT_EQ(member.client().servers(), list(0, 3));
  EXPECT_EQ(clone.servers(), list(0, 3));
  EXPECT_EQ(member.client().get(key).value()->value, "v0");
  EXPECT_TRUE(member.last_error().empty());
}

TEST_F(FleetMemberTest, AReconfigureMovesEveryMemberWithoutCopies) {
  create();
  FleetMember first = memshard::join_fleet(etcd_.url(), "web", {}, options());
  FleetMember second = memshard::join_fleet(etcd_.url(), "web", {}, options());
  EXPECT_NE(first.id(), second.id());
  const std::string key = moved_key();
  ASSERT_TRUE(first.client().set(key, "v0"));
  const auto switched = apply(FleetCommandKind::kReconfigure, 0, 3);
  ASSERT_TRUE(switched.ok()) << switched;
  for (FleetMember* member : {&first, &second}) {
    EXPECT_EQ(member->client().servers(), list(0, 3));
    EXPECT_EQ(member->epoch(), admin_.show("web")->record.epoch);
    EXPECT_FALSE(member->client().get(key).value().has_value());  // a miss, never an old value
  }
}

TEST_F(FleetMemberTest, AMemberInACallHoldsItsAcknowledgementUntilTheCallEnds) {
  create();
  FleetMember member = memshard::join_fleet(etcd_.url(), "web", {}, options());
  // A multi-get whose callback waits: its call began on the steady record.
  std::atomic<bool> release{false};
  std::atomic<bool> inside{false};
  ASSERT_TRUE(member.client().set("k", "v"));
  std::thread caller([&] {
    auto clone = member.client().clone();
    const std::vector<std::string_view> keys = {"k"};
    clone.visit_multi(
        keys,
        [&](std::size_t, const memshard::ItemView&) {
          inside = true;
          const auto until = std::chrono::steady_clock::now() + kWait;
          while (!release && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(milliseconds{1});
          }
        },
        [](std::size_t, const memshard::Status&) {});
  });
  const auto until = std::chrono::steady_clock::now() + kWait;
  while (!inside && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds{1});
  }
  ASSERT_TRUE(inside);
  FleetCommand command{FleetCommandKind::kReconfigure, placement(0, 3), {}, false};
  const auto held = admin_.apply("web", command, milliseconds{1'500});
  EXPECT_EQ(held.code(), memshard::StoreErrc::kTimeout) << held;
  EXPECT_EQ(member.epoch(), 1);  // served the new phase, not acknowledged
  release = true;
  caller.join();
  const auto done = admin_.apply("web", command, kWait);
  EXPECT_TRUE(done.ok()) << done;
  EXPECT_EQ(member.client().servers(), list(0, 3));
}

TEST_F(FleetMemberTest, AMemberThatJoinsWhileTheFleetChangesEndsOnItsNewestRecord) {
  create();
  FleetMember first = memshard::join_fleet(etcd_.url(), "web", {}, options());
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    const std::size_t count = round % 2 == 0 ? 3 : 2;
    memshard::StoreStatus applied;
    std::thread coordinator([&] { applied = apply(FleetCommandKind::kReconfigure, 0, count); });
    FleetMember joined = memshard::join_fleet(etcd_.url(), "web", {}, options());
    coordinator.join();
    ASSERT_TRUE(applied.ok()) << applied;
    const FleetRecord now = admin_.show("web")->record;
    const auto until = std::chrono::steady_clock::now() + kWait;
    while (joined.epoch() != now.epoch && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(milliseconds{5});
    }
    EXPECT_EQ(joined.epoch(), now.epoch);
    EXPECT_EQ(joined.record(), now);
    EXPECT_EQ(joined.client().servers(), list(0, count));
  }
}

// The member reaches etcd through a proxy that the test cuts; the coordinator reaches it directly.
TEST_F(FleetMemberTest, AMemberCutOffFromEtcdIsFencedInTimeAndCatchesUpBeforeItServesAgain) {
  create();
  memshard::testing::FaultProxy proxy(etcd_.client_port());
  FleetOptions fleet_options = options();
  fleet_options.lease_ttl = seconds{3};
  fleet_options.etcd.request_timeout = milliseconds{500};
  ClientOptions quick;
  // The fence's margin (a call budget, 1 s) leaves the check below a second for the polling
  // thread's scheduling under load.
  quick.call_timeout = milliseconds{1'000};
  FleetMember member = memshard::join_fleet("etcd://" + proxy.spec(), "web", quick, fleet_options);
  const std::string key = moved_key();
  ASSERT_TRUE(member.client().set(key, "v0"));
  ASSERT_TRUE(member.client().set("other", "v0"));
  ASSERT_FALSE(member.fenced());
  proxy.set_blackhole(memshard::testing::Direction::kBoth);
  const auto cut = std::chrono::steady_clock::now();
  const auto until = cut + kWait;
  while (!member.fenced() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds{5});
  }
  ASSERT_TRUE(member.fenced());
  // Before etcd could have let the lease lapse: at most a TTL after the cut.
  EXPECT_LT(std::chrono::steady_clock::now() - cut, fleet_options.lease_ttl);
  EXPECT_FALSE(member.client().get("other").value().has_value());
  EXPECT_EQ(member.client().remove(key).code(), memshard::Errc::kFenced);
  EXPECT_EQ(member.client().set("other", "v1").code(), memshard::Errc::kFenced);
  // etcd lets the lease lapse; the fleet moves on without the member.
  const auto gone_by = std::chrono::steady_clock::now() + kWait;
  while (!admin_.members("web")->empty() && std::chrono::steady_clock::now() < gone_by) {
    std::this_thread::sleep_for(milliseconds{20});
  }
  ASSERT_TRUE(admin_.members("web")->empty());
  const auto switched = apply(FleetCommandKind::kReconfigure, 0, 3);
  ASSERT_TRUE(switched.ok()) << switched;
  EXPECT_EQ(member.client().servers(), list(0, 2));  // it knows nothing of it yet
  EXPECT_FALSE(member.client().get(key).value().has_value());
  // Values the new placement holds for the keys the member could not write: its refused writes
  // must not leave them behind.
  const auto three = memshard::make_locator("libmemcached-ketama", list(0, 3));
  for (const std::string& k : {key, std::string("other")}) {
    ASSERT_TRUE(
        (*servers_)[three.locate(k)].command("set " + k + " 0 0 5\r\nstale").starts_with("STORED"));
  }
  // Back: the newest record served, the refused writes' keys deleted, then it serves.
  proxy.heal();
  const auto back_by = std::chrono::steady_clock::now() + kWait;
  while (member.fenced() && std::chrono::steady_clock::now() < back_by) {
    std::this_thread::sleep_for(milliseconds{5});
  }
  ASSERT_FALSE(member.fenced());
  EXPECT_EQ(member.client().servers(), list(0, 3));
  const std::int64_t newest = admin_.show("web")->record.epoch;
  EXPECT_EQ(acked_epoch(member, newest), newest);
  for (const std::string& k : {key, std::string("other")}) {
    EXPECT_FALSE((*servers_)[three.locate(k)].command("get " + k).starts_with("VALUE")) << k;
    EXPECT_FALSE(member.client().get(k).value().has_value()) << k;
  }
  ASSERT_TRUE(member.client().set("other", "v2"));
  EXPECT_EQ(member.client().get("other").value()->value, "v2");
  EXPECT_EQ(member.lost_keys(), 0U);
}

TEST_F(FleetMemberTest, ADestroyedMemberLeavesTheFleetAtOnce) {
  create();
  {
    FleetMember member = memshard::join_fleet(etcd_.url(), "web", {}, options());
    ASSERT_EQ(admin_.members("web")->size(), 1U);
    FleetMember moved = std::move(member);
    EXPECT_EQ(moved.client().servers(), list(0, 2));
  }
  EXPECT_TRUE(admin_.members("web")->empty());
  const auto switched = apply(FleetCommandKind::kReconfigure, 0, 3);  // nobody to wait for
  EXPECT_TRUE(switched.ok()) << switched;
}

}  // namespace
}  // namespace fleet_member_test
