// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_HASHER_HPP_
#define MEMSHARD_PLACEMENT_HASH_HASHER_HPP_

// placement/hash/hasher.hpp: the Hasher concept that every key and point hash satisfies.

#include <concepts>
#include <cstdint>
#include <string_view>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Hasher: a stateless function object that maps bytes to a 32-bit value.
///
/// Contract, member by member:
/// - `H{}`: default-constructible; all instances are equivalent (no seed, no
///   state), except RuntimeHash's (placement/hash/runtime_hash.hpp), whose
///   instance says which of these hashers it is; locators keep their hasher. Placement must be
///   identical across processes, machines and languages, so a Hasher is never `std::hash` or
///   anything seeded per process.
/// - `h(std::string_view bytes) noexcept -> std::uint32_t`: a pure function of
///   the bytes. It must accept any bytes, including the empty string and bytes
///   >= 0x80, and never throw or allocate.
/// - `H::name() noexcept`: the hash's name as the runtime factory spells it
///   (for example "one_at_a_time", "md5", "crc").
///
/// **Example**:
///   struct Xor { static constexpr auto name() noexcept { return std::string_view("xor"); }
///                constexpr auto operator()(std::string_view s) const noexcept -> std::uint32_t
///                { std::uint32_t h = 0; for (char c : s) h ^= static_cast<unsigned char>(c);
///                  return h; } };
///   static_assert(memshard::Hasher<Xor>);
template <class H>
concept Hasher = std::default_initializable<H> && requires(const H& hash, std::string_view bytes) {
  { hash(bytes) }
  noexcept->std::same_as<std::uint32_t>;
  { H::name() }
  noexcept->std::convertible_to<std::string_view>;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_HASHER_HPP_
