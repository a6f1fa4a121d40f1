// SPDX-License-Identifier: MIT
// codecs/cache_memcached_codec.hpp: CacheMemcachedCodec beyond the value
// tables (which codecs_make_codec_test checks): Cache::Memcached reads only
// bits 0x1 (Storable) and 0x2 (gzip); every kind on encode (Perl's text of
// numbers and booleans, undef refused, references through Storable); gzip from
// compress_threshold when it saves more than compress_savings (strictly); bad
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
#include "memshard/codecs/cache_memcached_codec.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_cache_memcached_codec_test {
namespace {

using memshard::CacheMemcachedCodec;
using memshard::CacheMemcachedOptions;
using memshard::CodecErrc;
using memshard::Encoded;
using memshard::Value;
using memshard::detail::DeflateFormat;
using memshard::testing::from_hex;
using memshard::testing::noisy;

constexpr double kInf = std::numeric_limits<double>::infinity();

// gzip: what Compress::Zlib::memGzip writes (level 9, mtime 0, OS 255).
auto gzip(std::string_view data) -> std::string {
  return memshard::detail::deflate_bytes(data, DeflateFormat::kGzip, 9);
}

auto compressing(std::size_t threshold) -> CacheMemcachedCodec {
  CacheMemcachedOptions options;
  options.compress_threshold = threshold;
  return CacheMemcachedCodec(options);
}

// Storable::nfreeze([1]).
const std::string kFrozenOne("\x05\x0b\x02\x00\x00\x00\x01\x08\x81", 9);

TEST(CacheMemcachedCodecTest, OnlyBits1And2AreRead) {
  const CacheMemcachedCodec codec;
  EXPECT_EQ(*codec.decode("42", 0), Value("42"));              // Perl has no types to read back
  EXPECT_EQ(*codec.decode("\xff\xfe", 0), Value("\xff\xfe"));  // a Perl string is any bytes
  EXPECT_EQ(*codec.decode("", 0), Value(""));
  EXPECT_EQ(*codec.decode(kFrozenOne, 0x1), Value::list({1}));
  EXPECT_EQ(*codec.decode(gzip("caf\xc3\xa9"), 0x2), Value("caf\xc3\xa9"));
  EXPECT_EQ(*codec.decode(gzip(kFrozenOne), 0x3), Value::list({1}));
  for (const std::uint32_t flags : {0x4U, 0x8U, 0x10U, 0x100U, 0x10000U, 0xfffffffcU}) {
    EXPECT_EQ(*codec.decode("\xff\xfe", flags), Value("\xff\xfe")) << flags;
    EXPECT_EQ(*codec.decode(kFrozenOne, flags | 0x1U), Value::list({1})) << flags;
    EXPECT_EQ(*codec.decode(gzip("x"), flags | 0x2U), Value("x")) << flags;
  }
  // A gzip stream with another header (Ruby's time and OS) is still gzip.
  std::string stamped = gzip("x");
  stamped.replace(4, 4, "\x5e\x1a\x6f\x65");
  EXPECT_EQ(*codec.decode(stamped, 0x2), Value("x"));
}

TEST(CacheMemcachedCodecTest, ScalarsAreTheirPerlText) {
  const CacheMemcachedCodec codec;
  EXPECT_EQ(*codec.encode(Value("h\xc3\xa9llo")), (Encoded{"h\xc3\xa9llo", 0}));
  EXPECT_EQ(*codec.encode(Value("\xff\xfe")), (Encoded{"\xff\xfe", 0}));  // bytes as they are
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\0\x01", 2))),
            (Encoded{std::string("\0\x01", 2), 0}));
  EXPECT_EQ(*codec.encode(Value("")), (Encoded{"", 0}));
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"1", 0}));
  EXPECT_EQ(*codec.encode(Value(false)), (Encoded{"", 0}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::max())),
            (Encoded{"9223372036854775807", 0}));
  // Doubles as "%.15g", both zeros as 0, Inf/-Inf/NaN.
  EXPECT_EQ(*codec.encode(Value(1.0 / 3)), (Encoded{"0.333333333333333", 0}));
  EXPECT_EQ(*codec.encode(Value(0.1 + 0.2)), (Encoded{"0.3", 0}));
  EXPECT_EQ(*codec.encode(Value(100.0)), (Encoded{"100", 0}));
  EXPECT_EQ(*codec.encode(Value(1e15)), (Encoded{"1e+15", 0}));
  EXPECT_EQ(*codec.encode(Value(1e-5)), (Encoded{"1e-05", 0}));
  EXPECT_EQ(*codec.encode(Value(-0.0)), (Encoded{"0", 0}));
  EXPECT_EQ(*codec.encode(Value(kInf)), (Encoded{"Inf", 0}));
  EXPECT_EQ(*codec.encode(Value(-kInf)), (Encoded{"-Inf", 0}));
  EXPECT_EQ(*codec.encode(Value(std::nan(""))), (Encoded{"NaN", 0}));
  // undef: Cache::Memcached warns and sends no valid command.
  const auto undef = codec.encode(Value());
  EXPECT_EQ(undef.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(undef.error().message(), "cache-memcached: undef cannot be stored");
}

