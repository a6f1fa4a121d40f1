// SPDX-License-Identifier: MIT
// KetamaLocator's properties, independent of any peer: the search against a
// brute-force reference, wrap-around, ties, weights, movement on resize and
// balance. Agreement with real clients is in profiles_test.cpp.
#include "memshard/placement/locators/ketama_locator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/hash/hashers.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "support/fleet.hpp"
#include "support/locator_conformance.hpp"

namespace memshard::testing {

template <class Hash, KetamaOptions kOptions, bool kWeighted = true>
struct KetamaOf {
  using Locator = KetamaLocator<Hash>;
  static auto make(std::span<const Server> servers) -> Locator {
    return Locator(servers, kOptions);
  }
  static constexpr bool kWeights = kWeighted;
};

// libketama (md5 x4, float32 weights) and rings of one point per string, in
// every point format, count, tie rule and search direction.
inline constexpr KetamaOptions kLibketama{};
inline constexpr KetamaOptions kFixedKeyHash{.points_per_server = 100,
                                             .format = PointFormat::kLibmemcached,
                                             .point_hash = PointHash::kKeyHash,
                                             .count = PointCount::kFixed};
inline constexpr KetamaOptions kSlashHostPortMd5x4{.points_per_server = 160,
                                                   .format = PointFormat::kSlashHostPort,
                                                   .point_hash = PointHash::kMd5x4,
                                                   .count = PointCount::kFixed,
                                                   .ties = TieBreak::kLastServer};
inline constexpr KetamaOptions kNamedByNameOrder{.points_per_server = 160,
                                                 .format = PointFormat::kNameOrLibmemcached,
                                                 .point_hash = PointHash::kMd5x4,
                                                 .count = PointCount::kWeightedFloat32,
                                                 .ties = TieBreak::kNameOrder};
inline constexpr KetamaOptions kDalliLike{.points_per_server = 160,
                                          .format = PointFormat::kNameColon,
                                          .point_hash = PointHash::kSha1,
                                          .count = PointCount::kWeightedShare,
                                          .ties = TieBreak::kFirstServer,
                                          .search = RingSearch::kLastAtOrBefore};
inline constexpr KetamaOptions kChainedScaled{.points_per_server = 150,
                                              .format = PointFormat::kHostNulPortChained,
                                              .point_hash = PointHash::kCrc32,
                                              .count = PointCount::kScaledWeight};
inline constexpr KetamaOptions kNameKeyHash{.points_per_server = 40,
                                            .format = PointFormat::kName,
                                            .point_hash = PointHash::kKeyHash,
                                            .count = PointCount::kFixed};

using Rings = ::testing::Types<KetamaOf<Md5, kLibketama>, KetamaOf<OneAtATime, kLibketama>,
                               KetamaOf<Crc32, kFixedKeyHash>, KetamaOf<OneAtATime, kFixedKeyHash>,
                               KetamaOf<Md5, kSlashHostPortMd5x4>, KetamaOf<Md5, kNamedByNameOrder>,
                               KetamaOf<Crc32, kDalliLike>, KetamaOf<Crc32, kChainedScaled>,
                               KetamaOf<Murmur, kNameKeyHash>, KetamaOf<Fnv1a_32, kNameKeyHash>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Ketama, LocatorConformanceTest, Rings);
INSTANTIATE_TYPED_TEST_SUITE_P(Ketama, BatchLocatorConformanceTest, Rings);
INSTANTIATE_TYPED_TEST_SUITE_P(Ketama, FailoverLocatorConformanceTest, Rings);

// Rings whose point counts do not depend on the other servers: a list without
// one server keeps every other point.
using ConsistentRings =
    ::testing::Types<KetamaOf<Crc32, kFixedKeyHash>, KetamaOf<OneAtATime, kFixedKeyHash>,
                     KetamaOf<Md5, kSlashHostPortMd5x4>, KetamaOf<Crc32, kChainedScaled>,
                     KetamaOf<Murmur, kNameKeyHash>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Ketama, ConsistentLocatorConformanceTest, ConsistentRings);

}  // namespace memshard::testing

