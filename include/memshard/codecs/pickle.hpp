// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PICKLE_HPP_
#define MEMSHARD_CODECS_PICKLE_HPP_

// codecs/pickle.hpp: Python's pickle, as python-memcache (protocol 0, its
// default pickleProtocol), pylibmc and pymemcache's pickle_serde (protocol 5,
// pickle.HIGHEST_PROTOCOL) store floats, booleans, lists and dicts (flag 0x1):
// pickle_loads, a reader that builds data and never imports or calls
// anything, and pickle_dumps, which writes what CPython 3.11's
// pickle.dumps(value, protocol) writes, byte for byte.
//
// The format facts that matter:
//   * a pickle is a program for a stack machine: one-byte opcodes push
//     objects, MARK '(' remembers a stack position that LIST, TUPLE, DICT,
//     APPENDS, SETITEMS, ADDITEMS, FROZENSET and POP_MARK consume (and that
//     hides everything below it from the other opcodes), APPEND / SETITEM
//     add to the list or dict under the top, PUT/BINPUT/LONG_BINPUT/MEMOIZE
//     store the top in the memo and GET/BINGET/LONG_BINGET push it again
//     (the same object: mutating it later is seen through every copy), STOP
//     '.' ends the program and returns the top;
//   * protocol 0 is text: I42\n (ints of 32 bits; I01\n and I00\n are True
//     and False), L<digits>L\n (other ints), F<repr>\n (floats: 0.1, 1e+16,
//     inf, nan), V<raw-unicode-escape>\n (str: Latin-1 characters as single
//     bytes, '\\', NUL, CR, LF, ^Z and characters above U+00FF as \uXXXX or
//     \UXXXXXXXX), N (None), (l and (d (empty list, dict), a and s (APPEND,
//     SETITEM), and p<n>\n after every str, list and dict (the memo index,
//     counting from 0);
//   * protocols 1 to 5 are binary: K/M/J ints of 1, 2 (unsigned) and 4
//     (signed) little-endian bytes, G an 8-byte big-endian double, X a
//     UTF-8 str with a 4-byte length, ] and } the empty list and dict,
//     MARK ... APPENDS / SETITEMS in batches of 1,000 (one item alone gets
//     APPEND / SETITEM), BINPUT q<n>; protocol 2 adds the header 80 02,
//     NEWTRUE 88 / NEWFALSE 89 and LONG1 8a (other ints, little-endian
//     two's complement, as few bytes as hold the sign); 3 adds C/B bytes;
//     4 adds 8c (short str), MEMOIZE 94 instead of BINPUT, and FRAME 95: an
//     8-byte length of the opcodes that follow, written before each run of
//     at least 4 bytes, a new frame starting after 64 KiB and a str or bytes
//     payload of 64 KiB or more written outside any frame; 5 adds
//     BYTEARRAY8 96;
//   * before protocol 3 there is no bytes opcode: CPython writes
//     _codecs.encode('<the bytes as Latin-1 text>', 'latin1'), and
//     __builtin__.bytes() for b'', with GLOBAL c<module>\n<name>\n and
//     REDUCE R (call); sets and frozensets before protocol 4 and bytearray
//     before 5 are builtins.set([...]), frozenset([...]), bytearray(b'...').
//     The reader evaluates exactly these itself, on the arguments CPython
//     writes (_codecs.encode(str, 'latin1'); bytes, bytearray of nothing or
//     bytes; set, frozenset of nothing or a list, tuple or set), looking
//     up no name; __builtin__ is taken for builtins before protocol 3, as
//     CPython does;
//   * every other GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
//     NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID, NEXT_BUFFER and READONLY_BUFFER
//     would import a module or call code in Python: the reader resolves no
//     name and calls nothing, it checks that the rest of the opcodes are
//     well-formed and the whole input decodes to
//     Value::serialized("pickle", bytes).
//
// Python objects as Values: None null, bool, int (int64; a larger int is a
// kTooLarge error), float, str kString, bytes and bytearray kBytes, Python 2
// str (STRING, BINSTRING, SHORT_BINSTRING) kBytes (it is a byte string:
// what pickle.loads(..., encoding='bytes') gives; Python 3 by default decodes
// it as ASCII), list and tuple kList, dict kMap (in the pickle's order),
// set and frozenset kList (in the pickle's order, i.e. the writer's
// iteration order). Equal dict keys and set items (which CPython never
// writes) are kept once, as Python keeps them: the first key, the last
// value. An object reached twice through the memo is copied (a Value is a
// tree); a str holding a lone surrogate (Python allows one) and a container
// that contains itself have no Value: serialized too.

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
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

/// kPickleHighestProtocol: the newest pickle protocol (Python 3.8+'s
/// pickle.HIGHEST_PROTOCOL), what pylibmc and pymemcache's pickle_serde use.
inline constexpr int kPickleHighestProtocol = 5;

namespace detail {

inline constexpr std::string_view kPickleName = "pickle";

/// pickle_hex: `value` as `digits` lowercase hex digits.
[[nodiscard]] inline auto pickle_hex(std::uint32_t value, int digits) -> std::string {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kDigits[value & 0xfU];
    value >>= 4U;
  }
  return out;
}

/// pickle_quote: `text` for an error message: quoted, at most 40 bytes,
/// bytes outside printable ASCII as \xNN.
[[nodiscard]] inline auto pickle_quote(std::string_view text) -> std::string {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x" + pickle_hex(c, 2);
    }
  }
  return out + (text.size() > 40 ? "'..." : "'");
}

/// pickle_utf8_next: the code point at `text[at]` and its length in bytes
/// (1 to 4), or 0 when the bytes there are not UTF-8. `surrogates`: also
/// accept U+D800..U+DFFF encoded as three bytes (Python's "surrogatepass").
[[nodiscard]] inline auto pickle_utf8_next(std::string_view text, std::size_t at,
                                           char32_t& code_point, bool surrogates) noexcept
    -> std::size_t {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const std::size_t left = text.size() - at;
  const unsigned char lead = byte(0);
  if (lead < 0x80U) {
    code_point = lead;
    return 1;
  }
  std::size_t length = 0;
  char32_t minimum = 0;
  char32_t value = 0;
  if (lead >= 0xc2U && lead <= 0xdfU) {
    length = 2;
    minimum = 0x80;
    value = lead & 0x1fU;
  } else if (lead >= 0xe0U && lead <= 0xefU) {
    length = 3;
    minimum = 0x800;
    value = lead & 0x0fU;
  } else if (lead >= 0xf0U && lead <= 0xf4U) {
    length = 4;
    minimum = 0x10000;
    value = lead & 0x07U;
  } else {
    return 0;
  }
  if (left < length) {
    return 0;
  }
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0U) != 0x80U) {
      return 0;
    }
    value = value << 6U | (byte(i) & 0x3fU);
  }
  if (value < minimum || value > 0x10ffff || (!surrogates && value >= 0xd800 && value <= 0xdfff)) {
    return 0;
  }
  code_point = value;
  return length;
}

/// pickle_append_utf8: appends `code_point` (at most U+10FFFF) as UTF-8;
/// surrogates come out as their three-byte form.
inline void pickle_append_utf8(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xc0U | code_point >> 6U));
    out.push_back(static_cast<char>(0x80U | (code_point & 0x3fU)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xe0U | code_point >> 12U));
    out.push_back(static_cast<char>(0x80U | (code_point >> 6U & 0x3fU)));
    out.push_back(static_cast<char>(0x80U | (code_point & 0x3fU)));
  } else {
    out.push_back(static_cast<char>(0xf0U | code_point >> 18U));
    out.push_back(static_cast<char>(0x80U | (code_point >> 12U & 0x3fU)));
    out.push_back(static_cast<char>(0x80U | (code_point >> 6U & 0x3fU)));
    out.push_back(static_cast<char>(0x80U | (code_point & 0x3fU)));
  }
}

/// pickle_is_space: C's isspace in the C locale (what strtol and Python's
/// int() skip).
[[nodiscard]] constexpr auto pickle_is_space(char c) noexcept -> bool {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/// pickle_digit: the value of a digit of any base up to 36, or 99.
[[nodiscard]] constexpr auto pickle_digit(char c) noexcept -> int {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'Z') {
    return c - 'A' + 10;
  }
  return 99;
}

/// PickleNumber: how a number's text read.
enum class PickleNumber : std::uint8_t { kOk, kOutOfRange, kInvalid };

/// pickle_make_int: the int64 of a sign and a magnitude, or kOutOfRange.
[[nodiscard]] constexpr auto pickle_make_int(bool negative, std::uint64_t magnitude, bool overflow,
                                             std::int64_t& out) noexcept -> PickleNumber {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (overflow || magnitude > kMax + (negative ? 1U : 0U)) {
    return PickleNumber::kOutOfRange;
  }
  out = negative ? static_cast<std::int64_t>(0U - magnitude) : static_cast<std::int64_t>(magnitude);
  return PickleNumber::kOk;
}

/// pickle_c_long: C strtol(text, &end, 0) on an LP64 system: whether it reads
/// all of `text` without overflow (leading white space, a sign, 0x hex, a
/// leading 0 octal, else decimal).
[[nodiscard]] inline auto pickle_c_long(std::string_view text, std::int64_t& out) noexcept -> bool {
  std::size_t i = 0;
  while (i < text.size() && pickle_is_space(text[i])) {
    ++i;
  }
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  unsigned base = 10;
  if (i + 2 < text.size() && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X') &&
      pickle_digit(text[i + 2]) < 16) {
    base = 16;
    i += 2;
  } else if (i < text.size() && text[i] == '0') {
    base = 8;
  }
  std::uint64_t magnitude = 0;
  bool overflow = false;
  std::size_t digits = 0;
  for (; i < text.size(); ++i, ++digits) {
    const int digit = pickle_digit(text[i]);
    if (digit >= static_cast<int>(base)) {
      break;
    }
    if (magnitude >
        (std::numeric_limits<std::uint64_t>::max() - static_cast<unsigned>(digit)) / base) {
      overflow = true;
    } else {
      magnitude = magnitude * base + static_cast<unsigned>(digit);
    }
  }
  return digits != 0 && i == text.size() &&
         pickle_make_int(negative, magnitude, overflow, out) == PickleNumber::kOk;
}

