// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PHP_SERIALIZE_HPP_
#define MEMSHARD_CODECS_PHP_SERIALIZE_HPP_

// codecs/php_serialize.hpp: PHP's serialize() format (what php-memcached
// stores under type 4 and pecl memcache under flag 0x1) and PHP's session
// format (session.serialize_handler = php, Debian's default), read and
// written byte for byte as PHP 8.2 does:
//
//   null     N;
//   bool     b:1;  b:0;
//   int      i:42;
//   float    d:0.5;  d:1.0E+25;  d:-0;  d:INF;  d:-INF;  d:NAN;  (detail::php_repr_text)
//   string   s:<byte count>:"<bytes>";
//   array    a:<count>:{<key><value>...}   a key is i:<n>; or s:<len>:"<bytes>";
//
// A PHP array is one ordered map whose keys are integers or strings; PHP turns
// a string key that is a canonical decimal int64 ("5", "-3"; not "05", "+5",
// "-0", " 5") into the integer key, so an array cannot hold both 5 and "5".
// An array whose keys are exactly 0, 1, ..., n-1 in that order is what PHP
// calls a list: it decodes to a Value list, any other array to a Value map.
//
// Objects (O:, C:), enums (E:) and references (r:, R:) are recognised, not
// decoded: an input holding one anywhere decodes to
// Value::serialized("php-serialize", <the whole input>).
//
// The session format is `name|<serialized value>` for each session variable,
// one after the other with nothing between (`user|a:1:{...}n|i:7;`); a name
// cannot contain '|' and PHP skips integer-like names when writing.

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/decode_budget.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// php_integer_key: the integer PHP makes of the string array key `key`
/// (a canonical decimal int64: "0", "5", "-3"; not "05", "+5", "-0", "5 "), or
/// nullopt when the key stays a string.
[[nodiscard]] inline auto php_integer_key(std::string_view key) noexcept
    -> std::optional<std::int64_t> {
  const std::size_t start = !key.empty() && key[0] == '-' ? 1 : 0;
  if (start == key.size() || (key[start] == '0' && (key.size() > start + 1 || start == 1))) {
    return std::nullopt;
  }
  for (std::size_t at = start; at < key.size(); ++at) {
    if (key[at] < '0' || key[at] > '9') {
      return std::nullopt;
    }
  }
  std::int64_t number = 0;
  const auto result = std::from_chars(key.data(), key.data() + key.size(), number);
  if (result.ec != std::errc() || result.ptr != key.data() + key.size()) {
    return std::nullopt;
  }
  return number;
}

/// PhpKey: a PHP array key: an integer, or a string (viewing the Value's).
struct PhpKey {
  bool is_integer = false;
  std::int64_t integer = 0;
  std::string_view text;
};

/// php_array_key: the PHP array key a Value key becomes: an int, or a string
/// or bytes (an integer when PHP converts it); nullopt for other kinds.
[[nodiscard]] inline auto php_array_key(const Value& key) -> std::optional<PhpKey> {
  if (key.is_int()) {
    return PhpKey{true, key.as_int(), {}};
  }
  if (key.is_string() || key.is_bytes()) {
    const std::string& text = key.as_string();
    if (const auto number = php_integer_key(text)) {
      return PhpKey{true, *number, {}};
    }
    return PhpKey{false, 0, text};
  }
  return std::nullopt;
}

