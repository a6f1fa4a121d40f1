// SPDX-License-Identifier: MIT
// fleet_admin_test.cpp: FleetAdmin against a real etcd: a fleet created once, read back, its
// members listed as they registered (one that cannot be read included, at epoch 0), and the
// refusals: a fleet that exists or does not, a bad name, a record that cannot serve or be read.

#include "memshard/coordination/fleet_admin.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/etcd_server.hpp"

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

class FleetAdminTest : public ::testing::Test {
 protected:
  EtcdServer etcd_;
  FleetAdmin admin_{etcd_.url()};
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

}  // namespace
}  // namespace fleet_admin_test
