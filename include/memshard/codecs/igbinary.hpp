// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_IGBINARY_HPP_
#define MEMSHARD_CODECS_IGBINARY_HPP_

// codecs/igbinary.hpp: igbinary, PHP's binary serializer, as php-igbinary
// 3.2.13 writes it for php-memcached's SERIALIZER_IGBINARY (flags type 5):
// igbinary_serialize and igbinary_unserialize.
//
// The format facts that matter (numbers big-endian):
//   * a 4-byte header 00 00 00 02 (version 1, 00 00 00 01, is still read);
//     then one tagged value and nothing after it;
//   * 00 null, 04 false, 05 true, 0c double (8 bytes of IEEE bits);
//   * integers by magnitude and sign: 06/07 (8-bit positive/negative), 08/09
//     (16), 0a/0b (32), 20/21 (64): -5 is 07 05, PHP_INT_MIN 21 80 00..00;
//   * strings: 0d the empty string; 11/12/13 a string with an 8/16/32-bit
//     length (26: 64-bit). Inside an array (not for a scalar at the top) every
//     distinct non-empty string, key or value, is numbered in order of first
//     appearance, and a repeat is written as 0e/0f/10 and its number:
//     ["a"=>"x","b"=>["a"=>"x"]] is 14 02 11 01 'a' 11 01 'x' 11 01 'b' 14 01
//     0e 00 0e 01;
//   * arrays: 14/15/16 and an 8/16/32-bit count, then key, value, key,
//     value...; keys are integers or strings (PHP turns "5" into 5 but keeps
//     "05", "-0" and " 5"), a null key is an entry without a value;
//   * every array is numbered too (the top one is number 0, in order of
//     appearance), and 01/02/03 and a number stand for a copy of an earlier
//     array. PHP writes that when the same array is stored twice, and for
//     every empty array after the first: all PHP empty arrays are one shared
//     array, so [[], []] is 14 02 06 00 14 00 06 01 01 01;
//   * objects (17..1f, 22..24), PHP references (25) and enum cases (27) are
//     not taken apart: the whole input decodes to
//     Value::serialized("igbinary", bytes).
//
// An igbinary array whose keys are 0, 1, ... n-1 in order decodes to a list,
// any other to a map (keys kInt or kString, order kept). Strings decode to
// kString whatever their bytes (PHP strings are bytes).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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

/// igbinary_integer_key: the integer PHP makes of an array key string, or
/// nothing when PHP keeps it a string. An integer key is "0" or an optional
/// '-' and digits without a leading zero ("-0" is not one) that fit in a
/// 64-bit signed integer.
[[nodiscard]] inline auto igbinary_integer_key(std::string_view key) noexcept
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
  if (negative) {
    if (magnitude - 1 > kMax) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(0 - magnitude);
  }
  if (magnitude > kMax) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(magnitude);
}

/// IgbinaryWriter: igbinary_serialize's state: the output, the numbers given
/// to strings and arrays, and the number of the shared empty array.
class IgbinaryWriter {
 public:
  [[nodiscard]] auto serialize(const Value& value) -> CodecResult<std::string> {
    if (value.is_serialized()) {
      const SerializedObject& object = value.as_serialized();
      if (object.format != "igbinary") {
        return not_encodable(object.format);
      }
      return object.data;
    }
    out_.assign("\x00\x00\x00\x02", 4);
    // A scalar at the top is written without the string table.
    compact_ = value.is_list() || value.is_map();
    if (auto error = write(value, true)) {
      return *std::move(error);
    }
    return std::move(out_);
  }

 private:
  [[nodiscard]] static auto not_encodable(std::string_view format) -> CodecError {
    return CodecError(CodecErrc::kNotEncodable, "igbinary: a serialized " + std::string(format) +
                                                    " value has no igbinary form");
  }

  void put_be(std::uint64_t number, int width) {
    for (int shift = (width - 1) * 8; shift >= 0; shift -= 8) {
      out_.push_back(static_cast<char>((number >> static_cast<unsigned>(shift)) & 0xFFU));
    }
  }