/// pickle_py_int: Python's int(text, base) for base 0 (prefixes 0x/0o/0b, no
/// leading zeros in decimal) or 10: white space around, a sign, single
/// underscores between digits.
[[nodiscard]] inline auto pickle_py_int(std::string_view text, unsigned base,
                                        std::int64_t& out) noexcept -> PickleNumber {
  std::size_t i = 0;
  std::size_t end = text.size();
  while (i < end && pickle_is_space(text[i])) {
    ++i;
  }
  while (end > i && pickle_is_space(text[end - 1])) {
    --end;
  }
  bool negative = false;
  if (i < end && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  bool zeros_only = false;
  bool underscore_ok = false;
  if (base == 0) {
    const char prefix = i + 1 < end && text[i] == '0' ? text[i + 1] : '\0';
    if (prefix == 'x' || prefix == 'X') {
      base = 16;
    } else if (prefix == 'o' || prefix == 'O') {
      base = 8;
    } else if (prefix == 'b' || prefix == 'B') {
      base = 2;
    }
    if (base != 0) {
      i += 2;
      underscore_ok = true;
    } else {
      base = 10;
      zeros_only = i < end && text[i] == '0';
    }
  }
  std::uint64_t magnitude = 0;
  bool overflow = false;
  std::size_t digits = 0;
  bool last_underscore = false;
  for (; i < end; ++i) {
    if (text[i] == '_') {
      if (last_underscore || (digits == 0 && !underscore_ok)) {
        return PickleNumber::kInvalid;
      }
      last_underscore = true;
      continue;
    }
    const int digit = pickle_digit(text[i]);
    if (digit >= static_cast<int>(base) || (zeros_only && digit != 0)) {
      return PickleNumber::kInvalid;
    }
    last_underscore = false;
    ++digits;
    if (magnitude >
        (std::numeric_limits<std::uint64_t>::max() - static_cast<unsigned>(digit)) / base) {
      overflow = true;
    } else {
      magnitude = magnitude * base + static_cast<unsigned>(digit);
    }
  }
  if (digits == 0 || last_underscore) {
    return PickleNumber::kInvalid;
  }
  return pickle_make_int(negative, magnitude, overflow, out);
}

/// pickle_py_float: CPython's PyOS_string_to_double on all of `text`: no
/// white space, a sign, digits with an optional point and exponent, or
/// inf/infinity/nan in any case; kOutOfRange when it overflows (an
/// underflow is zero).
[[nodiscard]] inline auto pickle_py_float(std::string_view text, double& out) noexcept
    -> PickleNumber {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  const std::string_view body = text.substr(i);
  const auto is_word = [&](std::string_view word) {
    if (body.size() != word.size()) {
      return false;
    }
    for (std::size_t k = 0; k < word.size(); ++k) {
      const char c = body[k];
      if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != word[k]) {
        return false;
      }
    }
    return true;
  };
  if (is_word("inf") || is_word("infinity")) {
    out = negative ? -std::numeric_limits<double>::infinity()
                   : std::numeric_limits<double>::infinity();
    return PickleNumber::kOk;
  }
  if (is_word("nan")) {
    out = negative ? -std::numeric_limits<double>::quiet_NaN()
                   : std::numeric_limits<double>::quiet_NaN();
    return PickleNumber::kOk;
  }
  // digits [. digits] [e [sign] digits], at least one mantissa digit.
  std::size_t k = 0;
  std::size_t mantissa_digits = 0;
  std::int64_t scale = 0;  // the decimal exponent of the first significant digit, roughly
  bool significant = false;
  while (k < body.size() && body[k] >= '0' && body[k] <= '9') {
    significant = significant || body[k] != '0';
    scale += significant ? 1 : 0;
    ++k;
    ++mantissa_digits;
  }
  if (k < body.size() && body[k] == '.') {
    ++k;
    while (k < body.size() && body[k] >= '0' && body[k] <= '9') {
      if (!significant) {
        significant = body[k] != '0';
        scale -= significant ? 0 : 1;
      }
      ++k;
      ++mantissa_digits;
    }
  }
  if (mantissa_digits == 0) {
    return PickleNumber::kInvalid;
  }
  if (k < body.size() && (body[k] == 'e' || body[k] == 'E')) {
    std::size_t e = k + 1;
    bool exponent_negative = false;
    if (e < body.size() && (body[e] == '+' || body[e] == '-')) {
      exponent_negative = body[e] == '-';
      ++e;
    }
    std::int64_t exponent = 0;
    const std::size_t first = e;
    while (e < body.size() && body[e] >= '0' && body[e] <= '9') {
      exponent = exponent > 100000000 ? exponent : exponent * 10 + (body[e] - '0');
      ++e;
    }
    if (e == first) {
      return PickleNumber::kInvalid;  // "1e": the text does not end where the number does
    }
    scale += exponent_negative ? -exponent : exponent;
    k = e;
  }
  if (k != body.size()) {
    return PickleNumber::kInvalid;
  }
  double value = 0;
  const auto [ptr, ec] =
      std::from_chars(body.data(), body.data() + body.size(), value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    if (significant && scale > 0) {
      return PickleNumber::kOutOfRange;
    }
    value = 0.0;
  } else if (ec != std::errc() || ptr != body.data() + body.size()) {
    return PickleNumber::kInvalid;
  }
  out = negative ? -value : value;
  return PickleNumber::kOk;
}

/// pickle_float_repr: Python's repr() of a double: the shortest digits that
/// read back the same, in positional form when the decimal point falls
/// between 4 places left of the first digit and 16 places right of it
/// (0.0001, 1234567890123456.0), else as d.ddde±XX (1e-05, 1e+16); inf,
/// -inf, nan.
[[nodiscard]] inline auto pickle_float_repr(double value) -> std::string {
  if (value != value) {
    return "nan";
  }
  if (value == std::numeric_limits<double>::infinity()) {
    return "inf";
  }
  if (value == -std::numeric_limits<double>::infinity()) {
    return "-inf";
  }
  std::string out = std::signbit(value) ? "-" : "";
  if (value == 0) {
    return out + "0.0";
  }
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(),
                                    value < 0 ? -value : value, std::chars_format::scientific);
  const std::string_view text(buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data()));
  const std::size_t e = text.find('e');
  std::string digits;
  for (const char c : text.substr(0, e)) {
    if (c != '.') {
      digits.push_back(c);
    }
  }
  int exponent = 0;
  const std::string_view exponent_text = text.substr(e + 1);
  std::from_chars(exponent_text.data() + (exponent_text.front() == '+' ? 1 : 0),
                  exponent_text.data() + exponent_text.size(), exponent);
  const int point = exponent + 1;  // digits d1d2... mean 0.d1d2... * 10^point
  const int count = static_cast<int>(digits.size());
  if (point <= -4 || point > 16) {
    out += digits.substr(0, 1);
    if (count > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exponent < 0 ? "e-" : "e+";
    const int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 10) {
      out += '0';
    }
    out += std::to_string(magnitude);
  } else if (point <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-point), '0');
    out += digits;
  } else if (point >= count) {
    out += digits;
    out.append(static_cast<std::size_t>(point - count), '0');
    out += ".0";
  } else {
    out += digits.substr(0, static_cast<std::size_t>(point));
    out += '.';
    out += digits.substr(static_cast<std::size_t>(point));
  }
  return out;
}

/// pickle_key_identity: a text equal for keys Python finds equal (True, 1
/// and 1.0 are one key; -0.0 and 0 too; a list stands for a tuple), nothing
/// for a NaN (never equal) or a map.
[[nodiscard]] inline auto pickle_key_identity(const Value& key) -> std::optional<std::string> {
  switch (key.kind()) {
    case ValueKind::kNull:
      return std::string("n");
    case ValueKind::kBool:
      return std::string(key.as_bool() ? "i1" : "i0");
    case ValueKind::kInt:
      return "i" + std::to_string(key.as_int());
    case ValueKind::kFloat: {
      const double number = key.as_double();
      if (number != number) {
        return std::nullopt;
      }
      constexpr double kTwo63 = 9223372036854775808.0;
      if (number >= -kTwo63 && number < kTwo63 &&
          static_cast<double>(static_cast<std::int64_t>(number)) == number) {
        return "i" + std::to_string(static_cast<std::int64_t>(number));
      }
      return "f" + std::to_string(std::bit_cast<std::uint64_t>(number));
    }
    case ValueKind::kString:
      return "s" + key.as_string();
    case ValueKind::kBytes:
      return "b" + key.as_string();
    case ValueKind::kList: {
      std::string out = "t";
      for (const Value& item : key.as_list()) {
        std::optional<std::string> part = pickle_key_identity(item);
        if (!part) {
          return std::nullopt;
        }
        out += std::to_string(part->size()) + ":" + *part;
      }
      return out;
    }
    default:
      return std::nullopt;
  }
}

/// PickleCallable: the data constructors the reader evaluates itself.
enum class PickleCallable : std::uint8_t {
  kNone,
  kCodecsEncode,  ///< _codecs.encode(str, 'latin1') -> bytes
  kBytes,         ///< builtins.bytes() / bytes(b)
  kBytearray,     ///< builtins.bytearray() / bytearray(b)
  kSet,           ///< builtins.set() / set(list)
  kFrozenSet,     ///< builtins.frozenset() / frozenset(list)
};

/// pickle_callable: the constructor that the global module.name names, or
/// kNone. `protocol`: the stream's protocol (__builtin__ is Python 2's name
/// for builtins, which CPython maps for protocols 0 to 2 only).
[[nodiscard]] constexpr auto pickle_callable(std::string_view module, std::string_view name,
                                             int protocol) noexcept -> PickleCallable {
  if (module == "_codecs") {
    return name == "encode" ? PickleCallable::kCodecsEncode : PickleCallable::kNone;
  }
  if (module != "builtins" && (module != "__builtin__" || protocol >= 3)) {
    return PickleCallable::kNone;
  }
  if (name == "bytes") {
    return PickleCallable::kBytes;
  }
  if (name == "bytearray") {
    return PickleCallable::kBytearray;
  }
  if (name == "set") {
    return PickleCallable::kSet;
  }
  if (name == "frozenset") {
    return PickleCallable::kFrozenSet;
  }
  return PickleCallable::kNone;
}

