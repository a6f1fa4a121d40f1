// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DALLI_CODEC_HPP_
#define MEMSHARD_CODECS_DALLI_CODEC_HPP_

// codecs/dalli_codec.hpp: DalliCodec, the values Ruby's Dalli (3.x) stores.
//
// Dalli serializes every value, strings included, with Ruby's Marshal (flag
// 0x1): "hello" is stored as 04 08 49 22 ... 06 3a 06 45 54. With
// `serializer: JSON` the same flag holds JSON.dump text instead (NaN,
// Infinity and -Infinity included), so the reader must be told which. With
// `raw: true` Dalli stores the value's to_s with flags 0: a string as it is,
// nil as nothing, a number or boolean as its text, a list or map as its
// inspect text (strings in it quoted and escaped as String#inspect does). A
// payload of at least `compression_min_size` bytes (4096) is compressed, flag
// 0x2, whether or not that makes it smaller: zlib (Zlib::Deflate) by default,
// gzip with Dalli::GzipCompressor. Other flag bits are ignored, as Dalli
// ignores them.
//
// Marshal is read by a restricted reader that builds values and never
// instantiates a class: a Marshal of an object reads as a serialized value
// ("ruby-marshal").

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/codecs/detail/utf8.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/json.hpp"
#include "memshard/codecs/ruby_marshal.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// DalliSerializer: the serializer of the Ruby application's client.
enum class DalliSerializer : std::uint8_t {
  kMarshal,  ///< the default
  kJson,     ///< serializer: JSON (still flag 0x1)
};

/// DalliCompressor: the compressor of the Ruby application's client.
enum class DalliCompressor : std::uint8_t {
  kZlib,  ///< Dalli::Compressor, the default
  kGzip,  ///< Dalli::GzipCompressor
};

/// DalliOptions: the client's settings (Dalli's defaults).
struct DalliOptions {
  /// raw: the application stores with `raw: true` (to_s, flags 0).
  bool raw = false;
  DalliSerializer serializer = DalliSerializer::kMarshal;
  /// compress: Dalli's `compress` option (true by default).
  bool compress = true;
  DalliCompressor compressor = DalliCompressor::kZlib;
  /// compression_min_size: payloads of at least this many bytes are compressed.
  std::size_t compression_min_size = 4096;
  DecodeLimits limits;
};

/// DalliCodec: Dalli's values (a Codec).
class DalliCodec {
 public:
  static constexpr std::uint32_t kSerialized = 0x1U;
  static constexpr std::uint32_t kCompressed = 0x2U;

