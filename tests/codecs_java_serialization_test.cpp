// SPDX-License-Identifier: MIT
// Tests for codecs/java_serialization.hpp: the golden spymemcached HashMap is
// recognised, the other items and near misses are not.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "memshard/codecs/java_serialization.hpp"
#include "support/value_table.hpp"

namespace codecs_java_serialization_test {
namespace {

using memshard::is_java_serialization;
using namespace std::string_view_literals;

static_assert(is_java_serialization("\xac\xed\x00\x05"sv));
static_assert(is_java_serialization("\xac\xed\x00\x05\x73\x72"sv));
static_assert(!is_java_serialization("\xac\xed\x00"sv));
static_assert(!is_java_serialization(""sv));

TEST(JavaSerialization, TheGoldenSpymemcachedHashMapIsRecognised) {
  const auto cases = memshard::testing::read_value_cases(
      std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values" / "spymemcached.values");
  int maps = 0;
  for (const auto& c : cases) {
    for (const auto& item : c.items) {
      if (item.refused) {
        continue;
      }
      if (item.name == "map") {
        EXPECT_EQ(item.flags & 1U, 1U) << c.id;
        EXPECT_TRUE(is_java_serialization(item.bytes)) << c.id;
        EXPECT_NE(item.bytes.find("java.util.HashMap"), std::string::npos);
        ++maps;
      } else if ((item.flags & 1U) == 0) {
        // Strings, numbers, booleans (and their gzip forms) are not streams.
        EXPECT_FALSE(is_java_serialization(item.bytes)) << c.id << " " << item.name;
      }
    }
  }
  EXPECT_GE(maps, 1);
}

TEST(JavaSerialization, NearMissesAreNotRecognised) {
  for (const std::string_view bytes :
       {"\xac\xed\x00\x04\x73"sv, "\xac\xed\x01\x05"sv, "\xed\xac\x00\x05"sv, "\xac\xee\x00\x05"sv,
        "\x00\xac\xed\x00\x05"sv, "\x1f\x8b\x08\x00"sv, "hello"sv, "\xac"sv, "\xac\xed"sv}) {
    EXPECT_FALSE(is_java_serialization(bytes)) << bytes.size();
  }
  EXPECT_TRUE(is_java_serialization("\xac\xed\x00\x05"sv));
}

}  // namespace
}  // namespace codecs_java_serialization_test