/// php_array_keys: the PHP keys of a map's entries, in order; kNotEncodable
/// for a key of another kind or a key that appears twice once converted.
/// `format` prefixes the messages.
[[nodiscard]] inline auto php_array_keys(const Value::Map& entries, std::string_view format)
    -> CodecResult<std::vector<PhpKey>> {
  std::vector<PhpKey> keys;
  keys.reserve(entries.size());
  std::vector<std::int64_t> integers;
  std::vector<std::string_view> texts;
  for (const Value::Entry& entry : entries) {
    const auto key = php_array_key(entry.first);
    if (!key) {
      return CodecError(CodecErrc::kNotEncodable,
                        std::string(format) + ": a map key of kind " +
                            std::string(to_string(entry.first.kind())) +
                            " (a PHP array key is an integer or a string)");
    }
    if (key->is_integer) {
      integers.push_back(key->integer);
    } else {
      texts.push_back(key->text);
    }
    keys.push_back(*key);
  }
  std::sort(integers.begin(), integers.end());
  std::sort(texts.begin(), texts.end());
  const auto repeated_integer = std::adjacent_find(integers.begin(), integers.end());
  if (repeated_integer != integers.end()) {
    return CodecError(CodecErrc::kNotEncodable,
                      std::string(format) + ": the map has the key " +
                          std::to_string(*repeated_integer) +
                          " twice (a string key of canonical integer text is that integer in "
                          "PHP); a PHP array cannot hold both");
  }
  const auto repeated_text = std::adjacent_find(texts.begin(), texts.end());
  if (repeated_text != texts.end()) {
    return CodecError(CodecErrc::kNotEncodable, std::string(format) + ": the map has the key \"" +
                                                    std::string(*repeated_text) +
                                                    "\" twice; a PHP array cannot hold both");
  }
  return keys;
}

/// php_is_list_keys: whether the keys are exactly 0, 1, ..., n-1 in order
/// (PHP's list arrays).
[[nodiscard]] inline auto php_is_list_keys(const std::vector<PhpKey>& keys) noexcept -> bool {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!keys[i].is_integer || keys[i].integer != static_cast<std::int64_t>(i)) {
      return false;
    }
  }
  return true;
}

inline void php_append_integer(std::string& out, std::int64_t number) {
  std::array<char, 24> text{};
  const auto result = std::to_chars(text.data(), text.data() + text.size(), number);
  out.append(text.data(), static_cast<std::size_t>(result.ptr - text.data()));
}

inline void php_append_string(std::string& out, std::string_view text) {
  out.append("s:");
  php_append_integer(out, static_cast<std::int64_t>(text.size()));
  out.append(":\"");
  out.append(text);
  out.append("\";");
}

inline void php_append_key(std::string& out, const PhpKey& key) {
  if (key.is_integer) {
    out.append("i:");
    php_append_integer(out, key.integer);
    out.push_back(';');
  } else {
    php_append_string(out, key.text);
  }
}

/// php_serialize_into: appends `value` as serialize() writes it; an error
/// for what PHP has no form for. `format` prefixes the messages.
[[nodiscard]] inline auto php_serialize_into(std::string& out, const Value& value,
                                             std::string_view format) -> std::optional<CodecError> {
  switch (value.kind()) {
    case ValueKind::kNull:
      out.append("N;");
      return std::nullopt;
    case ValueKind::kBool:
      out.append(value.as_bool() ? "b:1;" : "b:0;");
      return std::nullopt;
    case ValueKind::kInt:
      out.append("i:");
      php_append_integer(out, value.as_int());
      out.push_back(';');
      return std::nullopt;
    case ValueKind::kFloat:
      out.append("d:");
      out.append(php_repr_text(value.as_double(), 'E'));
      out.push_back(';');
      return std::nullopt;
    case ValueKind::kString:
    case ValueKind::kBytes:
      php_append_string(out, value.as_string());
      return std::nullopt;
    case ValueKind::kList: {
      const Value::List& items = value.as_list();
      out.append("a:");
      php_append_integer(out, static_cast<std::int64_t>(items.size()));
      out.append(":{");
      for (std::size_t i = 0; i < items.size(); ++i) {
        out.append("i:");
        php_append_integer(out, static_cast<std::int64_t>(i));
        out.push_back(';');
        if (auto error = php_serialize_into(out, items[i], format)) {
          return error;
        }
      }
      out.push_back('}');
      return std::nullopt;
    }
    case ValueKind::kMap: {
      const Value::Map& entries = value.as_map();
      auto keys = php_array_keys(entries, format);
      if (!keys) {
        return keys.error();
      }
      out.append("a:");
      php_append_integer(out, static_cast<std::int64_t>(entries.size()));
      out.append(":{");
      for (std::size_t i = 0; i < entries.size(); ++i) {
        php_append_key(out, (*keys)[i]);
        if (auto error = php_serialize_into(out, entries[i].second, format)) {
          return error;
        }
      }
      out.push_back('}');
      return std::nullopt;
    }
    case ValueKind::kSerialized:
      // Back-references (r:, R:) in such data count the values from its own
      // start, so it cannot be placed inside another value.
      return CodecError(CodecErrc::kNotEncodable,
                        std::string(format) + ": a serialized \"" + value.as_serialized().format +
                            "\" value inside an array or a session variable (only a whole value "
                            "is written back as it is)");
  }
  return CodecError(CodecErrc::kNotEncodable, std::string(format) + ": an unknown value kind");
}

