// SPDX-License-Identifier: MIT
// fleet_admin_test.cpp: FleetAdmin against a real etcd: a fleet created once, read back, its
// members listed as they registered (one that cannot be read included, at epoch 0), and the
// refusals: a fleet that exists or does not, a bad name, a record that cannot serve or be read.

#include "memshard/coordination/fleet_admin.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/etcd_server.hpp"
#include "support/server_set.hpp"

namespace fleet_admin_test {
namespace {

using memshard::FleetAdmin;
using memshard::FleetRecord;
using memshard::StoreErrc;
using memshard::testing::EtcdServer;

auto steady_record() -> FleetRecord {
  FleetRecord record;
  record.placement = {
      memshard::parse_servers("10.0.0.1:11211 10.0.0.2:11211"), "libmemcached-ketama", {}};
  record.key_prefix = "app:";
  return record;
}

// Its placements name servers that do not exist: nothing is swept (so each swept server is
// recorded as holding stale copies). FleetAdminSweepTest sweeps real ones.
class FleetAdminTest : public ::testing::Test {
 protected:
  EtcdServer etcd_;
  FleetAdmin admin_{etcd_.url(), {}, memshard::FleetSweep{false, {}}};
};

TEST_F(FleetAdminTest, AFleetIsCreatedOnceAtEpochOneAndReadBack) {
  FleetRecord record = steady_record();
  record.epoch = 9;  // create starts every fleet at 1, steady
  record.change =
      memshard::FleetChange{memshard::FleetChangeKind::kMigrate,
                            memshard::FleetPhase::kPrepare,
                            {memshard::parse_servers("10.0.0.3"), "libmemcached-ketama", {}},
                            {}};
  const auto created = admin_.create("web", record);
  ASSERT_TRUE(created.ok()) << created;
  const auto view = admin_.show("web");
  ASSERT_TRUE(view.ok()) << view.status();
  FleetRecord expected = steady_record();
  EXPECT_EQ(view->record, expected);
  EXPECT_GT(view->mod_revision, 0);
  const auto again = admin_.create("web", steady_record());
  EXPECT_EQ(again.code(), StoreErrc::kRejected);
  EXPECT_NE(again.message().find("exists"), std::string::npos);
  EXPECT_EQ(admin_.show("web")->mod_revision, view->mod_revision);  // untouched
}

TEST_F(FleetAdminTest, AFleetThatDoesNotExistIsRejected) {
  const auto view = admin_.show("nope");
  EXPECT_EQ(view.code(), StoreErrc::kRejected);
  EXPECT_NE(view.status().message().find("no fleet nope"), std::string::npos);
}

TEST_F(FleetAdminTest, BadNamesAndRecordsThatCannotServeThrowBeforeAnyRequest) {
  for (const std::string& name :
       std::vector<std::string>{"", "a/b", "a b", "..\xff", std::string(129, 'a')}) {
    SCOPED_TRACE(name);
    EXPECT_THROW((void)admin_.create(name, steady_record()), memshard::ConfigError);
    EXPECT_THROW((void)admin_.show(name), memshard::ConfigError);
    EXPECT_THROW((void)admin_.members(name), memshard::ConfigError);
  }
  FleetRecord unknown = steady_record();
  unknown.placement.profile = "no-such-profile";
  EXPECT_THROW((void)admin_.create("web", unknown), memshard::ConfigError);
  EXPECT_EQ(admin_.show("web").code(), StoreErrc::kRejected);  // nothing was written
}

TEST_F(FleetAdminTest, ARecordThatCannotBeReadIsABadReply) {
  memshard::EtcdClient etcd(etcd_.url());
  ASSERT_TRUE(etcd.put("memshard/fleets/web/record", "{\"format\":1}").ok());
  const auto view = admin_.show("web");
  EXPECT_EQ(view.code(), StoreErrc::kBadReply);
  EXPECT_NE(view.status().message().find("fleet record"), std::string::npos) << view.status();
}

TEST_F(FleetAdminTest, MembersAreListedAsTheyRegisteredOnesThatCannotBeReadAtEpochZero) {
  ASSERT_TRUE(admin_.create("web", steady_record()).ok());
  memshard::EtcdClient etcd(etcd_.url());
  const auto lease = etcd.grant(std::chrono::seconds{30});
  ASSERT_TRUE(lease.ok());
  const std::string prefix = "memshard/fleets/web/members/";
  ASSERT_TRUE(
      etcd.put(prefix + "b", memshard::detail::member_value(1, "host-b", 22), lease->id).ok());
  ASSERT_TRUE(
      etcd.put(prefix + "a", memshard::detail::member_value(3, "host-a", 11), lease->id).ok());
  ASSERT_TRUE(etcd.put(prefix + "c", "garbage", lease->id).ok());
  ASSERT_TRUE(
      etcd.put("memshard/fleets/web2/members/x", memshard::detail::member_value(1, "h", 1)).ok());
  const auto members = admin_.members("web");
  ASSERT_TRUE(members.ok()) << members.status();
  ASSERT_EQ(members->size(), 3U);
  EXPECT_EQ((*members)[0].id, "a");
  EXPECT_EQ((*members)[0].epoch, 3);
  EXPECT_EQ((*members)[0].host, "host-a");
  EXPECT_EQ((*members)[0].pid, 11);
  EXPECT_EQ((*members)[0].lease, lease->id);
  EXPECT_TRUE((*members)[0].readable);
  EXPECT_EQ((*members)[1].id, "b");
  EXPECT_EQ((*members)[2].id, "c");
  EXPECT_FALSE((*members)[2].readable);
  EXPECT_EQ((*members)[2].epoch, 0);
  // Their lease revoked, they are gone.
  ASSERT_TRUE(etcd.revoke(lease->id).ok());
  EXPECT_TRUE(admin_.members("web")->empty());
}

// FakeMember: a member as the coordinator sees one: a key bound to a lease of its own, which a
// thread rewrites with the epoch of the record whenever it changes, while `follow` holds.
class FakeMember {
 public:
  FakeMember(const std::string& url, std::string id, bool follow = true)
      : etcd_(url), key_("memshard/fleets/web/members/" + std::move(id)), follow_(follow) {
    lease_ = etcd_.grant(std::chrono::seconds{30})->id;
    publish(1);
    thread_ = std::thread([this] { run(); });
  }
  FakeMember(const FakeMember&) = delete;
  auto operator=(const FakeMember&) -> FakeMember& = delete;
  FakeMember(FakeMember&&) = delete;
  auto operator=(FakeMember&&) -> FakeMember& = delete;
  ~FakeMember() {
    stop_ = true;
    thread_.join();
  }
  void follow(bool on) { follow_ = on; }
  [[nodiscard]] auto served() const -> std::int64_t { return served_; }

