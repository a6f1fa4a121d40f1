// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_STORABLE_HPP_
#define MEMSHARD_CODECS_STORABLE_HPP_

// codecs/storable.hpp: Perl's Storable images, the form Cache::Memcached and
// Cache::Memcached::Fast store a reference in (flag 0x1, Storable::nfreeze):
// storable_thaw and storable_nfreeze.
//
// The format facts that matter (Storable 3.26, perl 5.36):
//   * the header is 2 bytes for nfreeze: (major 2 << 1 | 1) = 05 and the
//     minor version 0b; then one item and nothing after it. freeze (native
//     order) writes 04 0b, then the byte-order string's length and the
//     string ("12345678" on 64-bit little-endian perls) and the sizes of int,
//     long, pointer and NV; its lengths and SX_INTEGER / SX_DOUBLE numbers are
//     in that byte order;
//   * the item is what the frozen reference points to: nfreeze(\@a) starts
//     with the array, so the top array or hash is the value memshard returns;
//   * items are tagged: 02 SX_ARRAY (count, items), 03 SX_HASH (count, then
//     value, key length, key bytes for each entry: the value comes first),
//     19 SX_FLAG_HASH (a hash-flags byte, count, then value, key-flags byte,
//     key length, key: flag 01 a UTF-8 key, 02 a key that was UTF-8 and is
//     stored as Latin-1), 04 SX_REF (a reference: the next item is what it
//     points to), 05 SX_UNDEF, 08 SX_BYTE (value + 128), 09 SX_NETINT (32-bit
//     big-endian), 0a SX_SCALAR (8-bit length, bytes), 01 SX_LSCALAR (32-bit
//     length), 17/18 SX_UTF8STR/SX_LUTF8STR (a character string as UTF-8),
//     0e/0f/10 Perl's undef/yes/no, 22/23 Storable 3.32's booleans, 1f an
//     undef array slot; lengths are 32-bit, network order in nfreeze;
//   * nfreeze writes no native numbers: an integer outside 32 bits, and a
//     double that is not an integer below 2^53, are SX_SCALAR text (Perl's
//     "%.15g": 1/3 is "0.333333333333333", 1e21 "1e+21"); a double that is an
//     integer below 2^53 is stored as that integer. Perl 5.36's true and false
//     (!!1, !!0) are the strings "1" and "";
//   * 00 SX_OBJECT is a back-reference to an item stored earlier (shared or
//     cyclic data); blessed objects (11, 12), hooks, tied data, code, regexps,
//     weak and overloaded references and references to scalars cannot be a
//     Value: the whole input decodes to Value::serialized("storable", bytes).
//     memshard keeps a back-reference opaque instead of copying the shared
//     item: a copy would lose the sharing, and copies of copies could turn a
//     small image into a large value.
//
// Perl scalars decode to kString (Perl has one string type: a number stored
// as text stays text), SX_BYTE / SX_NETINT / SX_INTEGER to kInt, SX_DOUBLE to
// kFloat. Hash keys are kString (a Latin-1 key is converted to UTF-8).

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
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

/// StorableTag: the item tags (SX_*) memshard reads or writes.
enum StorableTag : unsigned {
  kSxObject = 0,
  kSxLScalar = 1,
  kSxArray = 2,
  kSxHash = 3,
  kSxRef = 4,
  kSxUndef = 5,
  kSxInteger = 6,
  kSxDouble = 7,
  kSxByte = 8,
  kSxNetInt = 9,
  kSxScalar = 10,
  kSxSvUndef = 14,
  kSxSvYes = 15,
  kSxSvNo = 16,
  kSxUtf8Str = 23,
  kSxLUtf8Str = 24,
  kSxFlagHash = 25,
  kSxSvUndefElem = 31,
  kSxLObject = 33,
  kSxBooleanTrue = 34,
  kSxBooleanFalse = 35,
};