/// PhpUnserializer: reads serialize() text from a position on, keeping to
/// DecodeLimits: every value it reads takes its array slots and string bytes
/// from one max_decoded_bytes budget, before allocating them. An object, enum
/// or reference makes it stop with kUnsupported, which its callers turn into
/// an opaque value.
class PhpUnserializer {
 public:
  PhpUnserializer(std::string_view bytes, const DecodeLimits& limits, std::string_view format)
      : bytes_(bytes), limits_(limits), budget_(limits.max_decoded_bytes), format_(format) {}

  [[nodiscard]] auto position() const noexcept -> std::size_t { return pos_; }
  void seek(std::size_t pos) noexcept { pos_ = pos; }

  /// take: `count` times `size` bytes from the budget, for what the caller
  /// builds around the values (the top Value, a session's variables);
  /// kTooLarge, saying `what` did not fit, when they are not there.
  [[nodiscard]] auto take(std::size_t count, std::size_t size, std::string_view what)
      -> std::optional<CodecError> {
    if (budget_.take(count, size)) {
      return std::nullopt;
    }
    return fail(CodecErrc::kTooLarge, budget_.exceeded(what));
  }

  /// value: the value at the position; `depth` arrays enclose it.
  [[nodiscard]] auto value(std::size_t depth) -> CodecResult<Value> {
    if (pos_ >= bytes_.size()) {
      return fail(CodecErrc::kCorrupt, "expected a value, found the end of the input");
    }
    const char tag = bytes_[pos_];
    switch (tag) {
      case 'N':
        if (bytes_.substr(pos_, 2) != "N;") {
          return fail(CodecErrc::kCorrupt, "expected 'N;'");
        }
        pos_ += 2;
        return Value();
      case 'b': {
        const std::string_view text = bytes_.substr(pos_, 4);
        if (text != "b:0;" && text != "b:1;") {
          return fail(CodecErrc::kCorrupt, "expected 'b:0;' or 'b:1;'");
        }
        pos_ += 4;
        return Value(text[2] == '1');
      }
      case 'i':
        return integer();
      case 'd':
        return floating();
      case 's':
      case 'S':
        return string();
      case 'a':
        return array(depth);
      case 'O':
      case 'C':
      case 'E':
      case 'r':
      case 'R':
        return fail(CodecErrc::kUnsupported,
                    std::string("a PHP ") + (tag == 'E'                   ? "enum"
                                             : (tag == 'r' || tag == 'R') ? "reference"
                                                                          : "object"));
      default:
        return fail(CodecErrc::kCorrupt, "unknown type " + describe(tag));
    }
  }

  /// fail: an error at the position.
  [[nodiscard]] auto fail(CodecErrc code, const std::string& what) const -> CodecError {
    return fail_at(pos_, code, what);
  }
  [[nodiscard]] auto fail_at(std::size_t at, CodecErrc code, const std::string& what) const
      -> CodecError {
    return CodecError(code, std::string(format_) + ": at byte " + std::to_string(at) + ": " + what);
  }

 private:
  [[nodiscard]] static auto describe(char c) -> std::string {
    if (c >= 0x20 && c < 0x7f) {
      return std::string("'") + c + "'";
    }
    constexpr char kHex[] = "0123456789abcdef";
    const auto byte = static_cast<unsigned char>(c);
    return std::string("byte 0x") + kHex[byte >> 4U] + kHex[byte & 0xfU];
  }
  [[nodiscard]] auto found() const -> std::string {
    return pos_ < bytes_.size() ? describe(bytes_[pos_]) : std::string("the end of the input");
  }

  /// expect: consumes `c` or fails saying what it is after.
  [[nodiscard]] auto expect(char c, std::string_view after) -> std::optional<CodecError> {
    if (pos_ < bytes_.size() && bytes_[pos_] == c) {
      ++pos_;
      return std::nullopt;
    }
    return fail(CodecErrc::kCorrupt,
                std::string("expected '") + c + "' " + std::string(after) + ", found " + found());
  }

