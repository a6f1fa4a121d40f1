// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HASH_RUNTIME_HASH_HPP_
#define MEMSHARD_PLACEMENT_HASH_RUNTIME_HASH_HPP_

// placement/hash/runtime_hash.hpp: RuntimeHash, a hasher chosen at run time. The registry
// (make_locator) builds a profile with a hash other than its default through it, so that
// one locator type serves every name of a hash vocabulary instead of one type per hash
// (which every unit including the registry would instantiate). Each key then costs one
// indirect call; a profile's default hash stays a typed, inlined hasher.

#include <cstdint>
#include <string_view>

#include "memshard/placement/hash/hasher.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// RuntimeHash: the Hasher `H` of `RuntimeHash::of<H>()`, behind a function
/// pointer. The one hasher with state (which hash it is): a locator over it
/// keeps the instance it was built with. Default-constructed it is OneAtATime.
///
/// **Example**:
///   const auto hash = memshard::RuntimeHash::of<memshard::Md5>();
///   memshard::KetamaLocator<memshard::RuntimeHash> ring(servers, {}, hash);
class RuntimeHash {
 public:
  constexpr RuntimeHash() noexcept = default;

  /// of: the hasher `H`, chosen at run time.
  template <Hasher H>
  [[nodiscard]] static constexpr auto of() noexcept -> RuntimeHash {
    return RuntimeHash(&call<H>, H::name());
  }

  /// "runtime": what the type is; hash_name() says which hash an instance is.
  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "runtime"; }

  /// hash_name: the name of the hash this instance computes ("md5").
  [[nodiscard]] constexpr auto hash_name() const noexcept -> std::string_view { return name_; }

  [[nodiscard]] auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    return function_(bytes);
  }

 private:
  using Function = std::uint32_t (*)(std::string_view) noexcept;

  constexpr RuntimeHash(Function function, std::string_view name) noexcept
      : function_(function), name_(name) {}

  template <Hasher H>
  static auto call(std::string_view bytes) noexcept -> std::uint32_t {
    return H{}(bytes);
  }

  Function function_ = &call<OneAtATime>;
  std::string_view name_ = OneAtATime::name();
};

static_assert(Hasher<RuntimeHash>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_HASH_RUNTIME_HASH_HPP_
