// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_FASTLZ_HPP_
#define MEMSHARD_CODECS_DETAIL_FASTLZ_HPP_

// codecs/detail/fastlz.hpp: fastlz_compress and fastlz_decompress, the FastLZ
// block format (levels 1 and 2) of the FastLZ 0.1.0 copy that php-memcached
// bundles and uses by default (flags 0x50, after its 4-byte length).
//
// The format: a sequence of instructions, with no header and no length (the
// caller knows the decompressed length; php-memcached stores it in front).
// * The top 3 bits of the first byte are the level minus 1 (0: level 1, 1:
//   level 2); the first instruction is always a literal run, so its control
//   byte is read with those bits masked off.
// * A control byte below 32 is a literal run of (byte + 1) bytes, 1 to 32.
// * A control byte of 32 or more is a match. Its top 3 bits L give the length
//   L + 2 (3 to 8); when L is 7, extra length follows: one byte at level 1,
//   at level 2 bytes added up while each is 255. Then one byte `low`: the
//   distance back from the end of the output is ((ctrl & 31) << 8) + low + 1.
//   At level 2 only, a distance field of all ones (ctrl & 31 == 31, low ==
//   255) means a far match: a 16-bit big-endian value follows and the
//   distance is that + 8192. The copy may overlap its own output (a run).
// * Level 1 reaches 8192 bytes back and copies at most 264 bytes per match;
//   level 2 reaches 65535 + 8192 bytes back with unbounded lengths.
//
// fastlz_compress writes what php-memcached's fastlz_compress writes, byte
// for byte: greedy matching through a table of 8192 positions hashed on 3
// bytes, level 2 taking runs first and far matches only of 5 bytes or more.
// A 1- to 3-byte input is one literal run with the level-1 marker at either
// level, and an empty input is an empty stream.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// kFastlzMaxLiteral: the longest literal run of one instruction.
inline constexpr std::size_t kFastlzMaxLiteral = 32;
/// kFastlzNear: level 2's longest distance of the 13-bit form (8191); 8192
/// back and beyond takes the far form.
inline constexpr std::size_t kFastlzNear = 8191;
/// kFastlzExpansion: the most output one input byte can produce (a level-2
/// length byte of 255 adds 255 bytes): a decoder never needs more room than
/// 255 times its input.
inline constexpr std::size_t kFastlzExpansion = 255;

/// fastlz_hash: the hash-table slot of the 3 bytes at `at` (13 bits).
[[nodiscard]] inline auto fastlz_hash(const unsigned char* at) noexcept -> std::size_t {
  const unsigned first = at[0] | static_cast<unsigned>(at[1]) << 8U;
  const unsigned second = at[1] | static_cast<unsigned>(at[2]) << 8U;
  return (first ^ second ^ (first >> 3U)) & 8191U;
}

/// fastlz_put_literals: bytes [begin, end) of `in` as literal runs of at most
/// 32 bytes, written at `op`; returns one past the last byte written.
inline auto fastlz_put_literals(char* op, const unsigned char* in, std::size_t begin,
                                std::size_t end) noexcept -> char* {
  while (begin < end) {
    const std::size_t run = std::min(end - begin, kFastlzMaxLiteral);
    *op++ = static_cast<char>(run - 1);
    std::memcpy(op, in + begin, run);
    op += run;
    begin += run;
  }
  return op;
}

/// fastlz_put_match: a match of `length` bytes (3 or more) `distance` bytes
/// back (1 or more), in `level`'s encoding, written at `op`; returns one past
/// the last byte written.
inline auto fastlz_put_match(char* op, int level, std::size_t length, std::size_t distance) noexcept
    -> char* {
  auto put = [&op](std::size_t byte) { *op++ = static_cast<char>(byte & 0xffU); };
  const std::size_t code = distance - 1;
  std::size_t extra = length - 2;  // the 3-bit field's value when below 7
  if (level == 1) {
    // At most 264 bytes per match: longer ones are split into 262-byte parts.
    while (extra > 262) {
      put((7U << 5U) + (code >> 8U));
      put(262 - 7 - 2);
      put(code);
      extra -= 262;
    }
    if (extra < 7) {
      put((extra << 5U) + (code >> 8U));
    } else {
      put((7U << 5U) + (code >> 8U));
      put(extra - 7);
    }
    put(code);
    return op;
  }
  const bool far = code >= kFastlzNear;
  const std::size_t high = far ? 31 : code >> 8U;
  if (extra < 7) {
    put((extra << 5U) + high);
  } else {
    put((7U << 5U) + high);
    for (extra -= 7; extra >= 255; extra -= 255) {
      put(255);
    }
    put(extra);
  }
  if (far) {
    const std::size_t back = code - kFastlzNear;
    put(255);
    put(back >> 8U);
    put(back);
  } else {
    put(code);
  }
  return op;
}

