// SPDX-License-Identifier: MIT
// codecs/python_memcache_codec.hpp: PythonMemcacheCodec beyond the value
// tables (which codecs_make_codec_test checks): the order in which
// python-memcache reads its flags (0x8 removed first, then 0, 0x10, 0x2,
// 0x4, 0x1; anything else raises), every kind on encode, the pickle protocol,
// compression above min_compress_len only when smaller (never for ints), and
// bad items. The literal items were checked once against the real client (see
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
#include "memshard/codecs/python_memcache_codec.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_python_memcache_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::Encoded;
using memshard::PythonMemcacheCodec;
using memshard::PythonMemcacheOptions;
using memshard::Value;
using memshard::testing::from_hex;
using memshard::testing::noisy;

constexpr double kInf = std::numeric_limits<double>::infinity();

auto zlib(std::string_view data) -> std::string {
  return memshard::detail::deflate_bytes(data, memshard::detail::DeflateFormat::kZlib, -1);
}

auto compressing(std::size_t min_compress_len) -> PythonMemcacheCodec {
  PythonMemcacheOptions options;
  options.min_compress_len = min_compress_len;
  return PythonMemcacheCodec(options);
}

TEST(PythonMemcacheCodecTest, EachFlagOnItsOwn) {
  const PythonMemcacheCodec codec;
  EXPECT_EQ(*codec.decode(std::string("\xff\x00", 2), 0), Value::bytes(std::string("\xff\x00", 2)));
  EXPECT_EQ(*codec.decode("", 0), Value::bytes(""));
  EXPECT_EQ(*codec.decode("h\xc3\xa9llo", 0x10), Value("h\xc3\xa9llo"));
  EXPECT_EQ(*codec.decode("", 0x10), Value(""));
  EXPECT_EQ(*codec.decode("-9223372036854775808", 0x2),
            Value(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(*codec.decode("9223372036854775807", 0x4),
            Value(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(*codec.decode("007", 0x2), Value(7));  // int() reads leading zeros
  EXPECT_EQ(*codec.decode("F2.5\n.", 0x1), Value(2.5));
  EXPECT_EQ(*codec.decode("N.", 0x1), Value());
}

TEST(PythonMemcacheCodecTest, ThePrecedenceOfTheFlags) {
  // python-memcache tests flags == 0, then & 0x10, & 0x2, & 0x4, & 0x1.
  const PythonMemcacheCodec codec;
  EXPECT_EQ(*codec.decode("42", 0x3), Value(42));  // int before pickle
  EXPECT_EQ(*codec.decode("42", 0x5), Value(42));  // long before pickle
  EXPECT_EQ(*codec.decode("42", 0x6), Value(42));
  EXPECT_EQ(*codec.decode("42", 0x11), Value("42"));  // text before everything
  EXPECT_EQ(*codec.decode("42", 0x12), Value("42"));
  EXPECT_EQ(*codec.decode("x", 0x14), Value("x"));
  EXPECT_EQ(*codec.decode("x", 0x17), Value("x"));
  // Bits it does not know do not matter once a known one is set.
  EXPECT_EQ(*codec.decode("F2.5\n.", 0x301), Value(2.5));
  EXPECT_EQ(*codec.decode("7", 0x10002), Value(7));
  EXPECT_EQ(*codec.decode("t", 0xffff0010U), Value("t"));
}

TEST(PythonMemcacheCodecTest, CompressionIsUndoneFirst) {
  const PythonMemcacheCodec codec;
  EXPECT_EQ(*codec.decode(zlib("raw"), 0x8), Value::bytes("raw"));  // 0x8 alone: bytes
  EXPECT_EQ(*codec.decode(zlib("\xc3\xa9"), 0x18), Value("\xc3\xa9"));
  EXPECT_EQ(*codec.decode(zlib("-5"), 0xa), Value(-5));
  EXPECT_EQ(*codec.decode(zlib("-5"), 0xc), Value(-5));
  EXPECT_EQ(*codec.decode(zlib("(lp0\nI1\na."), 0x9), Value::list({1}));
  EXPECT_EQ(*codec.decode(zlib(""), 0x8), Value::bytes(""));
  // The flags left after 0x8 decide: 0x308 inflates, then is unknown.
  const auto unknown = codec.decode(zlib("x"), 0x308);
  EXPECT_EQ(unknown.code(), CodecErrc::kUnknownFlags);
  EXPECT_EQ(unknown.error().message(),
            "python-memcache: flags 768 are none it writes (python-memcache raises ValueError)");
}

TEST(PythonMemcacheCodecTest, AnyOtherFlagsAreUnknown) {
  const PythonMemcacheCodec codec;
  for (const std::uint32_t flags : {0x20U, 0x40U, 0x80U, 0x100U, 0x300U, 0x700U, 0x800U, 0x10000U,
                                    0x80000000U, 0xffff0000U, 0xffffffe0U}) {
    const auto decoded = codec.decode("42", flags);
    ASSERT_FALSE(decoded.ok()) << flags;
    EXPECT_EQ(decoded.code(), CodecErrc::kUnknownFlags) << flags;
    EXPECT_EQ(decoded.error().message(),
              "python-memcache: flags " + std::to_string(flags) +
                  " are none it writes (python-memcache raises ValueError)");
  }
}

TEST(PythonMemcacheCodecTest, EveryKindOnEncode) {
  const PythonMemcacheCodec codec;
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\0\xff", 2))),
            (Encoded{std::string("\0\xff", 2), 0}));
  EXPECT_EQ(*codec.encode(Value("h\xc3\xa9llo")), (Encoded{"h\xc3\xa9llo", 0x10}));
  EXPECT_EQ(*codec.encode(Value("")), (Encoded{"", 0x10}));
  EXPECT_EQ(*codec.encode(Value(0)), (Encoded{"0", 0x2}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0x2}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::max())),
            (Encoded{"9223372036854775807", 0x2}));
  // Floats, booleans and None are pickled, protocol 0.
  EXPECT_EQ(*codec.encode(Value(-0.0)), (Encoded{"F-0.0\n.", 0x1}));
  EXPECT_EQ(*codec.encode(Value(std::nan(""))), (Encoded{"Fnan\n.", 0x1}));
  EXPECT_EQ(*codec.encode(Value(-kInf)), (Encoded{"F-inf\n.", 0x1}));
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"I01\n.", 0x1}));
  EXPECT_EQ(*codec.encode(Value(false)), (Encoded{"I00\n.", 0x1}));
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"N.", 0x1}));
  // A str must be UTF-8 (Python's str is text).
  const auto invalid = codec.encode(Value("\xff\xfe"));
  EXPECT_EQ(invalid.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(invalid.error().message(), "python-memcache: a str must be UTF-8; store bytes instead");
  // A pickle is written back as it is, whatever its protocol; no other format.
  const std::string object = "\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00\x8c\x01x\x94.";
  EXPECT_EQ(*codec.encode(Value::serialized("pickle", object)), (Encoded{object, 0x1}));
  EXPECT_EQ(codec.encode(Value::serialized("ruby-marshal", "\x04\x08T")).code(),
            CodecErrc::kNotEncodable);
}

