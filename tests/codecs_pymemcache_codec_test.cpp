// SPDX-License-Identifier: MIT
// codecs/pymemcache_codec.hpp: PymemcacheCodec beyond the value tables (which
// codecs_make_codec_test checks). Without a serde: every item reads as bytes
// whatever its flags, and every value is written as Python's str() text, which
// must be ASCII (repr inside containers: quotes, escapes, None, True, nan;
// characters that are not printable for Python escaped, the printable
// non-ASCII ones refused, and detail/python_printable.hpp's table checked
// against Python's own counts). With pickle_serde: python-memcache's flags read in its order (0,
// 0x10, 0x2, 0x4, 0x1), unknown flags and 0x8 read as the bytes (never inflated), pickle protocol
// 5, no compression; then bad items. The literal items were checked once against the real client
// (see ReadsAndWritesWhatTheRealClientDoes).

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/codecs/detail/python_printable.hpp"
#include "memshard/codecs/detail/quote.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/pymemcache_codec.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_pymemcache_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::Encoded;
using memshard::PymemcacheCodec;
using memshard::PymemcacheOptions;
using memshard::PymemcacheSerde;
using memshard::Value;
using memshard::testing::from_hex;

constexpr double kInf = std::numeric_limits<double>::infinity();

auto zlib(std::string_view data) -> std::string {
  return memshard::detail::deflate_bytes(data, memshard::detail::DeflateFormat::kZlib, -1);
}

auto with_serde(int protocol = 5) -> PymemcacheCodec {
  PymemcacheOptions options;
  options.serde = PymemcacheSerde::kPickle;
  options.pickle_protocol = protocol;
  return PymemcacheCodec(options);
}

TEST(PymemcacheCodecTest, WithoutASerdeEveryItemIsBytes) {
  const PymemcacheCodec codec;
  for (const std::uint32_t flags : {0U, 0x1U, 0x2U, 0x8U, 0x10U, 0x18U, 0x300U, 0xffffffffU}) {
    EXPECT_EQ(*codec.decode("42", flags), Value::bytes("42")) << flags;
    EXPECT_EQ(*codec.decode("\x80\x05N.", flags), Value::bytes("\x80\x05N.")) << flags;
    EXPECT_EQ(*codec.decode("\xff", flags), Value::bytes("\xff")) << flags;  // no UTF-8 check
  }
  EXPECT_EQ(*codec.decode(zlib("x"), 0x8), Value::bytes(zlib("x")));  // never inflated
}

TEST(PymemcacheCodecTest, WithoutASerdeTheTextOfEachKind) {
  const PymemcacheCodec codec;
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\0\xff", 2))),
            (Encoded{std::string("\0\xff", 2), 0}));
  EXPECT_EQ(*codec.encode(Value("hello")), (Encoded{"hello", 0}));
  EXPECT_EQ(*codec.encode(Value("a'b\"\\")), (Encoded{"a'b\"\\", 0}));  // str(s) is s
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"None", 0}));
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"True", 0}));
  EXPECT_EQ(*codec.encode(Value(false)), (Encoded{"False", 0}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0}));
  EXPECT_EQ(*codec.encode(Value(-0.0)), (Encoded{"-0.0", 0}));
  EXPECT_EQ(*codec.encode(Value(100.0)), (Encoded{"100.0", 0}));
  EXPECT_EQ(*codec.encode(Value(1e16)), (Encoded{"1e+16", 0}));
  EXPECT_EQ(*codec.encode(Value(1e-5)), (Encoded{"1e-05", 0}));
  EXPECT_EQ(*codec.encode(Value(kInf)), (Encoded{"inf", 0}));
  EXPECT_EQ(*codec.encode(Value(-kInf)), (Encoded{"-inf", 0}));
  EXPECT_EQ(*codec.encode(Value(std::nan(""))), (Encoded{"nan", 0}));
  EXPECT_EQ(*codec.encode(Value::list({})), (Encoded{"[]", 0}));
  EXPECT_EQ(*codec.encode(Value::map({})), (Encoded{"{}", 0}));
  // Inside containers, strs and bytes are repr()'d: single quotes unless the
  // text has a single quote and no double one; \\, \n, \r, \t and \xNN.
  EXPECT_EQ(*codec.encode(Value::list({"a'b", "a\"b", "a'\"b", "\\", "\x01\x7f"})),
            (Encoded{"[\"a'b\", 'a\"b', 'a\\'\"b', '\\\\', '\\x01\\x7f']", 0}));
  EXPECT_EQ(
      *codec.encode(Value::list({Value::bytes(std::string("\0\x80\xff'", 4)), Value::bytes("")})),
      (Encoded{"[b\"\\x00\\x80\\xff'\", b'']", 0}));
  EXPECT_EQ(*codec.encode(Value::map({{1, nullptr}, {Value::bytes("k"), Value::list({true})}})),
            (Encoded{"{1: None, b'k': [True]}", 0}));
}

