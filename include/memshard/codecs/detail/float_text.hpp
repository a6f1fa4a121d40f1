// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_FLOAT_TEXT_HPP_
#define MEMSHARD_CODECS_DETAIL_FLOAT_TEXT_HPP_

// codecs/detail/float_text.hpp: the decimal text of a double as each peer
// writes it, and the readers of those texts and of integer text.
//
// Every writer starts from the decimal digits of the double: the shortest
// digits that read back as the same double (what David Gay's dtoa mode 0,
// Python's repr and Ruby's Float#to_s use, and what std::to_chars gives), or
// the double correctly rounded to a fixed number of significant digits (PHP's
// snprintf "%.14g", C's "%.15g"). With the digits d1 d2 ... dn and the
// decimal point position decpt (the value is 0.d1d2...dn * 10^decpt), the
// peers differ only in when they switch to exponent form and how they spell
// each part:
//
//   writer                      exponent form when         1e21       1/3                  100
//   php-memcached (g_fmt)       decpt <= -4 || > n + 5     1e+21      .3333333333333333    100
//   PHP serialize/json_encode   decpt < -3 || > 17         1.0E+21    0.3333333333333333   100
//   pecl memcache "%.14g"       decpt < -3 || > 14         1.0e+21    0.33333333333333     100
//   Perl ("%.15g")              decpt < -3 || > 15         1e+21      0.333333333333333    100
//   Ruby Float#to_s             decpt < -3 || > 15         1.0e+21    0.3333333333333333   100.0
//   Python repr                 decpt < -3 || > 16         1e+21      0.3333333333333333   100.0
//
// g_fmt, C, Ruby and Python write at least two exponent digits (1e-05); PHP
// writes as many as needed (1.0E-5). Non-finite values: php-memcached writes
// Infinity, -Infinity, NaN; PHP INF, -INF, NAN; Perl Inf, -Inf, NaN; Ruby
// Infinity, -Infinity, NaN; Python inf, -inf, nan. Perl writes both zeros as
// "0"; the others keep the sign of -0.0 (-0, or -0.0 in Ruby and Python).
//
// php-memcached itself writes "-NaN" for a NaN whose sign bit is set (the
// result of INF - INF) and then reads that text back as 0.0; php_gfmt_text
// writes "NaN" for every NaN, the one spelling its reader understands.

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

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// FloatDigits: a finite double as decimal digits: the value is
/// (negative ? -1 : 1) * 0.d1d2...dn * 10^decpt, with d1 != '0' unless the
/// value is zero (then the digits are "0" and decpt is 1).
struct FloatDigits {
  std::array<char, 32> digits{};
  int count = 0;
  int decpt = 0;
  bool negative = false;

  [[nodiscard]] auto view() const noexcept -> std::string_view {
    return {digits.data(), static_cast<std::size_t>(count)};
  }
};

/// scientific_to_digits: FloatDigits from std::to_chars' scientific text
/// ("-d.ddde+XX"), trailing zeros of the digits dropped.
[[nodiscard]] inline auto scientific_to_digits(std::string_view text) noexcept -> FloatDigits {
  FloatDigits out;
  std::size_t at = 0;
  if (at < text.size() && text[at] == '-') {
    out.negative = true;
    ++at;
  }
  for (; at < text.size() && text[at] != 'e'; ++at) {
    if (text[at] != '.' && out.count < static_cast<int>(out.digits.size())) {
      out.digits[static_cast<std::size_t>(out.count++)] = text[at];
    }
  }
  int exponent = 0;
  bool exponent_negative = false;
  for (++at; at < text.size(); ++at) {
    if (text[at] == '-') {
      exponent_negative = true;
    } else if (text[at] != '+') {
      exponent = exponent * 10 + (text[at] - '0');
    }
  }
  while (out.count > 1 && out.digits[static_cast<std::size_t>(out.count - 1)] == '0') {
    --out.count;
  }
  out.decpt = (exponent_negative ? -exponent : exponent) + 1;
  return out;
}

