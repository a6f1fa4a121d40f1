// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_JAVA_STRING_HPP_
#define MEMSHARD_PLACEMENT_HASH_JAVA_STRING_HPP_

// placement/hash/java_string.hpp: Java's String.hashCode() of a key, the NATIVE_HASH of
// spymemcached's ArrayModNodeLocator.
//
// Java hashes the UTF-16 code units of the String; a Java client's key bytes on
// the wire are that String in UTF-8. So the key bytes are decoded from UTF-8 and
// every code point above U+FFFF counts as its two surrogates.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memshard/placement/hash/hasher.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// JavaStringHash: `s[0]*31^(n-1) + ... + s[n-1]` over the UTF-16 code units of
/// the key decoded from UTF-8, as an unsigned 32-bit value (spymemcached's
/// `hashCode() & 0xffffffffL`). A byte that does not start or continue a valid
/// UTF-8 sequence counts as U+FFFD: such keys cannot come from a Java client.
/// JavaStringHash{}("hello") == 99162322.
struct JavaStringHash {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "java_string"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    std::uint32_t h = 0;
    std::size_t i = 0;
    while (i < bytes.size()) {
      const std::uint32_t cp = decode(bytes, i);
      if (cp >= 0x10000U) {
        const std::uint32_t v = cp - 0x10000U;
        h = h * 31U + (0xD800U + (v >> 10U));
        h = h * 31U + (0xDC00U + (v & 0x3FFU));
      } else {
        h = h * 31U + cp;
      }
    }
    return h;
  }

 private:
  static constexpr std::uint32_t kReplacement = 0xFFFDU;

  // The code point at bytes[i]; advances i past it (one byte when invalid).
  [[nodiscard]] static constexpr auto decode(std::string_view bytes, std::size_t& i) noexcept
      -> std::uint32_t {
    const auto byte = [&bytes](std::size_t at) -> std::uint32_t {
      return static_cast<unsigned char>(bytes[at]);
    };
    const std::uint32_t lead = byte(i);
    if (lead < 0x80U) {
      ++i;
      return lead;
    }
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if (lead >= 0xC2U && lead <= 0xDFU) {
      extra = 1;
      cp = lead & 0x1FU;
      min = 0x80U;
    } else if (lead >= 0xE0U && lead <= 0xEFU) {
      extra = 2;
      cp = lead & 0x0FU;
      min = 0x800U;
    } else if (lead >= 0xF0U && lead <= 0xF4U) {
      extra = 3;
      cp = lead & 0x07U;
      min = 0x10000U;
    } else {
      ++i;
      return kReplacement;
    }
    if (i + extra >= bytes.size()) {  // truncated sequence
      ++i;
      return kReplacement;
    }
    for (std::size_t k = 1; k <= extra; ++k) {
      const std::uint32_t next = byte(i + k);
      if ((next & 0xC0U) != 0x80U) {
        ++i;
        return kReplacement;
      }
      cp = (cp << 6U) | (next & 0x3FU);
    }
    if (cp < min || cp > 0x10FFFFU || (cp >= 0xD800U && cp <= 0xDFFFU)) {
      ++i;
      return kReplacement;
    }
    i += extra + 1;
    return cp;
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_JAVA_STRING_HPP_