  /// length: an unsigned decimal count (a string length, an element count),
  /// which the caller checks against the bytes left.
  [[nodiscard]] auto length(std::string_view what) -> CodecResult<std::uint64_t> {
    const std::size_t start = pos_;
    std::uint64_t number = 0;
    while (pos_ < bytes_.size() && bytes_[pos_] >= '0' && bytes_[pos_] <= '9') {
      const auto digit = static_cast<std::uint64_t>(bytes_[pos_] - '0');
      if (number > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        return fail_at(start, CodecErrc::kCorrupt, std::string(what) + " beyond 64 bits");
      }
      number = number * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) {
      return fail(CodecErrc::kCorrupt,
                  "expected the digits of " + std::string(what) + ", found " + found());
    }
    return number;
  }

  [[nodiscard]] auto integer() -> CodecResult<Value> {
    pos_ += 1;
    if (auto error = expect(':', "after 'i'")) {
      return *error;
    }
    const std::size_t start = pos_;
    bool negative = false;
    if (pos_ < bytes_.size() && (bytes_[pos_] == '+' || bytes_[pos_] == '-')) {
      negative = bytes_[pos_] == '-';
      ++pos_;
    }
    const std::size_t digits = pos_;
    while (pos_ < bytes_.size() && bytes_[pos_] >= '0' && bytes_[pos_] <= '9') {
      ++pos_;
    }
    if (pos_ == digits) {
      return fail(CodecErrc::kCorrupt, "expected the digits of an integer, found " + found());
    }
    std::uint64_t magnitude = 0;
    bool overflow = false;
    for (std::size_t at = digits; at < pos_; ++at) {
      const auto digit = static_cast<std::uint64_t>(bytes_[at] - '0');
      if (magnitude > (std::uint64_t{1} << 63U) / 10 ||
          magnitude * 10 > (std::uint64_t{1} << 63U) - digit) {
        overflow = true;
        break;
      }
      magnitude = magnitude * 10 + digit;
    }
    if (overflow || (!negative && magnitude > (std::uint64_t{1} << 63U) - 1)) {
      return fail_at(start, CodecErrc::kTooLarge,
                     "integer out of range: " + std::string(bytes_.substr(start, pos_ - start)));
    }
    if (auto error = expect(';', "after the integer")) {
      return *error;
    }
    const std::int64_t number = negative ? (magnitude == (std::uint64_t{1} << 63U)
                                                ? std::numeric_limits<std::int64_t>::min()
                                                : -static_cast<std::int64_t>(magnitude))
                                         : static_cast<std::int64_t>(magnitude);
    return Value(number);
  }

  [[nodiscard]] auto floating() -> CodecResult<Value> {
    pos_ += 1;
    if (auto error = expect(':', "after 'd'")) {
      return *error;
    }
    const std::size_t start = pos_;
    const std::size_t end = bytes_.find(';', start);
    if (end == std::string_view::npos) {
      return fail(CodecErrc::kCorrupt, "a float without its ';'");
    }
    const std::string_view text = bytes_.substr(start, end - start);
    const auto number = parse_float_text(text);
    if (!number) {
      return fail(CodecErrc::kCorrupt, "not a float: '" + std::string(text.substr(0, 40)) + "'");
    }
    pos_ = end + 1;
    return Value(*number);
  }