namespace ketama_locator_test {
namespace {

using memshard::ConfigError;
using memshard::Crc32;
using memshard::KetamaLocator;
using memshard::KetamaOptions;
using memshard::LibmemcachedCrc;
using memshard::Md5;
using memshard::PointCount;
using memshard::PointFormat;
using memshard::PointHash;
using memshard::RingPoint;
using memshard::Server;
using memshard::TieBreak;
using memshard::testing::make_fleet;

static_assert(memshard::Locator<KetamaLocator<Md5>>);
static_assert(noexcept(std::declval<const KetamaLocator<Md5>&>().locate("k")));
static_assert(noexcept(std::declval<const KetamaLocator<Md5>&>().locate_hash(1U)));

// A hasher with few distinct values, to force ties and crowded buckets.
struct Mod7 {
  static constexpr auto name() noexcept -> std::string_view { return "mod7"; }
  constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint32_t {
    return Crc32{}(bytes) % 7U;
  }
};

// The definition, by brute force: the first point >= hash, else point 0.
template <class Ring>
auto reference_locate(const Ring& ring, std::uint32_t hash) -> std::size_t {
  const auto points = ring.points();
  const auto it = std::lower_bound(points.begin(), points.end(), hash,
                                   [](const RingPoint& p, std::uint32_t h) { return p.value < h; });
  return it == points.end() ? points.front().server : it->server;
}

template <class Ring>
void expect_search_matches_reference(const Ring& ring, std::mt19937& rng) {
  const auto points = ring.points();
  for (int i = 0; i < 20000; ++i) {
    const auto hash = static_cast<std::uint32_t>(rng());
    ASSERT_EQ(ring.locate_hash(hash), reference_locate(ring, hash)) << hash;
  }
  // Every point, its neighbours, and the ends of the ring.
  for (const RingPoint& point : points) {
    for (const std::uint32_t hash : {point.value - 1, point.value, point.value + 1}) {
      ASSERT_EQ(ring.locate_hash(hash), reference_locate(ring, hash)) << hash;
    }
  }
  for (const std::uint32_t hash : {0U, 1U, std::numeric_limits<std::uint32_t>::max()}) {
    ASSERT_EQ(ring.locate_hash(hash), reference_locate(ring, hash)) << hash;
  }
}

TEST(KetamaLocatorTest, SearchMatchesBruteForceForManySizes) {
  std::mt19937 rng(1);
  for (std::size_t n : {1U, 2U, 3U, 10U, 100U, 1000U}) {
    const auto servers = make_fleet(n);
    expect_search_matches_reference(KetamaLocator<Md5>(servers), rng);
    const KetamaOptions one_point_per_string{.points_per_server = 100,
                                             .format = PointFormat::kLibmemcached,
                                             .point_hash = PointHash::kKeyHash,
                                             .count = PointCount::kFixed};
    // 15-bit point hashes crowd every point into the lowest prefix buckets.
    expect_search_matches_reference(KetamaLocator<LibmemcachedCrc>(servers, one_point_per_string),
                                    rng);
    expect_search_matches_reference(KetamaLocator<Mod7>(servers, one_point_per_string), rng);
  }
}

TEST(KetamaLocatorTest, RingIsSortedWithOnePointPerPosition) {
  const auto servers = make_fleet(50);
  const KetamaLocator<Md5> ring(servers);
  const auto points = ring.points();
  ASSERT_FALSE(points.empty());
  for (std::size_t i = 1; i < points.size(); ++i) {
    ASSERT_LT(points[i - 1].value, points[i].value);
  }
  // 50 equal weights: float32 gives 156 points each (see WeightedPointCountIsFloat32).
  EXPECT_EQ(KetamaLocator<Md5>::point_count(servers, 0, ring.options()), 156U);
  EXPECT_LE(points.size(), 50U * 156U);
  EXPECT_GT(points.size(), 50U * 156U - 5U);  // md5 collisions are rare
}

TEST(KetamaLocatorTest, WrapsPastTheLastPointToTheFirst) {
  const auto servers = make_fleet(5);
  const KetamaLocator<Md5> ring(servers);
  const auto points = ring.points();
  const RingPoint first = points.front();
  const RingPoint last = points.back();
  ASSERT_LT(last.value, std::numeric_limits<std::uint32_t>::max());
  EXPECT_EQ(ring.locate_hash(last.value + 1), first.server);
  EXPECT_EQ(ring.locate_hash(std::numeric_limits<std::uint32_t>::max()), first.server);
  EXPECT_EQ(ring.locate_hash(last.value), last.server);
  EXPECT_EQ(ring.locate_hash(0), first.server);
  EXPECT_EQ(ring.locate_hash(first.value), first.server);
}

TEST(KetamaLocatorTest, TiesGoToTheFirstOrTheLastServerAsConfigured) {
  // Mod7 gives every server the same 7 positions: each is a tie among all.
  const auto servers = make_fleet(4);
  KetamaOptions options{.points_per_server = 50,
                        .format = PointFormat::kLibmemcached,
                        .point_hash = PointHash::kKeyHash,
                        .count = PointCount::kFixed,
                        .ties = TieBreak::kFirstServer};
  const KetamaLocator<Mod7> first_wins(servers, options);
  options.ties = TieBreak::kLastServer;
  const KetamaLocator<Mod7> last_wins(servers, options);
  ASSERT_EQ(first_wins.points().size(), 7U);
  for (const RingPoint& point : first_wins.points()) {
    EXPECT_EQ(point.server, 0U);
  }
  for (const RingPoint& point : last_wins.points()) {
    EXPECT_EQ(point.server, 3U);
  }
}

TEST(KetamaLocatorTest, AnswersInTheCallersOrder) {
  // Reversing the server list reverses the indexes, not the placement.
  const auto servers = make_fleet(20);
  std::vector<Server> reversed(servers.rbegin(), servers.rend());
  const KetamaLocator<Md5> forward(servers);
  const KetamaLocator<Md5> backward(reversed);
  std::mt19937 rng(3);
  for (const auto& key : memshard::testing::random_keys(rng, 5000, 40)) {
    ASSERT_EQ(servers[forward.locate(key)], reversed[backward.locate(key)]) << key;
  }
}

TEST(KetamaLocatorTest, OneServerAnswersZero) {
  const auto servers = make_fleet(1);
  const KetamaLocator<Md5> ring(servers);
  EXPECT_EQ(ring.locate("a"), 0U);
  EXPECT_EQ(ring.locate_hash(12345), 0U);
}

TEST(KetamaLocatorTest, WeightedPointCountIsFloat32) {
  // Equal weights: 160 points, except where float32 rounding gives 156.
  for (std::size_t n : {1U, 2U, 3U, 4U, 10U, 24U, 26U, 46U, 48U, 99U}) {
    EXPECT_EQ(memshard::weighted_point_count(1, static_cast<double>(n), n, 160), 160U) << n;
  }
  for (std::size_t n : {25U, 47U, 50U, 55U, 61U, 71U, 94U, 100U}) {
    EXPECT_EQ(memshard::weighted_point_count(1, static_cast<double>(n), n, 160), 156U) << n;
  }
  // Exact arithmetic would give 160 at N = 25: float32 is what peers compute.
  EXPECT_EQ(4 * static_cast<int>(std::floor(1.0 / 25.0 * 160.0 / 4.0 * 25.0 + 1e-10)), 160);
  // Unequal weights: 1 and 3 of 4 with two servers.
  EXPECT_EQ(memshard::weighted_point_count(1, 4, 2, 160), 80U);
  EXPECT_EQ(memshard::weighted_point_count(3, 4, 2, 160), 240U);
}

TEST(KetamaLocatorTest, WeightsScaleTheShareOfKeys) {
  auto servers = make_fleet(4);
  servers[0].weight = 4;
  const KetamaLocator<Md5> ring(servers);
  EXPECT_EQ(KetamaLocator<Md5>::point_count(servers, 0, ring.options()), 4U * 4 * 160 / 7 / 4 * 4);
  std::vector<int> counts(4);
  std::mt19937 rng(9);
  const int keys = 70000;
  for (int i = 0; i < keys; ++i) {
    ++counts[ring.locate(memshard::testing::random_key(rng, 30))];
  }
  // Expected shares 4/7 and 1/7.
  EXPECT_NEAR(counts[0] / static_cast<double>(keys), 4.0 / 7.0, 0.05);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_NEAR(counts[i] / static_cast<double>(keys), 1.0 / 7.0, 0.04) << i;
  }
}

constexpr KetamaOptions kFixed160{.points_per_server = 160,
                                  .format = PointFormat::kLibmemcached,
                                  .point_hash = PointHash::kMd5x4,
                                  .count = PointCount::kFixed};

TEST(KetamaLocatorTest, AddingServersMovesKeysOnlyToThem) {
  // Monotonicity: a key either stays or moves to a new server; about m/(n+m) move.
  std::mt19937 rng(21);
  const auto keys = memshard::testing::random_keys(rng, 40000, 40);
  for (const auto& [n, m] : {std::pair{10U, 1U}, std::pair{10U, 5U}, std::pair{100U, 1U}}) {
    const auto after = make_fleet(n + m);
    const std::vector<Server> before(after.begin(), after.begin() + n);
    const KetamaLocator<Md5> old_ring(before, kFixed160);
    const KetamaLocator<Md5> new_ring(after, kFixed160);
    std::size_t moved = 0;
    for (const auto& key : keys) {
      const std::size_t was = old_ring.locate(key);
      const std::size_t now = new_ring.locate(key);
      if (was != now) {
        ++moved;
        ASSERT_GE(now, n) << "key " << key << " moved between old servers";
      }
    }
    const double fraction = static_cast<double>(moved) / static_cast<double>(keys.size());
    const double theory = static_cast<double>(m) / static_cast<double>(n + m);
    EXPECT_NEAR(fraction, theory, 0.35 * theory + 0.005) << n << "+" << m;
  }
}

TEST(KetamaLocatorTest, WeightedCountsBreakMonotonicityWhereFloat32Rounds) {
  // libketama's float32 count gives 156 points each at N = 100 and 160 at
  // N = 101: growing the fleet adds points to the old servers too, so some keys
  // move between old servers. Peers do the same; memshard reproduces it.
  const auto after = make_fleet(101);
  const std::vector<Server> before(after.begin(), after.begin() + 100);
  const KetamaLocator<Md5> old_ring(before);
  const KetamaLocator<Md5> new_ring(after);
  EXPECT_EQ(KetamaLocator<Md5>::point_count(before, 0, old_ring.options()), 156U);
  EXPECT_EQ(KetamaLocator<Md5>::point_count(after, 0, new_ring.options()), 160U);
  std::mt19937 rng(22);
  int between_old = 0;
  for (const auto& key : memshard::testing::random_keys(rng, 20000, 40)) {
    const std::size_t now = new_ring.locate(key);
    if (old_ring.locate(key) != now && now < 100) {
      ++between_old;
    }
  }
  EXPECT_GT(between_old, 0);
}

TEST(KetamaLocatorTest, RemovingAServerMovesOnlyItsKeys) {
  const auto servers = make_fleet(10);
  std::vector<Server> fewer = servers;
  fewer.erase(fewer.begin() + 4);
  const KetamaLocator<Md5> full(servers);
  const KetamaLocator<Md5> reduced(fewer);
  std::mt19937 rng(4);
  for (const auto& key : memshard::testing::random_keys(rng, 20000, 40)) {
    const Server& was = servers[full.locate(key)];
    const Server& now = fewer[reduced.locate(key)];
    if (was.host != servers[4].host) {
      ASSERT_EQ(was, now) << key;
    }
  }
}

TEST(KetamaLocatorTest, BalanceImprovesWithPointsPerServer) {
  const auto servers = make_fleet(10);
  std::mt19937 rng(17);
  const auto keys = memshard::testing::random_keys(rng, 100000, 30);
  auto peak_over_mean = [&](std::size_t points) {
    const KetamaLocator<Md5> ring(servers, {.points_per_server = points,
                                            .format = PointFormat::kLibmemcached,
                                            .point_hash = PointHash::kMd5x4,
                                            .count = PointCount::kFixed});
    std::vector<int> counts(servers.size());
    for (const auto& key : keys) {
      ++counts[ring.locate(key)];
    }
    const double mean = static_cast<double>(keys.size()) / static_cast<double>(servers.size());
    return *std::max_element(counts.begin(), counts.end()) / mean;
  };
  const double few = peak_over_mean(4);
  const double many = peak_over_mean(160);
  EXPECT_GT(few, many);
  EXPECT_LT(many, 1.25);
}

TEST(KetamaLocatorTest, TenThousandServers) {
  const auto servers = make_fleet(10000);
  const KetamaLocator<Crc32> ring(servers, {.points_per_server = 64,
                                            .format = PointFormat::kName,
                                            .point_hash = PointHash::kKeyHash,
                                            .count = PointCount::kFixed});
  EXPECT_EQ(ring.size(), 10000U);
  std::mt19937 rng(2);
  expect_search_matches_reference(ring, rng);
  std::vector<bool> seen(servers.size());
  for (int i = 0; i < 200000; ++i) {
    seen[ring.locate(memshard::testing::random_key(rng, 20))] = true;
  }
  EXPECT_GT(std::count(seen.begin(), seen.end(), true), 9900);
}

TEST(KetamaLocatorTest, PointStrings) {
  const Server plain{"10.0.0.1", 11211, 1, ""};
  const Server other_port{"cache.example.com", 11300, 1, ""};
  const Server named{"10.0.0.2", 11211, 1, "node2"};
  EXPECT_EQ(KetamaLocator<Md5>::point_string(plain, 0, PointFormat::kLibmemcached), "10.0.0.1-0");
  EXPECT_EQ(KetamaLocator<Md5>::point_string(other_port, 39, PointFormat::kLibmemcached),
            "cache.example.com:11300-39");
  EXPECT_EQ(KetamaLocator<Md5>::point_string(plain, 7, PointFormat::kSlashHostPort),
            "/10.0.0.1:11211-7");
  EXPECT_EQ(KetamaLocator<Md5>::point_string(named, 63, PointFormat::kName), "node2-63");
  EXPECT_EQ(KetamaLocator<Md5>::point_string(plain, 1, PointFormat::kName), "10.0.0.1:11211-1");
}

TEST(KetamaLocatorTest, PointsAreTheHashesOfThePointStrings) {
  const auto servers = make_fleet(2);
  const KetamaOptions options{.points_per_server = 8,
                              .format = PointFormat::kLibmemcached,
                              .point_hash = PointHash::kMd5x4,
                              .count = PointCount::kFixed};
  const KetamaLocator<Md5> ring(servers, options);
  std::map<std::uint32_t, std::uint32_t> expected;
  for (std::uint32_t s = 0; s < 2; ++s) {
    for (std::size_t i = 0; i < 2; ++i) {
      for (const auto word :
           Md5::words(KetamaLocator<Md5>::point_string(servers[s], i, options.format))) {
        expected.emplace(word, s);
      }
    }
  }
  std::map<std::uint32_t, std::uint32_t> actual;
  for (const RingPoint& point : ring.points()) {
    actual.emplace(point.value, point.server);
  }
  EXPECT_EQ(actual, expected);
}

TEST(KetamaLocatorTest, ConfigurationErrorsThrow) {
  const auto servers = make_fleet(3);
  EXPECT_THROW(KetamaLocator<Md5>(std::span<const Server>{}), ConfigError);
  EXPECT_THROW(KetamaLocator<Md5>(servers, {.points_per_server = 0}), ConfigError);
  EXPECT_THROW(KetamaLocator<Md5>(servers, {.points_per_server = 10}), ConfigError);
  auto bad = servers;
  bad[2].weight = 0;
  EXPECT_THROW(KetamaLocator<Md5>{bad}, ConfigError);
  bad = servers;
  bad[2] = bad[0];
  EXPECT_THROW(KetamaLocator<Md5>{bad}, ConfigError);
  // Weights that each fit float32 but whose total does not.
  bad = servers;
  for (auto& server : bad) {
    server.weight = 3e38;
  }
  EXPECT_THROW(KetamaLocator<Md5>{bad}, ConfigError);
  EXPECT_EQ(memshard::weighted_point_count(1, 1e39, 3, 160), 0U);
  // A weight so small that the server gets no point at all.
  bad = servers;
  bad[0].weight = 1e-9;
  bad[1].weight = 1e-9;
  bad[2].weight = 1e-9;
  EXPECT_NO_THROW(KetamaLocator<Md5>{bad});  // equal tiny weights are still equal
}

TEST(KetamaLocatorTest, LocateManyEqualsLocateKeyByKey) {
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) {
    keys.push_back(std::string(static_cast<std::size_t>(i % 90), 'k') + std::to_string(i));
  }
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const std::size_t servers : {std::size_t{1}, std::size_t{3}, std::size_t{50}}) {
    std::vector<memshard::Server> list;
    for (std::size_t s = 0; s < servers; ++s) {
      list.push_back(memshard::parse_server("10.1.0." + std::to_string(s + 1) + ":11211"));
    }
    const memshard::KetamaLocator<memshard::Md5> md5_ring(list);
    const memshard::KetamaLocator<memshard::Crc32> crc_ring(list);  // no batch hashing
    const memshard::AnyLocator any(md5_ring);
    std::vector<std::size_t> md5_out(keys.size());
    std::vector<std::size_t> crc_out(keys.size());
    std::vector<std::size_t> any_out(keys.size());
    md5_ring.locate_many(views, md5_out);
    crc_ring.locate_many(views, crc_out);
    any.locate_many(views, any_out);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(md5_out[i], md5_ring.locate(views[i])) << servers << " servers, " << keys[i];
      ASSERT_EQ(crc_out[i], crc_ring.locate(views[i])) << servers << " servers, " << keys[i];
      ASSERT_EQ(any_out[i], md5_out[i]) << servers << " servers, " << keys[i];
    }
  }
}

}  // namespace
}  // namespace ketama_locator_test

