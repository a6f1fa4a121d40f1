// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_SPYMEMCACHED_CODEC_HPP_
#define MEMSHARD_CODECS_SPYMEMCACHED_CODEC_HPP_

// codecs/spymemcached_codec.hpp: SpymemcachedCodec, the values Java's
// spymemcached stores through its default SerializingTranscoder.
//
// Flags 0 hold a UTF-8 String. Other types are in bits 8-15: 0x100 Boolean
// ("1" or "0"), 0x200 Integer, 0x300 Long, 0x400 Date (milliseconds), 0x500
// Byte, 0x600 Float, 0x700 Double, 0x800 byte[]. Numbers are big-endian two's
// complement with their leading zero bytes dropped (0 is empty, 42 is one byte
// 0x2a, -7 as an Integer is ff ff ff f9); a Float or Double is its IEEE 754
// bits written the same way. Bit 0x1 marks a Java-serialized object
// (ObjectOutputStream, `ac ed 00 05`), which wins over the type; bit 0x2 a
// gzip stream (GZIPOutputStream: mtime 0, OS 255). Anything longer than the
// compression threshold (16384 bytes) is compressed when that makes it
// smaller, except a String that looks like JSON (it starts with '{' or '[',
// is "true", "false" or "null", or is a decimal integer), which spymemcached
// never compresses.
//
// A Java object is recognised, not decoded: it reads as a serialized value
// ("java-serialization") and writes back unchanged. A Date reads as its
// milliseconds. An unknown type reads as kUnknownFlags (spymemcached logs it
// and returns null).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/java_serialization.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// SpymemcachedIntegers: the Java type an integer is written as.
enum class SpymemcachedIntegers : std::uint8_t {
  kIntegerWhenItFits,  ///< Integer (0x200) when it fits 32 bits, Long (0x300) otherwise
  kLong,               ///< always Long (0x300)
};

/// SpymemcachedOptions: the transcoder's settings (SerializingTranscoder's
/// defaults).
struct SpymemcachedOptions {
  /// compression_threshold: values longer than this are gzipped when smaller.
  std::size_t compression_threshold = 16384;
  SpymemcachedIntegers integers = SpymemcachedIntegers::kIntegerWhenItFits;
  /// gzip_level: the deflate level (-1: java.util.zip's default, level 6).
  int gzip_level = -1;
  DecodeLimits limits;
};

/// SpymemcachedCodec: spymemcached's values (a Codec).
class SpymemcachedCodec {
 public:
  static constexpr std::uint32_t kSerialized = 0x1U;
  static constexpr std::uint32_t kCompressed = 0x2U;
  static constexpr std::uint32_t kBoolean = 0x100U;
  static constexpr std::uint32_t kInteger = 0x200U;
  static constexpr std::uint32_t kLong = 0x300U;
  static constexpr std::uint32_t kDate = 0x400U;
  static constexpr std::uint32_t kByte = 0x500U;
  static constexpr std::uint32_t kFloat = 0x600U;
  static constexpr std::uint32_t kDouble = 0x700U;
  static constexpr std::uint32_t kByteArray = 0x800U;
  static constexpr std::uint32_t kTypeMask = 0xff00U;

