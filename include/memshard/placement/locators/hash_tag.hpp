// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_LOCATORS_HASH_TAG_HPP_
#define MEMSHARD_PLACEMENT_LOCATORS_HASH_TAG_HPP_

// placement/locators/hash_tag.hpp: hash tags, twemproxy's `hash_tag: "{}"`. With a tag, only the
// part of a key between the two tag characters is hashed, so that related keys
// ("user:{42}:name", "user:{42}:cart") land on the same server.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "memshard/detail/throw.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// HashTag: the two characters that delimit the hashed part of a key.
struct HashTag {
  char open;
  char close;

  /// parse: a HashTag from its two-character spelling ("{}"). Throws
  /// ConfigError for any other length.
  [[nodiscard]] static auto parse(std::string_view text) -> HashTag {
    if (text.size() != 2) {
      detail::throw_config_error("a hash tag is two characters", text);
    }
    return HashTag{text[0], text[1]};
  }

  /// apply: the part of `key` that is hashed: the bytes after the first
  /// `open` and before the first `close` after it, when both are there with
  /// at least one byte between them; else the whole key (twemproxy's rule).
  [[nodiscard]] constexpr auto apply(std::string_view key) const noexcept -> std::string_view {
    const std::size_t start = key.find(open);
    if (start == std::string_view::npos) {
      return key;
    }
    const std::size_t end = key.find(close, start + 1);
    if (end == std::string_view::npos || end - start <= 1) {
      return key;
    }
    return key.substr(start + 1, end - start - 1);
  }
};

/// HashTagLocator: places each key where the wrapped locator places the
/// key's tagged part (HashTag::apply).
///
/// Exception guarantee: construction as the wrapped locator's move; locate is
/// noexcept. Immutable, so safe to share.
template <Locator L>
class HashTagLocator {
 public:
  HashTagLocator(L locator, HashTag tag) : locator_(std::move(locator)), tag_(tag) {}

  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return locator_.locate(tag_.apply(key));
  }

  /// locate_avoiding: the wrapped locator's, for the tagged part (a locator
  /// without failover answers locate).
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    if constexpr (FailoverLocator<L>) {
      return locator_.locate_avoiding(tag_.apply(key), avoid);
    } else {
      static_cast<void>(avoid);
      return locate(key);
    }
  }

  /// can_fail_over: the wrapped locator's answer (memshard::can_fail_over):
  /// locate_avoiding avoids servers only if the wrapped locator can.
  [[nodiscard]] auto can_fail_over() const noexcept -> bool {
    return memshard::can_fail_over(locator_);
  }

  [[nodiscard]] auto size() const noexcept -> std::size_t { return locator_.size(); }

  [[nodiscard]] auto tag() const noexcept -> HashTag { return tag_; }
  [[nodiscard]] auto inner() const noexcept -> const L& { return locator_; }

 private:
  L locator_;
  HashTag tag_;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_LOCATORS_HASH_TAG_HPP_