/// kStorableKeyUtf8, kStorableKeyWasUtf8: the key flags of SX_FLAG_HASH
/// memshard reads and writes (a UTF-8 key; a key that was UTF-8 and is
/// stored as Latin-1). Other flags (locked, placeholder, an SV key) are kept
/// opaque.
inline constexpr unsigned kStorableKeyUtf8 = 0x01;
inline constexpr unsigned kStorableKeyWasUtf8 = 0x02;
/// kStorableRestrictedHash: the hash flag of a restricted (locked) hash.
inline constexpr unsigned kStorableRestrictedHash = 0x01;

/// StorableUtf8Scan: whether a text is well-formed UTF-8, and the largest
/// code point in it (0 for empty text).
struct StorableUtf8Scan {
  bool valid = true;
  std::uint32_t max_code_point = 0;
};

/// storable_utf8_scan: the StorableUtf8Scan of `text`.
[[nodiscard]] inline auto storable_utf8_scan(std::string_view text) noexcept -> StorableUtf8Scan {
  StorableUtf8Scan scan;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::uint32_t code = 0;
    std::size_t extra = 0;
    std::uint32_t minimum = 0;
    if (lead < 0x80U) {
      code = lead;
    } else if ((lead & 0xE0U) == 0xC0U) {
      code = lead & 0x1FU;
      extra = 1;
      minimum = 0x80;
    } else if ((lead & 0xF0U) == 0xE0U) {
      code = lead & 0x0FU;
      extra = 2;
      minimum = 0x800;
    } else if ((lead & 0xF8U) == 0xF0U) {
      code = lead & 0x07U;
      extra = 3;
      minimum = 0x10000;
    } else {
      return {false, 0};
    }
    if (text.size() - i <= extra) {
      return {false, 0};
    }
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0U) != 0x80U) {
        return {false, 0};
      }
      code = code << 6U | (next & 0x3FU);
    }
    if (code < minimum || code > 0x10FFFFU || (code >= 0xD800U && code <= 0xDFFFU)) {
      return {false, 0};
    }
    scan.max_code_point = code > scan.max_code_point ? code : scan.max_code_point;
    i += extra + 1;
  }
  return scan;
}

/// storable_nv_text: a double as Perl stringifies it ("%.15g"; Inf, -Inf,
/// NaN).
[[nodiscard]] inline auto storable_nv_text(double number) -> std::string {
  if (std::isnan(number)) {
    return "NaN";
  }
  if (std::isinf(number)) {
    return number > 0 ? "Inf" : "-Inf";
  }
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), number,
                                    std::chars_format::general, 15);
  return std::string(buffer.data(), result.ptr);
}

/// StorableWriter: storable_nfreeze's output.
class StorableWriter {
 public:
  [[nodiscard]] auto nfreeze(const Value& value) -> CodecResult<std::string> {
    if (value.is_serialized()) {
      const SerializedObject& object = value.as_serialized();
      if (object.format != "storable") {
        return not_encodable(object.format);
      }
      return object.data;
    }
    if (!value.is_list() && !value.is_map()) {
      return CodecError(CodecErrc::kNotEncodable,
                        "storable: nfreeze stores a reference: the value must be a list or map, "
                        "not a " +
                            std::string(to_string(value.kind())));
    }
    out_.assign("\x05\x0b", 2);
    if (auto error = write_container(value)) {
      return *std::move(error);
    }
    return std::move(out_);
  }

 private:
  [[nodiscard]] static auto not_encodable(std::string_view format) -> CodecError {
    return CodecError(CodecErrc::kNotEncodable, "storable: a serialized " + std::string(format) +
                                                    " value has no Storable form");
  }

