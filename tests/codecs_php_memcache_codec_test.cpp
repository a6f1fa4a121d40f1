// SPDX-License-Identifier: MIT
// codecs/php_memcache_codec.hpp: PhpMemcacheCodec beyond the value tables
// (which codecs_make_codec_test checks): the flag rules on decode (0x1 wins
// over the type, an unknown type is a string, the user flags and the bits pecl
// memcache ignores), every kind on encode (the "%.14g" doubles among them),
// compression at its threshold and its savings rule, the options, and bad
// items. The literal items were checked once against the real client (see
// ReadsAndWritesWhatTheRealClientDoes).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/php_memcache_codec.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_php_memcache_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::Encoded;
using memshard::PhpMemcacheCodec;
using memshard::PhpMemcacheOptions;
using memshard::Value;
using memshard::testing::from_hex;
using memshard::testing::noisy;

constexpr double kInf = std::numeric_limits<double>::infinity();

auto zlib(std::string_view data) -> std::string {
  return memshard::detail::deflate_bytes(data, memshard::detail::DeflateFormat::kZlib, -1);
}

TEST(PhpMemcacheCodecTest, TheTypeInBits8To11) {
  const PhpMemcacheCodec codec;
  EXPECT_EQ(*codec.decode("hello", 0), Value("hello"));
  EXPECT_EQ(*codec.decode("\xff\xfe", 0), Value("\xff\xfe"));  // PHP strings are any bytes
  EXPECT_EQ(*codec.decode("-42", 0x300), Value(-42));
  EXPECT_EQ(*codec.decode("-9223372036854775808", 0x300),
            Value(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(*codec.decode("9223372036854775807", 0x300),
            Value(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(*codec.decode("0.33333333333333", 0x700), Value(0.33333333333333));
  EXPECT_EQ(*codec.decode("1.0e+21", 0x700), Value(1e21));
  EXPECT_EQ(*codec.decode("INF", 0x700), Value(kInf));
  EXPECT_EQ(*codec.decode("-INF", 0x700), Value(-kInf));
  EXPECT_TRUE(std::isnan(codec.decode("NAN", 0x700)->as_double()));
  const auto negative_zero = codec.decode("-0", 0x700);
  EXPECT_EQ(*negative_zero, Value(0.0));
  EXPECT_TRUE(std::signbit(negative_zero->as_double()));
  EXPECT_EQ(*codec.decode("1", 0x100), Value(true));
  EXPECT_EQ(*codec.decode("0", 0x100), Value(false));
  EXPECT_EQ(*codec.decode("", 0x100), Value(false));
}

TEST(PhpMemcacheCodecTest, AnUnknownTypeIsAString) {
  const PhpMemcacheCodec codec;
  // pecl memcache switches on flags & 0x0f00 and reads any other type as a
  // string: spymemcached's Integer (0x200), Byte (0x500), byte[] (0x800)...
  for (const std::uint32_t flags : {0x200U, 0x400U, 0x500U, 0x600U, 0x800U, 0xf00U}) {
    EXPECT_EQ(*codec.decode("42", flags), Value("42")) << flags;
  }
  // ... and ignores the bits it does not use (0x4 to 0x80, 0xf000).
  for (const std::uint32_t flags : {0x4U, 0x8U, 0x10U, 0x20U, 0x40U, 0x80U, 0xf000U}) {
    EXPECT_EQ(*codec.decode("abc", flags), Value("abc")) << flags;
  }
  EXPECT_EQ(*codec.decode("7", 0x314), Value(7));
}

TEST(PhpMemcacheCodecTest, SerializedWinsOverTheTypeAndCompressionComesFirst) {
  const PhpMemcacheCodec codec;
  EXPECT_EQ(*codec.decode("i:5;", 0x301), Value(5));
  EXPECT_EQ(*codec.decode("s:1:\"a\";", 0x701), Value("a"));
  EXPECT_EQ(*codec.decode("N;", 0x101), Value());
  EXPECT_EQ(*codec.decode("b:1;", 0x1), Value(true));
  EXPECT_EQ(*codec.decode(zlib("i:5;"), 0x3), Value(5));
  EXPECT_EQ(*codec.decode(zlib("77"), 0x302), Value(77));
  EXPECT_EQ(*codec.decode(zlib("3.25"), 0x702), Value(3.25));
  EXPECT_EQ(*codec.decode(zlib("1"), 0x102), Value(true));
  EXPECT_EQ(*codec.decode(zlib("abc"), 0x2), Value("abc"));
  EXPECT_EQ(*codec.decode(zlib(""), 0x2), Value(""));
}

TEST(PhpMemcacheCodecTest, TheUserFlagsAreIgnoredOnDecodeAndWrittenInBits16To31) {
  const PhpMemcacheCodec codec;
  EXPECT_EQ(*codec.decode("7", 0x10300), Value(7));
  // Written by memshard, stored raw, read with $m->get($k): array('k' => -1,
  // 7 => array(), 'f' => -0.0), and -INF.
  EXPECT_EQ(*codec.encode(Value::map({{"k", -1}, {7, Value::list({})}, {"f", -0.0}})),
            (Encoded{"a:3:{s:1:\"k\";i:-1;i:7;a:0:{}s:1:\"f\";d:-0;}", 0x1}));
  EXPECT_EQ(*codec.encode(Value(-kInf)), (Encoded{"-INF", 0x700}));
  EXPECT_EQ(*codec.decode("x", 0xffff0000U), Value("x"));
  EXPECT_EQ(*codec.decode("i:1;", 0xffff0001U), Value(1));
  PhpMemcacheOptions options;
  options.user_flags = 0xffff;
  const PhpMemcacheCodec flagged(options);
  EXPECT_EQ(flagged.encode(Value("x"))->flags, 0xffff0000U);
  EXPECT_EQ(flagged.encode(Value(1.5))->flags, 0xffff0700U);
  EXPECT_EQ(flagged.encode(Value(false))->flags, 0xffff0100U);
  EXPECT_EQ(flagged.encode(Value())->flags, 0xffff0001U);
  EXPECT_EQ(flagged.encode(Value(std::string(30000, 'a')))->flags, 0xffff0002U);
  EXPECT_EQ(*flagged.decode(flagged.encode(Value(std::string(30000, 'a')))->bytes, 0xffff0002U),
            Value(std::string(30000, 'a')));
}

TEST(PhpMemcacheCodecTest, EveryKindOnEncode) {
  const PhpMemcacheCodec codec;
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"N;", 0x1}));
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"1", 0x100}));
  EXPECT_EQ(*codec.encode(Value(false)), (Encoded{"0", 0x100}));
  EXPECT_EQ(*codec.encode(Value(0)), (Encoded{"0", 0x300}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0x300}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::max())),
            (Encoded{"9223372036854775807", 0x300}));
  // "%.14g" as PHP's snprintf writes it.
  EXPECT_EQ(*codec.encode(Value(-0.0)), (Encoded{"-0", 0x700}));
  EXPECT_EQ(*codec.encode(Value(kInf)), (Encoded{"INF", 0x700}));
  EXPECT_EQ(*codec.encode(Value(-kInf)), (Encoded{"-INF", 0x700}));
  EXPECT_EQ(*codec.encode(Value(std::nan(""))), (Encoded{"NAN", 0x700}));
  EXPECT_EQ(*codec.encode(Value(1e-5)), (Encoded{"1.0e-5", 0x700}));
  EXPECT_EQ(*codec.encode(Value(1e15)), (Encoded{"1.0e+15", 0x700}));
  EXPECT_EQ(*codec.encode(Value(123456789012345.678)), (Encoded{"1.2345678901235e+14", 0x700}));
  EXPECT_EQ(*codec.encode(Value(0.1)), (Encoded{"0.1", 0x700}));
  EXPECT_EQ(*codec.encode(Value(100.0)), (Encoded{"100", 0x700}));
  // Strings and bytes alike, any bytes.
  EXPECT_EQ(*codec.encode(Value("h\xc3\xa9llo")), (Encoded{"h\xc3\xa9llo", 0}));
  EXPECT_EQ(*codec.encode(Value("\xff\xfe")), (Encoded{"\xff\xfe", 0}));
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\0\x01", 2))),
            (Encoded{std::string("\0\x01", 2), 0}));
  EXPECT_EQ(*codec.encode(Value("")), (Encoded{"", 0}));
  // Lists and maps through serialize().
  EXPECT_EQ(*codec.encode(Value::list({1, "a", nullptr, 2.5})),
            (Encoded{"a:4:{i:0;i:1;i:1;s:1:\"a\";i:2;N;i:3;d:2.5;}", 0x1}));
  EXPECT_EQ(*codec.encode(Value::map({{"k", -1}, {7, Value::list({})}})),
            (Encoded{"a:2:{s:1:\"k\";i:-1;i:7;a:0:{}}", 0x1}));
  // A php-serialize object is written back as it is; another format cannot be.
  const std::string object = "O:8:\"stdClass\":1:{s:1:\"a\";i:1;}";
  EXPECT_EQ(*codec.encode(Value::serialized("php-serialize", object)), (Encoded{object, 0x1}));
  EXPECT_EQ(*codec.decode(object, 0x1), Value::serialized("php-serialize", object));
  const auto pickle = codec.encode(Value::serialized("pickle", "N."));
  EXPECT_EQ(pickle.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.encode(Value::list({Value::serialized("pickle", "N.")})).code(),
            CodecErrc::kNotEncodable);
}