  [[nodiscard]] auto string() -> CodecResult<Value> {
    const bool escaped = bytes_[pos_] == 'S';
    pos_ += 1;
    if (auto error = expect(':', "after the string type")) {
      return *error;
    }
    const std::size_t at = pos_;
    auto claimed = length("a string length");
    if (!claimed) {
      return claimed.error();
    }
    if (auto error = expect(':', "after the string length")) {
      return *error;
    }
    if (auto error = expect('"', "before the string")) {
      return *error;
    }
    // Within the bytes left, so within limits.max_size too (the whole input
    // is): an escaped byte takes more room, never less.
    if (*claimed > bytes_.size() - pos_) {
      return fail_at(at, CodecErrc::kCorrupt,
                     std::string(escaped ? "an escaped string of " : "a string of ") +
                         std::to_string(*claimed) + " bytes, but only " +
                         std::to_string(bytes_.size() - pos_) + " bytes are left");
    }
    const auto size = static_cast<std::size_t>(*claimed);
    if (!budget_.take(size)) {
      return fail_at(at, CodecErrc::kTooLarge,
                     budget_.exceeded("a string of " + std::to_string(size) + " bytes"));
    }
    std::string text;
    if (!escaped) {
      text.assign(bytes_.substr(pos_, size));
      pos_ += size;
    } else {
      // S: each byte is itself or '\' and two hex digits.
      text.reserve(size);
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') {
          return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
          return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
          return c - 'A' + 10;
        }
        return -1;
      };
      while (text.size() < size) {
        if (pos_ >= bytes_.size()) {
          return fail(CodecErrc::kCorrupt, "the escaped string ends early");
        }
        if (bytes_[pos_] != '\\') {
          text.push_back(bytes_[pos_++]);
          continue;
        }
        const int high = pos_ + 1 < bytes_.size() ? hex(bytes_[pos_ + 1]) : -1;
        const int low = pos_ + 2 < bytes_.size() ? hex(bytes_[pos_ + 2]) : -1;
        if (high < 0 || low < 0) {
          return fail(CodecErrc::kCorrupt, "expected two hex digits after '\\'");
        }
        text.push_back(static_cast<char>(high * 16 + low));
        pos_ += 3;
      }
    }
    if (auto error = expect('"', "after the string")) {
      return *error;
    }
    if (auto error = expect(';', "after the string")) {
      return *error;
    }
    return Value(std::move(text));
  }

  /// key: an array key, i: or s: (S:); a string of canonical integer text
  /// becomes that integer, as PHP makes it.
  [[nodiscard]] auto key() -> CodecResult<Value> {
    const char tag = pos_ < bytes_.size() ? bytes_[pos_] : '\0';
    if (tag != 'i' && tag != 's' && tag != 'S') {
      return fail(CodecErrc::kCorrupt, "expected an array key (i: or s:), found " + found());
    }
    auto parsed = tag == 'i' ? integer() : string();
    if (parsed && parsed->is_string()) {
      if (const auto number = php_integer_key(parsed->as_string())) {
        return Value(*number);
      }
    }
    return parsed;
  }

  [[nodiscard]] auto array(std::size_t depth) -> CodecResult<Value> {
    const std::size_t at = pos_;
    if (depth + 1 > limits_.max_depth) {
      return fail(CodecErrc::kTooDeep,
                  "arrays nested deeper than the limit of " + std::to_string(limits_.max_depth));
    }
    pos_ += 1;
    if (auto error = expect(':', "after 'a'")) {
      return *error;
    }
    auto count = length("an element count");
    if (!count) {
      return count.error();
    }
    if (auto error = expect(':', "after the element count")) {
      return *error;
    }
    if (auto error = expect('{', "before the elements")) {
      return *error;
    }
    // The smallest element, "i:0;N;", takes 6 bytes.
    constexpr std::uint64_t kSmallestElement = 6;
    if (*count > (bytes_.size() - pos_) / kSmallestElement) {
      return fail_at(at, CodecErrc::kCorrupt,
                     "an array of " + std::to_string(*count) + " elements, but only " +
                         std::to_string(bytes_.size() - pos_) + " bytes are left");
    }
    // No room is reserved for the claimed count: nested arrays could each
    // claim most of the input.
    Value::Map entries;
    std::map<std::int64_t, std::size_t> integer_index;
    std::map<std::string, std::size_t, std::less<>> string_index;
    for (std::uint64_t i = 0; i < *count; ++i) {
      auto parsed_key = key();
      if (!parsed_key) {
        return parsed_key.error();
      }
      auto element = value(depth + 1);
      if (!element) {
        return element.error();
      }
      Value& k = *parsed_key;
      // A repeated key keeps its first place and takes the later value, as
      // PHP's unserialize() does.
      std::size_t* seen = nullptr;
      if (k.is_int()) {
        const auto [place, fresh] = integer_index.try_emplace(k.as_int(), entries.size());
        seen = fresh ? nullptr : &place->second;
      } else {
        const auto [place, fresh] = string_index.try_emplace(k.as_string(), entries.size());
        seen = fresh ? nullptr : &place->second;
      }
      if (seen != nullptr) {
        entries[*seen].second = std::move(*element);
      } else if (!budget_.take_entries(1)) {
        return fail_at(at, CodecErrc::kTooLarge,
                       budget_.exceeded("an array of " + std::to_string(*count) + " elements"));
      } else {
        entries.emplace_back(std::move(k), std::move(*element));
      }
    }
    if (auto error = expect('}', "after the array's elements")) {
      return *error;
    }
    bool is_list = true;
    for (std::size_t i = 0; i < entries.size() && is_list; ++i) {
      is_list =
          entries[i].first.is_int() && entries[i].first.as_int() == static_cast<std::int64_t>(i);
    }
    if (!is_list) {
      return Value::map(std::move(entries));
    }
    Value::List items;
    items.reserve(entries.size());
    for (Value::Entry& entry : entries) {
      items.push_back(std::move(entry.second));
    }
    return Value::list(std::move(items));
  }

  std::string_view bytes_;
  DecodeLimits limits_;
  DecodeBudget budget_;
  std::string_view format_;
  std::size_t pos_ = 0;
};