/// PickleReader: pickle_loads' stack machine. The stack, the memo and the
/// containers hold PickleRefs: small scalars inline, strings and containers
/// as indexes into arenas, so that the memo and the stack share objects as
/// Python does; the Value tree is built from them after STOP.
///
/// Memory is held to limits.max_decoded_bytes twice over: the machine's own
/// (every Ref pushed, memo entry, mark, container and string, taken before it
/// is made: DUP, GET and a REDUCE of set() or _codecs.encode can copy much
/// from a few bytes), and, apart, the tree built after STOP (a shared object
/// is copied each time it is reached: its slots and strings are taken each
/// time, before they are allocated).
class PickleReader {
 public:
  PickleReader(std::string_view input, const DecodeLimits& limits)
      : in_(input),
        limits_(limits),
        work_(limits.max_decoded_bytes),
        tree_(limits.max_decoded_bytes) {}

  [[nodiscard]] auto run() -> CodecResult<Value> {
    if (in_.empty()) {
      return CodecError(CodecErrc::kCorrupt, "pickle: the input is empty");
    }
    Ref root;
    for (;;) {
      if (pos_ >= in_.size()) {
        return CodecError(CodecErrc::kCorrupt, "pickle: at byte " + std::to_string(pos_) +
                                                   ": the input ends without STOP ('.')");
      }
      op_at_ = pos_;
      const auto op = static_cast<unsigned char>(in_[pos_++]);
      if (op == '.') {
        if (!opaque_) {
          if (stack_.size() <= fence()) {
            return underflow("STOP");
          }
          root = stack_.back();
        }
        break;
      }
      if (!(opaque_ ? skip(op) : step(op))) {
        return std::move(*error_);
      }
    }
    if (pos_ != in_.size()) {
      return CodecError(CodecErrc::kCorrupt, "pickle: at byte " + std::to_string(pos_) + ": " +
                                                 std::to_string(in_.size() - pos_) +
                                                 " bytes after STOP ('.')");
    }
    if (opaque_) {
      return Value::serialized(std::string(kPickleName), std::string(in_));
    }
    if (!tree_.take_values(1)) {
      return CodecError(CodecErrc::kTooLarge, "pickle: " + tree_.exceeded("a value"));
    }
    if (root.tag == Tag::kText || root.tag == Tag::kBytes) {
      std::string& text = texts_[static_cast<std::size_t>(root.bits)];
      if (text.size() > limits_.max_size) {
        return too_large_text();
      }
      if (!tree_.take(text.size())) {
        return CodecError(
            CodecErrc::kTooLarge,
            "pickle: " + tree_.exceeded("a string of " + std::to_string(text.size()) + " bytes"));
      }
      return root.tag == Tag::kText ? Value(std::move(text)) : Value::bytes(std::move(text));
    }
    Value out;
    switch (build(root, 0, out)) {
      case Built::kOk:
        return out;
      case Built::kOpaque:
        return Value::serialized(std::string(kPickleName), std::string(in_));
      case Built::kError:
        break;
    }
    return std::move(*error_);
  }

 private:
  /// Tag: what a Ref stands for.
  enum class Tag : std::uint8_t {
    kNone,
    kTrue,
    kFalse,
    kInt,        // bits: the int64
    kFloat,      // bits: the double's
    kText,       // bits: an index into texts_ (UTF-8)
    kBytes,      // bits: an index into texts_
    kContainer,  // bits: an index into containers_
  };
  /// Ref: one Python object.
  struct Ref {
    Tag tag = Tag::kNone;
    std::uint64_t bits = 0;
  };
  enum class Kind : std::uint8_t { kList, kTuple, kDict, kSet, kFrozenSet, kCallable };
  enum class Built : std::uint8_t { kOk, kOpaque, kError };

  struct Container {
    std::vector<Ref> items;  // a dict's are key, value, key, value...
    std::size_t height = 1;  // 1 + the tallest item seen so far (not updated for later changes)
    Kind kind = Kind::kList;
    PickleCallable callable = PickleCallable::kNone;  // kCallable: the type or function
    bool hashable = false;                            // can be a dict key or a set item
    bool open = false;  // on the path being built (a cycle when met again)
  };
  /// kMemoEntryCost: what a new memo index costs of the machine's budget
  /// (the hash node: its index, its Ref, the next pointer, a bucket).
  static constexpr std::size_t kMemoEntryCost =
      sizeof(std::uint64_t) + sizeof(Ref) + 2 * sizeof(void*);

  // --- errors ---------------------------------------------------------------

  auto fail(CodecErrc code, const std::string& what) -> bool {
    error_.emplace(code, "pickle: at byte " + std::to_string(op_at_) + ": " + what);
    return false;
  }
  auto corrupt(const std::string& what) -> bool { return fail(CodecErrc::kCorrupt, what); }
  [[nodiscard]] auto underflow(std::string_view opcode) -> CodecError {
    return CodecError(CodecErrc::kCorrupt, "pickle: at byte " + std::to_string(op_at_) + ": " +
                                               std::string(opcode) +
                                               " finds too few objects on the stack above the "
                                               "last MARK");
  }
  auto fail_underflow(std::string_view opcode) -> bool {
    error_.emplace(underflow(opcode));
    return false;
  }
  [[nodiscard]] auto too_large_text() const -> CodecError {
    return CodecError(CodecErrc::kTooLarge, "pickle: a string decodes to more than " +
                                                std::to_string(limits_.max_size) + " bytes");
  }
  /// take_work: `bytes` of the machine's memory, before they are allocated.
  auto take_work(std::size_t bytes) -> bool {
    if (work_.take(bytes)) {
      return true;
    }
    return fail(CodecErrc::kTooLarge,
                "the unpickler's stack, memo and objects would take more than max_decoded_bytes " +
                    std::to_string(work_.limit()));
  }

  // --- input ----------------------------------------------------------------

  /// line: the text up to the next '\n' (which is consumed).
  auto line(std::string_view opcode, std::string_view& out) -> bool {
    const std::size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) {
      return corrupt(std::string(opcode) + " has no end of line: the input is truncated");
    }
    out = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  /// fixed: the next `count` bytes (an opcode's fixed-size argument).
  auto fixed(std::size_t count, std::string_view opcode, std::string_view& out) -> bool {
    if (in_.size() - pos_ < count) {
      return corrupt(std::string(opcode) + " needs " + std::to_string(count) +
                     " bytes of argument, " + std::to_string(in_.size() - pos_) + " remain");
    }
    out = in_.substr(pos_, count);
    pos_ += count;
    return true;
  }
  [[nodiscard]] static auto little_endian(std::string_view bytes) noexcept -> std::uint64_t {
    std::uint64_t value = 0;
    for (std::size_t i = bytes.size(); i-- > 0;) {
      value = value << 8U | static_cast<unsigned char>(bytes[i]);
    }
    return value;
  }
  /// counted: a length of `width` bytes, then that many bytes (checked
  /// against what remains, then against max_size when `limited`).
  auto counted(std::size_t width, std::string_view opcode, bool limited, std::string_view& out)
      -> bool {
    std::string_view size_bytes;
    if (!fixed(width, opcode, size_bytes)) {
      return false;
    }
    const std::uint64_t size = little_endian(size_bytes);
    if (size > in_.size() - pos_) {
      return corrupt(std::string(opcode) + " declares " + std::to_string(size) + " bytes, " +
                     std::to_string(in_.size() - pos_) + " remain");
    }
    if (limited && size > limits_.max_size) {
      return fail(CodecErrc::kTooLarge, std::string(opcode) + " of " + std::to_string(size) +
                                            " bytes is over the limit of " +
                                            std::to_string(limits_.max_size));
    }
    out = in_.substr(pos_, static_cast<std::size_t>(size));
    pos_ += static_cast<std::size_t>(size);
    return true;
  }
  /// before_nul: the text up to its first NUL (where CPython's C string
  /// parsers stop).
  [[nodiscard]] static auto before_nul(std::string_view text) noexcept -> std::string_view {
    return text.substr(0, text.find('\0'));
  }

  // --- objects and the stack ----------------------------------------------------