TEST(PythonMemcacheCodecTest, ThePickleProtocolOption) {
  PythonMemcacheOptions options;
  options.pickle_protocol = 2;
  EXPECT_EQ(*PythonMemcacheCodec(options).encode(Value(3.25)),
            (Encoded{std::string("\x80\x02G@\n\0\0\0\0\0\0.", 12), 0x1}));
  options.pickle_protocol = 5;
  EXPECT_EQ(*PythonMemcacheCodec(options).encode(Value()), (Encoded{"\x80\x05N.", 0x1}));
  options.pickle_protocol = -1;  // pickle's "highest"
  EXPECT_EQ(*PythonMemcacheCodec(options).encode(Value()), (Encoded{"\x80\x05N.", 0x1}));
  // Strings, bytes and ints never go through pickle.
  EXPECT_EQ(*PythonMemcacheCodec(options).encode(Value(1)), (Encoded{"1", 0x2}));
  options.pickle_protocol = 6;
  EXPECT_EQ(PythonMemcacheCodec(options).encode(Value(1.5)).code(), CodecErrc::kNotEncodable);
  // Every protocol reads back.
  for (int protocol = 0; protocol <= 5; ++protocol) {
    options.pickle_protocol = protocol;
    const PythonMemcacheCodec codec(options);
    const Value value = Value::map({{"k", Value::list({1.5, nullptr, true, Value::bytes("b")})}});
    const auto encoded = codec.encode(value);
    ASSERT_TRUE(encoded.ok()) << protocol << ": " << encoded.error();
    EXPECT_EQ(encoded->flags, 0x1U);
    EXPECT_EQ(*codec.decode(encoded->bytes, encoded->flags), value) << protocol;
  }
}

