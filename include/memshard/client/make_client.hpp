// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_MAKE_CLIENT_HPP_
#define MEMSHARD_CLIENT_MAKE_CLIENT_HPP_

// client/make_client.hpp: make_client, a ShardedClient whose placement is a profile
// chosen by name at run time (a configuration file). Kept apart from
// sharded_client.hpp so that a client of one typed locator does not compile
// every profile.

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/client/client_options.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// make_client: a client whose placement is profile `profile` (see
/// profiles.hpp); reconfigure(servers) rebuilds the same profile for the new
/// list. Throws ConfigError for an unknown profile or hash, an invalid list or
/// invalid options. Compiled once in memshard::compiled (MEMSHARD_COMPILED_LIB).
///
/// **Example**:
///   auto client = memshard::make_client("libmemcached-ketama-weighted",
///                                       memshard::parse_servers("10.0.0.1,10.0.0.2"));
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto make_client(std::string_view profile,
                                                      std::vector<Server> servers,
                                                      ProfileOptions profile_options = {},
                                                      ClientOptions options = {})
    -> ShardedClient<AnyLocator>;

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto make_client(std::string_view profile, std::vector<Server> servers,
                                        ProfileOptions profile_options, ClientOptions options)
    -> ShardedClient<AnyLocator> {
  return ShardedClient<AnyLocator>(
      std::move(servers),
      ShardedClient<AnyLocator>::LocatorFactory(
          [name = std::string(profile), profile_options](std::span<const Server> list) {
            return std::make_shared<const AnyLocator>(make_locator(name, list, profile_options));
          }),
      options);
}
#endif

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_MAKE_CLIENT_HPP_
