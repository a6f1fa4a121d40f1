// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_MSGPACK_HPP_
#define MEMSHARD_CODECS_MSGPACK_HPP_

// codecs/msgpack.hpp: MessagePack as php-msgpack 2.2.0 writes it for
// php-memcached's SERIALIZER_MSGPACK (flags type 7): msgpack_encode and
// msgpack_decode.
//
// The format facts that matter (all big-endian):
//   * integers take the smallest form: positive fixint 00..7f, negative fixint
//     e0..ff (-32..-1), then cc/cd/ce/cf (uint 8..64) for non-negative values
//     and d0/d1/d2/d3 (int 8..64) for negative ones. php-msgpack writes 128 as
//     cc 80 and -33 as d0 df;
//   * doubles are always float64 (cb + 8 bytes); float32 (ca) is only read;
//   * nil c0, false c2, true c3; c1 is never used;
//   * PHP strings are written as str (a0..bf fixstr, d9 str8, da str16, db
//     str32), never as bin; memshard writes kBytes as bin (c4/c5/c6), which
//     PHP reads back as a string;
//   * a PHP array whose keys are 0..n-1 in order is an array (90..9f, dc, dd),
//     any other array a map (80..8f, de, df) with integer or string keys.
//     msgpack_encode writes a list as an array, and a map as the PHP array
//     it stands for: integer-like string keys ("5") become integers, keys
//     0..n-1 in order (and no keys: PHP reads an empty map, 80, as a stdClass
//     object) make an array. A map with keys PHP cannot have (bools, lists)
//     is written with its keys as they are;
//   * a PHP object is a map whose first key is nil (`82 c0 a3 "Foo" a1 "a"
//     01` for an object of class Foo with $a = 1; PHP references use the same
//     marker), and extension types (c7..c9, d4..d8) belong to other writers:
//     both make the whole input decode to Value::serialized("msgpack", bytes).
//
// A str is a kString whatever its bytes (PHP strings are bytes, so invalid
// UTF-8 is still a string); a bin is kBytes. A uint64 above INT64_MAX is an
// error (kTooLarge), never wrapped.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/decode_budget.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// msgpack_put_be: appends the low `width` bytes of `number`, big-endian.
inline void msgpack_put_be(std::string& out, std::uint64_t number, int width) {
  for (int shift = (width - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((number >> static_cast<unsigned>(shift)) & 0xFFU));
  }
}

/// msgpack_put_head: appends a length-prefixed head: the fix form when the
/// length fits in `fix_bits` bits (fix_bits 0: no fix form), else the 8-bit
/// form (when `tag8` is non-zero), the 16-bit or the 32-bit one.
inline auto msgpack_put_head(std::string& out, std::size_t length, unsigned fix_tag, int fix_bits,
                             unsigned tag8, unsigned tag16, unsigned tag32) -> bool {
  if (fix_bits > 0 && length < (std::size_t{1} << static_cast<unsigned>(fix_bits))) {
    out.push_back(static_cast<char>(fix_tag | static_cast<unsigned>(length)));
  } else if (tag8 != 0 && length <= 0xFFU) {
    out.push_back(static_cast<char>(tag8));
    msgpack_put_be(out, length, 1);
  } else if (length <= 0xFFFFU) {
    out.push_back(static_cast<char>(tag16));
    msgpack_put_be(out, length, 2);
  } else if (length <= 0xFFFFFFFFU) {
    out.push_back(static_cast<char>(tag32));
    msgpack_put_be(out, length, 4);
  } else {
    return false;
  }
  return true;
}

