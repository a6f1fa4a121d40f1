// SPDX-License-Identifier: MIT
// codecs/cache_memcached_fast_codec.hpp: CacheMemcachedFastCodec beyond the
// value tables (which codecs_make_codec_test checks): bits 0x1 (Storable) and
// 0x2 (gzip) always, 0x4 (UTF-8) only with `utf8`; every kind on encode (undef
// as "", character strings with 0x4 under `utf8`); gzip from
// compress_threshold when the result is at most compress_ratio of the payload
// (inclusive, unlike Cache::Memcached); bad items. The literal items were
// checked once against the real client (see ReadsAndWritesWhatTheRealClientDoes).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/codecs/cache_memcached_fast_codec.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_cache_memcached_fast_codec_test {
namespace {

using memshard::CacheMemcachedFastCodec;
using memshard::CacheMemcachedFastOptions;
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

auto utf8_codec() -> CacheMemcachedFastCodec {
  CacheMemcachedFastOptions options;
  options.utf8 = true;
  return CacheMemcachedFastCodec(options);
}

auto compressing(std::size_t threshold, bool utf8 = false) -> CacheMemcachedFastCodec {
  CacheMemcachedFastOptions options;
  options.compress_threshold = threshold;
  options.utf8 = utf8;
  return CacheMemcachedFastCodec(options);
}

// Storable::nfreeze([1]).
const std::string kFrozenOne("\x05\x0b\x02\x00\x00\x00\x01\x08\x81", 9);

TEST(CacheMemcachedFastCodecTest, TheFlagsItReads) {
  const CacheMemcachedFastCodec codec;
  EXPECT_EQ(*codec.decode("42", 0), Value("42"));
  EXPECT_EQ(*codec.decode("\xff\xfe", 0), Value("\xff\xfe"));
  EXPECT_EQ(*codec.decode(kFrozenOne, 0x1), Value::list({1}));
  EXPECT_EQ(*codec.decode(gzip("x"), 0x2), Value("x"));
  EXPECT_EQ(*codec.decode(gzip(kFrozenOne), 0x3), Value::list({1}));
  // Without utf8, 0x4 is not looked at: any bytes.
  EXPECT_EQ(*codec.decode("\xff\xfe", 0x4), Value("\xff\xfe"));
  EXPECT_EQ(*codec.decode(gzip("\xff"), 0x6), Value("\xff"));
  for (const std::uint32_t flags : {0x8U, 0x10U, 0x100U, 0x10000U, 0xfffffff8U}) {
    EXPECT_EQ(*codec.decode("\xff", flags), Value("\xff")) << flags;
    EXPECT_EQ(*codec.decode(kFrozenOne, flags | 0x1U), Value::list({1})) << flags;
  }
}

TEST(CacheMemcachedFastCodecTest, WithUtf8Flag4MarksUtf8Text) {
  const CacheMemcachedFastCodec codec = utf8_codec();
  EXPECT_EQ(*codec.decode("caf\xc3\xa9", 0x4), Value("caf\xc3\xa9"));
  EXPECT_EQ(*codec.decode(gzip("caf\xc3\xa9"), 0x6), Value("caf\xc3\xa9"));
  EXPECT_EQ(*codec.decode("\xff\xfe", 0), Value("\xff\xfe"));   // without 0x4: octets
  EXPECT_EQ(*codec.decode(kFrozenOne, 0x5), Value::list({1}));  // Storable first
  EXPECT_EQ(*codec.decode("", 0x4), Value(""));
  const auto bad = codec.decode("ok\xff\xfe", 0x4);
  EXPECT_EQ(bad.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(bad.error().message(), "cache-memcached-fast: flag 0x4 marks UTF-8, but byte 2 is not");
  EXPECT_EQ(codec.decode(gzip("\xed\xa0\x80"), 0x6).code(), CodecErrc::kCorrupt);  // a surrogate
  EXPECT_EQ(*codec.decode("x", 0x10004), Value("x"));
}

TEST(CacheMemcachedFastCodecTest, EveryKindOnEncode) {
  const CacheMemcachedFastCodec codec;
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"", 0}));  // undef is stored as ""
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"1", 0}));
  EXPECT_EQ(*codec.encode(Value(false)), (Encoded{"", 0}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0}));
  EXPECT_EQ(*codec.encode(Value(1.0 / 3)), (Encoded{"0.333333333333333", 0}));
  EXPECT_EQ(*codec.encode(Value(-0.0)), (Encoded{"0", 0}));
  EXPECT_EQ(*codec.encode(Value(-kInf)), (Encoded{"-Inf", 0}));
  EXPECT_EQ(*codec.encode(Value(std::nan(""))), (Encoded{"NaN", 0}));
  // Without utf8, strings are their bytes, flag 0.
  EXPECT_EQ(*codec.encode(Value("caf\xc3\xa9")), (Encoded{"caf\xc3\xa9", 0}));
  EXPECT_EQ(*codec.encode(Value("\xff")), (Encoded{"\xff", 0}));
  EXPECT_EQ(*codec.encode(Value::list({1})), (Encoded{kFrozenOne, 0x1}));
  EXPECT_EQ(*codec.encode(Value::serialized("storable", kFrozenOne)), (Encoded{kFrozenOne, 0x1}));
  EXPECT_EQ(codec.encode(Value::serialized("ruby-marshal", "\x04\x08T")).code(),
            CodecErrc::kNotEncodable);
}

