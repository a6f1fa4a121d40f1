// SPDX-License-Identifier: MIT
// Tests for codecs/msgpack.hpp: byte-exact with php-msgpack 2.2.0 (Debian
// php-msgpack 1:2.2.0~rc2-3, PHP 8.2) and the golden php-memcached table.

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "memshard/codecs/msgpack.hpp"
#include "support/codec_bytes.hpp"
#include "support/value_table.hpp"

namespace codecs_msgpack_test {
namespace {

using memshard::CodecErrc;
using memshard::DecodeLimits;
using memshard::msgpack_decode;
using memshard::msgpack_encode;
using memshard::Value;
using memshard::testing::from_hex;
using memshard::testing::to_hex;

auto encode_hex(const Value& value) -> std::string {
  auto encoded = msgpack_encode(value);
  EXPECT_TRUE(encoded.ok()) << encoded.error();
  return encoded.ok() ? to_hex(*encoded) : std::string("<error>");
}

TEST(MsgpackGolden, PhpMemcachedMapDecodesAndReencodesByteForByte) {
  const auto dir = memshard::testing::golden_values_dir();
  const auto item = memshard::testing::read_value_item(dir / "php_memcached.values",
                                                       "php-memcached-msgpack", "map");
  ASSERT_TRUE(item.has_value()) << "no php-memcached-msgpack map item";
  EXPECT_EQ(item->flags, 7U);
  EXPECT_EQ(to_hex(item->bytes), "82a16101a162920203");
  const auto expected = memshard::testing::read_named_value(dir, "map");
  ASSERT_TRUE(expected.has_value()) << "no map in values.txt";
  auto decoded = msgpack_decode(item->bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(*decoded, *expected);
  auto encoded = msgpack_encode(*expected);
  ASSERT_TRUE(encoded.ok()) << encoded.error();
  EXPECT_EQ(*encoded, item->bytes);
}

// php -r 'echo bin2hex(msgpack_pack([1, "x", 1/3, true, null, ["a"=>1]]));'
TEST(MsgpackEncode, MatchesPhpMsgpackForAMixedArray) {
  const Value value = Value::list({1, "x", 1.0 / 3.0, true, nullptr, Value::map({{"a", 1}})});
  EXPECT_EQ(encode_hex(value), "9601a178cb3fd5555555555555c3c081a16101");
  auto decoded = msgpack_decode(from_hex("9601a178cb3fd5555555555555c3c081a16101"));
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(*decoded, value);
}

// php -r 'foreach ([0,1,127,128,255,256,65535,65536,4294967295,4294967296,PHP_INT_MAX,
//   -1,-32,-33,-128,-129,-32768,-32769,-2147483648,-2147483649,PHP_INT_MIN] as $v)
//   echo bin2hex(msgpack_pack($v)), "\n";'
TEST(MsgpackEncode, IntegersTakeTheSmallestFormAsPhpMsgpackWrites) {
  const struct {
    std::int64_t number;
    const char* hex;
  } kCases[] = {
      {0, "00"},
      {1, "01"},
      {127, "7f"},
      {128, "cc80"},
      {255, "ccff"},
      {256, "cd0100"},
      {65535, "cdffff"},
      {65536, "ce00010000"},
      {4294967295LL, "ceffffffff"},
      {4294967296LL, "cf0000000100000000"},
      {std::numeric_limits<std::int64_t>::max(), "cf7fffffffffffffff"},
      {-1, "ff"},
      {-32, "e0"},
      {-33, "d0df"},
      {-128, "d080"},
      {-129, "d1ff7f"},
      {-32768, "d18000"},
      {-32769, "d2ffff7fff"},
      {-2147483648LL, "d280000000"},
      {-2147483649LL, "d3ffffffff7fffffff"},
      {std::numeric_limits<std::int64_t>::min(), "d38000000000000000"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(encode_hex(Value(c.number)), c.hex) << c.number;
    auto decoded = msgpack_decode(from_hex(c.hex));
    ASSERT_TRUE(decoded.ok()) << decoded.error();
    EXPECT_EQ(*decoded, Value(c.number)) << c.hex;
  }
}

// php -r 'foreach ([1.5, -0.0, INF, NAN] as $v) echo bin2hex(msgpack_pack($v)), "\n";'
TEST(MsgpackEncode, DoublesAreFloat64) {
  EXPECT_EQ(encode_hex(Value(1.5)), "cb3ff8000000000000");
  EXPECT_EQ(encode_hex(Value(-0.0)), "cb8000000000000000");
  EXPECT_EQ(encode_hex(Value(std::numeric_limits<double>::infinity())), "cb7ff0000000000000");
  EXPECT_EQ(encode_hex(Value(std::numeric_limits<double>::quiet_NaN())), "cb7ff8000000000000");
  auto zero = msgpack_decode(from_hex("cb8000000000000000"));
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(std::signbit(zero->as_double()));
}

// php -r 'foreach (["", str_repeat("a",31), str_repeat("a",32), str_repeat("a",255),
//   str_repeat("a",256), str_repeat("a",65536)] as $v) echo substr(bin2hex(msgpack_pack($v)),0,10),
//   "\n";'
TEST(MsgpackEncode, StringsUseStrWithTheSmallestHead) {
  EXPECT_EQ(encode_hex(Value("")), "a0");
  EXPECT_EQ(encode_hex(Value(std::string(31, 'a'))).substr(0, 4), "bf61");
  EXPECT_EQ(encode_hex(Value(std::string(32, 'a'))).substr(0, 6), "d92061");
  EXPECT_EQ(encode_hex(Value(std::string(255, 'a'))).substr(0, 6), "d9ff61");
  EXPECT_EQ(encode_hex(Value(std::string(256, 'a'))).substr(0, 8), "da010061");
  EXPECT_EQ(encode_hex(Value(std::string(65536, 'a'))).substr(0, 12), "db0001000061");
  EXPECT_EQ(msgpack_encode(Value(std::string(65536, 'a')))->size(), 65536U + 5U);
}

TEST(MsgpackEncode, BytesUseBin) {
  EXPECT_EQ(encode_hex(Value::bytes("ab")), "c4026162");
  EXPECT_EQ(encode_hex(Value::bytes(std::string(256, 'x'))).substr(0, 6), "c50100");
  EXPECT_EQ(encode_hex(Value::bytes(std::string(65536, 'x'))).substr(0, 10), "c600010000");
  EXPECT_EQ(encode_hex(Value::bytes("")), "c400");
}

// php -r 'echo bin2hex(msgpack_pack(range(0,15))), " ", bin2hex(msgpack_pack(range(0,16))), "\n";'
// php -r '$m=[]; for($i=0;$i<16;$i++) $m["k$i"]=1; echo substr(bin2hex(msgpack_pack($m)),0,10);'
// php -r 'echo bin2hex(msgpack_pack([1=>"a", 0=>"b"])), " ", bin2hex(msgpack_pack([])), "\n";'
TEST(MsgpackEncode, ListsAndMapsTakeTheFixOr16BitHead) {
  Value::List items;
  for (int i = 0; i < 15; ++i) {
    items.emplace_back(i);
  }
  EXPECT_EQ(encode_hex(Value::list(items)).substr(0, 4), "9f00");
  items.emplace_back(15);  // range(0,15): 16 elements
  EXPECT_EQ(encode_hex(Value::list(items)).substr(0, 10), "dc00100001");
  items.emplace_back(16);  // range(0,16)
  EXPECT_EQ(encode_hex(Value::list(items)).substr(0, 10), "dc00110001");
  Value::Map sixteen;
  for (int i = 0; i < 16; ++i) {
    sixteen.emplace_back(std::string("k").append(std::to_string(i)), 1);
  }
  EXPECT_EQ(encode_hex(Value::map(sixteen)).substr(0, 10), "de0010a26b");
  EXPECT_EQ(encode_hex(Value::map({{1, "a"}, {0, "b"}})), "8201a16100a162");
  EXPECT_EQ(encode_hex(Value::list({})), "90");
}

// php -r 'var_dump(msgpack_pack([]) === "\x90", msgpack_unpack("\x80"));' prints
// bool(true) and object(stdClass)#1 (0) {}.
TEST(MsgpackEncode, AnEmptyMapIsPhpsEmptyArray) {
  EXPECT_EQ(encode_hex(Value::map({})), "90");
  EXPECT_EQ(encode_hex(Value::map({{"e", Value::map({})}})), "81a16590");
  auto decoded = msgpack_decode(from_hex("80"));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, Value::map({}));
}

// php -r 'foreach ([[0=>"a", 1=>"b"], ["5"=>1], [0=>1, 2=>2], ["05"=>1, "-0"=>2, "-5"=>3]]
//   as $v) echo bin2hex(msgpack_pack($v)), "\n";'
TEST(MsgpackEncode, MapsAreWrittenAsThePhpArrayTheyStandFor) {
  EXPECT_EQ(encode_hex(Value::map({{0, "a"}, {1, "b"}})), "92a161a162");
  EXPECT_EQ(encode_hex(Value::map({{"0", "a"}, {Value::bytes("1"), "b"}})), "92a161a162");
  EXPECT_EQ(encode_hex(Value::map({{"5", 1}})), "810501");
  EXPECT_EQ(encode_hex(Value::map({{0, 1}, {"2", 2}})), "8200010202");
  EXPECT_EQ(encode_hex(Value::map({{"05", 1}, {"-0", 2}, {"-5", 3}})), "83a2303501a22d3002fb03");
  // Keys PHP cannot have are written as they are.
  EXPECT_EQ(encode_hex(Value::map({{true, 2}, {0, 1}})),
            "82c30200"
            "01");
  for (const Value& value : {Value::map({{1, "a"}, {"1", "b"}}), Value::map({{"x", 1}, {"x", 2}}),
                             Value::map({{"x", 1}, {Value::bytes("x"), 2}})}) {
    auto encoded = msgpack_encode(value);
    ASSERT_FALSE(encoded.ok());
    EXPECT_EQ(encoded.code(), CodecErrc::kNotEncodable);
  }
}

TEST(MsgpackEncode, SerializedMsgpackIsWrittenBackOthersAreNotEncodable) {
  const std::string object = from_hex("82c0a3466f6fa16101");
  EXPECT_EQ(encode_hex(Value::serialized("msgpack", object)), "82c0a3466f6fa16101");
  EXPECT_EQ(encode_hex(Value::list({Value::serialized("msgpack", object)})),
            "9182c0a3466f6fa16101");
  auto other = msgpack_encode(Value::serialized("php-serialize", "O:3:\"Foo\":0:{}"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.code(), CodecErrc::kNotEncodable);
  auto nested = msgpack_encode(Value::map({{"x", Value::serialized("pickle", "x")}}));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.code(), CodecErrc::kNotEncodable);
}

TEST(MsgpackDecode, ReadsEveryScalarForm) {
  const struct {
    const char* hex;
    Value value;
  } kCases[] = {
      {"c0", Value()},
      {"c2", Value(false)},
      {"c3", Value(true)},
      {"ca3fc00000", Value(1.5)},
      {"cc05", Value(5)},
      {"cd0005", Value(5)},
      {"ce00000005", Value(5)},
      {"cf0000000000000005", Value(5)},
      {"d0fb", Value(-5)},
      {"d1fffb", Value(-5)},
      {"d2fffffffb", Value(-5)},
      {"d3fffffffffffffffb", Value(-5)},
      {"d005", Value(5)},
      {"fb", Value(-5)},
      {"a26869", Value("hi")},
      {"d9026869", Value("hi")},
      {"da00026869", Value("hi")},
      {"db000000026869", Value("hi")},
      {"c4026869", Value::bytes("hi")},
      {"c500026869", Value::bytes("hi")},
      {"c6000000026869", Value::bytes("hi")},
      {"dc000101", Value::list({1})},
      {"dd0000000101", Value::list({1})},
      {"de00010102", Value::map({{1, 2}})},
      {"df000000010102", Value::map({{1, 2}})},
  };
  for (const auto& c : kCases) {
    auto decoded = msgpack_decode(from_hex(c.hex));
    ASSERT_TRUE(decoded.ok()) << c.hex << ": " << decoded.error();
    EXPECT_EQ(*decoded, c.value) << c.hex;
  }
}

TEST(MsgpackDecode, StrWithInvalidUtf8IsStillAString) {
  auto decoded = msgpack_decode(from_hex("a2fffe"));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->is_string());
  EXPECT_EQ(decoded->as_string(), from_hex("fffe"));
}

TEST(MsgpackDecode, MapKeysOfAnyKindKeepTheirOrder) {
  auto decoded = msgpack_decode(from_hex("83a16201c3029101a161"));
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(*decoded, Value::map({{"b", 1}, {true, 2}, {Value::list({1}), "a"}}));
  // A nil key that is not the first one is just a key.
  auto later_nil = msgpack_decode(from_hex("820101c002"));
  ASSERT_TRUE(later_nil.ok()) << later_nil.error();
  EXPECT_EQ(*later_nil, Value::map({{1, 1}, {nullptr, 2}}));
}

TEST(MsgpackDecode, Uint64AboveInt64MaxIsTooLarge) {
  auto decoded = msgpack_decode(from_hex("cf8000000000000000"));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
  EXPECT_NE(decoded.error().message().find("integer out of range"), std::string::npos);
  EXPECT_NE(decoded.error().message().find("at byte 0"), std::string::npos);
  auto nested = msgpack_decode(from_hex("9201cfffffffffffffffff"));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.code(), CodecErrc::kTooLarge);
  EXPECT_NE(nested.error().message().find("at byte 2"), std::string::npos);
}

// php -r 'class Foo { public $a = 1; } echo bin2hex(msgpack_pack(new Foo)), "\n";'
// php -r '$x = [1]; echo bin2hex(msgpack_pack([&$x, &$x])), "\n";'
TEST(MsgpackDecode, PhpObjectsReferencesAndExtensionsAreKeptOpaque) {
  for (const char* hex : {
           "82c0a3466f6fa16101",      // object Foo {a: 1}
           "9282c001000182c0020002",  // [&$x, &$x]
           "d40102",                  // fixext1
           "d5010203",                // fixext2
           "d60102030405",            // fixext4 (type 1, 4 bytes)
           "c7020a0102",              // ext8
           "c800020a0102",            // ext16
           "c9000000020a0102",        // ext32
           "92d8010102030405060708090a0b0c0d0e0f10c3",
       }) {
    const std::string bytes = from_hex(hex);
    auto decoded = msgpack_decode(bytes);
    ASSERT_TRUE(decoded.ok()) << hex << ": " << decoded.error();
    ASSERT_TRUE(decoded->is_serialized()) << hex;
    EXPECT_EQ(decoded->as_serialized().format, "msgpack");
    EXPECT_EQ(decoded->as_serialized().data, bytes);
    // Written back unchanged.
    EXPECT_EQ(*msgpack_encode(*decoded), bytes);
  }
}

TEST(MsgpackDecode, OpaqueInputsAreStillChecked) {
  // An extension followed by garbage, and a truncated object map.
  for (const char* hex : {"d4010200", "82c0a3466f6fa161", "c7ff0a01"}) {
    auto decoded = msgpack_decode(from_hex(hex));
    ASSERT_FALSE(decoded.ok()) << hex;
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << hex;
  }
}

TEST(MsgpackDecode, EveryTruncationIsCorrupt) {
  const Value value =
      Value::map({{"list", Value::list({1, -200, 70000, 1.5, "text", Value::bytes("bin")})},
                  {7, Value::map({{"x", nullptr}, {"y", true}})},
                  {"big", std::int64_t{1} << 40},
                  {"str", std::string(40, 's')}});
  const std::string bytes = *msgpack_encode(value);
  auto full = msgpack_decode(bytes);
  ASSERT_TRUE(full.ok()) << full.error();
  EXPECT_EQ(*full, value);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    auto decoded = msgpack_decode(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(decoded.ok()) << cut;
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << cut;
    EXPECT_EQ(decoded.error().message().rfind("msgpack: at byte ", 0), 0U)
        << decoded.error().message();
  }
}

TEST(MsgpackDecode, TrailingBytesAndC1AreCorrupt) {
  auto trailing = msgpack_decode(from_hex("0101"));
  ASSERT_FALSE(trailing.ok());
  EXPECT_EQ(trailing.code(), CodecErrc::kCorrupt);
  EXPECT_NE(trailing.error().message().find("at byte 1"), std::string::npos);
  auto c1 = msgpack_decode(from_hex("91c1"));
  ASSERT_FALSE(c1.ok());
  EXPECT_EQ(c1.code(), CodecErrc::kCorrupt);
  EXPECT_NE(c1.error().message().find("at byte 1"), std::string::npos);
  auto empty = msgpack_decode("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.code(), CodecErrc::kCorrupt);
}

TEST(MsgpackDecode, CountsAreCheckedAgainstTheBytesLeft) {
  for (const char* hex : {"ddffffffff", "dfffffffff00", "dbffffffff61", "c6ffffffff", "9301",
                          "8201", "dd0000000301", "df000000020101"}) {
    auto decoded = msgpack_decode(from_hex(hex));
    ASSERT_FALSE(decoded.ok()) << hex;
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << hex;
  }
}

TEST(MsgpackDecode, DepthIsBounded) {
  std::string deep(300, static_cast<char>(0x91));
  deep.push_back(0x01);
  auto decoded = msgpack_decode(deep);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.code(), CodecErrc::kTooDeep);
  auto shallow = msgpack_decode(deep.substr(300 - 3), DecodeLimits{1024, 3});
  ASSERT_TRUE(shallow.ok()) << shallow.error();
  auto too_deep = msgpack_decode(deep.substr(300 - 4), DecodeLimits{1024, 3});
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.code(), CodecErrc::kTooDeep);
  auto map_deep = msgpack_decode(from_hex("8101810281030a"), DecodeLimits{1024, 2});
  ASSERT_FALSE(map_deep.ok());
  EXPECT_EQ(map_deep.code(), CodecErrc::kTooDeep);
}

