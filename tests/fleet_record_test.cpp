// SPDX-License-Identifier: MIT
// fleet_record_test.cpp: FleetRecord's JSON, written and read back whole, read strictly, and
// validate_fleet_record's refusals.

#include "memshard/coordination/fleet_record.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace fleet_record_test {
namespace {

using memshard::decode_fleet_record;
using memshard::encode_fleet_record;
using memshard::FleetChange;
using memshard::FleetChangeKind;
using memshard::FleetPhase;
using memshard::FleetPlacement;
using memshard::FleetRecord;
using memshard::StoreErrc;
using memshard::validate_fleet_record;

auto placement(std::string servers, std::string profile = "libmemcached-ketama") -> FleetPlacement {
  return FleetPlacement{memshard::parse_servers(servers), std::move(profile), {}};
}

auto full_record() -> FleetRecord {
  FleetRecord record;
  record.epoch = 42;
  record.placement = placement("10.0.0.1:11211:2:cache-a 10.0.0.2:11212:3 [::1]:11213");
  record.placement.profile_options.hash = "crc32";
  record.key_prefix = "app:";
  record.prefix_hashing = memshard::PrefixHashing::kPrefixedKey;
  record.failure_policy = memshard::FailurePolicy::kFailover;
  FleetChange change;
  change.kind = FleetChangeKind::kMigrate;
  change.phase = FleetPhase::kReadThrough;
  change.next = placement("10.0.0.1:11211 10.0.0.3:11211", "spymemcached-ketama");
  change.next.profile_options.weighted = true;
  change.consistency = memshard::MigrationConsistency::kStrict;
  change.copied = true;
  record.change = change;
  record.stale_copies = {"10.0.0.9:11211", "[::1]:11213"};
  return record;
}

TEST(FleetRecordTest, ARecordReadsBackAsItWasWritten) {
  const FleetRecord record = full_record();
  const std::string text = encode_fleet_record(record);
  const auto back = decode_fleet_record(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(back.value(), record);
  EXPECT_EQ(encode_fleet_record(back.value()), text);

  FleetRecord steady;
  steady.placement = placement("127.0.0.1:11211");
  const auto steady_back = decode_fleet_record(encode_fleet_record(steady));
  ASSERT_TRUE(steady_back.ok()) << steady_back.status();
  EXPECT_EQ(steady_back.value(), steady);
  EXPECT_FALSE(steady_back->change.has_value());
  EXPECT_NO_THROW(validate_fleet_record(record));
  EXPECT_NO_THROW(validate_fleet_record(steady));
}

// edited: the JSON of full_record() with `from` replaced by `to` (which must be there).
auto edited(const std::string& from, const std::string& to) -> std::string {
  std::string text = encode_fleet_record(full_record());
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from << " not in " << text;
  if (at != std::string::npos) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(FleetRecordTest, ARecordIsReadStrictly) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"not json", "not JSON"},
      {"[]", "not an object"},
      {edited("\"format\":1", "\"format\":2"), "format"},
      {edited("\"epoch\":42", "\"epoch\":0"), "epoch"},
      {edited("\"epoch\":42", "\"epoch\":\"42\""), "epoch"},
      {edited("\"epoch\":42,", ""), "lacks 'epoch'"},
      {edited("\"epoch\":42", "\"epoch\":42,\"extra\":1"), "unknown member"},
      {edited("\"port\":11212", "\"port\":0"), "port"},
      {edited("\"port\":11212", "\"port\":65536"), "port"},
      {edited("\"weight\":3.0", "\"weight\":\"heavy\""), "weight"},
      {edited("\"name\":\"cache-a\"", "\"name\":7"), "name"},
      {edited("\"phase\":2", "\"phase\":0"), "phase"},
      {edited("\"phase\":2", "\"phase\":5"), "phase"},
      {edited("\"kind\":\"migrate\"", "\"kind\":\"move\""), "kind"},
      {edited("\"consistency\":\"strict\"", "\"consistency\":\"exact\""), "consistency"},
      {edited("\"weighted\":true", "\"weighted\":\"yes\""), "weighted"},
      {edited("\"copied\":true", "\"copied\":1"), "copied"},
      {edited("\"prefix_hashing\":\"prefixed-key\"", "\"prefix_hashing\":\"both\""),
       "prefix_hashing"},
      {edited("\"failure_policy\":\"failover\"", "\"failure_policy\":\"retry\""), "failure_policy"},
      {edited("\"stale_copies\":[\"10.0.0.9:11211\"", "\"stale_copies\":[7"), "stale_copies"},
      {edited("\"stale_copies\":[\"10.0.0.9:11211\",\"[::1]:11213\"]", "\"stale_copies\":\"x\""),
       "not a list"},
  };
  for (const auto& [text, why] : bad) {
    SCOPED_TRACE(text);
    const auto got = decode_fleet_record(text);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.code(), StoreErrc::kBadReply);
    EXPECT_NE(got.status().message().find(why), std::string::npos) << got.status();
  }
}

TEST(FleetRecordTest, ARecordThatCannotServeIsAConfigError) {
  auto expect_refused = [](const FleetRecord& record, const char* why) {
    SCOPED_TRACE(why);
    EXPECT_THROW(validate_fleet_record(record), memshard::ConfigError);
  };
  FleetRecord record = full_record();
  record.placement.profile = "no-such-profile";
  expect_refused(record, "an unknown profile");
  record = full_record();
  record.placement.profile_options.hash_tag = "{}";  // only twemproxy's profiles take it
  expect_refused(record, "an option the profile does not take");
  record = full_record();
  record.placement.servers.push_back(record.placement.servers.front());
  expect_refused(record, "a server twice");
  record = full_record();
  record.change->next = record.placement;
  expect_refused(record, "a change to the same placement");
  record = full_record();
  record.change->kind = FleetChangeKind::kReconfigure;
  expect_refused(record, "a switch has no read-through phase");
  record = full_record();
  record.epoch = 0;
  expect_refused(record, "epoch 0");
  record = full_record();
  record.change->next.servers.clear();
  expect_refused(record, "no next servers");
}

TEST(FleetRecordTest, TheNamesOfPhasesAndKinds) {
  EXPECT_EQ(memshard::to_string(FleetPhase::kSteady), "steady");
  EXPECT_EQ(memshard::to_string(FleetPhase::kReadThrough), "read-through");
  EXPECT_EQ(memshard::to_string(FleetPhase::kDone), "done");
  EXPECT_EQ(memshard::to_string(FleetChangeKind::kReconfigure), "reconfigure");
}

}  // namespace
}  // namespace fleet_record_test
