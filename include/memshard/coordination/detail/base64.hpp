// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_DETAIL_BASE64_HPP_
#define MEMSHARD_COORDINATION_DETAIL_BASE64_HPP_

// coordination/detail/base64.hpp: base64 (RFC 4648, the standard alphabet, with padding), the
// form etcd's JSON gateway gives keys and values in. The reader is strict: padding only at the
// end and only where the length needs it, no other character, and no stray bits in the last
// symbol (a text has one encoding, so a corrupt reply cannot pass as another key).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

inline constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// base64_encode: `bytes` in base64, padded to a multiple of 4.
[[nodiscard]] inline auto base64_encode(std::string_view bytes) -> std::string {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t group = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16U) |
                                (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8U) |
                                std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out.push_back(kBase64Alphabet[(group >> 18U) & 63U]);
    out.push_back(kBase64Alphabet[(group >> 12U) & 63U]);
    out.push_back(kBase64Alphabet[(group >> 6U) & 63U]);
    out.push_back(kBase64Alphabet[group & 63U]);
  }
  const std::size_t left = bytes.size() - i;
  if (left != 0) {
    std::uint32_t group = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16U;
    if (left == 2) {
      group |= std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8U;
    }
    out.push_back(kBase64Alphabet[(group >> 18U) & 63U]);
    out.push_back(kBase64Alphabet[(group >> 12U) & 63U]);
    out.push_back(left == 2 ? kBase64Alphabet[(group >> 6U) & 63U] : '=');
    out.push_back('=');
  }
  return out;
}

/// base64_symbol: the 6-bit value of one base64 character, or 64 for any other.
[[nodiscard]] constexpr auto base64_symbol(char c) noexcept -> std::uint32_t {
  if (c >= 'A' && c <= 'Z') {
    return static_cast<std::uint32_t>(c - 'A');
  }
  if (c >= 'a' && c <= 'z') {
    return static_cast<std::uint32_t>(c - 'a') + 26U;
  }
  if (c >= '0' && c <= '9') {
    return static_cast<std::uint32_t>(c - '0') + 52U;
  }
  if (c == '+') {
    return 62U;
  }
  if (c == '/') {
    return 63U;
  }
  return 64U;
}

/// base64_decode: the bytes `text` encodes, or nullopt when it is not canonical padded base64.
[[nodiscard]] inline auto base64_decode(std::string_view text) -> std::optional<std::string> {
  if (text.size() % 4 != 0) {
    return std::nullopt;
  }
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') {
    padding = text[text.size() - 2] == '=' ? 2 : 1;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const std::size_t symbols = last ? 4 - padding : 4;
    std::uint32_t group = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      std::uint32_t bits = 0;
      if (j < symbols) {
        bits = base64_symbol(text[i + j]);
        if (bits == 64U) {
          return std::nullopt;
        }
      }
      group = (group << 6U) | bits;
    }
    out.push_back(static_cast<char>((group >> 16U) & 0xffU));
    if (symbols >= 3) {
      out.push_back(static_cast<char>((group >> 8U) & 0xffU));
    }
    if (symbols == 4) {
      out.push_back(static_cast<char>(group & 0xffU));
    }
    // The bits past the last whole byte must be zero: one encoding per text.
    const std::uint32_t stray = symbols == 2   ? (group & 0xffffU)
                                : symbols == 3 ? (group & 0xffU)
                                               : 0;
    if (stray != 0) {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_DETAIL_BASE64_HPP_
