// SPDX-License-Identifier: MIT
// KeyPrefix: the sent key, the placement key of each PrefixHashing, strip,
// the prefixes refused; and the prefix tables recorded from the real clients
// (tests/golden/prefix/): php-memcached's OPT_PREFIX_KEY, Dalli's namespace
// and Cache::Memcached::Fast's namespace place every key where memshard's
// profile with the same KeyPrefix does, and keys whose prefixed form breaks
// the key rules are the ones the real client did not send as prefix + key.
#include "memshard/placement/key_prefix.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/errors.hpp"
#include "memshard/placement/key.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"
#include "support/golden_table.hpp"

namespace key_prefix_test {
namespace {

using memshard::ConfigError;
using memshard::KeyPrefix;
using memshard::PrefixHashing;

TEST(KeyPrefixTest, NoPrefixSendsAndPlacesTheKeyItself) {
  const KeyPrefix none;
  std::string buffer;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.sent_key("user:1", buffer), "user:1");
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(none.placement_key("user:1"), "user:1");
  EXPECT_EQ(none.placement_skip(), 0U);
  EXPECT_EQ(none.strip("user:1"), "user:1");
}

TEST(KeyPrefixTest, BareKeyPlacesWithoutThePrefix) {
  const KeyPrefix prefix("app:", PrefixHashing::kBareKey);
  std::string buffer;
  const std::string_view sent = prefix.sent_key("user:1", buffer);
  EXPECT_EQ(sent, "app:user:1");
  EXPECT_EQ(prefix.placement_key(sent), "user:1");
  EXPECT_EQ(prefix.placement_skip(), 4U);
  EXPECT_EQ(prefix.strip(sent), "user:1");
  EXPECT_EQ(prefix.strip("other:user:1"), std::nullopt);
  EXPECT_EQ(memshard::to_string(prefix.hashing()), "bare_key");
}

TEST(KeyPrefixTest, PrefixedKeyPlacesTheSentKey) {
  const KeyPrefix prefix("ns:", PrefixHashing::kPrefixedKey);
  std::string buffer;
  const std::string_view sent = prefix.sent_key("k", buffer);
  EXPECT_EQ(sent, "ns:k");
  EXPECT_EQ(prefix.placement_key(sent), "ns:k");
  EXPECT_EQ(prefix.placement_skip(), 0U);
  EXPECT_EQ(memshard::to_string(prefix.hashing()), "prefixed_key");
}

TEST(KeyPrefixTest, RefusesWhatCannotStartAKey) {
  EXPECT_THROW(KeyPrefix("a b"), ConfigError);
  EXPECT_THROW(KeyPrefix("a\r\n"), ConfigError);
  EXPECT_THROW(KeyPrefix(std::string(1, '\0')), ConfigError);
  EXPECT_THROW(KeyPrefix(std::string(1, '\x7f')), ConfigError);
  EXPECT_THROW(KeyPrefix(std::string(memshard::kMaxKeyLength, 'p')), ConfigError);
  EXPECT_NO_THROW(KeyPrefix(std::string(memshard::kMaxKeyLength - 1, 'p')));
  EXPECT_NO_THROW(KeyPrefix("\xc3\xa9t\xc3\xa9:"));  // UTF-8 is fine, as in keys
}

// ---- the prefix tables of the real clients -----------------------------------

namespace fs = std::filesystem;
using memshard::testing::GoldenCase;
using memshard::testing::kNotSent;

const fs::path kGoldenDir = MEMSHARD_GOLDEN_DIR;
const fs::path kPrefixDir = kGoldenDir / "prefix";

auto prefix_tables() -> std::vector<std::string> {
  std::vector<std::string> files;
  if (fs::is_directory(kPrefixDir)) {
    for (const auto& entry : fs::directory_iterator(kPrefixDir)) {
      if (entry.path().extension() == ".golden") {
        files.push_back(entry.path().filename().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// A key of a case on which memshard disagrees with the real client.
struct Disagreement {
  std::size_t key = 0;
  std::size_t expected = 0;
  std::size_t actual = 0;
};

// Where memshard (the case's profile with its KeyPrefix) puts each key: the
// recorded server, or refused by the key rules exactly where the real client
// did not send prefix + key.
auto disagreements(const GoldenCase& c, const std::vector<std::string>& keys)
    -> std::vector<Disagreement> {
  const KeyPrefix prefix(c.prefix, *c.prefix_hashing);
  const memshard::AnyLocator locator =
      memshard::make_locator(c.profile, c.servers, memshard::testing::profile_options(c));
  std::vector<Disagreement> out;
  std::string buffer;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::string_view sent = prefix.sent_key(keys[k], buffer);
    const std::size_t actual =
        memshard::is_valid_key(sent) ? locator.locate(prefix.placement_key(sent)) : kNotSent;
    if (actual != c.placement[k]) {
      out.push_back({k, c.placement[k], actual});
    }
  }
  return out;
}

class PrefixTable : public ::testing::TestWithParam<std::string> {};

TEST_P(PrefixTable, EveryKeyLandsAndIsSentAsTheRealClientDoes) {
  const std::vector<std::string> keys = memshard::testing::read_keys(kGoldenDir);
  ASSERT_GT(keys.size(), 900U);
  const std::vector<GoldenCase> cases = memshard::testing::read_golden(kPrefixDir / GetParam());
  ASSERT_FALSE(cases.empty());
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(GetParam() + ":" + std::to_string(c.line) + " case " + c.id);
    ASSERT_FALSE(c.prefix.empty()) << "a prefix case without a prefix";
    ASSERT_TRUE(c.prefix_hashing.has_value());
    ASSERT_EQ(c.placement.size(), keys.size());
    std::size_t sent = 0;
    for (const std::size_t index : c.placement) {
      ASSERT_TRUE(index == kNotSent || index < c.servers.size());
      sent += index == kNotSent ? 0 : 1;
    }
    ASSERT_GT(sent, keys.size() * 9 / 10) << "most keys are sent as prefix + key";
    const std::vector<Disagreement> found = disagreements(c, keys);
    EXPECT_TRUE(found.empty()) << found.size() << " of " << keys.size()
                               << " keys differ; first: key #" << found.front().key << " '"
                               << keys[found.front().key] << "' expected "
                               << static_cast<std::ptrdiff_t>(found.front().expected)
                               << ", memshard " << static_cast<std::ptrdiff_t>(found.front().actual)
                               << " (-1: not sent)";
  }
}

INSTANTIATE_TEST_SUITE_P(Tables, PrefixTable, ::testing::ValuesIn(prefix_tables()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param.substr(0, param.param.find('.'));
                         });

// The tables cover both hashings of every client the issue names, and the
// comparison sees one misplaced key and the other hashing.
TEST(PrefixTables, CoverTheClientsAndCatchOneMisplacedKey) {
  const std::vector<std::string> keys = memshard::testing::read_keys(kGoldenDir);
  std::set<std::string> covered;
  for (const std::string& file : prefix_tables()) {
    std::vector<GoldenCase> cases = memshard::testing::read_golden(kPrefixDir / file);
    for (GoldenCase& c : cases) {
      covered.insert(c.profile + "/" + std::string(memshard::to_string(*c.prefix_hashing)));
    }
    GoldenCase& first = cases.front();
    ASSERT_GT(first.servers.size(), 1U);
    std::size_t victim = keys.size() / 2;
    while (first.placement[victim] == kNotSent) {
      ++victim;
    }
    GoldenCase moved = first;
    moved.placement[victim] = (moved.placement[victim] + 1) % moved.servers.size();
    const std::vector<Disagreement> one = disagreements(moved, keys);
    ASSERT_EQ(one.size(), 1U) << file;
    EXPECT_EQ(one.front().key, victim);
    GoldenCase other = first;
    other.prefix_hashing = *first.prefix_hashing == PrefixHashing::kBareKey
                               ? PrefixHashing::kPrefixedKey
                               : PrefixHashing::kBareKey;
    EXPECT_GT(disagreements(other, keys).size(), keys.size() / 2) << file;
  }
  for (const char* expected :
       {"php-memcached/bare_key", "php-memcached/prefixed_key", "php-memcached-libketama/bare_key",
        "dalli/prefixed_key", "cache-memcached-fast/bare_key",
        "cache-memcached-fast/prefixed_key"}) {
    EXPECT_TRUE(covered.contains(expected)) << "no prefix case for " << expected;
  }
}

}  // namespace
}  // namespace key_prefix_test
