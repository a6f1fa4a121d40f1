// SPDX-License-Identifier: MIT
// zstd_compress / zstd_decompress: ZSTD_compress's bytes; round trips; frames
// with and without the content size (streaming), with a checksum, with a
// window far larger than the content; truncated, flipped and trailing bytes;
// max_size, and the largest allocation for frames that claim more than they
// hold (a frame stating 10 GiB).
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/zstd.hpp"
#include "support/allocation_meter.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_zstd_test {
namespace {

using memshard::CodecErrc;
using memshard::detail::zstd_compress;
using memshard::detail::zstd_decompress;
using memshard::testing::largest_allocation;
using memshard::testing::lines;
using memshard::testing::noise;

constexpr std::size_t kMiB = std::size_t{1} << 20U;

/// A frame written by the streaming API without the content size, with the
/// given window (0: the level's) and checksum.
auto streamed_frame(const std::string& data, int window_log = 0, bool checksum = false)
    -> std::string {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  EXPECT_NE(context, nullptr);
  EXPECT_EQ(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 3)), 0U);
  EXPECT_EQ(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, window_log)), 0U);
  EXPECT_EQ(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, checksum ? 1 : 0)),
            0U);
  EXPECT_EQ(ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0)), 0U);
  std::string out(ZSTD_compressBound(data.size()) + 1024, '\0');
  // All the input first, without ending the frame: the size stays unknown
  // to the compressor (it would otherwise shrink the window to it).
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  ZSTD_outBuffer sink{out.data(), out.size(), 0};
  EXPECT_EQ(ZSTD_isError(ZSTD_compressStream2(context, &sink, &in, ZSTD_e_continue)), 0U);
  ZSTD_inBuffer none{nullptr, 0, 0};
  std::size_t left = 0;
  do {
    left = ZSTD_compressStream2(context, &sink, &none, ZSTD_e_end);
    EXPECT_EQ(ZSTD_isError(left), 0U);
  } while (left != 0 && ZSTD_isError(left) == 0U);
  ZSTD_freeCCtx(context);
  out.resize(sink.pos);
  return out;
}

auto all_bytes() -> std::string {
  std::string bytes;
  for (int b = 0; b < 256; ++b) {
    bytes.push_back(static_cast<char>(b));
  }
  return bytes;
}

TEST(ZstdCompressTest, IsZstdCompressAndStatesTheContentSize) {
  const std::vector<std::string> inputs = {"", "x", lines(3000), noise(5000, 1)};
  for (const std::string& input : inputs) {
    for (const int level : {-5, 1, 3, 19}) {
      const std::string frame = zstd_compress(input, level);
      std::string direct(ZSTD_compressBound(input.size()), '\0');
      direct.resize(ZSTD_compress(direct.data(), direct.size(), input.data(), input.size(), level));
      EXPECT_EQ(frame, direct);
      EXPECT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), input.size());
    }
    EXPECT_EQ(zstd_compress(input), zstd_compress(input, 3));
  }
  EXPECT_EQ(zstd_compress("", 3).substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
}

TEST(ZstdDecompressTest, RoundTrips) {
  const std::string text = lines(kMiB);
  std::string runs = std::string(300000, '\0') + std::string(70000, 'z') + lines(1000);
  const std::vector<std::string> inputs = {"", "A", all_bytes(), noise(100000, 2), text, runs};
  for (const int level : {1, 3, 19}) {
    for (const std::string& input : inputs) {
      SCOPED_TRACE(std::to_string(input.size()) + " bytes at level " + std::to_string(level));
      const auto back = zstd_decompress(zstd_compress(input, level), input.size());
      ASSERT_TRUE(back.ok()) << back.error();
      EXPECT_EQ(*back, input);
    }
  }
  EXPECT_LT(zstd_compress(text).size(), text.size() / 10);
  // A view without data is the empty input.
  EXPECT_EQ(zstd_compress(std::string_view()), zstd_compress(""));
  EXPECT_EQ(zstd_decompress(std::string_view(), kMiB).code(), CodecErrc::kCorrupt);
}

TEST(ZstdDecompressTest, ReadsStreamedFramesWithoutTheContentSize) {
  const std::vector<std::string> inputs = {"", "A", lines(3000), std::string(kMiB, '\0'),
                                           noise(300000, 3) + lines(kMiB)};
  for (const std::string& input : inputs) {
    SCOPED_TRACE(input.size());
    const std::string frame = streamed_frame(input);
    ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);
    const auto back = zstd_decompress(frame, input.size());
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(*back, input);
    if (!input.empty()) {
      const auto over = zstd_decompress(frame, input.size() - 1);
      ASSERT_FALSE(over.ok());
      EXPECT_EQ(over.code(), CodecErrc::kTooLarge);
      EXPECT_EQ(over.error().message(), "zstd: the frame decodes to more than " +
                                            std::to_string(input.size() - 1) + " bytes, the limit");
    }
  }
}

TEST(ZstdDecompressTest, AWindowLargerThanTheLimitIsNotAProblem) {
  // The header names a 128 MiB window; the content is 3000 bytes.
  const std::string text = lines(3000);
  const std::string frame = streamed_frame(text, 27);
  ASSERT_EQ(frame.substr(4, 2), std::string("\x00\x88", 2));  // window 2^(10 + 0x88 >> 3)
  const auto back = zstd_decompress(frame, 4096);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, text);
}

