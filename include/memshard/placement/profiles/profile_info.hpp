// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_PROFILE_INFO_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_PROFILE_INFO_HPP_

// placement/profiles/profile_info.hpp: what a registry entry is made of. ProfileOptions
// (make_locator's run-time overrides), HashChoice (one name of a peer's hash
// vocabulary and how the profile builds with it), ProfileInfo (one profile),
// and hash_names(), the display text of a profile's hashes. The family headers
// (placement/profiles/libmemcached.hpp, ...) define their entries with these; the
// registry (placement/profiles/registry.hpp) lists them.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "memshard/detail/compiled.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/placement/hash/runtime_hash.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// ProfileOptions: run-time overrides for make_locator.
struct ProfileOptions {
  /// A hash name in the profile's own vocabulary (see ProfileInfo::hashes);
  /// empty keeps the profile's default.
  std::string hash = {};
  /// Points per server for ring profiles that take it; 0 keeps the default.
  /// For cache-memcached-fast it is `ketama_points` (0: the default dispatch).
  std::size_t points = 0;
  /// For the spymemcached ketama profiles: whether the Java locator was given a
  /// weights map. Unset: true when any weight is not 1.
  std::optional<bool> weighted = std::nullopt;
  /// For the twemproxy profiles: the pool's `hash_tag` (two characters, e.g.
  /// "{}"); empty for none. Only the tagged part of a key is hashed.
  std::string hash_tag = {};
};

/// BuildLocator: how a registry entry builds its locator for `servers`; the
/// result carries `description`.
using BuildLocator = AnyLocator (*)(std::span<const Server> servers, const ProfileOptions& options,
                                    std::string description);

/// HashChoice: one name of a peer's hash vocabulary (as its configuration
/// spells it) and how a profile builds with that hasher. A vocabulary is an
/// array of them; see kLibhashkitHashes (placement/profiles/libhashkit_hashes.hpp).
struct HashChoice {
  /// The name, as the peer spells it ("crc32" means the 15-bit crc to
  /// twemproxy, the full CRC-32 to libmemcached).
  std::string_view name;
  /// A short note shown after the name, "crc32 (15-bit)"; empty for none.
  std::string_view note = {};
  /// Builds the profile with this hasher; nullptr for a name the peer knows
  /// but memshard refuses (see `refusal`).
  BuildLocator build = nullptr;
  /// An alias ("default"): accepted, but not listed by hash_names().
  bool alias = false;
  /// Why a refused name is refused (the ConfigError's message); refused names
  /// are not listed either.
  std::string_view refusal = {};
};

/// ProfileInfo: one entry of the profile registry (kProfiles). Each family
/// header defines its entries next to the typed constructor they describe.
struct ProfileInfo {
  /// The name make_locator and memshard-locate take ("libmemcached-ketama").
  std::string_view name;
  /// What the profile reproduces, in one line.
  std::string_view summary;
  /// The hash used when ProfileOptions::hash is empty ("" if the hash is fixed).
  std::string_view default_hash = {};
  /// The profile's hash vocabulary: every name it accepts; empty when the hash
  /// is fixed (then `build` builds it). hash_names() gives its display text.
  std::span<const HashChoice> hashes = {};
  bool has_points = false;    ///< whether the profile takes a points option
  bool has_weighted = false;  ///< whether the profile takes a weighted option
  bool has_hash_tag = false;  ///< whether the profile takes a hash_tag option
  /// Builds a profile whose hash is fixed (`hashes` empty); else nullptr.
  BuildLocator build = nullptr;
};

/// hash_names: the display text of the hashes `profile` accepts, in its
/// vocabulary's order, each with its note: "md5, one_at_a_time, crc32 (15-bit),
/// crc32a, ..."; empty for a profile with a fixed hash. Aliases and refused
/// names are left out.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto hash_names(const ProfileInfo& profile) -> std::string;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto hash_names(const ProfileInfo& profile) -> std::string {
  std::string text;
  for (const HashChoice& choice : profile.hashes) {
    if (choice.build == nullptr || choice.alias) {
      continue;
    }
    text.append(text.empty() ? "" : ", ").append(choice.name);
    if (!choice.note.empty()) {
      text.append(" (").append(choice.note).append(")");
    }
  }
  return text;
}
#endif

namespace profiles::detail {

// hash_choice: the entry of `profile`'s vocabulary named `name`. Throws
// ConfigError for a refused or unknown name.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto hash_choice(const ProfileInfo& profile,
                                                      std::string_view name) -> const HashChoice&;
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto hash_choice(const ProfileInfo& profile, std::string_view name)
    -> const HashChoice& {
  for (const HashChoice& choice : profile.hashes) {
    if (choice.name != name) {
      continue;
    }
    if (choice.build == nullptr) {
      memshard::detail::throw_config_error(choice.refusal, name);
    }
    return choice;
  }
  memshard::detail::throw_config_error(
      "unknown hash for " + std::string(profile.name) + " (known: " + hash_names(profile) + ")",
      name);
}
#endif

// make_any_with: a BuildLocator for `Make::make<Hash>(servers, options)`, the
// entry of a vocabulary.
template <class Make, class Hash>
auto make_any_with(std::span<const Server> servers, const ProfileOptions& options,
                   std::string description) -> AnyLocator {
  return AnyLocator(Make::template make<Hash>(servers, options), std::move(description));
}

// build_runtime: `Make::make` over RuntimeHash `hash`, one function per profile
// (never inlined into make_any_runtime, so the locator's construction is
// compiled once per profile, not once per hash).
template <class Make>
[[gnu::noinline]] auto build_runtime(std::span<const Server> servers, const ProfileOptions& options,
                                     std::string description, RuntimeHash hash) -> AnyLocator {
  return AnyLocator(Make::template make<RuntimeHash>(servers, options, hash),
                    std::move(description));
}

// make_any_runtime: a BuildLocator for `Make::make` with Hash chosen at run time
// (RuntimeHash): every such entry of a vocabulary shares one locator type, so a
// unit that includes the registry instantiates and compiles each profile once,
// not once per hash. Costs one indirect call per key.
template <class Make, class Hash>
auto make_any_runtime(std::span<const Server> servers, const ProfileOptions& options,
                      std::string description) -> AnyLocator {
  return build_runtime<Make>(servers, options, std::move(description), RuntimeHash::of<Hash>());
}

// vocabulary_build: how the entry `Hash` of Make's vocabulary builds: typed
// (inlined hash) for the profile's default hash, `Make::default_hash`; through
// RuntimeHash for the others.
template <class Make, class Hash>
constexpr auto vocabulary_build() noexcept -> BuildLocator {
  if constexpr (std::is_same_v<Hash, typename Make::default_hash>) {
    return &make_any_with<Make, Hash>;
  } else {
    return &make_any_runtime<Make, Hash>;
  }
}

// make_any_from: a BuildLocator for a typed constructor that takes only the
// servers.
template <auto Constructor>
auto make_any_from(std::span<const Server> servers, const ProfileOptions& /*options*/,
                   std::string description) -> AnyLocator {
  return AnyLocator(Constructor(servers), std::move(description));
}

}  // namespace profiles::detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_PROFILE_INFO_HPP_
