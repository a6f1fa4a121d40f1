// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_READER_HPP_
#define MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_READER_HPP_

// codecs/detail/ruby_marshal_reader.hpp: MarshalReader, marshal_load's two
// passes over a Marshal 4.8 stream (the first checks and measures it, the
// second builds the Value), with the object table they share. The format is
// told in codecs/ruby_marshal.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/ruby_marshal_format.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// marshal_byte_name: a type byte as a message shows it: 'x' or 0x1f.
[[nodiscard]] inline auto marshal_byte_name(unsigned char byte) -> std::string {
  if (byte >= 0x21 && byte < 0x7f) {
    return std::string{'\'', static_cast<char>(byte), '\''};
  }
  constexpr std::string_view kHex = "0123456789abcdef";
  return std::string{'0', 'x', kHex[byte >> 4U], kHex[byte & 0xfU]};
}

/// marshal_add: a + b, saturating.
[[nodiscard]] constexpr auto marshal_add(std::size_t a, std::size_t b) noexcept -> std::size_t {
  return b > std::numeric_limits<std::size_t>::max() - a ? std::numeric_limits<std::size_t>::max()
                                                         : a + b;
}

/// marshal_binary_encoding: whether an encoding name is Ruby's binary
/// encoding (ASCII-8BIT, alias BINARY), compared without case.
[[nodiscard]] constexpr auto marshal_binary_encoding(std::string_view name) noexcept -> bool {
  auto same = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (std::size_t at = 0; at < a.size(); ++at) {
      char c = a[at];
      if (c >= 'a' && c <= 'z') {
        c = static_cast<char>(c - 'a' + 'A');
      }
      if (c != b[at]) {
        return false;
      }
    }
    return true;
  };
  return same(name, "ASCII-8BIT") || same(name, "BINARY");
}

/// kMarshalNodeCost: what one node of a decoded value costs of
/// max_decoded_bytes (its strings' bytes come on top).
inline constexpr std::size_t kMarshalNodeCost = sizeof(Value);

/// MarshalObject: what the first pass learns of one object of the object
/// table: where to read it again, its size as a tree, whether it is finished.
struct MarshalObject {
  std::size_t start = 0;                ///< the offset of its first byte (its `I` wrapper's)
  std::size_t cost = kMarshalNodeCost;  ///< the memory of its tree: nodes and string bytes
  std::size_t height = 0;               ///< nesting of lists and maps in it
  std::string_view text;                ///< a String's bytes
  unsigned char type = 0;               ///< its type byte
  bool complete = false;                ///< read to its end (a link to it is not a cycle)
};

/// MarshalItem: one object as read: its Value when built, else what the
/// first pass measures of it.
struct MarshalItem {
  Value value;
  std::size_t cost = kMarshalNodeCost;
  std::size_t height = 0;
  std::string_view text;
  unsigned char type = 0;
};

/// MarshalReader: marshal_load's two passes over one input. The first reads
/// everything without building a value: it checks the format, fills the
/// Symbol and object tables, measures the value's size and depth (links
/// included) and notices anything kept opaque. The second, run only when the
/// first found a value within the limits, builds it, reading a linked object
/// again from its offset.
class MarshalReader {
 public:
  MarshalReader(std::string_view input, const DecodeLimits& limits) noexcept
      : input_(input), limits_(limits) {
    const std::size_t twice = marshal_add(limits.max_depth, limits.max_depth);
    frame_limit_ = marshal_add(twice, 4);
  }

