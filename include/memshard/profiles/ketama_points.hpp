// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PROFILES_KETAMA_POINTS_HPP_
#define MEMSHARD_PROFILES_KETAMA_POINTS_HPP_

// profiles/ketama_points.hpp: kKetamaPoints, libketama's 160 points per
// server, which most peers' rings start from (libmemcached, twemproxy,
// spymemcached, pecl memcache, Dalli).

#include <cstddef>

#include "memshard/version.hpp"

namespace memshard::inline MEMSHARD_ABI_NAMESPACE::profiles {

/// kKetamaPoints: libketama's 160 points per server (MEMCACHED_POINTS_PER_SERVER_KETAMA).
inline constexpr std::size_t kKetamaPoints = 160;

}  // namespace memshard::inline MEMSHARD_ABI_NAMESPACE::profiles

#endif  // MEMSHARD_PROFILES_KETAMA_POINTS_HPP_
