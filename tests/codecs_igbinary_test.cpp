// SPDX-License-Identifier: MIT
// Tests for codecs/igbinary.hpp: byte-exact with php-igbinary 3.2.13 (Debian
// php-igbinary 3.2.13-1, PHP 8.2) and the golden php-memcached table. Every
// hex literal below was printed by the php command in the comment above it.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "memshard/codecs/igbinary.hpp"
#include "support/codec_bytes.hpp"
#include "support/value_table.hpp"

namespace codecs_igbinary_test {
namespace {

using memshard::CodecErrc;
using memshard::DecodeLimits;
using memshard::igbinary_serialize;
using memshard::igbinary_unserialize;
using memshard::Value;
using memshard::testing::from_hex;
using memshard::testing::to_hex;

auto serialize_hex(const Value& value) -> std::string {
  auto encoded = igbinary_serialize(value);
  EXPECT_TRUE(encoded.ok()) << encoded.error();
  return encoded.ok() ? to_hex(*encoded) : std::string("<error>");
}

auto unserialize_hex(std::string_view hex) -> Value {
  auto decoded = igbinary_unserialize(from_hex(hex));
  EXPECT_TRUE(decoded.ok()) << hex << ": " << decoded.error();
  return decoded.ok() ? *decoded : Value("<error>");
}

// Both directions: PHP's bytes decode to `value`, and `value` encodes to them.
void expect_both_ways(const Value& value, std::string_view hex) {
  EXPECT_EQ(serialize_hex(value), hex);
  EXPECT_EQ(unserialize_hex(hex), value) << hex;
}

TEST(IgbinaryGolden, PhpMemcachedMapDecodesAndReencodesByteForByte) {
  const auto dir = memshard::testing::golden_values_dir();
  const auto item = memshard::testing::read_value_item(dir / "php_memcached.values",
                                                       "php-memcached-igbinary", "map");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->flags, 5U);
  const auto expected = memshard::testing::read_named_value(dir, "map");
  ASSERT_TRUE(expected.has_value());
  auto decoded = igbinary_unserialize(item->bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(*decoded, *expected);
  auto encoded = igbinary_serialize(*expected);
  ASSERT_TRUE(encoded.ok()) << encoded.error();
  EXPECT_EQ(*encoded, item->bytes);
}

// php -r 'foreach (["abc", 5, -5, PHP_INT_MIN, PHP_INT_MAX, -256, -65536, 65536,
//   -4294967296, 1.5, null, true, false] as $v) echo bin2hex(igbinary_serialize($v)), "\n";'
TEST(IgbinaryScalars, MatchPhpIgbinary) {
  expect_both_ways(Value("abc"), "000000021103616263");
  expect_both_ways(Value(5), "000000020605");
  expect_both_ways(Value(-5), "000000020705");
  expect_both_ways(Value(std::numeric_limits<std::int64_t>::min()), "00000002218000000000000000");
  expect_both_ways(Value(std::numeric_limits<std::int64_t>::max()), "00000002207fffffffffffffff");
  expect_both_ways(Value(-256), "00000002090100");
  expect_both_ways(Value(-65536), "000000020b00010000");
  expect_both_ways(Value(65536), "000000020a00010000");
  expect_both_ways(Value(std::int64_t{-4294967296}), "00000002210000000100000000");
  expect_both_ways(Value(1.5), "000000020c3ff8000000000000");
  expect_both_ways(Value(), "0000000200");
  expect_both_ways(Value(true), "0000000205");
  expect_both_ways(Value(false), "0000000204");
  expect_both_ways(Value(""), "000000020d");
  // Bytes are PHP strings too.
  EXPECT_EQ(serialize_hex(Value::bytes("abc")), "000000021103616263");
}

// php -r 'echo substr(bin2hex(igbinary_serialize(str_repeat("a", 256))), 0, 16);'
TEST(IgbinaryScalars, LongStringsTakeA16Or32BitLength) {
  EXPECT_EQ(serialize_hex(Value(std::string(256, 'a'))).substr(0, 16), "0000000212010061");
  EXPECT_EQ(serialize_hex(Value(std::string(65536, 'a'))).substr(0, 20), "00000002130001000061");
  EXPECT_EQ(unserialize_hex("0000000213000000026869"), Value("hi"));
  EXPECT_EQ(unserialize_hex("000000022600000000000000026869"), Value("hi"));
}

// php -r 'echo bin2hex(igbinary_serialize(["a"=>"x","b"=>["a"=>"x"]]));'
// php -r 'echo bin2hex(igbinary_serialize(["abc", "abc"]));'
// php -r 'echo bin2hex(igbinary_serialize(["" => 1, "x" => ""]));'
TEST(IgbinaryStrings, RepeatedStringsAreBackReferences) {
  expect_both_ways(Value::map({{"a", "x"}, {"b", Value::map({{"a", "x"}})}}),
                   "00000002140211016111017811016214010e000e01");
  expect_both_ways(Value::list({"abc", "abc"}), "0000000214020600110361626306010e00");
  expect_both_ways(Value::map({{"", 1}, {"x", ""}}), "0000000214020d06011101780d");
}

// php -r '$v = []; for ($i=0;$i<300;$i++) $v[] = "s$i"; $v[] = "s0"; $v[] = "s299";
//   $h = bin2hex(igbinary_serialize($v)); echo substr($h,0,16), " ", substr($h,-22), " ",
//   strlen($h)/2;'
TEST(IgbinaryStrings, StringNumbersAbove255Take16Bits) {
  Value::List items;
  for (int i = 0; i < 300; ++i) {
    items.emplace_back(std::string("s").append(std::to_string(i)));
  }
  items.emplace_back("s0");
  items.emplace_back("s299");
  const Value value = Value::list(items);
  const std::string hex = serialize_hex(value);
  EXPECT_EQ(hex.size(), 2352U * 2);
  EXPECT_EQ(hex.substr(0, 16), "0000000215012e06");
  EXPECT_EQ(hex.substr(hex.size() - 22), "08012c0e0008012d0f012b");
  EXPECT_EQ(unserialize_hex(hex), value);
}

// php -r 'echo bin2hex(igbinary_serialize(["5"=>1, "-5"=>2, "05"=>3, "-0"=>4,
//   "9223372036854775808"=>5, "-9223372036854775808"=>6, "9223372036854775807"=>7,
//   " 5"=>8, "0"=>9]));'
TEST(IgbinaryKeys, IntegerLikeStringKeysBecomeIntegersAsInPhp) {
  const Value value = Value::map({{"5", 1},
                                  {"-5", 2},
                                  {"05", 3},
                                  {"-0", 4},
                                  {"9223372036854775808", 5},
                                  {"-9223372036854775808", 6},
                                  {"9223372036854775807", 7},
                                  {" 5", 8},
                                  {"0", 9}});
  const char* kPhp =
      "000000021409060506010705060211023035060311022d300604111339323233333732303336383534373735"
      "38303806052180000000000000000606207fffffffffffffff060711022035060806000609";
  EXPECT_EQ(serialize_hex(value), kPhp);
  // Read back, the converted keys are integers.
  const Value back = unserialize_hex(kPhp);
  ASSERT_TRUE(back.is_map());
  EXPECT_EQ(back.as_map()[0].first, Value(5));
  EXPECT_EQ(back.as_map()[1].first, Value(-5));
  EXPECT_EQ(back.as_map()[2].first, Value("05"));
  EXPECT_EQ(back.as_map()[5].first, Value(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(back.as_map()[8].first, Value(0));
}

TEST(IgbinaryKeys, IntegerKeyRule) {
  using memshard::detail::igbinary_integer_key;
  EXPECT_EQ(igbinary_integer_key("0"), std::int64_t{0});
  EXPECT_EQ(igbinary_integer_key("42"), std::int64_t{42});
  EXPECT_EQ(igbinary_integer_key("-42"), std::int64_t{-42});
  EXPECT_EQ(igbinary_integer_key("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
  for (const char* text :
       {"", "-", "-0", "00", "01", "4a", "+4", " 4", "4 ", "1.0", "9223372036854775808",
        "-9223372036854775809", "99999999999999999999", "12345678901234567890"}) {
    EXPECT_EQ(igbinary_integer_key(text), std::nullopt) << text;
  }
}

TEST(IgbinaryKeys, KeysThatAreOnePhpKeyOrNotKeysAreNotEncodable) {
  for (const Value& value :
       {Value::map({{1, "a"}, {"1", "b"}}), Value::map({{"x", 1}, {"x", 2}}),
        Value::map({{1.5, "a"}}), Value::map({{true, "a"}}), Value::map({{nullptr, "a"}}),
        Value::list({Value::map({{Value::list({}), 1}})})}) {
    auto encoded = igbinary_serialize(value);
    ASSERT_FALSE(encoded.ok());
    EXPECT_EQ(encoded.code(), CodecErrc::kNotEncodable);
  }
  // A string key that stays a string does not clash with an integer one.
  EXPECT_TRUE(igbinary_serialize(Value::map({{1, "a"}, {"01", "b"}})).ok());
}

// php -r 'echo bin2hex(igbinary_serialize([1=>"a", 0=>"b"])), " ",
// bin2hex(igbinary_serialize([]));'
TEST(IgbinaryArrays, KeysZeroToNMinusOneInOrderAreAListOthersAMap) {
  expect_both_ways(Value::map({{1, "a"}, {0, "b"}}), "00000002140206011101610600110162");
  expect_both_ways(Value::list({}), "000000021400");
  // A map keyed 0..n-1 in order is the same PHP array as a list.
  EXPECT_EQ(serialize_hex(Value::map({{0, "a"}, {"1", "b"}})),
            serialize_hex(Value::list({"a", "b"})));
  EXPECT_EQ(unserialize_hex("0000000214020600110161060111016"
                            "2"),
            Value::list({"a", "b"}));
  EXPECT_EQ(unserialize_hex("000000021401060105"), Value::map({{1, true}}));
}

// php -r 'echo bin2hex(igbinary_serialize([true, false, null, 0.1, -0.0, "é"]));'
TEST(IgbinaryArrays, MixedList) {
  expect_both_ways(Value::list({true, false, nullptr, 0.1, -0.0, "\xc3\xa9"}),
                   "00000002140606000506010406020006030c3fb999999999999a06040c80000000000000000605"
                   "1102c3a9");
}

// php -r 'echo bin2hex(igbinary_serialize([[], []]));'
// php -r 'echo bin2hex(igbinary_serialize(["a"=>[], "b"=>[[]]]));'
// php -r 'echo bin2hex(igbinary_serialize(["k"=>[], "l"=>["m"=>[], "k"=>"k"]]));'
TEST(IgbinaryArrays, EmptyArraysAfterTheFirstAreReferencesToIt) {
  expect_both_ways(Value::list({Value::list({}), Value::list({})}), "0000000214020600140006010101");
  expect_both_ways(Value::map({{"a", Value::list({})}, {"b", Value::list({Value::list({})})}}),
                   "0000000214021101611400110162140106000101");
  // An empty map is an empty PHP array too; it reads back as an empty list.
  const char* kNested = "00000002140211016b140011016c140211016d01010e000e00";
  EXPECT_EQ(serialize_hex(Value::map(
                {{"k", Value::list({})}, {"l", Value::map({{"m", Value::map({})}, {"k", "k"}})}})),
            kNested);
  EXPECT_EQ(unserialize_hex(kNested),
            Value::map(
                {{"k", Value::list({})}, {"l", Value::map({{"m", Value::list({})}, {"k", "k"}})}}));
}

// php -r '$w = []; for ($i=0;$i<300;$i++) $w[] = [$i]; $w[] = []; $w[] = [];
//   $h = bin2hex(igbinary_serialize($w)); echo substr($h,0,16), " ", substr($h,-22), " ",
//   strlen($h)/2;'
TEST(IgbinaryArrays, ArrayNumbersAbove255Take16Bits) {
  Value::List items;
  for (int i = 0; i < 300; ++i) {
    items.push_back(Value::list({i}));
  }
  items.push_back(Value::list({}));
  items.push_back(Value::list({}));
  const Value value = Value::list(items);
  const std::string hex = serialize_hex(value);
  EXPECT_EQ(hex.size(), 2506U * 2);
  EXPECT_EQ(hex.substr(0, 16), "0000000215012e06");
  EXPECT_EQ(hex.substr(hex.size() - 22), "08012c140008012d02012d");
  EXPECT_EQ(unserialize_hex(hex), value);
}

// php -r '$a=[1,2]; echo bin2hex(igbinary_serialize([$a,$a]));'
TEST(IgbinaryArrays, ASharedArrayIsReadAsACopy) {
  EXPECT_EQ(unserialize_hex("00000002140206001402060006010601060206010101"),
            Value::list({Value::list({1, 2}), Value::list({1, 2})}));
  // A copy of an array holding string references and a copy itself.
  EXPECT_EQ(unserialize_hex("000000021403"
                            "0600140211016106011101620e00"      // 0 => ["a"=>1, "b"=>"a"]
                            "06011402060001010601140106000e01"  // 1 => [ref #1, ["b"]]
                            "06020102"),                        // 2 => ref #2
            Value::list({Value::map({{"a", 1}, {"b", "a"}}),
                         Value::list({Value::map({{"a", 1}, {"b", "a"}}), Value::list({"b"})}),
                         Value::list({Value::map({{"a", 1}, {"b", "a"}}), Value::list({"b"})})}));
}

// An array holding [5], then arrays each holding the previous one twice:
// `levels` entries whose last one expands to 2^(levels-1) integers.
auto doubling_arrays(int levels) -> std::string {
  std::string bytes = from_hex("0000000214") + std::string(1, static_cast<char>(levels));
  bytes += from_hex("0600140106000605");  // 0 => [5], array #1
  for (int k = 1; k < levels; ++k) {
    const std::string ref = from_hex("01") + std::string(1, static_cast<char>(k));
    bytes += from_hex("06") + std::string(1, static_cast<char>(k)) + from_hex("14020600") + ref +
             from_hex("0601") + ref;
  }
  return bytes;
}

TEST(IgbinaryArrays, ReferenceExpansionIsBoundedByMaxDecodedBytes) {
  auto small = igbinary_unserialize(doubling_arrays(4));
  ASSERT_TRUE(small.ok()) << small.error();
  const Value five = Value::list({5});
  const Value two = Value::list({five, five});
  const Value four = Value::list({two, two});
  EXPECT_EQ(*small, Value::list({five, two, four, Value::list({four, four})}));
  DecodeLimits limits;
  limits.max_decoded_bytes = std::size_t{1} << 20U;
  auto bomb = igbinary_unserialize(doubling_arrays(40), limits);
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.code(), CodecErrc::kTooLarge) << bomb.error();
  EXPECT_NE(bomb.error().message().find("past max_decoded_bytes 1048576"), std::string::npos)
      << bomb.error();
  auto bomb_default = igbinary_unserialize(doubling_arrays(40));
  ASSERT_FALSE(bomb_default.ok());
  EXPECT_EQ(bomb_default.code(), CodecErrc::kTooLarge) << bomb_default.error();
}

TEST(IgbinaryUnserialize, MaxDecodedBytesBoundsTheTree) {
  // What each costs: the top Value, an array's entries (a Value::Entry each,
  // reserved from its header, also when it reads as a list), each string's
  // bytes, a string reference's too (it is a copy).
  struct Case {
    const char* hex;
    std::size_t need;
  };
  // null; "abc"; [null, null, null]; ["abc", "abc"] (a string reference);
  // ["ab" => 1]
  for (const Case& c : {
           Case{"0000000200", sizeof(Value)},
           Case{"000000021103616263", sizeof(Value) + 3},
           Case{"000000021403060000060100060200", sizeof(Value) + 3 * sizeof(Value::Entry)},
           Case{"0000000214020600110361626306010e00",
                sizeof(Value) + 2 * sizeof(Value::Entry) + 2 * 3},
           Case{"000000021401110261620601", sizeof(Value) + sizeof(Value::Entry) + 2},
       }) {
    SCOPED_TRACE(c.hex);
    DecodeLimits limits;
    limits.max_decoded_bytes = c.need;
    auto fits = igbinary_unserialize(from_hex(c.hex), limits);
    ASSERT_TRUE(fits.ok()) << fits.error();
    limits.max_decoded_bytes = c.need - 1;
    auto over = igbinary_unserialize(from_hex(c.hex), limits);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.code(), CodecErrc::kTooLarge) << over.error();
  }
  // An array whose size the bytes left can hold, but not the budget: refused
  // at its header.
  std::string many = from_hex("0000000216000f4240");  // an array of 1,000,000 entries
  many.append(4000000, '\0');
  DecodeLimits limits;
  limits.max_decoded_bytes = std::size_t{1} << 20U;
  auto refused = igbinary_unserialize(many, limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "igbinary: at byte 4: an array of 1000000 entries would take the decoded value past "
            "max_decoded_bytes 1048576");
}

// php -r 'class Foo { public $a = 1; } echo bin2hex(igbinary_serialize(new Foo)), " ",
//   bin2hex(igbinary_serialize([new Foo, new Foo]));'
// php -r '$r = [1]; echo bin2hex(igbinary_serialize([&$r, &$r]));'
TEST(IgbinaryOpaque, ObjectsReferencesAndRecursionAreKeptWhole) {
  for (const char* hex : {
           "000000021703466f6f14011101610601",
           "00000002140206001703466f6f1401110161060106011a0014010e010601",
           "0000000214020600251401060006010601250101",
           "0000000214020600140006010100",  // a reference to the enclosing array
           "00000002140106002201",          // an object reference
           "0000000227",                    // an enum case
           "000000021d",                    // Serializable data
       }) {
    const std::string bytes = from_hex(hex);
    auto decoded = igbinary_unserialize(bytes);
    ASSERT_TRUE(decoded.ok()) << hex << ": " << decoded.error();
    ASSERT_TRUE(decoded->is_serialized()) << hex;
    EXPECT_EQ(decoded->as_serialized().format, "igbinary");
    EXPECT_EQ(decoded->as_serialized().data, bytes);
    auto again = igbinary_serialize(*decoded);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, bytes);
  }
}

TEST(IgbinarySerialize, SerializedValuesOfOtherFormatsOrNestedAreNotEncodable) {
  const Value object = Value::serialized("igbinary", from_hex("000000021703466f6f1400"));
  auto nested = igbinary_serialize(Value::list({object}));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.code(), CodecErrc::kNotEncodable);
  auto other = igbinary_serialize(Value::serialized("msgpack", "\x80"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.code(), CodecErrc::kNotEncodable);
}

TEST(IgbinaryUnserialize, HeaderVersionOneIsReadOthersAreCorrupt) {
  EXPECT_EQ(unserialize_hex("0000000106"
                            "05"),
            Value(5));
  for (const char* hex : {"000000030605", "010000020605", "000000", ""}) {
    auto decoded = igbinary_unserialize(from_hex(hex));
    ASSERT_FALSE(decoded.ok()) << hex;
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << hex;
  }
}

TEST(IgbinaryUnserialize, IntegersOutsideInt64AreTooLarge) {
  for (const char* hex : {"00000002208000000000000000", "00000002218000000000000001",
                          "00000002140120ffffffffffffffff0605"}) {
    auto decoded = igbinary_unserialize(from_hex(hex));
    ASSERT_FALSE(decoded.ok()) << hex;
    EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge) << hex;
    EXPECT_NE(decoded.error().message().find("integer out of range"), std::string::npos);
  }
}

TEST(IgbinaryUnserialize, BadInputIsCorruptWithItsOffset) {
  const struct {
    const char* hex;
    const char* where;
  } kCases[] = {
      {"000000020e00", "at byte 4"},              // string #0 before any string
      {"00000002140206000e050601", "at byte 8"},  // string #5 of 0
      {"0000000214010601010106", "at byte 8"},    // array #1 of 1
      {"00000002140104060102", "at byte 6"},      // a bool key
      {"0000000216ffffffff", "at byte 4"},        // a count the bytes cannot hold
      {"0000000213ffffffff61", "at byte 4"},      // a length the bytes cannot hold
      {"0000000206050a", "at byte 6"},            // bytes after the value
      {"00000002ff", "at byte 4"},                // unknown type
      {"000000021402060006", "at byte 8"},        // truncated integer
  };
  for (const auto& c : kCases) {
    auto decoded = igbinary_unserialize(from_hex(c.hex));
    ASSERT_FALSE(decoded.ok()) << c.hex;
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << c.hex;
    EXPECT_NE(decoded.error().message().find(c.where), std::string::npos)
        << c.hex << ": " << decoded.error().message();
    EXPECT_EQ(decoded.error().message().rfind("igbinary: ", 0), 0U);
  }
}

TEST(IgbinaryUnserialize, EveryTruncationIsCorrupt) {
  const Value value = Value::map({{"list", Value::list({1, -200, 70000, 1.5, "text", ""})},
                                  {7, Value::map({{"x", nullptr}, {"y", true}, {"z", "text"}})},
                                  {"big", std::int64_t{1} << 40},
                                  {"e1", Value::list({})},
                                  {"e2", Value::list({})},
                                  {"str", std::string(300, 's')}});
  const std::string bytes = *igbinary_serialize(value);
  EXPECT_EQ(unserialize_hex(to_hex(bytes)), value);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    auto decoded = igbinary_unserialize(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(decoded.ok()) << cut;
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << cut;
  }
}

TEST(IgbinaryUnserialize, NullKeysAreEntriesWithoutAValue) {
  EXPECT_EQ(unserialize_hex("00000002140200060105"), Value::map({{1, true}}));
}

TEST(IgbinaryUnserialize, DepthAndSizeAreBounded) {
  std::string deep = from_hex("00000002");
  for (int i = 0; i < 300; ++i) {
    deep += from_hex("14010600");
  }
  deep += from_hex("00");
  auto decoded = igbinary_unserialize(deep);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.code(), CodecErrc::kTooDeep);
  auto shallow =
      igbinary_unserialize(from_hex("0000000214010600140106000605"), DecodeLimits{1024, 2});
  ASSERT_TRUE(shallow.ok()) << shallow.error();
  auto too_deep =
      igbinary_unserialize(from_hex("000000021401060014010600140106000605"), DecodeLimits{1024, 2});
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.code(), CodecErrc::kTooDeep);
  auto big =
      igbinary_unserialize(*igbinary_serialize(Value(std::string(100, 'a'))), DecodeLimits{64, 8});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.code(), CodecErrc::kTooLarge);
}