/// fastlz_match_end: the first offset in [at, end) whose byte differs from
/// the one `distance` bytes before it, or `end` (at <= end <= the input's
/// size); compares 8 bytes at a time.
[[nodiscard]] inline auto fastlz_match_end(const unsigned char* in, std::size_t distance,
                                           std::size_t at, std::size_t end) noexcept
    -> std::size_t {
  if constexpr (std::endian::native == std::endian::little ||
                std::endian::native == std::endian::big) {
    for (; end - at >= 8; at += 8) {
      std::uint64_t ahead = 0;
      std::uint64_t back = 0;
      std::memcpy(&ahead, in + at, sizeof ahead);
      std::memcpy(&back, in + at - distance, sizeof back);
      if (const std::uint64_t differ = ahead ^ back; differ != 0) {
        const int bit = std::endian::native == std::endian::little ? std::countr_zero(differ)
                                                                   : std::countl_zero(differ);
        return at + static_cast<std::size_t>(bit) / 8;
      }
    }
  }
  while (at < end && in[at] == in[at - distance]) {
    ++at;
  }
  return at;
}

/// fastlz_compress_indexed: fastlz_compress with hash-table entries of type
/// Index, which must hold every position of `data` (a smaller table is
/// faster to clear and stays in cache).
template <class Index>
[[nodiscard]] auto fastlz_compress_indexed(std::string_view data, int level) -> std::string {
  const std::size_t size = data.size();
  const auto* in = reinterpret_cast<const unsigned char*>(data.data());
  // Room for the longest stream: all literals, one control byte per 32.
  std::string out(size + size / kFastlzMaxLiteral + 8, '\0');
  char* op = out.data();
  // How far back a match may start: level 1 up to 8191 bytes, level 2 up to
  // 65535 + 8189 (the far form could say 65535 + 8192; FastLZ keeps a margin).
  const std::size_t reach = level == 1 ? 8192 : 65535 + kFastlzNear - 1;
  const std::size_t bound = size - 2;  // matches stop growing here
  std::vector<Index> table(8192, 0);
  std::size_t literals = 0;  // the first byte not yet written
  std::size_t pos = 2;       // the first two bytes are always literals
  while (pos + 12 < size) {
    const std::size_t anchor = pos;
    std::size_t distance = 1;
    std::size_t scan = anchor + 3;  // the first byte not known to match
    const bool run = level == 2 && in[anchor - 1] == in[anchor] && in[anchor] == in[anchor + 1] &&
                     in[anchor + 1] == in[anchor + 2];
    if (!run) {
      Index& slot = table[fastlz_hash(in + anchor)];
      const std::size_t ref = slot;
      slot = static_cast<Index>(anchor);
      distance = anchor - ref;
      bool match = distance != 0 && distance < reach && in[ref] == in[anchor] &&
                   in[ref + 1] == in[anchor + 1] && in[ref + 2] == in[anchor + 2];
      if (match && level == 2 && distance >= kFastlzNear) {
        match = in[ref + 3] == in[anchor + 3] && in[ref + 4] == in[anchor + 4];
        scan = anchor + 5;
      }
      if (!match) {
        pos = anchor + 1;
        continue;
      }
    }
    // Extend the match to `end`, one past the first byte that differs, or to
    // `bound`; the match covers [anchor, end - 1). A run checks up to bound;
    // any other match checks at least 8 bytes (anchor + 12 < size), then up to
    // bound.
    std::size_t end = 0;
    if (distance == 1) {
      end = fastlz_match_end(in, 1, scan, bound - 1) + 1;
    } else {
      const std::size_t limit = std::max(bound, scan + 8);
      const std::size_t differs = fastlz_match_end(in, distance, scan, limit);
      end = differs < limit ? differs + 1 : limit;
    }
    const std::size_t length = end - 1 - anchor;
    op = fastlz_put_literals(op, in, literals, anchor);
    op = fastlz_put_match(op, level, length, distance);
    pos = anchor + length;
    literals = pos;
    // Index the last two positions the match covered.
    for (std::size_t at = pos - 2; at < pos && at + 2 < size; ++at) {
      table[fastlz_hash(in + at)] = static_cast<Index>(at);
    }
  }
  op = fastlz_put_literals(op, in, literals, size);
  out.resize(static_cast<std::size_t>(op - out.data()));
  if (level == 2) {
    out[0] = static_cast<char>(static_cast<unsigned char>(out[0]) | 0x20U);
  }
  return out;
}

/// fastlz_compress: `data` as a FastLZ stream of `level` (1, or 2 for any
/// level above 1), byte-identical to FastLZ 0.1.0's fastlz_compress_level.
/// Linear time; the output is at most data.size() + data.size() / 32 + 1
/// bytes.
[[nodiscard]] inline auto fastlz_compress(std::string_view data, int level) -> std::string {
  level = level > 1 ? 2 : 1;
  const std::size_t size = data.size();
  if (size < 4) {
    std::string out;
    if (size > 0) {
      out.push_back(static_cast<char>(size - 1));
      out.append(data);
    }
    return out;
  }
  if (size <= std::size_t{UINT16_MAX} + 1) {
    return fastlz_compress_indexed<std::uint16_t>(data, level);
  }
  if (size <= std::size_t{UINT32_MAX} + 1) {
    return fastlz_compress_indexed<std::uint32_t>(data, level);
  }
  return fastlz_compress_indexed<std::size_t>(data, level);
}

