// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_KEY_HPP_
#define MEMSHARD_PLACEMENT_KEY_HPP_

// placement/key.hpp: memcached's key rules, checked before a key is hashed or sent.
//
// A memcached key is 1 to 250 bytes with no space and no control character
// (bytes 0x00-0x1f and 0x7f). The text protocol separates tokens with spaces
// and ends commands with "\r\n", so a key that breaks these rules could inject
// a second command ("a\r\nflush_all"). Bytes >= 0x80 are allowed: memcached
// treats keys as opaque bytes, and UTF-8 keys are common.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// kMaxKeyLength: the longest key memcached accepts, in bytes.
inline constexpr std::size_t kMaxKeyLength = 250;

/// KeyErrc: why a key was rejected.
enum class KeyErrc : std::uint8_t {
  kEmpty,    ///< the key has no bytes
  kTooLong,  ///< the key is longer than kMaxKeyLength bytes
  kSpace,    ///< the key contains a space (0x20)
  kControl,  ///< the key contains a control byte (0x00-0x1f) or DEL (0x7f)
};

/// to_string: a short name for a KeyErrc ("empty", "too_long", "space", "control").
[[nodiscard]] constexpr auto to_string(KeyErrc code) noexcept -> std::string_view {
  switch (code) {
    case KeyErrc::kEmpty:
      return "empty";
    case KeyErrc::kTooLong:
      return "too_long";
    case KeyErrc::kSpace:
      return "space";
    case KeyErrc::kControl:
      return "control";
  }
  return "unknown";
}

inline auto operator<<(std::ostream& out, KeyErrc code) -> std::ostream& {
  return out << to_string(code);
}

/// KeyError: the first problem found in a key, and where it is.
struct KeyError {
  KeyErrc code;
  /// Byte offset of the offending byte (kSpace, kControl), or the key length
  /// (kEmpty, kTooLong).
  std::size_t offset;
  /// The offending byte for kSpace and kControl, else 0.
  unsigned char byte;

  /// message: a sentence naming the problem, e.g.
  /// "key has a control byte 0x0d at offset 1".
  [[nodiscard]] auto message() const -> std::string {
    static constexpr char kHex[] = "0123456789abcdef";
    switch (code) {
      case KeyErrc::kEmpty:
        return "key is empty";
      case KeyErrc::kTooLong:
        return "key is " + std::to_string(offset) + " bytes long, the limit is " +
               std::to_string(kMaxKeyLength);
      case KeyErrc::kSpace:
        return "key has a space at offset " + std::to_string(offset);
      case KeyErrc::kControl: {
        std::string hex = "0x";
        hex += kHex[byte >> 4U];
        hex += kHex[byte & 0xfU];
        return "key has a control byte " + hex + " at offset " + std::to_string(offset);
      }
    }
    return "key is invalid";
  }

  friend constexpr auto operator==(const KeyError&, const KeyError&) -> bool = default;
};

/// check_key: returns the first problem with `key`, or nothing when memcached
/// accepts it. Runs in O(length) and never allocates.
///
/// **Example**:
///   if (auto problem = memshard::check_key(key)) std::cerr << problem->message();
[[nodiscard]] constexpr auto check_key(std::string_view key) noexcept -> std::optional<KeyError> {
  if (key.empty()) {
    return KeyError{KeyErrc::kEmpty, 0, 0};
  }
  if (key.size() > kMaxKeyLength) {
    return KeyError{KeyErrc::kTooLong, key.size(), 0};
  }
  for (std::size_t i = 0; i < key.size(); ++i) {
    const auto byte = static_cast<unsigned char>(key[i]);
    if (byte == 0x20) {
      return KeyError{KeyErrc::kSpace, i, byte};
    }
    if (byte < 0x20 || byte == 0x7f) {
      return KeyError{KeyErrc::kControl, i, byte};
    }
  }
  return std::nullopt;
}

namespace detail {

/// has_forbidden_byte: whether `bytes` holds a space, a control byte or DEL;
/// eight bytes per step at run time.
[[nodiscard]] constexpr auto has_forbidden_byte(std::string_view bytes) noexcept -> bool {
  std::size_t i = 0;
  if (!std::is_constant_evaluated()) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    for (; i + 8 <= bytes.size(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, bytes.data() + i, sizeof word);
      // A byte below 0x21 (high bit clear, and borrowing when 0x21 is taken
      // away), or a byte equal to 0x7f (zero after xor with 0x7f).
      const std::uint64_t below = (word - kOnes * 0x21U) & ~word & kHighs;
      const std::uint64_t del = word ^ (kOnes * 0x7fU);
      const std::uint64_t zero = (del - kOnes) & ~del & kHighs;
      if ((below | zero) != 0) {
        return true;
      }
    }
  }
  for (; i < bytes.size(); ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    if (byte <= 0x20 || byte == 0x7f) {
      return true;
    }
  }
  return false;
}

}  // namespace detail

/// is_valid_key: true when check_key finds no problem; cheaper than check_key.
[[nodiscard]] constexpr auto is_valid_key(std::string_view key) noexcept -> bool {
  return !key.empty() && key.size() <= kMaxKeyLength && !detail::has_forbidden_byte(key);
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_KEY_HPP_
