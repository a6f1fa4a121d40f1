// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_JSON_HPP_
#define MEMSHARD_CODECS_JSON_HPP_

// codecs/json.hpp: JSON (RFC 8259) as the peers write it and a strict reader.
// php-memcached stores json_encode() text under type 6 (serializer json);
// Dalli with `serializer: JSON` stores JSON.dump text under flag 0x1.
//
// The writers differ in four places:
//
//   style      '/'    non-ASCII        floats                      a map
//   kPhp       \/     \u00e9 (UTF-16)  PHP: 100, 0.5, 1.0e+25      [..] when its keys are 0..n-1
//   kRuby      /      as it is         Ruby: 100.0, 1.0e+21        {..}
//   kCompact   /      as it is         shortest: 100.0, 1e+21      {..}
//
// and NaN and the infinities, which only kRuby writes: Ruby's JSON.dump (json
// 2.6; JSON.generate would raise) writes the bare words NaN, Infinity and
// -Infinity, and its JSON.load reads them back. All three escape '"', '\\'
// and the control characters (\b \f \n \r \t, the others as \u00XX in
// lower-case hex), write DEL as it is and refuse text that is not UTF-8
// (PHP's json_encode fails, Ruby raises). The reader is strict RFC 8259 but
// for text it is told is kRuby's, where it also reads the three words.
//
// kPhp models the PHP array the Value stands for: a map's string keys of
// canonical integer text become integers, so a map whose keys are then
// exactly 0..n-1 in order (or that is empty) is a JSON array, as json_encode
// writes a PHP list; other maps are objects with the integer keys written as
// strings.

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/decode_budget.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/codecs/detail/utf8.hpp"
#include "memshard/codecs/php_serialize.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// JsonStyle: whose JSON json_encode writes and json_decode reads: PHP 8.2's
/// json_encode() with the default flags, Ruby's JSON.dump (json 2.6, with
/// NaN and the infinities), or RFC 8259's minimal form with the shortest
/// round-trip floats.
enum class JsonStyle : std::uint8_t { kPhp, kRuby, kCompact };

namespace detail {

/// json_append_unit: `\u` and four lower-case hex digits.
inline void json_append_unit(std::string& out, std::uint32_t unit) {
  constexpr char kHex[] = "0123456789abcdef";
  out.append("\\u");
  for (unsigned shift = 12;; shift -= 4) {
    out.push_back(kHex[(unit >> shift) & 0xfU]);
    if (shift == 0) {
      break;
    }
  }
}

/// json_append_string: `text` as a JSON string in `style`; false when it is
/// not UTF-8 (then `out` holds part of it).
[[nodiscard]] inline auto json_append_string(std::string& out, std::string_view text,
                                             JsonStyle style) -> bool {
  out.push_back('"');
  for (std::size_t at = 0; at < text.size();) {
    const auto next = utf8_next(text, at);
    if (!next) {
      return false;
    }
    const char32_t code = next->first;
    switch (code) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '/':
        out.append(style == JsonStyle::kPhp ? "\\/" : "/");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (code < 0x20U) {
          json_append_unit(out, code);
        } else if (code >= 0x80U && style == JsonStyle::kPhp) {
          if (code >= 0x10000U) {
            const char32_t offset = code - 0x10000U;
            json_append_unit(out, 0xd800U + (offset >> 10U));
            json_append_unit(out, 0xdc00U + (offset & 0x3ffU));
          } else {
            json_append_unit(out, code);
          }
        } else {
          out.append(text.substr(at, next->second));
        }
    }
    at += next->second;
  }
  out.push_back('"');
  return true;
}

/// json_float_text: a finite double in `style`.
[[nodiscard]] inline auto json_float_text(double value, JsonStyle style) -> std::string {
  if (style == JsonStyle::kPhp) {
    return php_repr_text(value, 'e');
  }
  if (style == JsonStyle::kRuby) {
    return ruby_float_text(value);
  }
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  std::string text(buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data()));
  if (text.find_first_of(".e") == std::string::npos) {
    text.append(".0");  // so that it reads back as a float, not an integer
  }
  return text;
}

