// SPDX-License-Identifier: MIT
// java_string.hpp: Java's String.hashCode over the key decoded from UTF-8
// (spymemcached's NATIVE_HASH), against its definition written out here.
#include "memshard/placement/hash/java_string.hpp"

#include <cstdint>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/placement/hash/hasher.hpp"
#include "support/hasher_conformance.hpp"

namespace memshard::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(JavaString, HasherConformanceTest, JavaStringHash);
static_assert(kConstantEvaluable<JavaStringHash>);

}  // namespace memshard::testing

namespace java_string_test {
namespace {

using memshard::JavaStringHash;

static_assert(memshard::Hasher<JavaStringHash>);
// Java: "hello".hashCode() == 99162322, "".hashCode() == 0.
static_assert(JavaStringHash{}("hello") == 99162322U);
static_assert(JavaStringHash{}("") == 0U);

// Java's hashCode over UTF-16 units, written out from its definition.
auto java_hash_utf16(std::u16string_view units) -> std::uint32_t {
  std::uint32_t h = 0;
  for (const char16_t unit : units) {
    h = h * 31U + unit;
  }
  return h;
}

TEST(JavaStringHashTest, DecodesUtf8IntoUtf16Units) {
  EXPECT_EQ(JavaStringHash{}("user:42"), java_hash_utf16(u"user:42"));
  EXPECT_EQ(JavaStringHash{}("caf\xC3\xA9"), java_hash_utf16(u"caf\u00E9"));
  EXPECT_EQ(JavaStringHash{}("\xE6\x9D\xB1\xE4\xBA\xAC"), java_hash_utf16(u"\u6771\u4EAC"));
  // U+1F600 is two UTF-16 units, D83D DE00.
  EXPECT_EQ(JavaStringHash{}("a\xF0\x9F\x98\x80z"), java_hash_utf16(u"a\xD83D\xDE00z"));
}

TEST(JavaStringHashTest, InvalidUtf8CountsEachBadByteAsReplacement) {
  EXPECT_EQ(JavaStringHash{}("a\xFFz"), java_hash_utf16(u"a\uFFFDz"));
  EXPECT_EQ(JavaStringHash{}("\xC3"), java_hash_utf16(u"\uFFFD"));            // truncated
  EXPECT_EQ(JavaStringHash{}("\xC0\xAF"), java_hash_utf16(u"\uFFFD\uFFFD"));  // overlong
  EXPECT_EQ(JavaStringHash{}("\xED\xA0\x80"),                                 // a surrogate
            java_hash_utf16(u"\uFFFD\uFFFD\uFFFD"));
}

}  // namespace
}  // namespace java_string_test
