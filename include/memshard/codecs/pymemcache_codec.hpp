// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PYMEMCACHE_CODEC_HPP_
#define MEMSHARD_CODECS_PYMEMCACHE_CODEC_HPP_

// codecs/pymemcache_codec.hpp: PymemcacheCodec, the values Python's pymemcache
// (3.x) stores.
//
// By default (no serde) pymemcache stores every value as the ASCII text of
// Python's str() with flags 0, and reads every item back as bytes: "42",
// "True", "None", "{'a': 1, 'b': [2, 3]}". There is no type to read, so
// decoding gives bytes; encoding writes Python's text of the value, which
// must be ASCII (pymemcache refuses anything else): a str at the top as it
// is, and inside a container its repr(), where the characters that are not
// printable for Python (str.isprintable(), detail/python_printable.hpp) are
// escaped as \xNN, \uNNNN or \UNNNNNNNN and the printable non-ASCII ones kept,
// so that a container holding one cannot be stored.
//
// With serde=pickle_serde (python_memcache_serializer) it writes what
// python-memcache writes, but pickles with protocol 5 and never compresses:
// 0 bytes, 0x10 UTF-8 str, 0x2 int text, 0x1 pickle; unknown flags read back
// as the bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/codecs/detail/integer_item.hpp"
#include "memshard/codecs/detail/python_printable.hpp"
#include "memshard/codecs/detail/quote.hpp"
#include "memshard/codecs/detail/utf8.hpp"
#include "memshard/codecs/pickle.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// PymemcacheSerde: the serde the Python application gave its client.
enum class PymemcacheSerde : std::uint8_t {
  kNone,    ///< the default: str() text, flags 0, read back as bytes
  kPickle,  ///< pymemcache.serde.pickle_serde (python-memcache's flags)
};

/// PymemcacheOptions: the client's settings (pymemcache's defaults).
struct PymemcacheOptions {
  PymemcacheSerde serde = PymemcacheSerde::kNone;
  /// pickle_protocol: the serde's pickle version (pickle.HIGHEST_PROTOCOL, 5).
  int pickle_protocol = 5;
  DecodeLimits limits;
};

/// PymemcacheCodec: pymemcache's values (a Codec).
class PymemcacheCodec {
 public:
  static constexpr std::uint32_t kPickle = 0x1U;
  static constexpr std::uint32_t kInteger = 0x2U;
  static constexpr std::uint32_t kLong = 0x4U;
  static constexpr std::uint32_t kText = 0x10U;