TEST(PymemcacheCodecTest, WithoutASerdeNonAsciiTextIsRefused) {
  const PymemcacheCodec codec;
  const auto top = codec.encode(Value("h\xc3\xa9llo"));
  EXPECT_EQ(top.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(top.error().message(),
            "pymemcache: without a serde a str must be ASCII (pymemcache refuses it)");
  EXPECT_EQ(codec.encode(Value("\xff")).code(), CodecErrc::kNotEncodable);
  const auto nested = codec.encode(Value::list({"\xc3\xa9"}));
  EXPECT_EQ(nested.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(nested.error().message(),
            "pymemcache: without a serde only values whose Python text is ASCII can be stored");
  EXPECT_EQ(codec.encode(Value::map({{"\xc3\xa9", 1}})).code(), CodecErrc::kNotEncodable);
  // Bytes are ASCII in their repr, whatever they hold.
  EXPECT_TRUE(codec.encode(Value::list({Value::bytes("\xc3\xa9")})).ok());
  EXPECT_EQ(codec.encode(Value::serialized("pickle", "N.")).code(), CodecErrc::kNotEncodable);
  // Deep nesting is refused, not a stack overflow.
  Value deep = Value::list({});
  for (int i = 0; i < 300; ++i) {
    deep = Value::list({deep});
  }
  EXPECT_EQ(codec.encode(deep).code(), CodecErrc::kNotEncodable);
}

TEST(PymemcacheCodecTest, WithThePickleSerdeThePrecedenceOfTheFlags) {
  const PymemcacheCodec codec = with_serde();
  EXPECT_EQ(*codec.decode("\xff", 0), Value::bytes("\xff"));
  EXPECT_EQ(*codec.decode("h\xc3\xa9", 0x10), Value("h\xc3\xa9"));
  EXPECT_EQ(*codec.decode("-9223372036854775808", 0x2),
            Value(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(*codec.decode("-9", 0x4), Value(-9));
  EXPECT_EQ(*codec.decode("\x80\x05N.", 0x1), Value());
  EXPECT_EQ(*codec.decode("F2.5\n.", 0x1), Value(2.5));  // any protocol
  EXPECT_EQ(*codec.decode("42", 0x3), Value(42));
  EXPECT_EQ(*codec.decode("7", 0x6), Value(7));
  EXPECT_EQ(*codec.decode("42", 0x11), Value("42"));
  EXPECT_EQ(*codec.decode("42", 0x13), Value("42"));
  // Flags it does not read give the bytes back, 0x8 included: pymemcache 3.x
  // never inflates.
  EXPECT_EQ(*codec.decode("abc", 0x8), Value::bytes("abc"));
  EXPECT_EQ(*codec.decode(zlib("abc"), 0x8), Value::bytes(zlib("abc")));
  for (const std::uint32_t flags : {0x20U, 0x100U, 0x300U, 0x10000U, 0xffffffe0U}) {
    EXPECT_EQ(*codec.decode("42", flags), Value::bytes("42")) << flags;
  }
  EXPECT_EQ(*codec.decode("42", 0x10002U), Value(42));
}

TEST(PymemcacheCodecTest, WithThePickleSerdeEveryKindOnEncode) {
  const PymemcacheCodec codec = with_serde();
  EXPECT_EQ(*codec.encode(Value::bytes("\xff")), (Encoded{"\xff", 0}));
  EXPECT_EQ(*codec.encode(Value("h\xc3\xa9")), (Encoded{"h\xc3\xa9", 0x10}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0x2}));
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"\x80\x05N.", 0x1}));
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"\x80\x05\x88.", 0x1}));
  EXPECT_EQ(*codec.encode(Value(-0.0)),
            (Encoded{std::string("\x80\x05\x95\x0a\0\0\0\0\0\0\0G\x80\0\0\0\0\0\0\0.", 21), 0x1}));
  const auto invalid = codec.encode(Value("\xc3"));
  EXPECT_EQ(invalid.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(invalid.error().message(), "pymemcache: a str must be UTF-8; store bytes instead");
  EXPECT_EQ(*codec.encode(Value::serialized("pickle", "N.")), (Encoded{"N.", 0x1}));
  EXPECT_EQ(codec.encode(Value::serialized("php-serialize", "N;")).code(),
            CodecErrc::kNotEncodable);
  // Never compressed, however long.
  const std::string text(100000, 'a');
  EXPECT_EQ(*codec.encode(Value(text)), (Encoded{text, 0x10}));
  // The protocol is an option.
  EXPECT_EQ(*with_serde(0).encode(Value(1.5)), (Encoded{"F1.5\n.", 0x1}));
  EXPECT_EQ(*with_serde(2).encode(Value(false)), (Encoded{"\x80\x02\x89.", 0x1}));
  for (const Value& value : {Value(), Value(1.5), Value(true), Value::list({1, "x"}),
                             Value::map({{"k", Value::bytes("v")}})}) {
    EXPECT_EQ(*codec.decode(codec.encode(value)->bytes, 0x1), value) << value;
  }
}

