// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PHP_MEMCACHED_CODEC_HPP_
#define MEMSHARD_CODECS_PHP_MEMCACHED_CODEC_HPP_

// codecs/php_memcached_codec.hpp: PhpMemcachedCodec, the values PHP's
// Memcached extension (php-memcached 3.x) stores.
//
// The flags hold the payload's type in bits 0-3: 0 string, 1 integer (decimal
// text), 2 double (g_fmt text: ".3333333333333333", "1e+21", "Infinity"),
// 3 boolean ("1" or empty), 4 serialize(), 5 igbinary, 6 JSON, 7 msgpack; bits
// 4-7 say how it is compressed: 0x10 compressed, with 0x20 zlib, 0x40 FastLZ or
// 0x80 zstd (3.3.0 and later); bits 16-31 carry the application's user flags
// (OPT_USER_FLAGS). A compressed payload starts with the uncompressed length,
// 4 bytes little-endian. Strings and serialized values are compressed when
// they are at least `compression_threshold` bytes long and the compressed form
// is smaller by more than `compression_factor`; numbers and booleans never.
//
// Decoding reads what every php-memcached 3.x writes, whatever it was set to
// write: the flags say which serializer and which compression. It is stricter
// than the extension, which reads "12abc" as the integer 12: a payload that is
// not what its type says is an error. Bits 8-15 are ignored, as the extension
// ignores them.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/fastlz.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/codecs/detail/integer_item.hpp"
#include "memshard/codecs/detail/quote.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/detail/zstd.hpp"
#include "memshard/codecs/igbinary.hpp"
#include "memshard/codecs/json.hpp"
#include "memshard/codecs/msgpack.hpp"
#include "memshard/codecs/php_serialize.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// PhpSerializer: how php-memcached stores values that are not strings,
/// integers, doubles or booleans (OPT_SERIALIZER, ini memcached.serializer).
enum class PhpSerializer : std::uint8_t {
  kPhp,       ///< serialize() (type 4): Debian's memcached.ini sets it
  kIgbinary,  ///< igbinary (type 5): the extension's own default
  kJson,      ///< json_encode (type 6)
  kMsgpack,   ///< msgpack (type 7)
};

/// PhpCompression: how php-memcached compresses large payloads
/// (OPT_COMPRESSION_TYPE, ini memcached.compression_type).
enum class PhpCompression : std::uint8_t {
  kFastlz,  ///< FastLZ (0x50): the default
  kZlib,    ///< zlib (0x30): read by every php-memcached
  kZstd,    ///< zstd (0x90): read by php-memcached 3.3.0 and later only
  kNone,    ///< never compress (OPT_COMPRESSION false)
};

/// PhpMemcachedOptions: the settings of the PHP application whose values are
/// read and written; the defaults are Debian's php-memcached 3.2.0.
struct PhpMemcachedOptions {
  PhpSerializer serializer = PhpSerializer::kPhp;
  PhpCompression compression = PhpCompression::kFastlz;
  /// compression_threshold: payloads shorter than this are never compressed.
  std::size_t compression_threshold = 2000;
  /// compression_factor: a compressed payload is kept when the original is
  /// longer than the compressed size times this.
  double compression_factor = 1.3;
  /// zlib_level: the zlib level (-1: zlib's default, which 3.2.0 uses; 3.3.0
  /// uses compression_level, 3 by default).
  int zlib_level = -1;
  /// zstd_level: the zstd level (3.3.0's compression_level, 3 by default).
  int zstd_level = 3;
  /// user_flags: the application's flags, stored in bits 16-31 (OPT_USER_FLAGS).
  std::uint16_t user_flags = 0;
  DecodeLimits limits;
};

/// PhpMemcachedCodec: php-memcached's values (a Codec).
///
/// **Example**:
///   PhpMemcachedCodec codec;  // Debian's defaults: serialize(), FastLZ
///   auto rows = codec.decode(item.value, item.flags);  // what $mc->add($key, $rows) stored
class PhpMemcachedCodec {
 public:
  static constexpr std::uint32_t kTypeMask = 0xfU;
  static constexpr std::uint32_t kCompressed = 0x10U;
  static constexpr std::uint32_t kZlib = 0x20U;
  static constexpr std::uint32_t kFastlz = 0x40U;
  static constexpr std::uint32_t kZstd = 0x80U;
  static constexpr std::uint32_t kUserFlagsShift = 16U;

  PhpMemcachedCodec() = default;
  explicit PhpMemcachedCodec(PhpMemcachedOptions options) : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view {
    return "php-memcached";
  }
  [[nodiscard]] auto options() const noexcept -> const PhpMemcachedOptions& { return options_; }