inline constexpr std::string_view kPhpSerializeFormat = "php-serialize";
inline constexpr std::string_view kPhpSessionFormat = "php-session";

}  // namespace detail

/// php_serialize: `value` as PHP 8.2's serialize() writes it: `N;`, `b:1;`,
/// `i:42;`, `d:0.5;`, `s:5:"hello";` (strings and bytes alike), a list as
/// `a:n:{i:0;...}`, a map as `a:n:{<key><value>...}` (an int key, or a string
/// key of canonical integer text, as `i:k;`). kNotEncodable: a map key that
/// is not an int, string or bytes; a map whose keys repeat once PHP converts
/// them; a kSerialized value, unless it is the whole value and its format is
/// "php-serialize" (its data is then written as it is).
[[nodiscard]] inline auto php_serialize(const Value& value) -> CodecResult<std::string> {
  if (value.is_serialized()) {
    const SerializedObject& object = value.as_serialized();
    if (object.format == detail::kPhpSerializeFormat) {
      return object.data;
    }
    return CodecError(CodecErrc::kNotEncodable,
                      "php-serialize: a serialized \"" + object.format + "\" value");
  }
  std::string out;
  if (auto error = detail::php_serialize_into(out, value, detail::kPhpSerializeFormat)) {
    return *error;
  }
  return out;
}

/// php_unserialize: the Value of serialize() text: N, b, i, d (see
/// detail::parse_float_text), s (and the escaped S), a. An array whose keys
/// are 0..n-1 in order becomes a list, any other a map with int and string
/// keys (a string key of canonical integer text becomes the int, and a
/// repeated key keeps its first place and its last value, as in PHP). An
/// object, enum or reference anywhere: Value::serialized("php-serialize",
/// bytes). Errors: kCorrupt for bad or trailing bytes, kTooLarge for an
/// integer outside int64 (PHP clamps it), a string or input over
/// limits.max_size or a tree over limits.max_decoded_bytes, kTooDeep for
/// arrays nested deeper than limits.max_depth.
[[nodiscard]] inline auto php_unserialize(std::string_view bytes, const DecodeLimits& limits = {})
    -> CodecResult<Value> {
  if (bytes.size() > limits.max_size) {
    return CodecError(CodecErrc::kTooLarge, "php-serialize: " + std::to_string(bytes.size()) +
                                                " bytes, over the limit of " +
                                                std::to_string(limits.max_size));
  }
  detail::PhpUnserializer reader(bytes, limits, detail::kPhpSerializeFormat);
  if (auto error = reader.take(1, sizeof(Value), "a value")) {
    return *std::move(error);
  }
  auto decoded = reader.value(0);
  if (!decoded) {
    if (decoded.code() == CodecErrc::kUnsupported) {
      return Value::serialized(std::string(detail::kPhpSerializeFormat), std::string(bytes));
    }
    return decoded;
  }
  if (reader.position() != bytes.size()) {
    return reader.fail(CodecErrc::kCorrupt,
                       std::to_string(bytes.size() - reader.position()) + " bytes after the value");
  }
  return decoded;
}

