// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_VALUE_HPP_
#define MEMSHARD_CODECS_VALUE_HPP_

// codecs/value.hpp: Value, what a peer client's stored item means: null, a
// boolean, a 64-bit integer, a double, a string, bytes, a list, a map whose
// entries keep their order, or a serialized object memshard recognises but does
// not take apart (its format named, its bytes kept).
//
// A string is what the peer calls text (a Java or Python str, a Ruby String in
// UTF-8, any PHP or Perl scalar string: those languages have no other kind);
// bytes are what it calls binary (Python bytes, a Java byte[], a Ruby binary
// String). A map's keys are Values (PHP arrays have integer keys, Ruby hashes
// any key); find() looks up string keys.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "memshard/detail/compiled.hpp"
#include "memshard/version.hpp"

// What the definitions use (the compiled mode's units see declarations only).
#if MEMSHARD_DETAIL_DEFINITIONS
#include <charconv>
#include <ostream>
#endif

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// ValueKind: what a Value holds. to_string gives the names memshard-get prints.
enum class ValueKind : std::uint8_t {
  kNull,
  kBool,
  kInt,
  kFloat,
  kString,
  kBytes,
  kList,
  kMap,
  kSerialized,
};

[[nodiscard]] constexpr auto to_string(ValueKind kind) noexcept -> std::string_view {
  constexpr std::string_view kNames[] = {"null",  "bool", "int", "float",     "string",
                                         "bytes", "list", "map", "serialized"};
  return kNames[static_cast<std::size_t>(kind)];
}

/// BadValueAccess: an as_*() accessor asked for a kind the Value does not hold.
class BadValueAccess : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// SerializedObject: a value in a format memshard recognises but does not
/// decode (a PHP object, a Java object, a blessed Perl reference): the format's
/// name ("php-serialize", "java-serialization", "pickle", "ruby-marshal",
/// "storable", "igbinary", "msgpack") and the bytes exactly as stored.
struct SerializedObject {
  std::string format;
  std::string data;

  friend auto operator==(const SerializedObject&, const SerializedObject&) -> bool = default;
};

/// Value: one decoded item. Copyable, movable, compared by content (a NaN
/// double is unequal to itself, as doubles are).
///
/// **Example**:
///   Value row = Value::map({{"id", 7}, {"tags", Value::list({"a", "b"})}});
///   if (const Value* id = row.find("id")) use(id->as_int());
class Value {
 public:
  using List = std::vector<Value>;
  using Entry = std::pair<Value, Value>;
  using Map = std::vector<Entry>;

  /// Null.
  Value() noexcept = default;
  Value(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor)
  Value(bool flag) noexcept : kind_(ValueKind::kBool), data_(flag) {}  // NOLINT
  /// Any signed integer, and unsigned ones narrower than 64 bits (a uint64_t
  /// may not fit: convert it knowingly).
  template <class I>
  requires(std::is_integral_v<I> && !std::is_same_v<I, bool> && !std::is_same_v<I, char> &&
           (std::is_signed_v<I> || sizeof(I) < sizeof(std::int64_t))) Value(I number)
  noexcept  // NOLINT(google-explicit-constructor)
      : kind_(ValueKind::kInt), data_(static_cast<std::int64_t>(number)) {}
  Value(double number) noexcept : kind_(ValueKind::kFloat), data_(number) {}  // NOLINT
  /// A string (text).
  Value(std::string text) noexcept  // NOLINT(google-explicit-constructor)
      : kind_(ValueKind::kString), data_(std::move(text)) {}
  Value(std::string_view text)  // NOLINT(google-explicit-constructor)
      : Value(std::string(text)) {}
  Value(const char* text) : Value(std::string(text)) {}  // NOLINT(google-explicit-constructor)

  /// bytes: a binary string.
  [[nodiscard]] static auto bytes(std::string data) noexcept -> Value {
    Value value(std::move(data));
    value.kind_ = ValueKind::kBytes;
    return value;
  }
  [[nodiscard]] static auto list(List items) noexcept -> Value {
    Value value;
    value.kind_ = ValueKind::kList;
    value.data_ = std::move(items);
    return value;
  }
  [[nodiscard]] static auto list(std::initializer_list<Value> items) -> Value {
    return list(List(items));
  }
  /// map: the entries in their order (a later duplicate key is kept as it is).
  [[nodiscard]] static auto map(Map entries) noexcept -> Value {
    Value value;
    value.kind_ = ValueKind::kMap;
    value.data_ = std::move(entries);
    return value;
  }
  [[nodiscard]] static auto map(std::initializer_list<Entry> entries) -> Value {
    return map(Map(entries));
  }
  [[nodiscard]] static auto serialized(std::string format, std::string data) noexcept -> Value {
    Value value;
    value.kind_ = ValueKind::kSerialized;
    value.data_ = SerializedObject{std::move(format), std::move(data)};
    return value;
  }

  [[nodiscard]] auto kind() const noexcept -> ValueKind { return kind_; }
  [[nodiscard]] auto is_null() const noexcept -> bool { return kind_ == ValueKind::kNull; }
  [[nodiscard]] auto is_bool() const noexcept -> bool { return kind_ == ValueKind::kBool; }
  [[nodiscard]] auto is_int() const noexcept -> bool { return kind_ == ValueKind::kInt; }
  [[nodiscard]] auto is_float() const noexcept -> bool { return kind_ == ValueKind::kFloat; }
  [[nodiscard]] auto is_string() const noexcept -> bool { return kind_ == ValueKind::kString; }
  [[nodiscard]] auto is_bytes() const noexcept -> bool { return kind_ == ValueKind::kBytes; }
  [[nodiscard]] auto is_list() const noexcept -> bool { return kind_ == ValueKind::kList; }
  [[nodiscard]] auto is_map() const noexcept -> bool { return kind_ == ValueKind::kMap; }
  [[nodiscard]] auto is_serialized() const noexcept -> bool {
    return kind_ == ValueKind::kSerialized;
  }

