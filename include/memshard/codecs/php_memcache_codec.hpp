// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PHP_MEMCACHE_CODEC_HPP_
#define MEMSHARD_CODECS_PHP_MEMCACHE_CODEC_HPP_

// codecs/php_memcache_codec.hpp: PhpMemcacheCodec, the values PHP's older
// Memcache extension (pecl memcache 3.x and 4.x) stores.
//
// The type is in bits 8-11: 0x000 string, 0x100 boolean ("1" or "0"), 0x300
// integer (decimal text), 0x700 double (PHP's "%.14g": "0.33333333333333",
// "1.0e+21", so a double loses digits on the way through PHP). Bit 0x1 marks
// a PHP serialize() payload (arrays, objects, null), which wins over the type;
// bit 0x2 a zlib stream (RFC 1950, no length prefix). Strings and serialized
// payloads of at least `compress_threshold` bytes (20000), or any length when
// the application asks (MEMCACHE_COMPRESSED), are compressed when that saves
// at least a fifth. The application's own flags live in bits 16-31. The same
// type numbers as spymemcached's, with text instead of binary payloads.
//
// Decoding is stricter than the extension, which reads "12abc" as 12: a
// payload that is not what its type says is an error. An unknown type reads
// as a string, as the extension reads it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/codecs/detail/integer_item.hpp"
#include "memshard/codecs/detail/quote.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/php_serialize.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// PhpMemcacheOptions: the settings of the PHP application (pecl memcache's
/// defaults).
struct PhpMemcacheOptions {
  /// compress_threshold: payloads this long or longer are compressed
  /// (Memcache::setCompressThreshold; 0 turns automatic compression off).
  std::size_t compress_threshold = 20000;
  /// min_savings: the fraction a compressed payload must save to be kept.
  double min_savings = 0.2;
  /// always_compress: every string and serialized payload, whatever its
  /// length (set() with MEMCACHE_COMPRESSED).
  bool always_compress = false;
  /// user_flags: the application's flags, stored in bits 16-31.
  std::uint16_t user_flags = 0;
  DecodeLimits limits;
};

/// PhpMemcacheCodec: pecl memcache's values (a Codec).
class PhpMemcacheCodec {
 public:
  static constexpr std::uint32_t kSerialized = 0x1U;
  static constexpr std::uint32_t kCompressed = 0x2U;
  static constexpr std::uint32_t kBool = 0x100U;
  static constexpr std::uint32_t kLong = 0x300U;
  static constexpr std::uint32_t kDouble = 0x700U;
  static constexpr std::uint32_t kTypeMask = 0x0f00U;
  static constexpr std::uint32_t kUserFlagsShift = 16U;

  PhpMemcacheCodec() = default;
  explicit PhpMemcacheCodec(PhpMemcacheOptions options) : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "php-memcache"; }
  [[nodiscard]] auto options() const noexcept -> const PhpMemcacheOptions& { return options_; }

  /// encode: a string (or bytes) as a string, an integer, double or boolean
  /// as its text, anything else (null, lists, maps, a php-serialize object)
  /// through serialize(); then compression and the user flags.
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    Encoded out;
    bool compressible = false;
    switch (value.kind()) {
      case ValueKind::kString:
      case ValueKind::kBytes:
        out.bytes = value.as_string();
        compressible = true;
        break;
      case ValueKind::kInt:
        out.bytes = std::to_string(value.as_int());
        out.flags = kLong;
        break;
      case ValueKind::kFloat:
        out.bytes = detail::pecl_memcache_float_text(value.as_double());
        out.flags = kDouble;
        break;
      case ValueKind::kBool:
        out.bytes = value.as_bool() ? "1" : "0";
        out.flags = kBool;
        break;
      default: {
        CodecResult<std::string> serialized = php_serialize(value);
        if (!serialized) {
          return serialized.error();
        }
        out.bytes = std::move(serialized).value();
        out.flags = kSerialized;
        compressible = true;
        break;
      }
    }
    if (compressible &&
        (options_.always_compress ||
         (options_.compress_threshold != 0 && out.bytes.size() >= options_.compress_threshold))) {
      // The extension gives zlib a buffer of (1 - min_savings) of the payload:
      // a stream that does not fit is not kept.
      const auto room = static_cast<std::size_t>(static_cast<double>(out.bytes.size()) *
                                                 (1.0 - options_.min_savings));
      detail::deflate_payload(
          out, detail::DeflateFormat::kZlib, -1, kCompressed,
          [room](std::size_t stream, std::size_t /*payload*/) { return stream <= room; });
    }
    out.flags |= std::uint32_t{options_.user_flags} << kUserFlagsShift;
    return out;
  }

  /// decode: the value of an item pecl memcache stored.
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    std::string inflated;
    if ((flags & kCompressed) != 0) {
      if (auto error = detail::inflate_payload("php-memcache", bytes, detail::DeflateFormat::kZlib,
                                               options_.limits.max_size, inflated)) {
        return *error;
      }
    }
    if ((flags & kSerialized) != 0) {
      return php_unserialize(bytes, options_.limits);
    }
    switch (flags & kTypeMask) {
      case kLong:
        if (auto number = detail::integer_item(bytes, "php-memcache: an integer (0x300)")) {
          return *std::move(number);
        }
        return corrupt("an integer (0x300) whose text is not a number", bytes);
      case kDouble:
        if (const auto number = detail::parse_float_text(bytes)) {
          return Value(*number);
        }
        return corrupt("a double (0x700) whose text is not a number", bytes);
      case kBool:
        if (bytes == "1" || bytes == "0" || bytes.empty()) {
          return Value(bytes == "1");
        }
        return corrupt("a boolean (0x100) that is neither \"1\" nor \"0\"", bytes);
      default:
        return Value(std::string(bytes));
    }
  }

 private:
  [[nodiscard]] static auto corrupt(std::string_view what, std::string_view bytes)
      -> CodecResult<Value> {
    return CodecResult<Value>(CodecErrc::kCorrupt, "php-memcache: " + std::string(what) + ": " +
                                                       detail::quote_bytes(bytes));
  }

  PhpMemcacheOptions options_;
};

static_assert(Codec<PhpMemcacheCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PHP_MEMCACHE_CODEC_HPP_