TEST(PhpMemcacheCodecTest, WhatItWritesReadsBack) {
  const PhpMemcacheCodec codec;
  for (const Value& value :
       {Value(), Value(true), Value(false), Value(std::numeric_limits<std::int64_t>::min()),
        Value(-0.5), Value(kInf), Value("h\xc3\xa9"), Value(std::string(25000, 'r')),
        Value::list({1, Value::list({"x", 2.5})}), Value::map({{"a", Value::map({{"b", 1}})}})}) {
    const auto encoded = codec.encode(value);
    ASSERT_TRUE(encoded.ok()) << value;
    const auto decoded = codec.decode(encoded->bytes, encoded->flags);
    ASSERT_TRUE(decoded.ok()) << decoded.error();
    EXPECT_EQ(*decoded, value);
  }
  // Bytes come back as a string (PHP has one string type); doubles keep 14 digits.
  EXPECT_EQ(*codec.decode(codec.encode(Value::bytes("b"))->bytes, 0), Value("b"));
  EXPECT_EQ(*codec.decode(codec.encode(Value(1.0 / 3))->bytes, 0x700), Value(0.33333333333333));
}

TEST(PhpMemcacheCodecTest, CompressionFromTheThresholdWhenItSavesAFifth) {
  const PhpMemcacheCodec codec;
  const std::string text(20000, 'a');
  EXPECT_EQ(*codec.encode(Value(text.substr(0, 19999))), (Encoded{text.substr(0, 19999), 0}));
  const auto at = codec.encode(Value(text));
  EXPECT_EQ(at->flags, 0x2U);  // at the threshold, not only above it
  EXPECT_EQ(at->bytes, zlib(text));
  // Serialized payloads too (the threshold counts the serialize() text).
  // a:1:{i:0;s:19979:"...";} is 20000 bytes.
  ASSERT_EQ(memshard::php_serialize(Value::list({text.substr(0, 19979)}))->size(), 20000U);
  EXPECT_EQ(codec.encode(Value::list({text.substr(0, 19979)}))->flags, 0x3U);
  EXPECT_EQ(codec.encode(Value::list({text.substr(0, 19978)}))->flags, 0x1U);
  // Never numbers or booleans, however long or forced.
  PhpMemcacheOptions forced;
  forced.always_compress = true;
  const PhpMemcacheCodec always(forced);
  EXPECT_EQ(always.encode(Value(std::int64_t{1111111111111111111}))->flags, 0x300U);
  EXPECT_EQ(always.encode(Value(1.0 / 3))->flags, 0x700U);
  EXPECT_EQ(always.encode(Value(true))->flags, 0x100U);
  // Forced: any length, still only when it saves.
  EXPECT_EQ(*always.encode(Value("short")), (Encoded{"short", 0}));
  EXPECT_EQ(always.encode(Value(""))->flags, 0U);
  EXPECT_EQ(always.encode(Value(std::string(100, 'a')))->flags, 0x2U);
  // Threshold 0 turns automatic compression off.
  PhpMemcacheOptions off;
  off.compress_threshold = 0;
  EXPECT_EQ(PhpMemcacheCodec(off).encode(Value(std::string(100000, 'a')))->flags, 0U);
  PhpMemcacheOptions low;
  low.compress_threshold = 100;
  EXPECT_EQ(PhpMemcacheCodec(low).encode(Value(std::string(99, 'a')))->flags, 0U);
  EXPECT_EQ(PhpMemcacheCodec(low).encode(Value(std::string(100, 'a')))->flags, 0x2U);
}

