// SPDX-License-Identifier: MIT
#include "memshard/placement/key.hpp"

#include <string>

#include "gtest/gtest.h"

namespace key_test {
namespace {

using memshard::check_key;
using memshard::KeyErrc;

static_assert(memshard::is_valid_key("user:42"));
static_assert(!memshard::is_valid_key(""));

TEST(KeyTest, AcceptsOrdinaryAndUtf8Keys) {
  EXPECT_FALSE(check_key("user:42").has_value());
  EXPECT_FALSE(check_key("a").has_value());
  EXPECT_FALSE(check_key("\xE6\x9D\xB1\xE4\xBA\xAC").has_value());  // UTF-8 bytes >= 0x80
  EXPECT_FALSE(check_key("~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./").has_value());
}

TEST(KeyTest, LengthLimitIs250Bytes) {
  EXPECT_FALSE(check_key(std::string(250, 'k')).has_value());
  const auto problem = check_key(std::string(251, 'k'));
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->code, KeyErrc::kTooLong);
  EXPECT_EQ(problem->message(), "key is 251 bytes long, the limit is 250");
}

TEST(KeyTest, EmptyKey) {
  const auto problem = check_key("");
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->code, KeyErrc::kEmpty);
  EXPECT_EQ(problem->message(), "key is empty");
}

TEST(KeyTest, CommandInjectionIsAControlByte) {
  const auto problem = check_key("a\r\nflush_all");
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->code, KeyErrc::kControl);
  EXPECT_EQ(problem->offset, 1U);
  EXPECT_EQ(problem->message(), "key has a control byte 0x0d at offset 1");
}

TEST(KeyTest, SpaceIsNamed) {
  const auto problem = check_key("two words");
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->code, KeyErrc::kSpace);
  EXPECT_EQ(problem->offset, 3U);
  EXPECT_EQ(problem->message(), "key has a space at offset 3");
}

TEST(KeyTest, EveryByteValueIsClassified) {
  for (int byte = 0; byte < 256; ++byte) {
    const std::string key = std::string("k") + static_cast<char>(byte);
    const auto problem = check_key(key);
    if (byte < 0x20 || byte == 0x7F) {
      ASSERT_TRUE(problem.has_value()) << byte;
      EXPECT_EQ(problem->code, KeyErrc::kControl) << byte;
      EXPECT_EQ(problem->byte, byte);
      EXPECT_EQ(problem->offset, 1U);
    } else if (byte == 0x20) {
      ASSERT_TRUE(problem.has_value());
      EXPECT_EQ(problem->code, KeyErrc::kSpace);
    } else {
      EXPECT_FALSE(problem.has_value()) << byte;
    }
  }
}

TEST(KeyTest, FastValidityAgreesWithCheckKeyForEveryByteAtEveryOffset) {
  // is_valid_key looks at eight bytes at a time: every byte value in every
  // lane, next to neighbours that are themselves close to the limits.
  for (std::size_t length : {1U, 7U, 8U, 9U, 16U, 23U, 250U}) {
    for (std::size_t offset = 0; offset < length; ++offset) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string key(length, '\x21');
        for (std::size_t i = 0; i < length; i += 2) {
          key[i] = static_cast<char>(0x80);
        }
        key[offset] = static_cast<char>(byte);
        ASSERT_EQ(memshard::is_valid_key(key), !check_key(key).has_value())
            << "length " << length << " offset " << offset << " byte " << byte;
      }
    }
  }
  EXPECT_FALSE(memshard::is_valid_key(""));
  EXPECT_FALSE(memshard::is_valid_key(std::string(251, 'k')));
}

TEST(KeyTest, ErrcNames) {
  EXPECT_EQ(memshard::to_string(KeyErrc::kEmpty), "empty");
  EXPECT_EQ(memshard::to_string(KeyErrc::kTooLong), "too_long");
  EXPECT_EQ(memshard::to_string(KeyErrc::kSpace), "space");
  EXPECT_EQ(memshard::to_string(KeyErrc::kControl), "control");
}

}  // namespace
}  // namespace key_test
