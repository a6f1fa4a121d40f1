// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_ZSTD_HPP_
#define MEMSHARD_CODECS_DETAIL_ZSTD_HPP_

// codecs/detail/zstd.hpp: zstd_compress and zstd_decompress, one Zstandard
// frame (RFC 8878) over libzstd (link -lzstd). php-memcached 3.3.0 and later
// stores zstd (flags 0x90) after its 4-byte length; it writes the frame with
// ZSTD_compress, so the frame states its content size.
//
// zstd_decompress reads exactly one frame, with or without the content size
// (a streaming writer leaves it out), and nothing after it. A frame whose
// stated size exceeds max_size is refused before any output is allocated. A
// stated size is not trusted for the allocation either: decoding starts in a
// buffer the input can justify and doubles it, decoding again each time (at
// most twice the work of one decode in all), up to the stated size or
// max_size + 1. Decoding is one-shot into that buffer, so libzstd allocates
// no window of its own, whatever window the frame header names.

#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// zstd_compress: `data` as one zstd frame at `level` (libzstd clamps it to
/// its range; the frame states its content size), as ZSTD_compress writes it.
/// Throws std::bad_alloc when memory runs out, and std::length_error for an
/// input larger than zstd takes (ZSTD_MAX_INPUT_SIZE).
[[nodiscard]] inline auto zstd_compress(std::string_view data, int level = 3) -> std::string {
  const std::size_t bound = ZSTD_compressBound(data.size());
  if (ZSTD_isError(bound) != 0U) {
    throw std::length_error("memshard: zstd: input of " + std::to_string(data.size()) +
                            " bytes is too large to compress");
  }
  std::string out(bound, '\0');
  const std::size_t written =
      ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  if (ZSTD_isError(written) != 0U) {
    if (ZSTD_getErrorCode(written) == ZSTD_error_memory_allocation) {
      throw std::bad_alloc();
    }
    throw std::logic_error(std::string("memshard: zstd: compression failed: ") +
                           ZSTD_getErrorName(written));
  }
  out.resize(written);
  return out;
}

/// zstd_decompress: the content of the single zstd frame `data` (a lone
/// skippable frame holds no bytes). kCorrupt for a bad or truncated frame and
/// for bytes after it (a second frame included); kTooLarge when the
/// frame states more than `max_size` bytes (refused before allocating) or
/// decodes to more. Throws only std::bad_alloc.
[[nodiscard]] inline auto zstd_decompress(std::string_view data, std::size_t max_size)
    -> CodecResult<std::string> {
  auto corrupt = [](const std::string& why) {
    return CodecError(CodecErrc::kCorrupt, "zstd: " + why);
  };
  const unsigned long long stated = ZSTD_getFrameContentSize(data.data(), data.size());
  if (stated == ZSTD_CONTENTSIZE_ERROR) {
    constexpr unsigned char kMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
    bool magic = data.size() >= 4;
    for (std::size_t i = 0; magic && i < 4; ++i) {
      magic = static_cast<unsigned char>(data[i]) == kMagic[i];
    }
    return corrupt(magic ? "at byte 4: the frame header is bad or truncated (" +
                               std::to_string(data.size()) + " bytes in all)"
                         : "at byte 0: not a zstd frame (no magic number 28 b5 2f fd)");
  }
  const bool known = stated != ZSTD_CONTENTSIZE_UNKNOWN;
  if (known && stated > max_size) {
    return CodecError(CodecErrc::kTooLarge, "zstd: the frame states " + std::to_string(stated) +
                                                " bytes, more than the limit of " +
                                                std::to_string(max_size));
  }
  const std::size_t frame = ZSTD_findFrameCompressedSize(data.data(), data.size());
  if (ZSTD_isError(frame) != 0U) {
    return corrupt(std::string("the frame is bad or truncated (") + ZSTD_getErrorName(frame) +
                   "), " + std::to_string(data.size()) + " bytes in all");
  }
  if (frame != data.size()) {
    return corrupt(std::to_string(data.size() - frame) +
                   " bytes after the end of the frame at byte " + std::to_string(frame));
  }

  const std::size_t limit = known                  ? static_cast<std::size_t>(stated)
                            : max_size == SIZE_MAX ? max_size
                                                   : max_size + 1;
  const std::size_t justified =
      data.size() <= SIZE_MAX / 64 ? std::max<std::size_t>(data.size() * 64, 64 * 1024) : SIZE_MAX;
  std::size_t capacity = std::min(limit, justified);
  const std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(),
                                                                        ZSTD_freeDCtx);
  if (context == nullptr) {
    throw std::bad_alloc();
  }
  std::string out;
  for (;;) {
    std::string().swap(out);  // one buffer at a time
    out.resize(capacity);
    const std::size_t written =
        ZSTD_decompressDCtx(context.get(), out.data(), out.size(), data.data(), data.size());
    if (ZSTD_isError(written) == 0U) {
      if (written > max_size) {
        break;
      }
      out.resize(written);
      return out;
    }
    const ZSTD_ErrorCode code = ZSTD_getErrorCode(written);
    if (code == ZSTD_error_memory_allocation) {
      throw std::bad_alloc();
    }
    if (code != ZSTD_error_dstSize_tooSmall) {
      return corrupt(std::string("the frame is bad: ") + ZSTD_getErrorName(written));
    }
    if (capacity >= limit) {
      if (known) {
        return corrupt("the frame holds more than the " + std::to_string(stated) +
                       " bytes it states");
      }
      break;
    }
    capacity = capacity <= limit / 2 ? capacity * 2 : limit;
  }
  return CodecError(CodecErrc::kTooLarge, "zstd: the frame decodes to more than " +
                                              std::to_string(max_size) + " bytes, the limit");
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_ZSTD_HPP_