 private:
  // Serves `epoch`, then acknowledges it (as a member does: a coordinator that read the
  // acknowledgement finds served() at it); a failed acknowledgement is tried again.
  void publish(std::int64_t epoch) {
    const std::int64_t before = served_.exchange(epoch);
    if (!etcd_.put(key_, memshard::detail::member_value(epoch, "test-host", 1), lease_).ok()) {
      served_ = before;
    }
  }
  void run() {
    memshard::EtcdClient reader(etcd_.endpoints());
    while (!stop_) {
      if (follow_) {
        const auto record = reader.get("memshard/fleets/web/record");
        if (record.ok() && !record->entries.empty()) {
          const auto decoded = memshard::decode_fleet_record(record->entries[0].value);
          if (decoded.ok() && decoded->epoch != served_) {
            publish(decoded->epoch);
          }
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{5});
    }
  }

  memshard::EtcdClient etcd_;
  std::string key_;
  std::int64_t lease_ = 0;
  std::atomic<bool> follow_;
  std::atomic<std::int64_t> served_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

auto migrate_to(const char* servers) -> memshard::FleetCommand {
  return memshard::FleetCommand{memshard::FleetCommandKind::kMigrate,
                                {memshard::parse_servers(servers), "libmemcached-ketama", {}},
                                memshard::MigrationConsistency::kStrict,
                                false};
}
auto command(memshard::FleetCommandKind kind) -> memshard::FleetCommand {
  return memshard::FleetCommand{kind, {}, {}, false};
}
constexpr std::chrono::milliseconds kWait{10'000};

TEST_F(FleetAdminTest, AMigrationAndItsCommitGoThroughEveryPhaseWithEveryMember) {
  ASSERT_TRUE(admin_.create("web", steady_record()).ok());
  FakeMember one(etcd_.url(), "one");
  FakeMember two(etcd_.url(), "two");
  std::vector<memshard::FleetProgress> seen;
  const auto migrated = admin_.apply("web", migrate_to("10.0.0.1:11211 10.0.0.3:11211"), kWait,
                                     [&](const memshard::FleetProgress& p) { seen.push_back(p); });
  ASSERT_TRUE(migrated.ok()) << migrated;
  const auto window = admin_.show("web");
  ASSERT_TRUE(window->record.change.has_value());
  EXPECT_EQ(window->record.change->phase, memshard::FleetPhase::kReadThrough);
  EXPECT_EQ(window->record.epoch, 3);
  EXPECT_EQ(one.served(), 3);  // returned once every member served the window
  EXPECT_EQ(two.served(), 3);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().acknowledged, 2U);
  EXPECT_EQ(seen.back().live, 2U);
  EXPECT_EQ(seen.back().phase, memshard::FleetPhase::kReadThrough);

  const auto committed = admin_.apply("web", command(memshard::FleetCommandKind::kCommit), kWait);
  ASSERT_TRUE(committed.ok()) << committed;
  const auto done = admin_.show("web");
  EXPECT_FALSE(done->record.change.has_value());
  EXPECT_EQ(done->record.placement.servers,
            memshard::parse_servers("10.0.0.1:11211 10.0.0.3:11211"));
  EXPECT_EQ(done->record.epoch, 6);
  // Phase 4 served by both; the steady record that follows is bookkeeping.
  EXPECT_GE(one.served(), 5);
  EXPECT_EQ(admin_.apply("web", command(memshard::FleetCommandKind::kCommit), kWait).code(),
            StoreErrc::kRejected);  // nothing left to commit
}

TEST_F(FleetAdminTest, APhaseWaitsForAMemberBehindAndEvictingItEndsTheWait) {
  ASSERT_TRUE(admin_.create("web", steady_record()).ok());
  FakeMember follows(etcd_.url(), "follows");
  FakeMember behind(etcd_.url(), "behind", false);
  const auto start = std::chrono::steady_clock::now();
  const auto stuck =
      admin_.apply("web", migrate_to("10.0.0.3:11211"), std::chrono::milliseconds{300});
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds{300});
  EXPECT_EQ(stuck.code(), StoreErrc::kTimeout) << stuck;
  EXPECT_NE(stuck.message().find("1 of 2 live members serve epoch 2"), std::string::npos) << stuck;
  EXPECT_NE(stuck.message().find("behind: behind"), std::string::npos) << stuck;
  // It stopped at phase 1: the window never opened while a member served phase 0.
  EXPECT_EQ(admin_.show("web")->record.change->phase, memshard::FleetPhase::kPrepare);
  EXPECT_EQ(admin_.evict("web", "nobody").code(), StoreErrc::kRejected);
  ASSERT_TRUE(admin_.evict("web", "behind").ok());
  const auto carried_on = admin_.apply("web", migrate_to("10.0.0.3:11211"), kWait);
  ASSERT_TRUE(carried_on.ok()) << carried_on;
  EXPECT_EQ(admin_.show("web")->record.change->phase, memshard::FleetPhase::kReadThrough);
}

TEST_F(FleetAdminTest, AWaitReadsTheMembersOnlyWhenTheyChangeOrTwiceASecond) {
  ASSERT_TRUE(admin_.create("web", steady_record()).ok());
  FakeMember behind(etcd_.url(), "behind", false);
  const std::uint64_t before = etcd_.metric("etcd_mvcc_range_total");
  ASSERT_GT(before, 0U);
  const auto waited =
      admin_.wait_for_members("web", 2, memshard::FleetPhase::kPrepare,
                              std::chrono::steady_clock::now() + std::chrono::milliseconds{1'500});
  EXPECT_EQ(waited.code(), StoreErrc::kTimeout);
  // 1.5 s of waiting: the first read and one every 500 ms (the member does not follow, so it
  // reads nothing), not one every few milliseconds.
  EXPECT_LE(etcd_.metric("etcd_mvcc_range_total") - before, 6U);
}

TEST_F(FleetAdminTest, AnAbortStepsBackThroughPhaseOneAndHoldsTheCopiedServers) {
  ASSERT_TRUE(admin_.create("web", steady_record()).ok());
  FakeMember member(etcd_.url(), "m");
  ASSERT_TRUE(admin_.apply("web", migrate_to("10.0.0.3:11211"), kWait).ok());
  const auto aborted = admin_.apply("web", command(memshard::FleetCommandKind::kAbort), kWait);
  ASSERT_TRUE(aborted.ok()) << aborted;
  const auto view = admin_.show("web");
  EXPECT_FALSE(view->record.change.has_value());
  EXPECT_EQ(view->record.placement, steady_record().placement);
  EXPECT_EQ(view->record.stale_copies, std::vector<std::string>{"10.0.0.3:11211"});
  EXPECT_EQ(view->record.epoch, 5);
  const auto held = admin_.apply("web", migrate_to("10.0.0.3:11211"), kWait);
  EXPECT_EQ(held.code(), StoreErrc::kRejected);
  EXPECT_NE(held.message().find("flush"), std::string::npos) << held;
  memshard::FleetCommand flushed = migrate_to("10.0.0.3:11211");
  flushed.flushed = true;
  ASSERT_TRUE(admin_.apply("web", flushed, kWait).ok());
  EXPECT_TRUE(admin_.show("web")->record.stale_copies.empty());
}

TEST_F(FleetAdminTest, ASecondCoordinatorsWriteStopsThisOne) {
  ASSERT_TRUE(admin_.create("web", steady_record()).ok());
  FakeMember member(etcd_.url(), "m");
  memshard::EtcdClient other(etcd_.url());
  bool interfered = false;
  const auto lost = admin_.apply(
      "web", migrate_to("10.0.0.3:11211"), kWait, [&](const memshard::FleetProgress& p) {
        if (!interfered && p.epoch == 2 && p.acknowledged == p.live) {
          // Another coordinator rewrites the record between this one's read and its next write.
          auto record = admin_.show("web")->record;
          ++record.epoch;
          interfered =
              other.put("memshard/fleets/web/record", memshard::encode_fleet_record(record)).ok();
        }
      });
  ASSERT_TRUE(interfered);
  EXPECT_EQ(lost.code(), StoreErrc::kRejected) << lost;
  EXPECT_NE(lost.message().find("changed meanwhile"), std::string::npos) << lost;
  EXPECT_EQ(admin_.show("web")->record.epoch, 3);  // the other's record stands
}

TEST_F(FleetAdminTest, ASwitchWithoutMembersGoesStraightThrough) {
  ASSERT_TRUE(admin_.create("web", steady_record()).ok());
  const memshard::FleetCommand to_c{
      memshard::FleetCommandKind::kReconfigure,
      {memshard::parse_servers("10.0.0.4:11211"), "libmemcached-ketama", {}},
      {},
      false};
  ASSERT_TRUE(admin_.apply("web", to_c, kWait).ok());
  const auto view = admin_.show("web");
  EXPECT_FALSE(view->record.change.has_value());
  EXPECT_EQ(view->record.placement, to_c.next);
  EXPECT_EQ(view->record.epoch, 5);  // phases 1, 3, 4, then steady
  memshard::FleetCommand bad = to_c;
  bad.next.profile = "no-such-profile";
  EXPECT_THROW((void)admin_.apply("web", bad, kWait), memshard::ConfigError);
}

// A commit sweeps the old placement's servers, and an abort after a read-through window the
// abandoned placement's, against real memcached servers; a server that cannot be swept goes in
// the record's stale_copies.
class FleetAdminSweepTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<memshard::testing::ServerSet>(3); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  static auto record_on(std::vector<memshard::Server> servers) -> FleetRecord {
    FleetRecord record;
    record.placement = {std::move(servers), "libmemcached-ketama", {}};
    record.key_prefix = "app:";
    return record;
  }
  static auto change_to(memshard::FleetCommandKind kind, std::vector<memshard::Server> servers)
      -> memshard::FleetCommand {
    return memshard::FleetCommand{kind, {std::move(servers), "libmemcached-ketama", {}}, {}, false};
  }
  static auto store(std::size_t server, const std::string& key) -> bool {
    return (*servers_)[server].command("ms app:" + key + " 1 T0\r\nx") == "HD\r\n";
  }
  static auto holds(std::size_t server, const std::string& key) -> bool {
    return (*servers_)[server].command("mg app:" + key + " v").starts_with("VA ");
  }
  // The index of the test server whose port `server` has.
  static auto index(const memshard::Server& server) -> std::size_t {
    for (std::size_t i = 0; i < servers_->size(); ++i) {
      if ((*servers_)[i].port() == server.port) {
        return i;
      }
    }
    return servers_->size();
  }

  EtcdServer etcd_;
  FleetAdmin admin_{etcd_.url()};
  static inline std::unique_ptr<memshard::testing::ServerSet> servers_;
};

TEST_F(FleetAdminSweepTest, ACommitDeletesTheMovedKeysFromTheOldServers) {
  const std::vector<memshard::Server> a = servers_->list(0, 2);
  const std::vector<memshard::Server> b = servers_->list(0, 3);
  ASSERT_TRUE(admin_.create("web", record_on(a)).ok());
  const memshard::AnyLocator on_a = memshard::make_locator("libmemcached-ketama", a);
  const memshard::AnyLocator on_b = memshard::make_locator("libmemcached-ketama", b);
  for (int i = 0; i < 300; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_TRUE(store(index(a[on_a.locate(key)]), key));
  }
  FakeMember member(etcd_.url(), "m");
  ASSERT_TRUE(
      admin_.apply("web", change_to(memshard::FleetCommandKind::kReconfigure, b), kWait).ok());
  const memshard::SweepReport& swept = admin_.last_sweep();
  ASSERT_EQ(swept.servers.size(), 2U);
  EXPECT_TRUE(swept.complete());
  int moved = 0;
  for (int i = 0; i < 300; ++i) {
    const std::string key = "k" + std::to_string(i);
    const std::size_t was = index(a[on_a.locate(key)]);
    const bool stays = index(b[on_b.locate(key)]) == was;
    moved += stays ? 0 : 1;
    EXPECT_EQ(holds(was, key), stays) << key;
  }
  EXPECT_GT(moved, 30);
  EXPECT_EQ(swept.servers[0].deleted + swept.servers[1].deleted, static_cast<std::uint64_t>(moved));
  EXPECT_TRUE(admin_.show("web")->record.stale_copies.empty());
}

TEST_F(FleetAdminSweepTest, AnAbortAfterTheWindowDeletesTheCopiesItMade) {
  const std::vector<memshard::Server> a = servers_->list(0, 2);
  const std::vector<memshard::Server> b = servers_->list(0, 3);
  ASSERT_TRUE(admin_.create("web", record_on(a)).ok());
  const memshard::AnyLocator on_a = memshard::make_locator("libmemcached-ketama", a);
  FakeMember member(etcd_.url(), "m");
  ASSERT_TRUE(admin_.apply("web", change_to(memshard::FleetCommandKind::kMigrate, b), kWait).ok());
  // Copies the window made on the new server, and keys of A's that stay.
  for (int i = 0; i < 50; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_TRUE(store(2, key));
    ASSERT_TRUE(store(index(a[on_a.locate(key)]), key));
  }
  ASSERT_TRUE(admin_.apply("web", command(memshard::FleetCommandKind::kAbort), kWait).ok());
  EXPECT_TRUE(admin_.last_sweep().complete());
  EXPECT_EQ(admin_.last_sweep().servers.size(), 3U);
  for (int i = 0; i < 50; ++i) {
    const std::string key = "k" + std::to_string(i);
    EXPECT_FALSE(holds(2, key)) << key;
    EXPECT_TRUE(holds(index(a[on_a.locate(key)]), key)) << key;
  }
  // Swept whole: nothing waits for a flush (without the sweep, the new server would).
  EXPECT_TRUE(admin_.show("web")->record.stale_copies.empty());
  EXPECT_TRUE(admin_.apply("web", change_to(memshard::FleetCommandKind::kMigrate, b), kWait).ok());
}

TEST_F(FleetAdminSweepTest, AServerThatCannotBeSweptIsRecordedAsHoldingStaleCopies) {
  memshard::testing::MemcachedServer gone;
  std::vector<memshard::Server> a = servers_->list(0, 1);
  a.push_back(memshard::parse_server(gone.spec()));
  ASSERT_TRUE(admin_.create("web", record_on(a)).ok());
  gone.stop();
  FakeMember member(etcd_.url(), "m");
  ASSERT_TRUE(admin_
                  .apply("web",
                         change_to(memshard::FleetCommandKind::kReconfigure, servers_->list(0, 2)),
                         kWait)
                  .ok());
  ASSERT_EQ(admin_.last_sweep().servers.size(), 2U);
  EXPECT_TRUE(admin_.last_sweep().servers[0].ok());
  EXPECT_FALSE(admin_.last_sweep().servers[1].ok());
  EXPECT_EQ(admin_.show("web")->record.stale_copies, std::vector<std::string>{gone.spec()});
  // Back onto it only once flushed.
  const auto held =
      admin_.apply("web", change_to(memshard::FleetCommandKind::kReconfigure, a), kWait);
  EXPECT_EQ(held.code(), StoreErrc::kRejected);
  EXPECT_NE(held.message().find(gone.spec()), std::string::npos) << held;
}

}  // namespace
}  // namespace fleet_admin_test