/// json_append_key: a map key as a JSON object key (ints as their decimal
/// text); false for a key of another kind or text that is not UTF-8.
[[nodiscard]] inline auto json_append_key(std::string& out, const Value& key, JsonStyle style)
    -> bool {
  if (key.is_int()) {
    out.push_back('"');
    out.append(std::to_string(key.as_int()));
    out.push_back('"');
    return true;
  }
  if (key.is_string() || key.is_bytes()) {
    return json_append_string(out, key.as_string(), style);
  }
  return false;
}

/// json_encode_into: appends `value` in `style`, or says why it cannot.
[[nodiscard]] inline auto json_encode_into(std::string& out, const Value& value, JsonStyle style)
    -> std::optional<CodecError> {
  switch (value.kind()) {
    case ValueKind::kNull:
      out.append("null");
      return std::nullopt;
    case ValueKind::kBool:
      out.append(value.as_bool() ? "true" : "false");
      return std::nullopt;
    case ValueKind::kInt:
      out.append(std::to_string(value.as_int()));
      return std::nullopt;
    case ValueKind::kFloat:
      if (!std::isfinite(value.as_double()) && style == JsonStyle::kRuby) {
        out.append(std::isnan(value.as_double()) ? "NaN"
                   : value.as_double() > 0       ? "Infinity"
                                                 : "-Infinity");
        return std::nullopt;
      }
      if (!std::isfinite(value.as_double())) {
        return CodecError(
            CodecErrc::kNotEncodable,
            "json: " + php_repr_text(value.as_double(), 'e') + " (JSON has no NaN or infinity)");
      }
      out.append(json_float_text(value.as_double(), style));
      return std::nullopt;
    case ValueKind::kString:
    case ValueKind::kBytes:
      if (!json_append_string(out, value.as_string(), style)) {
        return CodecError(CodecErrc::kNotEncodable, std::string("json: a ") +
                                                        std::string(to_string(value.kind())) +
                                                        " value that is not UTF-8");
      }
      return std::nullopt;
    case ValueKind::kList: {
      out.push_back('[');
      bool first = true;
      for (const Value& item : value.as_list()) {
        if (!first) {
          out.push_back(',');
        }
        first = false;
        if (auto error = json_encode_into(out, item, style)) {
          return error;
        }
      }
      out.push_back(']');
      return std::nullopt;
    }
    case ValueKind::kMap: {
      const Value::Map& entries = value.as_map();
      bool as_array = false;
      if (style == JsonStyle::kPhp) {
        auto keys = php_array_keys(entries, "json");
        if (!keys) {
          return keys.error();
        }
        as_array = php_is_list_keys(*keys);
      }
      out.push_back(as_array ? '[' : '{');
      bool first = true;
      for (const Value::Entry& entry : entries) {
        if (!first) {
          out.push_back(',');
        }
        first = false;
        if (!as_array) {
          if (!json_append_key(out, entry.first, style)) {
            return CodecError(CodecErrc::kNotEncodable,
                              "json: a map key of kind " +
                                  std::string(to_string(entry.first.kind())) +
                                  (entry.first.is_string() || entry.first.is_bytes()
                                       ? " that is not UTF-8"
                                       : " (a JSON object key is a string or an int)"));
          }
          out.push_back(':');
        }
        if (auto error = json_encode_into(out, entry.second, style)) {
          return error;
        }
      }
      out.push_back(as_array ? ']' : '}');
      return std::nullopt;
    }
    case ValueKind::kSerialized:
      return CodecError(
          CodecErrc::kNotEncodable,
          "json: a serialized \"" + value.as_serialized().format + "\" value has no JSON form");
  }
  return CodecError(CodecErrc::kNotEncodable, "json: an unknown value kind");
}

/// JsonParser: the strict reader behind json_decode; with `non_finite` it
/// also reads NaN, Infinity and -Infinity as values (Ruby's JSON.load).
/// Arrays and objects announce no size: each element's slot is taken from
/// max_decoded_bytes as it is added, and a string's bytes as it grows.
class JsonParser {
 public:
  JsonParser(std::string_view text, const DecodeLimits& limits, bool non_finite = false)
      : text_(text), limits_(limits), budget_(limits.max_decoded_bytes), non_finite_(non_finite) {}

