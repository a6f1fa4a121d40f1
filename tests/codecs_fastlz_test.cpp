// SPDX-License-Identifier: MIT
// fastlz_compress / fastlz_decompress: every FastLZ item php-memcached stored
// in the value tables (tests/golden/values/php_memcached.values, flags 0x50)
// decodes to its value, and compressing the value gives php-memcached's bytes;
// so do inputs that reach the format's corners (runs, far level-2 matches,
// distances 8191 and 8192, long matches), recorded from php-memcached 3.2.0.
// Round trips at both levels; hand-written streams; unknown levels, truncated
// and flipped streams, wrong lengths, and the memory a false length may claim.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/fastlz.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "support/allocation_meter.hpp"
#include "support/codec_bytes.hpp"
#include "support/value_table.hpp"

namespace codecs_fastlz_test {
namespace {

using memshard::CodecErrc;
using memshard::detail::fastlz_compress;
using memshard::detail::fastlz_decompress;
using memshard::testing::golden_values_dir;
using memshard::testing::largest_allocation;
using memshard::testing::lines;
using memshard::testing::noise;
using memshard::testing::words;

constexpr std::size_t kMiB = std::size_t{1} << 20U;

auto repeat(const std::string& part, int times) -> std::string {
  std::string out;
  for (int i = 0; i < times; ++i) {
    out += part;
  }
  return out;
}

auto level_of(const std::string& stream) -> unsigned {
  return (static_cast<unsigned char>(stream.at(0)) >> 5U) + 1;
}

auto flip(std::string bytes, std::size_t bit) -> std::string {
  bytes[bit / 8] =
      static_cast<char>(static_cast<unsigned char>(bytes[bit / 8]) ^ (1U << (bit % 8)));
  return bytes;
}

// --- golden: what php-memcached stored -----------------------------------------

TEST(FastlzGoldenTest, PhpMemcachedItemsDecodeAndReencodeByteForByte) {
  const auto strings = memshard::testing::read_string_values(golden_values_dir());
  std::size_t checked = 0;
  for (const auto& value_case :
       memshard::testing::read_value_cases(golden_values_dir() / "php_memcached.values")) {
    for (const auto& item : value_case.items) {
      if (item.refused || (item.flags & 0x70U) != 0x50U) {
        continue;
      }
      SCOPED_TRACE(value_case.id + " " + item.name);
      const std::string& plain = strings.at(item.name);
      ASSERT_GE(item.bytes.size(), 4U);
      std::size_t length = 0;
      for (std::size_t i = 0; i < 4; ++i) {
        length |= std::size_t{static_cast<unsigned char>(item.bytes[i])} << (8 * i);
      }
      ASSERT_EQ(length, plain.size());
      const std::string stream = item.bytes.substr(4);
      EXPECT_EQ(level_of(stream), plain.size() < 65536 ? 1U : 2U);
      const auto decoded = fastlz_decompress(stream, length);
      ASSERT_TRUE(decoded.ok()) << decoded.error();
      EXPECT_EQ(*decoded, plain);
      EXPECT_EQ(fastlz_compress(plain), stream);
      ++checked;
    }
  }
  // str3000, str20000, str70000, json20001 in the five FastLZ cases.
  EXPECT_EQ(checked, 20U);
}

TEST(FastlzGoldenTest, CornerInputsMatchPhpMemcached) {
  // php-memcached 3.2.0 (Debian php-memcached 3.2.0+2.2.0-4) stored each of
  // these with Memcached::set() and Debian's defaults (FastLZ, flags 0x50);
  // recorded: the size and CRC-32 of the stream after the 4-byte length.
  struct Recorded {
    const char* name;
    std::string input;
    std::size_t size;
    std::uint32_t crc;
  };
  const std::string a8191 = noise(8191, 3);
  const std::string b8192 = noise(8192, 4);
  const std::string c8193 = noise(8193, 5);
  const Recorded kRecorded[] = {
      {"a run, level 2", std::string(100000, 'a'), 402, 0x167c9b09U},
      {"a run, level 1", std::string(3000, '\0'), 43, 0x85cfe398U},
      {"far matches, level 2", repeat(noise(9000, 1) + lines(1000), 8), 9710, 0xc2bf4000U},
      {"long matches, level 1", repeat(noise(600, 2), 34), 851, 0x2c01d635U},
      {"distances 8191 and 8192, level 1", repeat(a8191, 3) + repeat(b8192, 2), 25529, 0x440eac8aU},
      {"distances 8191 to 8193, level 2", repeat(a8191, 3) + repeat(b8192, 3) + repeat(c8193, 3),
       25554, 0xde98c9eeU},
  };
  for (const Recorded& recorded : kRecorded) {
    SCOPED_TRACE(recorded.name);
    const std::string stream = fastlz_compress(recorded.input);
    EXPECT_EQ(stream.size(), recorded.size);
    EXPECT_EQ(memshard::Crc32{}(stream), recorded.crc);
    const auto back = fastlz_decompress(stream, recorded.input.size());
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(*back, recorded.input);
  }
}

// --- writing -------------------------------------------------------------------

TEST(FastlzCompressTest, ChoosesLevel2From65536Bytes) {
  EXPECT_EQ(level_of(fastlz_compress(lines(65535))), 1U);
  EXPECT_EQ(level_of(fastlz_compress(lines(65536))), 2U);
  EXPECT_EQ(fastlz_compress(lines(65535)), fastlz_compress(lines(65535), 1));
  EXPECT_EQ(fastlz_compress(lines(65536)), fastlz_compress(lines(65536), 2));
  // Levels other than 1 and 2.
  EXPECT_EQ(fastlz_compress(lines(3000), 0), fastlz_compress(lines(3000), 1));
  EXPECT_EQ(fastlz_compress(lines(3000), 7), fastlz_compress(lines(3000), 2));
}

TEST(FastlzCompressTest, ShortInputsAreOneLiteralRun) {
  EXPECT_EQ(fastlz_compress("", 1), "");
  EXPECT_EQ(fastlz_compress("", 2), "");
  EXPECT_EQ(fastlz_compress("a", 2), std::string("\x00"
                                                 "a",
                                                 2));
  EXPECT_EQ(fastlz_compress("abc", 2),
            "\x02"
            "abc");
  // From 4 bytes on: the level marker on the first literal run.
  EXPECT_EQ(fastlz_compress("abcd", 1),
            "\x03"
            "abcd");
  EXPECT_EQ(fastlz_compress("abcd", 2),
            "\x23"
            "abcd");
}

TEST(FastlzCompressTest, RoundTripsAtBothLevels) {
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) {
    all_bytes.push_back(static_cast<char>(b));
  }
  std::vector<std::string> inputs = {
      "",
      "a",
      "ab",
      "abc",
      "abcd",
      std::string(14, 'x'),
      all_bytes,
      repeat(all_bytes, 40),
      noise(100000, 6),
      words(),
      std::string(kMiB, '\0'),
      "head" + std::string(70000, 'r') + "tail" + std::string(5, 'r'),
      repeat(noise(8191, 7), 2),
      repeat(noise(8192, 8), 2),
      repeat(noise(8193, 9), 2),
      noise(70000, 10) + noise(100, 10) + noise(3000, 11) + noise(100, 10),
      repeat(noise(65535 + 8189, 12), 2),
      repeat(noise(65535 + 8190, 13), 2),
      repeat(noise(32768, 14), 2),  // the largest input whose positions fit 16 bits
      repeat(noise(32768, 15), 2) + "+",
  };
  for (std::size_t run = 255; run < 275; ++run) {  // level 1 splits matches at 262 + 2
    inputs.push_back(std::string("x").append(run, 'y').append("z").append(run, 'y').append("zz"));
  }
  for (const int level : {1, 2}) {
    for (const std::string& input : inputs) {
      SCOPED_TRACE(std::to_string(input.size()) + " bytes at level " + std::to_string(level));
      const std::string stream = fastlz_compress(input, level);
      if (input.size() >= 4) {
        EXPECT_EQ(level_of(stream), static_cast<unsigned>(level));
      }
      EXPECT_LE(stream.size(), input.size() + input.size() / 32 + 1);
      const auto back = fastlz_decompress(stream, input.size());
      ASSERT_TRUE(back.ok()) << back.error();
      EXPECT_EQ(*back, input);
    }
  }
}

TEST(FastlzCompressTest, ReachesAsFarAsEachLevelAllows) {
  // Level 1 reaches 8191 bytes back, not 8192; level 2 reaches both, and far
  // beyond (a 5-byte match at least), up to 65535 + 8189.
  const std::string near = repeat(noise(8191, 7), 2);
  const std::string far = repeat(noise(8192, 8), 2);
  EXPECT_LT(fastlz_compress(near, 1).size(), near.size() * 6 / 10);
  EXPECT_GT(fastlz_compress(far, 1).size(), far.size());
  EXPECT_LT(fastlz_compress(far, 2).size(), far.size() * 6 / 10);
  const std::string farthest = repeat(noise(65535 + 8189, 12), 2);
  const std::string beyond = repeat(noise(65535 + 8190, 13), 2);
  EXPECT_LT(fastlz_compress(farthest, 2).size(), farthest.size() * 6 / 10);
  EXPECT_GT(fastlz_compress(beyond, 2).size(), beyond.size());
}

TEST(FastlzCompressTest, CompressesTextWell) {
  const std::string text = words();
  EXPECT_LT(fastlz_compress(text, 1).size(), text.size() * 6 / 10);
  EXPECT_LT(fastlz_compress(lines(70000)).size(), 70000U / 10);
  EXPECT_LT(fastlz_compress(std::string(kMiB, 'a'), 2).size(), 5000U);
}

// --- reading hand-written streams ------------------------------------------------

TEST(FastlzDecompressTest, ReadsHandWrittenStreams) {
  // Literal "abc", then 3 bytes from 3 back.
  EXPECT_EQ(*fastlz_decompress("\x02"
                               "abc\x20\x02",
                               6),
            "abcabc");
  // Level 1: length field 7 + 5 more = 14 bytes from 1 back (overlapping).
  EXPECT_EQ(*fastlz_decompress(std::string("\x00"
                                           "a\xe0\x05\x00",
                                           5),
                               15),
            std::string(15, 'a'));
  // Level 2: 255 + 255 + 10 more: 9 + 520 = 529 bytes from 1 back.
  EXPECT_EQ(*fastlz_decompress(std::string("\x20"
                                           "a\xe0\xff\xff\x0a\x00",
                                           7),
                               530),
            std::string(530, 'a'));
  // Level 1: a length byte of 255 ends the length (7 + 2 + 255 = 264).
  EXPECT_EQ(*fastlz_decompress(std::string("\x00"
                                           "a\xe0\xff\x00",
                                           5),
                               265),
            std::string(265, 'a'));
  // Level 2, far: 3 bytes from 808 + 8192 = 9000 back.
  const std::string head = noise(9000, 14);
  std::string stream;
  for (std::size_t at = 0; at < head.size(); at += 32) {
    const std::string run = head.substr(at, 32);
    stream.push_back(static_cast<char>(run.size() - 1));
    stream += run;
  }
  stream[0] = static_cast<char>(stream[0] | 0x20);
  stream += std::string("\x3f\xff\x03\x28", 4);
  EXPECT_EQ(*fastlz_decompress(stream, 9003), head + head.substr(0, 3));
  // The same bytes at level 1: 3 bytes from (31 << 8) + 255 + 1 = 8192 back,
  // then 03: a literal run of 4 bytes with only 1 left.
  stream[0] = static_cast<char>(stream[0] & 0x1f);
  const auto level1 = fastlz_decompress(stream, 9007);
  ASSERT_FALSE(level1.ok());
  EXPECT_EQ(level1.error().message(),
            "fastlz: at byte 9284: a literal run of 4 bytes, but only 1 bytes are left");
  EXPECT_EQ(*fastlz_decompress(stream.substr(0, 9284), 9003), head + head.substr(808, 3));
}

TEST(FastlzDecompressTest, RefusesUnknownLevels) {
  for (unsigned top = 2; top < 8; ++top) {
    std::string stream = fastlz_compress(lines(3000), 1);
    stream[0] = static_cast<char>(static_cast<unsigned>(stream[0]) | top << 5U);
    const auto result = fastlz_decompress(stream, 3000);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.code(), CodecErrc::kCorrupt);
    EXPECT_EQ(result.error().message(), "fastlz: at byte 0: level " + std::to_string(top + 1) +
                                            " is unknown (first byte " +
                                            std::to_string(static_cast<unsigned char>(stream[0])) +
                                            "); FastLZ has levels 1 and 2");
  }
}