  /// load: the decoded input (its first two bytes are the version, checked).
  [[nodiscard]] auto load() -> CodecResult<Value> {
    pos_ = 2;
    MarshalItem top;
    if (!read_value(top, false)) {
      return std::move(*error_);
    }
    if (pos_ != input_.size()) {
      return marshal_error(
          CodecErrc::kCorrupt, pos_,
          "trailing data after the value (" + std::to_string(input_.size() - pos_) + " bytes)");
    }
    if (opaque_) {
      return Value::serialized(std::string(kMarshalFormat), std::string(input_));
    }
    if (deferred_) {
      return std::move(*deferred_);
    }
    if (top.cost > limits_.max_decoded_bytes) {
      return marshal_error(
          CodecErrc::kTooLarge, 2,
          "a value of " +
              (top.cost == std::numeric_limits<std::size_t>::max() ? std::string("too many")
                                                                   : std::to_string(top.cost)) +
              " bytes (a link counts as the copy it makes) would take the decoded value past "
              "max_decoded_bytes " +
              std::to_string(limits_.max_decoded_bytes));
    }
    second_pass_ = true;
    pos_ = 2;
    depth_ = 0;
    frames_ = 0;
    MarshalItem built;
    if (!read_value(built, true)) {
      return std::move(*error_);
    }
    return std::move(built.value);
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  /// Frame: one level of recursion, counted against frame_limit_.
  class Frame {
   public:
    explicit Frame(MarshalReader& reader) noexcept : reader_(reader) { ++reader_.frames_; }
    Frame(const Frame&) = delete;
    auto operator=(const Frame&) -> Frame& = delete;
    ~Frame() { --reader_.frames_; }

   private:
    MarshalReader& reader_;
  };

  auto fail(CodecErrc code, std::size_t at, const std::string& what) -> bool {
    error_.emplace(marshal_error(code, at, what));
    return false;
  }

  void defer(CodecErrc code, std::size_t at, const std::string& what) {
    if (!deferred_) {
      deferred_.emplace(marshal_error(code, at, what));
    }
  }

  auto read_byte(unsigned char& byte, std::string_view what) -> bool {
    if (pos_ >= input_.size()) {
      return fail(CodecErrc::kCorrupt, pos_, "the data ends inside " + std::string(what));
    }
    byte = static_cast<unsigned char>(input_[pos_++]);
    return true;
  }

  auto read_long(std::int64_t& out, std::string_view what) -> bool {
    const std::size_t at = pos_;
    unsigned char first = 0;
    if (!read_byte(first, what)) {
      return false;
    }
    const auto lead = static_cast<signed char>(first);
    if (lead == 0) {
      out = 0;
      return true;
    }
    if (lead > 4) {
      out = lead - 5;
      return true;
    }
    if (lead < -4) {
      out = lead + 5;
      return true;
    }
    const auto count = static_cast<std::size_t>(lead > 0 ? lead : -lead);
    if (input_.size() - pos_ < count) {
      return fail(CodecErrc::kCorrupt, at,
                  "the data ends inside the " + std::to_string(count) + "-byte number of " +
                      std::string(what));
    }
    std::uint64_t bits = lead > 0 ? 0 : ~std::uint64_t{0};
    for (std::size_t i = 0; i < count; ++i) {
      const auto byte = static_cast<unsigned char>(input_[pos_++]);
      bits &= ~(std::uint64_t{0xff} << (8 * i));
      bits |= std::uint64_t{byte} << (8 * i);
    }
    out = static_cast<std::int64_t>(bits);
    return true;
  }

  /// read_length: a count of things of at least `unit` bytes each, checked
  /// against the bytes left.
  auto read_length(std::size_t& out, std::string_view what, std::size_t unit) -> bool {
    const std::size_t at = pos_;
    std::int64_t number = 0;
    if (!read_long(number, what)) {
      return false;
    }
    if (number < 0) {
      return fail(CodecErrc::kCorrupt, at,
                  std::string(what) + " is negative (" + std::to_string(number) + ")");
    }
    const auto count = static_cast<std::uint64_t>(number);
    const std::size_t left = input_.size() - pos_;
    if (count > left / unit) {
      return fail(CodecErrc::kCorrupt, at,
                  std::string(what) + " is " + std::to_string(count) + ", more than the " +
                      std::to_string(left) + " bytes left can hold");
    }
    out = static_cast<std::size_t>(count);
    return true;
  }

  auto read_text(std::string_view& out, std::string_view what) -> bool {
    std::size_t length = 0;
    if (!read_length(length, what, 1)) {
      return false;
    }
    out = input_.substr(pos_, length);
    pos_ += length;
    return true;
  }

  /// register_object: the next entry of the object table (first pass).
  auto register_object(unsigned char type, std::size_t at, std::string_view text = {})
      -> std::size_t {
    if (second_pass_) {
      return kNone;
    }
    MarshalObject object;
    object.start = at;
    object.type = type;
    object.text = text;
    objects_.push_back(object);
    return objects_.size() - 1;
  }

  auto enter_frame(std::size_t at) -> bool {
    if (frames_ >= frame_limit_) {
      return fail(CodecErrc::kTooDeep, at,
                  "objects nested deeper than " + std::to_string(frame_limit_) + " levels");
    }
    return true;
  }

  auto open_container(std::size_t at) -> bool {
    if (depth_ >= limits_.max_depth) {
      return fail(CodecErrc::kTooDeep, at,
                  "lists and maps nested deeper than " + std::to_string(limits_.max_depth));
    }
    ++depth_;
    return true;
  }

  /// read_symbol: a Symbol where the format wants one (`:`, `;`, or `I:`
  /// with the Symbol's encoding).
  auto read_symbol(std::string_view& name) -> bool {
    const std::size_t at = pos_;
    unsigned char type = 0;
    if (!read_byte(type, "a Symbol")) {
      return false;
    }
    bool ivars = false;
    while (type == 'I') {
      ivars = true;
      if (!read_byte(type, "a Symbol")) {
        return false;
      }
    }
    if (type == ';') {
      if (ivars) {
        return fail(CodecErrc::kCorrupt, at, "a Symbol link with instance variables");
      }
      return read_symbol_link(name, at);
    }
    if (type != ':') {
      return fail(CodecErrc::kCorrupt, at,
                  "expected a Symbol (':' or ';'), found " + marshal_byte_name(type));
    }
    return read_symbol_body(name, ivars, at);
  }

  auto read_symbol_link(std::string_view& name, std::size_t at) -> bool {
    std::int64_t index = 0;
    if (!read_long(index, "a Symbol link")) {
      return false;
    }
    if (index < 0 || static_cast<std::uint64_t>(index) >= symbols_.size()) {
      return fail(CodecErrc::kCorrupt, at,
                  "a link to Symbol " + std::to_string(index) + ", but " +
                      std::to_string(symbols_.size()) + " Symbols precede it");
    }
    name = symbols_[static_cast<std::size_t>(index)];
    return true;
  }

  /// read_symbol_body: a Symbol's name after `:`, then (`ivars`) its
  /// instance variables: its encoding, which does not change what it reads as.
  auto read_symbol_body(std::string_view& name, bool ivars, std::size_t at) -> bool {
    if (!read_text(name, "the length of a Symbol")) {
      return false;
    }
    if (!second_pass_) {
      symbols_.push_back(name);
    }
    if (!ivars) {
      return true;
    }
    if (!enter_frame(at)) {
      return false;
    }
    const Frame frame(*this);
    return read_ivars(false);
  }

  /// read_ivars: a count and that many Symbol, object pairs whose objects
  /// are read and dropped; `opaque`: they make the input opaque.
  auto read_ivars(bool opaque) -> bool {
    std::size_t count = 0;
    if (!read_length(count, "the instance variable count", 2)) {
      return false;
    }
    for (std::size_t i = 0; i < count; ++i) {
      std::string_view name;
      MarshalItem item;
      if (!read_symbol(name) || !read_value(item, false)) {
        return false;
      }
      if (opaque) {
        opaque_ = true;
      }
    }
    return true;
  }

  /// StringKind: what a String's instance variables say it is.
  enum class StringKind : std::uint8_t { kBinary, kText };

  /// read_wrapper_ivars: the instance variables after an object wrapped in
  /// `I`: a String's encoding, or anything else, which makes the input opaque.
  auto read_wrapper_ivars(bool string, StringKind& kind) -> bool {
    std::size_t count = 0;
    if (!read_length(count, "the instance variable count", 2)) {
      return false;
    }
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t at = pos_;
      std::string_view name;
      if (!read_symbol(name)) {
        return false;
      }
      if (string && name == "E" && pos_ < input_.size() &&
          (input_[pos_] == 'T' || input_[pos_] == 'F')) {
        ++pos_;
        kind = StringKind::kText;
        continue;
      }
      MarshalItem item;
      if (!read_value(item, false)) {
        return false;
      }
      if (string && name == "encoding") {
        if (item.type != '"') {
          return fail(CodecErrc::kCorrupt, at,
                      "a String's encoding name is not a String (type " +
                          marshal_byte_name(item.type) + ")");
        }
        kind = marshal_binary_encoding(item.text) ? StringKind::kBinary : StringKind::kText;
        continue;
      }
      opaque_ = true;
    }
    return true;
  }

