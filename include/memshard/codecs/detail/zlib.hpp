// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_ZLIB_HPP_
#define MEMSHARD_CODECS_DETAIL_ZLIB_HPP_

// codecs/detail/zlib.hpp: deflate_bytes and inflate_bytes, the zlib (RFC 1950)
// and gzip (RFC 1952) streams the peer clients store, over zlib (link -lz).
//
// What the clients write, and what deflate_bytes reproduces byte for byte:
// * zlib: php-memcached (0x30, after its 4-byte length), pecl memcache (0x2),
//   python-memcache and pylibmc (0x8) and Dalli (0x2) all write what zlib's
//   compress2() writes at the default level (6, memLevel 8, window 15).
// * gzip: spymemcached (Java's GZIPOutputStream: level 6, memLevel 8) and
//   Cache::Memcached(::Fast) (Compress::Zlib::memGzip: level 9, memLevel 9)
//   both write the fixed 10-byte header 1f 8b 08 00 00 00 00 00 00 ff: no
//   flags, mtime 0, XFL 0 (also at level 9, where zlib's own gzip writer puts
//   2) and OS 255, then raw deflate, the CRC-32 and the length mod 2^32 (both
//   little-endian). deflate_bytes(kGzip) writes that header and uses memLevel
//   9 at level 9 and 8 otherwise, which reproduces both writers (memLevel
//   changes the deflate stream of larger inputs).
// * Dalli's GzipCompressor (Ruby's GzipWriter) writes the current time and OS
//   3: its bytes are not reproducible, but inflate_bytes reads them.
//
// inflate_bytes reads exactly one stream: zlib's gzip mode (windowBits 31)
// handles the optional gzip header fields (FEXTRA, FNAME, FCOMMENT, FHCRC) and
// refuses reserved flag bits; bytes after the end of the stream (a second
// gzip member included) are an error. Output is bounded: it stops at
// max_size + 1 bytes and never holds a buffer larger than that.
//
// inflate_payload and deflate_payload are what the client codecs do with an
// item's payload: read it compressed, and store it compressed when that saves
// what the client asks.

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// DeflateFormat: the wrapper around a deflate stream.
enum class DeflateFormat : std::uint8_t {
  kZlib,  ///< RFC 1950: 2-byte header, deflate, Adler-32
  kGzip,  ///< RFC 1952: 10-byte header (at least), deflate, CRC-32, length
};

/// deflate_format_name: "zlib" or "gzip", the prefix of every message.
[[nodiscard]] constexpr auto deflate_format_name(DeflateFormat format) noexcept
    -> std::string_view {
  return format == DeflateFormat::kGzip ? "gzip" : "zlib";
}

/// zlib_chunk: `size` capped at what one zlib call takes (uInt).
[[nodiscard]] constexpr auto zlib_chunk(std::size_t size) noexcept -> uInt {
  return static_cast<uInt>(std::min<std::size_t>(size, UINT_MAX));
}

/// zlib_input: `data` as zlib's (non-const) input pointer; zlib only reads it.
[[nodiscard]] inline auto zlib_input(std::string_view data, std::size_t offset) noexcept -> Bytef* {
  return reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + offset));
}

/// zlib_output: the byte `offset` of `buffer` as zlib's output pointer.
[[nodiscard]] inline auto zlib_output(char* buffer, std::size_t offset) noexcept -> Bytef* {
  return reinterpret_cast<Bytef*>(buffer + offset);
}

/// grow_buffer: `out` resized to `size` bytes, starting with the `used`
/// bytes at `from` (its own, or another buffer's); the new buffer is
/// allocated at exactly `size` (std::string's own growth may double past it).
inline void grow_buffer(std::string& out, const char* from, std::size_t used, std::size_t size) {
  std::string bigger;
  bigger.reserve(size);
  bigger.append(from, used);
  bigger.resize(size);
  out.swap(bigger);
}