  [[nodiscard]] auto document() -> CodecResult<Value> {
    if (!budget_.take_values(1)) {
      return fail(budget_.exceeded("a value"), CodecErrc::kTooLarge);
    }
    skip_space();
    auto parsed = value(0);
    if (!parsed) {
      return parsed;
    }
    skip_space();
    if (pos_ != text_.size()) {
      return fail("expected the end of the input after the value, found " + found());
    }
    return parsed;
  }

 private:
  [[nodiscard]] auto fail(const std::string& what, CodecErrc code = CodecErrc::kCorrupt) const
      -> CodecError {
    return fail_at(pos_, what, code);
  }
  [[nodiscard]] auto fail_at(std::size_t at, const std::string& what,
                             CodecErrc code = CodecErrc::kCorrupt) const -> CodecError {
    return CodecError(code, "json: at byte " + std::to_string(at) + ": " + what);
  }
  [[nodiscard]] auto found() const -> std::string {
    if (pos_ >= text_.size()) {
      return "the end of the input";
    }
    const char c = text_[pos_];
    if (c >= 0x20 && c < 0x7f) {
      return std::string("'") + c + "'";
    }
    constexpr char kHex[] = "0123456789abcdef";
    const auto byte = static_cast<unsigned char>(c);
    return std::string("byte 0x") + kHex[byte >> 4U] + kHex[byte & 0xfU];
  }