/// shortest_digits: the shortest digits that read back as `value` (finite).
[[nodiscard]] inline auto shortest_digits(double value) noexcept -> FloatDigits {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::scientific);
  return scientific_to_digits(
      std::string_view(buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data())));
}

/// rounded_digits: `value` (finite) correctly rounded to `precision` (1..17)
/// significant digits, trailing zeros dropped.
[[nodiscard]] inline auto rounded_digits(double value, int precision) noexcept -> FloatDigits {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::scientific, precision - 1);
  return scientific_to_digits(
      std::string_view(buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data())));
}

/// append_exponent_form: "d.ddd<e><sign><exponent>". `point_zero`: a single
/// digit is written "d.0" (else "d"); `min_exponent_digits`: zero-padded to
/// that many digits.
inline void append_exponent_form(std::string& out, const FloatDigits& d, char exponent_char,
                                 bool point_zero, int min_exponent_digits) {
  const std::string_view digits = d.view();
  out.push_back(digits[0]);
  if (digits.size() > 1) {
    out.push_back('.');
    out.append(digits.substr(1));
  } else if (point_zero) {
    out.append(".0");
  }
  out.push_back(exponent_char);
  int exponent = d.decpt - 1;
  out.push_back(exponent < 0 ? '-' : '+');
  exponent = exponent < 0 ? -exponent : exponent;
  std::array<char, 8> text{};
  const auto result = std::to_chars(text.data(), text.data() + text.size(), exponent);
  const auto length = static_cast<int>(result.ptr - text.data());
  for (int pad = length; pad < min_exponent_digits; ++pad) {
    out.push_back('0');
  }
  out.append(text.data(), static_cast<std::size_t>(length));
}

/// append_fixed_form: the digits with the point in place: "0.000ddd" (or
/// ".000ddd" without `leading_zero`), "dd.ddd", "ddd000" (plus ".0" with
/// `point_zero`).
inline void append_fixed_form(std::string& out, const FloatDigits& d, bool leading_zero,
                              bool point_zero) {
  const std::string_view digits = d.view();
  if (d.decpt <= 0) {
    if (leading_zero) {
      out.push_back('0');
    }
    out.push_back('.');
    out.append(static_cast<std::size_t>(-d.decpt), '0');
    out.append(digits);
  } else if (static_cast<std::size_t>(d.decpt) < digits.size()) {
    const auto point = static_cast<std::size_t>(d.decpt);
    out.append(digits.substr(0, point));
    out.push_back('.');
    out.append(digits.substr(point));
  } else {
    out.append(digits);
    out.append(static_cast<std::size_t>(d.decpt) - digits.size(), '0');
    if (point_zero) {
      out.append(".0");
    }
  }
}

/// php_gcvt_text: PHP's own %G-style writer (php_gcvt) over `d`: exponent
/// form when decpt < -3 or decpt > `ndigit`, a lone mantissa digit as "d.0",
/// the exponent unpadded.
[[nodiscard]] inline auto php_gcvt_text(const FloatDigits& d, int ndigit, char exponent_char)
    -> std::string {
  std::string out;
  if (d.negative) {
    out.push_back('-');
  }
  if (d.decpt < 0 ? d.decpt < -3 : d.decpt > ndigit) {
    append_exponent_form(out, d, exponent_char, true, 1);
  } else {
    append_fixed_form(out, d, true, false);
  }
  return out;
}

/// php_gfmt_text: a double as php-memcached stores it (type 2): David Gay's
/// g_fmt over the shortest digits: `3.25`, `.3333333333333333`, `1e+21`,
/// `1e-05`, `1e+06`, `100000`, `-0`, `Infinity`, `-Infinity`, `NaN`.
[[nodiscard]] inline auto php_gfmt_text(double value) -> std::string {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value < 0 ? "-Infinity" : "Infinity";
  }
  const FloatDigits d = shortest_digits(value);
  std::string out;
  if (d.negative) {
    out.push_back('-');
  }
  if (d.decpt <= -4 || d.decpt > d.count + 5) {
    append_exponent_form(out, d, 'e', false, 2);
  } else {
    append_fixed_form(out, d, false, false);
  }
  return out;
}

