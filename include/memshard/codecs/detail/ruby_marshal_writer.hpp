// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_WRITER_HPP_
#define MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_WRITER_HPP_

// codecs/detail/ruby_marshal_writer.hpp: MarshalWriter, which writes a Value
// as Ruby 3.1's Marshal.dump writes the matching object (its Symbol and
// object links included), and kMarshalMaxDumpDepth, the deepest nesting it
// writes. The format is told in codecs/ruby_marshal.hpp.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/ruby_marshal_format.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// kMarshalMaxDumpDepth: the deepest nesting of lists and maps marshal_dump
/// writes.
inline constexpr std::size_t kMarshalMaxDumpDepth = 4096;

namespace detail {

/// MarshalWriter: marshal_dump's state: the output, the count of objects
/// written, the Float and Hash-key objects Ruby would link, and whether the
/// Symbol E has been written.
class MarshalWriter {
 public:
  [[nodiscard]] auto dump(const Value& value) -> CodecResult<std::string> {
    out_.assign("\x04\x08", 2);
    if (!write(value, 0, false)) {
      return std::move(*error_);
    }
    return std::move(out_);
  }

 private:
  static constexpr std::int64_t kLongLimit = std::int64_t{1} << 31U;  // w_long's range
  static constexpr std::int64_t kFixnumLimit = std::int64_t{1} << 30U;

  auto fail(const std::string& what) -> bool {
    error_.emplace(CodecErrc::kNotEncodable, std::string(kMarshalFormat) + ": " + what);
    return false;
  }

  /// write_long: a packed long, -2^31 <= number < 2^31.
  void write_long(std::int64_t number) {
    if (number == 0) {
      out_.push_back('\0');
      return;
    }
    if (number > 0 && number < 123) {
      out_.push_back(static_cast<char>(number + 5));
      return;
    }
    if (number < 0 && number > -124) {
      out_.push_back(static_cast<char>(static_cast<unsigned char>((number - 5) & 0xff)));
      return;
    }
    char bytes[8] = {};
    int count = 0;
    std::int64_t rest = number;
    while (true) {
      bytes[count++] = static_cast<char>(static_cast<unsigned char>(rest & 0xff));
      rest >>= 8;  // arithmetic: a negative number ends in -1
      if (rest == 0 || rest == -1) {
        break;
      }
    }
    out_.push_back(static_cast<char>(static_cast<unsigned char>(rest == 0 ? count : 256 - count)));
    out_.append(bytes, static_cast<std::size_t>(count));
  }

  auto write_length(std::size_t length, std::string_view what) -> bool {
    if (length >= static_cast<std::uint64_t>(kLongLimit)) {
      return fail(std::string(what) + " of " + std::to_string(length) +
                  " is more than Marshal writes (2^31 - 1)");
    }
    write_long(static_cast<std::int64_t>(length));
    return true;
  }

  void write_int(std::int64_t number) {
    if (number >= -kFixnumLimit && number < kFixnumLimit) {
      out_.push_back('i');
      write_long(number);
      return;
    }
    ++objects_;  // Ruby writes the number as a Bignum object
    out_.push_back('l');
    out_.push_back(number < 0 ? '-' : '+');
    std::uint64_t magnitude =
        number < 0 ? 0 - static_cast<std::uint64_t>(number) : static_cast<std::uint64_t>(number);
    const auto words = static_cast<std::int64_t>((std::bit_width(magnitude) + 15) / 16);
    write_long(words);
    for (std::int64_t i = 0; i < 2 * words; ++i) {
      out_.push_back(static_cast<char>(static_cast<unsigned char>(magnitude & 0xffU)));
      magnitude >>= 8U;
    }
  }

  void write_link(std::size_t index) {
    out_.push_back('@');
    write_long(static_cast<std::int64_t>(index));
  }

  void write_float(double number) {
    const auto bits = std::bit_cast<std::uint64_t>(number);
    if (marshal_is_flonum(bits)) {
      const auto [found, fresh] = flonums_.emplace(bits, objects_);
      if (!fresh) {
        write_link(found->second);
        return;
      }
    }
    ++objects_;
    const std::string text = marshal_float_text(number);
    out_.push_back('f');
    write_long(static_cast<std::int64_t>(text.size()));
    out_.append(text);
  }

  auto write_string(const Value& value, bool key) -> bool {
    const std::string& text = value.as_string();
    const bool binary = value.is_bytes();
    if (key) {
      const auto [found, fresh] =
          keys_.emplace(std::make_pair(binary, std::string_view(text)), objects_);
      if (!fresh) {
        write_link(found->second);
        return true;
      }
    }
    ++objects_;
    if (!binary) {
      out_.push_back('I');
    }
    out_.push_back('"');
    if (!write_length(text.size(), "a string")) {
      return false;
    }
    out_.append(text);
    if (!binary) {
      write_long(1);
      if (wrote_e_) {
        out_.append(";\x00", 2);
      } else {
        out_.append(
            ":\x06"
            "E",
            3);  // "\x06E" would be one escape
        wrote_e_ = true;
      }
      out_.push_back('T');
    }
    return true;
  }

  auto write(const Value& value, std::size_t depth, bool key) -> bool {
    switch (value.kind()) {
      case ValueKind::kNull:
        out_.push_back('0');
        return true;
      case ValueKind::kBool:
        out_.push_back(value.as_bool() ? 'T' : 'F');
        return true;
      case ValueKind::kInt:
        write_int(value.as_int());
        return true;
      case ValueKind::kFloat:
        write_float(value.as_double());
        return true;
      case ValueKind::kString:
      case ValueKind::kBytes:
        return write_string(value, key);
      case ValueKind::kList: {
        if (depth >= kMarshalMaxDumpDepth) {
          return fail("lists and maps nested deeper than " + std::to_string(kMarshalMaxDumpDepth));
        }
        ++objects_;
        out_.push_back('[');
        const Value::List& items = value.as_list();
        if (!write_length(items.size(), "a list")) {
          return false;
        }
        for (const Value& item : items) {
          if (!write(item, depth + 1, false)) {
            return false;
          }
        }
        return true;
      }
      case ValueKind::kMap: {
        if (depth >= kMarshalMaxDumpDepth) {
          return fail("lists and maps nested deeper than " + std::to_string(kMarshalMaxDumpDepth));
        }
        ++objects_;
        out_.push_back('{');
        const Value::Map& entries = value.as_map();
        if (!write_length(entries.size(), "a map")) {
          return false;
        }
        for (const Value::Entry& entry : entries) {
          if (!write(entry.first, depth + 1, true) || !write(entry.second, depth + 1, false)) {
            return false;
          }
        }
        return true;
      }
      case ValueKind::kSerialized: {
        const SerializedObject& object = value.as_serialized();
        if (object.format == kMarshalFormat) {
          return fail(
              "a serialized ruby-marshal value inside a list or map (only a whole "
              "value is written back as it is)");
        }
        return fail("a serialized " + object.format + " value has no Marshal form");
      }
    }
    return fail("a value of an unknown kind");
  }

  std::string out_;
  std::size_t objects_ = 0;
  bool wrote_e_ = false;
  std::map<std::uint64_t, std::size_t> flonums_;
  std::map<std::pair<bool, std::string_view>, std::size_t> keys_;
  std::optional<CodecError> error_;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_WRITER_HPP_