  /// encode: the item php-memcached stores for `value`: a string (or bytes) as
  /// type 0, an integer as 1, a double as 2, a boolean as 3, anything else
  /// (null, lists, maps, a serialized object of the serializer's own format)
  /// through the serializer; then compression, then the user flags.
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    Encoded out;
    bool compressible = true;
    switch (value.kind()) {
      case ValueKind::kString:
      case ValueKind::kBytes:
        out.bytes = value.as_string();
        break;
      case ValueKind::kInt:
        out.bytes = std::to_string(value.as_int());
        out.flags = kTypeLong;
        compressible = false;
        break;
      case ValueKind::kFloat:
        out.bytes = detail::php_gfmt_text(value.as_double());
        out.flags = kTypeDouble;
        compressible = false;
        break;
      case ValueKind::kBool:
        out.bytes = value.as_bool() ? "1" : "";
        out.flags = kTypeBool;
        compressible = false;
        break;
      default: {
        CodecResult<std::string> serialized = serialize(value);
        if (!serialized) {
          return serialized.error();
        }
        out.bytes = std::move(serialized).value();
        out.flags = serializer_type();
        break;
      }
    }
    if (compressible && options_.compression != PhpCompression::kNone && !out.bytes.empty() &&
        out.bytes.size() >= options_.compression_threshold) {
      compress(out);
    }
    out.flags |= std::uint32_t{options_.user_flags} << kUserFlagsShift;
    return out;
  }

  /// decode: the value of an item php-memcached stored, whatever serializer
  /// and compression wrote it (the flags say which).
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    std::string inflated;
    if ((flags & kCompressed) != 0) {
      CodecResult<std::string> payload = decompress(bytes, flags);
      if (!payload) {
        return payload.error();
      }
      inflated = std::move(payload).value();
      bytes = inflated;
    }
    const std::uint32_t type = flags & kTypeMask;
    switch (type) {
      case kTypeString:
        return Value(std::string(bytes));
      case kTypeLong:
        if (auto number = detail::integer_item(bytes, "php-memcached: an integer (type 1)")) {
          return *std::move(number);
        }
        return fail(CodecErrc::kCorrupt, "an integer (type 1) whose text is not a number", bytes);
      case kTypeDouble: {
        const auto number = detail::parse_float_text(bytes);
        if (!number) {
          return fail(CodecErrc::kCorrupt, "a double (type 2) whose text is not a number", bytes);
        }
        return Value(*number);
      }
      case kTypeBool:
        if (bytes.empty() || bytes == "0") {
          return Value(false);
        }
        if (bytes == "1") {
          return Value(true);
        }
        return fail(CodecErrc::kCorrupt, "a boolean (type 3) that is neither \"1\" nor empty",
                    bytes);
      case kTypeSerialized:
        return php_unserialize(bytes, options_.limits);
      case kTypeIgbinary:
        return igbinary_unserialize(bytes, options_.limits);
      case kTypeJson:
        return json_decode(bytes, options_.limits);
      case kTypeMsgpack:
        return msgpack_decode(bytes, options_.limits);
      default:
        return CodecResult<Value>(CodecErrc::kUnknownFlags,
                                  "php-memcached: flags " + hex(flags) + " hold the type " +
                                      std::to_string(type) +
                                      ", which php-memcached does not know (0 to 7)");
    }
  }

 private:
  static constexpr std::uint32_t kTypeString = 0;
  static constexpr std::uint32_t kTypeLong = 1;
  static constexpr std::uint32_t kTypeDouble = 2;
  static constexpr std::uint32_t kTypeBool = 3;
  static constexpr std::uint32_t kTypeSerialized = 4;
  static constexpr std::uint32_t kTypeIgbinary = 5;
  static constexpr std::uint32_t kTypeJson = 6;
  static constexpr std::uint32_t kTypeMsgpack = 7;
  static constexpr std::size_t kLengthPrefix = 4;

  [[nodiscard]] static auto hex(std::uint32_t number) -> std::string {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text;
    do {
      text.insert(text.begin(), kDigits[number & 0xfU]);
      number >>= 4U;
    } while (number != 0);
    return "0x" + text;
  }

  [[nodiscard]] static auto fail(CodecErrc code, std::string_view what, std::string_view bytes)
      -> CodecResult<Value> {
    return CodecResult<Value>(
        code, "php-memcached: " + std::string(what) + ": " + detail::quote_bytes(bytes));
  }

  [[nodiscard]] auto serializer_type() const noexcept -> std::uint32_t {
    switch (options_.serializer) {
      case PhpSerializer::kIgbinary:
        return kTypeIgbinary;
      case PhpSerializer::kJson:
        return kTypeJson;
      case PhpSerializer::kMsgpack:
        return kTypeMsgpack;
      case PhpSerializer::kPhp:
      default:
        return kTypeSerialized;
    }
  }

  [[nodiscard]] auto serialize(const Value& value) const -> CodecResult<std::string> {
    switch (options_.serializer) {
      case PhpSerializer::kIgbinary:
        return igbinary_serialize(value);
      case PhpSerializer::kJson:
        return json_encode(value, JsonStyle::kPhp);
      case PhpSerializer::kMsgpack:
        return msgpack_encode(value);
      case PhpSerializer::kPhp:
      default:
        return php_serialize(value);
    }
  }

  // compress: `out` compressed as the extension does, when that saves more
  // than compression_factor; unchanged otherwise.
  void compress(Encoded& out) const {
    std::string stream;
    std::uint32_t method = 0;
    switch (options_.compression) {
      case PhpCompression::kFastlz:
        stream = detail::fastlz_compress(out.bytes);
        method = kFastlz;
        break;
      case PhpCompression::kZlib:
        stream =
            detail::deflate_bytes(out.bytes, detail::DeflateFormat::kZlib, options_.zlib_level);
        method = kZlib;
        break;
      case PhpCompression::kZstd:
        stream = detail::zstd_compress(out.bytes, options_.zstd_level);
        method = kZstd;
        break;
      case PhpCompression::kNone:
      default:
        return;
    }
    if (stream.empty() || out.bytes.size() > 0xffffffffU ||
        static_cast<double>(out.bytes.size()) <=
            static_cast<double>(stream.size()) * options_.compression_factor) {
      return;
    }
    const auto length = static_cast<std::uint32_t>(out.bytes.size());
    std::string payload(kLengthPrefix, '\0');
    for (std::size_t i = 0; i < kLengthPrefix; ++i) {
      payload[i] = static_cast<char>(length >> (8U * i) & 0xffU);
    }
    payload += stream;
    out.bytes = std::move(payload);
    out.flags |= kCompressed | method;
  }

  // decompress: the payload of a compressed item: its length prefix, then
  // the stream its flags name (FastLZ first, as the extension checks).
  [[nodiscard]] auto decompress(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<std::string> {
    if ((flags & (kFastlz | kZlib | kZstd)) == 0) {
      return CodecResult<std::string>(
          CodecErrc::kUnknownFlags,
          "php-memcached: flags " + hex(flags) +
              " say compressed (0x10) but name no compression (0x20 zlib, 0x40 FastLZ, 0x80 zstd)");
    }
    if (bytes.size() < kLengthPrefix) {
      return CodecResult<std::string>(
          CodecErrc::kCorrupt, "php-memcached: a compressed payload of " +
                                   std::to_string(bytes.size()) + " bytes has no 4-byte length");
    }
    std::uint32_t length = 0;
    for (std::size_t i = 0; i < kLengthPrefix; ++i) {
      length |= std::uint32_t{static_cast<unsigned char>(bytes[i])} << (8U * i);
    }
    const std::string_view stream = bytes.substr(kLengthPrefix);
    if (length > options_.limits.max_size) {
      return CodecResult<std::string>(
          CodecErrc::kTooLarge, "php-memcached: the length prefix says " + std::to_string(length) +
                                    " bytes, more than the " +
                                    std::to_string(options_.limits.max_size) + " allowed");
    }
    CodecResult<std::string> out =
        (flags & kFastlz) != 0 ? detail::fastlz_decompress(stream, length)
        : (flags & kZlib) != 0 ? detail::inflate_bytes(stream, detail::DeflateFormat::kZlib,
                                                       std::size_t{length} + 1, length)
                               : detail::zstd_decompress(stream, std::size_t{length} + 1);
    if (!out) {
      return CodecResult<std::string>(out.code(), "php-memcached: " + out.error().message());
    }
    if (out->size() != length) {
      return CodecResult<std::string>(
          CodecErrc::kCorrupt, "php-memcached: the length prefix says " + std::to_string(length) +
                                   " bytes, the stream holds " +
                                   (out->size() > length ? "more" : std::to_string(out->size())));
    }
    return out;
  }

  PhpMemcachedOptions options_;
};

static_assert(Codec<PhpMemcachedCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PHP_MEMCACHED_CODEC_HPP_