  /// put_sized: the tag for an 8-, 16-, 32- (or 64-) bit number, then it.
  void put_sized(std::uint64_t number, unsigned tag8, unsigned tag16, unsigned tag32,
                 unsigned tag64 = 0) {
    if (number <= 0xFFU) {
      out_.push_back(static_cast<char>(tag8));
      put_be(number, 1);
    } else if (number <= 0xFFFFU) {
      out_.push_back(static_cast<char>(tag16));
      put_be(number, 2);
    } else if (number <= 0xFFFFFFFFU || tag64 == 0) {
      out_.push_back(static_cast<char>(tag32));
      put_be(number, 4);
    } else {
      out_.push_back(static_cast<char>(tag64));
      put_be(number, 8);
    }
  }

  void put_long(std::int64_t number) {
    const bool positive = number >= 0;
    const std::uint64_t magnitude =
        positive ? static_cast<std::uint64_t>(number) : 0 - static_cast<std::uint64_t>(number);
    if (positive) {
      put_sized(magnitude, 0x06U, 0x08U, 0x0AU, 0x20U);
    } else {
      put_sized(magnitude, 0x07U, 0x09U, 0x0BU, 0x21U);
    }
  }

  void put_string(std::string_view text) {
    if (text.empty()) {
      out_.push_back(0x0D);
      return;
    }
    if (compact_) {
      const auto [found, inserted] = strings_.try_emplace(std::string(text), string_count_);
      if (!inserted) {
        put_sized(found->second, 0x0EU, 0x0FU, 0x10U);
        return;
      }
    }
    ++string_count_;
    if (text.size() <= 0xFFFFFFFFU) {
      put_sized(text.size(), 0x11U, 0x12U, 0x13U);
    } else {
      out_.push_back(0x26);
      put_be(text.size(), 8);
    }
    out_ += text;
  }

  /// open_array: writes the head of an array of `count` entries and returns
  /// true, or writes a copy-of-array reference (the shared empty array) and
  /// returns false.
  [[nodiscard]] auto open_array(std::size_t count, bool top) -> bool {
    if (count == 0 && !top) {
      if (empty_array_) {
        put_sized(*empty_array_, 0x01U, 0x02U, 0x03U);
        return false;
      }
      empty_array_ = arrays_;
    }
    ++arrays_;
    put_sized(count, 0x14U, 0x15U, 0x16U);
    return true;
  }

  [[nodiscard]] auto write_map(const Value::Map& entries, bool top) -> std::optional<CodecError> {
    struct Key {
      std::optional<std::int64_t> number;
      std::string_view text;
    };
    std::vector<Key> keys;
    keys.reserve(entries.size());
    std::unordered_set<std::int64_t> numbers;
    std::unordered_set<std::string_view> texts;
    for (const Value::Entry& entry : entries) {
      Key key;
      if (entry.first.is_int()) {
        key.number = entry.first.as_int();
      } else if (entry.first.is_string() || entry.first.is_bytes()) {
        key.text = entry.first.as_string();
        key.number = igbinary_integer_key(key.text);
      } else {
        return CodecError(CodecErrc::kNotEncodable,
                          "igbinary: a " + std::string(to_string(entry.first.kind())) +
                              " map key: PHP array keys are integers and strings");
      }
      const bool fresh =
          key.number ? numbers.insert(*key.number).second : texts.insert(key.text).second;
      if (!fresh) {
        return CodecError(
            CodecErrc::kNotEncodable,
            "igbinary: the map key " +
                (key.number ? std::to_string(*key.number) : "\"" + std::string(key.text) + "\"") +
                " appears twice as a PHP array key");
      }
      keys.push_back(key);
    }
    if (entries.size() > 0xFFFFFFFFU) {
      return CodecError(CodecErrc::kNotEncodable, "igbinary: a map of more than 2^32-1 entries");
    }
    if (!open_array(entries.size(), top)) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (keys[i].number) {
        put_long(*keys[i].number);
      } else {
        put_string(keys[i].text);
      }
      if (auto error = write(entries[i].second, false)) {
        return error;
      }
    }
    return std::nullopt;
  }

  [[nodiscard]] auto write(const Value& value, bool top) -> std::optional<CodecError> {
    switch (value.kind()) {
      case ValueKind::kNull:
        out_.push_back(0x00);
        return std::nullopt;
      case ValueKind::kBool:
        out_.push_back(value.as_bool() ? 0x05 : 0x04);
        return std::nullopt;
      case ValueKind::kInt:
        put_long(value.as_int());
        return std::nullopt;
      case ValueKind::kFloat:
        out_.push_back(0x0C);
        put_be(std::bit_cast<std::uint64_t>(value.as_double()), 8);
        return std::nullopt;
      case ValueKind::kString:
      case ValueKind::kBytes:
        put_string(value.as_string());
        return std::nullopt;
      case ValueKind::kList: {
        const Value::List& items = value.as_list();
        if (items.size() > 0xFFFFFFFFU) {
          return CodecError(CodecErrc::kNotEncodable,
                            "igbinary: a list of more than 2^32-1 elements");
        }
        if (!open_array(items.size(), top)) {
          return std::nullopt;
        }
        for (std::size_t i = 0; i < items.size(); ++i) {
          put_long(static_cast<std::int64_t>(i));
          if (auto error = write(items[i], false)) {
            return error;
          }
        }
        return std::nullopt;
      }
      case ValueKind::kMap:
        return write_map(value.as_map(), top);
      case ValueKind::kSerialized: {
        const SerializedObject& object = value.as_serialized();
        if (object.format != "igbinary") {
          return not_encodable(object.format);
        }
        return CodecError(CodecErrc::kNotEncodable,
                          "igbinary: a serialized igbinary value is a whole igbinary image; it "
                          "cannot be written inside a list or map");
      }
    }
    return CodecError(CodecErrc::kNotEncodable, "igbinary: a value of an unknown kind");
  }

  std::string out_;
  bool compact_ = true;
  std::unordered_map<std::string, std::uint32_t> strings_;
  std::uint32_t string_count_ = 0;
  std::uint32_t arrays_ = 0;
  std::optional<std::uint32_t> empty_array_;
};

