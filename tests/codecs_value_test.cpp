// SPDX-License-Identifier: MIT
// codecs/value.hpp: each kind holds what it was given, accessors refuse other
// kinds, maps keep their order and find string keys, and equality compares
// kind and content (a string is not bytes, 1 is not 1.0).

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "memshard/codecs/value.hpp"

namespace codecs_value_test {
namespace {

using memshard::BadValueAccess;
using memshard::Value;
using memshard::ValueKind;

TEST(ValueTest, EachKindHoldsWhatItWasGiven) {
  EXPECT_EQ(Value().kind(), ValueKind::kNull);
  EXPECT_EQ(Value(nullptr).kind(), ValueKind::kNull);
  EXPECT_TRUE(Value(true).as_bool());
  EXPECT_FALSE(Value(false).as_bool());
  EXPECT_EQ(Value(42).as_int(), 42);
  EXPECT_EQ(Value(std::int64_t{1} << 40).as_int(), std::int64_t{1} << 40);
  EXPECT_EQ(Value(std::numeric_limits<std::int64_t>::min()).as_int(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(Value(std::uint32_t{4000000000U}).as_int(), 4000000000);
  EXPECT_EQ(Value(3.25).as_double(), 3.25);
  EXPECT_EQ(Value("text").kind(), ValueKind::kString);
  EXPECT_EQ(Value("text").as_string(), "text");
  EXPECT_EQ(Value(std::string_view("view")).as_string(), "view");
  const Value bytes = Value::bytes(std::string("\0\xff", 2));
  EXPECT_EQ(bytes.kind(), ValueKind::kBytes);
  EXPECT_EQ(bytes.as_string(), std::string("\0\xff", 2));
  const Value object = Value::serialized("php-serialize", "O:8:\"stdClass\":0:{}");
  EXPECT_EQ(object.as_serialized().format, "php-serialize");
  EXPECT_EQ(object.as_serialized().data, "O:8:\"stdClass\":0:{}");
}

TEST(ValueTest, AccessorsRefuseOtherKinds) {
  EXPECT_THROW((void)Value(1).as_double(), BadValueAccess);
  EXPECT_THROW((void)Value(1.0).as_int(), BadValueAccess);
  EXPECT_THROW((void)Value().as_bool(), BadValueAccess);
  EXPECT_THROW((void)Value(1).as_string(), BadValueAccess);
  EXPECT_THROW((void)Value("x").as_list(), BadValueAccess);
  EXPECT_THROW((void)Value::list({}).as_map(), BadValueAccess);
  EXPECT_THROW((void)Value::map({}).as_serialized(), BadValueAccess);
  try {
    (void)Value::map({}).as_int();
    FAIL() << "as_int of a map";
  } catch (const BadValueAccess& error) {
    EXPECT_STREQ(error.what(), "memshard: a map value read as int");
  }
}

TEST(ValueTest, MapsKeepTheirOrderAndFindStringKeys) {
  Value row = Value::map({{"z", 1}, {"a", Value::list({2, 3})}, {7, "seven"}, {"a", 9}});
  ASSERT_EQ(row.as_map().size(), 4U);
  EXPECT_EQ(row.as_map()[0].first, Value("z"));
  EXPECT_EQ(row.as_map()[2].first, Value(7));
  ASSERT_NE(row.find("a"), nullptr);
  EXPECT_EQ(*row.find("a"), Value::list({2, 3}));  // the first entry of a duplicate key
  EXPECT_EQ(row.find("7"), nullptr);               // an integer key is not the string "7"
  EXPECT_EQ(row.find("missing"), nullptr);
  EXPECT_EQ(Value::list({1}).find("a"), nullptr);
  row.as_map().emplace_back("new", true);
  EXPECT_EQ(*row.find("new"), Value(true));
}

TEST(ValueTest, EqualityComparesKindAndContent) {
  EXPECT_EQ(Value("abc"), Value(std::string("abc")));
  EXPECT_NE(Value("abc"), Value::bytes("abc"));
  EXPECT_NE(Value(1), Value(1.0));
  EXPECT_NE(Value(1), Value(true));
  EXPECT_NE(Value(), Value(0));
  EXPECT_NE(Value::list({1, 2}), Value::list({2, 1}));
  EXPECT_NE(Value::map({{"a", 1}, {"b", 2}}), Value::map({{"b", 2}, {"a", 1}}));
  EXPECT_EQ(Value::map({{"a", Value::list({1, Value()})}}),
            Value::map({{"a", Value::list({1, Value()})}}));
  EXPECT_NE(Value(std::nan("")), Value(std::nan("")));
  EXPECT_NE(Value::serialized("pickle", "x"), Value::serialized("storable", "x"));
}

TEST(ValueTest, KindNamesAreThoseMemshardGetPrints) {
  EXPECT_EQ(to_string(ValueKind::kNull), "null");
  EXPECT_EQ(to_string(ValueKind::kBool), "bool");
  EXPECT_EQ(to_string(ValueKind::kInt), "int");
  EXPECT_EQ(to_string(ValueKind::kFloat), "float");
  EXPECT_EQ(to_string(ValueKind::kString), "string");
  EXPECT_EQ(to_string(ValueKind::kBytes), "bytes");
  EXPECT_EQ(to_string(ValueKind::kList), "list");
  EXPECT_EQ(to_string(ValueKind::kMap), "map");
  EXPECT_EQ(to_string(ValueKind::kSerialized), "serialized");
}

TEST(ValueTest, PrintsReadably) {
  std::ostringstream out;
  out << Value::map({{"a", 1}, {7, Value::list({2.5, true, Value()})}}) << " "
      << Value::bytes(std::string("\0\xffz", 3)) << " " << Value("q\"\n") << " "
      << Value::serialized("pickle", "abc");
  EXPECT_EQ(out.str(),
            "{\"a\": 1, 7: [2.5, true, null]} b\"\\x00\\xffz\" \"q\\\"\\x0a\" <pickle, 3 bytes>");
}

}  // namespace
}  // namespace codecs_value_test