TEST(IgbinaryRoundTrip, EncodeThenDecodeGivesTheValueBack) {
  Value::List many;
  for (int i = -70000; i < 70000; i += 997) {
    many.emplace_back(std::int64_t{i} * 1000003);
  }
  const Value value = Value::map({
      {"many", Value::list(many)},
      {"nested", Value::list({Value::list({Value::map({{"deep", "yes"}, {"many", "yes"}})})})},
      {"utf8", "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93"},
      {"float", 1e21},
      {"null", nullptr},
      {-3, "negative key"},
      {"long", std::string(70000, 'z')},
      {"empties", Value::list({Value::list({}), Value::map({}), Value::list({Value::list({})})})},
  });
  auto encoded = igbinary_serialize(value);
  ASSERT_TRUE(encoded.ok()) << encoded.error();
  auto decoded = igbinary_unserialize(*encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  // Empty maps come back as empty lists: PHP has one kind of array.
  const Value expected = Value::map({
      {"many", Value::list(many)},
      {"nested", Value::list({Value::list({Value::map({{"deep", "yes"}, {"many", "yes"}})})})},
      {"utf8", "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93"},
      {"float", 1e21},
      {"null", nullptr},
      {-3, "negative key"},
      {"long", std::string(70000, 'z')},
      {"empties", Value::list({Value::list({}), Value::list({}), Value::list({Value::list({})})})},
  });
  EXPECT_EQ(*decoded, expected);
}

}  // namespace
}  // namespace codecs_igbinary_test