/// msgpack_put_int: appends `number` in its smallest msgpack form.
inline void msgpack_put_int(std::string& out, std::int64_t number) {
  if (number >= 0) {
    const auto magnitude = static_cast<std::uint64_t>(number);
    if (magnitude <= 0x7FU) {
      out.push_back(static_cast<char>(magnitude));
    } else if (magnitude <= 0xFFU) {
      out.push_back(static_cast<char>(0xCC));
      msgpack_put_be(out, magnitude, 1);
    } else if (magnitude <= 0xFFFFU) {
      out.push_back(static_cast<char>(0xCD));
      msgpack_put_be(out, magnitude, 2);
    } else if (magnitude <= 0xFFFFFFFFU) {
      out.push_back(static_cast<char>(0xCE));
      msgpack_put_be(out, magnitude, 4);
    } else {
      out.push_back(static_cast<char>(0xCF));
      msgpack_put_be(out, magnitude, 8);
    }
    return;
  }
  const auto bits = static_cast<std::uint64_t>(number);
  if (number >= -32) {
    out.push_back(static_cast<char>(bits & 0xFFU));
  } else if (number >= -128) {
    out.push_back(static_cast<char>(0xD0));
    msgpack_put_be(out, bits, 1);
  } else if (number >= -32768) {
    out.push_back(static_cast<char>(0xD1));
    msgpack_put_be(out, bits, 2);
  } else if (number >= -2147483648LL) {
    out.push_back(static_cast<char>(0xD2));
    msgpack_put_be(out, bits, 4);
  } else {
    out.push_back(static_cast<char>(0xD3));
    msgpack_put_be(out, bits, 8);
  }
}

/// msgpack_php_integer_key: the integer PHP makes of an array key string
/// ("5", "-5"; not "05", "-0", " 5" or a number outside int64), or nothing.
[[nodiscard]] inline auto msgpack_php_integer_key(std::string_view key) noexcept
    -> std::optional<std::int64_t> {
  const bool negative = !key.empty() && key.front() == '-';
  const std::string_view digits = negative ? key.substr(1) : key;
  if (digits.empty() || digits.size() > 19 || (digits.front() == '0' && key.size() > 1)) {
    return std::nullopt;
  }
  std::uint64_t magnitude = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    magnitude = magnitude * 10 + static_cast<std::uint64_t>(c - '0');
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (magnitude > kMax + (negative ? 1U : 0U)) {
    return std::nullopt;
  }
  return negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
}

inline auto msgpack_write(std::string& out, const Value& value) -> std::optional<CodecError>;

/// msgpack_write_map: a map as php-msgpack writes the PHP array it stands for
/// when every key is an integer or a string: integer-like string keys become
/// integers, keys 0..n-1 in order make an array. A map with other keys (which
/// PHP cannot hold) is written as it is.
inline auto msgpack_write_map(std::string& out, const Value::Map& entries)
    -> std::optional<CodecError> {
  bool php_keys = true;
  for (const Value::Entry& entry : entries) {
    php_keys =
        php_keys && (entry.first.is_int() || entry.first.is_string() || entry.first.is_bytes());
  }
  std::vector<std::optional<std::int64_t>> numbers(entries.size());
  bool in_order = php_keys;
  if (php_keys) {
    std::unordered_set<std::int64_t> seen_numbers;
    std::unordered_set<std::string_view> seen_texts;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const Value& key = entries[i].first;
      numbers[i] = key.is_int() ? std::optional<std::int64_t>(key.as_int())
                                : msgpack_php_integer_key(key.as_string());
      const bool fresh = numbers[i] ? seen_numbers.insert(*numbers[i]).second
                                    : seen_texts.insert(key.as_string()).second;
      if (!fresh) {
        return CodecError(
            CodecErrc::kNotEncodable,
            "msgpack: the map key " +
                (numbers[i] ? std::to_string(*numbers[i]) : "\"" + key.as_string() + "\"") +
                " appears twice as a PHP array key");
      }
      in_order = in_order && numbers[i] == static_cast<std::int64_t>(i);
    }
  }
  if (in_order) {
    // Also the empty map: php-msgpack reads an empty map (80) as a stdClass
    // object, and writes PHP's empty array as 90.
    if (!msgpack_put_head(out, entries.size(), 0x90U, 4, 0, 0xDCU, 0xDDU)) {
      return CodecError(CodecErrc::kNotEncodable, "msgpack: a map longer than 2^32-1");
    }
    for (const Value::Entry& entry : entries) {
      if (auto error = msgpack_write(out, entry.second)) {
        return error;
      }
    }
    return std::nullopt;
  }
  if (!msgpack_put_head(out, entries.size(), 0x80U, 4, 0, 0xDEU, 0xDFU)) {
    return CodecError(CodecErrc::kNotEncodable, "msgpack: a map longer than 2^32-1");
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (numbers[i]) {
      msgpack_put_int(out, *numbers[i]);
    } else if (auto error = msgpack_write(out, entries[i].first)) {
      return error;
    }
    if (auto error = msgpack_write(out, entries[i].second)) {
      return error;
    }
  }
  return std::nullopt;
}

