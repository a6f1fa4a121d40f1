// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_LIBHASHKIT_HASHES_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_LIBHASHKIT_HASHES_HPP_

// placement/profiles/libhashkit_hashes.hpp: kLibhashkitHashes, the hash vocabulary of
// libmemcached (libhashkit's names, which are memshard's own): the profiles
// built on libmemcached (libmemcached-*, php-memcached*) and the generic ones
// (modulo-crc32, ring-crc32) take these names.

#include <array>

#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace profiles {

/// kLibhashkitHashes: libhashkit's hash names, each building `Make::make<H>`
/// (a profile's builder, see ProfileInfo::hashes; typed for `Make::default_hash`,
/// through RuntimeHash for the others): one_at_a_time
/// (MEMCACHED_HASH_DEFAULT, also spelled "default"), md5, crc (the 15-bit
/// crc), crc32 (the full IEEE CRC-32), fnv1_32, fnv1a_32, fnv1_64, fnv1a_64,
/// murmur.
template <class Make>
inline constexpr std::array<HashChoice, 10> kLibhashkitHashes = {{
    {.name = OneAtATime::name(), .build = detail::vocabulary_build<Make, OneAtATime>()},
    {.name = Md5::name(), .build = detail::vocabulary_build<Make, Md5>()},
    {.name = LibmemcachedCrc::name(), .build = detail::vocabulary_build<Make, LibmemcachedCrc>()},
    {.name = Crc32::name(), .build = detail::vocabulary_build<Make, Crc32>()},
    {.name = Fnv1_32::name(), .build = detail::vocabulary_build<Make, Fnv1_32>()},
    {.name = Fnv1a_32::name(), .build = detail::vocabulary_build<Make, Fnv1a_32>()},
    {.name = Fnv1_64::name(), .build = detail::vocabulary_build<Make, Fnv1_64>()},
    {.name = Fnv1a_64::name(), .build = detail::vocabulary_build<Make, Fnv1a_64>()},
    {.name = Murmur::name(), .build = detail::vocabulary_build<Make, Murmur>()},
    {.name = "default", .build = detail::vocabulary_build<Make, OneAtATime>(), .alias = true},
}};

}  // namespace profiles
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_LIBHASHKIT_HASHES_HPP_
