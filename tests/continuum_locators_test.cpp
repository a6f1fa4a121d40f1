// SPDX-License-Identifier: MIT
// continuum_locators.hpp: CompatContinuumLocator (Cache::Memcached::Fast) and
// BucketedRingLocator (pecl memcache) against their definitions written out
// here, and the locator conformance suites.
#include "memshard/placement/locators/continuum_locators.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/profiles.hpp"
#include "support/fleet.hpp"
#include "support/locator_conformance.hpp"

namespace memshard::testing {

template <class Hash>
struct CompatContinuumOf {
  using Locator = CompatContinuumLocator<Hash>;
  static auto make(std::span<const Server> servers) -> Locator { return Locator(servers); }
  static constexpr bool kWeights = true;
};

using CompatContinuums =
    ::testing::Types<CompatContinuumOf<LibmemcachedCrc>, CompatContinuumOf<Crc32>>;
INSTANTIATE_TYPED_TEST_SUITE_P(CompatContinuum, LocatorConformanceTest, CompatContinuums);
INSTANTIATE_TYPED_TEST_SUITE_P(CompatContinuum, FailoverLocatorConformanceTest, CompatContinuums);

template <class Hash, std::size_t kPoints>
struct BucketedRingOf {
  using Locator = BucketedRingLocator<Hash>;
  static auto make(std::span<const Server> servers) -> Locator { return Locator(servers, kPoints); }
  static constexpr bool kWeights = true;
};

using BucketedRings = ::testing::Types<BucketedRingOf<Crc32, 160>, BucketedRingOf<Fnv1a_32, 160>,
                                       BucketedRingOf<Crc32, 7>>;
INSTANTIATE_TYPED_TEST_SUITE_P(BucketedRing, LocatorConformanceTest, BucketedRings);
INSTANTIATE_TYPED_TEST_SUITE_P(BucketedRing, FailoverLocatorConformanceTest, BucketedRings);
INSTANTIATE_TYPED_TEST_SUITE_P(BucketedRing, ConsistentLocatorConformanceTest, BucketedRings);

}  // namespace memshard::testing

namespace continuum_locators_test {
namespace {

using memshard::ConfigError;
using memshard::Crc32;
using memshard::Server;
using memshard::testing::FleetShape;
using memshard::testing::random_ascii_keys;
using memshard::testing::random_fleet;

TEST(CompatContinuumLocatorTest, EqualsTheWeightedBucketListForWholeWeights) {
  std::mt19937 rng(3);
  for (const std::size_t n : {1U, 2U, 3U, 5U, 10U, 25U, 60U}) {
    const auto servers = random_fleet(rng, n, FleetShape{.weights = true});
    const memshard::CompatContinuumLocator<> continuum(servers);
    const auto buckets = memshard::profiles::cache_memcached(servers);
    for (std::uint32_t hash = 0; hash < 0x8000U; ++hash) {
      ASSERT_EQ(continuum.locate_hash(hash), buckets.locate_hash(hash)) << n << " " << hash;
    }
  }
}

TEST(CompatContinuumLocatorTest, FractionalWeightsGetProportionalShares) {
  const auto servers = memshard::parse_servers("a:1:0.5,b:1:2.5,c:1:1");
  const memshard::CompatContinuumLocator<> continuum(servers);
  std::vector<int> counts(3, 0);
  for (std::uint32_t hash = 0; hash < 0x8000U; ++hash) {
    ++counts[continuum.locate_hash(hash)];
  }
  // Total 4 buckets of weight: shares 0.5/4, 2.5/4, 1/4 of the bucket
  // positions, as far as 4 buckets can express them.
  EXPECT_GT(counts[1], counts[2]);
  EXPECT_GT(counts[2], 0);
  EXPECT_EQ(counts[0] + counts[1] + counts[2], 0x8000);
}

TEST(BucketedRingLocatorTest, MatchesTheDefinition) {
  std::mt19937 rng(4);
  for (const std::size_t n : {2U, 3U, 10U}) {
    auto servers = random_fleet(rng, n, FleetShape{.weights = n == 3});
    const memshard::BucketedRingLocator<Crc32> locator(servers);
    // The ring: 160 x weight points "host:port-i", full CRC-32.
    std::vector<std::pair<std::uint32_t, std::size_t>> ring;
    for (std::size_t s = 0; s < servers.size(); ++s) {
      const auto count = static_cast<std::size_t>(servers[s].weight) * 160;
      for (std::size_t i = 0; i < count; ++i) {
        ring.emplace_back(Crc32{}(servers[s].host + ":" + std::to_string(servers[s].port) + "-" +
                                  std::to_string(i)),
                          s);
      }
    }
    std::sort(ring.begin(), ring.end());
    for (const std::string& key : random_ascii_keys(rng, 3000)) {
      const std::uint32_t target = (Crc32{}(key) % 1024U) * 4194303U;
      auto point = std::find_if(ring.begin(), ring.end(),
                                [target](const auto& p) { return p.first >= target; });
      const std::size_t expected = point == ring.end() ? ring.front().second : point->second;
      ASSERT_EQ(locator.locate(key), expected) << key;
    }
  }
}

TEST(PeerValidationTest, WeightsNoClientCanExpressAreRefused) {
  EXPECT_THROW(static_cast<void>(memshard::profiles::dalli(memshard::parse_servers("a:1:1.5,b:1"))),
               ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::CompatContinuumLocator<>(
                   memshard::parse_servers("a:1:5000000000,b:1"))),
               ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::BucketedRingLocator<Crc32>(
                   memshard::parse_servers("a:1:5000000000,b:1"))),
               ConfigError);
  EXPECT_THROW(static_cast<void>(
                   memshard::BucketedRingLocator<Crc32>(memshard::parse_servers("a:1:2.5,b:1"))),
               ConfigError);
}

}  // namespace
}  // namespace continuum_locators_test
