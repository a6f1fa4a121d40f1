// SPDX-License-Identifier: MIT
// get_output_test.cpp: memshard-get's JSON (get/output.hpp), exact strings:
// every kind of Value and their nesting, string escaping and UTF-8, base64,
// floats, map keys of every kind, serialized values at the top and nested,
// and the value, miss and error lines.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "get/output.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/value.hpp"

namespace get_output_test {
namespace {

namespace tool = memshard::get_tool;
using memshard::Value;

auto json(const Value& value) -> std::string {
  std::string out;
  tool::append_value(out, value);
  return out;
}

auto base64(std::string_view bytes) -> std::string {
  std::string out;
  tool::append_base64(out, bytes);
  return out;
}

auto json_string(std::string_view text) -> std::string {
  std::string out;
  tool::append_json_string(out, text);
  return out;
}

auto float_text(double number) -> std::string {
  std::string out;
  tool::append_float(out, number);
  return out;
}

TEST(GetOutputTest, Base64IsStandardWithPadding) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foob"), "Zm9vYg==");
  EXPECT_EQ(base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  // Every digit, including + and / (not the URL alphabet), and bytes >= 0x80.
  EXPECT_EQ(base64(std::string("\x00\x10\x83\x10\x51\x87\x20\x92\x8b\x30\xd3\x8f\x41\x14\x93\x51"
                               "\x55\x97\x61\x96\x9b\x71\xd7\x9f\x82\x18\xa3\x92\x59\xa7\xa2\x9a"
                               "\xab\xb2\xdb\xaf\xc3\x1c\xb3\xd3\x5d\xb7\xe3\x9e\xbb\xf3\xdf\xbf",
                               48)),
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
  EXPECT_EQ(base64("\xff\xfe"), "//4=");
  // Appends: what is already there stays.
  std::string out = "x";
  tool::append_base64(out, "hi");
  EXPECT_EQ(out, "xaGk=");
}

TEST(GetOutputTest, StringsAreEscapedAsRfc8259Says) {
  EXPECT_EQ(json_string(""), "\"\"");
  EXPECT_EQ(json_string("plain text / slash"), "\"plain text / slash\"");
  EXPECT_EQ(json_string("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(json_string("C:\\dir\\"), "\"C:\\\\dir\\\\\"");
  EXPECT_EQ(json_string("a\nb\tc\rd\be\ff"), "\"a\\nb\\tc\\rd\\be\\ff\"");
  EXPECT_EQ(json_string(std::string("\x00\x01\x07\x0b\x1b\x1f", 6)),
            "\"\\u0000\\u0001\\u0007\\u000b\\u001b\\u001f\"");
  // 0x20 and DEL need no escape; UTF-8 is passed through.
  EXPECT_EQ(json_string(" \x7f"), "\" \x7f\"");
  EXPECT_EQ(json_string("h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80"),
            "\"h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80\"");
}

TEST(GetOutputTest, TextThatIsNotUtf8IsBase64) {
  std::string out;
  tool::append_text(out, "h\xc3\xa9");
  EXPECT_EQ(out, "\"h\xc3\xa9\"");
  // A lone continuation byte, a truncated sequence, an overlong form, a
  // surrogate, and a code point above U+10FFFF.
  for (const std::string_view bad :
       {std::string_view("\x80"), std::string_view("ab\xc3"), std::string_view("\xc0\xaf"),
        std::string_view("\xed\xa0\x80"), std::string_view("\xf4\x90\x80\x80")}) {
    out.clear();
    tool::append_text(out, bad);
    EXPECT_EQ(out, "{\"base64\":\"" + base64(bad) + "\"}");
  }
  EXPECT_EQ(json(Value("\xff\xfe")), "{\"base64\":\"//4=\"}");
  EXPECT_EQ(json(Value("a\"\n")), "\"a\\\"\\n\"");
}

TEST(GetOutputTest, FloatsAreTheShortestRoundTrip) {
  EXPECT_EQ(float_text(3.25), "3.25");
  EXPECT_EQ(float_text(0.1), "0.1");
  EXPECT_EQ(float_text(0.5), "0.5");
  EXPECT_EQ(float_text(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(float_text(1e21), "1e+21");
  EXPECT_EQ(float_text(1e300), "1e+300");
  EXPECT_EQ(float_text(-1.5e-300), "-1.5e-300");
  EXPECT_EQ(float_text(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(float_text(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(float_text(std::numeric_limits<double>::infinity()), "\"inf\"");
  EXPECT_EQ(float_text(-std::numeric_limits<double>::infinity()), "\"-inf\"");
  EXPECT_EQ(float_text(std::numeric_limits<double>::quiet_NaN()), "\"nan\"");
  EXPECT_EQ(float_text(-std::numeric_limits<double>::quiet_NaN()), "\"nan\"");
}

// A float whose shortest form looks like an integer keeps a ".0", so that a
// JSON reader reads back a float, with its sign: PHP's stored -0 is -0.0, not
// the integer 0.
TEST(GetOutputTest, FloatsThatLookLikeIntegersReadBackAsFloats) {
  EXPECT_EQ(float_text(-0.0), "-0.0");
  EXPECT_EQ(float_text(0.0), "0.0");
  EXPECT_EQ(float_text(1.0), "1.0");
  EXPECT_EQ(float_text(2.0), "2.0");
  EXPECT_EQ(float_text(-7.0), "-7.0");
  EXPECT_EQ(float_text(123456789.0), "123456789.0");
  // to_chars picks the exponent form when it is shorter: already a float.
  EXPECT_EQ(float_text(1e22), "1e+22");
  EXPECT_EQ(float_text(-1e300), "-1e+300");
  EXPECT_EQ(json(Value(-0.0)), "-0.0");
  EXPECT_EQ(json(Value::list({1.0, 1, -0.0})), "[1.0,1,-0.0]");
  EXPECT_EQ(json(Value::map({{1.0, 1.0}})), "{\"1.0\":1.0}");
  EXPECT_EQ(tool::value_line("k", "h:1", 2, Value(-0.0)),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":2,\"type\":\"float\",\"value\":-0.0}");
}

TEST(GetOutputTest, EveryKindOfValue) {
  EXPECT_EQ(json(Value()), "null");
  EXPECT_EQ(json(Value(true)), "true");
  EXPECT_EQ(json(Value(false)), "false");
  EXPECT_EQ(json(Value(0)), "0");
  EXPECT_EQ(json(Value(-7)), "-7");
  EXPECT_EQ(json(Value(std::numeric_limits<std::int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(json(Value(std::numeric_limits<std::int64_t>::max())), "9223372036854775807");
  EXPECT_EQ(json(Value(3.25)), "3.25");
  EXPECT_EQ(json(Value("hello, memshard")), "\"hello, memshard\"");
  EXPECT_EQ(json(Value::bytes("hi")), "{\"base64\":\"aGk=\"}");
  EXPECT_EQ(json(Value::bytes("")), "{\"base64\":\"\"}");
  EXPECT_EQ(json(Value::list({})), "[]");
  EXPECT_EQ(json(Value::map({})), "{}");
  EXPECT_EQ(json(Value::serialized("pickle", "\x80\x04.")),
            "{\"format\":\"pickle\",\"base64\":\"gAQu\"}");
}

TEST(GetOutputTest, ListsAndMapsNest) {
  EXPECT_EQ(json(Value::map({{"a", 1}, {"b", Value::list({2, 3})}})), "{\"a\":1,\"b\":[2,3]}");
  const Value deep = Value::list(
      {Value(), true, 1.5, "s", Value::bytes(std::string("\x00", 1)),
       Value::map(
           {{"k",
             Value::list({Value::map({{"x", Value::serialized("php-serialize", "O:1:\"A\":0:{}")}}),
                          Value::list({})})}}),
       Value::serialized("java-serialization", "\xac\xed")});
  EXPECT_EQ(json(deep),
            "[null,true,1.5,\"s\",{\"base64\":\"AA==\"},"
            "{\"k\":[{\"x\":{\"format\":\"php-serialize\",\"base64\":\"TzoxOiJBIjowOnt9\"}},[]]},"
            "{\"format\":\"java-serialization\",\"base64\":\"rO0=\"}]");
  // Entries keep their order, and a repeated key is printed again.
  EXPECT_EQ(json(Value::map({{"z", 1}, {"a", 2}, {"z", 3}})), "{\"z\":1,\"a\":2,\"z\":3}");
}

TEST(GetOutputTest, MapKeysOfEveryKind) {
  const Value map = Value::map({
      {0, "zero"},
      {-12, "negative"},
      {"s", 1},
      {"\"q\"\n", 2},
      {true, 3},
      {nullptr, 4},
      {2.5, 5},
      {Value::bytes("hi"), 6},
      {"\xff", 7},
      {Value::list({1, "a"}), 8},
      {Value::map({{"k", 1}}), 9},
      {Value::serialized("pickle", "."), 10},
      {std::numeric_limits<double>::infinity(), 11},
  });
  EXPECT_EQ(json(map),
            "{\"0\":\"zero\",\"-12\":\"negative\",\"s\":1,\"\\\"q\\\"\\n\":2,\"true\":3,"
            "\"null\":4,\"2.5\":5,\"{\\\"base64\\\":\\\"aGk=\\\"}\":6,"
            "\"{\\\"base64\\\":\\\"/w==\\\"}\":7,\"[1,\\\"a\\\"]\":8,\"{\\\"k\\\":1}\":9,"
            "\"{\\\"format\\\":\\\"pickle\\\",\\\"base64\\\":\\\"Lg==\\\"}\":10,"
            "\"\\\"inf\\\"\":11}");
}

TEST(GetOutputTest, ValueLines) {
  EXPECT_EQ(tool::value_line("user:42", "10.0.0.1:11211", 4,
                             Value::map({{"a", 1}, {"b", Value::list({2, 3})}})),
            "{\"key\":\"user:42\",\"server\":\"10.0.0.1:11211\",\"flags\":4,\"type\":\"map\","
            "\"value\":{\"a\":1,\"b\":[2,3]}}");
  EXPECT_EQ(tool::value_line("k", "h:1", 0, Value()),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":0,\"type\":\"null\",\"value\":null}");
  EXPECT_EQ(tool::value_line("k", "h:1", 3, Value(false)),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":3,\"type\":\"bool\",\"value\":false}");
  EXPECT_EQ(tool::value_line("k", "h:1", 1, Value(42)),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":1,\"type\":\"int\",\"value\":42}");
  EXPECT_EQ(tool::value_line("k", "h:1", 2, Value(0.1)),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":2,\"type\":\"float\",\"value\":0.1}");
  EXPECT_EQ(tool::value_line("k", "h:1", 2, Value(std::numeric_limits<double>::quiet_NaN())),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":2,\"type\":\"float\",\"value\":\"nan\"}");
  EXPECT_EQ(tool::value_line("k", "h:1", 4294967295U, Value("t\xc3\xa9")),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":4294967295,\"type\":\"string\","
            "\"value\":\"t\xc3\xa9\"}");
  EXPECT_EQ(tool::value_line("k", "h:1", 0, Value("\xc3")),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":0,\"type\":\"string\","
            "\"value\":{\"base64\":\"ww==\"}}");
  EXPECT_EQ(tool::value_line("k", "h:1", 8, Value::bytes("\x01\x02")),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":8,\"type\":\"bytes\","
            "\"value\":{\"base64\":\"AQI=\"}}");
  EXPECT_EQ(tool::value_line("k", "h:1", 0, Value::list({1})),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":0,\"type\":\"list\",\"value\":[1]}");
  // A serialized value: its format and bytes in place of "value".
  EXPECT_EQ(tool::value_line("k", "[::1]:11211", 4, Value::serialized("php-serialize", "N;")),
            "{\"key\":\"k\",\"server\":\"[::1]:11211\",\"flags\":4,\"type\":\"serialized\","
            "\"format\":\"php-serialize\",\"base64\":\"Tjs=\"}");
}

TEST(GetOutputTest, MissAndErrorLines) {
  EXPECT_EQ(tool::miss_line("user:43", "10.0.0.2:11211"),
            "{\"key\":\"user:43\",\"server\":\"10.0.0.2:11211\",\"type\":\"miss\"}");
  EXPECT_EQ(
      tool::error_line("bad key", "h:1", std::nullopt, "invalid_key: key has a space at offset 3"),
      "{\"key\":\"bad key\",\"server\":\"h:1\","
      "\"error\":\"invalid_key: key has a space at offset 3\"}");
  EXPECT_EQ(tool::error_line("k", "h:1", 8, "codec_error: unknown_flags: \"x\""),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":8,"
            "\"error\":\"codec_error: unknown_flags: \\\"x\\\"\"}");
  // The key is escaped, or base64 when it is not UTF-8; the error stays a
  // string, with U+FFFD for each byte that breaks UTF-8.
  EXPECT_EQ(tool::miss_line("a\"b", "h:1"),
            "{\"key\":\"a\\\"b\",\"server\":\"h:1\",\"type\":\"miss\"}");
  EXPECT_EQ(tool::miss_line("\xff", "h:1"),
            "{\"key\":{\"base64\":\"/w==\"},\"server\":\"h:1\",\"type\":\"miss\"}");
  EXPECT_EQ(tool::error_line("k", "h:1", 0, "bad \xff\xc3 byte\n"),
            "{\"key\":\"k\",\"server\":\"h:1\",\"flags\":0,"
            "\"error\":\"bad \xef\xbf\xbd\xef\xbf\xbd byte\\n\"}");
}

TEST(GetOutputTest, CodecErrorMessage) {
  EXPECT_EQ(
      tool::codec_error_message(memshard::CodecError(
          memshard::CodecErrc::kUnknownFlags, "php-memcached: type 8 in flags 0x8 is unknown")),
      "codec_error: unknown_flags: php-memcached: type 8 in flags 0x8 is unknown");
  EXPECT_EQ(tool::codec_error_message(
                memshard::CodecError(memshard::CodecErrc::kTooDeep, "pickle: too deep")),
            "codec_error: too_deep: pickle: too deep");
}

}  // namespace
}  // namespace get_output_test
