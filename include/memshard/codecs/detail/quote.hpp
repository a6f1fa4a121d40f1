// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_QUOTE_HPP_
#define MEMSHARD_CODECS_DETAIL_QUOTE_HPP_

// codecs/detail/quote.hpp: quote_bytes, a payload shown in an error message:
// quoted, printable ASCII as it is and every other byte as \xNN, cut after a
// few dozen bytes.

#include <cstddef>
#include <string>
#include <string_view>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// quote_bytes: `bytes` as `"text\x01..."` (at most `shown` bytes of it, then
/// `...`), for error messages.
[[nodiscard]] inline auto quote_bytes(std::string_view bytes, std::size_t shown = 40)
    -> std::string {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text = "\"";
  for (const char c : bytes.substr(0, shown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
      text += "\\x";
      text.push_back(kDigits[byte >> 4U]);
      text.push_back(kDigits[byte & 0xfU]);
    } else {
      text.push_back(c);
    }
  }
  text += bytes.size() > shown ? "...\"" : "\"";
  return text;
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_QUOTE_HPP_
