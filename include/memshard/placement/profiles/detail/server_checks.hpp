// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_DETAIL_SERVER_CHECKS_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_DETAIL_SERVER_CHECKS_HPP_

// placement/profiles/detail/server_checks.hpp: checks on a server list that several peer
// families share (whole-number weights, any weight above one). Not API.

#include <cmath>
#include <span>
#include <string>
#include <string_view>

#include "memshard/detail/compiled.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {
namespace detail {

// libmemcached keeps weights as uint32_t: a fractional weight cannot be
// expressed there, so it is refused rather than silently changed.
MEMSHARD_DETAIL_INLINE void require_whole_weights(std::span<const Server> servers,
                                                  std::string_view profile);
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE void require_whole_weights(std::span<const Server> servers,
                                                  std::string_view profile) {
  for (const Server& server : servers) {
    if (server.weight != std::floor(server.weight) || server.weight > 4294967295.0) {
      memshard::detail::throw_config_error(
          std::string(profile) + " needs whole-number weights (libmemcached stores uint32)",
          server.endpoint());
    }
  }
}
#endif

[[nodiscard]] MEMSHARD_DETAIL_INLINE auto any_weight_above_one(
    std::span<const Server> servers) noexcept -> bool;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto any_weight_above_one(std::span<const Server> servers) noexcept -> bool {
  for (const Server& server : servers) {
    if (server.weight > 1) {
      return true;
    }
  }
  return false;
}
#endif

}  // namespace detail
}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_DETAIL_SERVER_CHECKS_HPP_