/// php_repr_text: a double as PHP 8 writes it with serialize_precision = -1:
/// after `d:` in serialize() with `exponent_char` 'E' (`3.25`, `0.1`, `100`,
/// `1.0E+21`, `1.5E-7`, `1.0E+17`, `10000000000000000`, `-0`, `INF`, `-INF`,
/// `NAN`), in json_encode() with 'e' (json_encode refuses the non-finite).
[[nodiscard]] inline auto php_repr_text(double value, char exponent_char) -> std::string {
  if (std::isnan(value)) {
    return "NAN";
  }
  if (std::isinf(value)) {
    return value < 0 ? "-INF" : "INF";
  }
  return php_gcvt_text(shortest_digits(value), 17, exponent_char);
}

/// pecl_memcache_float_text: a double as pecl memcache stores it (0x700):
/// PHP's snprintf "%.14g", 14 significant digits: `0.33333333333333`,
/// `1.0e+21`, `1.0e-5`, `1.0e+14`, `100`, `-0`, `INF`, `-INF`, `NAN`. Lossy.
[[nodiscard]] inline auto pecl_memcache_float_text(double value) -> std::string {
  if (std::isnan(value)) {
    return "NAN";
  }
  if (std::isinf(value)) {
    return value < 0 ? "-INF" : "INF";
  }
  return php_gcvt_text(rounded_digits(value, 14), 14, 'e');
}

/// perl_float_text: a double (an NV) as Perl stringifies it: C's "%.15g"
/// (`0.333333333333333`, `1e+21`, `1e-05`, `100`), both zeros as `0`, and
/// `Inf`, `-Inf`, `NaN`. Lossy.
[[nodiscard]] inline auto perl_float_text(double value) -> std::string {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value < 0 ? "-Inf" : "Inf";
  }
  if (value == 0.0) {
    return "0";
  }
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::general, 15);
  return {buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data())};
}

/// ruby_float_text: a double as Ruby's Float#to_s writes it (Dalli raw,
/// Ruby's JSON): `3.25`, `0.3333333333333333`, `100.0`,
/// `100000000000000.0`, `1.0e+15`, `1.0e+21`, `0.0001`, `1.0e-05`, `-0.0`,
/// `Infinity`, `-Infinity`, `NaN`.
[[nodiscard]] inline auto ruby_float_text(double value) -> std::string {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value < 0 ? "-Infinity" : "Infinity";
  }
  const FloatDigits d = shortest_digits(value);
  std::string out;
  if (d.negative) {
    out.push_back('-');
  }
  if (d.decpt < -3 || d.decpt > 15) {
    append_exponent_form(out, d, 'e', true, 2);
  } else {
    append_fixed_form(out, d, true, true);
  }
  return out;
}

/// python_float_text: a double as Python's repr writes it (pymemcache's
/// default serde): `0.3333333333333333`, `100.0`, `1000000000000000.0`,
/// `1e+16`, `1e+21`, `0.0001`, `1e-05`, `-0.0`, `inf`, `-inf`, `nan`.
[[nodiscard]] inline auto python_float_text(double value) -> std::string {
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value < 0 ? "-inf" : "inf";
  }
  const FloatDigits d = shortest_digits(value);
  std::string out;
  if (d.negative) {
    out.push_back('-');
  }
  if (d.decpt < -3 || d.decpt > 16) {
    append_exponent_form(out, d, 'e', false, 2);
  } else {
    append_fixed_form(out, d, true, true);
  }
  return out;
}

