// SPDX-License-Identifier: MIT
// deflate_bytes / inflate_bytes: every compressed item of the value tables
// (tests/golden/values/) recorded from the real clients inflates to the value
// the client stored, and deflating that value again gives the client's bytes
// (zlib: php-memcached 0x30, pecl memcache, python-memcache, pylibmc, Dalli;
// gzip: spymemcached, Cache::Memcached(::Fast)); Dalli's gzip, which holds
// the time, is read. Round trips; the gzip header fields; truncated, flipped
// and trailing bytes; max_size, with the largest allocation measured.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "support/allocation_meter.hpp"
#include "support/codec_bytes.hpp"
#include "support/value_table.hpp"

namespace codecs_zlib_test {
namespace {

using memshard::CodecErrc;
using memshard::detail::deflate_bytes;
using memshard::detail::DeflateFormat;
using memshard::detail::inflate_bytes;
using memshard::testing::allocated_bytes;
using memshard::testing::counting_allocations;
using memshard::testing::golden_values_dir;
using memshard::testing::largest_allocation;
using memshard::testing::lines;
using memshard::testing::noise;
using memshard::testing::words;

constexpr std::size_t kMiB = std::size_t{1} << 20U;

/// Ruby Marshal 4.8 of a UTF-8 String, as Dalli stores it by default:
/// 04 08 I " <length> <bytes> 06 : 06 E T.
auto ruby_marshal(const std::string& text) -> std::string {
  std::string out("\x04\x08I\"", 4);
  std::size_t length = text.size();
  if (length == 0) {
    out.push_back('\0');
  } else if (length < 123) {
    out.push_back(static_cast<char>(length + 5));
  } else {
    std::string little;
    for (; length != 0; length >>= 8U) {
      little.push_back(static_cast<char>(length & 0xffU));
    }
    out.push_back(static_cast<char>(little.size()));
    out += little;
  }
  return out + text +
         "\x06:\x06"
         "ET";
}

/// zlib's compress2 at `level`.
auto compress2_of(const std::string& data, int level) -> std::string {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string out(size, '\0');
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                      reinterpret_cast<const Bytef*>(data.data()), static_cast<uLong>(data.size()),
                      level),
            Z_OK);
  out.resize(size);
  return out;
}