  PymemcacheCodec() = default;
  explicit PymemcacheCodec(PymemcacheOptions options) : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "pymemcache"; }
  [[nodiscard]] auto options() const noexcept -> const PymemcacheOptions& { return options_; }

  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    if (options_.serde == PymemcacheSerde::kNone) {
      if (value.is_bytes()) {
        return Encoded{value.as_string(), 0};
      }
      std::string text;
      if (value.is_string()) {
        text = value.as_string();  // str(s) is s itself
      } else if (!python_text(value, text, 0)) {
        return CodecResult<Encoded>(
            CodecErrc::kNotEncodable,
            "pymemcache: without a serde only values whose Python text is ASCII can be stored");
      }
      for (const char c : text) {
        if (static_cast<unsigned char>(c) >= 0x80) {
          return CodecResult<Encoded>(
              CodecErrc::kNotEncodable,
              "pymemcache: without a serde a str must be ASCII (pymemcache refuses it)");
        }
      }
      return Encoded{std::move(text), 0};
    }
    switch (value.kind()) {
      case ValueKind::kBytes:
        return Encoded{value.as_string(), 0};
      case ValueKind::kString:
        if (!detail::is_utf8(value.as_string())) {
          return CodecResult<Encoded>(CodecErrc::kNotEncodable,
                                      "pymemcache: a str must be UTF-8; store bytes instead");
        }
        return Encoded{value.as_string(), kText};
      case ValueKind::kInt:
        return Encoded{std::to_string(value.as_int()), kInteger};
      default: {
        CodecResult<std::string> pickled = pickle_dumps(value, options_.pickle_protocol);
        if (!pickled) {
          return pickled.error();
        }
        return Encoded{std::move(pickled).value(), kPickle};
      }
    }
  }

  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    if (options_.serde == PymemcacheSerde::kNone || flags == 0) {
      return Value::bytes(std::string(bytes));
    }
    if ((flags & kText) != 0) {
      if (!detail::is_utf8(bytes)) {
        return CodecResult<Value>(CodecErrc::kCorrupt,
                                  "pymemcache: a str (0x10) that is not UTF-8 (at byte " +
                                      std::to_string(detail::utf8_error_at(bytes)) + ")");
      }
      return Value(std::string(bytes));
    }
    if ((flags & (kInteger | kLong)) != 0) {
      if (auto number = detail::integer_item(bytes, "pymemcache: an int")) {
        return *std::move(number);
      }
      return CodecResult<Value>(
          CodecErrc::kCorrupt,
          "pymemcache: an int whose text is not a number: " + detail::quote_bytes(bytes));
    }
    if ((flags & kPickle) != 0) {
      return pickle_loads(bytes, options_.limits);
    }
    return Value::bytes(std::string(bytes));  // pymemcache hands back what it cannot read
  }

 private:
  static constexpr std::size_t kMaxDepth = 256;

  // python_text: str(value) as Python writes it (repr inside containers);
  // false for what has no ASCII Python text (a printable non-ASCII character
  // in a str, a str that is not UTF-8, serialized objects).
  [[nodiscard]] static auto python_text(const Value& value, std::string& out, std::size_t depth)
      -> bool {
    if (depth > kMaxDepth) {
      return false;
    }
    switch (value.kind()) {
      case ValueKind::kNull:
        out += "None";
        return true;
      case ValueKind::kBool:
        out += value.as_bool() ? "True" : "False";
        return true;
      case ValueKind::kInt:
        out += std::to_string(value.as_int());
        return true;
      case ValueKind::kFloat:
        out += detail::python_float_text(value.as_double());
        return true;
      case ValueKind::kString:
        return python_repr(value.as_string(), false, out);
      case ValueKind::kBytes:
        return python_repr(value.as_string(), true, out);
      case ValueKind::kList: {
        out += '[';
        bool first = true;
        for (const Value& item : value.as_list()) {
          out += first ? "" : ", ";
          first = false;
          if (!python_text(item, out, depth + 1)) {
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
          if (!python_text(key, out, depth + 1)) {
            return false;
          }
          out += ": ";
          if (!python_text(item, out, depth + 1)) {
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

  // python_repr: repr() of a str (UTF-8) or of bytes (with the b prefix);
  // false when it is not ASCII (a printable non-ASCII character, which repr()
  // keeps as it is and pymemcache then refuses) or the str is not UTF-8.
  [[nodiscard]] static auto python_repr(std::string_view text, bool bytes, std::string& out)
      -> bool {
    const bool double_quotes =
        text.find('\'') != std::string_view::npos && text.find('"') == std::string_view::npos;
    const char quote = double_quotes ? '"' : '\'';
    if (bytes) {
      out += 'b';
    }
    out += quote;
    for (std::size_t at = 0; at < text.size();) {
      const auto byte = static_cast<unsigned char>(text[at]);
      if (bytes || byte < 0x80U) {
        python_escape(byte, quote, out);
        ++at;
        continue;
      }
      const auto next = detail::utf8_next(text, at);
      if (!next || detail::python_printable(next->first)) {
        return false;
      }
      python_escape(next->first, quote, out);
      at += next->second;
    }
    out += quote;
    return true;
  }

  // python_escape: one code point as repr() writes it (a byte of bytes as
  // the code point of its value): \\, the quote, \t \n \r, printable ASCII as
  // it is, others as \xNN up to 0xff, \uNNNN, \UNNNNNNNN (lower-case hex). A
  // printable non-ASCII code point is never given (bytes have none).
  static void python_escape(char32_t code, char quote, std::string& out) {
    static constexpr char kDigits[] = "0123456789abcdef";
    if (code == '\\' || code == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(code);
      return;
    }
    switch (code) {
      case '\t':
        out += "\\t";
        return;
      case '\n':
        out += "\\n";
        return;
      case '\r':
        out += "\\r";
        return;
      default:
        break;
    }
    if (code >= 0x20U && code < 0x7fU) {
      out += static_cast<char>(code);
      return;
    }
    const unsigned digits = code <= 0xffU ? 2 : code <= 0xffffU ? 4 : 8;
    out += digits == 2 ? "\\x" : digits == 4 ? "\\u" : "\\U";
    for (unsigned shift = 4 * (digits - 1);; shift -= 4) {
      out += kDigits[(code >> shift) & 0xfU];
      if (shift == 0) {
        break;
      }
    }
  }

  PymemcacheOptions options_;
};

static_assert(Codec<PymemcacheCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PYMEMCACHE_CODEC_HPP_