/// kInflateFirstBuffer: the least room inflate_bytes first gives an output of
/// unknown size (32 KiB, zlib's window: an output that needs a second call
/// makes zlib allocate that much anyway).
inline constexpr std::size_t kInflateFirstBuffer = std::size_t{32} << 10U;

/// ZStreamOwner: a z_stream that ends itself (deflateEnd or inflateEnd).
template <int (*End)(z_streamp)>
class ZStreamOwner {
 public:
  ZStreamOwner() = default;
  ZStreamOwner(const ZStreamOwner&) = delete;
  auto operator=(const ZStreamOwner&) -> ZStreamOwner& = delete;
  ~ZStreamOwner() {
    if (started) {
      End(&stream);
    }
  }

  z_stream stream{};
  bool started = false;
};

/// deflate_bytes: `data` compressed as a zlib or gzip stream at `level`
/// (0-9; -1 is Z_DEFAULT_COMPRESSION, 6; a level below -1 means -1 and one
/// above 9 means 9). kZlib is byte-identical to compress2(level); kGzip
/// writes the header 1f 8b 08 00 00 00 00 00 00 ff (mtime 0, XFL 0, OS 255),
/// as Java's GZIPOutputStream (level -1) and Perl's memGzip (level 9) do, and
/// reproduces both. Throws std::bad_alloc when memory runs out; compressing
/// cannot fail otherwise.
[[nodiscard]] inline auto deflate_bytes(std::string_view data, DeflateFormat format, int level)
    -> std::string {
  const bool gzip = format == DeflateFormat::kGzip;
  const int chosen = level < 0 ? Z_DEFAULT_COMPRESSION : std::min(level, 9);
  const int mem_level = gzip && chosen == 9 ? 9 : 8;
  ZStreamOwner<deflateEnd> owner;
  z_stream& stream = owner.stream;
  const int init =
      deflateInit2_(&stream, chosen, Z_DEFLATED, gzip ? -MAX_WBITS : MAX_WBITS, mem_level,
                    Z_DEFAULT_STRATEGY, ZLIB_VERSION, static_cast<int>(sizeof(z_stream)));
  if (init == Z_MEM_ERROR) {
    throw std::bad_alloc();
  }
  if (init != Z_OK) {
    throw std::logic_error("memshard: zlib deflateInit2 failed (" + std::to_string(init) + ")");
  }
  owner.started = true;

  const std::size_t header = gzip ? 10 : 0;
  const std::size_t trailer = gzip ? 8 : 0;
  std::size_t bound = data.size() + data.size() / 8 + 1024;
  if (data.size() <= ULONG_MAX) {
    bound = static_cast<std::size_t>(deflateBound(&stream, static_cast<uLong>(data.size())));
  }
  std::string out(header + bound + trailer, '\0');  // room for the trailer: no reallocation
  if (gzip) {
    constexpr unsigned char kHeader[10] = {0x1f, 0x8b, 0x08, 0x00, 0x00,
                                           0x00, 0x00, 0x00, 0x00, 0xff};
    for (std::size_t i = 0; i < sizeof kHeader; ++i) {
      out[i] = static_cast<char>(kHeader[i]);
    }
  }
  std::size_t used = header;
  std::size_t fed = 0;
  for (;;) {
    if (stream.avail_in == 0 && fed < data.size()) {
      stream.next_in = zlib_input(data, fed);
      stream.avail_in = zlib_chunk(data.size() - fed);
      fed += stream.avail_in;
    }
    if (used == out.size()) {
      grow_buffer(out, out.data(), used, out.size() + out.size() / 2 + 1024);
    }
    const uInt room = zlib_chunk(out.size() - used);
    stream.next_out = zlib_output(out.data(), used);
    stream.avail_out = room;
    const int done = deflate(&stream, fed == data.size() ? Z_FINISH : Z_NO_FLUSH);
    used += room - stream.avail_out;
    if (done == Z_STREAM_END) {
      break;
    }
    if (done != Z_OK && done != Z_BUF_ERROR) {
      throw std::logic_error("memshard: zlib deflate failed (" + std::to_string(done) + ")");
    }
  }
  out.resize(used);
  if (gzip) {
    const auto crc = static_cast<std::uint32_t>(
        crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
    const auto length = static_cast<std::uint32_t>(data.size() & 0xffffffffU);
    for (const std::uint32_t word : {crc, length}) {
      for (unsigned shift = 0; shift < 32; shift += 8) {
        out.push_back(static_cast<char>((word >> shift) & 0xffU));
      }
    }
  }
  return out;
}

/// inflate_bytes: the bytes of the zlib or gzip stream `data`, which must be
/// exactly one stream. kCorrupt for a bad or truncated stream (with zlib's
/// message and the byte offset), for bytes after its end and for a gzip
/// header zlib refuses (reserved flag bits); kTooLarge when the output would
/// exceed `max_size` (inflating stops at max_size + 1 bytes, and no buffer
/// larger than that is allocated). `stated_size`: the output's size as the
/// caller's framing states it (php-memcached's length prefix), or 0 for
/// none: the first buffer, as a gzip trailer's is, when deflate could reach
/// it from this input. Throws only std::bad_alloc.
[[nodiscard]] inline auto inflate_bytes(std::string_view data, DeflateFormat format,
                                        std::size_t max_size, std::size_t stated_size = 0)
    -> CodecResult<std::string> {
  const std::string name(deflate_format_name(format));
  ZStreamOwner<inflateEnd> owner;
  z_stream& stream = owner.stream;
  const int init =
      inflateInit2_(&stream, format == DeflateFormat::kGzip ? MAX_WBITS + 16 : MAX_WBITS,
                    ZLIB_VERSION, static_cast<int>(sizeof(z_stream)));
  if (init == Z_MEM_ERROR) {
    throw std::bad_alloc();
  }
  if (init != Z_OK) {
    return CodecError(CodecErrc::kUnsupported,
                      name + ": zlib refused to start inflating (" + std::to_string(init) + ")");
  }
  owner.started = true;

  const std::size_t limit = max_size == SIZE_MAX ? max_size : max_size + 1;
  auto too_large = [&] {
    return CodecError(CodecErrc::kTooLarge, name + ": the data inflates to more than " +
                                                std::to_string(max_size) + " bytes, the limit");
  };
  // The first buffer: the length the caller or a gzip trailer states when
  // deflate could reach it from this input (at most 1032:1), as a string of
  // that size; otherwise 4 times the input and at least kInflateFirstBuffer,
  // left uninitialised (most of it may stay unused) and copied out at the end.
  std::size_t stated = stated_size;
  bool known = stated_size != 0 && stated_size / 1032 <= data.size();
  if (!known && format == DeflateFormat::kGzip && data.size() >= 18) {
    std::size_t trailer = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      trailer |= std::size_t{static_cast<unsigned char>(data[data.size() - 4 + i])} << (8 * i);
    }
    known = trailer / 1032 <= data.size();
    stated = trailer;
  }
  std::string out;
  std::unique_ptr<char[]> first;
  std::size_t room_size = 0;  // the bytes of the buffer zlib writes to
  if (known) {
    out.resize(std::min(stated, limit - 1) + 1);
    room_size = out.size();
  } else {
    const std::size_t guess = data.size() <= SIZE_MAX / 4 ? data.size() * 4 : SIZE_MAX;
    room_size = std::min(std::max(guess, kInflateFirstBuffer), limit);
    first = std::make_unique_for_overwrite<char[]>(room_size);
  }
  std::size_t used = 0;
  std::size_t fed = 0;
  for (;;) {
    if (stream.avail_in == 0 && fed < data.size()) {
      stream.next_in = zlib_input(data, fed);
      stream.avail_in = zlib_chunk(data.size() - fed);
      fed += stream.avail_in;
    }
    if (used == room_size) {
      if (room_size >= limit) {
        return too_large();
      }
      const std::size_t doubled = room_size <= SIZE_MAX / 2 ? room_size * 2 : SIZE_MAX;
      grow_buffer(out, first ? first.get() : out.data(), used,
                  std::min(std::max<std::size_t>(doubled, 256), limit));
      first.reset();
      room_size = out.size();
    }
    const uInt room = zlib_chunk(room_size - used);
    stream.next_out = zlib_output(first ? first.get() : out.data(), used);
    stream.avail_out = room;
    // Z_FINISH once all the input is in: a stream that ends in this call
    // needs no window (zlib otherwise copies the output into one); one that
    // does not goes on as with Z_NO_FLUSH.
    const int done = inflate(&stream, fed == data.size() ? Z_FINISH : Z_NO_FLUSH);
    used += room - stream.avail_out;
    if (done == Z_STREAM_END) {
      break;
    }
    if (done == Z_OK || (done == Z_BUF_ERROR &&
                         (stream.avail_out == 0 || (stream.avail_in == 0 && fed < data.size())))) {
      continue;
    }
    if (done == Z_BUF_ERROR && stream.avail_in == 0) {
      return CodecError(CodecErrc::kCorrupt, name + ": truncated: the input ends at byte " +
                                                 std::to_string(data.size()) +
                                                 ", before the end of the stream");
    }
    if (done == Z_MEM_ERROR) {
      throw std::bad_alloc();
    }
    std::string why = stream.msg != nullptr ? std::string(stream.msg) : std::string();
    if (done == Z_NEED_DICT) {
      why = "the stream needs a preset dictionary";
    } else if (why.empty()) {
      why = "zlib error " + std::to_string(done);
    }
    return CodecError(CodecErrc::kCorrupt,
                      name + ": at byte " + std::to_string(fed - stream.avail_in) + ": " + why);
  }
  if (used > max_size) {
    return too_large();
  }
  const std::size_t consumed = fed - stream.avail_in;
  if (consumed != data.size()) {
    return CodecError(CodecErrc::kCorrupt, name + ": " + std::to_string(data.size() - consumed) +
                                               " bytes after the end of the stream at byte " +
                                               std::to_string(consumed));
  }
  if (first) {
    return std::string(first.get(), used);
  }
  out.resize(used);
  return out;
}