  [[nodiscard]] auto fence() const noexcept -> std::size_t {
    return marks_.empty() ? 0 : marks_.back();
  }
  auto push(Ref ref) -> bool {
    if (!take_work(sizeof(Ref))) {
      return false;
    }
    stack_.push_back(ref);
    return true;
  }
  auto push_int(std::int64_t value) -> bool {
    return push(Ref{Tag::kInt, static_cast<std::uint64_t>(value)});
  }
  auto push_float(double value) -> bool {
    return push(Ref{Tag::kFloat, std::bit_cast<std::uint64_t>(value)});
  }
  auto push_bool(bool value) -> bool { return push(Ref{value ? Tag::kTrue : Tag::kFalse, 0}); }
  /// push_text: a str (`tag` kText, UTF-8) or bytes (kBytes), whose bytes
  /// the caller took with take_work before making it.
  auto push_text(Tag tag, std::string text) -> bool {
    if (!take_work(sizeof(std::string))) {
      return false;
    }
    texts_.push_back(std::move(text));
    return push(Ref{tag, texts_.size() - 1});
  }
  /// copy_text: push_text of a copy of `text`.
  auto copy_text(Tag tag, std::string_view text) -> bool {
    return take_work(text.size()) && push_text(tag, std::string(text));
  }
  auto push_container(Container container) -> bool {
    if (!take_work(sizeof(Container))) {
      return false;
    }
    containers_.push_back(std::move(container));
    return push(Ref{Tag::kContainer, containers_.size() - 1});
  }
  [[nodiscard]] auto container_of(Ref ref) -> Container* {
    return ref.tag == Tag::kContainer ? &containers_[static_cast<std::size_t>(ref.bits)] : nullptr;
  }
  [[nodiscard]] auto is_kind(Ref ref, Kind kind) -> bool {
    const Container* found = container_of(ref);
    return found != nullptr && found->kind == kind;
  }
  [[nodiscard]] auto height_of(Ref ref) -> std::size_t {
    const Container* found = container_of(ref);
    return found == nullptr || found->kind == Kind::kCallable ? 0 : found->height;
  }
  [[nodiscard]] auto hashable(Ref ref) -> bool {
    const Container* found = container_of(ref);
    return found == nullptr || found->hashable;
  }
  [[nodiscard]] auto text_of(Ref ref) const -> const std::string* {
    return ref.tag == Tag::kText ? &texts_[static_cast<std::size_t>(ref.bits)] : nullptr;
  }
  auto pop_mark(std::string_view opcode, std::size_t& mark) -> bool {
    if (marks_.empty()) {
      return corrupt(std::string(opcode) + " without a MARK");
    }
    mark = marks_.back();
    marks_.pop_back();
    return true;
  }
  /// add_items: appends stack_[from..] to the container `target`.
  auto add_items(std::size_t target, std::size_t from) -> bool {
    std::size_t height = containers_[target].height;
    for (std::size_t i = from; i < stack_.size(); ++i) {
      const std::size_t item = height_of(stack_[i]) + 1;
      height = item > height ? item : height;
    }
    Container& node = containers_[target];
    node.items.insert(node.items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from),
                      stack_.end());
    node.height = height;
    stack_.resize(from);
    if (height > limits_.max_depth) {
      return fail(CodecErrc::kTooDeep,
                  "containers nested deeper than " + std::to_string(limits_.max_depth));
    }
    return true;
  }
  /// container: a new container of stack_[from..], which leave the stack.
  auto container(Kind kind, std::size_t from) -> bool {
    if (!take_work(sizeof(Container))) {
      return false;
    }
    Container node;
    node.kind = kind;
    node.hashable = kind == Kind::kTuple || kind == Kind::kFrozenSet;
    if (kind == Kind::kTuple) {
      for (std::size_t i = from; i < stack_.size(); ++i) {
        node.hashable = node.hashable && hashable(stack_[i]);
      }
    }
    containers_.push_back(std::move(node));
    const std::size_t index = containers_.size() - 1;
    if (!add_items(index, from)) {
      return false;
    }
    return push(Ref{Tag::kContainer, index});
  }
  auto empty_container(Kind kind) -> bool {
    Container node;
    node.kind = kind;
    return push_container(std::move(node));
  }
  auto check_hashable(std::size_t from, std::size_t step) -> bool {
    for (std::size_t i = from; i < stack_.size(); i += step) {
      if (!hashable(stack_[i])) {
        return corrupt("a list, dict or set used as a dict key or set item (unhashable)");
      }
    }
    return true;
  }
  auto memo_put(std::uint64_t index, std::string_view opcode) -> bool {
    if (stack_.size() <= fence()) {
      return fail_underflow(opcode);
    }
    if (!memo_.contains(index) && !take_work(kMemoEntryCost)) {
      return false;
    }
    memo_[index] = stack_.back();
    return true;
  }
  auto memo_get(std::uint64_t index) -> bool {
    const auto found = memo_.find(index);
    if (found == memo_.end()) {
      return corrupt("GET of memo index " + std::to_string(index) + ", which was never PUT");
    }
    return push(found->second);
  }

  // --- text opcodes ---------------------------------------------------------

  auto load_int(std::string_view text) -> bool {
    std::int64_t value = 0;
    const std::string_view digits = before_nul(text);
    // strtol stops at a NUL; with no digits before it, its 0 stands.
    if (digits.empty() || pickle_c_long(digits, value)) {
      if (text.size() == 2 && (value == 0 || value == 1)) {
        return push_bool(value == 1);  // I01 / I00: protocol 0's booleans
      }
      return push_int(value);
    }
    switch (pickle_py_int(digits, 0, value)) {
      case PickleNumber::kOk:
        return push_int(value);
      case PickleNumber::kOutOfRange:
        return fail(CodecErrc::kTooLarge, "integer out of range: " + pickle_quote(digits));
      case PickleNumber::kInvalid:
        break;
    }
    return corrupt("INT argument " + pickle_quote(digits) + " is not an integer");
  }
  auto load_long(std::string_view text) -> bool {
    if (!text.empty() && text.back() == 'L') {
      text.remove_suffix(1);
    }
    std::int64_t value = 0;
    const std::string_view digits = before_nul(text);
    switch (pickle_py_int(digits, 0, value)) {
      case PickleNumber::kOk:
        return push_int(value);
      case PickleNumber::kOutOfRange:
        return fail(CodecErrc::kTooLarge, "integer out of range: " + pickle_quote(digits));
      case PickleNumber::kInvalid:
        break;
    }
    return corrupt("LONG argument " + pickle_quote(digits) + " is not an integer");
  }
  auto load_float(std::string_view text) -> bool {
    double value = 0;
    const std::string_view digits = before_nul(text);
    switch (pickle_py_float(digits, value)) {
      case PickleNumber::kOk:
        return push_float(value);
      case PickleNumber::kOutOfRange:
        return fail(CodecErrc::kTooLarge, "float out of range: " + pickle_quote(digits));
      case PickleNumber::kInvalid:
        break;
    }
    return corrupt("FLOAT argument " + pickle_quote(digits) + " is not a float");
  }
  auto memo_index(std::string_view text, std::string_view opcode, std::uint64_t& out) -> bool {
    std::int64_t value = 0;
    if (pickle_py_int(before_nul(text), 10, value) != PickleNumber::kOk || value < 0) {
      return corrupt(std::string(opcode) + " argument " + pickle_quote(text) +
                     " is not a memo index");
    }
    out = static_cast<std::uint64_t>(value);
    return true;
  }
  /// load_string: STRING, a quoted Python 2 str with its escapes.
  auto load_string(std::string_view text) -> bool {
    if (text.size() < 2 || text.front() != text.back() ||
        (text.front() != '\'' && text.front() != '"')) {
      return corrupt("STRING argument is not quoted");
    }
    text = text.substr(1, text.size() - 2);
    if (!take_work(text.size())) {  // escapes only shorten it
      return false;
    }
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\\') {
        out.push_back(text[i]);
        continue;
      }
      if (++i == text.size()) {
        return corrupt("STRING ends with a lone backslash");
      }
      const char c = text[i];
      switch (c) {
        case '\\':
        case '\'':
        case '"':
          out.push_back(c);
          break;
        case 'a':
          out.push_back('\a');
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
        case 'v':
          out.push_back('\v');
          break;
        case 'x': {
          if (i + 2 >= text.size() || pickle_digit(text[i + 1]) >= 16 ||
              pickle_digit(text[i + 2]) >= 16) {
            return corrupt("STRING has a \\x escape without two hex digits");
          }
          out.push_back(
              static_cast<char>(pickle_digit(text[i + 1]) * 16 + pickle_digit(text[i + 2])));
          i += 2;
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            unsigned value = static_cast<unsigned>(c - '0');
            for (int more = 0;
                 more < 2 && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '7';
                 ++more) {
              value = value * 8 + static_cast<unsigned>(text[++i] - '0');
            }
            out.push_back(static_cast<char>(value & 0xffU));
          } else {
            out.push_back('\\');
            out.push_back(c);
          }
      }
    }
    return push_text(Tag::kBytes, std::move(out));
  }
  /// load_unicode: UNICODE, raw-unicode-escape text: bytes are Latin-1
  /// characters, \uXXXX and \UXXXXXXXX escapes (after an odd number of
  /// backslashes) code points.
  auto load_unicode(std::string_view text) -> bool {
    if (!take_work(text.size())) {
      return false;
    }
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c != '\\' || i + 1 == text.size() || (text[i + 1] != 'u' && text[i + 1] != 'U')) {
        pickle_append_utf8(out, c);
        if (c == '\\' && i + 1 < text.size()) {
          pickle_append_utf8(out, static_cast<unsigned char>(text[++i]));
        }
        continue;
      }
      const std::size_t count = text[i + 1] == 'u' ? 4 : 8;
      char32_t code_point = 0;
      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t at = i + 2 + k;
        if (at >= text.size() || pickle_digit(text[at]) >= 16) {
          return corrupt("UNICODE has a truncated \\u or \\U escape");
        }
        code_point = code_point << 4U | static_cast<char32_t>(pickle_digit(text[at]));
      }
      if (code_point > 0x10ffff) {
        return corrupt("UNICODE escapes a code point above U+10FFFF");
      }
      if (code_point >= 0xd800 && code_point <= 0xdfff) {
        opaque_ = true;  // a lone surrogate: no UTF-8 text holds it
        return true;
      }
      pickle_append_utf8(out, code_point);
      i += 1 + count;
    }
    if (out.size() > limits_.max_size) {
      return fail(CodecErrc::kTooLarge,
                  "UNICODE decodes to more than " + std::to_string(limits_.max_size) + " bytes");
    }
    // Latin-1 above U+007F takes two bytes of UTF-8: at most twice the text.
    if (out.size() > text.size() && !take_work(out.size() - text.size())) {
      return false;
    }
    return push_text(Tag::kText, std::move(out));
  }
  /// load_utf8: the payload of BINUNICODE and its kin (UTF-8, surrogates
  /// allowed as Python writes them).
  auto load_utf8(std::string_view text, std::string_view opcode) -> bool {
    bool surrogate = false;
    for (std::size_t i = 0; i < text.size();) {
      char32_t code_point = 0;
      const std::size_t length = pickle_utf8_next(text, i, code_point, true);
      if (length == 0) {
        return corrupt(std::string(opcode) + " holds invalid UTF-8 at offset " + std::to_string(i) +
                       " of its text");
      }
      surrogate = surrogate || (code_point >= 0xd800 && code_point <= 0xdfff);
      i += length;
    }
    if (surrogate) {
      opaque_ = true;
      return true;
    }
    return copy_text(Tag::kText, text);
  }

  // --- globals and calls ------------------------------------------------------

  auto global(PickleCallable callable) -> bool {
    if (callable == PickleCallable::kNone) {
      opaque_ = true;  // would import a module: never
      return true;
    }
    Container node;
    node.kind = Kind::kCallable;
    node.callable = callable;
    node.hashable = true;
    return push_container(std::move(node));
  }
  auto stack_global() -> bool {
    if (stack_.size() < fence() + 2) {
      return fail_underflow("STACK_GLOBAL");
    }
    const std::string* name = text_of(stack_.back());
    const std::string* module = text_of(stack_[stack_.size() - 2]);
    if (name == nullptr || module == nullptr) {
      return corrupt("STACK_GLOBAL needs two str");
    }
    const PickleCallable callable = pickle_callable(*module, *name, protocol_);
    stack_.resize(stack_.size() - 2);
    return global(callable);
  }
  /// reduce: REDUCE of one of the constructors PickleCallable names, on
  /// arguments it knows; anything else leaves the input opaque.
  auto reduce() -> bool {
    if (stack_.size() < fence() + 2) {
      return fail_underflow("REDUCE");
    }
    const Ref args_ref = stack_.back();
    const Container* callee = container_of(stack_[stack_.size() - 2]);
    if (callee == nullptr || callee->kind != Kind::kCallable) {
      opaque_ = true;  // a call: never made
      return true;
    }
    const PickleCallable callable = callee->callable;
    if (!is_kind(args_ref, Kind::kTuple)) {
      return corrupt("REDUCE arguments are not a tuple");
    }
    const std::vector<Ref> args = container_of(args_ref)->items;
    stack_.resize(stack_.size() - 2);
    switch (callable) {
      case PickleCallable::kCodecsEncode: {
        const std::string* text = args.size() == 2 ? text_of(args[0]) : nullptr;
        const std::string* encoding = args.size() == 2 ? text_of(args[1]) : nullptr;
        if (text == nullptr || encoding == nullptr || *encoding != "latin1") {
          break;
        }
        if (!take_work(text->size())) {  // one byte for each character
          return false;
        }
        std::string bytes;
        for (std::size_t i = 0; i < text->size();) {
          char32_t code_point = 0;
          i += pickle_utf8_next(*text, i, code_point, false);
          if (code_point > 0xff) {
            return corrupt("_codecs.encode(..., 'latin1') of a character above U+00FF");
          }
          bytes.push_back(static_cast<char>(code_point));
        }
        return push_text(Tag::kBytes, std::move(bytes));
      }
      case PickleCallable::kBytes:
      case PickleCallable::kBytearray:
        if (args.empty()) {
          return push_text(Tag::kBytes, std::string());
        }
        if (args.size() == 1 && args[0].tag == Tag::kBytes) {
          return push(args[0]);  // bytes are immutable: the same object will do
        }
        break;
      case PickleCallable::kSet:
      case PickleCallable::kFrozenSet: {
        const Kind kind = callable == PickleCallable::kSet ? Kind::kSet : Kind::kFrozenSet;
        const std::size_t from = stack_.size();
        if (args.size() == 1) {
          const Container* items = container_of(args[0]);
          if (items == nullptr || items->kind == Kind::kDict || items->kind == Kind::kCallable) {
            break;
          }
          if (!take_work(items->items.size() * sizeof(Ref))) {
            return false;
          }
          const std::vector<Ref> copy = items->items;
          stack_.insert(stack_.end(), copy.begin(), copy.end());
          if (!check_hashable(from, 1)) {
            return false;
          }
        } else if (!args.empty()) {
          break;
        }
        return container(kind, from);
      }
      case PickleCallable::kNone:
        break;
    }
    opaque_ = true;
    return true;
  }

  // --- one opcode ---------------------------------------------------------------

  /// step: runs the opcode `op`, whose arguments start at pos_.
  auto step(unsigned char op) -> bool {
    std::string_view arg;
    std::size_t mark = 0;
    switch (op) {
      case '(':  // MARK
        if (!take_work(sizeof(std::size_t))) {
          return false;
        }
        marks_.push_back(stack_.size());
        return true;
      case '0':  // POP: the top object, or the MARK right on top
        if (!marks_.empty() && marks_.back() == stack_.size()) {
          marks_.pop_back();
        } else if (stack_.size() <= fence()) {
          return fail_underflow("POP");
        } else {
          stack_.pop_back();
        }
        return true;
      case '1':  // POP_MARK
        if (!pop_mark("POP_MARK", mark)) {
          return false;
        }
        stack_.resize(mark);
        return true;
      case '2':  // DUP
        if (stack_.size() <= fence()) {
          return fail_underflow("DUP");
        }
        return push(stack_.back());
      case 'N':
        return push(Ref{Tag::kNone, 0});
      case 0x88:  // NEWTRUE
        return push_bool(true);
      case 0x89:  // NEWFALSE
        return push_bool(false);
      case 'I':
        return line("INT", arg) && (arg.empty() ? corrupt("INT without digits") : load_int(arg));
      case 'L':
        return line("LONG", arg) && (arg.empty() ? corrupt("LONG without digits") : load_long(arg));
      case 'F':
        return line("FLOAT", arg) &&
               (arg.empty() ? corrupt("FLOAT without digits") : load_float(arg));
      case 'J': {  // BININT: 4 bytes, signed
        if (!fixed(4, "BININT", arg)) {
          return false;
        }
        const auto bits = static_cast<std::uint32_t>(little_endian(arg));
        return push_int(static_cast<std::int32_t>(bits));
      }
      case 'K':  // BININT1
        return fixed(1, "BININT1", arg) && push_int(static_cast<std::int64_t>(little_endian(arg)));
      case 'M':  // BININT2
        return fixed(2, "BININT2", arg) && push_int(static_cast<std::int64_t>(little_endian(arg)));
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4
        const std::size_t width = op == 0x8a ? 1 : 4;
        std::string_view size_bytes;
        if (!fixed(width, "LONG1/LONG4", size_bytes)) {
          return false;
        }
        const std::uint64_t size = little_endian(size_bytes);
        if (width == 4 && size >= 0x80000000U) {
          return corrupt("LONG4 has a negative byte count");
        }
        if (size > in_.size() - pos_) {
          return corrupt("LONG1/LONG4 declares " + std::to_string(size) + " bytes, " +
                         std::to_string(in_.size() - pos_) + " remain");
        }
        const std::string_view bytes = in_.substr(pos_, static_cast<std::size_t>(size));
        pos_ += static_cast<std::size_t>(size);
        return load_twos_complement(bytes);
      }
      case 'G': {  // BINFLOAT: 8 bytes big-endian
        if (!fixed(8, "BINFLOAT", arg)) {
          return false;
        }
        std::uint64_t bits = 0;
        for (const char c : arg) {
          bits = bits << 8U | static_cast<unsigned char>(c);
        }
        return push_float(std::bit_cast<double>(bits));
      }
      case 'S':
        return line("STRING", arg) && load_string(arg);
      case 'T':  // BINSTRING
        return counted(4, "BINSTRING", true, arg) && copy_text(Tag::kBytes, arg);
      case 'U':  // SHORT_BINSTRING
        return counted(1, "SHORT_BINSTRING", true, arg) && copy_text(Tag::kBytes, arg);
      case 'V':
        return line("UNICODE", arg) && load_unicode(arg);
      case 'X':
        return counted(4, "BINUNICODE", true, arg) && load_utf8(arg, "BINUNICODE");
      case 0x8c:
        return counted(1, "SHORT_BINUNICODE", true, arg) && load_utf8(arg, "SHORT_BINUNICODE");
      case 0x8d:
        return counted(8, "BINUNICODE8", true, arg) && load_utf8(arg, "BINUNICODE8");
      case 'B':
        return counted(4, "BINBYTES", true, arg) && copy_text(Tag::kBytes, arg);
      case 'C':
        return counted(1, "SHORT_BINBYTES", true, arg) && copy_text(Tag::kBytes, arg);
      case 0x8e:
        return counted(8, "BINBYTES8", true, arg) && copy_text(Tag::kBytes, arg);
      case 0x96:
        return counted(8, "BYTEARRAY8", true, arg) && copy_text(Tag::kBytes, arg);
      case ']':
        return empty_container(Kind::kList);
      case '}':
        return empty_container(Kind::kDict);
      case 0x8f:  // EMPTY_SET
        return empty_container(Kind::kSet);
      case ')':  // EMPTY_TUPLE
        return container(Kind::kTuple, stack_.size());
      case 0x85:  // TUPLE1..3
      case 0x86:
      case 0x87: {
        const std::size_t count = static_cast<std::size_t>(op - 0x84);
        if (stack_.size() < count || stack_.size() - count < fence()) {
          return fail_underflow("TUPLE1/2/3");
        }
        return container(Kind::kTuple, stack_.size() - count);
      }
      case 't':
        return pop_mark("TUPLE", mark) && container(Kind::kTuple, mark);
      case 'l':
        return pop_mark("LIST", mark) && container(Kind::kList, mark);
      case 0x91:  // FROZENSET
        return pop_mark("FROZENSET", mark) && check_hashable(mark, 1) &&
               container(Kind::kFrozenSet, mark);
      case 'd':  // DICT
        if (!pop_mark("DICT", mark)) {
          return false;
        }
        if ((stack_.size() - mark) % 2 != 0) {
          return corrupt("DICT of an odd number of objects");
        }
        return check_hashable(mark, 2) && container(Kind::kDict, mark);
      case 'a':  // APPEND
        if (stack_.size() < fence() + 2) {
          return fail_underflow("APPEND");
        }
        return extend(stack_.size() - 1, Kind::kList, "APPEND");
      case 'e':  // APPENDS
        return pop_mark("APPENDS", mark) && extend(mark, Kind::kList, "APPENDS");
      case 0x90:  // ADDITEMS
        return pop_mark("ADDITEMS", mark) && extend(mark, Kind::kSet, "ADDITEMS");
      case 's':  // SETITEM
        if (stack_.size() < fence() + 3) {
          return fail_underflow("SETITEM");
        }
        return extend(stack_.size() - 2, Kind::kDict, "SETITEM");
      case 'u':  // SETITEMS
        return pop_mark("SETITEMS", mark) && extend(mark, Kind::kDict, "SETITEMS");
      case 'p': {
        std::uint64_t index = 0;
        return line("PUT", arg) && memo_index(arg, "PUT", index) && memo_put(index, "PUT");
      }
      case 'q':
        return fixed(1, "BINPUT", arg) && memo_put(little_endian(arg), "BINPUT");
      case 'r':
        return fixed(4, "LONG_BINPUT", arg) && memo_put(little_endian(arg), "LONG_BINPUT");
      case 0x94:  // MEMOIZE
        return memo_put(memo_.size(), "MEMOIZE");
      case 'g': {
        std::uint64_t index = 0;
        return line("GET", arg) && memo_index(arg, "GET", index) && memo_get(index);
      }
      case 'h':
        return fixed(1, "BINGET", arg) && memo_get(little_endian(arg));
      case 'j':
        return fixed(4, "LONG_BINGET", arg) && memo_get(little_endian(arg));
      case 0x80:  // PROTO
        if (!fixed(1, "PROTO", arg)) {
          return false;
        }
        protocol_ = static_cast<unsigned char>(arg[0]);
        if (protocol_ > kPickleHighestProtocol) {
          return fail(CodecErrc::kUnsupported,
                      "pickle protocol " + std::to_string(protocol_) + " is newer than 5");
        }
        return true;
      case 0x95:  // FRAME: only a length, checked against the input
        return frame();
      case 'c': {  // GLOBAL
        std::string_view module;
        std::string_view name;
        if (!line("GLOBAL", module) || !line("GLOBAL", name)) {
          return false;
        }
        if (module.empty() || name.empty()) {
          return corrupt("GLOBAL with an empty module or name");
        }
        return global(pickle_callable(module, name, protocol_));
      }
      case 0x93:
        return stack_global();
      case 'R':
        return reduce();
      case 'P':   // PERSID
      case 'Q':   // BINPERSID
      case 'b':   // BUILD
      case 'i':   // INST
      case 'o':   // OBJ
      case 0x81:  // NEWOBJ
      case 0x82:  // EXT1
      case 0x83:  // EXT2
      case 0x84:  // EXT4
      case 0x92:  // NEWOBJ_EX
      case 0x97:  // NEXT_BUFFER
      case 0x98:  // READONLY_BUFFER
        opaque_ = true;
        return skip(op);
      default:
        return corrupt("unknown opcode 0x" + pickle_hex(op, 2));
    }
  }

  /// extend: APPEND(S), SETITEM(S), ADDITEMS: stack_[from..] go into the
  /// object at stack_[from - 1], which must be of kind `kind`.
  auto extend(std::size_t from, Kind kind, std::string_view opcode) -> bool {
    if (from <= fence()) {
      return fail_underflow(opcode);
    }
    if (from == stack_.size()) {
      return true;
    }
    const Ref target = stack_[from - 1];
    if (!is_kind(target, kind)) {
      return corrupt(std::string(opcode) + " onto an object that is not a " +
                     (kind == Kind::kList   ? "list"
                      : kind == Kind::kDict ? "dict"
                                            : "set"));
    }
    if (kind == Kind::kDict) {
      if ((stack_.size() - from) % 2 != 0) {
        return corrupt(std::string(opcode) + " of an odd number of objects");
      }
      if (!check_hashable(from, 2)) {
        return false;
      }
    } else if (kind == Kind::kSet && !check_hashable(from, 1)) {
      return false;
    }
    return add_items(static_cast<std::size_t>(target.bits), from);
  }

  auto load_twos_complement(std::string_view bytes) -> bool {
    if (bytes.empty()) {
      return push_int(0);
    }
    const bool negative = (static_cast<unsigned char>(bytes.back()) & 0x80U) != 0;
    const unsigned char extension = negative ? 0xffU : 0x00U;
    std::size_t size = bytes.size();
    // Bytes above the eighth must only extend the sign.
    while (size > 8 && static_cast<unsigned char>(bytes[size - 1]) == extension) {
      --size;
    }
    std::uint64_t bits = little_endian(bytes.substr(0, size > 8 ? 8 : size));
    if (size > 8 || (size == 8 && ((bits >> 63U) != 0) != negative)) {
      return fail(CodecErrc::kTooLarge,
                  "integer out of range: LONG of " + std::to_string(bytes.size()) + " bytes");
    }
    if (negative && size < 8) {
      bits |= ~std::uint64_t{0} << (8 * size);
    }
    return push_int(static_cast<std::int64_t>(bits));
  }

  auto frame() -> bool {
    std::string_view size_bytes;
    if (!fixed(8, "FRAME", size_bytes)) {
      return false;
    }
    const std::uint64_t size = little_endian(size_bytes);
    if (size > in_.size() - pos_) {
      return corrupt("FRAME of " + std::to_string(size) + " bytes, " +
                     std::to_string(in_.size() - pos_) + " remain");
    }
    return true;
  }

  /// skip: the opcode `op`'s arguments, checked for form only (the input is
  /// already known to be opaque).
  auto skip(unsigned char op) -> bool {
    std::string_view arg;
    switch (op) {
      case 'F':
      case 'I':
      case 'L':
      case 'P':
      case 'S':
      case 'V':
      case 'g':
      case 'p':
        return line("a text opcode", arg);
      case 'c':
      case 'i':
        return line("GLOBAL/INST", arg) && line("GLOBAL/INST", arg);
      case 'K':
      case 'h':
      case 'q':
      case 0x82:
        return fixed(1, "an opcode", arg);
      case 'M':
      case 0x83:
        return fixed(2, "an opcode", arg);
      case 'J':
      case 'j':
      case 'r':
      case 0x84:
        return fixed(4, "an opcode", arg);
      case 'G':
        return fixed(8, "BINFLOAT", arg);
      case 0x80:
        if (!fixed(1, "PROTO", arg)) {
          return false;
        }
        if (static_cast<unsigned char>(arg[0]) > kPickleHighestProtocol) {
          return fail(CodecErrc::kUnsupported,
                      "pickle protocol " + std::to_string(static_cast<unsigned char>(arg[0])) +
                          " is newer than 5");
        }
        return true;
      case 0x95:
        return frame();
      case 'U':
      case 'C':
      case 0x8a:
      case 0x8c:
        return counted(1, "a counted opcode", false, arg);
      case 'T':
      case 'X':
      case 'B':
        return counted(4, "a counted opcode", false, arg);
      case 0x8b: {
        std::string_view size_bytes;
        if (!fixed(4, "LONG4", size_bytes)) {
          return false;
        }
        if (little_endian(size_bytes) >= 0x80000000U) {
          return corrupt("LONG4 has a negative byte count");
        }
        pos_ -= 4;
        return counted(4, "LONG4", false, arg);
      }
      case 0x8d:
      case 0x8e:
      case 0x96:
        return counted(8, "a counted opcode", false, arg);
      case '(':
      case '0':
      case '1':
      case '2':
      case 'N':
      case 'Q':
      case 'R':
      case 'a':
      case 'b':
      case 'd':
      case '}':
      case 'e':
      case 'l':
      case ']':
      case 'o':
      case 's':
      case 't':
      case ')':
      case 'u':
      case 0x81:
      case 0x85:
      case 0x86:
      case 0x87:
      case 0x88:
      case 0x89:
      case 0x8f:
      case 0x90:
      case 0x91:
      case 0x92:
      case 0x93:
      case 0x94:
      case 0x97:
      case 0x98:
        return true;
      default:
        return corrupt("unknown opcode 0x" + pickle_hex(op, 2));
    }
  }

  // --- the Value tree -----------------------------------------------------------

  /// build: the Value of `ref`, a container's item at nesting `depth`.
  /// Shared objects are copied; a container met again on its own path is a
  /// cycle.
  auto build(Ref ref, std::size_t depth, Value& out) -> Built {
    switch (ref.tag) {
      case Tag::kNone:
        out = Value();
        return Built::kOk;
      case Tag::kTrue:
      case Tag::kFalse:
        out = Value(ref.tag == Tag::kTrue);
        return Built::kOk;
      case Tag::kInt:
        out = Value(static_cast<std::int64_t>(ref.bits));
        return Built::kOk;
      case Tag::kFloat:
        out = Value(std::bit_cast<double>(ref.bits));
        return Built::kOk;
      case Tag::kText:
      case Tag::kBytes: {
        const std::string& text = texts_[static_cast<std::size_t>(ref.bits)];
        if (!tree_.take(text.size())) {
          return too_large_tree("a string of " + std::to_string(text.size()) + " bytes");
        }
        out = ref.tag == Tag::kText ? Value(text) : Value::bytes(text);
        return Built::kOk;
      }
      case Tag::kContainer:
        break;
    }
    const std::size_t index = static_cast<std::size_t>(ref.bits);
    if (containers_[index].kind == Kind::kCallable || containers_[index].open) {
      return Built::kOpaque;  // a bare type or function, or a container in itself
    }
    if (depth + 1 > limits_.max_depth) {
      error_.emplace(CodecErrc::kTooDeep,
                     "pickle: containers nested deeper than " + std::to_string(limits_.max_depth));
      return Built::kError;
    }
    containers_[index].open = true;
    const Kind kind = containers_[index].kind;
    const bool is_dict = kind == Kind::kDict;
    // Python keeps one of equal dict keys (the first, with the last value)
    // and of equal set items; CPython never writes such duplicates.
    const bool is_set = kind == Kind::kSet || kind == Kind::kFrozenSet;
    const std::size_t count = containers_[index].items.size();
    if (is_dict ? !tree_.take_entries(count / 2) : !tree_.take_values(count)) {
      containers_[index].open = false;
      return too_large_tree(std::string(is_dict ? "a dict of " : "a list of ") +
                            std::to_string(is_dict ? count / 2 : count) + " items");
    }
    Value::List list;
    Value::Map map;
    if (is_dict) {
      map.reserve(count / 2);
    } else {
      list.reserve(count);
    }
    std::unordered_map<std::string, std::size_t> seen;
    std::size_t slot = 0;  // the map entry the next value goes to
    Built status = Built::kOk;
    for (std::size_t i = 0; i < count && status == Built::kOk; ++i) {
      Value item;
      status = build(containers_[index].items[i], depth + 1, item);
      if (status != Built::kOk) {
        break;
      }
      if (is_dict && i % 2 == 1) {
        map[slot].second = std::move(item);
        continue;
      }
      if (is_dict || is_set) {
        std::optional<std::string> identity = pickle_key_identity(item);
        if (identity) {
          const auto [found, fresh] =
              seen.emplace(std::move(*identity), is_dict ? map.size() : list.size());
          if (!fresh) {
            slot = found->second;
            continue;  // a set item already there, or a dict key whose value is replaced
          }
        }
      }
      if (is_dict) {
        slot = map.size();
        map.emplace_back(std::move(item), Value());
      } else {
        list.push_back(std::move(item));
      }
    }
    containers_[index].open = false;
    if (status == Built::kOk) {
      out = is_dict ? Value::map(std::move(map)) : Value::list(std::move(list));
    }
    return status;
  }
  /// too_large_tree: the error when `what` does not fit in the tree's budget.
  auto too_large_tree(const std::string& what) -> Built {
    error_.emplace(CodecErrc::kTooLarge,
                   "pickle: " + tree_.exceeded(what) + " (a shared object is copied each time)");
    return Built::kError;
  }

  std::string_view in_;
  DecodeLimits limits_;
  std::size_t pos_ = 0;
  std::size_t op_at_ = 0;
  int protocol_ = 0;
  bool opaque_ = false;
  std::vector<Ref> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Ref> memo_;
  std::vector<std::string> texts_;
  std::vector<Container> containers_;
  DecodeBudget work_;
  DecodeBudget tree_;
  std::optional<CodecError> error_;
};