/// A gzip stream with every optional header field, written by zlib itself.
auto gzip_with_header_fields(const std::string& data) -> std::string {
  z_stream stream{};
  EXPECT_EQ(deflateInit2_(&stream, 6, Z_DEFLATED, MAX_WBITS + 16, 8, Z_DEFAULT_STRATEGY,
                          ZLIB_VERSION, static_cast<int>(sizeof(z_stream))),
            Z_OK);
  std::string extra = "AB\x04\x00wxyz";
  std::string name = "value.txt";
  std::string comment = "a comment";
  gz_header header{};
  header.text = 1;
  header.time = 1700000000;
  header.os = 3;
  header.extra = reinterpret_cast<Bytef*>(extra.data());
  header.extra_len = static_cast<uInt>(extra.size());
  header.name = reinterpret_cast<Bytef*>(name.data());
  header.comment = reinterpret_cast<Bytef*>(comment.data());
  header.hcrc = 1;
  EXPECT_EQ(deflateSetHeader(&stream, &header), Z_OK);
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// --- golden: what the real clients stored -----------------------------------

struct GoldenTable {
  const char* file;
  std::uint32_t mask;  // the flag bits that say "compressed, this way"
  std::uint32_t bits;  // their value
  DeflateFormat format;
  int level;          // the level the client compresses at
  std::size_t items;  // how many compressed items the table holds
};

TEST(ZlibGoldenTest, EveryCompressedItemInflatesToItsValueAndDeflatesBackToTheSameBytes) {
  const auto strings = memshard::testing::read_string_values(golden_values_dir());
  const GoldenTable kTables[] = {
      {"php_memcached.values", 0x70, 0x30, DeflateFormat::kZlib, -1, 4},
      {"php_memcache.values", 0x2, 0x2, DeflateFormat::kZlib, -1, 7},
      {"python_memcache.values", 0x8, 0x8, DeflateFormat::kZlib, -1, 4},
      {"pylibmc.values", 0x8, 0x8, DeflateFormat::kZlib, -1, 4},
      {"dalli.values", 0x2, 0x2, DeflateFormat::kZlib, -1, 6},
      {"dalli.values", 0x2, 0x2, DeflateFormat::kGzip, -1, 3},
      {"spymemcached.values", 0x2, 0x2, DeflateFormat::kGzip, -1, 2},
      {"cache_memcached.values", 0x2, 0x2, DeflateFormat::kGzip, 9, 4},
      {"cache_memcached_fast.values", 0x2, 0x2, DeflateFormat::kGzip, 9, 4},
  };
  std::size_t reencoded = 0;
  for (const GoldenTable& table : kTables) {
    std::size_t checked = 0;
    for (const auto& value_case :
         memshard::testing::read_value_cases(golden_values_dir() / table.file)) {
      const bool gzip_case = value_case.setting("compressor") == "gzip";
      if (table.file == std::string("dalli.values") &&
          gzip_case != (table.format == DeflateFormat::kGzip)) {
        continue;
      }
      for (const auto& item : value_case.items) {
        if (item.refused || (item.flags & table.mask) != table.bits) {
          continue;
        }
        SCOPED_TRACE(value_case.id + " " + item.name);
        ASSERT_EQ(strings.count(item.name), 1U);
        std::string plain = strings.at(item.name);
        if (value_case.setting("raw") == "false") {
          plain = ruby_marshal(plain);  // Dalli Marshals first
        }
        std::string stored = item.bytes;
        if (table.bits == 0x30) {  // php-memcached: u32-LE length, then the stream
          ASSERT_GE(stored.size(), 4U);
          std::uint32_t length = 0;
          for (std::size_t i = 0; i < 4; ++i) {
            length |= std::uint32_t{static_cast<unsigned char>(stored[i])} << (8 * i);
          }
          EXPECT_EQ(length, plain.size());
          stored.erase(0, 4);
        }
        const auto inflated = inflate_bytes(stored, table.format, plain.size());
        ASSERT_TRUE(inflated.ok()) << inflated.error();
        EXPECT_EQ(*inflated, plain);
        // The other format does not read it.
        const DeflateFormat other =
            table.format == DeflateFormat::kGzip ? DeflateFormat::kZlib : DeflateFormat::kGzip;
        EXPECT_EQ(inflate_bytes(stored, other, plain.size()).code(), CodecErrc::kCorrupt);
        if (item.nondeterministic) {
          // Dalli::GzipCompressor: the time and OS 3 (Unix) in the header.
          ASSERT_GE(stored.size(), 10U);
          EXPECT_EQ(stored.substr(0, 4), std::string("\x1f\x8b\x08\x00", 4));
          EXPECT_NE(stored.substr(4, 4), std::string(4, '\0'));
          EXPECT_EQ(stored[9], '\x03');
        } else {
          EXPECT_EQ(deflate_bytes(plain, table.format, table.level), stored);
          ++reencoded;
        }
        ++checked;
      }
    }
    EXPECT_EQ(checked, table.items) << table.file;
  }
  EXPECT_EQ(reencoded, 4U + 7U + 4U + 4U + 6U + 2U + 4U + 4U);
}

TEST(ZlibGoldenTest, GzipWritersOfJavaAndPerlWriteXfl0AndOs255) {
  const auto strings = memshard::testing::read_string_values(golden_values_dir());
  const std::string header("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  EXPECT_EQ(deflate_bytes(strings.at("str20000"), DeflateFormat::kGzip, -1).substr(0, 10), header);
  EXPECT_EQ(deflate_bytes(strings.at("str20000"), DeflateFormat::kGzip, 9).substr(0, 10), header);
  EXPECT_EQ(deflate_bytes(strings.at("str20000"), DeflateFormat::kGzip, 1).substr(0, 10), header);
  // The empty input: header, an empty fixed block (03 00), CRC 0, length 0.
  EXPECT_EQ(deflate_bytes("", DeflateFormat::kGzip, -1),
            header + std::string("\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00", 10));
}

TEST(ZlibGoldenTest, GzipLevel9MatchesPerlMemGzipAndTheDefaultMatchesJava) {
  // Recorded from the real writers on words(): Perl 5.36 Compress::Zlib
  // memGzip (level 9, memLevel 9) wrote 345452 bytes of CRC-32 4e8efeee;
  // Java 17 GZIPOutputStream (level 6, memLevel 8) wrote 346484 bytes of
  // CRC-32 0f117924. On this input memLevel changes the stream.
  const std::string text = words();
  const std::string perl = deflate_bytes(text, DeflateFormat::kGzip, 9);
  EXPECT_EQ(perl.size(), 345452U);
  EXPECT_EQ(memshard::Crc32{}(perl), 0x4e8efeeeU);
  const std::string java = deflate_bytes(text, DeflateFormat::kGzip, -1);
  EXPECT_EQ(java.size(), 346484U);
  EXPECT_EQ(memshard::Crc32{}(java), 0x0f117924U);
  EXPECT_EQ(deflate_bytes(text, DeflateFormat::kGzip, 6), java);
  // zlib keeps compress2's memLevel 8 at every level.
  EXPECT_EQ(deflate_bytes(text, DeflateFormat::kZlib, 9), compress2_of(text, 9));
}

// --- writing -----------------------------------------------------------------

TEST(DeflateBytesTest, ZlibIsCompress2AtEveryLevel) {
  const std::vector<std::string> inputs = {"", "x", lines(3000), noise(5000, 7),
                                           std::string(100000, 'a')};
  for (const std::string& input : inputs) {
    for (int level = -1; level <= 9; ++level) {
      SCOPED_TRACE(std::to_string(input.size()) + " bytes at level " + std::to_string(level));
      EXPECT_EQ(deflate_bytes(input, DeflateFormat::kZlib, level), compress2_of(input, level));
    }
  }
}

TEST(DeflateBytesTest, LevelsOutsideTheRangeAreClamped) {
  const std::string text = lines(20000);
  EXPECT_EQ(deflate_bytes(text, DeflateFormat::kZlib, 42),
            deflate_bytes(text, DeflateFormat::kZlib, 9));
  EXPECT_EQ(deflate_bytes(text, DeflateFormat::kZlib, -7),
            deflate_bytes(text, DeflateFormat::kZlib, -1));
  EXPECT_EQ(deflate_bytes(text, DeflateFormat::kGzip, 10),
            deflate_bytes(text, DeflateFormat::kGzip, 9));
}

TEST(DeflateBytesTest, GzipTrailerIsTheCrcAndTheLength) {
  const std::string text = lines(3000);
  const std::string gzip = deflate_bytes(text, DeflateFormat::kGzip, -1);
  const std::uint32_t crc = memshard::Crc32{}(text);
  std::string trailer;
  for (const std::uint32_t word : {crc, static_cast<std::uint32_t>(text.size())}) {
    for (unsigned shift = 0; shift < 32; shift += 8) {
      trailer.push_back(static_cast<char>((word >> shift) & 0xffU));
    }
  }
  EXPECT_EQ(gzip.substr(gzip.size() - 8), trailer);
}

TEST(DeflateBytesTest, RoundTrips) {
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) {
    all_bytes.push_back(static_cast<char>(b));
  }
  std::string runs = std::string(300000, '\0') + std::string(70000, 'z') + lines(1000);
  const std::vector<std::string> inputs = {"", "A", all_bytes, noise(100000, 1), words(), runs};
  for (const DeflateFormat format : {DeflateFormat::kZlib, DeflateFormat::kGzip}) {
    for (const int level : {0, 1, -1, 9}) {
      for (const std::string& input : inputs) {
        SCOPED_TRACE(std::to_string(input.size()) + " bytes");
        const std::string packed = deflate_bytes(input, format, level);
        const auto back = inflate_bytes(packed, format, input.size());
        ASSERT_TRUE(back.ok()) << back.error();
        EXPECT_EQ(*back, input);
      }
    }
  }
  // A view without data is the empty input.
  EXPECT_EQ(deflate_bytes(std::string_view(), DeflateFormat::kGzip, -1),
            deflate_bytes("", DeflateFormat::kGzip, -1));
  EXPECT_EQ(inflate_bytes(std::string_view(), DeflateFormat::kZlib, kMiB).code(),
            CodecErrc::kCorrupt);
  // Real text compresses well.
  const std::string text = words();
  EXPECT_LT(deflate_bytes(text, DeflateFormat::kZlib, -1).size(), text.size() / 2);
}

// --- reading -----------------------------------------------------------------

TEST(InflateBytesTest, ReadsEveryOptionalGzipHeaderField) {
  const std::string text = lines(5000);
  const std::string gzip = gzip_with_header_fields(text);
  ASSERT_EQ(static_cast<unsigned char>(gzip[3]), 0x1fU);  // FTEXT FHCRC FEXTRA FNAME FCOMMENT
  const auto back = inflate_bytes(gzip, DeflateFormat::kGzip, kMiB);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, text);
}

