// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_ONE_AT_A_TIME_HPP_
#define MEMSHARD_PLACEMENT_HASH_ONE_AT_A_TIME_HPP_

// placement/hash/one_at_a_time.hpp: Bob Jenkins' one-at-a-time hash as libmemcached computes
// it (MEMCACHED_HASH_DEFAULT).

#include <cstdint>
#include <string_view>

#include "memshard/detail/bytes.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// OneAtATime: Jenkins one-at-a-time, libmemcached's default key hash. Every
/// byte is widened as a signed char, so bytes >= 0x80 add 0xFFFFFFxx: this is
/// what libmemcached does on x86, and what its peers must match.
struct OneAtATime {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view {
    return "one_at_a_time";
  }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    std::uint32_t h = 0;
    for (const char c : bytes) {
      h += detail::widen_signed(c);
      h += h << 10U;
      h ^= h >> 6U;
    }
    h += h << 3U;
    h ^= h >> 11U;
    h += h << 15U;
    return h;
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_ONE_AT_A_TIME_HPP_