  void put_u32(std::uint32_t number) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out_.push_back(static_cast<char>((number >> static_cast<unsigned>(shift)) & 0xFFU));
    }
  }

  [[nodiscard]] auto put_length(std::size_t length) -> std::optional<CodecError> {
    if (length > 0x7FFFFFFFU) {
      return CodecError(CodecErrc::kNotEncodable,
                        "storable: an item of 2^31 or more bytes or elements");
    }
    put_u32(static_cast<std::uint32_t>(length));
    return std::nullopt;
  }

  /// put_bytes: a scalar of bytes (SX_SCALAR, or SX_LSCALAR past 255 bytes),
  /// or with `utf8` a character string (SX_UTF8STR / SX_LUTF8STR).
  [[nodiscard]] auto put_bytes(std::string_view bytes, bool utf8) -> std::optional<CodecError> {
    if (bytes.size() <= 0xFFU) {
      out_.push_back(static_cast<char>(utf8 ? kSxUtf8Str : kSxScalar));
      out_.push_back(static_cast<char>(bytes.size()));
    } else {
      out_.push_back(static_cast<char>(utf8 ? kSxLUtf8Str : kSxLScalar));
      if (auto error = put_length(bytes.size())) {
        return error;
      }
    }
    out_ += bytes;
    return std::nullopt;
  }

  /// put_text: ASCII (and bytes that are not UTF-8) as a byte scalar, other
  /// text as a character string.
  [[nodiscard]] auto put_text(std::string_view text) -> std::optional<CodecError> {
    const StorableUtf8Scan scan = storable_utf8_scan(text);
    return put_bytes(text, scan.valid && scan.max_code_point >= 0x80U);
  }

  [[nodiscard]] auto put_int(std::int64_t number) -> std::optional<CodecError> {
    if (number >= -128 && number <= 127) {
      out_.push_back(static_cast<char>(kSxByte));
      out_.push_back(static_cast<char>(number + 128));
    } else if (number >= std::numeric_limits<std::int32_t>::min() &&
               number <= std::numeric_limits<std::int32_t>::max()) {
      out_.push_back(static_cast<char>(kSxNetInt));
      put_u32(static_cast<std::uint32_t>(number));
    } else {
      return put_bytes(std::to_string(number), false);
    }
    return std::nullopt;
  }

  [[nodiscard]] auto put_double(double number) -> std::optional<CodecError> {
    constexpr double kExact = 9007199254740992.0;  // 2^53
    if (std::isfinite(number) && std::trunc(number) == number && std::fabs(number) < kExact) {
      return put_int(static_cast<std::int64_t>(number));
    }
    return put_bytes(storable_nv_text(number), false);
  }

  [[nodiscard]] auto write_hash(const Value::Map& entries) -> std::optional<CodecError> {
    struct Key {
      std::string bytes;
      unsigned flags = 0;
    };
    std::vector<Key> keys;
    keys.reserve(entries.size());
    bool flagged = false;
    for (const Value::Entry& entry : entries) {
      Key key;
      if (entry.first.is_int()) {
        key.bytes = std::to_string(entry.first.as_int());
      } else if (entry.first.is_string() || entry.first.is_bytes()) {
        key.bytes = entry.first.as_string();
        const StorableUtf8Scan scan = storable_utf8_scan(key.bytes);
        if (entry.first.is_string() && scan.valid && scan.max_code_point >= 0x80U) {
          if (scan.max_code_point <= 0xFFU) {
            // Perl stores a key it can downgrade as Latin-1, marked "was UTF-8".
            std::string latin1;
            for (std::size_t i = 0; i < key.bytes.size(); ++i) {
              const auto lead = static_cast<unsigned char>(key.bytes[i]);
              if (lead < 0x80U) {
                latin1.push_back(static_cast<char>(lead));
              } else {
                const auto next = static_cast<unsigned char>(key.bytes[++i]);
                latin1.push_back(static_cast<char>(((lead & 0x03U) << 6U) | (next & 0x3FU)));
              }
            }
            key.bytes = std::move(latin1);
            key.flags = kStorableKeyWasUtf8;
          } else {
            key.flags = kStorableKeyUtf8;
          }
          flagged = true;
        }
      } else {
        return CodecError(CodecErrc::kNotEncodable, "storable: a " +
                                                        std::string(to_string(entry.first.kind())) +
                                                        " map key: Perl hash keys are strings");
      }
      keys.push_back(std::move(key));
    }
    // A UTF-8 key and a byte key are different Perl keys even with the same
    // bytes; a Latin-1 key ("was UTF-8") is the same key as those bytes.
    std::unordered_set<std::string> seen;
    for (const Key& key : keys) {
      const char kind = (key.flags & kStorableKeyUtf8) != 0 ? 'u' : 'b';
      if (!seen.insert(kind + key.bytes).second) {
        return CodecError(CodecErrc::kNotEncodable,
                          "storable: two map keys are the Perl hash key \"" + key.bytes + "\"");
      }
    }
    out_.push_back(static_cast<char>(flagged ? kSxFlagHash : kSxHash));
    if (flagged) {
      out_.push_back(0);
    }
    if (auto error = put_length(entries.size())) {
      return error;
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (auto error = write_value(entries[i].second)) {
        return error;
      }
      if (flagged) {
        out_.push_back(static_cast<char>(keys[i].flags));
      }
      if (auto error = put_length(keys[i].bytes.size())) {
        return error;
      }
      out_ += keys[i].bytes;
    }
    return std::nullopt;
  }

  [[nodiscard]] auto write_container(const Value& value) -> std::optional<CodecError> {
    if (value.is_map()) {
      return write_hash(value.as_map());
    }
    const Value::List& items = value.as_list();
    out_.push_back(static_cast<char>(kSxArray));
    if (auto error = put_length(items.size())) {
      return error;
    }
    for (const Value& item : items) {
      if (auto error = write_value(item)) {
        return error;
      }
    }
    return std::nullopt;
  }

  [[nodiscard]] auto write_value(const Value& value) -> std::optional<CodecError> {
    switch (value.kind()) {
      case ValueKind::kNull:
        out_.push_back(static_cast<char>(kSxUndef));
        return std::nullopt;
      case ValueKind::kBool:
        return put_bytes(value.as_bool() ? "1" : "", false);
      case ValueKind::kInt:
        return put_int(value.as_int());
      case ValueKind::kFloat:
        return put_double(value.as_double());
      case ValueKind::kString:
        return put_text(value.as_string());
      case ValueKind::kBytes:
        return put_bytes(value.as_string(), false);
      case ValueKind::kList:
      case ValueKind::kMap:
        out_.push_back(static_cast<char>(kSxRef));
        return write_container(value);
      case ValueKind::kSerialized: {
        const SerializedObject& object = value.as_serialized();
        if (object.format != "storable") {
          return not_encodable(object.format);
        }
        return CodecError(CodecErrc::kNotEncodable,
                          "storable: a serialized storable value is a whole image; it cannot be "
                          "written inside a list or map");
      }
    }
    return CodecError(CodecErrc::kNotEncodable, "storable: a value of an unknown kind");
  }

  std::string out_;
};