TEST(InflateBytesTest, RefusesReservedGzipFlags) {
  std::string gzip = deflate_bytes(lines(3000), DeflateFormat::kGzip, -1);
  gzip[3] = '\x20';
  const auto result = inflate_bytes(gzip, DeflateFormat::kGzip, kMiB);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(result.error().message(), "gzip: at byte 4: unknown header flags set");
}

TEST(InflateBytesTest, RefusesBytesAfterTheStream) {
  const std::string text = lines(3000);
  for (const DeflateFormat format : {DeflateFormat::kZlib, DeflateFormat::kGzip}) {
    const std::string packed = deflate_bytes(text, format, -1);
    const std::string name(memshard::detail::deflate_format_name(format));
    const auto garbage = inflate_bytes(packed + "xyz", format, kMiB);
    ASSERT_FALSE(garbage.ok());
    EXPECT_EQ(garbage.code(), CodecErrc::kCorrupt);
    EXPECT_EQ(garbage.error().message(), name + ": 3 bytes after the end of the stream at byte " +
                                             std::to_string(packed.size()));
    // A second stream (a second gzip member) is trailing bytes too.
    const auto twice = inflate_bytes(packed + packed, format, kMiB);
    ASSERT_FALSE(twice.ok());
    EXPECT_EQ(twice.code(), CodecErrc::kCorrupt);
  }
}

