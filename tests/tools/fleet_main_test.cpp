// SPDX-License-Identifier: MIT
// fleet_main_test.cpp: the built memshard-fleet binary end to end against a real etcd: create,
// show (text and JSON), members, the store from the environment, and the exit statuses of a
// fleet that exists or does not, an etcd that cannot be reached (within --timeout) and a usage
// error.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "memshard/coordination/fleet_admin.hpp"
#include "support/child_process.hpp"
#include "support/etcd_server.hpp"
#include "support/memcached_server.hpp"

namespace fleet_main_test {
namespace {

using memshard::testing::EtcdServer;
using memshard::testing::RunResult;

constexpr const char* kFleetPath = MEMSHARD_FLEET_PATH;

auto run_binary(std::vector<std::string> args) -> RunResult {
  return memshard::testing::run_program(kFleetPath, std::move(args));
}

TEST(FleetMainTest, CreateShowAndMembersAgainstEtcd) {
  EtcdServer etcd;
  const RunResult created =
      run_binary({"--store", etcd.url(), "create", "web", "--profile", "libmemcached-ketama",
                  "--servers", "10.0.0.1:11211 10.0.0.2:11211:2", "--key-prefix", "app:"});
  ASSERT_EQ(created.status, 0) << created.err;
  EXPECT_EQ(created.out, "created fleet web\n");

  const RunResult shown = run_binary({"--store", etcd.url(), "show", "web"});
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_NE(shown.out.find("fleet web (epoch 1"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("servers: 10.0.0.1:11211 10.0.0.2:11211:2\n"), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("key_prefix: app:"), std::string::npos);
  EXPECT_NE(shown.out.find("change: none (steady)"), std::string::npos);

  // The JSON holds the record exactly as the library reads it.
  const RunResult json = run_binary({"--store", etcd.url(), "show", "web", "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const std::string marker = "\"record\":";
  const std::size_t at = json.out.find(marker);
  ASSERT_NE(at, std::string::npos) << json.out;
  std::string record_text = json.out.substr(at + marker.size());
  record_text.erase(record_text.find_last_of('}'));  // the closing brace of the envelope
  const auto record = memshard::decode_fleet_record(record_text);
  ASSERT_TRUE(record.ok()) << record.status() << "\n" << record_text;
  EXPECT_EQ(record->placement.servers, memshard::parse_servers("10.0.0.1:11211 10.0.0.2:11211:2"));
  EXPECT_EQ(record->key_prefix, "app:");

  // A member, registered as members do.
  memshard::EtcdClient client(etcd.url());
  ASSERT_TRUE(
      client
          .put("memshard/fleets/web/members/m1", memshard::detail::member_value(1, "host-1", 4242))
          .ok());
  ::setenv("MEMSHARD_STORE", etcd.url().c_str(), 1);  // no --store: the environment's
  const RunResult members = run_binary({"members", "web"});
  const RunResult members_json = run_binary({"members", "web", "--json"});
  ::unsetenv("MEMSHARD_STORE");
  ASSERT_EQ(members.status, 0) << members.err;
  EXPECT_NE(members.out.find("m1  epoch 1  host-1  pid 4242"), std::string::npos) << members.out;
  EXPECT_NE(members.out.find("1 live member, 1 serving epoch 1"), std::string::npos);
  ASSERT_EQ(members_json.status, 0) << members_json.err;
  EXPECT_NE(members_json.out.find("\"id\":\"m1\""), std::string::npos) << members_json.out;
  EXPECT_NE(members_json.out.find("\"current\":true"), std::string::npos);
}

TEST(FleetMainTest, ExitStatusesOfRefusalsUnreachableStoresAndUsageErrors) {
  EtcdServer etcd;
  const std::vector<std::string> create = {"--store",   etcd.url(),  "create",
                                           "web",       "--profile", "libmemcached-ketama",
                                           "--servers", "10.0.0.1"};
  ASSERT_EQ(run_binary(create).status, 0);
  const RunResult twice = run_binary(create);
  EXPECT_EQ(twice.status, 1);
  EXPECT_EQ(twice.err, "memshard-fleet: rejected: fleet web exists\n");
  const RunResult missing = run_binary({"--store", etcd.url(), "show", "nope"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no fleet nope"), std::string::npos);
  const RunResult no_members = run_binary({"--store", etcd.url(), "members", "nope"});
  EXPECT_EQ(no_members.status, 1);

  const auto start = std::chrono::steady_clock::now();
  const RunResult down = run_binary(
      {"--store", "etcd://127.0.0.1:" + std::to_string(memshard::testing::detail::free_port()),
       "--timeout", "0.5", "show", "web"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds{5});
  EXPECT_EQ(down.status, 1);
  EXPECT_NE(down.err.find("unreachable"), std::string::npos) << down.err;

  const RunResult bad_profile = run_binary({"--store", etcd.url(), "create", "w2", "--profile",
                                            "no-such-profile", "--servers", "10.0.0.1"});
  EXPECT_EQ(bad_profile.status, 2);
  EXPECT_NE(bad_profile.err.find("unknown profile"), std::string::npos);
  const RunResult bad_url = run_binary({"--store", "http://x", "show", "web"});
  EXPECT_EQ(bad_url.status, 2);
  EXPECT_NE(bad_url.err.find("store URL"), std::string::npos);
  const RunResult usage = run_binary({"show"});
  EXPECT_EQ(usage.status, 2);
  const RunResult help = run_binary({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("usage: memshard-fleet"), std::string::npos);
}

TEST(FleetMainTest, AMigrationWaitsForAMemberBehindUntilItIsEvicted) {
  EtcdServer etcd;
  ASSERT_EQ(run_binary({"--store", etcd.url(), "create", "web", "--profile", "libmemcached-ketama",
                        "--servers", "10.0.0.1 10.0.0.2"})
                .status,
            0);
  // A member that registered and never follows (no lease: only evict removes it).
  memshard::EtcdClient client(etcd.url());
  ASSERT_TRUE(client
                  .put("memshard/fleets/web/members/stuck",
                       memshard::detail::member_value(1, "host-1", 4242))
                  .ok());
  const std::vector<std::string> migrate = {
      "--store",       etcd.url(), "--timeout", "0.3",
      "migrate",       "web",      "--servers", "10.0.0.1 10.0.0.2 10.0.0.3",
      "--consistency", "strict"};
  const RunResult stuck = run_binary(migrate);
  EXPECT_EQ(stuck.status, 1);
  EXPECT_NE(stuck.err.find("web: epoch 2 (phase 1, prepare): 0 of 1 live member\n"),
            std::string::npos)
      << stuck.err;
  EXPECT_NE(stuck.err.find("behind: stuck"), std::string::npos) << stuck.err;
  const RunResult shown = run_binary({"--store", etcd.url(), "show", "web"});
  EXPECT_NE(shown.out.find("change: migrate, phase 1 (prepare), consistency strict"),
            std::string::npos)
      << shown.out;

  const RunResult evicted = run_binary({"--store", etcd.url(), "evict", "web", "stuck"});
  ASSERT_EQ(evicted.status, 0) << evicted.err;
  EXPECT_EQ(evicted.out, "evicted stuck from fleet web\n");
  const RunResult opened = run_binary(migrate);
  ASSERT_EQ(opened.status, 0) << opened.err;
  EXPECT_NE(opened.out.find("reads through to the new placement (epoch 3)"), std::string::npos)
      << opened.out;
  // Its servers do not exist: nothing is swept, and the old ones are recorded as holding stale
  // copies.
  const RunResult committed = run_binary({"--store", etcd.url(), "commit", "web", "--no-sweep"});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_NE(committed.out.find("on its new placement (epoch 6)"), std::string::npos);
  EXPECT_NE(committed.err.find("10.0.0.2:11211: not swept whole (sweeping is off): recorded as "
                               "holding stale copies\n"),
            std::string::npos)
      << committed.err;
  const RunResult after = run_binary({"--store", etcd.url(), "show", "web", "--json"});
  EXPECT_NE(after.out.find("\"stale_copies\":[\"10.0.0.1:11211\",\"10.0.0.2:11211\"]"),
            std::string::npos)
      << after.out;
  const RunResult nothing = run_binary({"--store", etcd.url(), "abort", "web"});
  EXPECT_EQ(nothing.status, 1);
  EXPECT_NE(nothing.err.find("no change is in progress"), std::string::npos) << nothing.err;
  const RunResult ghost = run_binary({"--store", etcd.url(), "evict", "web", "ghost"});
  EXPECT_EQ(ghost.status, 1);
}

}  // namespace
}  // namespace fleet_main_test