/// PickleWriter: pickle_dumps. Mirrors CPython's C pickler: its memo (which
/// objects are one object: see pickle_dumps), its batches and its frames.
class PickleWriter {
 public:
  explicit PickleWriter(int protocol) : protocol_(protocol) {}

  [[nodiscard]] auto dump(const Value& value) -> CodecResult<std::string> {
    if (protocol_ >= 2) {
      out_.push_back('\x80');
      out_.push_back(static_cast<char>(protocol_));
      framing_ = protocol_ >= 4;
    }
    if (!save(value, 0, false)) {
      return std::move(*error_);
    }
    write(".");
    commit_frame();
    return std::move(out_);
  }

 private:
  static constexpr std::size_t kFrameTarget = 64 * 1024;  // CPython's FRAME_SIZE_TARGET
  static constexpr std::size_t kFrameMin = 4;             // FRAME_SIZE_MIN
  static constexpr std::size_t kFrameHeader = 9;
  static constexpr std::size_t kBatch = 1000;  // BATCHSIZE
  static constexpr std::size_t kMaxDepth = DecodeLimits{}.max_depth;

  auto fail(const std::string& what) -> bool {
    error_.emplace(CodecErrc::kNotEncodable, "pickle: " + what);
    return false;
  }

  // --- output and frames --------------------------------------------------------

