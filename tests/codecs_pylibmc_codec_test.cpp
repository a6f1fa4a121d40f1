// SPDX-License-Identifier: MIT
// codecs/pylibmc_codec.hpp: PylibmcCodec beyond the value tables (which
// codecs_make_codec_test checks): pylibmc reads the type bits (0x1, 0x2, 0x4,
// 0x10) as one exact value, so only 0, 0x1, 0x2, 0x4 and 0x10 are known and
// every combination raises; the bits outside them are ignored. Then every
// kind on encode (booleans as 0x2 "1"/"0", ints as 0x4), the pickle protocol,
// compression from min_compress_len when smaller (ints and booleans too), and
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
#include "memshard/codecs/pylibmc_codec.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_pylibmc_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::Encoded;
using memshard::PylibmcCodec;
using memshard::PylibmcOptions;
using memshard::Value;
using memshard::testing::from_hex;
using memshard::testing::noisy;

constexpr double kInf = std::numeric_limits<double>::infinity();

auto zlib(std::string_view data) -> std::string {
  return memshard::detail::deflate_bytes(data, memshard::detail::DeflateFormat::kZlib, -1);
}

auto compressing(std::size_t min_compress_len) -> PylibmcCodec {
  PylibmcOptions options;
  options.min_compress_len = min_compress_len;
  return PylibmcCodec(options);
}

TEST(PylibmcCodecTest, EachKnownType) {
  const PylibmcCodec codec;
  EXPECT_EQ(*codec.decode(std::string("\xff\x00", 2), 0), Value::bytes(std::string("\xff\x00", 2)));
  EXPECT_EQ(*codec.decode("h\xc3\xa9", 0x10), Value("h\xc3\xa9"));
  EXPECT_EQ(*codec.decode("1", 0x2), Value(1));  // a bool comes back as an int
  EXPECT_EQ(*codec.decode("0", 0x2), Value(0));
  EXPECT_EQ(*codec.decode("-9223372036854775808", 0x4),
            Value(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(*codec.decode("9223372036854775807", 0x2),
            Value(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(*codec.decode("\x80\x05N.", 0x1), Value());
  EXPECT_EQ(*codec.decode("(lp0\nI1\na.", 0x1), Value::list({1}));  // any protocol reads
}

TEST(PylibmcCodecTest, EveryCombinationOfTypesIsUnknown) {
  const PylibmcCodec codec;
  for (std::uint32_t types = 0; types <= 0x17U; ++types) {
    if ((types & 0x8U) != 0) {
      continue;  // the compression bit, not a type
    }
    const bool known = types == 0 || types == 0x1 || types == 0x2 || types == 0x4 || types == 0x10;
    const auto decoded = codec.decode("42", types);
    if (known) {
      EXPECT_TRUE(decoded.ok() || decoded.code() != CodecErrc::kUnknownFlags) << types;
    } else {
      EXPECT_EQ(decoded.code(), CodecErrc::kUnknownFlags) << types;
      EXPECT_EQ(decoded.error().message(),
                "pylibmc: flags " + std::to_string(types) +
                    " combine types pylibmc does not know (\"unknown memcached key flags\")");
    }
  }
  // With compression too: 0xb is 0x3 compressed.
  EXPECT_EQ(codec.decode(zlib("42"), 0xb).code(), CodecErrc::kUnknownFlags);
}

TEST(PylibmcCodecTest, BitsOutsideTheTypesAreIgnored) {
  const PylibmcCodec codec;
  for (const std::uint32_t flags : {0x20U, 0x40U, 0x80U, 0x100U, 0x300U, 0x10000U, 0xffffffe0U}) {
    EXPECT_EQ(*codec.decode("x", flags), Value::bytes("x")) << flags;
    EXPECT_EQ(*codec.decode("7", flags | 0x4U), Value(7)) << flags;
    EXPECT_EQ(*codec.decode("t", flags | 0x10U), Value("t")) << flags;
  }
}

TEST(PylibmcCodecTest, CompressionIsUndoneFirst) {
  const PylibmcCodec codec;
  EXPECT_EQ(*codec.decode(zlib("raw"), 0x8), Value::bytes("raw"));
  EXPECT_EQ(*codec.decode(zlib("12"), 0xc), Value(12));
  EXPECT_EQ(*codec.decode(zlib("1"), 0xa), Value(1));
  EXPECT_EQ(*codec.decode(zlib("\xc3\xa9"), 0x18), Value("\xc3\xa9"));
  EXPECT_EQ(*codec.decode(zlib("\x80\x05N."), 0x9), Value());
  EXPECT_EQ(*codec.decode(zlib("x"), 0x108), Value::bytes("x"));
}

TEST(PylibmcCodecTest, EveryKindOnEncode) {
  const PylibmcCodec codec;
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\0\xff", 2))),
            (Encoded{std::string("\0\xff", 2), 0}));
  EXPECT_EQ(*codec.encode(Value("h\xc3\xa9")), (Encoded{"h\xc3\xa9", 0x10}));
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"1", 0x2}));
  EXPECT_EQ(*codec.encode(Value(false)), (Encoded{"0", 0x2}));
  EXPECT_EQ(*codec.encode(Value(0)), (Encoded{"0", 0x4}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0x4}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::max())),
            (Encoded{"9223372036854775807", 0x4}));
  // Floats and None are pickled with protocol 5.
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"\x80\x05N.", 0x1}));
  EXPECT_EQ(*codec.encode(Value(-0.0)),
            (Encoded{from_hex("8005950a000000000000004780000000000000002e"), 0x1}));
  EXPECT_TRUE(codec.decode(codec.encode(Value(std::nan("")))->bytes, 0x1)->is_float());
  EXPECT_TRUE(std::isnan(codec.decode(codec.encode(Value(std::nan("")))->bytes, 0x1)->as_double()));
  const auto invalid = codec.encode(Value("\xc3"));
  EXPECT_EQ(invalid.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(invalid.error().message(), "pylibmc: a str must be UTF-8; store bytes instead");
  const std::string object = "\x80\x05\x95\x05\x00\x00\x00\x00\x00\x00\x00\x8c\x01x\x94.";
  EXPECT_EQ(*codec.encode(Value::serialized("pickle", object)), (Encoded{object, 0x1}));
  EXPECT_EQ(codec.encode(Value::serialized("storable", "\x05\x0b")).code(),
            CodecErrc::kNotEncodable);
  // The protocol is an option.
  PylibmcOptions options;
  options.pickle_protocol = 0;
  EXPECT_EQ(*PylibmcCodec(options).encode(Value(1.5)), (Encoded{"F1.5\n.", 0x1}));
  EXPECT_EQ(*PylibmcCodec(options).encode(Value(true)), (Encoded{"1", 0x2}));  // never pickled
}

