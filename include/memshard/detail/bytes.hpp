// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_DETAIL_BYTES_HPP_
#define MEMSHARD_DETAIL_BYTES_HPP_

// detail/bytes.hpp: byte loads that work both in constant evaluation and, fast,
// at run time.

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// load_le32: the four bytes at `p` as a little-endian 32-bit word.
[[nodiscard]] constexpr auto load_le32(const char* p) noexcept -> std::uint32_t {
  if (!std::is_constant_evaluated() && std::endian::native == std::endian::little) {
    std::uint32_t word = 0;
    std::memcpy(&word, p, sizeof word);
    return word;
  }
  return static_cast<std::uint32_t>(static_cast<unsigned char>(p[0])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(p[1])) << 8U |
         static_cast<std::uint32_t>(static_cast<unsigned char>(p[2])) << 16U |
         static_cast<std::uint32_t>(static_cast<unsigned char>(p[3])) << 24U;
}

/// widen_signed: a byte widened as C's `char` is on x86 and as libmemcached
/// does: bytes >= 0x80 become 0xFFFFFFxx.
[[nodiscard]] constexpr auto widen_signed(char c) noexcept -> std::uint32_t {
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<signed char>(c)));
}

/// append_hex: appends `bytes` as lower-case hex, two digits a byte (how MD5
/// and SHA-1 digests are printed).
inline void append_hex(std::string& out, std::span<const unsigned char> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (const unsigned char byte : bytes) {
    out.push_back(kHex[byte >> 4U]);
    out.push_back(kHex[byte & 0xFU]);
  }
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_DETAIL_BYTES_HPP_
