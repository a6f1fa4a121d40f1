// SPDX-License-Identifier: MIT
// Every compatibility profile against the golden tables in tests/golden/:
// where real clients (twemproxy, spymemcached, Perl, Python, PHP, Ruby, Go)
// put each key of keys.txt, recorded by the generators in that folder. Every
// key of every case must land on the recorded server.
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/profiles.hpp"
#include "support/golden_table.hpp"

namespace golden_test {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = MEMSHARD_GOLDEN_DIR;

using memshard::testing::GoldenCase;
using memshard::testing::profile_options;

auto read_keys() -> std::vector<std::string> { return memshard::testing::read_keys(kGoldenDir); }
auto read_golden(const fs::path& path) -> std::vector<GoldenCase> {
  std::vector<GoldenCase> cases = memshard::testing::read_golden(path);
  for (const GoldenCase& c : cases) {
    if (!c.prefix.empty() || c.prefix_hashing) {
      throw std::runtime_error(c.id + ": prefix tables live in prefix/ (key_prefix_test)");
    }
  }
  return cases;
}

// The key as the client stores (and hashes) it: Dalli stores
// "namespace:key", shortened when long (profiles::dalli_key); memshard users
// pass that stored key.
auto key_as_hashed(const GoldenCase& c, const std::string& key) -> std::string {
  const auto ns = c.options.find("namespace");
  if (c.profile == "dalli") {
    return memshard::profiles::dalli_key(key, ns == c.options.end() ? "" : ns->second);
  }
  if (ns == c.options.end()) {
    return key;
  }
  throw std::runtime_error(c.id + ": no namespace rule for profile " + c.profile);
}

struct Mismatch {
  std::size_t key;
  std::size_t expected;
  std::size_t actual;
};

auto compare(const GoldenCase& c, std::span<const std::string> keys) -> std::vector<Mismatch> {
  const memshard::AnyLocator locator =
      memshard::make_locator(c.profile, c.servers, profile_options(c));
  std::vector<Mismatch> mismatches;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::size_t actual = locator.locate(key_as_hashed(c, keys[k]));
    if (actual != c.placement[k]) {
      mismatches.push_back({k, c.placement[k], actual});
    }
  }
  return mismatches;
}

auto golden_files() -> std::vector<std::string> {
  std::vector<std::string> files;
  if (fs::is_directory(kGoldenDir)) {
    for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
      if (entry.path().extension() == ".golden") {
        files.push_back(entry.path().filename().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

class GoldenTable : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTable, EveryKeyLandsWhereTheRealClientPutsIt) {
  const std::vector<std::string> keys = read_keys();
  ASSERT_GT(keys.size(), 900U);
  const std::vector<GoldenCase> cases = read_golden(kGoldenDir / GetParam());
  ASSERT_FALSE(cases.empty()) << GetParam() << " holds no case";
  std::set<std::string> ids;
  for (const GoldenCase& c : cases) {
    EXPECT_TRUE(ids.insert(c.id).second) << GetParam() << ": case id " << c.id << " twice";
  }
  std::size_t checked = 0;
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(GetParam() + ":" + std::to_string(c.line) + " case " + c.id + " (" + c.client +
                 ")");
    ASSERT_FALSE(c.servers.empty());
    ASSERT_EQ(c.placement.size(), keys.size()) << "one index per key of keys.txt";
    for (const std::size_t index : c.placement) {
      ASSERT_LT(index, c.servers.size());
    }
    const std::vector<Mismatch> mismatches = compare(c, keys);
    EXPECT_TRUE(mismatches.empty())
        << mismatches.size() << " of " << keys.size() << " keys misplaced; first: key #"
        << mismatches.front().key << " '" << keys[mismatches.front().key] << "' expected server "
        << mismatches.front().expected << ", memshard says " << mismatches.front().actual;
    checked += keys.size();
  }
  RecordProperty("keys_checked", static_cast<int>(checked));
}

INSTANTIATE_TEST_SUITE_P(Tables, GoldenTable, ::testing::ValuesIn(golden_files()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param.substr(0, param.param.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Every profile that reproduces a client other than libmemcached (checked in
// process by profiles_test) has cases in the tables, so that a table lost or
// emptied cannot pass unnoticed.
TEST(GoldenTables, CoverEveryPeerProfile) {
  std::set<std::string> covered;
  for (const std::string& file : golden_files()) {
    for (const GoldenCase& c : read_golden(kGoldenDir / file)) {
      covered.insert(c.profile);
    }
  }
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    const std::string name(profile.name);
    if (name.starts_with("libmemcached-") || name == "modulo-crc32" || name == "ring-crc32") {
      continue;
    }
    EXPECT_TRUE(covered.contains(name)) << "no golden case for profile " << name;
  }
}

// The comparison sees a single misplaced key: move one key of the first case
// of every table to another server and it must report exactly that key.
TEST(GoldenTables, OneMisplacedKeyIsCaught) {
  const std::vector<std::string> keys = read_keys();
  for (const std::string& file : golden_files()) {
    std::vector<GoldenCase> cases = read_golden(kGoldenDir / file);
    auto multi = std::find_if(cases.begin(), cases.end(),
                              [](const GoldenCase& c) { return c.servers.size() > 1; });
    ASSERT_NE(multi, cases.end()) << file << " has no case with several servers";
    const std::size_t victim = keys.size() / 2;
    multi->placement[victim] = (multi->placement[victim] + 1) % multi->servers.size();
    const std::vector<Mismatch> mismatches = compare(*multi, keys);
    ASSERT_EQ(mismatches.size(), 1U) << file;
    EXPECT_EQ(mismatches.front().key, victim) << file;
  }
}

}  // namespace
}  // namespace golden_test

namespace golden_test {
namespace {

// The compatibility table of docs/profiles.md names every profile, so that a
// user can find their client's.
TEST(GoldenTables, TheProfilesPageTableNamesEveryProfile) {
  std::ifstream in(kGoldenDir / ".." / ".." / "docs" / "profiles.md");
  ASSERT_TRUE(in) << "docs/profiles.md not found";
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    EXPECT_NE(page.find("| `" + std::string(profile.name) + "` |"), std::string::npos)
        << profile.name << " has no row in the compatibility table of docs/profiles.md";
  }
}

}  // namespace
}  // namespace golden_test