  void write(std::string_view data) {
    if (framing_ && !frame_start_) {
      frame_start_ = out_.size();
      out_.append(kFrameHeader, '\0');
    }
    out_.append(data);
  }
  void commit_frame() {
    if (!framing_ || !frame_start_) {
      return;
    }
    const std::size_t start = *frame_start_;
    const std::size_t length = out_.size() - start - kFrameHeader;
    if (length >= kFrameMin) {
      out_[start] = '\x95';
      for (std::size_t i = 0; i < 8; ++i) {
        out_[start + 1 + i] =
            static_cast<char>(static_cast<std::uint64_t>(length) >> (8 * i) & 0xffU);
      }
    } else {
      out_.erase(start, kFrameHeader);
    }
    frame_start_.reset();
  }
  /// boundary: before each object, a frame of 64 KiB or more is closed.
  void boundary() {
    if (framing_ && frame_start_ && out_.size() - *frame_start_ - kFrameHeader >= kFrameTarget) {
      commit_frame();
    }
  }
  /// write_payload: an opcode with its str or bytes data; data of 64 KiB or
  /// more goes outside any frame.
  void write_payload(std::string_view header, std::string_view data) {
    if (data.size() >= kFrameTarget) {
      commit_frame();
      const bool framing = framing_;
      framing_ = false;
      write(header);
      write(data);
      framing_ = framing;
      return;
    }
    std::string joined(header);
    joined.append(data);
    write(joined);
  }
  [[nodiscard]] static auto le(std::uint64_t value, std::size_t width) -> std::string {
    std::string out;
    for (std::size_t i = 0; i < width; ++i) {
      out.push_back(static_cast<char>(value >> (8 * i) & 0xffU));
    }
    return out;
  }
  /// sized: the opcode for a payload of `size` bytes: `short_op` and 1 byte
  /// under 256 (when given), `op4` and 4 bytes, or `op8` and 8.
  [[nodiscard]] static auto sized(std::size_t size, char short_op, char op4, char op8)
      -> std::string {
    if (short_op != '\0' && size < 256) {
      return std::string(1, short_op) + le(size, 1);
    }
    if (size <= 0xffffffffU || op8 == '\0') {
      return std::string(1, op4) + le(size, 4);
    }
    return std::string(1, op8) + le(size, 8);
  }