TEST(ZstdDecompressTest, AStatedSizeOverTheLimitIsRefusedBeforeAllocating) {
  const std::string frame = zstd_compress(std::string(kMiB, '\0'));
  largest_allocation = 0;
  const auto result = zstd_decompress(frame, kMiB - 1);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(result.error().message(),
            "zstd: the frame states 1048576 bytes, more than the limit of 1048575");
  EXPECT_LT(largest_allocation.load(), 1024U);
  // Within the limit, the buffer grows to the stated size and no further.
  largest_allocation = 0;
  const auto fits = zstd_decompress(frame, 64 * kMiB);
  ASSERT_TRUE(fits.ok()) << fits.error();
  EXPECT_EQ(fits->size(), kMiB);
  EXPECT_LE(largest_allocation.load(), kMiB + 64);
}

TEST(ZstdDecompressTest, AFrameClaiming10GiBAllocatesNothingLikeIt) {
  // Magic, a header with an 8-byte content size (single segment) of 10 GiB,
  // then one empty last raw block.
  std::string frame("\x28\xb5\x2f\xfd\xe0", 5);
  const std::uint64_t ten_gib = std::uint64_t{10} << 30U;
  for (unsigned shift = 0; shift < 64; shift += 8) {
    frame.push_back(static_cast<char>((ten_gib >> shift) & 0xffU));
  }
  frame += std::string("\x01\x00\x00", 3);
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ten_gib);

  largest_allocation = 0;
  const auto refused = zstd_decompress(frame, 64 * kMiB);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(refused.error().message(),
            "zstd: the frame states 10737418240 bytes, more than the limit of 67108864");

  // Even when the limit would allow it, the 16 bytes cannot justify 10 GiB.
  const auto lied = zstd_decompress(frame, std::size_t{16} << 30U);
  ASSERT_FALSE(lied.ok());
  EXPECT_EQ(lied.code(), CodecErrc::kCorrupt);
  EXPECT_LE(largest_allocation.load(), 128 * 1024U);
}

TEST(ZstdDecompressTest, ALoneSkippableFrameHoldsNothing) {
  const std::string skippable("\x50\x2a\x4d\x18\x03\x00\x00\x00xyz", 11);
  const auto result = zstd_decompress(skippable, 100);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_TRUE(result->empty());
}

TEST(ZstdDecompressTest, RefusesWhatIsNotAFrame) {
  for (const std::string& input :
       {std::string(), std::string("hello"), std::string("\x28\xb5\x2f", 3),
        std::string("\x78\x9c\x03\x00\x00\x00\x00\x01", 8)}) {
    const auto result = zstd_decompress(input, kMiB);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.code(), CodecErrc::kCorrupt);
    EXPECT_EQ(result.error().message(),
              "zstd: at byte 0: not a zstd frame (no magic number 28 b5 2f fd)");
  }
  const auto header = zstd_decompress(std::string("\x28\xb5\x2f\xfd", 4), kMiB);
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.error().message(),
            "zstd: at byte 4: the frame header is bad or truncated (4 bytes in all)");
}

TEST(ZstdDecompressTest, RefusesBytesAfterTheFrame) {
  const std::string frame = zstd_compress(lines(3000));
  const auto garbage = zstd_decompress(frame + "x", kMiB);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(garbage.error().message(),
            "zstd: 1 bytes after the end of the frame at byte " + std::to_string(frame.size()));
  const auto twice = zstd_decompress(frame + frame, kMiB);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.code(), CodecErrc::kCorrupt);
}

TEST(ZstdDecompressTest, TruncatedAtEveryByteIsCorrupt) {
  const std::vector<std::string> frames = {zstd_compress(""), zstd_compress("hello, memshard"),
                                           zstd_compress(lines(3000)), zstd_compress(noise(700, 4)),
                                           streamed_frame(lines(3000), 0, true)};
  for (const std::string& frame : frames) {
    for (std::size_t cut = 0; cut < frame.size(); ++cut) {
      const auto result = zstd_decompress(frame.substr(0, cut), kMiB);
      ASSERT_FALSE(result.ok()) << cut << " of " << frame.size();
      EXPECT_EQ(result.code(), CodecErrc::kCorrupt) << result.error();
    }
  }
}

TEST(ZstdDecompressTest, EverySingleBitFlipFailsCleanly) {
  const std::string text = lines(1500) + noise(200, 5);
  // Without a checksum a flip may decode to other bytes, but never past the
  // limit, and never crashes (ASan).
  const std::string plain = zstd_compress(text);
  // With one (XXH64), a flip that decodes must decode to the same bytes.
  const std::string checked = streamed_frame(text, 0, true);
  for (const std::string* frame : {&plain, &checked}) {
    std::size_t failures = 0;
    for (std::size_t bit = 0; bit < frame->size() * 8; ++bit) {
      std::string flipped = *frame;
      flipped[bit / 8] =
          static_cast<char>(static_cast<unsigned char>(flipped[bit / 8]) ^ (1U << (bit % 8)));
      const auto result = zstd_decompress(flipped, 64 * 1024);
      if (result.ok()) {
        EXPECT_LE(result->size(), 64 * 1024U);
        if (frame == &checked) {
          EXPECT_EQ(*result, text) << "bit " << bit;
        }
      } else {
        EXPECT_TRUE(result.code() == CodecErrc::kCorrupt || result.code() == CodecErrc::kTooLarge)
            << result.error();
        ++failures;
      }
    }
    EXPECT_GT(failures, frame->size() * 8 / (frame == &checked ? 2 : 10));
  }
}

TEST(ZstdDecompressTest, MaxSizeBoundsAFrameWithoutAStatedSize) {
  const std::string frame = streamed_frame(std::string(8 * kMiB, 'q'));
  ASSERT_LT(frame.size(), 4096U);
  largest_allocation = 0;
  const auto result = zstd_decompress(frame, kMiB);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), CodecErrc::kTooLarge);
  EXPECT_LE(largest_allocation.load(), kMiB + 64);
}

}  // namespace
}  // namespace codecs_zstd_test