TEST(PhpMemcacheCodecTest, TheSavingsRuleAtItsBoundary) {
  // pecl memcache gives zlib a buffer of (size_t)(len * (1 - min_savings))
  // bytes: a stream that fills it exactly is kept, one byte more is not.
  const std::string fits = noisy(20, 19);  // 39 bytes: room for 31
  const std::string over = noisy(20, 18);  // 38 bytes: room for 30
  ASSERT_EQ(zlib(fits).size(), 31U);
  ASSERT_EQ(zlib(over).size(), 31U);
  PhpMemcacheOptions options;
  options.always_compress = true;
  const PhpMemcacheCodec codec(options);
  EXPECT_EQ(*codec.encode(Value(fits)), (Encoded{zlib(fits), 0x2}));
  EXPECT_EQ(*codec.encode(Value(over)), (Encoded{over, 0}));
  options.always_compress = false;
  options.compress_threshold = 30;
  EXPECT_EQ(PhpMemcacheCodec(options).encode(Value(fits))->flags, 0x2U);
  EXPECT_EQ(PhpMemcacheCodec(options).encode(Value(over))->flags, 0U);
  // min_savings moves the room: none required keeps any smaller stream...
  options.min_savings = 0.0;
  EXPECT_EQ(PhpMemcacheCodec(options).encode(Value(over))->flags, 0x2U);
  // ...and a half keeps neither.
  options.min_savings = 0.5;
  EXPECT_EQ(PhpMemcacheCodec(options).encode(Value(fits))->flags, 0U);
}