TEST(PymemcacheCodecTest, ReadsAndWritesWhatTheRealClientDoes) {
  // Checked once against pymemcache 3.5.2 (Debian python3-pymemcache, Python
  // 3.11) on a private memcached: `Client(addr).set(k, v, noreply=False)` and
  // `Client(addr, serde=pymemcache.serde.pickle_serde)`, then a text-protocol
  // get of the raw item; and items written raw, read with get(k).
  const PymemcacheCodec codec;
  // Client(addr).set(k, [1.5, "it's", b'\x00\xff\'"', None, True,
  //   {'k': -0.0, 2: 'a"b'}, 'tab\there\\', nan, inf, 1e16, 1e-5, 'both\'"'])
  EXPECT_EQ(*codec.encode(Value::list({1.5, "it's", Value::bytes(std::string("\0\xff'\"", 4)),
                                       nullptr, true, Value::map({{"k", -0.0}, {2, "a\"b"}}),
                                       "tab\there\\", std::nan(""), kInf, 1e16, 1e-5, "both'\""})),
            (Encoded{"[1.5, \"it's\", b'\\x00\\xff\\'\"', None, True, {'k': -0.0, 2: 'a\"b'}, "
                     "'tab\\there\\\\', nan, inf, 1e+16, 1e-05, 'both\\'\"']",
                     0}));
  // set(k, 'a\x07\x7f') and set(k, ['a\x07\x7f\r\n']); set(k, -2**63).
  EXPECT_EQ(*codec.encode(Value("a\x07\x7f")), (Encoded{"a\x07\x7f", 0}));
  EXPECT_EQ(*codec.encode(Value::list({"a\x07\x7f\r\n"})), (Encoded{"['a\\x07\\x7f\\r\\n']", 0}));
  EXPECT_EQ(codec.encode(Value(std::numeric_limits<std::int64_t>::min()))->bytes,
            "-9223372036854775808");
  // serde: set(k, None); set(k, 2**63 - 1); set(k, 'ééé'); set(k, False).
  const PymemcacheCodec serde = with_serde();
  EXPECT_EQ(*serde.encode(Value()), (Encoded{"\x80\x05N.", 0x1}));
  EXPECT_EQ(*serde.encode(Value(std::numeric_limits<std::int64_t>::max())),
            (Encoded{"9223372036854775807", 0x2}));
  EXPECT_EQ(*serde.encode(Value("\xc3\xa9\xc3\xa9\xc3\xa9")),
            (Encoded{"\xc3\xa9\xc3\xa9\xc3\xa9", 0x10}));
  EXPECT_EQ(*serde.encode(Value(false)), (Encoded{"\x80\x05\x89.", 0x1}));
  // serde get of raw items: 0x8 "abc" -> b'abc', 0x300 "42" -> b'42',
  // 0x3 "42" -> 42, 0x11 "42" -> '42', 0x6 "7" -> 7; 0x18 zlib("abc")
  // raises UnicodeDecodeError. Without a serde every one is the bytes.
  EXPECT_EQ(*serde.decode("abc", 0x8), Value::bytes("abc"));
  EXPECT_EQ(*serde.decode("42", 0x300), Value::bytes("42"));
  EXPECT_EQ(*serde.decode("42", 0x3), Value(42));
  EXPECT_EQ(*serde.decode("42", 0x11), Value("42"));
  EXPECT_EQ(*serde.decode("7", 0x6), Value(7));
  EXPECT_EQ(serde.decode(zlib("abc"), 0x18).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(*codec.decode("42", 0x3), Value::bytes("42"));
  // Written by memshard, stored raw, read by the serde: {'a': [1, 2.5, None]}.
  EXPECT_EQ(
      *serde.encode(Value::map({{"a", Value::list({1, 2.5, nullptr})}})),
      (Encoded{from_hex("80059518000000000000007d948c0161945d94284b014740040000000000004e65732e"),
               0x1}));
}

TEST(PymemcacheCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const PymemcacheCodec codec = with_serde();
  const auto text = codec.decode("\xff", 0x10);
  EXPECT_EQ(text.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(text.error().message(), "pymemcache: a str (0x10) that is not UTF-8 (at byte 0)");
  const auto integer = codec.decode("12abc", 0x2);
  EXPECT_EQ(integer.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(integer.error().message(), "pymemcache: an int whose text is not a number: \"12abc\"");
  EXPECT_EQ(codec.decode("", 0x4).code(), CodecErrc::kCorrupt);
  // A pickle that is not one (pymemcache logs it and returns None).
  EXPECT_EQ(codec.decode("garbage", 0x1).code(), CodecErrc::kCorrupt);
  PymemcacheOptions shallow;
  shallow.serde = PymemcacheSerde::kPickle;
  shallow.limits.max_depth = 1;
  EXPECT_EQ(PymemcacheCodec(shallow).decode("(lp0\n(lp1\n(lp2\naaa.", 0x1).code(),
            CodecErrc::kTooDeep);
}

TEST(PymemcacheCodecTest, AnIntegerBeyondInt64IsTooLarge) {
  const auto decoded = with_serde().decode("99999999999999999999", 0x2);
  EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
  EXPECT_NE(decoded.error().message().find("out of range"), std::string::npos);
}

TEST(PymemcacheCodecTest, ANonPrintableCharacterInAContainerHasAnAsciiRepr) {
  // pymemcache 3.5.2 under /usr/bin/python3 (3.11.2, Unicode 14.0.0) on a private memcached:
  // Client(addr).set('k', ['\xa0'], noreply=False), then a text-protocol get of the item. repr()
  // escapes what str.isprintable() calls non-printable: up to U+00FF as \xNN, then \uNNNN, then
  // \UNNNNNNNN, in lower-case hex.
  const PymemcacheCodec codec;
  EXPECT_EQ(*codec.encode(Value::list({"\xc2\xa0"})), (Encoded{"['\\xa0']", 0}));
  // set(k, ['\x80\x9f\xa0\xad\u0378\u061c\u200b\u2028\u2029\u3000\ud7ff\ue000\uf8ff\ufeff
  //   \ufffe\uffff\U000e0001\U000e01f0\U000f0000\U0010ffff']): C1 controls, the no-break
  // and ideographic spaces (Zs), format characters (Cf), line and paragraph separators,
  // unassigned code points (Cn) and private use (Co).
  EXPECT_EQ(*codec.encode(Value::list(
                {"\xc2\x80\xc2\x9f\xc2\xa0\xc2\xad\xcd\xb8\xd8\x9c\xe2\x80\x8b\xe2\x80\xa8\xe2\x80"
                 "\xa9\xe3\x80\x80\xed\x9f\xbf\xee\x80\x80\xef\xa3\xbf\xef\xbb\xbf\xef\xbf\xbe\xef"
                 "\xbf\xbf\xf3\xa0\x80\x81\xf3\xa0\x87\xb0\xf3\xb0\x80\x80\xf4\x8f\xbf\xbf"})),
            (Encoded{"['\\x80\\x9f\\xa0\\xad\\u0378\\u061c\\u200b\\u2028\\u2029\\u3000\\ud7ff"
                     "\\ue000\\uf8ff\\ufeff\\ufffe\\uffff\\U000e0001\\U000e01f0\\U000f0000"
                     "\\U0010ffff']",
                     0}));
  // set(k, {'k\u2028': ["it's\xa0", b'\xc2\xa0', 'tab\t\x85"\'', '\U000e007f']}): the
  // quotes are chosen and escaped as for ASCII text; bytes stay \xNN.
  EXPECT_EQ(*codec.encode(Value::map(
                {{"k\xe2\x80\xa8", Value::list({"it's\xc2\xa0", Value::bytes("\xc2\xa0"),
                                                "tab\t\xc2\x85\"'", "\xf3\xa0\x81\xbf"})}})),
            (Encoded{"{'k\\u2028': [\"it's\\xa0\", b'\\xc2\\xa0', 'tab\\t\\x85\"\\'', "
                     "'\\U000e007f']}",
                     0}));
  // The printable ones stay as they are, so pymemcache refuses the text: set(k, ['\xa1']),
  // ['\u0377'], ['\u037a'], ['\U00010000'], ['\U0001fbf0'], ['\U000e01ef'] each raise
  // MemcacheIllegalInputError ('ascii' codec can't encode character).
  for (const char* printable : {"\xc2\xa1", "\xcd\xb7", "\xcd\xba", "\xf0\x90\x80\x80",
                                "\xf0\x9f\xaf\xb0", "\xf3\xa0\x87\xaf"}) {
    EXPECT_EQ(codec.encode(Value::list({printable})).code(), CodecErrc::kNotEncodable)
        << memshard::detail::quote_bytes(printable);
  }
  // A str that is not UTF-8 is no Python str.
  EXPECT_EQ(codec.encode(Value::list({"\xed\xa0\x80"})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.encode(Value::list({"a\xc2"})).code(), CodecErrc::kNotEncodable);
}

TEST(PymemcacheCodecTest, PythonPrintableIsStrIsprintable) {
  using memshard::detail::python_printable;
  // /usr/bin/python3 -c "print(sum(chr(c).isprintable() for c in range(0x110000)))" and the
  // same per plane of 0x10000 code points (Python 3.11.2).
  constexpr std::size_t kPlanes = 17;
  constexpr std::array<std::size_t, kPlanes> kPerPlane = {
      55506, 22959, 60872, 4939, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 240, 0, 0};
  std::size_t total = 0;
  for (std::size_t plane = 0; plane < kPlanes; ++plane) {
    std::size_t count = 0;
    for (char32_t code = static_cast<char32_t>(plane << 16U);
         code < static_cast<char32_t>((plane + 1) << 16U); ++code) {
      count += python_printable(code) ? 1U : 0U;
    }
    EXPECT_EQ(count, kPerPlane[plane]) << plane;
    total += count;
  }
  EXPECT_EQ(total, 144516U);
  // Each side of a few boundaries; nothing past U+10FFFF.
  static_assert(python_printable(U' ') && python_printable(U'~'));
  static_assert(!python_printable(U'\x1f') && !python_printable(U'\x7f'));
  static_assert(!python_printable(0xa0) && python_printable(0xa1) && !python_printable(0xad));
  static_assert(python_printable(0x377) && !python_printable(0x378) && python_printable(0x37a));
  static_assert(python_printable(0xe01ef) && !python_printable(0xe01f0));
  static_assert(!python_printable(0x10ffff) && !python_printable(0x110000));
}

}  // namespace
}  // namespace codecs_pymemcache_codec_test
