// SPDX-License-Identifier: MIT
// detail::KeyTable, which matches multi-get replies to request positions:
// duplicates in request order, keys that share long prefixes and suffixes,
// and keys it never saw.
#include "memshard/wire/detail/key_table.hpp"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace key_table_test {
namespace {

using memshard::detail::KeyTable;

// Finds the first unanswered position of `key`, as a multi-get does, and
// marks it answered.
auto take(const KeyTable& table, const std::vector<std::string>& keys,
          std::vector<std::uint8_t>& answered, std::string_view key) -> std::size_t {
  const std::size_t at = table.find(
      key, [&](std::size_t position) { return answered[position] == 0 && keys[position] == key; });
  if (at != KeyTable::kNone) {
    answered[at] = 1;
  }
  return at;
}

TEST(KeyTableTest, FindsEveryKeyAndDuplicatesInRequestOrder) {
  // Keys that differ only in the middle: equal length, first and last 8 bytes.
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) {
    keys.push_back("user:" + std::string(8, '0') + std::to_string(100000 + i) + ":profile:v2");
  }
  keys.push_back(keys[7]);
  keys.push_back("x");
  keys.push_back(keys[7]);
  KeyTable table;
  table.reset(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    table.insert(keys[i], static_cast<std::uint32_t>(i));
  }
  std::vector<std::uint8_t> answered(keys.size());
  EXPECT_EQ(take(table, keys, answered, keys[7]), 7U);
  EXPECT_EQ(take(table, keys, answered, keys[7]), 500U);
  EXPECT_EQ(take(table, keys, answered, keys[7]), 502U);
  EXPECT_EQ(take(table, keys, answered, keys[7]), KeyTable::kNone);  // asked three times
  EXPECT_EQ(take(table, keys, answered, "x"), 501U);
  for (std::size_t i = 0; i < 500; ++i) {
    if (i != 7) {
      EXPECT_EQ(take(table, keys, answered, keys[i]), i) << keys[i];
    }
  }
  EXPECT_EQ(take(table, keys, answered, "never-asked"), KeyTable::kNone);
}

TEST(KeyTableTest, HashesDependOnEveryByte) {
  const std::string base(40, 'k');
  std::set<std::uint64_t> seen;
  seen.insert(KeyTable::hash(base));
  for (std::size_t at = 0; at < base.size(); ++at) {
    std::string changed = base;
    changed[at] = 'j';
    seen.insert(KeyTable::hash(changed));
  }
  seen.insert(KeyTable::hash(base.substr(0, 39)));
  EXPECT_EQ(seen.size(), base.size() + 2);
}

TEST(KeyTableTest, ResetForgetsEverything) {
  const std::vector<std::string> keys = {"a", "b"};
  KeyTable table;
  table.reset(2);
  table.insert(keys[0], 0);
  table.insert(keys[1], 1);
  table.reset(2);
  std::vector<std::uint8_t> answered(2);
  EXPECT_EQ(take(table, keys, answered, "a"), KeyTable::kNone);
}

}  // namespace
}  // namespace key_table_test