  auto read_bignum(MarshalItem& out, std::size_t at, bool build) -> bool {
    unsigned char sign = 0;
    if (!read_byte(sign, "the sign of a Bignum")) {
      return false;
    }
    if (sign != '+' && sign != '-') {
      return fail(CodecErrc::kCorrupt, at + 1,
                  "a Bignum's sign is " + marshal_byte_name(sign) + ", not '+' or '-'");
    }
    std::size_t words = 0;
    if (!read_length(words, "the length of a Bignum", 2)) {
      return false;
    }
    const std::string_view bytes = input_.substr(pos_, 2 * words);
    pos_ += bytes.size();
    std::uint64_t magnitude = 0;
    bool fits = true;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const auto byte = static_cast<unsigned char>(bytes[i]);
      if (byte == 0) {
        continue;
      }
      if (i >= 8) {
        fits = false;
        break;
      }
      magnitude |= std::uint64_t{byte} << (8 * i);
    }
    const std::uint64_t limit =
        sign == '-' ? std::uint64_t{1} << 63U : (std::uint64_t{1} << 63U) - 1;
    if (!fits || magnitude > limit) {
      defer(CodecErrc::kTooLarge, at,
            "integer out of range: a Bignum of " + std::to_string(words) +
                " 16-bit words that does not fit in int64");
      magnitude = 0;
    }
    if (build) {
      out.value = sign == '-' ? Value(static_cast<std::int64_t>(0 - magnitude))
                              : Value(static_cast<std::int64_t>(magnitude));
    }
    return true;
  }

  auto read_float(MarshalItem& out, std::size_t at, bool build) -> bool {
    std::string_view text;
    if (!read_text(text, "the length of a Float")) {
      return false;
    }
    std::optional<double> number = marshal_parse_float(text);
    if (!number) {
      if (text.find('\0') != std::string_view::npos &&
          marshal_parse_float(text.substr(0, text.find('\0')))) {
        defer(CodecErrc::kUnsupported, at,
              "a Float with a binary mantissa after its text (Ruby 1.8's form)");
        number = 0.0;
      } else {
        return fail(CodecErrc::kCorrupt, at,
                    "a Float's text is not a number: \"" +
                        std::string(text.substr(0, std::min<std::size_t>(text.size(), 40))) + "\"");
      }
    }
    if (build) {
      out.value = Value(*number);
    }
    return true;
  }

  auto read_list(MarshalItem& out, std::size_t at, bool build) -> bool {
    std::size_t count = 0;
    if (!read_length(count, "the length of an Array", 1) || !open_container(at)) {
      return false;
    }
    Value::List items;
    if (build) {
      items.reserve(count);
    }
    std::size_t cost = kMarshalNodeCost;
    std::size_t height = 0;
    for (std::size_t i = 0; i < count; ++i) {
      MarshalItem item;
      if (!read_value(item, build)) {
        return false;
      }
      if (build) {
        items.push_back(std::move(item.value));
      } else {
        cost = marshal_add(cost, item.cost);
        height = std::max(height, item.height);
      }
    }
    --depth_;
    out.cost = cost;
    out.height = height + 1;
    if (build) {
      out.value = Value::list(std::move(items));
    }
    return true;
  }

  auto read_map(MarshalItem& out, std::size_t at, bool build, bool with_default) -> bool {
    std::size_t count = 0;
    if (!read_length(count, "the size of a Hash", 2) || !open_container(at)) {
      return false;
    }
    Value::Map entries;
    if (build) {
      entries.reserve(count);
    }
    std::size_t cost = kMarshalNodeCost;
    std::size_t height = 0;
    for (std::size_t i = 0; i < count; ++i) {
      MarshalItem key;
      MarshalItem item;
      if (!read_value(key, build) || !read_value(item, build)) {
        return false;
      }
      if (build) {
        entries.emplace_back(std::move(key.value), std::move(item.value));
      } else {
        cost = marshal_add(marshal_add(cost, key.cost), item.cost);
        height = std::max({height, key.height, item.height});
      }
    }
    if (with_default) {
      MarshalItem fallback;
      if (!read_value(fallback, false)) {
        return false;
      }
      opaque_ = true;
    }
    --depth_;
    out.cost = cost;
    out.height = height + 1;
    if (build) {
      out.value = Value::map(std::move(entries));
    }
    return true;
  }

  auto read_link(MarshalItem& out, std::size_t at, bool build) -> bool {
    std::int64_t index = 0;
    if (!read_long(index, "an object link")) {
      return false;
    }
    if (index < 0 || static_cast<std::uint64_t>(index) >= objects_.size()) {
      return fail(CodecErrc::kCorrupt, at,
                  "a link to object " + std::to_string(index) + ", but " +
                      std::to_string(objects_.size()) + " objects precede it");
    }
    const MarshalObject& target = objects_[static_cast<std::size_t>(index)];
    out.type = target.type;
    out.text = target.text;
    if (!second_pass_ && !target.complete) {
      opaque_ = true;  // a link into an object still being read: a cycle
      return true;
    }
    if (!build) {
      out.cost = target.cost;
      out.height = target.height;
      if (!second_pass_ &&
          target.height > limits_.max_depth - std::min(depth_, limits_.max_depth)) {
        return fail(CodecErrc::kTooDeep, at,
                    "a link to object " + std::to_string(index) +
                        " nests lists and maps deeper than " + std::to_string(limits_.max_depth));
      }
      return true;
    }
    const std::size_t resume = pos_;
    pos_ = target.start;
    if (!read_value(out, true)) {
      return false;
    }
    pos_ = resume;
    return true;
  }

  /// read_opaque: the objects that name a class or module; read to check
  /// their form and to number the objects in them, never built.
  auto read_opaque(unsigned char type, std::size_t at, bool& ivars_left, std::size_t& registered)
      -> bool {
    opaque_ = true;
    std::string_view name;
    switch (type) {
      case 'o': {  // Object: class, instance variables
        registered = register_object(type, at);
        return read_symbol(name) && read_ivars(true);
      }
      case 'S': {  // Struct: class, member count, Symbol, value pairs
        registered = register_object(type, at);
        std::size_t count = 0;
        if (!read_symbol(name) || !read_length(count, "the size of a Struct", 2)) {
          return false;
        }
        for (std::size_t i = 0; i < count; ++i) {
          MarshalItem item;
          if (!read_symbol(name) || !read_value(item, false)) {
            return false;
          }
        }
        return true;
      }
      case 'u': {  // _dump: class, bytes
        std::string_view data;
        if (!read_symbol(name) || !read_text(data, "the length of _dump data")) {
          return false;
        }
        if (ivars_left) {
          ivars_left = false;
          if (!read_ivars(true)) {
            return false;
          }
        }
        registered = register_object(type, at);
        return true;
      }
      case 'U':    // marshal_dump: class, object
      case 'd': {  // Data: class, object
        if (!read_symbol(name)) {
          return false;
        }
        registered = register_object(type, at);
        MarshalItem item;
        return read_value(item, false);
      }
      case 'M':  // old Module, Class, Module: the name
      case 'c':
      case 'm': {
        std::string_view path;
        if (!read_text(path, "the length of a class name")) {
          return false;
        }
        if (type != 'M' && ivars_left) {
          ivars_left = false;
          if (!read_ivars(true)) {
            return false;
          }
        }
        registered = register_object(type, at);
        return true;
      }
      case '/': {  // Regexp: source, options byte
        std::string_view source;
        unsigned char options = 0;
        if (!read_text(source, "the length of a Regexp") ||
            !read_byte(options, "a Regexp's options")) {
          return false;
        }
        registered = register_object(type, at);
        if (ivars_left) {
          ivars_left = false;
          return read_ivars(true);
        }
        return true;
      }
      default:
        return fail(CodecErrc::kCorrupt, at, "unknown type byte " + marshal_byte_name(type));
    }
  }

  /// read_value: one object, with its `I`, `e` and `C` prefixes; built into
  /// out.value when `build` (second pass), else measured.
  auto read_value(MarshalItem& out, bool build) -> bool {
    const std::size_t start = pos_;
    if (!enter_frame(start)) {
      return false;
    }
    const Frame frame(*this);
    std::size_t ivar_lists = 0;  // `I` prefixes: instance variable lists after the object
    bool ivars_next = false;     // the last prefix was `I`: the object may read one itself
    bool wrapped = false;        // an `e` or `C` prefix
    unsigned char type = 0;
    std::size_t at = pos_;
    for (;;) {
      at = pos_;
      if (!read_byte(type, "a value")) {
        return false;
      }
      if (type == 'I') {
        ++ivar_lists;
        ivars_next = true;
      } else if (type == 'e' || type == 'C') {
        std::string_view name;
        if (!read_symbol(name)) {
          return false;
        }
        opaque_ = true;
        wrapped = true;
        ivars_next = false;
      } else {
        break;
      }
    }
    out.type = type;
    std::size_t registered = kNone;
    bool ok = true;
    switch (type) {
      case '0':
        break;
      case 'T':
      case 'F':
        if (build) {
          out.value = Value(type == 'T');
        }
        break;
      case 'i': {
        std::int64_t number = 0;
        ok = read_long(number, "a Fixnum");
        if (ok && build) {
          out.value = Value(number);
        }
        break;
      }
      case 'l':
        ok = read_bignum(out, at, build);
        registered = register_object(type, at);
        break;
      case 'f':
        ok = read_float(out, at, build);
        registered = register_object(type, at);
        break;
      case '"':
        ok = read_text(out.text, "the length of a String");
        registered = register_object(type, at, out.text);
        out.cost = marshal_add(kMarshalNodeCost, out.text.size());
        break;
      case ':':
      case ';': {
        std::string_view name;
        if (type == ';') {
          ok = read_symbol_link(name, at);
        } else {
          const bool ivars = ivars_next && ivar_lists > 0;
          if (ivars) {
            --ivar_lists;
          }
          ok = read_symbol_body(name, ivars, at);
        }
        out.cost = marshal_add(kMarshalNodeCost, name.size());
        if (ok && build) {
          out.value = Value(std::string(name));
        }
        break;
      }
      case '[':
        registered = register_object(type, at);
        ok = read_list(out, at, build);
        break;
      case '{':
      case '}':
        registered = register_object(type, at);
        ok = read_map(out, at, build, type == '}');
        break;
      case '@':
        ok = read_link(out, at, build);
        break;
      default: {
        bool ivars_left = ivars_next && ivar_lists > 0;
        const bool had = ivars_left;
        ok = read_opaque(type, at, ivars_left, registered);
        if (had && !ivars_left) {
          --ivar_lists;
        }
        break;
      }
    }
    if (!ok) {
      return false;
    }
    // The `I` lists the object did not read itself: a String's encoding, or
    // instance variables (an empty list is none) that make the input opaque.
    const bool string = type == '"' && !wrapped;
    StringKind kind = StringKind::kBinary;
    for (; ivar_lists > 0; --ivar_lists) {
      if (!read_wrapper_ivars(string, kind)) {
        return false;
      }
    }
    if (type == '"' && build) {
      out.value = kind == StringKind::kText ? Value(std::string(out.text))
                                            : Value::bytes(std::string(out.text));
    }
    if (registered != kNone) {
      MarshalObject& object = objects_[registered];
      object.start = start;
      object.cost = out.cost;
      object.height = out.height;
      object.complete = true;
    }
    return true;
  }

  std::string_view input_;
  DecodeLimits limits_;
  std::size_t pos_ = 0;
  std::size_t depth_ = 0;
  std::size_t frames_ = 0;
  std::size_t frame_limit_ = 0;
  bool second_pass_ = false;
  bool opaque_ = false;
  std::vector<std::string_view> symbols_;
  std::vector<MarshalObject> objects_;
  std::optional<CodecError> error_;
  std::optional<CodecError> deferred_;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_READER_HPP_