TEST(InflateBytesTest, TruncatedAtEveryByteIsCorrupt) {
  const std::vector<std::string> inputs = {"", "hello, memshard", lines(3000), noise(700, 3)};
  for (const DeflateFormat format : {DeflateFormat::kZlib, DeflateFormat::kGzip}) {
    for (const std::string& input : inputs) {
      const std::string packed = deflate_bytes(input, format, -1);
      for (std::size_t cut = 0; cut < packed.size(); ++cut) {
        const auto result = inflate_bytes(packed.substr(0, cut), format, kMiB);
        ASSERT_FALSE(result.ok()) << cut << " of " << packed.size();
        EXPECT_EQ(result.code(), CodecErrc::kCorrupt) << result.error();
      }
    }
  }
  const auto cut = inflate_bytes(deflate_bytes(lines(3000), DeflateFormat::kZlib, -1).substr(0, 50),
                                 DeflateFormat::kZlib, kMiB);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().message(),
            "zlib: truncated: the input ends at byte 50, before the end of the stream");
}

TEST(InflateBytesTest, EverySingleBitFlipFailsCleanlyOrChangesNothing) {
  const std::string text = lines(400) + noise(100, 5);
  for (const DeflateFormat format : {DeflateFormat::kZlib, DeflateFormat::kGzip}) {
    const std::string packed = deflate_bytes(text, format, -1);
    std::size_t failures = 0;
    for (std::size_t bit = 0; bit < packed.size() * 8; ++bit) {
      std::string flipped = packed;
      flipped[bit / 8] =
          static_cast<char>(static_cast<unsigned char>(flipped[bit / 8]) ^ (1U << (bit % 8)));
      const auto result = inflate_bytes(flipped, format, 64 * 1024);
      if (result.ok()) {
        EXPECT_EQ(*result, text) << "bit " << bit;  // a bit nobody reads (FTEXT, padding)
      } else {
        EXPECT_TRUE(result.code() == CodecErrc::kCorrupt || result.code() == CodecErrc::kTooLarge)
            << result.error();
        ++failures;
      }
    }
    EXPECT_GT(failures, packed.size() * 8 * 9 / 10);
  }
}

TEST(InflateBytesTest, CorruptDataSaysWhereAndWhatZlibFound) {
  // A zlib header whose check bits are wrong.
  const auto result = inflate_bytes(std::string("\x78\x9d\x01\x02", 4), DeflateFormat::kZlib, kMiB);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(result.error().message(), "zlib: at byte 2: incorrect header check");
  // A bad checksum.
  std::string packed = deflate_bytes(lines(3000), DeflateFormat::kZlib, -1);
  packed.back() = static_cast<char>(packed.back() ^ 1);
  const auto checksum = inflate_bytes(packed, DeflateFormat::kZlib, kMiB);
  ASSERT_FALSE(checksum.ok());
  EXPECT_EQ(checksum.error().message(),
            "zlib: at byte " + std::to_string(packed.size()) + ": incorrect data check");
}