  void skip_space() noexcept {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  [[nodiscard]] auto literal(std::string_view word, Value result) -> CodecResult<Value> {
    if (text_.substr(pos_, word.size()) != word) {
      return fail("expected a value, found " + found());
    }
    pos_ += word.size();
    return result;
  }

  [[nodiscard]] auto value(std::size_t depth) -> CodecResult<Value> {
    if (pos_ >= text_.size()) {
      return fail("expected a value, found the end of the input");
    }
    switch (text_[pos_]) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"': {
        auto text = string();
        if (!text) {
          return text.error();
        }
        return Value(std::move(*text));
      }
      case 't':
        return literal("true", Value(true));
      case 'f':
        return literal("false", Value(false));
      case 'n':
        return literal("null", Value());
      case 'N':
        if (non_finite_) {
          return literal("NaN", Value(std::numeric_limits<double>::quiet_NaN()));
        }
        return number();
      case 'I':
        if (non_finite_) {
          return literal("Infinity", Value(std::numeric_limits<double>::infinity()));
        }
        return number();
      default:
        return number();
    }
  }

  [[nodiscard]] auto enter(std::size_t depth) const -> std::optional<CodecError> {
    if (depth + 1 > limits_.max_depth) {
      return fail(
          "arrays and objects nested deeper than the limit of " + std::to_string(limits_.max_depth),
          CodecErrc::kTooDeep);
    }
    return std::nullopt;
  }

  [[nodiscard]] auto array(std::size_t depth) -> CodecResult<Value> {
    if (auto error = enter(depth)) {
      return *error;
    }
    ++pos_;
    Value::List items;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return Value::list(std::move(items));
    }
    for (;;) {
      skip_space();
      if (!budget_.take_values(1)) {
        return fail(budget_.exceeded("an array's element " + std::to_string(items.size() + 1)),
                    CodecErrc::kTooLarge);
      }
      auto item = value(depth + 1);
      if (!item) {
        return item;
      }
      items.push_back(std::move(*item));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
      } else if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return Value::list(std::move(items));
      } else {
        return fail("expected ',' or ']' in an array, found " + found());
      }
    }
  }

  [[nodiscard]] auto object(std::size_t depth) -> CodecResult<Value> {
    if (auto error = enter(depth)) {
      return *error;
    }
    ++pos_;
    Value::Map entries;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return Value::map(std::move(entries));
    }
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return fail("expected a string key in an object, found " + found());
      }
      if (!budget_.take_entries(1)) {
        return fail(budget_.exceeded("an object's member " + std::to_string(entries.size() + 1)),
                    CodecErrc::kTooLarge);
      }
      auto key = string();
      if (!key) {
        return key.error();
      }
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') {
        return fail("expected ':' after an object key, found " + found());
      }
      ++pos_;
      skip_space();
      auto item = value(depth + 1);
      if (!item) {
        return item;
      }
      entries.emplace_back(Value(std::move(*key)), std::move(*item));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
      } else if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return Value::map(std::move(entries));
      } else {
        return fail("expected ',' or '}' in an object, found " + found());
      }
    }
  }

  /// hex4: the four hex digits at the position (after "\u").
  [[nodiscard]] auto hex4() -> std::optional<std::uint32_t> {
    if (text_.size() - pos_ < 4) {
      return std::nullopt;
    }
    std::uint32_t unit = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const char c = text_[pos_ + i];
      std::uint32_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return std::nullopt;
      }
      unit = unit << 4U | digit;
    }
    pos_ += 4;
    return unit;
  }

  static void append_utf8(std::string& out, char32_t code) {
    if (code < 0x80U) {
      out.push_back(static_cast<char>(code));
    } else if (code < 0x800U) {
      out.push_back(static_cast<char>(0xc0U | (code >> 6U)));
      out.push_back(static_cast<char>(0x80U | (code & 0x3fU)));
    } else if (code < 0x10000U) {
      out.push_back(static_cast<char>(0xe0U | (code >> 12U)));
      out.push_back(static_cast<char>(0x80U | ((code >> 6U) & 0x3fU)));
      out.push_back(static_cast<char>(0x80U | (code & 0x3fU)));
    } else {
      out.push_back(static_cast<char>(0xf0U | (code >> 18U)));
      out.push_back(static_cast<char>(0x80U | ((code >> 12U) & 0x3fU)));
      out.push_back(static_cast<char>(0x80U | ((code >> 6U) & 0x3fU)));
      out.push_back(static_cast<char>(0x80U | (code & 0x3fU)));
    }
  }

  /// string: the text of the string at the position (at its '"'); its
  /// bytes are taken from the budget.
  [[nodiscard]] auto string() -> CodecResult<std::string> {
    const std::size_t start = pos_;
    ++pos_;
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) {
        return fail_at(start, "a string without its closing '\"'");
      }
      // What is decoded so far stays within the budget: the string never
      // holds much more than it (a 4-byte sequence at most).
      if (out.size() > budget_.left()) {
        return fail_at(
            start,
            budget_.exceeded("a string longer than " + std::to_string(out.size()) + " bytes"),
            CodecErrc::kTooLarge);
      }
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        if (!budget_.take(out.size())) {
          return fail_at(start,
                         budget_.exceeded("a string of " + std::to_string(out.size()) + " bytes"),
                         CodecErrc::kTooLarge);
        }
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20U) {
        return fail("a control character in a string: " + found());
      }
      if (c != '\\') {
        const auto next = utf8_next(text_, pos_);
        if (!next) {
          return fail("a string that is not UTF-8: " + found());
        }
        out.append(text_.substr(pos_, next->second));
        pos_ += next->second;
        continue;
      }
      const std::size_t escape = pos_;
      ++pos_;
      const char kind = pos_ < text_.size() ? text_[pos_] : '\0';
      ++pos_;
      switch (kind) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          const auto unit = hex4();
          if (!unit) {
            return fail_at(escape, "expected four hex digits after \\u");
          }
          char32_t code = *unit;
          if (code >= 0xdc00U && code <= 0xdfffU) {
            return fail_at(escape, "a low surrogate \\u escape without a high one before it");
          }
          if (code >= 0xd800U && code <= 0xdbffU) {
            std::optional<std::uint32_t> low;
            if (text_.substr(pos_, 2) == "\\u") {
              pos_ += 2;
              low = hex4();
            }
            if (!low || *low < 0xdc00U || *low > 0xdfffU) {
              return fail_at(escape, "a high surrogate \\u escape without a low one after it");
            }
            code = 0x10000U + ((code - 0xd800U) << 10U) + (*low - 0xdc00U);
          }
          append_utf8(out, code);
          break;
        }
        default:
          return fail_at(escape, "an unknown escape in a string");
      }
    }
  }

  [[nodiscard]] auto number() -> CodecResult<Value> {
    const std::size_t start = pos_;
    auto digit = [&]() { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; };
    if (pos_ < text_.size() && text_[pos_] == '-') {
      ++pos_;
      if (non_finite_ && pos_ < text_.size() && text_[pos_] == 'I') {
        pos_ = start;
        return literal("-Infinity", Value(-std::numeric_limits<double>::infinity()));
      }
    }
    if (!digit()) {
      pos_ = start;
      return fail("expected a value, found " + found());
    }
    if (text_[pos_] == '0') {
      ++pos_;
    } else {
      while (digit()) {
        ++pos_;
      }
    }
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (!digit()) {
        return fail("expected a digit after '.' in a number, found " + found());
      }
      while (digit()) {
        ++pos_;
      }
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
        ++pos_;
      }
      if (!digit()) {
        return fail("expected a digit in a number's exponent, found " + found());
      }
      while (digit()) {
        ++pos_;
      }
    }
    const std::string_view text = text_.substr(start, pos_ - start);
    if (integral) {
      if (const auto number = parse_integer_text(text)) {
        return Value(*number);
      }
    }
    // A fraction, an exponent, or an integer beyond int64 (a double, as PHP
    // makes it).
    const auto number = parse_float_text(text);
    if (!number) {
      return fail_at(start, "not a number: " + std::string(text.substr(0, 40)));
    }
    return Value(*number);
  }

  std::string_view text_;
  DecodeLimits limits_;
  DecodeBudget budget_;
  bool non_finite_ = false;
  std::size_t pos_ = 0;
};

}  // namespace detail