TEST(CacheMemcachedFastCodecTest, WithUtf8ACharacterStringGetsFlag4) {
  const CacheMemcachedFastCodec codec = utf8_codec();
  EXPECT_EQ(*codec.encode(Value("caf\xc3\xa9")), (Encoded{"caf\xc3\xa9", 0x4}));
  EXPECT_EQ(*codec.encode(Value("\xf0\x9f\x98\x80")), (Encoded{"\xf0\x9f\x98\x80", 0x4}));
  EXPECT_EQ(*codec.encode(Value("plain ascii")), (Encoded{"plain ascii", 0}));
  EXPECT_EQ(*codec.encode(Value("")), (Encoded{"", 0}));
  // Bytes are octets, never characters.
  EXPECT_EQ(*codec.encode(Value::bytes("caf\xc3\xa9")), (Encoded{"caf\xc3\xa9", 0}));
  EXPECT_EQ(*codec.encode(Value::bytes("\xff")), (Encoded{"\xff", 0}));
  // Numbers, booleans and undef are never character strings.
  EXPECT_EQ(*codec.encode(Value(1.5)), (Encoded{"1.5", 0}));
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"", 0}));
  // A string above ASCII that is not UTF-8 has no characters to store.
  const auto invalid = codec.encode(Value("caf\xe9"));
  EXPECT_EQ(invalid.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(invalid.error().message(), "cache-memcached-fast: a character string must be UTF-8");
  // Compressed character strings keep the flag.
  const std::string text = std::string(200, 'a') + "\xc3\xa9";
  EXPECT_EQ(*compressing(100, true).encode(Value(text)), (Encoded{gzip(text), 0x6}));
  EXPECT_EQ(*compressing(100, true).decode(gzip(text), 0x6), Value(text));
}

TEST(CacheMemcachedFastCodecTest, GzipFromTheThresholdUpToTheRatio) {
  EXPECT_EQ(compressing(100).encode(Value(std::string(99, 'a')))->flags, 0U);
  EXPECT_EQ(*compressing(100).encode(Value(std::string(100, 'a'))),
            (Encoded{gzip(std::string(100, 'a')), 0x2}));
  EXPECT_EQ(compressing(100).encode(Value::list(Value::List(100, Value("x"))))->flags, 0x3U);
  EXPECT_EQ(CacheMemcachedFastCodec().encode(Value(std::string(100000, 'a')))->flags, 0U);
  // At most 0.8 of the payload, inclusive: the 55-byte payload whose gzip is
  // 44 bytes is compressed (Cache::Memcached stores it as it is).
  const std::string edge = noisy(21, 34);
  ASSERT_EQ(gzip(edge).size() * 5, edge.size() * 4);
  EXPECT_EQ(*compressing(10).encode(Value(edge)), (Encoded{gzip(edge), 0x2}));
  const std::string worse = noisy(22, 33);  // one random byte more, same length
  ASSERT_GT(gzip(worse).size() * 5, worse.size() * 4);
  EXPECT_EQ(*compressing(10).encode(Value(worse)), (Encoded{worse, 0}));
  CacheMemcachedFastOptions options;
  options.compress_threshold = 10;
  options.compress_ratio = 0.5;
  EXPECT_EQ(CacheMemcachedFastCodec(options).encode(Value(edge))->flags, 0U);
  options.compress_ratio = 1.0;
  EXPECT_EQ(CacheMemcachedFastCodec(options).encode(Value(worse))->flags, 0x2U);
  // memGzip's level 9, which differs from the default level on longer text.
  std::string lines;
  for (int i = 1; lines.size() < 20000; ++i) {
    lines +=
        "line " + std::to_string(10000 + i) + ": the quick brown fox jumps over the lazy dog\n";
  }
  ASSERT_NE(gzip(lines), memshard::detail::deflate_bytes(lines, DeflateFormat::kGzip, -1));
  EXPECT_EQ(*compressing(1000).encode(Value(lines)), (Encoded{gzip(lines), 0x2}));
  // undef's "" never reaches a threshold.
  EXPECT_EQ(compressing(1).encode(Value())->flags, 0U);
}