  // --- the memo -----------------------------------------------------------------

  /// memo_put: records the object just written (under `identity`, when it is
  /// one Python shares) and writes PUT/BINPUT/LONG_BINPUT/MEMOIZE.
  void memo_put(const std::string* identity) {
    const std::size_t index = memo_size_++;
    if (identity != nullptr) {
      shared_.emplace(*identity, index);
    }
    if (protocol_ >= 4) {
      write("\x94");
    } else if (protocol_ == 0) {
      write("p" + std::to_string(index) + "\n");
    } else if (index < 256) {
      write("q" + le(index, 1));
    } else {
      write("r" + le(index, 4));
    }
  }
  /// memo_get: writes GET of the shared object `identity` when it was
  /// written before.
  auto memo_get(const std::string& identity) -> bool {
    const auto found = shared_.find(identity);
    if (found == shared_.end()) {
      return false;
    }
    const std::size_t index = found->second;
    if (protocol_ == 0) {
      write("g" + std::to_string(index) + "\n");
    } else if (index < 256) {
      write("h" + le(index, 1));
    } else {
      write("j" + le(index, 4));
    }
    return true;
  }

  // --- objects ------------------------------------------------------------------

  auto save(const Value& value, std::size_t depth, bool as_key) -> bool {
    boundary();
    switch (value.kind()) {
      case ValueKind::kNull:
        write("N");
        return true;
      case ValueKind::kBool:
        if (protocol_ >= 2) {
          write(value.as_bool() ? "\x88" : "\x89");
        } else {
          write(value.as_bool() ? "I01\n" : "I00\n");
        }
        return true;
      case ValueKind::kInt:
        save_int(value.as_int());
        return true;
      case ValueKind::kFloat:
        if (protocol_ == 0) {
          write("F" + pickle_float_repr(value.as_double()) + "\n");
        } else {
          const auto bits = std::bit_cast<std::uint64_t>(value.as_double());
          std::string out = "G";
          for (int shift = 56; shift >= 0; shift -= 8) {
            out.push_back(static_cast<char>(bits >> static_cast<unsigned>(shift) & 0xffU));
          }
          write(out);
        }
        return true;
      case ValueKind::kString:
        return save_str(value.as_string(), as_key);
      case ValueKind::kBytes:
        return save_bytes(value.as_string());
      case ValueKind::kList:
        return save_list(value.as_list(), depth);
      case ValueKind::kMap:
        return save_dict(value.as_map(), depth);
      case ValueKind::kSerialized:
        return fail(value.as_serialized().format == kPickleName
                        ? "a serialized pickle can only be written whole, not inside a container"
                        : "a serialized " + value.as_serialized().format +
                              " value has no pickle form");
    }
    return fail("a value of an unknown kind");
  }

  void save_int(std::int64_t number) {
    if (number >= std::numeric_limits<std::int32_t>::min() &&
        number <= std::numeric_limits<std::int32_t>::max()) {
      if (protocol_ == 0) {
        write("I" + std::to_string(number) + "\n");
      } else if (number >= 0 && number <= 0xff) {
        write("K" + le(static_cast<std::uint64_t>(number), 1));
      } else if (number >= 0 && number <= 0xffff) {
        write("M" + le(static_cast<std::uint64_t>(number), 2));
      } else {
        write("J" + le(static_cast<std::uint32_t>(static_cast<std::int32_t>(number)), 4));
      }
      return;
    }
    if (protocol_ < 2) {
      write("L" + std::to_string(number) + "L\n");
      return;
    }
    // LONG1: two's complement, little-endian, as few bytes as keep the sign.
    const auto bits = static_cast<std::uint64_t>(number);
    std::size_t size = 8;
    while (size > 1) {
      const std::uint64_t top = bits >> (8 * (size - 1)) & 0xffU;
      const std::uint64_t next_sign = bits >> (8 * (size - 1) - 1) & 1U;
      if ((top == 0 && next_sign == 0) || (top == 0xff && next_sign == 1)) {
        --size;
      } else {
        break;
      }
    }
    write("\x8a" + le(size, 1) + le(bits, size));
  }

