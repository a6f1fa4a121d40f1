// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_LOCATORS_LOCATOR_HPP_
#define MEMSHARD_PLACEMENT_LOCATORS_LOCATOR_HPP_

// placement/locators/locator.hpp: the Locator concept: what ShardedClient and the tools need from
// a placement.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Locator: maps a key to one of the servers it was built for.
///
/// Contract, member by member:
/// - `l.locate(key) noexcept -> std::size_t`: the index of the key's server in
///   the server list the locator was built from, in the caller's order; always
///   `< l.size()`. A pure function of the key bytes and the construction
///   arguments: the same in every process. It accepts any bytes (key rules are
///   checked by the caller, see key.hpp), never throws and never allocates.
/// - `l.size() noexcept -> std::size_t`: the number of servers, at least 1.
///
/// A Locator is immutable after construction: membership changes build a new
/// one. So one locator may be read by any number of threads at once.
template <class L>
concept Locator = requires(const L& locator, std::string_view key) {
  { locator.locate(key) }
  noexcept->std::same_as<std::size_t>;
  { locator.size() }
  noexcept->std::same_as<std::size_t>;
};

/// BatchLocator: a Locator that places many keys in one call, faster than one
/// locate() each (ShardedClient's multi-gets use it):
///
/// - `l.locate_many(keys, out) noexcept`: out[i] = l.locate(keys[i]) for every
///   key (`out.size() >= keys.size()`).
template <class L>
concept BatchLocator = Locator<L> &&
    requires(const L& locator, std::span<const std::string_view> keys, std::span<std::size_t> out) {
  { locator.locate_many(keys, out) }
  noexcept;
};

/// FailoverLocator: a Locator that can also say where a key goes while some
/// servers are out of service (ShardedClient's FailurePolicy::kFailover).
///
/// - `l.locate_avoiding(key, avoid) noexcept -> std::size_t`: the key's server
///   when `avoid[i] != 0` marks server i as out of service (`avoid.size()` is
///   `l.size()`). It must equal `locate(key)` whenever that server is not
///   avoided, so that ejecting one server never moves the keys of the others;
///   and it answers `locate(key)` when every server is avoided.
///
/// Satisfying the concept is not always enough: a wrapper (AnyLocator,
/// HashTagLocator) has locate_avoiding whatever it wraps, and over a locator
/// that cannot fail over it answers locate(key), so failover would silently
/// act as fail-fast. Such a wrapper also has
/// - `l.can_fail_over() noexcept -> bool`: whether what it wraps can fail over.
///
/// Ask can_fail_over(l) before relying on locate_avoiding.
template <class L>
concept FailoverLocator = Locator<L> &&
    requires(const L& locator, std::string_view key, std::span<const std::uint8_t> avoid) {
  { locator.locate_avoiding(key, avoid) }
  noexcept->std::same_as<std::size_t>;
};

/// can_fail_over: whether `locator` really places keys around avoided servers:
/// false when L is not a FailoverLocator; `locator.can_fail_over()` when L has
/// that member (a wrapper, see FailoverLocator); else true.
template <Locator L>
[[nodiscard]] auto can_fail_over(const L& locator) noexcept -> bool {
  if constexpr (!FailoverLocator<L>) {
    static_cast<void>(locator);
    return false;
  } else if constexpr (requires {
                         { locator.can_fail_over() }
                         noexcept->std::convertible_to<bool>;
                       }) {
    return locator.can_fail_over();
  } else {
    static_cast<void>(locator);
    return true;
  }
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_LOCATORS_LOCATOR_HPP_