TEST(PhpMemcacheCodecTest, ReadsAndWritesWhatTheRealClientDoes) {
  // Checked once against pecl memcache 4.0.5.2 (PHP 8.2, Debian php-memcache)
  // on a private memcached: `$m = new Memcache; $m->addServer('127.0.0.1', P);
  // $m->set($k, $v[, $flags]);` then a text-protocol get of the raw item; and
  // the other way, items written raw and read with $m->get($k).
  const PhpMemcacheCodec codec;
  // set('k', [1, "a", null, 2.5]); set('k', -0.0); set('k', 1e-5); ...
  EXPECT_EQ(*codec.encode(Value::list({1, "a", nullptr, 2.5})),
            (Encoded{from_hex("613a343a7b693a303b693a313b693a313b733a313a2261223b693a323b4e3b693a"
                              "333b643a322e353b7d"),
                     0x1}));
  EXPECT_EQ(codec.encode(Value(-0.0))->bytes, "-0");
  EXPECT_EQ(codec.encode(Value(-kInf))->bytes, "-INF");
  EXPECT_EQ(codec.encode(Value(1e-5))->bytes, "1.0e-5");
  EXPECT_EQ(codec.encode(Value(123456789012345.678))->bytes, "1.2345678901235e+14");
  // set('k', [str_repeat('z', 20000)]): serialized, then compressed.
  EXPECT_EQ(
      *codec.encode(Value::list({std::string(20000, 'z')})),
      (Encoded{from_hex("789cedc1a111c0200004b05d9880563ed354a2ebe0d81dc64024f9f264f6d4f6e7ad4"
                        "7ca00000000000000000000000000000000000000e00aa5ad0d45fd42d0"),
               0x3}));
  // set('k', str_repeat('ab', 50), MEMCACHE_COMPRESSED); set('k', 'x', 0x10000);
  // set('k', 42, 0x30000).
  PhpMemcacheOptions options;
  options.always_compress = true;
  std::string ab;
  for (int i = 0; i < 50; ++i) {
    ab += "ab";
  }
  EXPECT_EQ(*PhpMemcacheCodec(options).encode(Value(ab)),
            (Encoded{from_hex("789c4b4c4aa4390400840b2617"), 0x2}));
  options.always_compress = false;
  options.user_flags = 1;
  EXPECT_EQ(*PhpMemcacheCodec(options).encode(Value("x")), (Encoded{"x", 0x10000}));
  options.user_flags = 3;
  EXPECT_EQ(*PhpMemcacheCodec(options).encode(Value(42)), (Encoded{"42", 0x30300}));
  // The savings boundary: MEMCACHE_COMPRESSED kept the 31-byte stream of the
  // 39-byte payload and stored the 38-byte one as it is.
  options = {};
  options.always_compress = true;
  EXPECT_EQ(
      *PhpMemcacheCodec(options).encode(Value(noisy(20, 19))),
      (Encoded{from_hex("789c4bae5a50f7f0d527dbe396b9bccb2ac41a5885ac96276202006317104f"), 0x2}));
  // What pecl read from raw items: 0x301 "i:5;" -> 5, 0x500 "42" -> "42",
  // 0xf00 "x" -> "x", 0x302 zlib("77") -> 77, 0x10300 "7" -> 7, 0x700 "-0" -> -0.
  EXPECT_EQ(*codec.decode("i:5;", 0x301), Value(5));
  EXPECT_EQ(*codec.decode("42", 0x500), Value("42"));
  EXPECT_EQ(*codec.decode("x", 0xf00), Value("x"));
  EXPECT_EQ(*codec.decode(from_hex("789c3337070000a7006f"), 0x302), Value(77));
  EXPECT_EQ(*codec.decode("7", 0x10300), Value(7));
}