/// json_encode: `value` as JSON in `style` (see JsonStyle). kPhp is byte for
/// byte PHP 8.2's json_encode($value) with the default flags, kRuby Ruby's
/// JSON.dump(value), NaN, Infinity and -Infinity included. Strings and bytes
/// alike must be UTF-8; map keys are strings (or bytes) or ints, written as
/// strings. kNotEncodable: text that is not UTF-8, NaN or an infinity (but in
/// kRuby), a map key of another kind, a kSerialized value, and for kPhp a map
/// whose keys repeat once PHP converts them.
[[nodiscard]] inline auto json_encode(const Value& value, JsonStyle style = JsonStyle::kCompact)
    -> CodecResult<std::string> {
  std::string out;
  if (auto error = detail::json_encode_into(out, value, style)) {
    return *error;
  }
  return out;
}

/// json_decode: the Value of a JSON text (RFC 8259, strictly: one value with
/// optional whitespace around it, nothing else); in text of `style` kRuby
/// also the values NaN, Infinity and -Infinity, which JSON.dump writes and
/// JSON.load reads, as doubles ("-NaN", "+Infinity", "nan" stay kCorrupt,
/// as JSON.load refuses them). Objects become maps with string keys in
/// document order (a repeated key is kept as it is), arrays lists; an integer
/// that fits int64 an int, any other number a double (an overflowing
/// magnitude infinity, as PHP reads it). Strings must be UTF-8,
/// with \u surrogate pairs joined; a lone surrogate is kCorrupt. kTooDeep
/// past limits.max_depth nested arrays and objects; kTooLarge for an input
/// or a string over limits.max_size, or a tree over limits.max_decoded_bytes.
[[nodiscard]] inline auto json_decode(std::string_view text, const DecodeLimits& limits = {},
                                      JsonStyle style = JsonStyle::kCompact) -> CodecResult<Value> {
  if (text.size() > limits.max_size) {
    return CodecError(CodecErrc::kTooLarge, "json: " + std::to_string(text.size()) +
                                                " bytes, over the limit of " +
                                                std::to_string(limits.max_size));
  }
  detail::JsonParser parser(text, limits, style == JsonStyle::kRuby);
  return parser.document();
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_JSON_HPP_