// The search, tie and point rules the peer rings use.
namespace ketama_locator_test {
namespace {

using memshard::testing::FleetShape;
using memshard::testing::random_ascii_keys;
using memshard::testing::random_fleet;

TEST(KetamaLocatorSearchTest, LastAtOrBeforeMatchesBruteForce) {
  std::mt19937 rng(5);
  for (const std::size_t n : {2U, 5U, 30U}) {
    const auto servers = random_fleet(rng, n, FleetShape{.weights = true});
    const auto ring = memshard::profiles::dalli(servers);
    // Dalli's ring from its definition: floor(N*160*w/W) points "host:port:i",
    // SHA-1 big-endian prefix.
    double total = 0;
    for (const Server& server : servers) {
      total += server.weight;
    }
    std::vector<std::pair<std::uint32_t, std::size_t>> points;
    for (std::size_t s = 0; s < servers.size(); ++s) {
      const auto count =
          static_cast<std::size_t>(static_cast<double>(n) * 160 * servers[s].weight / total);
      for (std::size_t i = 0; i < count; ++i) {
        points.emplace_back(
            memshard::Sha1{}(servers[s].host + ":" + std::to_string(servers[s].port) + ":" +
                             std::to_string(i)),
            s);
      }
    }
    std::sort(points.begin(), points.end());
    for (const std::string& key : random_ascii_keys(rng, 3000)) {
      const std::uint32_t hash = Crc32{}(key);
      auto above = std::upper_bound(points.begin(), points.end(), hash,
                                    [](std::uint32_t h, const auto& p) { return h < p.first; });
      const std::size_t expected =
          above == points.begin() ? points.back().second : std::prev(above)->second;
      ASSERT_EQ(ring.locate(key), expected) << key;
    }
  }
}

// A hasher that puts every point string on the same position: every key then
// goes to the tie winner.
struct Constant {
  static constexpr auto name() noexcept -> std::string_view { return "constant"; }
  constexpr auto operator()(std::string_view) const noexcept -> std::uint32_t { return 7; }
};

TEST(KetamaLocatorTiesTest, NameOrderIsLengthThenBytes) {
  const auto servers = memshard::parse_servers("h1:1:1:bbb,h2:1:1:aa,h3:1:1:ccc,h4:1:1:ab");
  KetamaOptions options{.points_per_server = 4,
                        .format = PointFormat::kNameOrLibmemcached,
                        .point_hash = memshard::PointHash::kKeyHash,
                        .count = memshard::PointCount::kFixed,
                        .ties = memshard::TieBreak::kNameOrder};
  EXPECT_EQ(KetamaLocator<Constant>(servers, options).locate_hash(0), 1U);  // "aa"
  options.ties = memshard::TieBreak::kLastServer;
  EXPECT_EQ(KetamaLocator<Constant>(servers, options).locate_hash(0), 3U);
  // Unnamed servers are named "host", or "host:port" off 11211.
  const auto unnamed = memshard::parse_servers("long-host:11211,b:11212,a:11211");
  options.ties = memshard::TieBreak::kNameOrder;
  EXPECT_EQ(KetamaLocator<Constant>(unnamed, options).locate_hash(0), 2U);  // "a"
}

TEST(ChainedPointsTest, EachPointHashesThePreviousOne) {
  const Server server{"10.0.0.1", 11211, 1, ""};
  const std::string prefix = std::string("10.0.0.1") + '\0' + "11211";
  auto le32 = [](std::uint32_t v) {
    std::string out;
    for (unsigned shift = 0; shift < 32; shift += 8) {
      out.push_back(static_cast<char>((v >> shift) & 0xFFU));
    }
    return out;
  };
  const std::uint32_t p0 = Crc32{}(prefix + le32(0));
  const std::uint32_t p1 = Crc32{}(prefix + le32(p0));
  EXPECT_EQ(KetamaLocator<Crc32>::point_string(server, 0, PointFormat::kHostNulPortChained),
            prefix + le32(0));
  EXPECT_EQ(KetamaLocator<Crc32>::point_string(server, 2, PointFormat::kHostNulPortChained),
            prefix + le32(p1));
  const auto ring = memshard::profiles::cache_memcached_fast_ketama(
      std::vector<Server>{server, Server{"10.0.0.2", 11211, 1, ""}}, 3);
  std::set<std::uint32_t> values;
  for (const auto& point : ring.points()) {
    values.insert(point.value);
  }
  EXPECT_TRUE(values.contains(p0) && values.contains(p1));
}

TEST(PointCountTest, ShareAndScaledWeightCounts) {
  const auto servers = memshard::parse_servers("a:1:1,b:1:1,c:1:2");
  const KetamaOptions share = memshard::profiles::dalli_options();
  EXPECT_EQ(KetamaLocator<Crc32>::point_count(servers, 0, share), 120U);  // 3*160*1/4
  EXPECT_EQ(KetamaLocator<Crc32>::point_count(servers, 2, share), 240U);
  const KetamaOptions scaled = memshard::profiles::cache_memcached_fast_ketama_options(150);
  const auto fractional = memshard::parse_servers("a:1:0.5,b:1:2.5");
  EXPECT_EQ(KetamaLocator<Crc32>::point_count(fractional, 0, scaled), 75U);
  EXPECT_EQ(KetamaLocator<Crc32>::point_count(fractional, 1, scaled), 375U);
}

TEST(PeerValidationTest, RingOptionsThatCannotAgreeAreRefused) {
  const auto servers = memshard::parse_servers("a:1,b:1");
  KetamaOptions options = memshard::profiles::dalli_options();
  options.points_per_server = std::size_t{1} << 40U;
  EXPECT_THROW(static_cast<void>(KetamaLocator<Crc32>(servers, options)), ConfigError);
  options = memshard::profiles::dalli_options();
  options.point_hash = memshard::PointHash::kMd5x4;  // with a share count: not a multiple of 4
  EXPECT_THROW(static_cast<void>(KetamaLocator<Crc32>(servers, options)), ConfigError);
  options = memshard::profiles::cache_memcached_fast_ketama_options(100);
  options.point_hash = memshard::PointHash::kKeyHash;  // chained strings are CRC-32 points only
  EXPECT_THROW(static_cast<void>(KetamaLocator<Crc32>(servers, options)), ConfigError);
  // A weight far beyond what float32 counts can hold gets no wrapped count.
  EXPECT_EQ(memshard::weighted_point_count(1, 1, std::size_t{1} << 30U, std::size_t{1} << 40U),
            std::numeric_limits<std::size_t>::max());
}

}  // namespace
}  // namespace ketama_locator_test
