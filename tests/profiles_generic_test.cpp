// SPDX-License-Identifier: MIT
// The articles' placements (placement/profiles/generic.hpp): their published examples,
// the ring's definition written out, and the typed constructors equal to the
// registry for every libhashkit hash name, and the server lists the ring refuses.
#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/placement/profiles/generic.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace profiles_generic_test {
namespace {

using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

// The articles' published placements: crc32(key) % 3 over node1..node3.
TEST(ArticleProfileTest, ModuloCrc32PublishedPlacements) {
  const auto servers = memshard::parse_servers("node1:11211,node2:11211,node3:11211");
  const auto locator = memshard::make_locator("modulo-crc32", servers);
  EXPECT_EQ(servers[locator.locate("tokyo")].host, "node2");
  EXPECT_EQ(servers[locator.locate("kanagawa")].host, "node3");
  EXPECT_EQ(servers[locator.locate("chiba")].host, "node2");
  EXPECT_EQ(servers[locator.locate("saitama")].host, "node1");
  EXPECT_EQ(servers[locator.locate("gunma")].host, "node1");
}

TEST(ArticleProfileTest, RingCrc32IsSixtyFourNamedPointsPerServer) {
  // The definition, written out: every point crc32("name-i"), the key goes to
  // the owner of the smallest point >= crc32(key), else of the smallest point.
  const auto servers = memshard::parse_servers(
      "10.0.0.1:11211:1:node1,10.0.0.2:11211:1:node2,10.0.0.3:11211:1:node3");
  const auto locator = memshard::make_locator("ring-crc32", servers);
  std::mt19937 rng(64);
  for (const auto& key : memshard::testing::random_keys(rng, 3000, 30)) {
    const std::uint32_t h = memshard::Crc32{}(key);
    std::uint64_t best_above = UINT64_MAX;
    std::uint64_t best_any = UINT64_MAX;
    std::size_t owner_above = 0;
    std::size_t owner_any = 0;
    for (std::size_t s = 0; s < servers.size(); ++s) {
      for (int i = 0; i < 64; ++i) {
        const std::uint32_t point = memshard::Crc32{}(servers[s].name + "-" + std::to_string(i));
        if (point >= h && point < best_above) {
          best_above = point;
          owner_above = s;
        }
        if (point < best_any) {
          best_any = point;
          owner_any = s;
        }
      }
    }
    ASSERT_EQ(locator.locate(key), best_above != UINT64_MAX ? owner_above : owner_any) << key;
  }
}

// Both articles' placements with hasher H against the registry with libhashkit's `name` for it.
template <memshard::Hasher H>
void expect_both_match(std::span<const memshard::Server> servers, const char* name) {
  SCOPED_TRACE(name);
  EXPECT_TRUE(
      same_placement(profiles::modulo_crc32<H>(servers), "modulo-crc32", servers, {.hash = name}));
  EXPECT_TRUE(
      same_placement(profiles::ring_crc32<H>(servers), "ring-crc32", servers, {.hash = name}));
  EXPECT_TRUE(same_placement(profiles::ring_crc32<H>(servers, 16), "ring-crc32", servers,
                             {.hash = name, .points = 16}));
}

TEST(ArticleProfileTest, TypedConstructorsEqualTheRegistryForEveryLibhashkitHash) {
  std::mt19937 rng(71);
  const auto servers = random_fleet(rng, 6);
  EXPECT_TRUE(same_placement(profiles::modulo_crc32(servers), "modulo-crc32", servers));
  EXPECT_TRUE(same_placement(profiles::ring_crc32(servers), "ring-crc32", servers));
  expect_both_match<memshard::OneAtATime>(servers, "one_at_a_time");
  expect_both_match<memshard::OneAtATime>(servers, "default");
  expect_both_match<memshard::Md5>(servers, "md5");
  expect_both_match<memshard::LibmemcachedCrc>(servers, "crc");
  expect_both_match<memshard::Crc32>(servers, "crc32");
  expect_both_match<memshard::Fnv1_32>(servers, "fnv1_32");
  expect_both_match<memshard::Fnv1a_32>(servers, "fnv1a_32");
  expect_both_match<memshard::Fnv1_64>(servers, "fnv1_64");
  expect_both_match<memshard::Fnv1a_64>(servers, "fnv1a_64");
  expect_both_match<memshard::Murmur>(servers, "murmur");
}

TEST(ArticleProfileTest, RingServersThatWouldShareEveryPointAreRefused) {
  // A name equal to another server's "host:port".
  EXPECT_THROW(static_cast<void>(profiles::ring_crc32(
                   memshard::parse_servers("a:11211,b:11211:1:a:11211,c:11211"))),
               memshard::ConfigError);
}

}  // namespace
}  // namespace profiles_generic_test