/// msgpack_write: appends `value`; an error when it has no msgpack form.
inline auto msgpack_write(std::string& out, const Value& value) -> std::optional<CodecError> {
  auto too_long = [](std::string_view what) {
    return CodecError(CodecErrc::kNotEncodable, "msgpack: a " + std::string(what) +
                                                    " longer than 2^32-1 has no msgpack form");
  };
  switch (value.kind()) {
    case ValueKind::kNull:
      out.push_back(static_cast<char>(0xC0));
      return std::nullopt;
    case ValueKind::kBool:
      out.push_back(static_cast<char>(value.as_bool() ? 0xC3 : 0xC2));
      return std::nullopt;
    case ValueKind::kInt:
      msgpack_put_int(out, value.as_int());
      return std::nullopt;
    case ValueKind::kFloat:
      out.push_back(static_cast<char>(0xCB));
      msgpack_put_be(out, std::bit_cast<std::uint64_t>(value.as_double()), 8);
      return std::nullopt;
    case ValueKind::kString:
    case ValueKind::kBytes: {
      const std::string& text = value.as_string();
      const bool is_text = value.is_string();
      if (!(is_text ? msgpack_put_head(out, text.size(), 0xA0U, 5, 0xD9U, 0xDAU, 0xDBU)
                    : msgpack_put_head(out, text.size(), 0, 0, 0xC4U, 0xC5U, 0xC6U))) {
        return too_long(is_text ? "string" : "byte string");
      }
      out += text;
      return std::nullopt;
    }
    case ValueKind::kList: {
      const Value::List& items = value.as_list();
      if (!msgpack_put_head(out, items.size(), 0x90U, 4, 0, 0xDCU, 0xDDU)) {
        return too_long("list");
      }
      for (const Value& item : items) {
        if (auto error = msgpack_write(out, item)) {
          return error;
        }
      }
      return std::nullopt;
    }
    case ValueKind::kMap:
      return msgpack_write_map(out, value.as_map());
    case ValueKind::kSerialized: {
      const SerializedObject& object = value.as_serialized();
      if (object.format != "msgpack") {
        return CodecError(CodecErrc::kNotEncodable,
                          "msgpack: a serialized " + object.format + " value has no msgpack form");
      }
      out += object.data;
      return std::nullopt;
    }
  }
  return CodecError(CodecErrc::kNotEncodable, "msgpack: a value of an unknown kind");
}

/// MsgpackReader: the decoder's state: the input, the read position, the
/// limits and what is left of max_decoded_bytes, and whether an opaque
/// construct (an extension type or a PHP object) was seen.
class MsgpackReader {
 public:
  MsgpackReader(std::string_view bytes, const DecodeLimits& limits) noexcept
      : bytes_(bytes), limits_(limits), budget_(limits.max_decoded_bytes) {}