/// fastlz_compress: `data` as php-memcached's fastlz_compress writes it:
/// level 1 below 65536 bytes, level 2 from there on.
[[nodiscard]] inline auto fastlz_compress(std::string_view data) -> std::string {
  return fastlz_compress(data, data.size() < 65536 ? 1 : 2);
}

/// fastlz_decompress: the bytes of the FastLZ stream `data` (level 1 or 2),
/// which must be exactly `expected_size` bytes. kCorrupt for an unknown level,
/// a truncated instruction, a match reaching before the start of the output,
/// and a stream holding more or fewer bytes than expected (decoding stops as
/// soon as it would exceed them). Allocates at most min(expected_size,
/// 255 * data.size()) bytes; never throws except std::bad_alloc.
[[nodiscard]] inline auto fastlz_decompress(std::string_view data, std::size_t expected_size)
    -> CodecResult<std::string> {
  auto corrupt = [](std::size_t at, const std::string& why) {
    return CodecError(CodecErrc::kCorrupt, "fastlz: at byte " + std::to_string(at) + ": " + why);
  };
  auto too_many = [&](std::size_t at) {
    return corrupt(at, "the stream holds more than " + std::to_string(expected_size) +
                           " bytes, the length says " + std::to_string(expected_size));
  };
  auto byte = [&data](std::size_t at) -> std::size_t {
    return static_cast<unsigned char>(data[at]);
  };
  std::string out;
  std::size_t produced = 0;
  // grow: room for `count` more bytes. The buffer starts at what the input
  // can produce, so this only runs if that bound were wrong.
  auto grow = [&](std::size_t count) {
    const std::size_t doubled = out.size() <= SIZE_MAX / 2 ? out.size() * 2 : SIZE_MAX;
    out.resize(std::min(expected_size, std::max(doubled, produced + count)));
  };
  if (!data.empty()) {
    const std::size_t level = (byte(0) >> 5U) + 1;
    if (level > 2) {
      return corrupt(0, "level " + std::to_string(level) + " is unknown (first byte " +
                            std::to_string(byte(0)) + "); FastLZ has levels 1 and 2");
    }
    const std::size_t justified =
        data.size() <= SIZE_MAX / kFastlzExpansion ? data.size() * kFastlzExpansion : SIZE_MAX;
    out.resize(std::min(expected_size, justified));
    std::size_t pos = 1;
    std::size_t ctrl = byte(0) & 31U;
    for (;;) {
      const std::size_t at = pos - 1;  // the control byte
      if (ctrl < 32) {
        const std::size_t run = ctrl + 1;
        if (run > data.size() - pos) {
          return corrupt(at, "a literal run of " + std::to_string(run) + " bytes, but only " +
                                 std::to_string(data.size() - pos) + " bytes are left");
        }
        if (run > expected_size - produced) {
          return too_many(at);
        }
        if (run > out.size() - produced) {
          grow(run);
        }
        data.copy(out.data() + produced, run, pos);
        produced += run;
        pos += run;
      } else {
        auto truncated = [&] {
          return corrupt(
              at, "the match is truncated: the stream ends at byte " + std::to_string(data.size()));
        };
        std::size_t length = (ctrl >> 5U) + 2;
        std::size_t distance = (ctrl & 31U) << 8U;
        if ((ctrl >> 5U) == 7) {
          for (;;) {
            if (pos == data.size()) {
              return truncated();
            }
            const std::size_t extra = byte(pos++);
            length += extra;
            if (level == 1 || extra != 255) {
              break;
            }
            if (length > expected_size - produced) {
              return too_many(at);
            }
          }
        }
        if (pos == data.size()) {
          return truncated();
        }
        const std::size_t low = byte(pos++);
        distance += low + 1;
        if (level == 2 && low == 255 && distance == (31U << 8U) + 256) {
          if (data.size() - pos < 2) {
            return truncated();
          }
          distance = (byte(pos) << 8U) + byte(pos + 1) + kFastlzNear + 1;
          pos += 2;
        }
        if (distance > produced) {
          return corrupt(at, "a match " + std::to_string(distance) + " bytes back, but only " +
                                 std::to_string(produced) + " bytes are decoded");
        }
        if (length > expected_size - produced) {
          return too_many(at);
        }
        if (length > out.size() - produced) {
          grow(length);
        }
        char* const to = out.data() + produced;
        const char* const from = to - distance;
        if (distance >= length) {
          std::copy(from, from + length, to);
        } else {
          for (std::size_t i = 0; i < length; ++i) {  // overlapping: a repeating pattern
            to[i] = from[i];
          }
        }
        produced += length;
      }
      if (pos == data.size()) {
        break;
      }
      ctrl = byte(pos++);
    }
  }
  if (produced != expected_size) {
    return CodecError(CodecErrc::kCorrupt, "fastlz: the stream holds " + std::to_string(produced) +
                                               " bytes, the length says " +
                                               std::to_string(expected_size));
  }
  out.resize(produced);
  return out;
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_FASTLZ_HPP_