TEST(FastlzDecompressTest, SaysWhatIsWrongAndWhere) {
  struct Bad {
    std::string stream;
    std::size_t expected;
    std::string message;
  };
  const Bad kBad[] = {
      {std::string("\x05"
                   "a",
                   2),
       6, "fastlz: at byte 0: a literal run of 6 bytes, but only 1 bytes are left"},
      {std::string("\x00"
                   "a\x20\x05",
                   4),
       4, "fastlz: at byte 2: a match 6 bytes back, but only 1 bytes are decoded"},
      {std::string("\x00"
                   "a\x20",
                   3),
       4, "fastlz: at byte 2: the match is truncated: the stream ends at byte 3"},
      {std::string("\x00"
                   "a\xe0",
                   3),
       20, "fastlz: at byte 2: the match is truncated: the stream ends at byte 3"},
      {std::string("\x00"
                   "a\xe0\x05",
                   4),
       20, "fastlz: at byte 2: the match is truncated: the stream ends at byte 4"},
      {std::string("\x20"
                   "a\xe0\xff\xff",
                   5),
       1000, "fastlz: at byte 2: the match is truncated: the stream ends at byte 5"},
      {std::string("\x20"
                   "a\x3f\xff\x01",
                   5),
       10, "fastlz: at byte 2: the match is truncated: the stream ends at byte 5"},
      {std::string("\x00"
                   "a\x20\x00",
                   4),
       3, "fastlz: at byte 2: the stream holds more than 3 bytes, the length says 3"},
      {std::string("\x20"
                   "a\xe0\xff\xff\xff",
                   6),
       600, "fastlz: at byte 2: the stream holds more than 600 bytes, the length says 600"},
      {std::string("\x01"
                   "ab",
                   3),
       1, "fastlz: at byte 0: the stream holds more than 1 bytes, the length says 1"},
      {std::string(), 5, "fastlz: the stream holds 0 bytes, the length says 5"},
      {std::string("\x00"
                   "a\x20\x00",
                   4),
       5, "fastlz: the stream holds 4 bytes, the length says 5"},
  };
  for (const Bad& bad : kBad) {
    const auto result = fastlz_decompress(bad.stream, bad.expected);
    ASSERT_FALSE(result.ok()) << bad.message;
    EXPECT_EQ(result.code(), CodecErrc::kCorrupt);
    EXPECT_EQ(result.error().message(), bad.message);
  }
  EXPECT_EQ(fastlz_decompress(std::string_view(), 1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(fastlz_compress(std::string_view(), 2), "");
  const auto empty = fastlz_decompress(std::string_view(), 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(FastlzDecompressTest, TheLengthMustBeExact) {
  const std::string text = lines(3000);
  const std::string stream = fastlz_compress(text);
  EXPECT_TRUE(fastlz_decompress(stream, 3000).ok());
  const auto longer = fastlz_decompress(stream, 3001);
  ASSERT_FALSE(longer.ok());
  EXPECT_EQ(longer.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(longer.error().message(), "fastlz: the stream holds 3000 bytes, the length says 3001");
  const auto shorter = fastlz_decompress(stream, 2999);
  ASSERT_FALSE(shorter.ok());
  EXPECT_EQ(shorter.code(), CodecErrc::kCorrupt);
  const std::string& message = shorter.error().message();
  EXPECT_EQ(message.rfind("fastlz: at byte ", 0), 0U) << message;
  EXPECT_NE(message.find(": the stream holds more than 2999 bytes, the length says 2999"),
            std::string::npos)
      << message;
  EXPECT_EQ(fastlz_decompress(stream, 0).code(), CodecErrc::kCorrupt);
}

TEST(FastlzDecompressTest, AFalseLengthAllocatesOnlyWhatTheStreamCanHold) {
  const std::string stream = fastlz_compress("0123456789", 1);
  ASSERT_EQ(stream.size(), 11U);
  largest_allocation = 0;
  const auto result = fastlz_decompress(stream, std::size_t{1} << 30U);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message(),
            "fastlz: the stream holds 10 bytes, the length says 1073741824");
  EXPECT_LE(largest_allocation.load(), 11 * 255 + 1U);
  // Level 2 length bytes of 255: each adds 255 bytes, and no more is allocated.
  const std::string lengths = std::string(
                                  "\x20"
                                  "a\xe0",
                                  3) +
                              std::string(4000, '\xff') + "\x01";
  largest_allocation = 0;
  const auto long_match = fastlz_decompress(lengths + std::string(1, '\0'), std::size_t{1} << 30U);
  ASSERT_FALSE(long_match.ok());
  EXPECT_EQ(long_match.error().message(),
            "fastlz: the stream holds 1020011 bytes, the length says 1073741824");
  EXPECT_LE(largest_allocation.load(), lengths.size() * 255 + 256);
  // An honest length: one buffer of exactly that size.
  const std::string text = lines(70000);
  const std::string packed = fastlz_compress(text);
  largest_allocation = 0;
  EXPECT_EQ(*fastlz_decompress(packed, text.size()), text);
  EXPECT_EQ(largest_allocation.load(), text.size() + 1);
}

TEST(FastlzDecompressTest, TruncatedAtEveryByteIsCorrupt) {
  const std::vector<std::string> inputs = {lines(3000), repeat(noise(600, 2), 8),
                                           std::string(5000, 'a') + lines(200),
                                           repeat(noise(9000, 1) + lines(500), 2)};
  for (const std::string& input : inputs) {
    for (const int level : {1, 2}) {
      const std::string stream = fastlz_compress(input, level);
      for (std::size_t cut = 0; cut < stream.size(); ++cut) {
        const auto result = fastlz_decompress(stream.substr(0, cut), input.size());
        ASSERT_FALSE(result.ok()) << cut << " of " << stream.size();
        EXPECT_EQ(result.code(), CodecErrc::kCorrupt);
      }
    }
  }
}

TEST(FastlzDecompressTest, EverySingleBitFlipFailsCleanlyOrKeepsTheLength) {
  const std::vector<std::string> inputs = {lines(3000), std::string(3000, 'a') + noise(100, 3),
                                           repeat(noise(300, 4), 40)};
  for (const std::string& input : inputs) {
    for (const int level : {1, 2}) {
      const std::string stream = fastlz_compress(input, level);
      std::size_t failures = 0;
      for (std::size_t bit = 0; bit < stream.size() * 8; ++bit) {
        const auto result = fastlz_decompress(flip(stream, bit), input.size());
        if (result.ok()) {
          EXPECT_EQ(result->size(), input.size());
        } else {
          EXPECT_EQ(result.code(), CodecErrc::kCorrupt);
          ++failures;
        }
      }
      EXPECT_GT(failures, 0U);
    }
  }
}

}  // namespace
}  // namespace codecs_fastlz_test