TEST(CacheMemcachedCodecTest, ReferencesThroughStorable) {
  const CacheMemcachedCodec codec;
  EXPECT_EQ(*codec.encode(Value::list({1})), (Encoded{kFrozenOne, 0x1}));
  const Value map = Value::map({{"a", 1}, {"b", Value::list({2, 3})}});
  const auto encoded = codec.encode(map);
  ASSERT_TRUE(encoded.ok()) << encoded.error();
  EXPECT_EQ(encoded->flags, 0x1U);
  EXPECT_EQ(*codec.decode(encoded->bytes, encoded->flags), map);
  // A Storable image is written back as it is; another format cannot be.
  EXPECT_EQ(*codec.encode(Value::serialized("storable", kFrozenOne)), (Encoded{kFrozenOne, 0x1}));
  EXPECT_EQ(codec.encode(Value::serialized("pickle", "N.")).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.encode(Value::list({Value::serialized("storable", kFrozenOne)})).code(),
            CodecErrc::kNotEncodable);
}

TEST(CacheMemcachedCodecTest, GzipFromTheThresholdWhenItSavesMoreThanAFifth) {
  EXPECT_EQ(*compressing(100).encode(Value(std::string(99, 'a'))),
            (Encoded{std::string(99, 'a'), 0}));
  EXPECT_EQ(*compressing(100).encode(Value(std::string(100, 'a'))),
            (Encoded{gzip(std::string(100, 'a')), 0x2}));  // at the threshold
  EXPECT_EQ(compressing(100).encode(Value::list(Value::List(100, Value("x"))))->flags, 0x3U);
  // Off by default.
  EXPECT_EQ(CacheMemcachedCodec().encode(Value(std::string(100000, 'a')))->flags, 0U);
  // Strictly less than 0.8 of the payload: a 55-byte payload whose gzip is 44
  // bytes, exactly 0.8, is stored as it is.
  const std::string edge = noisy(21, 34);
  ASSERT_EQ(gzip(edge).size() * 5, edge.size() * 4);
  EXPECT_EQ(*compressing(10).encode(Value(edge)), (Encoded{edge, 0}));
  EXPECT_EQ(*compressing(10).encode(Value(edge + "a")), (Encoded{gzip(edge + "a"), 0x2}));
  // compress_savings moves the bar.
  CacheMemcachedOptions options;
  options.compress_threshold = 10;
  options.compress_savings = 0.1;
  EXPECT_EQ(CacheMemcachedCodec(options).encode(Value(edge))->flags, 0x2U);
  options.compress_savings = 0.9;
  EXPECT_EQ(CacheMemcachedCodec(options).encode(Value(std::string(100, 'a')))->flags, 0U);
  // memGzip's level 9, which differs from the default level on longer text.
  std::string lines;
  for (int i = 1; lines.size() < 20000; ++i) {
    lines +=
        "line " + std::to_string(10000 + i) + ": the quick brown fox jumps over the lazy dog\n";
  }
  ASSERT_NE(gzip(lines), memshard::detail::deflate_bytes(lines, DeflateFormat::kGzip, -1));
  EXPECT_EQ(*compressing(1000).encode(Value(lines)), (Encoded{gzip(lines), 0x2}));
  // Numbers are scalars like any other: their text is compressed when it pays.
  EXPECT_EQ(compressing(1).encode(Value(7))->flags, 0U);
  for (const Value& value : {Value(std::string(5000, 'c')), Value::list(Value::List(300, "d"))}) {
    const auto encoded = compressing(10).encode(value);
    ASSERT_NE(encoded->flags & 0x2U, 0U) << value;
    EXPECT_EQ(*CacheMemcachedCodec().decode(encoded->bytes, encoded->flags), value);
  }
}

