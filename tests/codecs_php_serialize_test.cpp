// SPDX-License-Identifier: MIT
// Tests of codecs/php_serialize.hpp: serialize() and the session format
// against bytes PHP 8.2 wrote, the bounds of the reader, and the golden value
// tables of php-memcached and pecl memcache.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "memshard/codecs/php_serialize.hpp"
#include "support/value_table.hpp"

namespace codecs_php_serialize_test {
namespace {

using namespace std::string_literals;
using memshard::CodecErrc;
using memshard::DecodeLimits;
using memshard::php_serialize;
using memshard::php_session_decode;
using memshard::php_session_encode;
using memshard::php_unserialize;
using memshard::Value;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Recorded with PHP 8.2.36 (Debian bookworm): php -r 'echo serialize($v);'
// for the $v given above each constant.

// serialize(["a"=>1,"b"=>[2,3],5=>null,"x y"=>true,"05"=>-1.5,"é"=>"q\"\0z",
//   -3=>[],"list"=>[[]],"f"=>1e-5,"big"=>PHP_INT_MIN,"-0"=>0.1])
const std::string kMixed =
    "a:11:{s:1:\"a\";i:1;s:1:\"b\";a:2:{i:0;i:2;i:1;i:3;}i:5;N;s:3:\"x y\";b:1;s:2:\"05\";d:-1.5;"
    "s:2:\"é\";s:4:\"q\"\0z\";i:-3;a:0:{}s:4:\"list\";a:1:{i:0;a:0:{}}s:1:\"f\";d:1.0E-5;"
    "s:3:\"big\";i:-9223372036854775808;s:2:\"-0\";d:0.1;}"s;

auto mixed_value() -> Value {
  return Value::map({
      {"a", 1},
      {"b", Value::list({2, 3})},
      {5, nullptr},
      {"x y", true},
      {"05", -1.5},
      {"é", "q\"\0z"s},
      {-3, Value::list({})},
      {"list", Value::list({Value::list({})})},
      {"f", 1e-5},
      {"big", std::numeric_limits<std::int64_t>::min()},
      {"-0", 0.1},
  });
}

// serialize(["5"=>"a","-3"=>"b","05"=>"c","+5"=>"d"," 5"=>"e","-0"=>"f",
//   "9223372036854775808"=>"g","9223372036854775807"=>"h"])
const std::string kNumericKeys =
    "a:8:{i:5;s:1:\"a\";i:-3;s:1:\"b\";s:2:\"05\";s:1:\"c\";s:2:\"+5\";s:1:\"d\";s:2:\" "
    "5\";s:1:\"e\";s:2:\"-0\";s:1:\"f\";s:19:\"9223372036854775808\";s:1:\"g\";i:"
    "9223372036854775807;s:1:\"h\";}";

// serialize(["x", 2, 3.5, false, null, ["y"]])
const std::string kList =
    "a:6:{i:0;s:1:\"x\";i:1;i:2;i:2;d:3.5;i:3;b:0;i:4;N;i:5;a:1:{i:0;s:1:\"y\";}}";

// serialize([null, true, false, 0, -7, PHP_INT_MAX, 3.25, 1/3, 1e21, -0.0, INF,
//   -INF, NAN, "", "hello", "héllo"])
const std::string kScalars =
    "a:16:{i:0;N;i:1;b:1;i:2;b:0;i:3;i:0;i:4;i:-7;i:5;i:9223372036854775807;i:6;d:3.25;i:7;d:0."
    "3333333333333333;i:8;d:1.0E+21;i:9;d:-0;i:10;d:INF;i:11;d:-INF;i:12;d:NAN;i:13;s:0:\"\";i:14;"
    "s:5:\"hello\";i:15;s:6:\"héllo\";}";

TEST(PhpSerialize, ScalarsByteExact) {
  EXPECT_EQ(*php_serialize(Value()), "N;");
  EXPECT_EQ(*php_serialize(Value(true)), "b:1;");
  EXPECT_EQ(*php_serialize(Value(false)), "b:0;");
  EXPECT_EQ(*php_serialize(Value(42)), "i:42;");
  EXPECT_EQ(*php_serialize(Value(-7)), "i:-7;");
  EXPECT_EQ(*php_serialize(Value(3.25)), "d:3.25;");
  EXPECT_EQ(*php_serialize(Value(1.0 / 3)), "d:0.3333333333333333;");
  EXPECT_EQ(*php_serialize(Value(1e21)), "d:1.0E+21;");
  EXPECT_EQ(*php_serialize(Value(100.0)), "d:100;");
  EXPECT_EQ(*php_serialize(Value(-0.0)), "d:-0;");
  EXPECT_EQ(*php_serialize(Value(kInf)), "d:INF;");
  EXPECT_EQ(*php_serialize(Value(-kInf)), "d:-INF;");
  EXPECT_EQ(*php_serialize(Value(std::nan(""))), "d:NAN;");
  EXPECT_EQ(*php_serialize(Value("hello")), "s:5:\"hello\";");
  EXPECT_EQ(*php_serialize(Value("héllo")), "s:6:\"héllo\";");
  EXPECT_EQ(*php_serialize(Value::bytes("\xff\0\""s)), "s:3:\"\xff\0\"\";"s);
}

TEST(PhpSerialize, ArraysByteExact) {
  EXPECT_EQ(*php_serialize(mixed_value()), kMixed);
  EXPECT_EQ(*php_serialize(Value::list({"x", 2, 3.5, false, nullptr, Value::list({"y"})})), kList);
  EXPECT_EQ(*php_serialize(Value::list(
                {nullptr, true, false, 0, -7, std::numeric_limits<std::int64_t>::max(), 3.25,
                 1.0 / 3, 1e21, -0.0, kInf, -kInf, std::nan(""), "", "hello", "héllo"})),
            kScalars);
  EXPECT_EQ(*php_serialize(Value::list({})), "a:0:{}");
  EXPECT_EQ(*php_serialize(Value::map({})), "a:0:{}");
}

TEST(PhpSerialize, StringKeysOfCanonicalIntegerTextAreIntegerKeys) {
  const Value keys = Value::map({{"5", "a"},
                                 {"-3", "b"},
                                 {"05", "c"},
                                 {"+5", "d"},
                                 {" 5", "e"},
                                 {"-0", "f"},
                                 {"9223372036854775808", "g"},
                                 {Value::bytes("9223372036854775807"), "h"}});
  EXPECT_EQ(*php_serialize(keys), kNumericKeys);
}

TEST(PhpSerialize, RefusesWhatAPhpArrayCannotHold) {
  // 5 and "5" are one key in PHP.
  auto twice = php_serialize(Value::map({{"5", 1}, {5, 2}}));
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.code(), CodecErrc::kNotEncodable);
  EXPECT_NE(twice.error().message().find("5"), std::string::npos);
  EXPECT_EQ(php_serialize(Value::map({{"a", 1}, {"a", 2}})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(php_serialize(Value::map({{"a", 1}, {Value::bytes("a"), 2}})).code(),
            CodecErrc::kNotEncodable);
  EXPECT_TRUE(php_serialize(Value::map({{"05", 1}, {5, 2}})));
  // Nested.
  EXPECT_EQ(php_serialize(Value::list({Value::map({{1, 1}, {"1", 2}})})).code(),
            CodecErrc::kNotEncodable);
  for (const Value& key : {Value(1.5), Value(), Value(true), Value::list({}), Value::map({})}) {
    SCOPED_TRACE(std::string(to_string(key.kind())));
    auto refused = php_serialize(Value::map({{key, 1}}));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.code(), CodecErrc::kNotEncodable);
  }
}

TEST(PhpSerialize, SerializedValues) {
  const std::string object = "O:8:\"stdClass\":1:{s:1:\"a\";i:1;}";
  EXPECT_EQ(*php_serialize(Value::serialized("php-serialize", object)), object);
  EXPECT_EQ(php_serialize(Value::serialized("pickle", "\x80\x05N.")).code(),
            CodecErrc::kNotEncodable);
  // Inside an array its back-references would count from the wrong place.
  EXPECT_EQ(php_serialize(Value::list({Value::serialized("php-serialize", object)})).code(),
            CodecErrc::kNotEncodable);
}

TEST(PhpUnserialize, ReadsWhatPhpWrote) {
  EXPECT_EQ(*php_unserialize(kMixed), mixed_value());
  EXPECT_EQ(*php_unserialize(kList),
            Value::list({"x", 2, 3.5, false, nullptr, Value::list({"y"})}));
  const Value scalars = *php_unserialize(kScalars);
  const Value::List& items = scalars.as_list();
  ASSERT_EQ(items.size(), 16U);
  EXPECT_TRUE(items[0].is_null());
  EXPECT_EQ(items[5], Value(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(items[7], Value(1.0 / 3));
  EXPECT_EQ(items[8], Value(1e21));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(items[9].as_double()), 0x8000000000000000ULL);
  EXPECT_EQ(items[10], Value(kInf));
  EXPECT_EQ(items[11], Value(-kInf));
  EXPECT_TRUE(std::isnan(items[12].as_double()));
  EXPECT_EQ(items[15], Value("héllo"));
  // PHP strings are strings, never bytes.
  EXPECT_EQ(php_unserialize("s:1:\"\xff\";")->kind(), memshard::ValueKind::kString);
}

TEST(PhpUnserialize, ArrayKeysAsPhpMakesThem) {
  const Value keys = *php_unserialize(kNumericKeys);
  const Value expected = Value::map({{5, "a"},
                                     {-3, "b"},
                                     {"05", "c"},
                                     {"+5", "d"},
                                     {" 5", "e"},
                                     {"-0", "f"},
                                     {"9223372036854775808", "g"},
                                     {std::numeric_limits<std::int64_t>::max(), "h"}});
  EXPECT_EQ(keys, expected);
  // A string key "5" is the integer 5, as in PHP.
  EXPECT_EQ(*php_unserialize("a:1:{s:1:\"5\";i:1;}"), Value::map({{5, 1}}));
  // Keys 0..n-1 in order: a list, also when a key was the string "1".
  EXPECT_EQ(*php_unserialize("a:2:{i:0;s:1:\"a\";s:1:\"1\";s:1:\"b\";}"), Value::list({"a", "b"}));
  // Out of order: a map (PHP keeps the order: [1=>"a", 0=>"b", 2=>"c"]).
  EXPECT_EQ(*php_unserialize("a:3:{i:1;s:1:\"a\";i:0;s:1:\"b\";i:2;s:1:\"c\";}"),
            Value::map({{1, "a"}, {0, "b"}, {2, "c"}}));
  EXPECT_EQ(*php_unserialize("a:1:{i:1;N;}"), Value::map({{1, nullptr}}));
  EXPECT_EQ(*php_unserialize("a:0:{}"), Value::list({}));
  // A repeated key keeps its place and takes the later value (PHP: [0=>2]).
  EXPECT_EQ(*php_unserialize("a:2:{i:0;i:1;i:0;i:2;}"), Value::list({2}));
  EXPECT_EQ(*php_unserialize("a:3:{s:1:\"a\";i:1;s:1:\"b\";i:2;s:1:\"a\";i:3;}"),
            Value::map({{"a", 3}, {"b", 2}}));
}

TEST(PhpUnserialize, ReadsWhatPhpAccepts) {
  EXPECT_EQ(*php_unserialize("i:+5;"), Value(5));
  EXPECT_EQ(*php_unserialize("i:007;"), Value(7));
  EXPECT_EQ(*php_unserialize("i:-9223372036854775808;"),
            Value(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(*php_unserialize("d:1.0E+25;"), Value(1e25));
  EXPECT_EQ(*php_unserialize("d:.5;"), Value(0.5));
  EXPECT_EQ(*php_unserialize("d:5;"), Value(5.0));
  // The escaped string form: php -r 'var_dump(unserialize("S:3:\"\\61bc\";"));'
  EXPECT_EQ(*php_unserialize("S:3:\"\\61bc\";"), Value("abc"));
  EXPECT_EQ(*php_unserialize("S:2:\"\\FF\\0a\";"), Value("\xff\n"));
}

TEST(PhpUnserialize, ObjectsEnumsAndReferencesStayOpaque) {
  // Recorded with PHP 8.2.36: serialize(["o"=>new stdClass,"n"=>1]),
  // serialize([new Old]) (Old implements Serializable), serialize(["s"=>Suit::Hearts]),
  // $o=new stdClass; serialize([$o,$o]); $x=1; serialize([&$x,&$x]).
  for (std::string_view bytes :
       {"a:2:{s:1:\"o\";O:8:\"stdClass\":0:{}s:1:\"n\";i:1;}", "a:1:{i:0;C:3:\"Old\":1:{x}}",
        "a:1:{s:1:\"s\";E:11:\"Suit:Hearts\";}", "a:2:{i:0;O:8:\"stdClass\":0:{}i:1;r:2;}",
        "a:2:{i:0;i:1;i:1;R:2;}", "O:8:\"stdClass\":0:{}"}) {
    SCOPED_TRACE(bytes);
    auto decoded = php_unserialize(bytes);
    ASSERT_TRUE(decoded) << decoded.error();
    ASSERT_TRUE(decoded->is_serialized());
    EXPECT_EQ(decoded->as_serialized().format, "php-serialize");
    EXPECT_EQ(decoded->as_serialized().data, bytes);
    EXPECT_EQ(*php_serialize(*decoded), bytes);
  }
}

TEST(PhpUnserialize, CorruptInput) {
  for (std::string_view bytes : {"",
                                 "N",
                                 "N:",
                                 "b:2;",
                                 "b:1",
                                 "b:;",
                                 "i:;",
                                 "i:1",
                                 "i:1x;",
                                 "i:-;",
                                 "i: 1;",
                                 "d:;",
                                 "d:abc;",
                                 "d:1",
                                 "d:+1.5;",
                                 "s:1:\"ab\";",
                                 "s:3:\"ab\";",
                                 "s:-1:\"\";",
                                 "s:1:\"a\"",
                                 "s:1:'a';",
                                 "s:x:\"a\";",
                                 "a:1:{i:0;i:1;",
                                 "a:1:{i:0;}",
                                 "a:1:{N;i:1;}",
                                 "a:1:{d:1.5;i:1;}",
                                 "a:1:{b:1;i:1;}",
                                 "a:1:{a:0:{}i:1;}",
                                 "a:2:{i:0;i:1;}",
                                 "a:0:{i:0;i:1;}",
                                 "a:1:[i:0;i:1;]",
                                 "a:-1:{}",
                                 "a:{}",
                                 "x:1;",
                                 "S:1:\"\\6\";",
                                 "S:1:\"\\zz\";",
                                 "S:2:\"a\";",
                                 "\xff"}) {
    SCOPED_TRACE(bytes);
    auto decoded = php_unserialize(bytes);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << decoded.error();
    EXPECT_EQ(decoded.error().message().rfind("php-serialize: ", 0), 0U);
  }
}

TEST(PhpUnserialize, MessagesSayWhatAndWhere) {
  EXPECT_EQ(php_unserialize("a:1:{i:0;i:42x}").error().message(),
            "php-serialize: at byte 13: expected ';' after the integer, found 'x'");
  EXPECT_EQ(php_unserialize("i:1;xyz").error().message(),
            "php-serialize: at byte 4: 3 bytes after the value");
  EXPECT_EQ(php_unserialize("a:1:{Q:0;N;}").error().message(),
            "php-serialize: at byte 5: expected an array key (i: or s:), found 'Q'");
  EXPECT_EQ(php_unserialize("a:1:{i:0;\x01}").error().message(),
            "php-serialize: at byte 9: unknown type byte 0x01");
}

TEST(PhpUnserialize, TrailingBytesAreCorrupt) {
  // PHP 8.2 ignores them; memshard does not.
  EXPECT_EQ(php_unserialize("s:1:\"a\";xyz").code(), CodecErrc::kCorrupt);
  EXPECT_EQ(php_unserialize("N;N;").code(), CodecErrc::kCorrupt);
  EXPECT_EQ(php_unserialize("a:0:{} ").code(), CodecErrc::kCorrupt);
}

TEST(PhpUnserialize, EveryTruncationIsAnError) {
  for (const std::string& whole : {kMixed, kList, kScalars, kNumericKeys}) {
    for (std::size_t size = 0; size < whole.size(); ++size) {
      const std::string_view part = std::string_view(whole).substr(0, size);
      auto decoded = php_unserialize(part);
      ASSERT_FALSE(decoded) << part;
      EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << part;
    }
  }
}

TEST(PhpUnserialize, MangledBytesNeverCrash) {
  // Every single-byte change of a valid input: a value or an error, under the
  // sanitizers.
  for (const std::string& whole : {kMixed, kScalars}) {
    for (std::size_t at = 0; at < whole.size(); ++at) {
      for (const char replacement : {'\0', '9', ':', ';', '{', '}', '"', 'a', 'O', 'R', '\xff'}) {
        std::string mangled = whole;
        mangled[at] = replacement;
        auto decoded = php_unserialize(mangled);
        if (!decoded) {
          EXPECT_FALSE(decoded.error().message().empty());
        }
      }
    }
  }
}

TEST(PhpUnserialize, ClaimedSizesAreCheckedAgainstTheBytesLeft) {
  auto count = php_unserialize("a:1000000000:{i:0;N;}");
  ASSERT_FALSE(count);
  EXPECT_EQ(count.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(count.error().message(),
            "php-serialize: at byte 0: an array of 1000000000 elements, but only 7 bytes are left");
  // Two elements need at least 12 bytes ("i:0;N;" each).
  EXPECT_EQ(php_unserialize("a:2:{i:0;N;}").code(), CodecErrc::kCorrupt);
  EXPECT_EQ(php_unserialize("a:99999999999999999999999999:{}").code(), CodecErrc::kCorrupt);
  auto length = php_unserialize("s:1000000:\"abc\";");
  ASSERT_FALSE(length);
  EXPECT_EQ(length.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(length.error().message(),
            "php-serialize: at byte 2: a string of 1000000 bytes, but only 5 bytes are left");
  EXPECT_EQ(php_unserialize("s:18446744073709551617:\"\";").code(), CodecErrc::kCorrupt);
}

TEST(PhpUnserialize, Limits) {
  // The input within max_size (every string is part of it).
  auto size = php_unserialize("s:5:\"hello\";", DecodeLimits{11, 256});
  ASSERT_FALSE(size);
  EXPECT_EQ(size.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(size.error().message(), "php-serialize: 12 bytes, over the limit of 11");
  EXPECT_TRUE(php_unserialize("s:5:\"hello\";", DecodeLimits{12, 256}));

  const std::string three_deep = "a:1:{i:0;a:1:{i:0;a:1:{i:0;N;}}}";
  EXPECT_TRUE(php_unserialize(three_deep, DecodeLimits{1024, 3}));
  auto deep = php_unserialize(three_deep, DecodeLimits{1024, 2});
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.code(), CodecErrc::kTooDeep);
  EXPECT_EQ(deep.error().message(),
            "php-serialize: at byte 18: arrays nested deeper than the limit of 2");
  EXPECT_EQ(*php_unserialize("N;", DecodeLimits{1024, 0}), Value());
  EXPECT_EQ(php_unserialize("a:0:{}", DecodeLimits{1024, 0}).code(), CodecErrc::kTooDeep);

  // Far deeper than the default limit: an error, not a stack overflow.
  std::string nested;
  for (int i = 0; i < 100000; ++i) {
    nested += "a:1:{i:0;";
  }
  nested += "N;" + std::string(100000, '}');
  EXPECT_EQ(php_unserialize(nested).code(), CodecErrc::kTooDeep);
}

TEST(PhpUnserialize, MaxDecodedBytesBoundsTheTree) {
  // What each costs: the top Value, an array's entries (a Value::Entry each,
  // taken as it is added, also when the array reads as a list; a repeated
  // key takes none), each string's bytes (before they are copied or
  // unescaped).
  struct Case {
    std::string_view bytes;
    std::size_t need;
  };
  for (const Case& c : {
           Case{"N;", sizeof(Value)},
           Case{"s:3:\"abc\";", sizeof(Value) + 3},
           Case{"S:3:\"a\\62c\";", sizeof(Value) + 3},
           Case{"a:3:{i:0;N;i:1;N;i:2;N;}", sizeof(Value) + 3 * sizeof(Value::Entry)},
           Case{"a:1:{s:2:\"ab\";i:1;}", sizeof(Value) + sizeof(Value::Entry) + 2},
           Case{"a:2:{i:0;N;i:0;N;}", sizeof(Value) + sizeof(Value::Entry)},
       }) {
    SCOPED_TRACE(c.bytes);
    DecodeLimits limits;
    limits.max_decoded_bytes = c.need;
    auto fits = php_unserialize(c.bytes, limits);
    ASSERT_TRUE(fits) << fits.error();
    limits.max_decoded_bytes = c.need - 1;
    auto over = php_unserialize(c.bytes, limits);
    ASSERT_FALSE(over);
    EXPECT_EQ(over.code(), CodecErrc::kTooLarge) << over.error();
  }
  // 100,000 elements: refused at the one that does not fit.
  std::string many = "a:100000:{";
  for (int i = 0; i < 100000; ++i) {
    many += "i:" + std::to_string(i) + ";N;";
  }
  many += "}";
  DecodeLimits limits;
  limits.max_decoded_bytes = 4096;
  auto refused = php_unserialize(many, limits);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(),
            "php-serialize: at byte 0: an array of 100000 elements would take the decoded value "
            "past max_decoded_bytes 4096");
}

TEST(PhpUnserialize, IntegersOutsideInt64AreTooLarge) {
  // PHP 8.2 clamps them to PHP_INT_MAX with a warning.
  for (std::string_view bytes :
       {"i:9223372036854775808;", "i:-9223372036854775809;", "i:99999999999999999999999;",
        "a:1:{i:0;i:+9223372036854775808;}", "a:1:{i:9223372036854775808;N;}"}) {
    SCOPED_TRACE(bytes);
    auto decoded = php_unserialize(bytes);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
    EXPECT_NE(decoded.error().message().find("integer out of range"), std::string::npos);
  }
}

// Recorded with PHP 8.2.36 (session.serialize_handler=php):
//   php -d session.save_path=/tmp -r 'session_start(); $_SESSION["user"]=["id"=>7,
//     "name"=>"a|b"]; $_SESSION["n"]=1.5; $_SESSION["flag"]=true; $_SESSION["none"]=null;
//     $_SESSION["list"]=["x","y"]; $_SESSION[""]="e"; echo session_encode();'
const std::string kSession =
    "user|a:2:{s:2:\"id\";i:7;s:4:\"name\";s:3:\"a|b\";}n|d:1.5;flag|b:1;none|N;list|a:2:{i:0;s:1:"
    "\"x\";i:1;s:1:\"y\";}|s:1:\"e\";";

auto session_value() -> Value {
  return Value::map({{"user", Value::map({{"id", 7}, {"name", "a|b"}})},
                     {"n", 1.5},
                     {"flag", true},
                     {"none", nullptr},
                     {"list", Value::list({"x", "y"})},
                     {"", "e"}});
}

TEST(PhpSession, ReadsAndWritesWhatPhpWrote) {
  EXPECT_EQ(*php_session_decode(kSession), session_value());
  EXPECT_EQ(*php_session_encode(session_value()), kSession);
  EXPECT_EQ(*php_session_decode(""), Value::map({}));
  EXPECT_EQ(*php_session_encode(Value::map({})), "");
}

TEST(PhpSession, ARepeatedNameKeepsItsPlaceAndTakesTheLaterValue) {
  // php: session_decode("a|i:1;b|i:3;a|i:2;") gives ["a"=>2, "b"=>3].
  EXPECT_EQ(*php_session_decode("a|i:1;b|i:3;a|i:2;"), Value::map({{"a", 2}, {"b", 3}}));
}

TEST(PhpSession, CorruptSessions) {
  // php: session_decode("a|i:1;junk") fails.
  for (std::string_view bytes : {"a|i:1;junk", "a|i:1", "a|", "a", "a|i:1;b|", "a|x;"}) {
    SCOPED_TRACE(bytes);
    auto decoded = php_session_decode(bytes);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt);
    EXPECT_EQ(decoded.error().message().rfind("php-session: at byte ", 0), 0U);
  }
  EXPECT_EQ(php_session_decode("a|i:1;junk").error().message(),
            "php-session: at byte 6: a session variable name without its '|' (4 bytes left)");
  EXPECT_EQ(php_session_decode("a|a:1:{i:0;N;}", DecodeLimits{1024, 0}).code(),
            CodecErrc::kTooDeep);
  EXPECT_EQ(php_session_decode("a|i:1;", DecodeLimits{5, 256}).code(), CodecErrc::kTooLarge);
}

TEST(PhpSession, MaxDecodedBytesBoundsTheSession) {
  // The map, each variable's entry and name, and its value's own: a|N;
  // b|s:2:"xy";
  const std::string_view session = "a|N;b|s:2:\"xy\";";
  const std::size_t need = sizeof(Value) + 2 * sizeof(Value::Entry) + 1 + 1 + 2;
  DecodeLimits limits;
  limits.max_decoded_bytes = need;
  auto fits = php_session_decode(session, limits);
  ASSERT_TRUE(fits) << fits.error();
  EXPECT_EQ(*fits, Value::map({{"a", nullptr}, {"b", "xy"}}));
  limits.max_decoded_bytes = need - 1;
  auto over = php_session_decode(session, limits);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.code(), CodecErrc::kTooLarge) << over.error();
}

TEST(PhpSession, ObjectsMakeTheWholeSessionOpaque) {
  const std::string bytes = "a|i:1;o|O:8:\"stdClass\":0:{}";
  auto decoded = php_session_decode(bytes);
  ASSERT_TRUE(decoded);
  ASSERT_TRUE(decoded->is_serialized());
  EXPECT_EQ(decoded->as_serialized().format, "php-session");
  EXPECT_EQ(decoded->as_serialized().data, bytes);
  EXPECT_EQ(*php_session_encode(*decoded), bytes);
}

TEST(PhpSession, RefusesWhatPhpCannotWrite) {
  // php: $_SESSION["a|b"]=1; session_encode() returns false.
  EXPECT_EQ(php_session_encode(Value::map({{"a|b", 1}})).code(), CodecErrc::kNotEncodable);
  // php: $_SESSION["5"]=1 is skipped ("Skipping numeric key 5").
  EXPECT_EQ(php_session_encode(Value::map({{"5", 1}})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(php_session_encode(Value::map({{5, 1}})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(php_session_encode(Value::map({{"a", 1}, {"a", 2}})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(php_session_encode(Value::map({{1.5, 1}})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(php_session_encode(Value::list({1})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(php_session_encode(Value("a|i:1;")).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(php_session_encode(Value::serialized("php-serialize", "N;")).code(),
            CodecErrc::kNotEncodable);
  EXPECT_EQ(
      php_session_encode(Value::map({{"a", Value::serialized("php-serialize", "N;")}})).code(),
      CodecErrc::kNotEncodable);
  EXPECT_EQ(*php_session_encode(Value::map({{"05", 1}})), "05|i:1;");
}

// The golden value tables: every item stored with serialize() decodes to the
// value stored, and php_serialize writes the same bytes. php-memcached uses
// serialize() (type 4) only for the map: ints, floats and bools are types
// 1, 2, 3 (text); pecl memcache marks it with flag 0x1.
TEST(PhpSerialize, GoldenValueTables) {
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
    if (value_case.setting("serializer") != "php") {
      continue;
    }
    for (const auto& item : value_case.items) {
      if (item.refused || (item.flags & 0xfU) != 4) {
        continue;
      }
      SCOPED_TRACE(value_case.id + " " + item.name);
      EXPECT_EQ(item.name, "map");
      const Value* expected = expected_of(item.name);
      ASSERT_NE(expected, nullptr);
      auto decoded = php_unserialize(item.bytes);
      ASSERT_TRUE(decoded) << decoded.error();
      EXPECT_EQ(*decoded, *expected);
      EXPECT_EQ(*php_serialize(*expected), item.bytes);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3);  // default, zlib, user-flags
  for (const auto& value_case : memshard::testing::read_value_cases(dir / "php_memcache.values")) {
    for (const auto& item : value_case.items) {
      if (item.refused || (item.flags & 0x1U) == 0) {
        continue;
      }
      SCOPED_TRACE(value_case.id + " " + item.name);
      EXPECT_EQ(item.name, "map");
      const Value* expected = expected_of(item.name);
      ASSERT_NE(expected, nullptr);
      auto decoded = php_unserialize(item.bytes);
      ASSERT_TRUE(decoded) << decoded.error();
      EXPECT_EQ(*decoded, *expected);
      EXPECT_EQ(*php_serialize(*expected), item.bytes);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5);
}

}  // namespace
}  // namespace codecs_php_serialize_test