  [[nodiscard]] auto decode() -> CodecResult<Value> {
    if (!budget_.take_values(1)) {
      return fail(CodecErrc::kTooLarge, 0, budget_.exceeded("a value"));
    }
    CodecResult<Value> value = read(0);
    if (!value) {
      return value;
    }
    if (pos_ != bytes_.size()) {
      return fail(CodecErrc::kCorrupt, pos_,
                  std::to_string(bytes_.size() - pos_) + " bytes after the value");
    }
    if (opaque_) {
      return Value::serialized("msgpack", std::string(bytes_));
    }
    return value;
  }

 private:
  [[nodiscard]] static auto fail(CodecErrc code, std::size_t at, const std::string& what)
      -> CodecError {
    return CodecError(code, "msgpack: at byte " + std::to_string(at) + ": " + what);
  }

  [[nodiscard]] auto left() const noexcept -> std::size_t { return bytes_.size() - pos_; }

  [[nodiscard]] auto byte_at(std::size_t at) const noexcept -> unsigned {
    return static_cast<unsigned char>(bytes_[at]);
  }

  /// be: the `width`-byte big-endian number at the read position (the caller
  /// checked that it is there).
  [[nodiscard]] auto be(int width) noexcept -> std::uint64_t {
    std::uint64_t number = 0;
    for (int i = 0; i < width; ++i) {
      number = number << 8U | byte_at(pos_++);
    }
    return number;
  }

  /// need: an error unless `width` bytes of `what` follow the tag at `tag_at`.
  [[nodiscard]] auto need(std::size_t width, std::size_t tag_at, std::string_view what) const
      -> std::optional<CodecError> {
    if (left() < width) {
      return fail(CodecErrc::kCorrupt, tag_at,
                  "the data ends inside " + std::string(what) + " (" + std::to_string(width) +
                      " bytes needed, " + std::to_string(left()) + " left)");
    }
    return std::nullopt;
  }

  [[nodiscard]] auto read_length(int width, std::size_t tag_at, std::string_view what)
      -> CodecResult<std::size_t> {
    if (auto error = need(static_cast<std::size_t>(width), tag_at, what)) {
      return *std::move(error);
    }
    return static_cast<std::size_t>(be(width));
  }

  [[nodiscard]] auto read_data(std::size_t length, std::size_t tag_at, bool text)
      -> CodecResult<Value> {
    std::string_view what = text ? "a string" : "a byte string";
    if (length > left()) {
      return fail(CodecErrc::kCorrupt, tag_at,
                  std::string(what) + " of " + std::to_string(length) + " bytes with only " +
                      std::to_string(left()) + " left");
    }
    if (length > limits_.max_size) {
      return fail(CodecErrc::kTooLarge, tag_at,
                  std::string(what) + " of " + std::to_string(length) +
                      " bytes, more than max_size " + std::to_string(limits_.max_size));
    }
    if (!budget_.take(length)) {
      return fail(CodecErrc::kTooLarge, tag_at,
                  budget_.exceeded(std::string(what) + " of " + std::to_string(length) + " bytes"));
    }
    std::string data(bytes_.substr(pos_, length));
    pos_ += length;
    return text ? Value(std::move(data)) : Value::bytes(std::move(data));
  }

  [[nodiscard]] auto skip_ext(std::size_t length, std::size_t tag_at) -> CodecResult<Value> {
    // The type byte, then the data.
    if (length > left() || left() - length < 1) {
      return fail(CodecErrc::kCorrupt, tag_at,
                  "an extension value of " + std::to_string(length) + " bytes with only " +
                      std::to_string(left()) + " left");
    }
    pos_ += 1 + length;
    opaque_ = true;
    return Value();
  }

