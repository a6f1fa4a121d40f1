// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_FNV_HPP_
#define MEMSHARD_PLACEMENT_HASH_FNV_HPP_

// placement/hash/fnv.hpp: the four FNV hashes of libmemcached and twemproxy.
//
// All four widen bytes as signed char (as libmemcached does on x86). Two are
// not what their names say: Fnv1_64 keeps only the low 32 bits of the 64-bit
// FNV-1, and Fnv1a_64 is a 32-bit FNV-1a run with the 64-bit constants cut to
// 32 bits. Both are reproduced as the peers compute them.

#include <cstdint>
#include <string_view>

#include "memshard/detail/bytes.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {
inline constexpr std::uint32_t kFnv32Basis = 0x811C9DC5U;
inline constexpr std::uint32_t kFnv32Prime = 0x01000193U;
inline constexpr std::uint64_t kFnv64Basis = 0xCBF29CE484222325ULL;
inline constexpr std::uint64_t kFnv64Prime = 0x100000001B3ULL;
}  // namespace detail

/// Fnv1_32: 32-bit FNV-1 (multiply, then xor).
struct Fnv1_32 {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "fnv1_32"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    std::uint32_t h = detail::kFnv32Basis;
    for (const char c : bytes) {
      h *= detail::kFnv32Prime;
      h ^= detail::widen_signed(c);
    }
    return h;
  }
};

/// Fnv1a_32: 32-bit FNV-1a (xor, then multiply).
struct Fnv1a_32 {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "fnv1a_32"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    std::uint32_t h = detail::kFnv32Basis;
    for (const char c : bytes) {
      h ^= detail::widen_signed(c);
      h *= detail::kFnv32Prime;
    }
    return h;
  }
};

/// Fnv1_64: 64-bit FNV-1, low 32 bits of the result.
struct Fnv1_64 {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "fnv1_64"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    std::uint64_t h = detail::kFnv64Basis;
    for (const char c : bytes) {
      h *= detail::kFnv64Prime;
      h ^= static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<signed char>(c)));
    }
    return static_cast<std::uint32_t>(h);
  }
};

/// Fnv1a_64: libmemcached's and twemproxy's "fnv1a_64", which is 32-bit FNV-1a
/// with basis 0x84222325 and prime 0x1b3 (the 64-bit constants truncated).
struct Fnv1a_64 {
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "fnv1a_64"; }

  [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    auto h = static_cast<std::uint32_t>(detail::kFnv64Basis);
    for (const char c : bytes) {
      h ^= detail::widen_signed(c);
      h *= static_cast<std::uint32_t>(detail::kFnv64Prime);
    }
    return h;
  }
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_FNV_HPP_