TEST(PylibmcCodecTest, CompressionFromMinCompressLenWhenSmaller) {
  EXPECT_EQ(compressing(100).encode(Value::bytes(std::string(99, 'a')))->flags, 0U);
  EXPECT_EQ(*compressing(100).encode(Value::bytes(std::string(100, 'a'))),
            (Encoded{zlib(std::string(100, 'a')), 0x8}));  // at the length, not only above
  EXPECT_EQ(compressing(100).encode(Value(std::string(100, 'a')))->flags, 0x18U);
  EXPECT_EQ(compressing(1).encode(Value::list(Value::List(100, Value(1.5))))->flags, 0x9U);
  EXPECT_EQ(PylibmcCodec().encode(Value::bytes(std::string(100000, 'a')))->flags, 0U);
  // Kept only when strictly smaller.
  const std::string same = noisy(20, 11);
  const std::string smaller = noisy(20, 12);
  ASSERT_EQ(zlib(same).size(), same.size());
  ASSERT_EQ(zlib(smaller).size() + 1, smaller.size());
  EXPECT_EQ(*compressing(1).encode(Value::bytes(same)), (Encoded{same, 0}));
  EXPECT_EQ(*compressing(1).encode(Value::bytes(smaller)), (Encoded{zlib(smaller), 0x8}));
  // Unlike python-memcache, ints and booleans are compressed too.
  EXPECT_EQ(*compressing(1).encode(Value(std::int64_t{1111111111111111111})),
            (Encoded{zlib("1111111111111111111"), 0xc}));
  EXPECT_EQ(*compressing(1).encode(Value(true)), (Encoded{"1", 0x2}));  // "1" never shrinks
  for (const Value& value : {Value::bytes(std::string(5000, 'b')), Value(std::string(5000, 'c')),
                             Value::list(Value::List(300, Value("d")))}) {
    const auto encoded = compressing(10).encode(value);
    ASSERT_NE(encoded->flags & 0x8U, 0U) << value;
    EXPECT_EQ(*PylibmcCodec().decode(encoded->bytes, encoded->flags), value);
  }
}