TEST(PythonMemcacheCodecTest, CompressionAboveMinCompressLenWhenSmaller) {
  EXPECT_EQ(compressing(100).encode(Value::bytes(std::string(100, 'a')))->flags, 0U);
  EXPECT_EQ(*compressing(100).encode(Value::bytes(std::string(101, 'a'))),
            (Encoded{zlib(std::string(101, 'a')), 0x8}));
  EXPECT_EQ(compressing(100).encode(Value(std::string(101, 'a')))->flags, 0x18U);
  EXPECT_EQ(compressing(1).encode(Value(1.5))->flags, 0x1U);  // 7 bytes do not shrink
  EXPECT_EQ(compressing(1).encode(Value::list(Value::List(100, Value(1.5))))->flags, 0x9U);
  // Off by default, whatever the length.
  EXPECT_EQ(PythonMemcacheCodec().encode(Value::bytes(std::string(100000, 'a')))->flags, 0U);
  // Kept only when strictly smaller: a 31-byte payload whose stream is 31
  // bytes stays as it is; a 32-byte one with the same stream is compressed.
  const std::string same = noisy(20, 11);
  const std::string smaller = noisy(20, 12);
  ASSERT_EQ(zlib(same).size(), same.size());
  ASSERT_EQ(zlib(smaller).size() + 1, smaller.size());
  EXPECT_EQ(*compressing(1).encode(Value::bytes(same)), (Encoded{same, 0}));
  EXPECT_EQ(*compressing(1).encode(Value::bytes(smaller)), (Encoded{zlib(smaller), 0x8}));
  // Never an int, even one whose text would shrink.
  const Value ones(std::int64_t{1111111111111111111});
  ASSERT_LT(zlib("1111111111111111111").size(), 19U);
  EXPECT_EQ(*compressing(1).encode(ones), (Encoded{"1111111111111111111", 0x2}));
  // What it compresses reads back.
  for (const Value& value : {Value::bytes(std::string(5000, 'b')), Value(std::string(5000, 'c')),
                             Value::list(Value::List(300, Value("d")))}) {
    const auto encoded = compressing(10).encode(value);
    ASSERT_NE(encoded->flags & 0x8U, 0U) << value;
    EXPECT_EQ(*PythonMemcacheCodec().decode(encoded->bytes, encoded->flags), value);
  }
}

TEST(PythonMemcacheCodecTest, ReadsAndWritesWhatTheRealClientDoes) {
  // Checked once against python-memcache 1.59 (Debian python3-memcache,
  // Python 3.11) on a private memcached: `c = memcache.Client([addr]);
  // c.set(k, v[, min_compress_len=N])`, then a text-protocol get of the raw
  // item; and items written raw, read with c.get(k).
  const PythonMemcacheCodec codec;
  // c.set(k, [None, True, b'\x00\xff', 'é', {'k': [1.5]}])
  EXPECT_EQ(*codec.encode(Value::list({nullptr, true, Value::bytes(std::string("\0\xff", 2)),
                                       "\xc3\xa9", Value::map({{"k", Value::list({1.5})}})})),
            (Encoded{std::string("(lp0\nNaI01\nac_codecs\nencode\np1\n(V\\u0000\xff\np2\nVlatin1\n"
                                 "p3\ntp4\nRp5\naV\xe9\np6\na(dp7\nVk\np8\n(lp9\nF1.5\nasa."),
                     0x1}));
  // c.set(k, {'a': -7, 'b': b''})
  EXPECT_EQ(*codec.encode(Value::map({{"a", -7}, {"b", Value::bytes("")}})),
            (Encoded{"(dp0\nVa\np1\nI-7\nsVb\np2\nc__builtin__\nbytes\np3\n(tRp4\ns.", 0x1}));
  // c.set(k, -2**63); c.set(k, -0.0); c.set(k, float('nan'))
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0x2}));
  EXPECT_EQ(*codec.encode(Value(-0.0)), (Encoded{"F-0.0\n.", 0x1}));
  // memcache.Client([addr], pickleProtocol=2).set(k, 3.25)
  PythonMemcacheOptions options;
  options.pickle_protocol = 2;
  EXPECT_EQ(PythonMemcacheCodec(options).encode(Value(3.25))->bytes,
            std::string("\x80\x02G@\n\0\0\0\0\0\0.", 12));
  // set(k, b'a' * n, min_compress_len=100): 100 bytes flags 0, 101 flags 8;
  // set(k, 1111111111111111111, min_compress_len=1): flags 2, not compressed;
  // the 31-byte payload stayed as it is, the 32-byte one became this stream.
  EXPECT_EQ(compressing(100).encode(Value::bytes(std::string(100, 'a')))->flags, 0U);
  EXPECT_EQ(compressing(100).encode(Value::bytes(std::string(101, 'a')))->flags, 0x8U);
  EXPECT_EQ(compressing(1).encode(Value(std::int64_t{1111111111111111111}))->flags, 0x2U);
  EXPECT_EQ(compressing(1).encode(Value::bytes(noisy(20, 11)))->flags, 0U);
  EXPECT_EQ(
      *compressing(1).encode(Value::bytes(noisy(20, 12))),
      (Encoded{from_hex("789c4bae5a50f7f0d527dbe396b9bccb2ac41a5885ac9627220100f8d40da8"), 0x8}));
  // c.get of raw items: 0x3 "42" -> 42, 0x11 "42" -> '42', 0x14 "x" -> 'x',
  // 0x301 "F2.5\n." -> 2.5, 0x10002 "7" -> 7, 0x18 zlib('é') -> 'é';
  // 0x300, 0x20 and 0x10000 raise ValueError('Unknown flags on get: ...').
  EXPECT_EQ(*codec.decode("42", 0x3), Value(42));
  EXPECT_EQ(*codec.decode("42", 0x11), Value("42"));
  EXPECT_EQ(*codec.decode("x", 0x14), Value("x"));
  EXPECT_EQ(*codec.decode("F2.5\n.", 0x301), Value(2.5));
  EXPECT_EQ(*codec.decode("7", 0x10002), Value(7));
  EXPECT_EQ(*codec.decode(from_hex("789c3bbc12000231016d"), 0x18), Value("\xc3\xa9"));
  for (const std::uint32_t flags : {0x300U, 0x20U, 0x10000U}) {
    EXPECT_EQ(codec.decode("42", flags).code(), CodecErrc::kUnknownFlags) << flags;
  }
  // Written by memshard, stored raw, read with c.get(k):
  // {'k': [None, 1.5, b'\xff'], 't': 'é'}.
  EXPECT_EQ(
      *codec.encode(Value::map(
          {{"k", Value::list({nullptr, 1.5, Value::bytes("\xff")})}, {"t", "\xc3\xa9"}})),
      (Encoded{from_hex("286470300a566b0a70310a286c70320a4e6146312e350a61635f636f646563730a656e"
                        "636f64650a70330a2856ff0a70340a566c6174696e310a70350a7470360a5270370a61"
                        "7356740a70380a56e90a70390a732e"),
               0x1}));
}

