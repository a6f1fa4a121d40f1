// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_HASHERS_HPP_
#define MEMSHARD_PLACEMENT_HASH_HASHERS_HPP_

// placement/hash/hashers.hpp: every hasher, and the lookup from a libmemcached hash name to
// its type that the runtime factory uses. (Murmur3_32, JavaStringHash, Sha1 and
// Fold15 serve single peer profiles, which name them themselves.)

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/detail/throw.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/hasher.hpp"
#include "memshard/placement/hash/java_string.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/hash/murmur3.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/placement/hash/sha1.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// kHashNames: the names visit_hasher accepts (and "default", an alias of
/// "one_at_a_time", libmemcached's default).
inline constexpr std::array<std::string_view, 9> kHashNames = {
    OneAtATime::name(), Md5::name(),     LibmemcachedCrc::name(), Crc32::name(), Fnv1_32::name(),
    Fnv1a_32::name(),   Fnv1_64::name(), Fnv1a_64::name(),        Murmur::name()};

/// visit_hasher: calls `visit(H{})` with the hasher named `name` and returns
/// what it returns. Throws ConfigError for an unknown name.
///
/// Names are memshard's: "crc" is libmemcached's 15-bit crc (twemproxy's
/// "crc32"), "crc32" is the full IEEE CRC-32 (twemproxy's "crc32a").
///
/// **Example**:
///   auto h = memshard::visit_hasher("md5", [](auto hash) { return hash("key"); });
template <class Visitor>
decltype(auto) visit_hasher(std::string_view name, Visitor&& visit) {
  if (name == OneAtATime::name() || name == "default") {
    return std::forward<Visitor>(visit)(OneAtATime{});
  }
  if (name == Md5::name()) {
    return std::forward<Visitor>(visit)(Md5{});
  }
  if (name == LibmemcachedCrc::name()) {
    return std::forward<Visitor>(visit)(LibmemcachedCrc{});
  }
  if (name == Crc32::name()) {
    return std::forward<Visitor>(visit)(Crc32{});
  }
  if (name == Fnv1_32::name()) {
    return std::forward<Visitor>(visit)(Fnv1_32{});
  }
  if (name == Fnv1a_32::name()) {
    return std::forward<Visitor>(visit)(Fnv1a_32{});
  }
  if (name == Fnv1_64::name()) {
    return std::forward<Visitor>(visit)(Fnv1_64{});
  }
  if (name == Fnv1a_64::name()) {
    return std::forward<Visitor>(visit)(Fnv1a_64{});
  }
  if (name == Murmur::name()) {
    return std::forward<Visitor>(visit)(Murmur{});
  }
  std::string known;
  for (const std::string_view hash : kHashNames) {
    known.append(known.empty() ? "" : ", ").append(hash);
  }
  detail::throw_config_error("unknown hash (known: " + known + ")", name);
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_HASHERS_HPP_
