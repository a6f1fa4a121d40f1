// SPDX-License-Identifier: MIT
// migration_options.hpp: the defaults, every refusal of validate_migration_options
// (with what it names), and KeyMigration's names.

#include "memshard/migration/migration_options.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <string_view>

#include "memshard/errors.hpp"

namespace migration_options_test {
namespace {

using memshard::MigrationOptions;

auto refusal(const MigrationOptions& options) -> std::string {
  try {
    memshard::validate_migration_options(options);
  } catch (const memshard::ConfigError& error) {
    return error.what();
  }
  return {};
}

TEST(MigrationOptionsTest, TheDefaultsAreFastAutoMoveAndABoundedCopyTtl) {
  const MigrationOptions options;
  EXPECT_EQ(options.consistency, memshard::MigrationConsistency::kFast);
  EXPECT_EQ(options.move_on_copy, memshard::MoveOnCopy::kAuto);
  EXPECT_GT(options.copy_ttl_cap.count(), 0);
  EXPECT_EQ(refusal(options), "");
}

TEST(MigrationOptionsTest, OptionsThatCannotWorkAreRefusedWithWhatIsWrong) {
  MigrationOptions options;
  options.copy_ttl_cap = std::chrono::seconds{0};
  EXPECT_NE(refusal(options).find("copy_ttl_cap"), std::string::npos);
  options.copy_ttl_cap = std::chrono::seconds{60LL * 60 * 24 * 31};
  EXPECT_NE(refusal(options).find("30 days"), std::string::npos);
  options = {};
  options.min_copy_ttl = std::chrono::seconds{-1};
  EXPECT_NE(refusal(options).find("min_copy_ttl"), std::string::npos);
  options = {};
  options.fallback_timeout = std::chrono::milliseconds{-1};
  EXPECT_NE(refusal(options).find("fallback_timeout"), std::string::npos);
  options = {};
  options.lease_ttl = std::chrono::seconds{0};
  EXPECT_NE(refusal(options).find("lease_ttl"), std::string::npos);
}

TEST(MigrationOptionsTest, EveryKeyMigrationHasItsOwnName) {
  using memshard::KeyMigration;
  std::set<std::string_view> names;
  for (auto outcome :
       {KeyMigration::kNoMigration, KeyMigration::kInvalidKey, KeyMigration::kSameOwner,
        KeyMigration::kCopied, KeyMigration::kAlreadyPresent, KeyMigration::kNotOnOldOwner,
        KeyMigration::kRevoked, KeyMigration::kTooShort, KeyMigration::kOldOwnerUnavailable,
        KeyMigration::kNewOwnerFailed}) {
    const std::string_view name = memshard::to_string(outcome);
    EXPECT_NE(name, "unknown");
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 10U);
}

}  // namespace
}  // namespace migration_options_test
