// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_FORMAT_HPP_
#define MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_FORMAT_HPP_

// codecs/detail/ruby_marshal_format.hpp: what marshal_load and marshal_dump
// share of Ruby's Marshal format: its name in Values and error messages, and
// its Floats: the text Ruby writes after `f` and reads back, and which
// doubles Ruby keeps as one object (flonums). The format is told in
// codecs/ruby_marshal.hpp.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

inline constexpr std::string_view kMarshalFormat = "ruby-marshal";

/// marshal_error: a CodecError "ruby-marshal: at byte <at>: <what>".
[[nodiscard]] inline auto marshal_error(CodecErrc code, std::size_t at, const std::string& what)
    -> CodecError {
  return CodecError(code, "ruby-marshal: at byte " + std::to_string(at) + ": " + what);
}

/// marshal_is_flonum: whether Ruby (64-bit) keeps the double with these bits
/// as an immediate "flonum", one object per value: +0.0, and the doubles
/// whose top three exponent bits are 011 or 100, except 2^-255 itself.
[[nodiscard]] constexpr auto marshal_is_flonum(std::uint64_t bits) noexcept -> bool {
  if (bits == 0) {
    return true;
  }
  const std::uint64_t top = (bits >> 60U) & 0x7U;
  return (top == 3 || top == 4) && bits != 0x3000000000000000ULL;
}

/// marshal_float_text: a double as Marshal.dump writes it after `f`.
[[nodiscard]] inline auto marshal_float_text(double value) -> std::string {
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value < 0 ? "-inf" : "inf";
  }
  if (value == 0) {
    return std::signbit(value) ? "-0" : "0";
  }
  const FloatDigits d = shortest_digits(value);
  const std::string_view digits = d.view();
  const auto count = static_cast<int>(digits.size());
  std::string out;
  if (d.negative) {
    out.push_back('-');
  }
  if (d.decpt < -3 || d.decpt > count) {
    out.push_back(digits[0]);
    if (count > 1) {
      out.push_back('.');
      out.append(digits.substr(1));
    }
    out.push_back('e');
    out.append(std::to_string(d.decpt - 1));
  } else if (d.decpt > 0) {
    const auto point = static_cast<std::size_t>(d.decpt);
    out.append(digits.substr(0, point));
    if (point < digits.size()) {
      out.push_back('.');
      out.append(digits.substr(point));
    }
  } else {
    out.append("0.");
    out.append(static_cast<std::size_t>(-d.decpt), '0');
    out.append(digits);
  }
  return out;
}

/// marshal_parse_float: the double of a Float's text as Ruby 1.9 and later
/// write it (decimal text, "inf", "-inf", "nan"), or nullopt.
[[nodiscard]] inline auto marshal_parse_float(std::string_view text) noexcept
    -> std::optional<double> {
  if (text == "nan") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (text == "inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (text == "-inf") {
    return -std::numeric_limits<double>::infinity();
  }
  const std::size_t lead = !text.empty() && text[0] == '-' ? 1 : 0;
  if (lead == text.size() || !((text[lead] >= '0' && text[lead] <= '9') || text[lead] == '.')) {
    return std::nullopt;
  }
  double value = 0;
  const auto result =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_RUBY_MARSHAL_FORMAT_HPP_
