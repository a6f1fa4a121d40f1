// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PYLIBMC_CODEC_HPP_
#define MEMSHARD_CODECS_PYLIBMC_CODEC_HPP_

// codecs/pylibmc_codec.hpp: PylibmcCodec, the values Python's pylibmc (1.6,
// over libmemcached) stores.
//
// Flags 0 hold bytes, 0x10 a str as UTF-8, 0x4 an int as decimal text, 0x2 a
// bool as "1" or "0" (which pylibmc reads back as the int 1 or 0: there is no
// bool here either); everything else is a pickle (0x1) of the highest
// protocol, 5. Bit 0x8 marks a zlib stream, written only when the application
// passes min_compress_len and the payload is at least that long, and kept only
// when smaller. Flags of other types make pylibmc raise "unknown memcached key
// flags": kUnknownFlags here.

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

/// PylibmcOptions: the client's settings (pylibmc's defaults).
struct PylibmcOptions {
  /// pickle_protocol: pickle.HIGHEST_PROTOCOL of the writer's Python (5).
  int pickle_protocol = 5;
  /// min_compress_len: set(..., min_compress_len=N): payloads of at least N
  /// bytes are zlib-compressed when smaller; 0 (the default) never compresses.
  std::size_t min_compress_len = 0;
  DecodeLimits limits;
};

/// PylibmcCodec: pylibmc's values (a Codec).
class PylibmcCodec {
 public:
  static constexpr std::uint32_t kPickle = 0x1U;
  static constexpr std::uint32_t kInteger = 0x2U;
  static constexpr std::uint32_t kLong = 0x4U;
  static constexpr std::uint32_t kCompressed = 0x8U;
  static constexpr std::uint32_t kText = 0x10U;
  static constexpr std::uint32_t kTypes = kPickle | kInteger | kLong | kText;

  PylibmcCodec() = default;
  explicit PylibmcCodec(PylibmcOptions options) : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "pylibmc"; }
  [[nodiscard]] auto options() const noexcept -> const PylibmcOptions& { return options_; }

  /// encode: bytes as bytes, a string as a str (it must be UTF-8), an integer
  /// as 0x4 text, a boolean as 0x2 "1"/"0", everything else pickled.
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    Encoded out;
    switch (value.kind()) {
      case ValueKind::kBytes:
        out.bytes = value.as_string();
        break;
      case ValueKind::kString:
        if (!detail::is_utf8(value.as_string())) {
          return CodecResult<Encoded>(CodecErrc::kNotEncodable,
                                      "pylibmc: a str must be UTF-8; store bytes instead");
        }
        out.bytes = value.as_string();
        out.flags = kText;
        break;
      case ValueKind::kInt:
        out.bytes = std::to_string(value.as_int());
        out.flags = kLong;
        break;
      case ValueKind::kBool:
        out.bytes = value.as_bool() ? "1" : "0";
        out.flags = kInteger;
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
    if (options_.min_compress_len != 0 && out.bytes.size() >= options_.min_compress_len) {
      detail::deflate_payload(out, detail::DeflateFormat::kZlib, -1, kCompressed);
    }
    return out;
  }

  /// decode: the value of an item pylibmc stored.
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    std::string inflated;
    if ((flags & kCompressed) != 0) {
      if (auto error = detail::inflate_payload("pylibmc", bytes, detail::DeflateFormat::kZlib,
                                               options_.limits.max_size, inflated)) {
        return *error;
      }
    }
    switch (flags & kTypes) {
      case 0:
        return Value::bytes(std::string(bytes));
      case kText:
        if (!detail::is_utf8(bytes)) {
          return CodecResult<Value>(CodecErrc::kCorrupt,
                                    "pylibmc: a str (0x10) that is not UTF-8 (at byte " +
                                        std::to_string(detail::utf8_error_at(bytes)) + ")");
        }
        return Value(std::string(bytes));
      case kInteger:
      case kLong:
        if (auto number = detail::integer_item(bytes, "pylibmc: an int")) {
          return *std::move(number);
        }
        return CodecResult<Value>(
            CodecErrc::kCorrupt,
            "pylibmc: an int whose text is not a number: " + detail::quote_bytes(bytes));
      case kPickle:
        return pickle_loads(bytes, options_.limits);
      default:
        return CodecResult<Value>(CodecErrc::kUnknownFlags,
                                  "pylibmc: flags " + std::to_string(flags) +
                                      " combine types pylibmc does not know (\"unknown memcached "
                                      "key flags\")");
    }
  }

 private:
  PylibmcOptions options_;
};

static_assert(Codec<PylibmcCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PYLIBMC_CODEC_HPP_