TEST(PylibmcCodecTest, ReadsAndWritesWhatTheRealClientDoes) {
  // Checked once against pylibmc 1.6.3 (Debian python3-pylibmc, libmemcached
  // 1.1.4, Python 3.11) on a private memcached: `c = pylibmc.Client([addr]);
  // c.set(k, v[, min_compress_len=N])`, then a text-protocol get of the raw
  // item; and items written raw, read with c.get(k).
  const PylibmcCodec codec;
  // c.set(k, [None, b'\x00\xff', 'é', {'k': [1.5]}])
  EXPECT_EQ(*codec.encode(Value::list({nullptr, Value::bytes(std::string("\0\xff", 2)), "\xc3\xa9",
                                       Value::map({{"k", Value::list({1.5})}})})),
            (Encoded{from_hex("80059523000000000000005d94284e4302"
                              "00ff948c02c3a9947d948c016b945d9447"
                              "3ff80000000000006173652e"),
                     0x1}));
  // c.set(k, None); c.set(k, float('-inf')); c.set(k, 2**63 - 1)
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"\x80\x05N.", 0x1}));
  EXPECT_EQ(*codec.encode(Value(-kInf)),
            (Encoded{from_hex("8005950a0000000000000047fff00000000000002e"), 0x1}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::max())),
            (Encoded{"9223372036854775807", 0x4}));
  // set(k, b'a' * 99 or 100, min_compress_len=100): flags 0, then 8;
  // set(k, 1111111111111111111, min_compress_len=1); set(k, True, min_compress_len=1).
  EXPECT_EQ(compressing(100).encode(Value::bytes(std::string(99, 'a')))->flags, 0U);
  EXPECT_EQ(compressing(100).encode(Value::bytes(std::string(100, 'a')))->flags, 0x8U);
  EXPECT_EQ(*compressing(1).encode(Value(std::int64_t{1111111111111111111})),
            (Encoded{from_hex("789c3334c40000247103a4"), 0xc}));
  EXPECT_EQ(*compressing(1).encode(Value(true)), (Encoded{"1", 0x2}));
  EXPECT_EQ(compressing(1).encode(Value::bytes(noisy(20, 11)))->flags, 0U);
  EXPECT_EQ(
      *compressing(1).encode(Value::bytes(noisy(20, 12))),
      (Encoded{from_hex("789c4bae5a50f7f0d527dbe396b9bccb2ac41a5885ac9627220100f8d40da8"), 0x8}));
  // c.get of raw items: 0x2 "1" -> 1, 0x10004 "7" -> 7, 0x30 'é' -> 'é',
  // 0x20 / 0x100 / 0x10000 "x" -> b'x', 0xc zlib("12") -> 12; 0x3, 0x5, 0x6,
  // 0x11, 0x12, 0x14 raise "unknown memcached key flags".
  EXPECT_EQ(*codec.decode("1", 0x2), Value(1));
  EXPECT_EQ(*codec.decode("7", 0x10004), Value(7));
  EXPECT_EQ(*codec.decode("\xc3\xa9", 0x30), Value("\xc3\xa9"));
  EXPECT_EQ(*codec.decode("x", 0x100), Value::bytes("x"));
  EXPECT_EQ(*codec.decode(from_hex("789c3334020000960064"), 0xc), Value(12));
  for (const std::uint32_t flags : {0x3U, 0x5U, 0x6U, 0x11U, 0x12U, 0x14U}) {
    EXPECT_EQ(codec.decode("42", flags).code(), CodecErrc::kUnknownFlags) << flags;
  }
  // Written by memshard, stored raw, read with c.get(k): [True] * 50.
  EXPECT_EQ(*compressing(10).encode(Value::list(Value::List(50, Value(true)))),
            (Encoded{from_hex("789c6b609d6ace0001b153343a4806a97a006c681d8e"), 0x9}));
}

TEST(PylibmcCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const PylibmcCodec codec;
  const auto text = codec.decode("ok\xff", 0x10);
  EXPECT_EQ(text.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(text.error().message(), "pylibmc: a str (0x10) that is not UTF-8 (at byte 2)");
  const auto integer = codec.decode("", 0x4);  // pylibmc: ValueError
  EXPECT_EQ(integer.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(integer.error().message(), "pylibmc: an int whose text is not a number: \"\"");
  EXPECT_EQ(codec.decode("true", 0x2).error().message(),
            "pylibmc: an int whose text is not a number: \"true\"");
  const auto notzlib = codec.decode("notzlib", 0x8);
  EXPECT_EQ(notzlib.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(notzlib.error().message().rfind("pylibmc: zlib: ", 0), 0U) << notzlib.error().message();
  const std::string stream = zlib(std::string(3000, 'p') + "end");
  for (std::size_t cut = 0; cut < stream.size(); ++cut) {
    EXPECT_EQ(codec.decode(stream.substr(0, cut), 0x8).code(), CodecErrc::kCorrupt) << cut;
  }
  EXPECT_EQ(codec.decode(stream + "x", 0x8).code(), CodecErrc::kCorrupt);
  PylibmcOptions limited;
  limited.limits.max_size = 3002;
  const auto large = PylibmcCodec(limited).decode(stream, 0x8);
  EXPECT_EQ(large.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(large.error().message().rfind("pylibmc: ", 0), 0U);
  EXPECT_EQ(codec.decode("garbage", 0x1).code(), CodecErrc::kCorrupt);  // pylibmc: UnpicklingError
  EXPECT_EQ(codec.decode("\x80\x06N.", 0x1).code(), CodecErrc::kUnsupported);  // protocol 6
}

TEST(PylibmcCodecTest, AnIntegerBeyondInt64IsTooLarge) {
  const auto decoded = PylibmcCodec().decode("-18446744073709551616", 0x4);
  EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
  EXPECT_NE(decoded.error().message().find("out of range"), std::string::npos);
}

}  // namespace
}  // namespace codecs_pylibmc_codec_test