  SpymemcachedCodec() = default;
  explicit SpymemcachedCodec(SpymemcachedOptions options) : options_(options) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "spymemcached"; }
  [[nodiscard]] auto options() const noexcept -> const SpymemcachedOptions& { return options_; }

  /// encode: a string as a String, bytes as a byte[], an integer as an
  /// Integer or Long, a double as a Double, a boolean as a Boolean, a
  /// java-serialization object unchanged; null, lists and maps have no form
  /// spymemcached reads without Java classes (kNotEncodable).
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    Encoded out;
    switch (value.kind()) {
      case ValueKind::kString:
        out.bytes = value.as_string();
        if (looks_like_json(out.bytes)) {
          return out;  // never compressed
        }
        break;
      case ValueKind::kBytes:
        out.bytes = value.as_string();
        out.flags = kByteArray;
        break;
      case ValueKind::kInt: {
        const std::int64_t number = value.as_int();
        if (options_.integers == SpymemcachedIntegers::kIntegerWhenItFits && number >= INT32_MIN &&
            number <= INT32_MAX) {
          out.bytes = pack(static_cast<std::uint32_t>(number), 4);
          out.flags = kInteger;
        } else {
          out.bytes = pack(static_cast<std::uint64_t>(number), 8);
          out.flags = kLong;
        }
        break;
      }
      case ValueKind::kFloat: {
        std::uint64_t bits = 0;
        const double number = value.as_double();
        std::memcpy(&bits, &number, sizeof bits);
        out.bytes = pack(bits, 8);
        out.flags = kDouble;
        break;
      }
      case ValueKind::kBool:
        out.bytes = value.as_bool() ? "1" : "0";
        out.flags = kBoolean;
        break;
      case ValueKind::kSerialized:
        if (value.as_serialized().format == kJavaFormat) {
          out.bytes = value.as_serialized().data;
          out.flags = kSerialized;
          break;
        }
        [[fallthrough]];
      default:
        return CodecResult<Encoded>(
            CodecErrc::kNotEncodable,
            "spymemcached: a " + std::string(to_string(value.kind())) +
                " has no form a Java reader decodes without its class (store a string, bytes, "
                "a number or a boolean)");
    }
    if (out.bytes.size() > options_.compression_threshold) {
      detail::deflate_payload(out, detail::DeflateFormat::kGzip, options_.gzip_level, kCompressed);
    }
    return out;
  }

  /// decode: the value of an item spymemcached stored.
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    std::string inflated;
    if ((flags & kCompressed) != 0) {
      if (auto error = detail::inflate_payload("spymemcached", bytes, detail::DeflateFormat::kGzip,
                                               options_.limits.max_size, inflated)) {
        return *error;
      }
    }
    if ((flags & kSerialized) != 0) {
      if (!is_java_serialization(bytes)) {
        return CodecResult<Value>(CodecErrc::kCorrupt,
                                  "spymemcached: flags " + std::to_string(flags) +
                                      " mark a serialized Java object, but the bytes do not "
                                      "start with the stream magic ac ed 00 05");
      }
      return Value::serialized(std::string(kJavaFormat), std::string(bytes));
    }
    switch (flags & kTypeMask) {
      case 0:
        return Value(std::string(bytes));
      case kBoolean:
        if (bytes == "1" || bytes == "0") {
          return Value(bytes == "1");
        }
        return corrupt("a Boolean is one byte, '1' or '0'", bytes.size());
      case kInteger:
      case kFloat: {
        if (bytes.size() > 4) {
          return corrupt("an Integer or Float holds at most 4 bytes", bytes.size());
        }
        const auto bits = static_cast<std::uint32_t>(unpack(bytes));
        if ((flags & kTypeMask) == kInteger) {
          return Value(static_cast<std::int32_t>(bits));
        }
        float number = 0;
        std::memcpy(&number, &bits, sizeof number);
        return Value(static_cast<double>(number));
      }
      case kLong:
      case kDate:
      case kDouble: {
        if (bytes.size() > 8) {
          return corrupt("a Long, Date or Double holds at most 8 bytes", bytes.size());
        }
        const std::uint64_t bits = unpack(bytes);
        if ((flags & kTypeMask) != kDouble) {
          return Value(static_cast<std::int64_t>(bits));
        }
        double number = 0;
        std::memcpy(&number, &bits, sizeof number);
        return Value(number);
      }
      case kByte:
        if (bytes.size() > 1) {
          return corrupt("a Byte holds at most 1 byte", bytes.size());
        }
        return Value(bytes.empty() ? 0 : static_cast<std::int8_t>(bytes[0]));
      case kByteArray:
        return Value::bytes(std::string(bytes));
      default:
        return CodecResult<Value>(CodecErrc::kUnknownFlags,
                                  "spymemcached: flags " + std::to_string(flags) +
                                      " name the type " +
                                      std::to_string((flags & kTypeMask) >> 8U) +
                                      ", which SerializingTranscoder does not know");
    }
  }

  /// looks_like_json: spymemcached's test for a String it never compresses.
  [[nodiscard]] static constexpr auto looks_like_json(std::string_view text) noexcept -> bool {
    if (text.empty()) {
      return false;
    }
    if (text.front() == '{' || text.front() == '[' || text == "true" || text == "false" ||
        text == "null") {
      return true;
    }
    std::size_t at = text.front() == '-' ? 1 : 0;
    if (at == text.size()) {
      return false;
    }
    for (; at < text.size(); ++at) {
      if (text[at] < '0' || text[at] > '9') {
        return false;
      }
    }
    return true;
  }

 private:
  static constexpr std::string_view kJavaFormat = "java-serialization";

  // pack: the low `width` bytes of `bits`, big-endian, leading zero bytes dropped.
  [[nodiscard]] static auto pack(std::uint64_t bits, std::size_t width) -> std::string {
    std::string out;
    for (std::size_t i = width; i-- > 0;) {
      const auto byte = static_cast<char>(bits >> (8U * i) & 0xffU);
      if (!out.empty() || byte != 0) {
        out.push_back(byte);
      }
    }
    return out;
  }
  [[nodiscard]] static auto unpack(std::string_view bytes) noexcept -> std::uint64_t {
    std::uint64_t bits = 0;
    for (const char byte : bytes) {
      bits = bits << 8U | static_cast<unsigned char>(byte);
    }
    return bits;
  }
  [[nodiscard]] static auto corrupt(std::string_view what, std::size_t size) -> CodecResult<Value> {
    return CodecResult<Value>(CodecErrc::kCorrupt, "spymemcached: " + std::string(what) +
                                                       "; the item holds " + std::to_string(size));
  }

  SpymemcachedOptions options_;
};

static_assert(Codec<SpymemcachedCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_SPYMEMCACHED_CODEC_HPP_
