// SPDX-License-Identifier: MIT
#include "memshard/placement/locators/modulo_locator.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/hash/hashers.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "support/fleet.hpp"
#include "support/locator_conformance.hpp"

namespace memshard::testing {

template <class Hash, bool kWeighted>
struct ModuloOf {
  using Locator = ModuloLocator<Hash>;
  static auto make(std::span<const Server> servers) -> Locator {
    return Locator(servers, ModuloOptions{.weighted = kWeighted});
  }
  static constexpr bool kWeights = true;
};

// An explicit bucket list: the servers in reverse order, the first one twice.
struct ModuloReversedBuckets {
  using Locator = ModuloLocator<OneAtATime>;
  static auto make(std::span<const Server> servers) -> Locator {
    ModuloBuckets buckets;
    for (std::size_t i = servers.size(); i-- > 0;) {
      buckets.servers.push_back(static_cast<std::uint32_t>(i));
    }
    buckets.servers.push_back(0);
    return Locator(servers, std::move(buckets));
  }
};

using Modulos = ::testing::Types<ModuloOf<Crc32, false>, ModuloOf<OneAtATime, false>,
                                 ModuloOf<Md5, false>, ModuloOf<Fnv1a_32, false>,
                                 ModuloOf<LibmemcachedCrc, true>, ModuloOf<Fold15<Crc32>, true>,
                                 ModuloOf<JavaStringHash, false>, ModuloReversedBuckets>;
INSTANTIATE_TYPED_TEST_SUITE_P(Modulo, LocatorConformanceTest, Modulos);
INSTANTIATE_TYPED_TEST_SUITE_P(Modulo, FailoverLocatorConformanceTest, Modulos);

}  // namespace memshard::testing

namespace modulo_locator_test {
namespace {

using memshard::ConfigError;
using memshard::Crc32;
using memshard::ModuloLocator;
using memshard::OneAtATime;
using memshard::Server;
using memshard::testing::make_fleet;

static_assert(memshard::Locator<ModuloLocator<Crc32>>);
static_assert(noexcept(std::declval<const ModuloLocator<Crc32>&>().locate("k")));

TEST(ModuloLocatorTest, IsHashModuloCount) {
  std::mt19937 rng(5);
  for (std::size_t n : {2U, 3U, 7U, 10U, 100U}) {
    const auto servers = make_fleet(n);
    const ModuloLocator<Crc32> crc(servers);
    const ModuloLocator<OneAtATime> oaat(servers);
    for (const auto& key : memshard::testing::random_keys(rng, 2000)) {
      ASSERT_EQ(crc.locate(key), Crc32{}(key) % n);
      ASSERT_EQ(oaat.locate(key), OneAtATime{}(key) % n);
    }
  }
}

TEST(ModuloLocatorTest, OneServerTakesEveryKey) {
  const auto servers = make_fleet(1);
  const ModuloLocator<Crc32> locator(servers);
  EXPECT_EQ(locator.size(), 1U);
  EXPECT_EQ(locator.locate("anything"), 0U);
  EXPECT_EQ(locator.locate(""), 0U);
}

TEST(ModuloLocatorTest, UnweightedIgnoresWeights) {
  auto servers = make_fleet(3);
  servers[1].weight = 5;
  const ModuloLocator<Crc32> locator(servers);
  EXPECT_EQ(locator.locate("tokyo"), Crc32{}("tokyo") % 3);
}

TEST(ModuloLocatorTest, WeightedRepeatsEachServerWeightTimes) {
  auto servers = make_fleet(3);
  servers[0].weight = 2;
  servers[2].weight = 3;
  const ModuloLocator<Crc32> locator(servers, {.weighted = true});
  const std::vector<std::size_t> buckets = {0, 0, 1, 2, 2, 2};
  std::mt19937 rng(8);
  for (const auto& key : memshard::testing::random_keys(rng, 2000)) {
    ASSERT_EQ(locator.locate(key), buckets[Crc32{}(key) % buckets.size()]);
  }
  servers[1].weight = 1.5;
  EXPECT_THROW(ModuloLocator<Crc32>(servers, {.weighted = true}), ConfigError);
}

TEST(ModuloLocatorTest, AddingAServerMovesMostKeys) {
  // The reason consistent hashing exists: N -> N+1 moves about N/(N+1) of keys.
  const std::size_t n = 10;
  const auto before = make_fleet(n);
  const auto after = make_fleet(n + 1);
  const ModuloLocator<Crc32> old_locator(before);
  const ModuloLocator<Crc32> new_locator(after);
  std::mt19937 rng(11);
  const auto keys = memshard::testing::random_keys(rng, 50000, 40);
  const auto moved = std::count_if(keys.begin(), keys.end(), [&](const std::string& key) {
    return old_locator.locate(key) != new_locator.locate(key);
  });
  const double fraction = static_cast<double>(moved) / static_cast<double>(keys.size());
  EXPECT_NEAR(fraction, 10.0 / 11.0, 0.01);
}

TEST(ModuloLocatorTest, ConfigurationErrorsThrow) {
  EXPECT_THROW(ModuloLocator<Crc32>(std::span<const Server>{}), ConfigError);
  auto servers = make_fleet(2);
  servers[1] = servers[0];
  EXPECT_THROW(ModuloLocator<Crc32>{servers}, ConfigError);
  servers = make_fleet(2);
  servers[0].weight = 0;
  EXPECT_THROW(ModuloLocator<Crc32>{servers}, ConfigError);
}

}  // namespace
}  // namespace modulo_locator_test