  [[nodiscard]] auto read_list(std::size_t count, std::size_t tag_at, std::size_t depth)
      -> CodecResult<Value> {
    if (depth >= limits_.max_depth) {
      return fail(CodecErrc::kTooDeep, tag_at,
                  "an array nested deeper than max_depth " + std::to_string(limits_.max_depth));
    }
    if (count > left()) {
      return fail(CodecErrc::kCorrupt, tag_at,
                  "an array of " + std::to_string(count) + " elements with only " +
                      std::to_string(left()) + " bytes left");
    }
    if (!budget_.take_values(count)) {
      return fail(CodecErrc::kTooLarge, tag_at,
                  budget_.exceeded("an array of " + std::to_string(count) + " elements"));
    }
    Value::List items;
    items.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      CodecResult<Value> item = read(depth + 1);
      if (!item) {
        return item;
      }
      items.push_back(*std::move(item));
    }
    return Value::list(std::move(items));
  }

  [[nodiscard]] auto read_map(std::size_t count, std::size_t tag_at, std::size_t depth)
      -> CodecResult<Value> {
    if (depth >= limits_.max_depth) {
      return fail(CodecErrc::kTooDeep, tag_at,
                  "a map nested deeper than max_depth " + std::to_string(limits_.max_depth));
    }
    if (count > left() / 2) {
      return fail(CodecErrc::kCorrupt, tag_at,
                  "a map of " + std::to_string(count) + " entries with only " +
                      std::to_string(left()) + " bytes left");
    }
    if (!budget_.take_entries(count)) {
      return fail(CodecErrc::kTooLarge, tag_at,
                  budget_.exceeded("a map of " + std::to_string(count) + " entries"));
    }
    Value::Map entries;
    entries.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      CodecResult<Value> key = read(depth + 1);
      if (!key) {
        return key;
      }
      if (i == 0 && key->is_null()) {
        opaque_ = true;  // php-msgpack's object (or reference) marker
      }
      CodecResult<Value> item = read(depth + 1);
      if (!item) {
        return item;
      }
      entries.emplace_back(*std::move(key), *std::move(item));
    }
    return Value::map(std::move(entries));
  }

  [[nodiscard]] auto read(std::size_t depth) -> CodecResult<Value> {
    const std::size_t at = pos_;
    if (left() == 0) {
      return fail(CodecErrc::kCorrupt, at, "the data ends where a value should start");
    }
    const unsigned tag = byte_at(pos_++);
    if (tag <= 0x7FU) {
      return Value(static_cast<std::int64_t>(tag));
    }
    if (tag >= 0xE0U) {
      return Value(static_cast<std::int64_t>(tag) - 256);
    }
    if (tag <= 0x8FU) {
      return read_map(tag & 0x0FU, at, depth);
    }
    if (tag <= 0x9FU) {
      return read_list(tag & 0x0FU, at, depth);
    }
    if (tag <= 0xBFU) {
      return read_data(tag & 0x1FU, at, true);
    }
    switch (tag) {
      case 0xC0:
        return Value();
      case 0xC2:
        return Value(false);
      case 0xC3:
        return Value(true);
      case 0xC4:
      case 0xC5:
      case 0xC6:
      case 0xD9:
      case 0xDA:
      case 0xDB: {
        const bool text = tag >= 0xD9U;
        const int width = 1 << ((text ? tag - 0xD9U : tag - 0xC4U));
        CodecResult<std::size_t> length =
            read_length(width, at, text ? "a string length" : "a byte string length");
        if (!length) {
          return length.error();
        }
        return read_data(*length, at, text);
      }
      case 0xC7:
      case 0xC8:
      case 0xC9: {
        CodecResult<std::size_t> length =
            read_length(1 << (tag - 0xC7U), at, "an extension length");
        if (!length) {
          return length.error();
        }
        return skip_ext(*length, at);
      }
      case 0xD4:
      case 0xD5:
      case 0xD6:
      case 0xD7:
      case 0xD8:
        return skip_ext(std::size_t{1} << (tag - 0xD4U), at);
      case 0xCA:
      case 0xCB: {
        const int width = tag == 0xCAU ? 4 : 8;
        if (auto error = need(static_cast<std::size_t>(width), at, "a float")) {
          return *std::move(error);
        }
        const std::uint64_t bits = be(width);
        if (width == 4) {
          return Value(static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits))));
        }
        return Value(std::bit_cast<double>(bits));
      }
      case 0xCC:
      case 0xCD:
      case 0xCE:
      case 0xCF: {
        const int width = 1 << (tag - 0xCCU);
        if (auto error = need(static_cast<std::size_t>(width), at, "an integer")) {
          return *std::move(error);
        }
        const std::uint64_t number = be(width);
        if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          return fail(CodecErrc::kTooLarge, at,
                      "integer out of range: " + std::to_string(number) + " is above INT64_MAX");
        }
        return Value(static_cast<std::int64_t>(number));
      }
      case 0xD0:
      case 0xD1:
      case 0xD2:
      case 0xD3: {
        const int width = 1 << (tag - 0xD0U);
        if (auto error = need(static_cast<std::size_t>(width), at, "an integer")) {
          return *std::move(error);
        }
        const std::uint64_t raw = be(width);
        const unsigned spare = 64U - 8U * static_cast<unsigned>(width);
        // Sign-extend the width-byte two's complement number.
        const auto number = static_cast<std::int64_t>(raw << spare) >> spare;
        return Value(number);
      }
      case 0xDC:
      case 0xDD:
      case 0xDE:
      case 0xDF: {
        const bool is_map = tag >= 0xDEU;
        const int width = (tag & 1U) == 0 ? 2 : 4;
        CodecResult<std::size_t> count =
            read_length(width, at, is_map ? "a map size" : "an array size");
        if (!count) {
          return count.error();
        }
        return is_map ? read_map(*count, at, depth) : read_list(*count, at, depth);
      }
      default:
        break;
    }
    return fail(CodecErrc::kCorrupt, at, "byte 0xc1 is not a msgpack type");
  }

  std::string_view bytes_;
  const DecodeLimits& limits_;
  DecodeBudget budget_;
  std::size_t pos_ = 0;
  bool opaque_ = false;
};

}  // namespace detail

