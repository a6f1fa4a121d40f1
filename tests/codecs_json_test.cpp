// SPDX-License-Identifier: MIT
// Tests of codecs/json.hpp: json_encode against bytes PHP 8.2 and Ruby wrote
// (NaN and the infinities in Ruby's JSON.dump), the strict reader and what it
// also reads in Ruby's text, its bounds, and the golden value table of
// php-memcached.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "memshard/codecs/json.hpp"
#include "support/value_table.hpp"

namespace codecs_json_test {
namespace {

using namespace std::string_literals;
using memshard::CodecErrc;
using memshard::DecodeLimits;
using memshard::json_decode;
using memshard::json_encode;
using memshard::JsonStyle;
using memshard::Value;

constexpr double kInf = std::numeric_limits<double>::infinity();

auto strings_value() -> Value {
  return Value::list(
      {"a/b\"c\\d", "\x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1f\x20\x7f"s, "é✓😀", "\u2028<>&'", ""});
}

// The PHP arrays [1=>1,2=>2], [0=>"a",1=>"b"], ["0"=>"a","1"=>"b"], [], [1=>"a"],
// ["a"=>["b"=>[]]], [-3=>1,"-0"=>2,"05"=>3], [5=>true,"n"=>null,"x"=>false].
auto arrays_value() -> Value {
  return Value::list({
      Value::map({{1, 1}, {2, 2}}),
      Value::map({{0, "a"}, {1, "b"}}),
      Value::map({{"0", "a"}, {"1", "b"}}),
      Value::map({}),
      Value::map({{1, "a"}}),
      Value::map({{"a", Value::map({{"b", Value::list({})}})}}),
      Value::map({{-3, 1}, {"-0", 2}, {"05", 3}}),
      Value::map({{5, true}, {"n", nullptr}, {"x", false}}),
  });
}

auto floats_value() -> Value {
  return Value::list(
      {1.0, -0.0, 0.5, 1e100, 1e21, 100.0, 1.0 / 3, 1e-5, 1e16, 1e17, 0.1, 1.5e-7, -2.5, 5e-324});
}

auto ints_value() -> Value {
  return Value::list(
      {0, -7, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()});
}

// Recorded with PHP 8.2.36: php -r 'echo json_encode($v);' for the PHP
// equivalents of the values above (strings, arrays, floats, ints).
TEST(JsonEncode, PhpByteExact) {
  EXPECT_EQ(*json_encode(strings_value(), JsonStyle::kPhp),
            "[\"a\\/b\\\"c\\\\d\",\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f \x7f\","
            "\"\\u00e9\\u2713\\ud83d\\ude00\",\"\\u2028<>&'\",\"\"]");
  EXPECT_EQ(*json_encode(arrays_value(), JsonStyle::kPhp),
            "[{\"1\":1,\"2\":2},[\"a\",\"b\"],[\"a\",\"b\"],[],{\"1\":\"a\"},{\"a\":{\"b\":[]}},"
            "{\"-3\":1,\"-0\":2,\"05\":3},{\"5\":true,\"n\":null,\"x\":false}]");
  EXPECT_EQ(*json_encode(floats_value(), JsonStyle::kPhp),
            "[1,-0,0.5,1.0e+100,1.0e+21,100,0.3333333333333333,1.0e-5,10000000000000000,1.0e+17,"
            "0.1,1.5e-7,-2.5,5.0e-324]");
  EXPECT_EQ(*json_encode(ints_value(), JsonStyle::kPhp),
            "[0,-7,9223372036854775807,-9223372036854775808]");
  // php -r 'echo json_encode(["x"=>1.0/3, "b"=>["/é", 1e21]]);'
  EXPECT_EQ(
      *json_encode(Value::map({{"x", 1.0 / 3}, {"b", Value::list({"/é", 1e21})}}), JsonStyle::kPhp),
      "{\"x\":0.3333333333333333,\"b\":[\"\\/\\u00e9\",1.0e+21]}");
}

// Recorded with Ruby 3.1.2, json 2.6.1: ruby -rjson -e 'puts JSON.generate(v)' for
// the Ruby equivalents (Hashes with Integer and String keys).
TEST(JsonEncode, RubyByteExact) {
  EXPECT_EQ(*json_encode(strings_value(), JsonStyle::kRuby),
            "[\"a/b\\\"c\\\\d\",\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f \x7f\","
            "\"é✓😀\",\"\u2028<>&'\",\"\"]");
  EXPECT_EQ(
      *json_encode(arrays_value(), JsonStyle::kRuby),
      "[{\"1\":1,\"2\":2},{\"0\":\"a\",\"1\":\"b\"},{\"0\":\"a\",\"1\":\"b\"},{},{\"1\":\"a\"},"
      "{\"a\":{\"b\":[]}},{\"-3\":1,\"-0\":2,\"05\":3},{\"5\":true,\"n\":null,\"x\":false}]");
  Value floats = floats_value();
  floats.as_list().push_back(1e15);
  floats.as_list().push_back(123456789012345.0);
  EXPECT_EQ(*json_encode(floats, JsonStyle::kRuby),
            "[1.0,-0.0,0.5,1.0e+100,1.0e+21,100.0,0.3333333333333333,1.0e-05,1.0e+16,1.0e+17,0.1,"
            "1.5e-07,-2.5,5.0e-324,1.0e+15,123456789012345.0]");
  EXPECT_EQ(*json_encode(ints_value(), JsonStyle::kRuby),
            "[0,-7,9223372036854775807,-9223372036854775808]");
  // ruby -rjson -e 'puts JSON.generate({"a"=>1.0/3, "b"=>["/é", 1e21]})'
  EXPECT_EQ(*json_encode(Value::map({{"a", 1.0 / 3}, {"b", Value::list({"/é", 1e21})}}),
                         JsonStyle::kRuby),
            "{\"a\":0.3333333333333333,\"b\":[\"/é\",1.0e+21]}");
  // JSON.generate({1=>2, "1"=>3}): Ruby keeps both keys.
  EXPECT_EQ(*json_encode(Value::map({{1, 2}, {"1", 3}}), JsonStyle::kRuby), "{\"1\":2,\"1\":3}");
}

TEST(JsonEncode, Compact) {
  EXPECT_EQ(*json_encode(strings_value()),
            "[\"a/b\\\"c\\\\d\",\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f \x7f\","
            "\"é✓😀\",\"\u2028<>&'\",\"\"]");
  EXPECT_EQ(
      *json_encode(arrays_value(), JsonStyle::kCompact),
      "[{\"1\":1,\"2\":2},{\"0\":\"a\",\"1\":\"b\"},{\"0\":\"a\",\"1\":\"b\"},{},{\"1\":\"a\"},"
      "{\"a\":{\"b\":[]}},{\"-3\":1,\"-0\":2,\"05\":3},{\"5\":true,\"n\":null,\"x\":false}]");
  // Shortest round-trip digits; ".0" keeps an integral double a float.
  EXPECT_EQ(*json_encode(floats_value()),
            "[1.0,-0.0,0.5,1e+100,1e+21,100.0,0.3333333333333333,1e-05,1e+16,1e+17,0.1,1.5e-07,"
            "-2.5,5e-324]");
  EXPECT_EQ(*json_encode(Value(123456789012345680.0)), "123456789012345680.0");
  EXPECT_EQ(*json_encode(Value::map({{1, 2}, {"1", 3}})), "{\"1\":2,\"1\":3}");
}

TEST(JsonEncode, RefusesWhatJsonCannotHold) {
  for (const JsonStyle style : {JsonStyle::kPhp, JsonStyle::kRuby, JsonStyle::kCompact}) {
    SCOPED_TRACE(static_cast<int>(style));
    // php: json_encode(INF) is false (error 7). Ruby's JSON.dump writes them
    // (JsonEncode.RubyWritesNaNAndTheInfinities).
    for (const double number : {kInf, -kInf, std::nan("")}) {
      if (style == JsonStyle::kRuby) {
        break;
      }
      auto refused = json_encode(Value::list({number}), style);
      ASSERT_FALSE(refused);
      EXPECT_EQ(refused.code(), CodecErrc::kNotEncodable);
    }
    // php: json_encode of each is false (malformed UTF-8); Ruby raises.
    for (std::string_view text :
         {"\xff", "\xed\xa0\x80", "\xc0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98", "a\x80",
          "\xe2\x9c", "\xe0\x80\xaf", "\xf0\x80\x80\x80", "\xf8\x88\x80\x80\x80"}) {
      SCOPED_TRACE(text);
      EXPECT_EQ(json_encode(Value(text), style).code(), CodecErrc::kNotEncodable);
      EXPECT_EQ(json_encode(Value::bytes(std::string(text)), style).code(),
                CodecErrc::kNotEncodable);
      EXPECT_EQ(json_encode(Value::map({{Value(text), 1}}), style).code(),
                CodecErrc::kNotEncodable);
    }
    for (const Value& key : {Value(1.5), Value(), Value(true), Value::list({})}) {
      auto refused = json_encode(Value::map({{key, 1}}), style);
      ASSERT_FALSE(refused);
      EXPECT_EQ(refused.code(), CodecErrc::kNotEncodable);
    }
    EXPECT_EQ(json_encode(Value::serialized("php-serialize", "N;"), style).code(),
              CodecErrc::kNotEncodable);
    EXPECT_EQ(*json_encode(Value::bytes("\xc3\xa9"), style),
              style == JsonStyle::kPhp ? "\"\\u00e9\"" : "\"\xc3\xa9\"");
    EXPECT_EQ(*json_encode(Value::map({{Value::bytes("k"), 1}}), style), "{\"k\":1}");
  }
  // A PHP array cannot hold the keys 5 and "5".
  EXPECT_EQ(json_encode(Value::map({{5, 1}, {"5", 2}}), JsonStyle::kPhp).code(),
            CodecErrc::kNotEncodable);
  EXPECT_EQ(json_encode(Value::map({{"a", 1}, {"a", 2}}), JsonStyle::kPhp).code(),
            CodecErrc::kNotEncodable);
}

// Recorded with Ruby 3.1.2, json 2.6.1, whose JSON.dump (what Dalli's
// `serializer: JSON` calls) allows NaN: ruby -rjson -e 'puts JSON.dump([Float::NAN,
// Float::INFINITY, -Float::INFINITY, 1e21, -0.0])' and JSON.dump(-Float::NAN),
// JSON.dump({"x"=>-Float::INFINITY}).
TEST(JsonEncode, RubyWritesNaNAndTheInfinities) {
  EXPECT_EQ(*json_encode(Value::list({std::nan(""), kInf, -kInf, 1e21, -0.0}), JsonStyle::kRuby),
            "[NaN,Infinity,-Infinity,1.0e+21,-0.0]");
  EXPECT_EQ(*json_encode(Value(-std::nan("")), JsonStyle::kRuby), "NaN");
  EXPECT_EQ(*json_encode(Value::map({{"x", -kInf}}), JsonStyle::kRuby), "{\"x\":-Infinity}");
  // The other styles still refuse them, and say so.
  for (const JsonStyle style : {JsonStyle::kPhp, JsonStyle::kCompact}) {
    const auto refused = json_encode(Value(kInf), style);
    EXPECT_EQ(refused.code(), CodecErrc::kNotEncodable);
    EXPECT_EQ(refused.error().message(), "json: INF (JSON has no NaN or infinity)");
  }
}

TEST(JsonDecode, Values) {
  EXPECT_EQ(*json_decode("null"), Value());
  EXPECT_EQ(*json_decode("true"), Value(true));
  EXPECT_EQ(*json_decode(" \t\r\nfalse \n"), Value(false));
  EXPECT_EQ(*json_decode("42"), Value(42));
  EXPECT_EQ(*json_decode("\"x\""), Value("x"));
  EXPECT_EQ(*json_decode("[1, \"a\", [], {}]"),
            Value::list({1, "a", Value::list({}), Value::map({})}));
  // Document order; a repeated key is kept as it is.
  EXPECT_EQ(*json_decode("{\"b\":1,\"a\":[2,3],\"b\":null}"),
            Value::map({{"b", 1}, {"a", Value::list({2, 3})}, {"b", nullptr}}));
}

TEST(JsonDecode, Numbers) {
  EXPECT_EQ(*json_decode("-7"), Value(-7));
  EXPECT_EQ(*json_decode("9223372036854775807"), Value(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(*json_decode("-9223372036854775808"), Value(std::numeric_limits<std::int64_t>::min()));
  // php: json_decode('[1e400, 99999999999999999999, -0, -0.0, 1E2]') gives
  // [INF, 1.0E+20, 0, -0.0, 100.0].
  const Value numbers = *json_decode("[1e400, 99999999999999999999, -0, -0.0, 1E2]");
  const Value::List& items = numbers.as_list();
  ASSERT_EQ(items.size(), 5U);
  EXPECT_EQ(items[0], Value(kInf));
  EXPECT_EQ(items[1], Value(1e20));
  EXPECT_EQ(items[2], Value(0));
  ASSERT_TRUE(items[3].is_float());
  EXPECT_EQ(std::bit_cast<std::uint64_t>(items[3].as_double()), 0x8000000000000000ULL);
  EXPECT_EQ(items[4], Value(100.0));
  EXPECT_EQ(*json_decode("9223372036854775808"), Value(9223372036854775808.0));
  EXPECT_EQ(*json_decode("0.3333333333333333"), Value(1.0 / 3));
  EXPECT_EQ(*json_decode("1.5e-7"), Value(1.5e-7));
  EXPECT_EQ(*json_decode("1E+2"), Value(100.0));
  EXPECT_EQ(*json_decode("0"), Value(0));
}

TEST(JsonDecode, Strings) {
  EXPECT_EQ(*json_decode("\"a\\/b\\\"c\\\\d\\b\\f\\n\\r\\t\""), Value("a/b\"c\\d\b\f\n\r\t"));
  EXPECT_EQ(*json_decode("\"\\u0000\\u00e9\\u00E9\\u2713\""), Value("\0éé✓"s));
  EXPECT_EQ(*json_decode("\"\\ud83d\\ude00\""), Value("😀"));
  EXPECT_EQ(*json_decode("\"é✓😀\x7f\""), Value("é✓😀\x7f"));
  EXPECT_EQ(json_decode("\"\\ud83d\\ude00\"")->kind(), memshard::ValueKind::kString);
}

TEST(JsonDecode, RefusesWhatRfc8259Refuses) {
  for (std::string_view text : {"",
                                " ",
                                "nul",
                                "True",
                                "NaN",
                                "Infinity",
                                "-Infinity",
                                "+1",
                                "01",
                                "-01",
                                ".5",
                                "1.",
                                "1.e5",
                                "1e",
                                "1e+",
                                "-",
                                "0x10",
                                "1 2",
                                "[1,]",
                                "[,1]",
                                "[1 2]",
                                "{\"a\":1,}",
                                "{a:1}",
                                "{\"a\" 1}",
                                "{\"a\":}",
                                "{1:1}",
                                "'a'",
                                "\"a",
                                "[1",
                                "{\"a\":1",
                                "[\"a\"",
                                "\"\\x\"",
                                "\"\\u12\"",
                                "\"\\u12g4\"",
                                "\"\\ud83d\"",
                                "\"\\ud83dx\"",
                                "\"\\ude00\"",
                                "\"\\ud83d\\u0041\"",
                                "\"\\ud83d\\ud83d\"",
                                "\"\x01\"",
                                "\"\n\"",
                                "\"\xff\"",
                                "\"\xed\xa0\x80\"",
                                "\"\xc0\x80\"",
                                "\"\xe0\x80\xaf\"",
                                "\"\xf4\x90\x80\x80\"",
                                "\xef\xbb\xbf[1]",
                                "[1]x",
                                "// c\n1",
                                "/* c */1",
                                "\v1",
                                "\f1",
                                "1\v",
                                "[]]",
                                "{}}",
                                "\"a\"\"b\""}) {
    SCOPED_TRACE(text);
    auto decoded = json_decode(text);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << decoded.error();
    EXPECT_EQ(decoded.error().message().rfind("json: at byte ", 0), 0U);
  }
  EXPECT_EQ(json_decode(std::string_view("1\0", 2)).code(), CodecErrc::kCorrupt);
}

// Ruby's JSON.load (json 2.6.1, allow_nan) reads the words JSON.dump writes:
// ruby -rjson -e 'p JSON.load("[NaN,Infinity,-Infinity]")', JSON.load(" NaN "),
// JSON.load(%q( {"a" : -Infinity } )); and raises JSON::ParserError for "-NaN",
// "+Infinity", "nan", "infinity", "Infinityx", "-Infinit", "[NaN1]", "NaN.5", "-".
TEST(JsonDecode, RubyTextMayHoldNaNAndTheInfinities) {
  const DecodeLimits limits;
  const auto words = json_decode("[NaN,Infinity,-Infinity]", limits, JsonStyle::kRuby);
  ASSERT_TRUE(words) << words.error();
  ASSERT_EQ(words->as_list().size(), 3U);
  EXPECT_TRUE(words->as_list()[0].is_float());
  EXPECT_TRUE(std::isnan(words->as_list()[0].as_double()));
  EXPECT_EQ(words->as_list()[1], Value(kInf));
  EXPECT_EQ(words->as_list()[2], Value(-kInf));
  EXPECT_TRUE(std::isnan(json_decode(" NaN ", limits, JsonStyle::kRuby)->as_double()));
  EXPECT_EQ(*json_decode(" {\"a\" : -Infinity } ", limits, JsonStyle::kRuby),
            Value::map({{"a", -kInf}}));
  // Numbers, strings and literals read as in strict JSON.
  EXPECT_EQ(*json_decode("[-1,-0.5,\"NaN\",null]", limits, JsonStyle::kRuby),
            Value::list({-1, -0.5, "NaN", nullptr}));
  for (std::string_view text : {"-NaN", "+Infinity", "nan", "infinity", "Infinityx", "-Infinit",
                                "[NaN1]", "NaN.5", "-", "-I", "N", "Inf", "[Infinity,]"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(json_decode(text, limits, JsonStyle::kRuby).code(), CodecErrc::kCorrupt);
  }
  // Every other style is strict RFC 8259.
  for (const JsonStyle style : {JsonStyle::kPhp, JsonStyle::kCompact}) {
    for (std::string_view text : {"NaN", "Infinity", "-Infinity", "[1,NaN]"}) {
      SCOPED_TRACE(text);
      const auto refused = json_decode(text, limits, style);
      EXPECT_EQ(refused.code(), CodecErrc::kCorrupt);
    }
  }
  EXPECT_EQ(json_decode("[1,NaN]").error().message(),
            "json: at byte 3: expected a value, found 'N'");
  // What kRuby writes, it reads.
  const Value floats = Value::list({kInf, -kInf, 1e21, -0.0});
  EXPECT_EQ(*json_decode(*json_encode(floats, JsonStyle::kRuby), limits, JsonStyle::kRuby), floats);
}

TEST(JsonDecode, MessagesSayWhatAndWhere) {
  EXPECT_EQ(json_decode("[1, 2 x]").error().message(),
            "json: at byte 6: expected ',' or ']' in an array, found 'x'");
  EXPECT_EQ(json_decode("{\"a\":1} 2").error().message(),
            "json: at byte 8: expected the end of the input after the value, found '2'");
  EXPECT_EQ(json_decode("[\"\\ud83d\"]").error().message(),
            "json: at byte 2: a high surrogate \\u escape without a low one after it");
  EXPECT_EQ(json_decode("\"ab\xff\"").error().message(),
            "json: at byte 3: a string that is not UTF-8: byte 0xff");
}

TEST(JsonDecode, Limits) {
  EXPECT_TRUE(json_decode("[[1]]", DecodeLimits{1024, 2}));
  EXPECT_TRUE(json_decode("{\"a\":{\"b\":1}}", DecodeLimits{1024, 2}));
  auto deep = json_decode("[[[1]]]", DecodeLimits{1024, 2});
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.code(), CodecErrc::kTooDeep);
  EXPECT_EQ(deep.error().message(),
            "json: at byte 2: arrays and objects nested deeper than the limit of 2");
  EXPECT_EQ(json_decode("{\"a\":[{\"b\":1}]}", DecodeLimits{1024, 2}).code(), CodecErrc::kTooDeep);
  EXPECT_EQ(*json_decode("1", DecodeLimits{1024, 0}), Value(1));
  EXPECT_EQ(json_decode("[]", DecodeLimits{1024, 0}).code(), CodecErrc::kTooDeep);
  // Far deeper than the default limit: an error, not a stack overflow.
  EXPECT_EQ(json_decode(std::string(1000000, '[')).code(), CodecErrc::kTooDeep);
  auto size = json_decode("\"hello\"", DecodeLimits{6, 256});
  ASSERT_FALSE(size);
  EXPECT_EQ(size.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(size.error().message(), "json: 7 bytes, over the limit of 6");
  EXPECT_TRUE(json_decode("\"hello\"", DecodeLimits{7, 256}));
}

TEST(JsonDecode, MaxDecodedBytesBoundsTheTree) {
  // What each costs: the top Value, an array's or object's slots as they
  // are added, each string's bytes (an escape's as decoded).
  struct Case {
    std::string_view text;
    std::size_t need;
  };
  for (const Case& c : {
           Case{"null", sizeof(Value)},
           Case{"[null, null, null]", 4 * sizeof(Value)},
           Case{"[\"ab\"]", 2 * sizeof(Value) + 2},
           Case{"{\"ab\": 1}", sizeof(Value) + sizeof(Value::Entry) + 2},
           Case{"\"\\u00e9x\"", sizeof(Value) + 3},
       }) {
    SCOPED_TRACE(c.text);
    DecodeLimits limits;
    limits.max_decoded_bytes = c.need;
    auto fits = json_decode(c.text, limits);
    ASSERT_TRUE(fits) << fits.error();
    limits.max_decoded_bytes = c.need - 1;
    auto over = json_decode(c.text, limits);
    ASSERT_FALSE(over);
    EXPECT_EQ(over.code(), CodecErrc::kTooLarge) << over.error();
  }
  // 1,000,000 elements: refused at the one that does not fit.
  std::string many = "[0";
  for (int i = 1; i < 1000000; ++i) {
    many += ",0";
  }
  many += "]";
  DecodeLimits limits;
  limits.max_decoded_bytes = 1000 * sizeof(Value);
  auto refused = json_decode(many, limits);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(),
            "json: at byte 1999: an array's element 1000 would take the decoded value past "
            "max_decoded_bytes " +
                std::to_string(1000 * sizeof(Value)));
  // A long string stops as it grows past what is left.
  auto text = json_decode("\"" + std::string(100000, 'a') + "\"", limits);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.code(), CodecErrc::kTooLarge);
}

const std::string kDocument =
    "{\"a\":[1,-2.5e3,true,false,null],\"b\\u00e9\":{\"c\":\"\\ud83d\\ude00 x\",\"d\":[]},"
    "\"e\":{}}";

TEST(JsonDecode, EveryTruncationIsAnError) {
  ASSERT_TRUE(json_decode(kDocument));
  for (std::size_t size = 0; size < kDocument.size(); ++size) {
    const std::string_view part = std::string_view(kDocument).substr(0, size);
    auto decoded = json_decode(part);
    ASSERT_FALSE(decoded) << part;
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << part;
  }
}

TEST(JsonDecode, MangledBytesNeverCrash) {
  for (std::size_t at = 0; at < kDocument.size(); ++at) {
    for (const char replacement :
         {'\0', '"', '\\', '[', ']', '{', '}', ',', ':', 'u', 'd', '9', '-', '\xed', '\xff'}) {
      std::string mangled = kDocument;
      mangled[at] = replacement;
      auto decoded = json_decode(mangled);
      if (!decoded) {
        EXPECT_FALSE(decoded.error().message().empty());
      }
    }
  }
}

TEST(Json, RoundTrips) {
  const Value value = Value::map({
      {"s", "a/b\"c\\d\x01\x7f é✓😀"},
      {"i", Value::list({0, -7, std::numeric_limits<std::int64_t>::min()})},
      {"f", Value::list({0.5, 1.0 / 3, 1e21, 100.0, 1e-5, 5e-324, -0.0})},
      {"m", Value::map({{"x", nullptr}, {"y", true}})},
      {"l", Value::list({})},
  });
  for (const JsonStyle style : {JsonStyle::kPhp, JsonStyle::kRuby, JsonStyle::kCompact}) {
    SCOPED_TRACE(static_cast<int>(style));
    auto text = json_encode(value, style);
    ASSERT_TRUE(text) << text.error();
    auto decoded = json_decode(*text);
    ASSERT_TRUE(decoded) << decoded.error();
    if (style == JsonStyle::kPhp) {
      // PHP writes integral doubles without a point: 100.0 reads back as 100.
      const Value* floats = decoded->find("f");
      ASSERT_NE(floats, nullptr);
      EXPECT_EQ(floats->as_list()[3], Value(100));
    } else {
      EXPECT_EQ(*decoded, value);
    }
  }
}

// The golden value tables: php-memcached with serializer=json stores the map
// as json_encode() text (type 6); its ints, floats and bools stay types 1, 2,
// 3 and its strings type 0. Dalli's tables have no `serializer: JSON` case;
// one would be read here (flag 0x1 holds JSON.generate text then).
TEST(Json, GoldenValueTables) {
  const std::filesystem::path dir = std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values";
  const auto values = memshard::testing::read_value_set(dir);
  auto expected_of = [&](const std::string& name) -> const Value* {
    for (const auto& named : values) {
      if (named.name == name) {
        return &named.value;
      }
    }
    return nullptr;
  };
  int checked = 0;
  for (const auto& value_case : memshard::testing::read_value_cases(dir / "php_memcached.values")) {
    if (value_case.setting("serializer") != "json") {
      continue;
    }
    for (const auto& item : value_case.items) {
      if (item.refused || (item.flags & 0xfU) != 6) {
        continue;
      }
      SCOPED_TRACE(value_case.id + " " + item.name);
      EXPECT_EQ(item.name, "map");
      const Value* expected = expected_of(item.name);
      ASSERT_NE(expected, nullptr);
      auto decoded = json_decode(item.bytes);
      ASSERT_TRUE(decoded) << decoded.error();
      EXPECT_EQ(*decoded, *expected);
      EXPECT_EQ(*json_encode(*expected, JsonStyle::kPhp), item.bytes);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1);
  for (const auto& value_case : memshard::testing::read_value_cases(dir / "dalli.values")) {
    if (value_case.setting("serializer") != "JSON") {
      continue;
    }
    for (const auto& item : value_case.items) {
      if (item.refused || item.flags != 0x1U) {
        continue;
      }
      SCOPED_TRACE(value_case.id + " " + item.name);
      const Value* expected = expected_of(item.name);
      ASSERT_NE(expected, nullptr);
      auto decoded = json_decode(item.bytes);
      ASSERT_TRUE(decoded) << decoded.error();
      EXPECT_EQ(*decoded, *expected);
      EXPECT_EQ(*json_encode(*expected, JsonStyle::kRuby), item.bytes);
    }
  }
}

}  // namespace
}  // namespace codecs_json_test