/// StorableReader: storable_thaw's state: the input, the read position, the
/// byte order of lengths and native numbers, what is left of
/// max_decoded_bytes, and whether something kept opaque was found (decoding
/// stops there).
class StorableReader {
 public:
  StorableReader(std::string_view bytes, const DecodeLimits& limits) noexcept
      : bytes_(bytes), limits_(limits), budget_(limits.max_decoded_bytes) {}

  [[nodiscard]] auto thaw() -> CodecResult<Value> {
    if (auto error = read_header()) {
      return *std::move(error);
    }
    if (!budget_.take_values(1)) {
      return fail(CodecErrc::kTooLarge, pos_, budget_.exceeded("a value"));
    }
    CodecResult<Value> value = read(0, true);
    if (opaque_) {
      return Value::serialized("storable", std::string(bytes_));
    }
    if (!value) {
      return value;
    }
    if (pos_ != bytes_.size()) {
      return fail(CodecErrc::kCorrupt, pos_,
                  std::to_string(bytes_.size() - pos_) + " bytes after the frozen item");
    }
    if (!value->is_list() && !value->is_map()) {
      // The image of a reference to a scalar.
      return Value::serialized("storable", std::string(bytes_));
    }
    return value;
  }

 private:
  [[nodiscard]] static auto fail(CodecErrc code, std::size_t at, const std::string& what)
      -> CodecError {
    return CodecError(code, "storable: at byte " + std::to_string(at) + ": " + what);
  }