TEST(InflateBytesTest, MaxSizeBoundsTheOutput) {
  const std::string text = lines(20000);
  for (const DeflateFormat format : {DeflateFormat::kZlib, DeflateFormat::kGzip}) {
    const std::string packed = deflate_bytes(text, format, -1);
    EXPECT_TRUE(inflate_bytes(packed, format, text.size()).ok());
    const auto over = inflate_bytes(packed, format, text.size() - 1);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.code(), CodecErrc::kTooLarge);
    EXPECT_EQ(over.error().message(),
              std::string(memshard::detail::deflate_format_name(format)) +
                  ": the data inflates to more than 19999 bytes, the limit");
    EXPECT_EQ(inflate_bytes(packed, format, 0).code(), CodecErrc::kTooLarge);
    const auto empty = inflate_bytes(deflate_bytes("", format, -1), format, 0);
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->empty());
  }
}

TEST(InflateBytesTest, AnUnknownLengthFillsOneFirstBufferThenTakesTheValueSize) {
  // No length known: the output goes to a first buffer of 32 KiB, and the
  // value is copied out of it at its own size, with no growing on the way.
  const std::string text = lines(20000);
  const std::string packed = deflate_bytes(text, DeflateFormat::kZlib, -1);
  largest_allocation = 0;
  allocated_bytes = 0;
  counting_allocations = true;
  const auto back = inflate_bytes(packed, DeflateFormat::kZlib, kMiB);
  counting_allocations = false;
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, text);
  EXPECT_EQ(largest_allocation.load(), memshard::detail::kInflateFirstBuffer);
  EXPECT_EQ(allocated_bytes.load(), memshard::detail::kInflateFirstBuffer + text.size() + 1);
  // A limit below the first buffer bounds it.
  largest_allocation = 0;
  EXPECT_EQ(inflate_bytes(packed, DeflateFormat::kZlib, 1000).code(), CodecErrc::kTooLarge);
  EXPECT_LE(largest_allocation.load(), 1001U);
}

TEST(InflateBytesTest, ABombStopsAtTheLimitWithoutAllocatingMore) {
  const std::string bomb = deflate_bytes(std::string(64 * kMiB, '\0'), DeflateFormat::kZlib, 9);
  ASSERT_LT(bomb.size(), 100 * 1024U);
  largest_allocation = 0;
  const auto result = inflate_bytes(bomb, DeflateFormat::kZlib, kMiB);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), CodecErrc::kTooLarge);
  EXPECT_LE(largest_allocation.load(), kMiB + 1 + 64);

  // A gzip trailer claiming 4 GiB - 1 does not size the buffer either.
  std::string liar = deflate_bytes(lines(100), DeflateFormat::kGzip, -1);
  liar.replace(liar.size() - 4, 4, "\xff\xff\xff\xff");
  largest_allocation = 0;
  const auto lied = inflate_bytes(liar, DeflateFormat::kGzip, std::size_t{8} << 30U);
  ASSERT_FALSE(lied.ok());
  EXPECT_EQ(lied.code(), CodecErrc::kCorrupt);
  EXPECT_LT(largest_allocation.load(), 64 * 1024U);

  // An honest gzip trailer sizes the buffer once, exactly.
  const std::string text = lines(50000);
  const std::string packed = deflate_bytes(text, DeflateFormat::kGzip, -1);
  largest_allocation = 0;
  const auto honest = inflate_bytes(packed, DeflateFormat::kGzip, kMiB);
  ASSERT_TRUE(honest.ok());
  EXPECT_EQ(largest_allocation.load(), text.size() + 2);  // + 1 spare, + the terminator

  // So does a size the caller states (php-memcached's length prefix), once:
  // one buffer in all, never grown; a size deflate cannot reach from the
  // input is not trusted.
  const std::string zlib = deflate_bytes(text, DeflateFormat::kZlib, -1);
  largest_allocation = 0;
  allocated_bytes = 0;
  counting_allocations = true;
  const auto stated = inflate_bytes(zlib, DeflateFormat::kZlib, text.size() + 1, text.size());
  counting_allocations = false;
  ASSERT_TRUE(stated.ok()) << stated.error();
  EXPECT_EQ(*stated, text);
  EXPECT_EQ(allocated_bytes.load(), text.size() + 2);
  largest_allocation = 0;
  const auto overstated =
      inflate_bytes(deflate_bytes(lines(100), DeflateFormat::kZlib, -1), DeflateFormat::kZlib,
                    std::size_t{8} << 30U, std::size_t{4} << 30U);
  ASSERT_TRUE(overstated.ok()) << overstated.error();
  EXPECT_LT(largest_allocation.load(), 64 * 1024U);
}

}  // namespace
}  // namespace codecs_zlib_test
