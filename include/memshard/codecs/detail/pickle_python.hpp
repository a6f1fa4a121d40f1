// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_PICKLE_PYTHON_HPP_
#define MEMSHARD_CODECS_DETAIL_PICKLE_PYTHON_HPP_

// codecs/detail/pickle_python.hpp: what pickle_loads and pickle_dumps take
// from Python itself, apart from the opcodes: the newest protocol, str as
// UTF-8 with surrogates allowed, the text of ints and floats as C's strtol,
// Python's int(), float() and repr() read and write it, and which dict keys
// Python finds equal. The format is told in codecs/pickle.hpp.

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

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_PICKLE_PYTHON_HPP_