TEST(CacheMemcachedFastCodecTest, ReadsAndWritesWhatTheRealClientDoes) {
  // Checked once against Cache::Memcached::Fast 0.28 (Debian
  // libcache-memcached-fast-perl, perl 5.36) on a private memcached:
  // `Cache::Memcached::Fast->new({servers => [addr][, utf8 => 1]
  // [, compress_threshold => N]})->set($k, $v)`, then a text-protocol get of
  // the raw item; and items written raw, read with ->get($k).
  // set($k, undef): flags 0, no bytes.
  EXPECT_EQ(*CacheMemcachedFastCodec().encode(Value()), (Encoded{"", 0}));
  // compress_threshold => 100: 'a' x 99 as it is, 'a' x 100 gzipped;
  // compress_threshold => 10: the 55-byte payload gzipped to 44 bytes.
  EXPECT_EQ(compressing(100).encode(Value(std::string(99, 'a')))->flags, 0U);
  EXPECT_EQ(*compressing(100).encode(Value(std::string(100, 'a'))),
            (Encoded{from_hex("1f8b08000000000000ff4b4ca43d0000647a70af64000000"), 0x2}));
  EXPECT_EQ(*compressing(10).encode(Value(noisy(21, 34))),
            (Encoded{from_hex("1f8b08000000000000ff4bae5a50f7f0d527dbe396b9bccb2ac41a5885ac96fb2512"
                              "040079386b2137000000"),
                     0x2}));
  // utf8 => 1, set($k, $s) for a UTF-8-flagged character string: flag 4 and
  // its UTF-8 (an ASCII string with the flag on gets 0x4 too; memshard has no
  // such flag for ASCII and writes 0, which reads back the same).
  // get of raw items: 0x4 "caf\xc3\xa9" -> "café" (utf8) or the octets (no
  // utf8); 0x4 "\xff\xfe" -> undef (utf8) or the octets; 0x6 gzip("café")
  // -> "café"; 0x5 nfreeze([1]) -> [1]; 0x10000 "x" -> "x".
  const CacheMemcachedFastCodec utf8 = utf8_codec();
  EXPECT_EQ(*utf8.decode("caf\xc3\xa9", 0x4), Value("caf\xc3\xa9"));
  EXPECT_EQ(utf8.decode("\xff\xfe", 0x4).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(*CacheMemcachedFastCodec().decode("\xff\xfe", 0x4), Value("\xff\xfe"));
  EXPECT_EQ(*utf8.decode(from_hex("1f8b08000000000000ff4b4e4c3bbc1200b542ad9805000000"), 0x6),
            Value("caf\xc3\xa9"));
  EXPECT_EQ(*utf8.decode(kFrozenOne, 0x5), Value::list({1}));
  EXPECT_EQ(*utf8.decode("x", 0x10000), Value("x"));
  // Written by memshard (utf8, compress_threshold => 10), stored raw, read with
  // utf8 => 1: a character string of 44 characters ending in U+00E9.
  EXPECT_EQ(*compressing(10, true).encode(Value(std::string(40, 'a') + "caf\xc3\xa9")),
            (Encoded{from_hex("1f8b08000000000000ff4b4c240e2427a61d5e0900c819b9692d000000"), 0x6}));
}

TEST(CacheMemcachedFastCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const CacheMemcachedFastCodec codec;
  const auto notgzip = codec.decode("notgzip", 0x2);
  EXPECT_EQ(notgzip.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(notgzip.error().message().rfind("cache-memcached-fast: gzip: ", 0), 0U)
      << notgzip.error().message();
  EXPECT_EQ(
      codec.decode(memshard::detail::deflate_bytes("zlib", DeflateFormat::kZlib, -1), 0x2).code(),
      CodecErrc::kCorrupt);
  const std::string stream = gzip(std::string(3000, 'p') + "end");
  for (std::size_t cut = 0; cut < stream.size(); ++cut) {
    EXPECT_EQ(codec.decode(stream.substr(0, cut), 0x6).code(), CodecErrc::kCorrupt) << cut;
  }
  EXPECT_EQ(codec.decode(stream + "x", 0x2).code(), CodecErrc::kCorrupt);
  CacheMemcachedFastOptions limited;
  limited.limits.max_size = 3002;
  const auto large = CacheMemcachedFastCodec(limited).decode(stream, 0x2);
  EXPECT_EQ(large.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(large.error().message().rfind("cache-memcached-fast: ", 0), 0U);
  EXPECT_EQ(codec.decode("garbage", 0x1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode(kFrozenOne.substr(0, 8), 0x5).code(), CodecErrc::kCorrupt);
}

}  // namespace
}  // namespace codecs_cache_memcached_fast_codec_test