  [[nodiscard]] auto left() const noexcept -> std::size_t { return bytes_.size() - pos_; }

  [[nodiscard]] auto byte() noexcept -> unsigned {
    return static_cast<unsigned char>(bytes_[pos_++]);
  }

  /// number: `width` bytes as an unsigned number, big-endian or not.
  [[nodiscard]] auto number(std::size_t width, bool big_endian) noexcept -> std::uint64_t {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const std::uint64_t b = static_cast<unsigned char>(bytes_[pos_ + i]);
      value |= b << (8U * static_cast<unsigned>(big_endian ? width - 1 - i : i));
    }
    pos_ += width;
    return value;
  }

  [[nodiscard]] auto need(std::size_t width, std::size_t at, std::string_view what) const
      -> std::optional<CodecError> {
    if (left() < width) {
      return fail(CodecErrc::kCorrupt, at,
                  "the data ends inside " + std::string(what) + " (" + std::to_string(width) +
                      " bytes needed, " + std::to_string(left()) + " left)");
    }
    return std::nullopt;
  }

  [[nodiscard]] auto read_header() -> std::optional<CodecError> {
    if (bytes_.size() < 2) {
      return fail(CodecErrc::kCorrupt, 0, "the data ends inside the header");
    }
    const unsigned first = byte();
    pos_ += 1;  // the minor version: any is read
    if (first >> 1U != 2) {
      return fail(CodecErrc::kCorrupt, 0,
                  "binary major version " + std::to_string(first >> 1U) +
                      " is not Storable's 2 (first byte 0x05 for nfreeze, 0x04 for freeze)");
    }
    network_ = (first & 1U) != 0;
    if (network_) {
      return std::nullopt;
    }
    if (auto error = need(1, pos_, "the byte-order string")) {
      return error;
    }
    const std::size_t order_at = pos_;
    const std::size_t order_size = byte();
    if (auto error = need(order_size + 4, order_at, "the native header")) {
      return error;
    }
    const std::string_view order = bytes_.substr(pos_, order_size);
    pos_ += order_size;
    if (order == "12345678" || order == "1234") {
      big_endian_ = false;
    } else if (order == "87654321" || order == "4321") {
      big_endian_ = true;
    } else {
      return fail(CodecErrc::kUnsupported, order_at,
                  "native byte order \"" + std::string(order) + "\" is not read");
    }
    iv_size_ = order_size;
    const unsigned int_size = byte();
    pos_ += 2;  // the sizes of long and of a pointer
    const unsigned nv_size = byte();
    if (int_size != 4 || nv_size != 8) {
      return fail(CodecErrc::kUnsupported, order_at,
                  "a native image with " + std::to_string(int_size) + "-byte int and " +
                      std::to_string(nv_size) + "-byte NV is not read");
    }
    return std::nullopt;
  }

  /// read_length: a 32-bit length or count (network order in nfreeze).
  [[nodiscard]] auto read_length(std::size_t at, std::string_view what)
      -> CodecResult<std::size_t> {
    if (auto error = need(4, at, what)) {
      return *std::move(error);
    }
    return static_cast<std::size_t>(number(4, network_ || big_endian_));
  }

  [[nodiscard]] auto read_string(std::size_t length, std::size_t at) -> CodecResult<std::string> {
    if (length > left()) {
      return fail(CodecErrc::kCorrupt, at,
                  "a string of " + std::to_string(length) + " bytes with only " +
                      std::to_string(left()) + " left");
    }
    if (length > limits_.max_size) {
      return fail(CodecErrc::kTooLarge, at,
                  "a string of " + std::to_string(length) + " bytes, more than max_size " +
                      std::to_string(limits_.max_size));
    }
    if (!budget_.take(length)) {
      return fail(CodecErrc::kTooLarge, at,
                  budget_.exceeded("a string of " + std::to_string(length) + " bytes"));
    }
    std::string text(bytes_.substr(pos_, length));
    pos_ += length;
    return text;
  }

  [[nodiscard]] auto opaque(std::size_t at, std::string_view what) -> CodecError {
    opaque_ = true;
    return fail(CodecErrc::kUnsupported, at, std::string(what));
  }

  [[nodiscard]] auto read_array(std::size_t at, std::size_t depth) -> CodecResult<Value> {
    if (depth >= limits_.max_depth) {
      return fail(CodecErrc::kTooDeep, at,
                  "an array nested deeper than max_depth " + std::to_string(limits_.max_depth));
    }
    CodecResult<std::size_t> count = read_length(at, "an array size");
    if (!count) {
      return count.error();
    }
    if (*count > left()) {
      return fail(CodecErrc::kCorrupt, at,
                  "an array of " + std::to_string(*count) + " elements with only " +
                      std::to_string(left()) + " bytes left");
    }
    if (!budget_.take_values(*count)) {
      return fail(CodecErrc::kTooLarge, at,
                  budget_.exceeded("an array of " + std::to_string(*count) + " elements"));
    }
    Value::List items;
    items.reserve(*count);
    for (std::size_t i = 0; i < *count; ++i) {
      CodecResult<Value> item = read(depth + 1, false);
      if (!item) {
        return item;
      }
      items.push_back(*std::move(item));
    }
    return Value::list(std::move(items));
  }

  [[nodiscard]] auto read_hash(std::size_t at, std::size_t depth, bool flagged)
      -> CodecResult<Value> {
    if (depth >= limits_.max_depth) {
      return fail(CodecErrc::kTooDeep, at,
                  "a hash nested deeper than max_depth " + std::to_string(limits_.max_depth));
    }
    if (flagged) {
      if (auto error = need(1, at, "the hash flags")) {
        return *std::move(error);
      }
      if ((byte() & kStorableRestrictedHash) != 0) {
        return opaque(at, "a restricted hash");
      }
    }
    CodecResult<std::size_t> count = read_length(at, "a hash size");
    if (!count) {
      return count.error();
    }
    // Each entry takes a value byte, (a flags byte,) and a 4-byte key length.
    const std::size_t smallest = flagged ? 6 : 5;
    if (*count > left() / smallest) {
      return fail(CodecErrc::kCorrupt, at,
                  "a hash of " + std::to_string(*count) + " entries with only " +
                      std::to_string(left()) + " bytes left");
    }
    if (!budget_.take_entries(*count)) {
      return fail(CodecErrc::kTooLarge, at,
                  budget_.exceeded("a hash of " + std::to_string(*count) + " entries"));
    }
    Value::Map entries;
    entries.reserve(*count);
    for (std::size_t i = 0; i < *count; ++i) {
      CodecResult<Value> item = read(depth + 1, false);
      if (!item) {
        return item;
      }
      const std::size_t key_at = pos_;
      unsigned key_flags = 0;
      if (flagged) {
        if (auto error = need(1, key_at, "the key flags")) {
          return *std::move(error);
        }
        key_flags = byte();
        if ((key_flags & ~(kStorableKeyUtf8 | kStorableKeyWasUtf8)) != 0) {
          return opaque(key_at, "a hash key with flags " + std::to_string(key_flags));
        }
      }
      CodecResult<std::size_t> length = read_length(key_at, "a hash key length");
      if (!length) {
        return length.error();
      }
      CodecResult<std::string> key = read_string(*length, key_at);
      if (!key) {
        return key.error();
      }
      if ((key_flags & kStorableKeyWasUtf8) != 0) {
        // Each byte above 0x7f becomes two.
        std::size_t high = 0;
        for (const char c : *key) {
          high += static_cast<unsigned char>(c) >= 0x80U ? 1 : 0;
        }
        if (!budget_.take(high)) {
          return fail(
              CodecErrc::kTooLarge, key_at,
              budget_.exceeded("a hash key of " + std::to_string(key->size() + high) + " bytes"));
        }
        std::string utf8;
        utf8.reserve(key->size() + high);
        for (const char c : *key) {
          const auto b = static_cast<unsigned char>(c);
          if (b < 0x80U) {
            utf8.push_back(c);
          } else {
            utf8.push_back(static_cast<char>(0xC0U | (b >> 6U)));
            utf8.push_back(static_cast<char>(0x80U | (b & 0x3FU)));
          }
        }
        *key = std::move(utf8);
      }
      entries.emplace_back(Value(*std::move(key)), *std::move(item));
    }
    return Value::map(std::move(entries));
  }

  /// read: one item. `container_ok`: an array or hash may stand here (at the
  /// top and after SX_REF), not only a scalar or a reference.
  [[nodiscard]] auto read(std::size_t depth, bool container_ok) -> CodecResult<Value> {
    const std::size_t at = pos_;
    if (left() == 0) {
      return fail(CodecErrc::kCorrupt, at, "the data ends where an item should start");
    }
    const unsigned tag = byte();
    switch (tag) {
      case kSxArray:
      case kSxHash:
      case kSxFlagHash:
        if (!container_ok) {
          return fail(CodecErrc::kCorrupt, at,
                      std::string(tag == kSxArray ? "an array" : "a hash") +
                          " where a scalar or a reference should be");
        }
        return tag == kSxArray ? read_array(at, depth) : read_hash(at, depth, tag == kSxFlagHash);
      case kSxRef: {
        if (container_ok) {
          // Only at the top: the image of a reference to a reference.
          return opaque(at, "a reference to a reference");
        }
        if (left() == 0) {
          return fail(CodecErrc::kCorrupt, pos_, "the data ends where an item should start");
        }
        const auto target = static_cast<unsigned char>(bytes_[pos_]);
        if (target != kSxArray && target != kSxHash && target != kSxFlagHash) {
          return opaque(at, "a reference to something other than an array or hash");
        }
        return read(depth, true);
      }
      case kSxUndef:
      case kSxSvUndef:
      case kSxSvUndefElem:
        return Value();
      case kSxSvYes:
      case kSxBooleanTrue:
        return Value(true);
      case kSxSvNo:
      case kSxBooleanFalse:
        return Value(false);
      case kSxByte:
        if (auto error = need(1, at, "a byte integer")) {
          return *std::move(error);
        }
        return Value(static_cast<std::int64_t>(byte()) - 128);
      case kSxNetInt:
        if (auto error = need(4, at, "a network-order integer")) {
          return *std::move(error);
        }
        return Value(static_cast<std::int64_t>(static_cast<std::int32_t>(number(4, true))));
      case kSxInteger: {
        if (network_) {
          return fail(CodecErrc::kCorrupt, at, "a native integer in a network-order image");
        }
        if (auto error = need(iv_size_, at, "a native integer")) {
          return *std::move(error);
        }
        const std::uint64_t raw = number(iv_size_, big_endian_);
        const unsigned spare = 64U - 8U * static_cast<unsigned>(iv_size_);
        return Value(static_cast<std::int64_t>(raw << spare) >> spare);
      }
      case kSxDouble: {
        if (network_) {
          return fail(CodecErrc::kCorrupt, at, "a native double in a network-order image");
        }
        if (auto error = need(8, at, "a native double")) {
          return *std::move(error);
        }
        const std::uint64_t bits = number(8, big_endian_);
        double value = 0;
        std::memcpy(&value, &bits, sizeof value);
        return Value(value);
      }
      case kSxScalar:
      case kSxUtf8Str:
      case kSxLScalar:
      case kSxLUtf8Str: {
        std::size_t length = 0;
        if (tag == kSxScalar || tag == kSxUtf8Str) {
          if (auto error = need(1, at, "a string length")) {
            return *std::move(error);
          }
          length = byte();
        } else {
          CodecResult<std::size_t> long_length = read_length(at, "a string length");
          if (!long_length) {
            return long_length.error();
          }
          length = *long_length;
        }
        CodecResult<std::string> text = read_string(length, at);
        if (!text) {
          return text.error();
        }
        return Value(*std::move(text));
      }
      case kSxObject:
        return opaque(at, "a back-reference to an item stored earlier (shared data)");
      case kSxLObject:
        return fail(CodecErrc::kTooLarge, at, "an item of 2 GiB or more (SX_LOBJECT)");
      default:
        if (tag < kSxLObject) {
          // Tied data, blessed objects, hooks, overloaded and weak references,
          // code, v-strings, regexps.
          return opaque(at, "item type " + std::to_string(tag) + " (an object or tied data)");
        }
        break;
    }
    return fail(CodecErrc::kCorrupt, at, "item type " + std::to_string(tag) + " is unknown");
  }

  std::string_view bytes_;
  const DecodeLimits& limits_;
  DecodeBudget budget_;
  std::size_t pos_ = 0;
  bool network_ = true;
  bool big_endian_ = true;
  std::size_t iv_size_ = 8;
  bool opaque_ = false;
};

}  // namespace detail