/// IgbinaryReader: igbinary_unserialize's state: the input and read
/// position, the strings and arrays seen so far (for back-references), and
/// whether the bytes hold something kept opaque.
///
/// A copy-of-array reference is decoded by reading the earlier array's bytes
/// again ("replay", which numbers nothing). Every array's slots and every
/// string's bytes, replayed or not, are taken from limits.max_decoded_bytes
/// before they are allocated, so neither array nor string references can
/// expand a small input into a large value.
class IgbinaryReader {
 public:
  IgbinaryReader(std::string_view bytes, const DecodeLimits& limits) noexcept
      : bytes_(bytes), limits_(limits), budget_(limits.max_decoded_bytes) {}

  [[nodiscard]] auto decode() -> CodecResult<Value> {
    if (bytes_.size() < 4) {
      return fail(
          CodecErrc::kCorrupt, 0,
          "the data ends inside the 4-byte header (" + std::to_string(bytes_.size()) + " bytes)");
    }
    const std::uint64_t version = be(4);
    if (version != 1 && version != 2) {
      return fail(CodecErrc::kCorrupt, 0,
                  "header version " + std::to_string(version) + " is not igbinary's 1 or 2");
    }
    if (!budget_.take_values(1)) {
      return fail(CodecErrc::kTooLarge, 0, budget_.exceeded("a value"));
    }
    CodecResult<Value> value = read(0);
    if (opaque_) {
      return Value::serialized("igbinary", std::string(bytes_));
    }
    if (!value) {
      return value;
    }
    if (pos_ != bytes_.size()) {
      return fail(CodecErrc::kCorrupt, pos_,
                  std::to_string(bytes_.size() - pos_) + " bytes after the value");
    }
    return value;
  }

 private:
  struct ArrayMark {
    std::size_t start;
    bool complete;
  };

  [[nodiscard]] static auto fail(CodecErrc code, std::size_t at, const std::string& what)
      -> CodecError {
    return CodecError(code, "igbinary: at byte " + std::to_string(at) + ": " + what);
  }

  [[nodiscard]] static auto hex(unsigned tag) -> std::string {
    static constexpr char kDigits[] = "0123456789abcdef";
    return std::string{'0', 'x', kDigits[(tag >> 4U) & 0xFU], kDigits[tag & 0xFU]};
  }

  [[nodiscard]] auto left() const noexcept -> std::size_t { return bytes_.size() - pos_; }

  [[nodiscard]] auto be(int width) noexcept -> std::uint64_t {
    std::uint64_t number = 0;
    for (int i = 0; i < width; ++i) {
      number = number << 8U | static_cast<unsigned char>(bytes_[pos_++]);
    }
    return number;
  }

