// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_REGISTRY_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_REGISTRY_HPP_

// placement/profiles/registry.hpp: the runtime side of the profiles. kProfiles lists
// every family's entries (ProfileInfo, defined next to their typed
// constructors); find_profile looks one up by name; make_locator builds a
// profile by name for a server list, with ProfileOptions.

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/detail/compiled.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/hash_tag.hpp"
#include "memshard/placement/profiles/dalli.hpp"
#include "memshard/placement/profiles/generic.hpp"
#include "memshard/placement/profiles/gomemcache.hpp"
#include "memshard/placement/profiles/libmemcached.hpp"
#include "memshard/placement/profiles/perl.hpp"
#include "memshard/placement/profiles/php_memcache.hpp"
#include "memshard/placement/profiles/php_memcached.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/profiles/python.hpp"
#include "memshard/placement/profiles/spymemcached.hpp"
#include "memshard/placement/profiles/twemproxy.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// kProfiles: every profile make_locator knows, in the order --list-profiles
/// prints them.
MEMSHARD_DETAIL_DECLARE_ENTRY(kProfiles, std::array<ProfileInfo, 23>)
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_ENTRY std::array<ProfileInfo, 23> kProfiles = {
    profiles::kLibmemcachedModulaProfile,
    profiles::kLibmemcachedKetamaProfile,
    profiles::kLibmemcachedKetamaWeightedProfile,
    profiles::kLibmemcachedKetamaSpyProfile,
    profiles::kPhpMemcachedProfile,
    profiles::kPhpMemcachedLibketamaProfile,
    profiles::kPhpMemcachedConsistentProfile,
    profiles::kTwemproxyKetamaProfile,
    profiles::kTwemproxyModulaProfile,
    profiles::kSpymemcachedKetamaProfile,
    profiles::kSpymemcachedKetamaLibmemcachedProfile,
    profiles::kSpymemcachedArraymodProfile,
    profiles::kCacheMemcachedProfile,
    profiles::kCacheMemcachedFastProfile,
    profiles::kPythonMemcacheProfile,
    profiles::kPymemcacheRendezvousProfile,
    profiles::kPymemcacheRendezvousBytesProfile,
    profiles::kPhpMemcacheProfile,
    profiles::kPhpMemcacheStandardProfile,
    profiles::kDalliProfile,
    profiles::kGomemcacheProfile,
    profiles::kModuloCrc32Profile,
    profiles::kRingCrc32Profile,
};
#endif

/// find_profile: the entry for `name`, or nullptr.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto find_profile(std::string_view name) noexcept
    -> const ProfileInfo*;

/// make_locator: builds the placement of profile `name` for `servers`.
/// Throws ConfigError for an unknown profile, a hash the profile does not take,
/// a points option on a profile without one, or an invalid server list.
///
/// **Example**:
///   auto locator = memshard::make_locator("libmemcached-ketama-weighted",
///                                         memshard::parse_servers("a:11211,b:11211"));
///   std::size_t index = locator.locate("user:42");
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto make_locator(std::string_view name,
                                                       std::span<const Server> servers,
                                                       const ProfileOptions& options = {})
    -> AnyLocator;

// Defined in the library in the compiled mode, with the registry's entries.
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto find_profile(std::string_view name) noexcept -> const ProfileInfo* {
  for (const ProfileInfo& profile : kProfiles) {
    if (profile.name == name) {
      return &profile;
    }
  }
  return nullptr;
}

MEMSHARD_DETAIL_INLINE auto make_locator(std::string_view name, std::span<const Server> servers,
                                         const ProfileOptions& options) -> AnyLocator {
  const ProfileInfo* profile = find_profile(name);
  if (profile == nullptr) {
    std::string known;
    for (const ProfileInfo& entry : kProfiles) {
      known.append(known.empty() ? "" : ", ").append(entry.name);
    }
    memshard::detail::throw_config_error("unknown profile (known: " + known + ")", name);
  }
  if (options.points != 0 && !profile->has_points) {
    memshard::detail::throw_config_error("profile takes no points option", name);
  }
  if (!options.hash.empty() && profile->hashes.empty()) {
    memshard::detail::throw_config_error("profile takes no hash option", name);
  }
  if (!options.hash_tag.empty() && !profile->has_hash_tag) {
    memshard::detail::throw_config_error("only the twemproxy profiles take hash_tag", name);
  }
  if (options.weighted.has_value() && !profile->has_weighted) {
    memshard::detail::throw_config_error("only the spymemcached ketama profiles take weighted",
                                         name);
  }
  const std::string_view hash = options.hash.empty() ? profile->default_hash : options.hash;
  std::string description(name);
  if (!hash.empty()) {
    description.append(" hash=").append(hash);
  }
  if (options.points != 0) {
    description.append(" points=").append(std::to_string(options.points));
  }
  if (options.weighted.has_value()) {
    description.append(*options.weighted ? " weighted=true" : " weighted=false");
  }
  const BuildLocator build = profile->hashes.empty()
                                 ? profile->build
                                 : profiles::detail::hash_choice(*profile, hash).build;
  if (!options.hash_tag.empty()) {
    const HashTag tag = HashTag::parse(options.hash_tag);
    description.append(" hash_tag=").append(options.hash_tag);
    const AnyLocator inner = build(servers, options, description);
    return AnyLocator(HashTagLocator<AnyLocator>(inner, tag), std::move(description));
  }
  return build(servers, options, std::move(description));
}

#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_PROFILES_REGISTRY_HPP_