TEST(CacheMemcachedCodecTest, ReadsAndWritesWhatTheRealClientDoes) {
  // Checked once against Cache::Memcached 1.30 (Debian
  // libcache-memcached-perl, perl 5.36) on a private memcached:
  // `Cache::Memcached->new({servers => [addr][, compress_threshold => N]})
  // ->set($k, $v)`, then a text-protocol get of the raw item; and items
  // written raw, read with ->get($k).
  const CacheMemcachedCodec codec;
  // set($k, [1, "a", undef, 2.5, -7, 1e15])
  EXPECT_EQ(
      *codec.encode(Value::list({1, "a", nullptr, 2.5, -7, 1e15})),
      (Encoded{from_hex("050b020000000608810a0161050a03322e3508790a1031303030303030303030303030"
                        "303030"),
               0x1}));
  // set($k, -0.0); set($k, 9**9**9); set($k, 1e15); set($k, 0.1 + 0.2)
  EXPECT_EQ(codec.encode(Value(-0.0))->bytes, "0");
  EXPECT_EQ(codec.encode(Value(kInf))->bytes, "Inf");
  EXPECT_EQ(codec.encode(Value(1e15))->bytes, "1e+15");
  EXPECT_EQ(codec.encode(Value(0.1 + 0.2))->bytes, "0.3");
  // compress_threshold => 100: 'a' x 99 stored as it is, 'a' x 100 gzipped;
  // compress_threshold => 10: the 55-byte payload with a 44-byte gzip kept.
  EXPECT_EQ(compressing(100).encode(Value(std::string(99, 'a')))->flags, 0U);
  EXPECT_EQ(*compressing(100).encode(Value(std::string(100, 'a'))),
            (Encoded{from_hex("1f8b08000000000000ff4b4ca43d0000647a70af64000000"), 0x2}));
  EXPECT_EQ(compressing(10).encode(Value(noisy(21, 34)))->flags, 0U);
  // get of raw items: 0x4 "\xff\xfe" and 0x10000 "x" are those bytes;
  // 0x5 nfreeze([1]) is [1]; 0x6 memGzip("caf\xc3\xa9") is those bytes.
  EXPECT_EQ(*codec.decode("\xff\xfe", 0x4), Value("\xff\xfe"));
  EXPECT_EQ(*codec.decode("x", 0x10000), Value("x"));
  EXPECT_EQ(*codec.decode(kFrozenOne, 0x5), Value::list({1}));
  EXPECT_EQ(*codec.decode(from_hex("1f8b08000000000000ff4b4e4c3bbc1200b542ad9805000000"), 0x6),
            Value("caf\xc3\xa9"));
  // Written by memshard, stored raw, read with ->get($k): {a => [1, 'x', '2.5']}.
  EXPECT_EQ(*codec.encode(Value::map({{"a", Value::list({1, "x", 2.5})}})),
            (Encoded{from_hex("050b030000000104020000000308810a01780a03322e350000000161"), 0x1}));
}

TEST(CacheMemcachedCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const CacheMemcachedCodec codec;
  // Not gzip (Cache::Memcached's get gives undef): plain bytes, and zlib.
  const auto notgzip = codec.decode("notgzip", 0x2);
  EXPECT_EQ(notgzip.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(notgzip.error().message().rfind("cache-memcached: gzip: ", 0), 0U)
      << notgzip.error().message();
  EXPECT_EQ(
      codec.decode(memshard::detail::deflate_bytes("zlib", DeflateFormat::kZlib, -1), 0x2).code(),
      CodecErrc::kCorrupt);
  const std::string stream = gzip(std::string(3000, 'p') + "end");
  for (std::size_t cut = 0; cut < stream.size(); ++cut) {
    EXPECT_EQ(codec.decode(stream.substr(0, cut), 0x2).code(), CodecErrc::kCorrupt) << cut;
  }
  EXPECT_EQ(codec.decode(stream + stream, 0x2).code(), CodecErrc::kCorrupt);  // two members
  std::string crc = stream;
  crc[crc.size() - 8] = static_cast<char>(crc[crc.size() - 8] ^ 1);
  EXPECT_EQ(codec.decode(crc, 0x2).code(), CodecErrc::kCorrupt);
  CacheMemcachedOptions limited;
  limited.limits.max_size = 3002;
  const auto large = CacheMemcachedCodec(limited).decode(stream, 0x2);
  EXPECT_EQ(large.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(large.error().message().rfind("cache-memcached: ", 0), 0U);
  // Storable that is not.
  EXPECT_EQ(codec.decode("garbage", 0x1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode(kFrozenOne.substr(0, 7), 0x1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode(kFrozenOne + "x", 0x1).code(), CodecErrc::kCorrupt);
  CacheMemcachedOptions shallow;
  shallow.limits.max_depth = 1;
  const auto nested = codec.encode(Value::list({Value::list({Value::list({1})})}));
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(CacheMemcachedCodec(shallow).decode(nested->bytes, 0x1).code(), CodecErrc::kTooDeep);
}

}  // namespace
}  // namespace codecs_cache_memcached_codec_test