  [[nodiscard]] auto read_number(int width, std::size_t tag_at, std::string_view what)
      -> CodecResult<std::uint64_t> {
    if (left() < static_cast<std::size_t>(width)) {
      return fail(CodecErrc::kCorrupt, tag_at,
                  "the data ends inside " + std::string(what) + " (" + std::to_string(width) +
                      " bytes needed, " + std::to_string(left()) + " left)");
    }
    return be(width);
  }

  /// opaque: marks the input as kept whole and stops the decoding.
  [[nodiscard]] auto opaque(std::size_t at, std::string_view what) -> CodecError {
    opaque_ = true;
    return fail(CodecErrc::kUnsupported, at, std::string(what));
  }

  /// text_value: a string Value of `text`, its bytes taken from the budget
  /// first.
  [[nodiscard]] auto text_value(std::string_view text, std::size_t at) -> CodecResult<Value> {
    if (!budget_.take(text.size())) {
      return fail(CodecErrc::kTooLarge, at,
                  budget_.exceeded("a string of " + std::to_string(text.size()) + " bytes"));
    }
    return Value(text);
  }

  [[nodiscard]] auto read_long(unsigned tag, std::size_t at) -> CodecResult<std::int64_t> {
    int width = 8;
    switch (tag) {
      case 0x06:
      case 0x07:
        width = 1;
        break;
      case 0x08:
      case 0x09:
        width = 2;
        break;
      case 0x0A:
      case 0x0B:
        width = 4;
        break;
      default:
        break;
    }
    CodecResult<std::uint64_t> magnitude = read_number(width, at, "an integer");
    if (!magnitude) {
      return magnitude.error();
    }
    const bool negative = tag == 0x07 || tag == 0x09 || tag == 0x0B || tag == 0x21;
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (*magnitude > kMax + (negative ? 1U : 0U)) {
      return fail(CodecErrc::kTooLarge, at,
                  "integer out of range: " + std::string(negative ? "-" : "") +
                      std::to_string(*magnitude) + " does not fit in 64 bits");
    }
    return negative ? static_cast<std::int64_t>(0 - *magnitude)
                    : static_cast<std::int64_t>(*magnitude);
  }

  [[nodiscard]] auto read_chararray(unsigned tag, std::size_t at) -> CodecResult<std::string_view> {
    const int width = tag == 0x26 ? 8 : 1 << (tag - 0x11U);
    CodecResult<std::uint64_t> length = read_number(width, at, "a string length");
    if (!length) {
      return length.error();
    }
    if (*length > left()) {
      return fail(CodecErrc::kCorrupt, at,
                  "a string of " + std::to_string(*length) + " bytes with only " +
                      std::to_string(left()) + " left");
    }
    const auto size = static_cast<std::size_t>(*length);
    if (size > limits_.max_size) {
      return fail(CodecErrc::kTooLarge, at,
                  "a string of " + std::to_string(size) + " bytes, more than max_size " +
                      std::to_string(limits_.max_size));
    }
    const std::string_view text = bytes_.substr(pos_, size);
    pos_ += size;
    if (!replay_) {
      strings_.push_back(text);
    }
    return text;
  }

  [[nodiscard]] auto read_string_id(unsigned tag, std::size_t at) -> CodecResult<std::string_view> {
    CodecResult<std::uint64_t> id = read_number(1 << (tag - 0x0EU), at, "a string number");
    if (!id) {
      return id.error();
    }
    if (*id >= strings_.size()) {
      return fail(CodecErrc::kCorrupt, at,
                  "string #" + std::to_string(*id) + " is not defined (" +
                      std::to_string(strings_.size()) + " strings so far)");
    }
    return strings_[static_cast<std::size_t>(*id)];
  }

