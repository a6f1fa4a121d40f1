// SPDX-License-Identifier: MIT
// fleet_command_line_test.cpp: memshard-fleet's command line, accepted and refused.

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/command_line.hpp"

namespace fleet_command_line_test {
namespace {

namespace tool = memshard::fleet_tool;

auto parse(std::vector<std::string_view> args, std::string_view store = "")
    -> tool::ParsedFleetCommandLine {
  return tool::parse_fleet_command_line(args, store);
}

TEST(FleetCommandLineTest, CreateWithEveryOption) {
  const auto parsed = parse({"--store",          "etcd://127.0.0.1:2379",
                             "create",           "web",
                             "--profile",        "spymemcached-ketama",
                             "--servers",        "a:1 b:2",
                             "--hash",           "md5",
                             "--points",         "160",
                             "--weighted",       "false",
                             "--key-prefix",     "app:",
                             "--prefix-hashing", "prefixed-key",
                             "--failure-policy", "failover",
                             "--timeout",        "1.5"});
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  const tool::FleetCommandLine& c = parsed.command;
  EXPECT_EQ(c.action, tool::FleetAction::kCreate);
  EXPECT_EQ(c.store, "etcd://127.0.0.1:2379");
  EXPECT_EQ(c.name, "web");
  EXPECT_EQ(c.profile, "spymemcached-ketama");
  EXPECT_EQ(c.servers, "a:1 b:2");
  EXPECT_EQ(c.profile_options.hash, "md5");
  EXPECT_EQ(c.profile_options.points, 160U);
  EXPECT_EQ(c.profile_options.weighted, false);
  EXPECT_EQ(c.key_prefix, "app:");
  EXPECT_EQ(c.prefix_hashing, memshard::PrefixHashing::kPrefixedKey);
  EXPECT_EQ(c.failure_policy, memshard::FailurePolicy::kFailover);
  EXPECT_EQ(c.timeout, std::chrono::milliseconds{1'500});
  EXPECT_FALSE(c.json);
}

TEST(FleetCommandLineTest, ShowAndMembersTakeJsonAndTheStoreFromTheEnvironment) {
  const auto show = parse({"show", "web", "--json"}, "etcd://e:1");
  ASSERT_TRUE(show.ok()) << show.error;
  EXPECT_EQ(show.command.action, tool::FleetAction::kShow);
  EXPECT_TRUE(show.command.json);
  EXPECT_EQ(show.command.store, "etcd://e:1");
  const auto members = parse({"members", "--store", "etcd://f:2", "web"}, "etcd://e:1");
  ASSERT_TRUE(members.ok()) << members.error;
  EXPECT_EQ(members.command.action, tool::FleetAction::kMembers);
  EXPECT_EQ(members.command.store, "etcd://f:2");  // --store wins
}

TEST(FleetCommandLineTest, TheChangesAndEvict) {
  const auto migrate = parse({"migrate", "web", "--servers", "a:1 b:2", "--consistency", "strict",
                              "--flushed", "--timeout", "120"},
                             "etcd://e:1");
  ASSERT_TRUE(migrate.ok()) << migrate.error;
  EXPECT_EQ(migrate.command.action, tool::FleetAction::kMigrate);
  EXPECT_EQ(migrate.command.servers, "a:1 b:2");
  EXPECT_TRUE(migrate.command.profile.empty());  // the fleet's own, read at run time
  EXPECT_EQ(migrate.command.consistency, memshard::MigrationConsistency::kStrict);
  EXPECT_TRUE(migrate.command.flushed);
  EXPECT_EQ(migrate.command.timeout, std::chrono::milliseconds{120'000});
  const auto reconfigure =
      parse({"reconfigure", "web", "--servers", "c", "--profile", "ring-crc32"}, "etcd://e:1");
  ASSERT_TRUE(reconfigure.ok()) << reconfigure.error;
  EXPECT_EQ(reconfigure.command.action, tool::FleetAction::kReconfigure);
  EXPECT_EQ(reconfigure.command.profile, "ring-crc32");
  EXPECT_FALSE(reconfigure.command.no_sweep);
  const auto unswept = parse({"commit", "web", "--no-sweep"}, "etcd://e:1");
  ASSERT_TRUE(unswept.ok()) << unswept.error;
  EXPECT_TRUE(unswept.command.no_sweep);
  EXPECT_EQ(parse({"commit", "web"}, "etcd://e:1").command.action, tool::FleetAction::kCommit);
  EXPECT_EQ(parse({"abort", "web"}, "etcd://e:1").command.action, tool::FleetAction::kAbort);
  EXPECT_EQ(parse({"abort", "web"}, "etcd://e:1").command.timeout,
            std::chrono::milliseconds{60'000});
  const auto evict = parse({"evict", "web", "host-7.1234"}, "etcd://e:1");
  ASSERT_TRUE(evict.ok()) << evict.error;
  EXPECT_EQ(evict.command.action, tool::FleetAction::kEvict);
  EXPECT_EQ(evict.command.member, "host-7.1234");
}

TEST(FleetCommandLineTest, HelpAndVersionWinOverEverything) {
  EXPECT_EQ(parse({"frobnicate", "--help"}).command.action, tool::FleetAction::kHelp);
  EXPECT_EQ(parse({"--version", "--timeout"}).command.action, tool::FleetAction::kVersion);
  std::ostringstream usage;
  tool::print_usage(usage);
  EXPECT_NE(usage.str().find("create NAME"), std::string::npos);
  std::ostringstream version;
  tool::print_version(version);
  EXPECT_EQ(version.str().rfind("memshard-fleet (memshard) ", 0), 0U);
}

TEST(FleetCommandLineTest, EveryMistakeIsRefusedWithItsReason) {
  const std::vector<std::pair<std::vector<std::string_view>, std::string_view>> bad = {
      {{}, "missing a command"},
      {{"--store", "etcd://e:1"}, "missing a command"},
      {{"frobnicate", "web", "--store", "etcd://e:1"}, "unknown command"},
      {{"show", "--store", "etcd://e:1"}, "one fleet name"},
      {{"show", "a", "b", "--store", "etcd://e:1"}, "one fleet name"},
      {{"show", "web"}, "missing --store"},
      {{"show", "web", "--store"}, "needs a value"},
      {{"show", "web", "--store", "etcd://e:1", "--profile", "x"}, "take a placement"},
      {{"members", "web", "--store", "etcd://e:1", "--hash", "md5"}, "take a placement"},
      {{"commit", "web", "--store", "etcd://e:1", "--servers", "a"}, "take a placement"},
      {{"migrate", "web", "--store", "etcd://e:1", "--servers", "a", "--key-prefix", "x"},
       "create only"},
      {{"migrate", "web", "--store", "etcd://e:1"}, "needs --servers"},
      {{"migrate", "web", "--store", "etcd://e:1", "--servers", "a", "--hash", "md5"},
       "go with --profile"},
      {{"reconfigure", "web", "--store", "etcd://e:1"}, "needs --servers"},
      {{"reconfigure", "web", "--store", "etcd://e:1", "--servers", "a", "--consistency", "strict"},
       "only migrate takes --consistency"},
      {{"migrate", "web", "--store", "etcd://e:1", "--servers", "a", "--consistency", "exact"},
       "--consistency"},
      {{"abort", "web", "--store", "etcd://e:1", "--flushed"}, "--flushed"},
      {{"migrate", "web", "--store", "etcd://e:1", "--servers", "a", "--no-sweep"}, "--no-sweep"},
      {{"commit", "web", "--store", "etcd://e:1", "--json"}, "no --json"},
      {{"evict", "web", "--store", "etcd://e:1"}, "a member's id"},
      {{"evict", "web", "m", "x", "--store", "etcd://e:1"}, "a member's id"},
      {{"create", "web", "--store", "etcd://e:1", "--servers", "a:1"}, "needs --profile"},
      {{"create", "web", "--store", "etcd://e:1", "--profile", "p"}, "needs --profile"},
      {{"create", "web", "--store", "etcd://e:1", "--profile", "p", "--servers", "a", "--json"},
       "no --json"},
      {{"show", "web", "--store", "etcd://e:1", "--timeout", "0"}, "--timeout"},
      {{"show", "web", "--store", "etcd://e:1", "--timeout", "abc"}, "--timeout"},
      {{"show", "web", "--store", "etcd://e:1", "--timeout", "3601"}, "--timeout"},
      {{"create", "w", "--store", "etcd://e:1", "--points", "0"}, "--points"},
      {{"create", "w", "--store", "etcd://e:1", "--weighted", "yes"}, "--weighted"},
      {{"create", "w", "--store", "etcd://e:1", "--prefix-hashing", "x"}, "--prefix-hashing"},
      {{"create", "w", "--store", "etcd://e:1", "--failure-policy", "x"}, "--failure-policy"},
      {{"show", "web", "--store", "etcd://e:1", "--colour", "red"}, "unknown option"},
  };
  for (const auto& [args, why] : bad) {
    const auto parsed = parse(args);
    SCOPED_TRACE(std::string(why));
    EXPECT_FALSE(parsed.ok());
    EXPECT_NE(parsed.error.find(why), std::string::npos) << parsed.error;
  }
}

}  // namespace
}  // namespace fleet_command_line_test