TEST(PythonMemcacheCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const PythonMemcacheCodec codec;
  const auto text = codec.decode("ab\xc3", 0x10);
  EXPECT_EQ(text.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(text.error().message(), "python-memcache: a str (0x10) that is not UTF-8 (at byte 2)");
  EXPECT_EQ(codec.decode("\xff", 0x10).error().message(),
            "python-memcache: a str (0x10) that is not UTF-8 (at byte 0)");
  EXPECT_EQ(codec.decode("\xed\xa0\x80", 0x10).code(), CodecErrc::kCorrupt);  // surrogate
  const auto integer = codec.decode("12abc", 0x2);
  EXPECT_EQ(integer.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(integer.error().message(),
            "python-memcache: an int (0x2) whose text is not a number: \"12abc\"");
  EXPECT_EQ(codec.decode("", 0x2).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("4.5", 0x4).code(), CodecErrc::kCorrupt);
  // Compressed items: not zlib, truncated, trailing bytes, gzip, too large.
  const auto notzlib = codec.decode("notzlib", 0x8);
  EXPECT_EQ(notzlib.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(notzlib.error().message().rfind("python-memcache: zlib: ", 0), 0U)
      << notzlib.error().message();
  const std::string stream = zlib(std::string(3000, 'p') + "end");
  for (std::size_t cut = 0; cut < stream.size(); ++cut) {
    EXPECT_EQ(codec.decode(stream.substr(0, cut), 0x18).code(), CodecErrc::kCorrupt) << cut;
  }
  EXPECT_EQ(codec.decode(stream + std::string(1, '\0'), 0x18).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(
      codec
          .decode(memshard::detail::deflate_bytes("x", memshard::detail::DeflateFormat::kGzip, -1),
                  0x8)
          .code(),
      CodecErrc::kCorrupt);
  PythonMemcacheOptions limited;
  limited.limits.max_size = 3002;
  const auto large = PythonMemcacheCodec(limited).decode(stream, 0x18);
  EXPECT_EQ(large.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(large.error().message().rfind("python-memcache: ", 0), 0U);
  // A pickle that is not one (python-memcache logs it and returns None).
  EXPECT_EQ(codec.decode("garbage", 0x1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("I1\n", 0x1).code(), CodecErrc::kCorrupt);  // no STOP
  PythonMemcacheOptions shallow;
  shallow.limits.max_depth = 2;
  EXPECT_EQ(PythonMemcacheCodec(shallow).decode("(lp0\n(lp1\n(lp2\naaa.", 0x1).code(),
            CodecErrc::kTooDeep);
}

TEST(PythonMemcacheCodecTest, AnIntegerBeyondInt64IsTooLarge) {
  const auto decoded = PythonMemcacheCodec().decode("18446744073709551616", 0x2);
  EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
  EXPECT_NE(decoded.error().message().find("out of range"), std::string::npos);
  EXPECT_EQ(PythonMemcacheCodec().decode("-9223372036854775809", 0x4).code(), CodecErrc::kTooLarge);
}

}  // namespace
}  // namespace codecs_python_memcache_codec_test
