// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_HOTKEYS_LOAD_OPTIONS_HPP_
#define MEMSHARD_HOTKEYS_LOAD_OPTIONS_HPP_

// hotkeys/load_options.hpp: LoadOptions, how get_or_load keeps a missing or stale key from
// running its loader once per caller (a stampede): a lease on the key's server, memcached's meta
// `mg <key> N<ttl>`, lets one caller load while the others wait for its value. The lease lives
// on the server, so it holds across processes. docs/hot-keys.md.

#include <chrono>
#include <optional>
#include <string>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// LoadOptions: see the file comment. The defaults take no lease (every caller that misses
/// loads, as a plain get_or_load does); a lease_ttl turns leases on.
///
/// **Example**:
///   memshard::ClientOptions options;
///   options.load_options.lease_ttl = std::chrono::seconds(5);  // longer than any load
struct LoadOptions {
  /// How long a loader's lease holds, in whole seconds; 0: no lease. It must be longer than the
  /// loader's longest run: a lease that lapses lets the next caller load too. A caller that won
  /// the lease and vanished holds the others up to this long (then the next one loads).
  std::chrono::seconds lease_ttl{0};
  /// How long delete_stale() keeps the value it marks stale, in seconds: while one caller
  /// reloads it, the others are answered the stale value. The bound on how stale an answer may
  /// be when the reloading caller vanishes (normally it is one loader's run).
  std::chrono::seconds stale_ttl{10};
  /// A waiting caller reads the key again after first_poll, then after twice as long each time,
  /// up to max_poll, until the loader's value is there or the call's deadline comes: it sees the
  /// value at most max_poll after it was stored, and reads the key 1,000 / max_poll times a
  /// second while it waits (64 waiters: 12,800 reads a second, nothing to memcached). With
  /// thousands of waiters on a loader that takes seconds, a larger max_poll reads less.
  std::chrono::milliseconds first_poll{1};
  std::chrono::milliseconds max_poll{5};

  friend auto operator==(const LoadOptions&, const LoadOptions&) -> bool = default;
};

/// load_options_error: why `options` are not valid (a negative lease_ttl or one over 30 days, a
/// stale_ttl outside 1 s to 30 days, a first_poll that is not positive, a max_poll below it), or
/// nothing.
[[nodiscard]] inline auto load_options_error(const LoadOptions& options)
    -> std::optional<std::string> {
  constexpr std::chrono::seconds kMonth{60 * 60 * 24 * 30};
  if (options.lease_ttl.count() < 0 || options.lease_ttl > kMonth) {
    return "lease_ttl must be 0 to 30 days (" + std::to_string(options.lease_ttl.count()) + " s)";
  }
  if (options.stale_ttl.count() <= 0 || options.stale_ttl > kMonth) {
    return "stale_ttl must be 1 s to 30 days (" + std::to_string(options.stale_ttl.count()) + " s)";
  }
  if (options.first_poll.count() <= 0) {
    return "first_poll must be positive (" + std::to_string(options.first_poll.count()) + " ms)";
  }
  if (options.max_poll < options.first_poll) {
    return "max_poll must be at least first_poll (" + std::to_string(options.max_poll.count()) +
           " ms)";
  }
  return std::nullopt;
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_HOTKEYS_LOAD_OPTIONS_HPP_
