// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_UTF8_HPP_
#define MEMSHARD_CODECS_DETAIL_UTF8_HPP_

// codecs/detail/utf8.hpp: is_utf8, whether bytes are well-formed UTF-8 (RFC
// 3629: no overlong forms, no surrogates, nothing above U+10FFFF), which is
// what the Python, Java and JSON readers demand of text, and utf8_next, which
// decodes one character of it.

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

// ascii_run_end: the offset after the run of 8-byte blocks of ASCII that
// starts at `at` (most text is ASCII: a block is one test, not eight).
[[nodiscard]] constexpr auto ascii_run_end(std::string_view text, std::size_t at) noexcept
    -> std::size_t {
  while (text.size() - at >= 8) {
    unsigned char any = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      any = static_cast<unsigned char>(any | static_cast<unsigned char>(text[at + i]));
    }
    if (any >= 0x80) {
      break;
    }
    at += 8;
  }
  return at;
}

/// utf8_next: the code point of the UTF-8 sequence at `text[at]` (at <
/// text.size()) and its length, or nullopt for a byte sequence that is not
/// UTF-8 (a stray continuation byte, a truncated or overlong sequence, a
/// surrogate, a code point above U+10FFFF).
[[nodiscard]] constexpr auto utf8_next(std::string_view text, std::size_t at) noexcept
    -> std::optional<std::pair<char32_t, std::size_t>> {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80U) {
    return std::pair<char32_t, std::size_t>{lead, 1};
  }
  std::size_t length = 0;
  char32_t code = 0;
  char32_t smallest = 0;
  if (lead >= 0xc2U && lead <= 0xdfU) {
    length = 2;
    code = lead & 0x1fU;
    smallest = 0x80;
  } else if (lead >= 0xe0U && lead <= 0xefU) {
    length = 3;
    code = lead & 0x0fU;
    smallest = 0x800;
  } else if (lead >= 0xf0U && lead <= 0xf4U) {
    length = 4;
    code = lead & 0x07U;
    smallest = 0x10000;
  } else {
    return std::nullopt;
  }
  if (text.size() - at < length) {
    return std::nullopt;
  }
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0U) != 0x80U) {
      return std::nullopt;
    }
    code = code << 6U | (byte(i) & 0x3fU);
  }
  if (code < smallest || code > 0x10ffffU || (code >= 0xd800U && code <= 0xdfffU)) {
    return std::nullopt;
  }
  return std::pair<char32_t, std::size_t>{code, length};
}

/// utf8_error_at: the offset of the first byte that breaks UTF-8 in `text`,
/// or text.size() when it is all well-formed (the rules of utf8_next,
/// checked without decoding: this is on every text read's path).
[[nodiscard]] constexpr auto utf8_error_at(std::string_view text) noexcept -> std::size_t {
  std::size_t at = 0;
  while (at < text.size()) {
    at = ascii_run_end(text, at);
    if (at == text.size()) {
      break;
    }
    const auto lead = static_cast<unsigned char>(text[at]);
    if (lead < 0x80) {
      ++at;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      low = lead == 0xe0 ? 0xa0 : 0x80;   // no overlong form
      high = lead == 0xed ? 0x9f : 0xbf;  // no surrogate
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      low = lead == 0xf0 ? 0x90 : 0x80;   // no overlong form
      high = lead == 0xf4 ? 0x8f : 0xbf;  // nothing above U+10FFFF
    } else {
      return at;
    }
    if (text.size() - at < length) {
      return at;
    }
    const auto second = static_cast<unsigned char>(text[at + 1]);
    if (second < low || second > high) {
      return at;
    }
    for (std::size_t i = 2; i < length; ++i) {
      const auto next = static_cast<unsigned char>(text[at + i]);
      if (next < 0x80 || next > 0xbf) {
        return at;
      }
    }
    at += length;
  }
  return at;
}

/// is_utf8: `text` is well-formed UTF-8.
[[nodiscard]] constexpr auto is_utf8(std::string_view text) noexcept -> bool {
  return utf8_error_at(text) == text.size();
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_UTF8_HPP_