  /// read_key: an array key, or nothing for a null key (an entry without a
  /// value).
  [[nodiscard]] auto read_key() -> CodecResult<std::optional<Value>> {
    const std::size_t at = pos_;
    if (left() == 0) {
      return fail(CodecErrc::kCorrupt, at, "the data ends where an array key should start");
    }
    const unsigned tag = static_cast<unsigned char>(bytes_[pos_++]);
    std::optional<Value> key;
    switch (tag) {
      case 0x00:
        return key;
      case 0x06:
      case 0x07:
      case 0x08:
      case 0x09:
      case 0x0A:
      case 0x0B:
      case 0x20:
      case 0x21: {
        CodecResult<std::int64_t> number = read_long(tag, at);
        if (!number) {
          return number.error();
        }
        key = Value(*number);
        break;
      }
      case 0x0D:
        key = Value("");
        break;
      case 0x0E:
      case 0x0F:
      case 0x10:
      case 0x11:
      case 0x12:
      case 0x13:
      case 0x26: {
        CodecResult<std::string_view> text =
            tag <= 0x10 ? read_string_id(tag, at) : read_chararray(tag, at);
        if (!text) {
          return text.error();
        }
        CodecResult<Value> made = text_value(*text, at);
        if (!made) {
          return made.error();
        }
        key = *std::move(made);
        break;
      }
      default:
        return fail(CodecErrc::kCorrupt, at, "type " + hex(tag) + " cannot be an array key");
    }
    return key;
  }

  [[nodiscard]] auto read_array(unsigned tag, std::size_t at, std::size_t depth)
      -> CodecResult<Value> {
    CodecResult<std::uint64_t> count = read_number(1 << (tag - 0x14U), at, "an array size");
    if (!count) {
      return count.error();
    }
    if (depth >= limits_.max_depth) {
      return fail(CodecErrc::kTooDeep, at,
                  "an array nested deeper than max_depth " + std::to_string(limits_.max_depth));
    }
    if (*count > left()) {
      return fail(CodecErrc::kCorrupt, at,
                  "an array of " + std::to_string(*count) + " entries with only " +
                      std::to_string(left()) + " bytes left");
    }
    const auto n = static_cast<std::size_t>(*count);
    if (!budget_.take_entries(n)) {
      return fail(CodecErrc::kTooLarge, at,
                  budget_.exceeded("an array of " + std::to_string(n) + " entries"));
    }
    std::size_t id = 0;
    if (!replay_) {
      id = arrays_.size();
      arrays_.push_back({at, false});
    }
    Value::Map entries;
    entries.reserve(n);
    bool in_order = true;
    for (std::size_t i = 0; i < n; ++i) {
      CodecResult<std::optional<Value>> key = read_key();
      if (!key) {
        return key.error();
      }
      if (!*key) {
        continue;
      }
      CodecResult<Value> item = read(depth + 1);
      if (!item) {
        return item;
      }
      const Value& k = **key;
      in_order = in_order && k.is_int() && k.as_int() == static_cast<std::int64_t>(entries.size());
      entries.emplace_back(**std::move(key), *std::move(item));
    }
    if (!replay_) {
      arrays_[id].complete = true;
    }
    if (!in_order) {
      return Value::map(std::move(entries));
    }
    Value::List items;
    items.reserve(entries.size());
    for (Value::Entry& entry : entries) {
      items.push_back(std::move(entry.second));
    }
    return Value::list(std::move(items));
  }

  [[nodiscard]] auto read_array_ref(unsigned tag, std::size_t at, std::size_t depth)
      -> CodecResult<Value> {
    CodecResult<std::uint64_t> id = read_number(1 << (tag - 0x01U), at, "an array number");
    if (!id) {
      return id.error();
    }
    if (*id >= arrays_.size()) {
      return fail(CodecErrc::kCorrupt, at,
                  "a reference to array #" + std::to_string(*id) + " with only " +
                      std::to_string(arrays_.size()) + " arrays so far");
    }
    const ArrayMark mark = arrays_[static_cast<std::size_t>(*id)];
    if (!mark.complete) {
      return opaque(at, "a reference to an enclosing array (a recursive structure)");
    }
    const std::size_t resume = pos_;
    const bool was_replay = replay_;
    pos_ = mark.start;
    replay_ = true;
    CodecResult<Value> copy = read(depth);
    pos_ = resume;
    replay_ = was_replay;
    return copy;
  }