  /// save_str: `utf8` as a Python str. Python shares the empty str and the
  /// one-character strs below U+0100, and (as json.loads builds them) equal
  /// dict keys.
  auto save_str(std::string_view utf8, bool as_key) -> bool {
    std::size_t characters = 0;
    char32_t first = 0;
    for (std::size_t i = 0; i < utf8.size(); ++characters) {
      char32_t code_point = 0;
      const std::size_t length = pickle_utf8_next(utf8, i, code_point, false);
      if (length == 0) {
        return fail("a string that is not UTF-8 (at byte " + std::to_string(i) + ")");
      }
      first = i == 0 ? code_point : first;
      i += length;
    }
    std::string identity;
    if (characters == 0 || (characters == 1 && first < 0x100)) {
      identity = "c" + std::string(utf8);  // a CPython singleton
    } else if (as_key) {
      identity = "k" + std::string(utf8);  // json's key memo
    }
    if (!identity.empty() && memo_get(identity)) {
      return true;
    }
    write_str(utf8);
    memo_put(identity.empty() ? nullptr : &identity);
    return true;
  }
  /// write_str: the opcode for the (valid UTF-8) str `utf8`.
  void write_str(std::string_view utf8) {
    if (protocol_ >= 1) {
      write_payload(protocol_ >= 4 ? sized(utf8.size(), '\x8c', 'X', '\x8d')
                                   : sized(utf8.size(), '\0', 'X', '\0'),
                    utf8);
      return;
    }
    // Protocol 0: raw-unicode-escape, with \ NUL LF CR ^Z escaped as well.
    std::string out = "V";
    for (std::size_t i = 0; i < utf8.size();) {
      char32_t code_point = 0;
      i += pickle_utf8_next(utf8, i, code_point, false);
      if (code_point >= 0x10000) {
        out += "\\U" + pickle_hex(static_cast<std::uint32_t>(code_point), 8);
      } else if (code_point >= 0x100 || code_point == '\\' || code_point == 0 ||
                 code_point == '\n' || code_point == '\r' || code_point == 0x1a) {
        out += "\\u" + pickle_hex(static_cast<std::uint32_t>(code_point), 4);
      } else {
        out.push_back(static_cast<char>(code_point));
      }
    }
    out.push_back('\n');
    write(out);
  }

  /// save_global: GLOBAL module\nname\n, shared like any object.
  void save_global(std::string_view text, const std::string& identity) {
    boundary();
    if (memo_get(identity)) {
      return;
    }
    write(text);
    memo_put(&identity);
  }

  /// save_bytes: `data` as Python bytes. Python shares b'' and the one-byte
  /// bytes. Protocols 0 to 2 have no bytes opcode: CPython calls
  /// _codecs.encode(data as Latin-1 text, 'latin1'), or bytes() for b''.
  auto save_bytes(std::string_view data) -> bool {
    std::string identity;
    if (data.size() <= 1) {
      identity = "b" + std::string(data);
      if (memo_get(identity)) {
        return true;
      }
    }
    const std::string* shared = identity.empty() ? nullptr : &identity;
    if (protocol_ >= 3) {
      write_payload(protocol_ >= 4 ? sized(data.size(), 'C', 'B', '\x8e')
                                   : sized(data.size(), 'C', 'B', '\0'),
                    data);
      memo_put(shared);
      return true;
    }
    if (data.empty()) {
      save_global("c__builtin__\nbytes\n", "gbytes");
      boundary();
      write(protocol_ == 0 ? "(t" : ")");
    } else {
      save_global("c_codecs\nencode\n", "gencode");
      boundary();  // the argument tuple
      if (protocol_ < 2) {
        write("(");
      }
      std::string latin1;
      for (const char c : data) {
        pickle_append_utf8(latin1, static_cast<unsigned char>(c));
      }
      boundary();
      if (!save_str(latin1, false)) {
        return false;
      }
      boundary();
      const std::string name_identity = "latin1";  // CPython's interned 'latin1'
      if (!memo_get(name_identity)) {
        write_str("latin1");
        memo_put(&name_identity);
      }
      write(protocol_ == 2 ? "\x86" : "t");
      memo_put(nullptr);  // the tuple
    }
    write("R");
    memo_put(shared);
    return true;
  }

  auto save_list(const Value::List& items, std::size_t depth) -> bool {
    if (depth + 1 > kMaxDepth) {
      return fail("lists and maps nested deeper than " + std::to_string(kMaxDepth));
    }
    write(protocol_ == 0 ? "(l" : "]");
    memo_put(nullptr);
    if (protocol_ == 0) {
      for (const Value& item : items) {
        if (!save(item, depth + 1, false)) {
          return false;
        }
        write("a");
      }
      return true;
    }
    if (items.size() == 1) {
      if (!save(items.front(), depth + 1, false)) {
        return false;
      }
      write("a");
      return true;
    }
    std::size_t done = 0;
    while (done < items.size()) {
      write("(");
      const std::size_t end = items.size() - done > kBatch ? done + kBatch : items.size();
      for (; done < end; ++done) {
        if (!save(items[done], depth + 1, false)) {
          return false;
        }
      }
      write("e");
    }
    return true;
  }

  auto save_dict(const Value::Map& entries, std::size_t depth) -> bool {
    if (depth + 1 > kMaxDepth) {
      return fail("lists and maps nested deeper than " + std::to_string(kMaxDepth));
    }
    std::unordered_set<std::string> keys;
    for (const Value::Entry& entry : entries) {
      const ValueKind kind = entry.first.kind();
      if (kind == ValueKind::kList || kind == ValueKind::kMap || kind == ValueKind::kSerialized) {
        return fail("a " + std::string(to_string(kind)) +
                    " map key (Python dict keys here are None, bool, int, float, str or bytes)");
      }
      std::optional<std::string> identity = pickle_key_identity(entry.first);
      if (identity && !keys.insert(std::move(*identity)).second) {
        return fail("a map with two keys Python finds equal (a dict has one)");
      }
    }
    write(protocol_ == 0 ? "(d" : "}");
    memo_put(nullptr);
    const auto save_entry = [&](const Value::Entry& entry) {
      return save(entry.first, depth + 1, true) && save(entry.second, depth + 1, false);
    };
    if (protocol_ == 0) {
      for (const Value::Entry& entry : entries) {
        if (!save_entry(entry)) {
          return false;
        }
        write("s");
      }
      return true;
    }
    if (entries.size() == 1) {
      if (!save_entry(entries.front())) {
        return false;
      }
      write("s");
      return true;
    }
    if (entries.empty()) {
      return true;
    }
    // Batches of 1,000; a dict whose size is a multiple of 1,000 ends with an
    // empty MARK SETITEMS (CPython's loop does).
    std::size_t done = 0;
    std::size_t in_batch = 0;
    do {
      write("(");
      in_batch = 0;
      while (done < entries.size() && in_batch < kBatch) {
        if (!save_entry(entries[done])) {
          return false;
        }
        ++done;
        ++in_batch;
      }
      write("u");
    } while (in_batch == kBatch);
    return true;
  }

  int protocol_;
  bool framing_ = false;
  std::optional<std::size_t> frame_start_;
  std::string out_;
  std::size_t memo_size_ = 0;
  std::unordered_map<std::string, std::size_t> shared_;
  std::optional<CodecError> error_;
};

}  // namespace detail

/// pickle_loads: the Value of a pickle of protocol 0 to 5, read without
/// importing or calling anything: None, bool, int, float, str, bytes,
/// bytearray, Python 2 str (as bytes), list, tuple (as a list), dict (a map,
/// in order), set and frozenset (lists). A pickle of anything else (a class
/// instance, a global, a persistent id) is Value::serialized("pickle",
/// bytes), as are a lone-surrogate str and a self-containing container.
/// Errors: kCorrupt (truncated, a missing STOP or bytes after it, an
/// unknown opcode, a stack underflow, a GET of an index never PUT, text
/// that is not a number, invalid UTF-8), kTooLarge (an int outside int64, a
/// float overflow, a string over limits.max_size, a tree over
/// limits.max_decoded_bytes, shared objects copied each time they are
/// reached, or an unpickler whose stack, memo and objects would take more
/// than that), kTooDeep (nesting deeper than limits.max_depth), kUnsupported
/// (protocol > 5).
[[nodiscard]] inline auto pickle_loads(std::string_view bytes, const DecodeLimits& limits = {})
    -> CodecResult<Value> {
  detail::PickleReader reader(bytes, limits);
  return reader.run();
}

/// pickle_dumps: what CPython 3.11's pickle.dumps(value, protocol) writes
/// for the Python object `value` stands for: null None, bool, int, float,
/// string str, bytes bytes, list list, map dict (keys null, bool, int,
/// float, string or bytes, no two equal in Python's eyes: True, 1 and 1.0
/// are one key). Protocols 0 to 5; a negative protocol is 5, as in Python.
///
/// Byte-exactness depends on which objects are one object (the memo writes
/// a second occurrence as GET). The objects are those json.loads would
/// build: every list, dict and str is new, except that equal str dict keys
/// are one object, and that the empty str, the one-character strs below
/// U+0100, b'' and the one-byte bytes are CPython's shared singletons.
/// ["ab", "ab"] is two strs; ["a", "a"] one; [{"id": 1}, {"id": 2}] one
/// "id". A kSerialized "pickle" value is written back as it is (whatever
/// the protocol).
///
/// Errors (kNotEncodable): a protocol above 5, a kSerialized of another
/// format or inside a container, a string that is not UTF-8, a list or map
/// key, two equal keys, nesting deeper than 256.
[[nodiscard]] inline auto pickle_dumps(const Value& value, int protocol)
    -> CodecResult<std::string> {
  if (protocol < 0) {
    protocol = kPickleHighestProtocol;
  }
  if (protocol > kPickleHighestProtocol) {
    return CodecError(CodecErrc::kNotEncodable,
                      "pickle: protocol " + std::to_string(protocol) + " does not exist (0 to 5)");
  }
  if (value.is_serialized()) {
    const SerializedObject& serialized = value.as_serialized();
    if (serialized.format == detail::kPickleName) {
      return serialized.data;
    }
    return CodecError(CodecErrc::kNotEncodable,
                      "pickle: a serialized " + serialized.format + " value has no pickle form");
  }
  detail::PickleWriter writer(protocol);
  return writer.dump(value);
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PICKLE_HPP_
