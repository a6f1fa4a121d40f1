// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_SAME_PLACEMENT_HPP_
#define MEMSHARD_TESTS_SUPPORT_SAME_PLACEMENT_HPP_

// support/same_placement.hpp: same_placement(), whether a typed profile
// constructor and the registry entry of a profile name place keys alike.

#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/profiles.hpp"
#include "support/fleet.hpp"

namespace memshard::testing {

/// same_placement: success when `typed` and make_locator(profile, servers,
/// options) have the same size and place each of 3,000 random keys (and the
/// all-byte edge keys) on the same server; else the first key that differs.
template <Locator L>
auto same_placement(const L& typed, std::string_view profile, std::span<const Server> servers,
                    const ProfileOptions& options = {}) -> ::testing::AssertionResult {
  const AnyLocator registry = make_locator(profile, servers, options);
  if (typed.size() != registry.size()) {
    return ::testing::AssertionFailure() << registry.description() << ": typed size "
                                         << typed.size() << ", registry " << registry.size();
  }
  std::mt19937 rng(3000);
  std::vector<std::string> keys = random_keys(rng, 3000);
  std::string all_bytes;
  for (int byte = 0; byte < 256; ++byte) {
    all_bytes.push_back(static_cast<char>(byte));
  }
  keys.push_back(all_bytes);
  keys.emplace_back(all_bytes.rbegin(), all_bytes.rend());
  keys.emplace_back(250, 'k');
  for (const std::string& key : keys) {
    const std::size_t expected = registry.locate(key);
    const std::size_t actual = typed.locate(key);
    if (actual != expected) {
      return ::testing::AssertionFailure() << registry.description() << ": key '" << key
                                           << "' typed " << actual << ", registry " << expected;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_SAME_PLACEMENT_HPP_