  [[nodiscard]] auto read(std::size_t depth) -> CodecResult<Value> {
    const std::size_t at = pos_;
    if (left() == 0) {
      return fail(CodecErrc::kCorrupt, at, "the data ends where a value should start");
    }
    const unsigned tag = static_cast<unsigned char>(bytes_[pos_++]);
    std::optional<Value> value;
    switch (tag) {
      case 0x00:
        value = Value();
        break;
      case 0x04:
        value = Value(false);
        break;
      case 0x05:
        value = Value(true);
        break;
      case 0x06:
      case 0x07:
      case 0x08:
      case 0x09:
      case 0x0A:
      case 0x0B:
      case 0x20:
      case 0x21: {
        CodecResult<std::int64_t> number = read_long(tag, at);
        if (!number) {
          return number.error();
        }
        value = Value(*number);
        break;
      }
      case 0x0C: {
        CodecResult<std::uint64_t> bits = read_number(8, at, "a double");
        if (!bits) {
          return bits.error();
        }
        value = Value(std::bit_cast<double>(*bits));
        break;
      }
      case 0x0D:
        value = Value("");
        break;
      case 0x0E:
      case 0x0F:
      case 0x10:
      case 0x11:
      case 0x12:
      case 0x13:
      case 0x26: {
        CodecResult<std::string_view> text =
            tag <= 0x10 ? read_string_id(tag, at) : read_chararray(tag, at);
        if (!text) {
          return text.error();
        }
        CodecResult<Value> made = text_value(*text, at);
        if (!made) {
          return made;
        }
        value = *std::move(made);
        break;
      }
      case 0x01:
      case 0x02:
      case 0x03:
        return read_array_ref(tag, at, depth);
      case 0x14:
      case 0x15:
      case 0x16: {
        CodecResult<Value> array = read_array(tag, at, depth);
        if (!array) {
          return array;
        }
        value = *std::move(array);
        break;
      }
      case 0x17:
      case 0x18:
      case 0x19:
      case 0x1A:
      case 0x1B:
      case 0x1C:
      case 0x1D:
      case 0x1E:
      case 0x1F:
        return opaque(at, "an object");
      case 0x22:
      case 0x23:
      case 0x24:
        return opaque(at, "an object reference");
      case 0x25:
        return opaque(at, "a PHP reference");
      case 0x27:
        return opaque(at, "an enum case");
      default:
        return fail(CodecErrc::kCorrupt, at, "type " + hex(tag) + " is not an igbinary type");
    }
    return *std::move(value);
  }

  std::string_view bytes_;
  const DecodeLimits& limits_;
  DecodeBudget budget_;
  std::size_t pos_ = 0;
  std::vector<std::string_view> strings_;
  std::vector<ArrayMark> arrays_;
  bool replay_ = false;
  bool opaque_ = false;
};

}  // namespace detail

/// igbinary_serialize: `value` as php-igbinary 3.2.13 serializes the same PHP
/// value: null, bools, integers (the smallest tag for the magnitude),
/// doubles, strings (bytes too) with the string back-references, lists as
/// arrays keyed 0..n-1, maps as arrays whose keys are integers or strings,
/// with PHP's conversion of integer-like strings ("5" → 5), the second and
/// later empty arrays as references to the first. kNotEncodable: a map key
/// that is not an integer or string, two keys that are one PHP key after the
/// conversion (1 and "1"), a serialized value of another format or nested in
/// a list or map. A Value::serialized("igbinary", data) at the top is `data`
/// unchanged.
///
/// PHP shares arrays by value: when one array is stored twice PHP writes a
/// reference for the second, which a Value cannot express; memshard writes
/// both in full, which PHP reads as the same value.
[[nodiscard]] inline auto igbinary_serialize(const Value& value) -> CodecResult<std::string> {
  return detail::IgbinaryWriter().serialize(value);
}

/// igbinary_unserialize: the Value of an igbinary image: null, bools,
/// integers, doubles, strings (string references resolved), arrays (a list
/// when keyed 0..n-1 in order, else a map; copy-of-array references
/// resolved). Objects, object references, PHP references, enum cases and
/// references to an enclosing array make the whole input
/// Value::serialized("igbinary", bytes). Errors: kCorrupt (bad header,
/// truncated data, an unknown type, a count the bytes left cannot hold, a
/// reference to nothing, bytes after the value), kTooLarge (an integer
/// outside int64, a string over limits.max_size, a tree over
/// limits.max_decoded_bytes, references included: an array's size is checked
/// before any room is reserved), kTooDeep (arrays nested deeper than
/// limits.max_depth).
[[nodiscard]] inline auto igbinary_unserialize(std::string_view bytes,
                                               const DecodeLimits& limits = {})
    -> CodecResult<Value> {
  return detail::IgbinaryReader(bytes, limits).decode();
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_IGBINARY_HPP_