  DalliCodec() = default;
  explicit DalliCodec(DalliOptions options) : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "dalli"; }
  [[nodiscard]] auto options() const noexcept -> const DalliOptions& { return options_; }

  /// encode: the value through the serializer (flag 0x1), or its Ruby to_s
  /// text with `raw`; then compression.
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    Encoded out;
    if (options_.raw) {
      if (value.is_string() || value.is_bytes()) {
        out.bytes = value.as_string();
      } else if (value.is_null()) {
        out.bytes.clear();  // nil.to_s
      } else if (!ruby_inspect(value, out.bytes, 0)) {
        return CodecResult<Encoded>(CodecErrc::kNotEncodable,
                                    "dalli: a raw value is its to_s text; this one has none here");
      }
    } else {
      CodecResult<std::string> serialized = options_.serializer == DalliSerializer::kJson
                                                ? json_encode(value, JsonStyle::kRuby)
                                                : marshal_dump(value);
      if (!serialized) {
        return serialized.error();
      }
      out.bytes = std::move(serialized).value();
      out.flags = kSerialized;
    }
    if (options_.compress && out.bytes.size() >= options_.compression_min_size) {
      out.bytes = detail::deflate_bytes(out.bytes,
                                        options_.compressor == DalliCompressor::kGzip
                                            ? detail::DeflateFormat::kGzip
                                            : detail::DeflateFormat::kZlib,
                                        -1);
      out.flags |= kCompressed;
    }
    return out;
  }

  /// decode: the value of an item Dalli stored; a compressed payload is read
  /// as zlib or gzip, whichever it is (a reader configured for one reads the
  /// other's items too).
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    std::string inflated;
    if ((flags & kCompressed) != 0) {
      const bool gzip = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
                        static_cast<unsigned char>(bytes[1]) == 0x8b;
      if (auto error = detail::inflate_payload(
              "dalli", bytes, gzip ? detail::DeflateFormat::kGzip : detail::DeflateFormat::kZlib,
              options_.limits.max_size, inflated)) {
        return *error;
      }
    }
    if ((flags & kSerialized) == 0) {
      return Value(std::string(bytes));
    }
    return options_.serializer == DalliSerializer::kJson
               ? json_decode(bytes, options_.limits, JsonStyle::kRuby)
               : marshal_load(bytes, options_.limits);
  }

 private:
  static constexpr std::size_t kMaxDepth = 256;

  // ruby_inspect: the to_s of a number or boolean, the inspect text of a
  // list or map (what `raw: true` stores for them); false when there is none.
  [[nodiscard]] static auto ruby_inspect(const Value& value, std::string& out, std::size_t depth)
      -> bool {
    if (depth > kMaxDepth) {
      return false;
    }
    switch (value.kind()) {
      case ValueKind::kNull:
        out += "nil";
        return true;
      case ValueKind::kBool:
        out += value.as_bool() ? "true" : "false";
        return true;
      case ValueKind::kInt:
        out += std::to_string(value.as_int());
        return true;
      case ValueKind::kFloat:
        out += detail::ruby_float_text(value.as_double());
        return true;
      case ValueKind::kString:
      case ValueKind::kBytes:
        if (depth == 0) {
          out += value.as_string();
          return true;
        }
        return ruby_string_inspect(value.as_string(), value.is_bytes(), out);
      case ValueKind::kList: {
        out += '[';
        bool first = true;
        for (const Value& item : value.as_list()) {
          out += first ? "" : ", ";
          first = false;
          if (!ruby_inspect(item, out, depth + 1)) {
            return false;
          }
        }
        out += ']';
        return true;
      }
      case ValueKind::kMap: {
        out += '{';
        bool first = true;
        for (const auto& [key, item] : value.as_map()) {
          out += first ? "" : ", ";
          first = false;
          if (!ruby_inspect(key, out, depth + 1)) {
            return false;
          }
          out += "=>";
          if (!ruby_inspect(item, out, depth + 1)) {
            return false;
          }
        }
        out += '}';
        return true;
      }
      default:
        return false;
    }
  }

  // ruby_string_inspect: String#inspect (Ruby 3.1) of a UTF-8 string or of
  // a binary one. '"', '\\' and a '#' before '{', '$' or '@' take a
  // backslash; \n \r \t \f \v \b \a \e are named; other ASCII controls and
  // DEL are \u00XX in UTF-8 text and \xXX in binary, like binary bytes from
  // 0x80 and the bytes of an invalid UTF-8 sequence (upper-case hex). False
  // for a non-ASCII character: whether Ruby escapes it depends on the
  // process's locale and Ruby's own Unicode tables, not reproduced here.
  [[nodiscard]] static auto ruby_string_inspect(std::string_view text, bool binary,
                                                std::string& out) -> bool {
    static constexpr char kDigits[] = "0123456789ABCDEF";
    const auto hex = [&](unsigned value, unsigned digits) {
      for (unsigned shift = 4 * (digits - 1);; shift -= 4) {
        out += kDigits[(value >> shift) & 0xfU];
        if (shift == 0) {
          break;
        }
      }
    };
    out += '"';
    for (std::size_t at = 0; at < text.size(); ++at) {
      const auto byte = static_cast<unsigned char>(text[at]);
      if (!binary && byte >= 0x80U && detail::utf8_next(text, at)) {
        return false;  // a non-ASCII character; what remains is one byte at a time
      }
      const char named = ruby_named_escape(byte);
      const char after = at + 1 < text.size() ? text[at + 1] : '\0';
      if (byte == '"' || byte == '\\' ||
          (byte == '#' && (after == '{' || after == '$' || after == '@'))) {
        out += '\\';
        out += static_cast<char>(byte);
      } else if (named != '\0') {
        out += '\\';
        out += named;
      } else if (byte >= 0x20U && byte < 0x7fU) {
        out += static_cast<char>(byte);
      } else if (binary || byte >= 0x80U) {
        out += "\\x";  // a binary byte, or a byte of no UTF-8 character
        hex(byte, 2);
      } else {
        out += "\\u";
        hex(byte, 4);
      }
    }
    out += '"';
    return true;
  }

  // ruby_named_escape: the letter of a control character's named escape in
  // String#inspect (\n for a newline...), or '\0' when it has none.
  [[nodiscard]] static constexpr auto ruby_named_escape(unsigned char byte) noexcept -> char {
    switch (byte) {
      case '\n':
        return 'n';
      case '\r':
        return 'r';
      case '\t':
        return 't';
      case '\f':
        return 'f';
      case '\v':
        return 'v';
      case '\b':
        return 'b';
      case '\a':
        return 'a';
      case 0x1bU:
        return 'e';
      default:
        return '\0';
    }
  }

  DalliOptions options_;
};

static_assert(Codec<DalliCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DALLI_CODEC_HPP_