TEST(MsgpackDecode, MaxSizeBoundsStrings) {
  auto big = msgpack_decode(*msgpack_encode(Value(std::string(100, 'a'))), DecodeLimits{64, 8});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.code(), CodecErrc::kTooLarge);
  auto fits = msgpack_decode(*msgpack_encode(Value(std::string(60, 'a'))), DecodeLimits{64, 8});
  ASSERT_TRUE(fits.ok()) << fits.error();
}

TEST(MsgpackDecode, MaxDecodedBytesBoundsTheTree) {
  // What each costs: the top Value, an array's or map's slots (reserved from
  // its header), each string's bytes.
  struct Case {
    const char* hex;
    std::size_t need;
  };
  // nil; [nil, nil, nil]; ["ab"]; {1: nil}; bin "abc"
  for (const Case& c : {
           Case{"c0", sizeof(Value)},
           Case{"93c0c0c0", 4 * sizeof(Value)},
           Case{"91a26162", 2 * sizeof(Value) + 2},
           Case{"8101c0", sizeof(Value) + sizeof(Value::Entry)},
           Case{"c403616263", sizeof(Value) + 3},
       }) {
    SCOPED_TRACE(c.hex);
    DecodeLimits limits;
    limits.max_decoded_bytes = c.need;
    auto fits = msgpack_decode(from_hex(c.hex), limits);
    ASSERT_TRUE(fits.ok()) << fits.error();
    limits.max_decoded_bytes = c.need - 1;
    auto over = msgpack_decode(from_hex(c.hex), limits);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.code(), CodecErrc::kTooLarge) << over.error();
  }
  // An array32 of 1,000,000 nils, whose bytes are all there: refused at its
  // header, by default (80 MB of Values, over 64 MiB).
  const std::string nils = from_hex("dd000f4240") + std::string(1000000, '\xc0');
  auto refused = msgpack_decode(nils);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "msgpack: at byte 0: an array of 1000000 elements would take the decoded value past "
            "max_decoded_bytes 67108864");
  // A map16 of 65,535 entries and a string past a small budget.
  DecodeLimits limits;
  limits.max_decoded_bytes = 4096;
  std::string map = from_hex("deffff");
  for (int i = 0; i < 0xffff; ++i) {
    map += from_hex("c0c0");
  }
  auto big_map = msgpack_decode(map, limits);
  ASSERT_FALSE(big_map.ok());
  EXPECT_EQ(big_map.error().message(),
            "msgpack: at byte 0: a map of 65535 entries would take the decoded value past "
            "max_decoded_bytes 4096");
  auto big_string = msgpack_decode(*msgpack_encode(Value(std::string(5000, 'a'))), limits);
  ASSERT_FALSE(big_string.ok());
  EXPECT_EQ(big_string.code(), CodecErrc::kTooLarge);
}

TEST(MsgpackRoundTrip, EncodeThenDecodeGivesTheValueBack) {
  Value::List many;
  for (int i = -300; i < 300; i += 7) {
    many.emplace_back(i * 1000003);
  }
  const Value value = Value::map({
      {"many", Value::list(many)},
      {"nested", Value::list({Value::list({Value::map({{"deep", "yes"}})})})},
      {"utf8", "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93"},
      {"bytes", Value::bytes(std::string("\x00\x01\xff", 3))},
      {"float", 1e21},
      {"neg", -0.25},
      {"null", nullptr},
      {"false", false},
      {3, "int key"},
      {"long", std::string(70000, 'z')},
  });
  auto encoded = msgpack_encode(value);
  ASSERT_TRUE(encoded.ok()) << encoded.error();
  auto decoded = msgpack_decode(*encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(*decoded, value);
}

}  // namespace
}  // namespace codecs_msgpack_test