/// msgpack_encode: `value` as php-msgpack 2.2.0 writes the same PHP value:
/// null, bools, integers in their smallest form, doubles as float64, strings
/// as str, bytes as bin, lists as arrays, maps as PHP arrays (integer-like
/// string keys as integers; keyed 0..n-1 in order, or empty, as an array;
/// else as a map). A Value::serialized("msgpack", data) is written as `data`
/// unchanged (also inside a list or map: it is one msgpack value).
/// kNotEncodable: two integer or string keys that are one PHP key (1 and
/// "1"), a serialized value of another format, anything longer than 2^32-1.
[[nodiscard]] inline auto msgpack_encode(const Value& value) -> CodecResult<std::string> {
  std::string out;
  if (auto error = detail::msgpack_write(out, value)) {
    return *std::move(error);
  }
  return out;
}

/// msgpack_decode: the Value of one msgpack value filling `bytes`: str →
/// kString, bin → kBytes, array → kList, map → kMap (keys of any kind, order
/// kept), float32/float64 → kFloat. The whole input becomes
/// Value::serialized("msgpack", bytes) when it holds an extension type or a
/// map whose first key is nil (php-msgpack's object and reference marker);
/// the rest is still checked. Errors: kCorrupt (truncated data, a count the
/// bytes left cannot hold, byte c1, bytes after the value), kTooLarge (an
/// integer above INT64_MAX, a string over limits.max_size, a tree over
/// limits.max_decoded_bytes: an array or map header is checked before any
/// room is reserved), kTooDeep (arrays and maps nested deeper than
/// limits.max_depth).
[[nodiscard]] inline auto msgpack_decode(std::string_view bytes, const DecodeLimits& limits = {})
    -> CodecResult<Value> {
  return detail::MsgpackReader(bytes, limits).decode();
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_MSGPACK_HPP_