/// parse_float_text: the double of a float text any peer writes, or nullopt.
/// Reads `-`? then digits with an optional fraction (`12`, `12.5`, `.5`),
/// then an optional exponent (`e`/`E`, an optional sign, digits), and the
/// non-finite spellings `Infinity`, `INF`, `Inf`, `inf`, `NaN`, `NAN`, `nan`
/// (each also after `-`). Nothing else: no `+`, no spaces, no hex, no
/// trailing `.`, and the whole text must be the number. A magnitude beyond
/// the doubles reads as strtod reads it: ±infinity, or ±0 when too small.
[[nodiscard]] inline auto parse_float_text(std::string_view text) noexcept
    -> std::optional<double> {
  std::size_t at = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) {
    at = 1;
  }
  const std::string_view word = text.substr(at);
  if (word == "Infinity" || word == "INF" || word == "Inf" || word == "inf") {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (word == "NaN" || word == "NAN" || word == "nan") {
    return negative ? -std::numeric_limits<double>::quiet_NaN()
                    : std::numeric_limits<double>::quiet_NaN();
  }
  auto is_digit = [&](std::size_t i) {
    return i < text.size() && text[i] >= '0' && text[i] <= '9';
  };
  // The decimal order of the first nonzero digit (its power of ten plus
  // one), to tell an overflow from an underflow.
  std::int64_t order = 0;
  bool nonzero = false;
  std::size_t integer_digits = 0;
  for (; is_digit(at); ++at, ++integer_digits) {
    if (nonzero) {
      ++order;
    } else if (text[at] != '0') {
      nonzero = true;
      order = 1;
    }
  }
  std::size_t fraction_digits = 0;
  if (at < text.size() && text[at] == '.') {
    for (++at; is_digit(at); ++at, ++fraction_digits) {
      if (!nonzero) {
        if (text[at] != '0') {
          nonzero = true;
        } else {
          --order;
        }
      }
    }
    if (fraction_digits == 0) {
      return std::nullopt;
    }
  }
  if (integer_digits == 0 && fraction_digits == 0) {
    return std::nullopt;
  }
  std::int64_t exponent = 0;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    bool exponent_negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
      exponent_negative = text[at] == '-';
      ++at;
    }
    if (!is_digit(at)) {
      return std::nullopt;
    }
    for (; is_digit(at); ++at) {
      if (exponent < 100000000) {
        exponent = exponent * 10 + (text[at] - '0');
      }
    }
    exponent = exponent_negative ? -exponent : exponent;
  }
  if (at != text.size()) {
    return std::nullopt;
  }
  double value = 0.0;
  const auto result =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (result.ec == std::errc::result_out_of_range) {
    const bool overflow = nonzero && order + exponent > 0;
    value = overflow ? std::numeric_limits<double>::infinity() : 0.0;
    return negative ? -value : value;
  }
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

/// parse_integer_text: the int64 of a decimal integer text, or nullopt: `-`?
/// then digits, nothing else (no `+`, no spaces, no fraction). The peers never
/// write leading zeros, but their readers (strtol, int(), to_i) accept them,
/// so `007` reads as 7 and `-0` as 0. Out of the int64 range: nullopt.
[[nodiscard]] inline auto parse_integer_text(std::string_view text) noexcept
    -> std::optional<std::int64_t> {
  const std::size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
  if (start == text.size()) {
    return std::nullopt;
  }
  for (std::size_t at = start; at < text.size(); ++at) {
    if (text[at] < '0' || text[at] > '9') {
      return std::nullopt;
    }
  }
  std::int64_t value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

/// is_big_integer_text: `text` is decimal digits (after an optional '-') that
/// parse_integer_text refused: an integer beyond 64 bits, which a peer with big
/// integers (Python, Ruby) writes and reads, and a decoder answers kTooLarge.
[[nodiscard]] constexpr auto is_big_integer_text(std::string_view text) noexcept -> bool {
  const std::string_view digits = !text.empty() && text.front() == '-' ? text.substr(1) : text;
  if (digits.empty()) {
    return false;
  }
  for (const char c : digits) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_FLOAT_TEXT_HPP_