/// storable_thaw: the Value of a Storable image (nfreeze's network order, or
/// freeze's native order on a perl with 4- or 8-byte integers and 8-byte
/// doubles, either endianness): the top array or hash is the list or map the
/// frozen reference pointed to; nested array and hash references are lists
/// and maps; scalars are strings (SX_SCALAR, SX_UTF8STR), integers, doubles
/// (native images only), null (undef), bools (Perl's yes/no, Storable 3.32's
/// booleans). The whole input becomes Value::serialized("storable", bytes)
/// for a top-level scalar (a frozen scalar reference), a reference to a
/// scalar or to a reference, a back-reference (SX_OBJECT), a blessed object,
/// tied data, a hook, code, a regexp or a restricted hash. Errors: kCorrupt
/// (bad header, truncated data, an unknown item type, a count the bytes left
/// cannot hold, bytes after the item), kUnsupported (a native image of
/// another layout), kTooLarge (a string over limits.max_size, a tree over
/// limits.max_decoded_bytes: an array or hash size is checked before any room
/// is reserved), kTooDeep (nesting deeper than limits.max_depth).
[[nodiscard]] inline auto storable_thaw(std::string_view bytes, const DecodeLimits& limits = {})
    -> CodecResult<Value> {
  return detail::StorableReader(bytes, limits).thaw();
}

/// storable_nfreeze: a list or map as Storable::nfreeze writes a reference to
/// the same Perl array or hash (what Cache::Memcached stores with flag 0x1):
/// integers as SX_BYTE, SX_NETINT or decimal text, doubles as Perl's text
/// (or as the integer they equal, below 2^53), strings as SX_SCALAR when
/// ASCII (or not UTF-8) and SX_UTF8STR otherwise, bytes as SX_SCALAR, null as
/// SX_UNDEF, true and false as "1" and "" (perl 5.36's !!1 and !!0), nested
/// lists and maps as references. Map keys are strings or integers (their
/// decimal text); a non-ASCII string key makes the hash an SX_FLAG_HASH, the
/// key stored as Latin-1 when it can be (as Perl does). kNotEncodable: a
/// top-level value that is not a list or map (nfreeze stores a reference), a
/// key of another kind, two keys that are one Perl key, a serialized value of
/// another format or nested. A Value::serialized("storable", data) is `data`
/// unchanged. Entries are written in the map's order.
[[nodiscard]] inline auto storable_nfreeze(const Value& value) -> CodecResult<std::string> {
  return detail::StorableWriter().nfreeze(value);
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_STORABLE_HPP_