/// php_session_decode: the session variables of PHP session data (handler
/// "php"): a map of name (string) to value, in order; a repeated name keeps
/// its first place and its last value. An empty input is an empty map. An
/// object, enum or reference anywhere: Value::serialized("php-session",
/// bytes). Errors as php_unserialize; bytes left with no '|' are kCorrupt
/// (PHP fails on them too).
[[nodiscard]] inline auto php_session_decode(std::string_view bytes,
                                             const DecodeLimits& limits = {})
    -> CodecResult<Value> {
  if (bytes.size() > limits.max_size) {
    return CodecError(CodecErrc::kTooLarge, "php-session: " + std::to_string(bytes.size()) +
                                                " bytes, over the limit of " +
                                                std::to_string(limits.max_size));
  }
  detail::PhpUnserializer reader(bytes, limits, detail::kPhpSessionFormat);
  if (auto error = reader.take(1, sizeof(Value), "a value")) {
    return *std::move(error);
  }
  Value::Map entries;
  std::map<std::string, std::size_t, std::less<>> index;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::size_t bar = bytes.find('|', at);
    if (bar == std::string_view::npos) {
      return reader.fail_at(at, CodecErrc::kCorrupt,
                            "a session variable name without its '|' (" +
                                std::to_string(bytes.size() - at) + " bytes left)");
    }
    reader.seek(at);
    if (auto error = reader.take(
            1, bar - at, "a session variable name of " + std::to_string(bar - at) + " bytes")) {
      return *std::move(error);
    }
    std::string name(bytes.substr(at, bar - at));
    reader.seek(bar + 1);
    auto decoded = reader.value(0);
    if (!decoded) {
      if (decoded.code() == CodecErrc::kUnsupported) {
        return Value::serialized(std::string(detail::kPhpSessionFormat), std::string(bytes));
      }
      return decoded.error();
    }
    const auto [place, fresh] = index.try_emplace(name, entries.size());
    if (fresh) {
      if (auto error = reader.take(1, sizeof(Value::Entry), "a session variable")) {
        return *std::move(error);
      }
      entries.emplace_back(Value(std::move(name)), std::move(*decoded));
    } else {
      entries[place->second].second = std::move(*decoded);
    }
    at = reader.position();
  }
  return Value::map(std::move(entries));
}

/// php_session_encode: a map of session variables as PHP writes the session
/// (handler "php"): `name|<serialized value>` for each entry, in order.
/// kNotEncodable: not a map; a name that is not a string (or bytes), holds
/// '|', is canonical integer text (PHP skips such names) or repeats; a value
/// php_serialize refuses. A Value::serialized("php-session", data) is written
/// as its data.
[[nodiscard]] inline auto php_session_encode(const Value& map) -> CodecResult<std::string> {
  if (map.is_serialized() && map.as_serialized().format == detail::kPhpSessionFormat) {
    return map.as_serialized().data;
  }
  if (!map.is_map()) {
    return CodecError(CodecErrc::kNotEncodable,
                      "php-session: a " + std::string(to_string(map.kind())) +
                          " value (session data is a map of names to values)");
  }
  const Value::Map& entries = map.as_map();
  auto keys = detail::php_array_keys(entries, detail::kPhpSessionFormat);
  if (!keys) {
    return keys.error();
  }
  std::string out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const detail::PhpKey& key = (*keys)[i];
    if (key.is_integer) {
      return CodecError(CodecErrc::kNotEncodable, "php-session: the integer name " +
                                                      std::to_string(key.integer) +
                                                      " (PHP skips integer session names)");
    }
    if (key.text.find('|') != std::string_view::npos) {
      return CodecError(CodecErrc::kNotEncodable,
                        "php-session: the name \"" + std::string(key.text) + "\" holds a '|'");
    }
    out.append(key.text);
    out.push_back('|');
    if (auto error =
            detail::php_serialize_into(out, entries[i].second, detail::kPhpSessionFormat)) {
      return *error;
    }
  }
  return out;
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PHP_SERIALIZE_HPP_
