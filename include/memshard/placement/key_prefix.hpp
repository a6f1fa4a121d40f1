// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_KEY_PREFIX_HPP_
#define MEMSHARD_PLACEMENT_KEY_PREFIX_HPP_

// placement/key_prefix.hpp: KeyPrefix, the prefix (namespace) a client puts in front of
// every key it sends, and PrefixHashing, whether the key is placed by the
// bare key or by the prefixed one.
//
// The clients disagree. libmemcached's namespace (MEMCACHED_CALLBACK_NAMESPACE)
// and php-memcached's Memcached::OPT_PREFIX_KEY place a key by the bare key and
// send the prefixed one; libmemcached with MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY,
// Dalli's `namespace` (sent as "namespace:key": its prefix is "namespace:") and
// Cache::Memcached::Fast's `namespace` with `hash_namespace` place the prefixed
// key. A prefix added by hand is always placed with the key, so it cannot
// match the first group: use KeyPrefix instead.
//
// A client works with sent keys throughout (they are what servers hold, what
// journals remember and what listings show); its placement hashes
// placement_key(sent), the sent key without the prefix for kBareKey.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/detail/throw.hpp"
#include "memshard/placement/key.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// PrefixHashing: which form of a prefixed key its placement hashes.
enum class PrefixHashing : std::uint8_t {
  /// The bare key (the prefix only goes on the wire): libmemcached's and
  /// php-memcached's default.
  kBareKey,
  /// The prefixed key, as sent: libmemcached's
  /// MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY, Dalli's namespace,
  /// Cache::Memcached::Fast's namespace with hash_namespace.
  kPrefixedKey,
};

/// to_string: "bare_key" or "prefixed_key".
[[nodiscard]] constexpr auto to_string(PrefixHashing hashing) noexcept -> std::string_view {
  return hashing == PrefixHashing::kBareKey ? "bare_key" : "prefixed_key";
}

namespace detail {

/// placement_part: `sent` without its first `skip` bytes (a prefix the
/// placement does not hash), or whole when it is shorter.
[[nodiscard]] constexpr auto placement_part(std::string_view sent, std::size_t skip) noexcept
    -> std::string_view {
  return sent.size() >= skip ? sent.substr(skip) : sent;
}

}  // namespace detail

/// KeyPrefix: a validated key prefix and its PrefixHashing. An empty prefix
/// is no prefix: every key is sent and placed as it is. Immutable; copying
/// copies the prefix. The key rules (check_key) apply to the sent key, so a
/// key is refused when the prefixed form is over kMaxKeyLength.
///
/// **Example**:
///   const memshard::KeyPrefix prefix("app:", memshard::PrefixHashing::kBareKey);
///   std::string buffer;
///   std::string_view sent = prefix.sent_key("user:42", buffer);   // "app:user:42"
///   std::string_view placed = prefix.placement_key(sent);          // "user:42"
class KeyPrefix {
 public:
  /// No prefix.
  KeyPrefix() = default;

  /// Throws ConfigError for a prefix with a space or control character, or of
  /// kMaxKeyLength bytes or more (it would leave no room for a key).
  explicit KeyPrefix(std::string prefix, PrefixHashing hashing = PrefixHashing::kBareKey)
      : prefix_(std::move(prefix)), hashing_(hashing) {
    validate(prefix_);
    skip_ = hashing_ == PrefixHashing::kBareKey ? prefix_.size() : 0;
  }

  /// validate: throws ConfigError when `prefix` cannot be a key prefix (see
  /// the constructor); an empty prefix is fine.
  static void validate(std::string_view prefix) {
    if (prefix.size() >= kMaxKeyLength) {
      detail::throw_config_error("key prefix leaves no room for a key (at most 249 bytes)",
                                 std::to_string(prefix.size()) + " bytes");
    }
    if (detail::has_forbidden_byte(prefix)) {
      detail::throw_config_error("key prefix holds a space or control character",
                                 std::string(prefix));
    }
  }

  /// empty: whether there is no prefix.
  [[nodiscard]] auto empty() const noexcept -> bool { return prefix_.empty(); }
  /// text: the prefix.
  [[nodiscard]] auto text() const noexcept -> std::string_view { return prefix_; }
  /// hashing: which form of a key is placed.
  [[nodiscard]] auto hashing() const noexcept -> PrefixHashing { return hashing_; }
  /// placement_skip: how many leading bytes of a sent key its placement
  /// skips (the prefix's size for kBareKey, else 0).
  [[nodiscard]] auto placement_skip() const noexcept -> std::size_t { return skip_; }

  /// sent_key: the key as it goes on the wire: `key` itself without a
  /// prefix, else prefix + key written into `buffer` (which the result views:
  /// valid until `buffer` changes). Allocates only while `buffer` grows.
  [[nodiscard]] auto sent_key(std::string_view key, std::string& buffer) const -> std::string_view {
    if (prefix_.empty()) {
      return key;
    }
    buffer.assign(prefix_);
    buffer.append(key);
    return buffer;
  }

  /// placement_key: the part of a sent key that its placement hashes. `sent`
  /// must be a key made by sent_key (or shorter than the prefix: then it is
  /// returned whole).
  [[nodiscard]] auto placement_key(std::string_view sent) const noexcept -> std::string_view {
    return detail::placement_part(sent, skip_);
  }

  /// strip: the application's key of a key a server holds (from a listing),
  /// or nothing when it does not start with the prefix (another
  /// application's key).
  [[nodiscard]] auto strip(std::string_view sent) const noexcept
      -> std::optional<std::string_view> {
    if (!sent.starts_with(prefix_)) {
      return std::nullopt;
    }
    return sent.substr(prefix_.size());
  }

  friend auto operator==(const KeyPrefix&, const KeyPrefix&) -> bool = default;

 private:
  std::string prefix_;
  PrefixHashing hashing_ = PrefixHashing::kBareKey;
  std::size_t skip_ = 0;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_KEY_PREFIX_HPP_