  /// as_*: the value; BadValueAccess when it is of another kind.
  [[nodiscard]] auto as_bool() const -> bool { return get<bool>(ValueKind::kBool); }
  [[nodiscard]] auto as_int() const -> std::int64_t { return get<std::int64_t>(ValueKind::kInt); }
  [[nodiscard]] auto as_double() const -> double { return get<double>(ValueKind::kFloat); }
  /// as_string: the text of a string, or the data of bytes.
  [[nodiscard]] auto as_string() const -> const std::string& {
    if (kind_ != ValueKind::kString && kind_ != ValueKind::kBytes) {
      mismatch(ValueKind::kString);
    }
    return std::get<std::string>(data_);
  }
  [[nodiscard]] auto as_list() const -> const List& { return get<List>(ValueKind::kList); }
  [[nodiscard]] auto as_list() -> List& { return get<List>(ValueKind::kList); }
  [[nodiscard]] auto as_map() const -> const Map& { return get<Map>(ValueKind::kMap); }
  [[nodiscard]] auto as_map() -> Map& { return get<Map>(ValueKind::kMap); }
  [[nodiscard]] auto as_serialized() const -> const SerializedObject& {
    return get<SerializedObject>(ValueKind::kSerialized);
  }

  /// find: the value of the first entry whose key is the string `key`, or
  /// nullptr (also when this is not a map).
  [[nodiscard]] auto find(std::string_view key) const noexcept -> const Value*;

  friend MEMSHARD_DETAIL_INLINE auto operator==(const Value& a, const Value& b) -> bool;

 private:
  template <class T>
  [[nodiscard]] auto get(ValueKind wanted) const -> const T& {
    if (kind_ != wanted) {
      mismatch(wanted);
    }
    return std::get<T>(data_);
  }
  template <class T>
  [[nodiscard]] auto get(ValueKind wanted) -> T& {
    if (kind_ != wanted) {
      mismatch(wanted);
    }
    return std::get<T>(data_);
  }
  [[noreturn]] void mismatch(ValueKind wanted) const;

  ValueKind kind_ = ValueKind::kNull;
  std::variant<std::monostate, bool, std::int64_t, double, std::string, List, Map, SerializedObject>
      data_;
};

/// operator<<: a Value as readable text for logs and test failures (not a
/// format to parse): JSON-like, bytes as b"\xNN...", a string longer than 64
/// bytes cut there (with its length), a serialized object as <format, N bytes>.
MEMSHARD_DETAIL_INLINE auto operator<<(std::ostream& out, const Value& value) -> std::ostream&;

// The definitions: in every unit of the header-only mode; in the compiled mode, in the library.
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto Value::find(std::string_view key) const noexcept -> const Value* {
  if (kind_ != ValueKind::kMap) {
    return nullptr;
  }
  for (const Entry& entry : std::get<Map>(data_)) {
    if (entry.first.kind_ == ValueKind::kString &&
        std::get<std::string>(entry.first.data_) == key) {
      return &entry.second;
    }
  }
  return nullptr;
}

MEMSHARD_DETAIL_INLINE auto operator==(const Value& a, const Value& b) -> bool {
  return a.kind_ == b.kind_ && a.data_ == b.data_;
}

MEMSHARD_DETAIL_INLINE void Value::mismatch(ValueKind wanted) const {
  throw BadValueAccess("memshard: a " + std::string(to_string(kind_)) + " value read as " +
                       std::string(to_string(wanted)));
}

MEMSHARD_DETAIL_INLINE auto operator<<(std::ostream& out, const Value& value) -> std::ostream& {
  switch (value.kind()) {
    case ValueKind::kNull:
      return out << "null";
    case ValueKind::kBool:
      return out << (value.as_bool() ? "true" : "false");
    case ValueKind::kInt:
      return out << value.as_int();
    case ValueKind::kFloat: {
      char text[32];
      const auto end = std::to_chars(text, text + sizeof text, value.as_double()).ptr;
      return out << std::string_view(text, static_cast<std::size_t>(end - text));
    }
    case ValueKind::kString:
    case ValueKind::kBytes: {
      static constexpr char kDigits[] = "0123456789abcdef";
      out << (value.is_bytes() ? "b\"" : "\"");
      constexpr std::size_t kShown = 64;  // a long text is cut: this is for people
      const std::string& text = value.as_string();
      for (const char c : std::string_view(text).substr(0, kShown)) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
          out << '\\' << c;
        } else if (byte < 0x20 || byte == 0x7f || (value.is_bytes() && byte >= 0x80)) {
          out << "\\x" << kDigits[byte >> 4U] << kDigits[byte & 0xfU];
        } else {
          out << c;
        }
      }
      if (text.size() > kShown) {
        out << "...\" (" << text.size() << " bytes)";
        return out;
      }
      return out << '"';
    }
    case ValueKind::kList: {
      out << '[';
      const char* separator = "";
      for (const Value& item : value.as_list()) {
        out << separator << item;
        separator = ", ";
      }
      return out << ']';
    }
    case ValueKind::kMap: {
      out << '{';
      const char* separator = "";
      for (const auto& [key, item] : value.as_map()) {
        out << separator << key << ": " << item;
        separator = ", ";
      }
      return out << '}';
    }
    case ValueKind::kSerialized:
      return out << '<' << value.as_serialized().format << ", " << value.as_serialized().data.size()
                 << " bytes>";
  }
  return out;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_VALUE_HPP_
