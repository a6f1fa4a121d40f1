// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PYTHON_MEMCACHE_CODEC_HPP_
#define MEMSHARD_CODECS_PYTHON_MEMCACHE_CODEC_HPP_

// codecs/python_memcache_codec.hpp: PythonMemcacheCodec, the values Python's
// python-memcache (the `memcache` module, 1.5x) stores.
//
// Flags 0 hold bytes, 0x10 a str as UTF-8, 0x2 an int as decimal text (0x4, a
// Python 2 long, likewise); everything else (floats, booleans, None, lists,
// dicts) is a pickle (0x1), protocol 0 unless the application chose another.
// Bit 0x8 marks a zlib stream (RFC 1950), written only when the application
// passes min_compress_len and the payload is longer, and kept only when
// smaller; ints are never compressed. Any other flags make python-memcache
// raise ValueError: they are kUnknownFlags here.
//
// Pickles are read by a restricted reader that builds values and never
// imports or calls anything: a pickle of a class instance reads as a
// serialized value ("pickle").

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/integer_item.hpp"
#include "memshard/codecs/detail/quote.hpp"
#include "memshard/codecs/detail/utf8.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/pickle.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// PythonMemcacheOptions: the client's settings (python-memcache's defaults).
struct PythonMemcacheOptions {
  /// pickle_protocol: Client(pickleProtocol=...); 0 by default.
  int pickle_protocol = 0;
  /// min_compress_len: set(..., min_compress_len=N): payloads longer than N are
  /// zlib-compressed when smaller; 0 (the default) never compresses.
  std::size_t min_compress_len = 0;
  DecodeLimits limits;
};

/// PythonMemcacheCodec: python-memcache's values (a Codec).
class PythonMemcacheCodec {
 public:
  static constexpr std::uint32_t kPickle = 0x1U;
  static constexpr std::uint32_t kInteger = 0x2U;
  static constexpr std::uint32_t kLong = 0x4U;
  static constexpr std::uint32_t kCompressed = 0x8U;
  static constexpr std::uint32_t kText = 0x10U;

  PythonMemcacheCodec() = default;
  explicit PythonMemcacheCodec(PythonMemcacheOptions options) : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view {
    return "python-memcache";
  }
  [[nodiscard]] auto options() const noexcept -> const PythonMemcacheOptions& { return options_; }

  /// encode: bytes as bytes, a string as a str (it must be UTF-8), an integer
  /// as an int, everything else pickled.
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    Encoded out;
    bool compressible = true;
    switch (value.kind()) {
      case ValueKind::kBytes:
        out.bytes = value.as_string();
        break;
      case ValueKind::kString:
        if (!detail::is_utf8(value.as_string())) {
          return CodecResult<Encoded>(CodecErrc::kNotEncodable,
                                      "python-memcache: a str must be UTF-8; store bytes instead");
        }
        out.bytes = value.as_string();
        out.flags = kText;
        break;
      case ValueKind::kInt:
        out.bytes = std::to_string(value.as_int());
        out.flags = kInteger;
        compressible = false;
        break;
      default: {
        CodecResult<std::string> pickled = pickle_dumps(value, options_.pickle_protocol);
        if (!pickled) {
          return pickled.error();
        }
        out.bytes = std::move(pickled).value();
        out.flags = kPickle;
        break;
      }
    }
    if (compressible && options_.min_compress_len != 0 &&
        out.bytes.size() > options_.min_compress_len) {
      detail::deflate_payload(out, detail::DeflateFormat::kZlib, -1, kCompressed);
    }
    return out;
  }

  /// decode: the value of an item python-memcache stored.
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    std::string inflated;
    if ((flags & kCompressed) != 0) {
      if (auto error =
              detail::inflate_payload("python-memcache", bytes, detail::DeflateFormat::kZlib,
                                      options_.limits.max_size, inflated)) {
        return *error;
      }
      flags &= ~kCompressed;
    }
    if (flags == 0) {
      return Value::bytes(std::string(bytes));
    }
    if ((flags & kText) != 0) {
      if (!detail::is_utf8(bytes)) {
        return CodecResult<Value>(CodecErrc::kCorrupt,
                                  "python-memcache: a str (0x10) that is not UTF-8 (at byte " +
                                      std::to_string(detail::utf8_error_at(bytes)) + ")");
      }
      return Value(std::string(bytes));
    }
    if ((flags & (kInteger | kLong)) != 0) {
      if (auto number = detail::integer_item(bytes, "python-memcache: an int")) {
        return *std::move(number);
      }
      return CodecResult<Value>(CodecErrc::kCorrupt,
                                "python-memcache: an int (0x2) whose text is not a number: " +
                                    detail::quote_bytes(bytes));
    }
    if ((flags & kPickle) != 0) {
      return pickle_loads(bytes, options_.limits);
    }
    return CodecResult<Value>(CodecErrc::kUnknownFlags,
                              "python-memcache: flags " + std::to_string(flags) +
                                  " are none it writes (python-memcache raises ValueError)");
  }

 private:
  PythonMemcacheOptions options_;
};

static_assert(Codec<PythonMemcacheCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PYTHON_MEMCACHE_CODEC_HPP_