TEST(PhpMemcacheCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const PhpMemcacheCodec codec;
  const auto integer = codec.decode("12abc", 0x300);
  EXPECT_EQ(integer.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(integer.error().message(),
            "php-memcache: an integer (0x300) whose text is not a number: \"12abc\"");
  for (const std::string_view text : {"", "-", "4.5", "1e3", "0x10", "--1"}) {
    EXPECT_EQ(codec.decode(text, 0x300).code(), CodecErrc::kCorrupt) << text;
  }
  const auto dbl = codec.decode("3.25x", 0x700);
  EXPECT_EQ(dbl.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(dbl.error().message(),
            "php-memcache: a double (0x700) whose text is not a number: \"3.25x\"");
  EXPECT_EQ(codec.decode("", 0x700).code(), CodecErrc::kCorrupt);
  const auto boolean = codec.decode("yes", 0x100);
  EXPECT_EQ(boolean.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(boolean.error().message(),
            "php-memcache: a boolean (0x100) that is neither \"1\" nor \"0\": \"yes\"");
  EXPECT_EQ(codec.decode("2", 0x100).code(), CodecErrc::kCorrupt);
  // A long payload is cut in the message.
  EXPECT_EQ(codec.decode(std::string(100, '9') + "x", 0x300).error().message(),
            "php-memcache: an integer (0x300) whose text is not a number: \"" +
                std::string(40, '9') + "...\"");
  // Compressed items: not zlib, truncated, trailing bytes, too large.
  const auto notzlib = codec.decode("not zlib", 0x2);
  EXPECT_EQ(notzlib.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(notzlib.error().message().rfind("php-memcache: zlib: ", 0), 0U)
      << notzlib.error().message();
  const std::string stream = zlib(std::string(5000, 'q') + "tail");
  for (std::size_t cut = 0; cut < stream.size(); ++cut) {
    const auto truncated = codec.decode(stream.substr(0, cut), 0x2);
    ASSERT_FALSE(truncated.ok()) << cut;
    EXPECT_EQ(truncated.code(), CodecErrc::kCorrupt) << cut;
  }
  EXPECT_EQ(codec.decode(stream + "x", 0x2).code(), CodecErrc::kCorrupt);
  PhpMemcacheOptions limited;
  limited.limits.max_size = 4999;
  const auto large = PhpMemcacheCodec(limited).decode(stream, 0x2);
  EXPECT_EQ(large.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(large.error().message().rfind("php-memcache: ", 0), 0U);
  limited.limits.max_size = 5004;
  EXPECT_EQ(*PhpMemcacheCodec(limited).decode(stream, 0x2), Value(std::string(5000, 'q') + "tail"));
  // A serialize() payload that is not one, or too deep for the limits.
  EXPECT_EQ(codec.decode("a:1:{", 0x1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("i:5", 0x301).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode(zlib("i:5"), 0x3).code(), CodecErrc::kCorrupt);
  PhpMemcacheOptions shallow;
  shallow.limits.max_depth = 2;
  EXPECT_EQ(PhpMemcacheCodec(shallow).decode("a:1:{i:0;a:1:{i:0;a:1:{i:0;i:1;}}}", 0x1).code(),
            CodecErrc::kTooDeep);
}

TEST(PhpMemcacheCodecTest, AnIntegerBeyondInt64IsTooLarge) {
  const auto decoded = PhpMemcacheCodec().decode("99999999999999999999", 0x300);
  EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
  EXPECT_NE(decoded.error().message().find("out of range"), std::string::npos);
  EXPECT_EQ(PhpMemcacheCodec().decode("-9223372036854775809", 0x300).code(), CodecErrc::kTooLarge);
}

}  // namespace
}  // namespace codecs_php_memcache_codec_test