/// inflate_payload: what a codec does with a compressed item: `bytes`
/// inflated (at most `max_size`) into `storage`, then `bytes` made to view it;
/// the error, with the codec's name in front ("dalli: zlib: ..."), when the
/// stream is bad.
[[nodiscard]] inline auto inflate_payload(std::string_view codec, std::string_view& bytes,
                                          DeflateFormat format, std::size_t max_size,
                                          std::string& storage) -> std::optional<CodecError> {
  CodecResult<std::string> data = inflate_bytes(bytes, format, max_size);
  if (!data) {
    return CodecError(data.code(), std::string(codec) + ": " + data.error().message());
  }
  storage = std::move(data).value();
  bytes = storage;
  return std::nullopt;
}

/// deflate_payload: what a codec does with an item it may store compressed:
/// `out.bytes` deflated (`format`, `level`) and `flag` added to `out.flags`
/// when `keeps(stream size, payload size)` accepts the stream; `out` unchanged
/// otherwise.
template <class Keeps>
void deflate_payload(Encoded& out, DeflateFormat format, int level, std::uint32_t flag,
                     Keeps keeps) {
  std::string stream = deflate_bytes(out.bytes, format, level);
  if (keeps(stream.size(), out.bytes.size())) {
    out.bytes = std::move(stream);
    out.flags |= flag;
  }
}

/// deflate_payload: the same, keeping the stream when it is smaller than the
/// payload.
inline void deflate_payload(Encoded& out, DeflateFormat format, int level, std::uint32_t flag) {
  deflate_payload(out, format, level, flag,
                  [](std::size_t stream, std::size_t payload) { return stream < payload; });
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_ZLIB_HPP_
