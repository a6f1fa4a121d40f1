// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_KETAMA_POINTS_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_KETAMA_POINTS_HPP_

// placement/profiles/ketama_points.hpp: kKetamaPoints, libketama's 160 points per
// server, which most peers' rings start from (libmemcached, twemproxy,
// spymemcached, pecl memcache, Dalli).

#include <cstddef>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// kKetamaPoints: libketama's 160 points per server (MEMCACHED_POINTS_PER_SERVER_KETAMA).
inline constexpr std::size_t kKetamaPoints = 160;

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_KETAMA_POINTS_HPP_
