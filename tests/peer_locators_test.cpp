// SPDX-License-Identifier: MIT
// The placements behind the peer profiles, each against a brute-force
// definition written out here, plus the profile registry's rules. (Whether
// they match the real clients is golden_test's job.)
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/continuum_locators.hpp"
#include "memshard/profiles.hpp"
#include "memshard/rendezvous_locator.hpp"
#include "support/fleet.hpp"

namespace {

using memshard::ConfigError;
using memshard::Crc32;
using memshard::KetamaLocator;
using memshard::KetamaOptions;
using memshard::PointFormat;
using memshard::Server;
using memshard::testing::FleetShape;
using memshard::testing::random_fleet;

auto random_keys(std::mt19937& rng, std::size_t count) -> std::vector<std::string> {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < count; ++i) {
    std::string key(1 + rng() % 60, 'a');
    for (char& c : key) {
      c = static_cast<char>(0x21 + rng() % 0x5E);
    }
    keys.push_back(key);
  }
  return keys;
}

auto node_of(const Server& server) -> std::string {
  return server.name.empty() ? server.host + ":" + std::to_string(server.port) : server.name;
}

TEST(RendezvousLocatorTest, HighestMurmur3ScoreWins) {
  std::mt19937 rng(1);
  for (const std::size_t n : {1U, 2U, 3U, 7U, 20U}) {
    const auto servers = random_fleet(rng, n, FleetShape{.names = n == 7});
    const memshard::RendezvousLocator locator(servers);
    for (const std::string& key : random_keys(rng, 2000)) {
      std::size_t best = 0;
      std::uint32_t best_score = 0;
      for (std::size_t s = 0; s < servers.size(); ++s) {
        const std::uint32_t score = memshard::Murmur3_32{}(node_of(servers[s]) + "-" + key);
        if (s == 0 || score > best_score ||
            (score == best_score && node_of(servers[s]) > node_of(servers[best]))) {
          best = s;
          best_score = score;
        }
      }
      ASSERT_EQ(locator.locate(key), best) << key;
    }
  }
}

TEST(RendezvousLocatorTest, RemovingAServerMovesOnlyItsKeysAndAvoidingItIsTheSame) {
  std::mt19937 rng(2);
  const auto servers = random_fleet(rng, 8);
  const memshard::RendezvousLocator all(servers);
  std::vector<Server> fewer = servers;
  fewer.erase(fewer.begin() + 3);
  const memshard::RendezvousLocator without(fewer);
  std::vector<std::uint8_t> avoid(servers.size(), 0);
  avoid[3] = 1;
  for (const std::string& key : random_keys(rng, 5000)) {
    const std::size_t before = all.locate(key);
    const std::size_t after = without.locate(key);
    const std::size_t after_in_old_order = after >= 3 ? after + 1 : after;
    if (before != 3) {
      ASSERT_EQ(after_in_old_order, before) << key;
    }
    ASSERT_EQ(all.locate_avoiding(key, avoid), after_in_old_order) << key;
  }
}

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
    for (const std::string& key : random_keys(rng, 3000)) {
      const std::uint32_t target = (Crc32{}(key) % 1024U) * 4194303U;
      auto point = std::find_if(ring.begin(), ring.end(),
                                [target](const auto& p) { return p.first >= target; });
      const std::size_t expected = point == ring.end() ? ring.front().second : point->second;
      ASSERT_EQ(locator.locate(key), expected) << key;
    }
  }
}

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
    for (const std::string& key : random_keys(rng, 3000)) {
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

TEST(TwemproxyModulaTest, SlotsFollowTheNameOrderRepeatedByWeight) {
  const auto servers = memshard::parse_servers(
      "10.0.0.1:11211:1:cache-10,10.0.0.2:11211:2:cache-9,10.0.0.3:11211:3:b");
  const auto locator = memshard::profiles::twemproxy_modula<Crc32>(servers);
  const std::vector<std::uint32_t> expected = {2, 2, 2, 1, 1, 0};
  EXPECT_TRUE(std::equal(locator.buckets().begin(), locator.buckets().end(), expected.begin(),
                         expected.end()));
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

TEST(ProfileRegistryTest, EveryProfileBuildsForSeveralSizesAndEveryHashItNames) {
  std::mt19937 rng(6);
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    SCOPED_TRACE(std::string(profile.name));
    for (const std::size_t n : {1U, 2U, 5U}) {
      const auto servers = random_fleet(rng, n);
      const auto locator = memshard::make_locator(profile.name, servers);
      EXPECT_EQ(locator.size(), n);
      EXPECT_LT(locator.locate("user:42"), n);
      EXPECT_TRUE(locator.description().starts_with(profile.name));
    }
    // Every hash the profile lists is accepted ("crc32 (15-bit)" is listed
    // with a note).
    const std::string hashes = memshard::hash_names(profile);
    for (std::size_t start = 0; start < hashes.size();) {
      std::size_t end = hashes.find(", ", start);
      end = end == std::string::npos ? hashes.size() : end;
      std::string hash = hashes.substr(start, end - start);
      hash = hash.substr(0, hash.find(' '));
      memshard::ProfileOptions options;
      options.hash = hash;
      EXPECT_NO_THROW(
          static_cast<void>(memshard::make_locator(profile.name, random_fleet(rng, 3), options)))
          << hash;
      start = end + 2;
    }
  }
}

TEST(ProfileRegistryTest, OptionsAProfileDoesNotTakeAreRefused) {
  const auto servers = memshard::parse_servers("a:11211,b:11211");
  memshard::ProfileOptions hash;
  hash.hash = "md5";
  EXPECT_THROW(static_cast<void>(memshard::make_locator("dalli", servers, hash)), ConfigError);
  hash.hash = "crc";  // memshard's name, not twemproxy's
  EXPECT_THROW(static_cast<void>(memshard::make_locator("twemproxy-ketama", servers, hash)),
               ConfigError);
  hash.hash = "hsieh";
  EXPECT_THROW(static_cast<void>(memshard::make_locator("twemproxy-modula", servers, hash)),
               ConfigError);
  memshard::ProfileOptions points;
  points.points = 100;
  EXPECT_THROW(static_cast<void>(memshard::make_locator("twemproxy-ketama", servers, points)),
               ConfigError);
  memshard::ProfileOptions weighted;
  weighted.weighted = true;
  EXPECT_THROW(static_cast<void>(memshard::make_locator("dalli", servers, weighted)), ConfigError);
  weighted.weighted = false;
  const auto heavy = memshard::parse_servers("a:11211:2,b:11211");
  EXPECT_THROW(static_cast<void>(memshard::make_locator("spymemcached-ketama", heavy, weighted)),
               ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::make_locator(
                   "twemproxy-ketama", memshard::parse_servers("a:11211:1:x,b:11211:1:x"))),
               ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::make_locator(
                   "cache-memcached", memshard::parse_servers("a:11211:1.5,b:11211"))),
               ConfigError);
  // twemproxy hashes point strings of at most 85 bytes whole: "name-39".
  const std::string fits(82, 'n');
  EXPECT_NO_THROW(static_cast<void>(memshard::make_locator(
      "twemproxy-ketama", memshard::parse_servers("a:11211:1:" + fits + ",b:11211"))));
  EXPECT_THROW(static_cast<void>(memshard::make_locator(
                   "twemproxy-ketama", memshard::parse_servers("a:11211:1:" + fits + "n,b:11211"))),
               ConfigError);
}

TEST(ProfileRegistryTest, TwemproxyHashNamesMeanWhatNutcrackerMeans) {
  std::mt19937 rng(8);
  const auto servers = random_fleet(rng, 10);
  memshard::ProfileOptions options;
  options.hash = "crc32";  // twemproxy: the 15-bit crc
  const auto short_crc = memshard::make_locator("twemproxy-ketama", servers, options);
  options.hash = "crc32a";  // twemproxy: the full CRC-32
  const auto full_crc = memshard::make_locator("twemproxy-ketama", servers, options);
  const auto typed_short = memshard::profiles::twemproxy_ketama<memshard::LibmemcachedCrc>(servers);
  const auto typed_full = memshard::profiles::twemproxy_ketama<Crc32>(servers);
  for (const std::string& key : random_keys(rng, 2000)) {
    ASSERT_EQ(short_crc.locate(key), typed_short.locate(key));
    ASSERT_EQ(full_crc.locate(key), typed_full.locate(key));
  }
}

// Unnamed twemproxy servers hash as libmemcached's weighted ring does: the
// two profiles must agree (ties aside, which md5 makes vanishingly rare).
TEST(ProfileRegistryTest, UnnamedTwemproxyKetamaIsLibketama) {
  std::mt19937 rng(9);
  for (const std::size_t n : {2U, 5U, 25U}) {
    const auto servers = random_fleet(rng, n, FleetShape{.weights = true});
    const auto twemproxy = memshard::profiles::twemproxy_ketama(servers);
    const auto libketama = memshard::profiles::libmemcached_ketama_weighted(servers);
    for (const std::string& key : random_keys(rng, 3000)) {
      ASSERT_EQ(twemproxy.locate(key), libketama.locate(key)) << key;
    }
  }
}

}  // namespace

namespace {

// Ejecting a server moves only its own keys, each to a server not ejected,
// for every peer placement that supports failover.
template <class L>
void expect_failover_moves_only_avoided_keys(const L& locator, std::size_t servers) {
  std::mt19937 rng(12);
  std::vector<std::uint8_t> avoid(servers, 0);
  avoid[1] = 1;
  avoid[servers - 1] = 1;
  for (const std::string& key : random_keys(rng, 5000)) {
    const std::size_t primary = locator.locate(key);
    const std::size_t chosen = locator.locate_avoiding(key, avoid);
    if (avoid[primary] == 0) {
      ASSERT_EQ(chosen, primary) << key;
    } else {
      ASSERT_EQ(avoid[chosen], 0) << key;
    }
  }
  const std::vector<std::uint8_t> everyone(servers, 1);
  EXPECT_EQ(locator.locate_avoiding("k", everyone), locator.locate("k"));
}

TEST(PeerFailoverTest, OnlyTheAvoidedServersKeysMove) {
  std::mt19937 rng(13);
  const auto servers = random_fleet(rng, 6, FleetShape{.weights = true});
  static_assert(memshard::FailoverLocator<memshard::CompatContinuumLocator<>>);
  static_assert(memshard::FailoverLocator<memshard::BucketedRingLocator<Crc32>>);
  static_assert(memshard::FailoverLocator<memshard::RendezvousLocator>);
  expect_failover_moves_only_avoided_keys(memshard::CompatContinuumLocator<>(servers), 6);
  expect_failover_moves_only_avoided_keys(memshard::BucketedRingLocator<Crc32>(servers), 6);
  expect_failover_moves_only_avoided_keys(memshard::profiles::pymemcache_rendezvous(servers), 6);
  expect_failover_moves_only_avoided_keys(memshard::profiles::dalli(servers), 6);
  expect_failover_moves_only_avoided_keys(memshard::profiles::twemproxy_modula(servers), 6);
}

}  // namespace

namespace {

TEST(PeerValidationTest, ServersThatWouldShareEveryPointAreRefused) {
  // twemproxy names an unnamed server on 11211 by its host alone.
  EXPECT_THROW(static_cast<void>(memshard::profiles::twemproxy_ketama(memshard::parse_servers(
                   "10.0.0.1:11211,10.0.0.2:11211:1:10.0.0.1,10.0.0.3:11211"))),
               ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::profiles::twemproxy_modula(
                   memshard::parse_servers("10.0.0.1:11211,10.0.0.2:11211:1:10.0.0.1"))),
               ConfigError);
  // A name equal to another server's "host:port".
  const auto clash = memshard::parse_servers("a:11211,b:11211:1:a:11211,c:11211");
  EXPECT_THROW(static_cast<void>(memshard::profiles::dalli(clash)), ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::profiles::ring_crc32(clash)), ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::profiles::spymemcached_ketama(clash, false)),
               ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::profiles::pymemcache_rendezvous(clash)), ConfigError);
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

TEST(DalliKeyTest, NamespaceAndLongKeysAsDalliStoresThem) {
  using memshard::profiles::dalli_key;
  EXPECT_EQ(dalli_key("user:1"), "user:1");
  EXPECT_EQ(dalli_key("user:1", "app"), "app:user:1");
  const std::string exact(250, 'k');
  EXPECT_EQ(dalli_key(exact), exact);
  // Over 250 characters: a prefix, ":md5:", and the hex MD5 of the whole key.
  const std::string long_key(251, 'k');
  const std::string cut = dalli_key(long_key);
  EXPECT_EQ(cut.size(), 212U + 5U + 32U);
  EXPECT_EQ(cut.substr(0, 212), std::string(212, 'k'));
  EXPECT_EQ(cut.substr(212, 5), ":md5:");
  const std::string namespaced = dalli_key(std::string(247, 'k'), "app");  // 251 characters
  EXPECT_EQ(namespaced.substr(0, 213), "app:" + std::string(209, 'k'));
  EXPECT_EQ(namespaced.size(), 213U + 5U + 32U);
  // Characters, not bytes: 200 two-byte characters are 400 bytes but short.
  std::string wide;
  for (int i = 0; i < 200; ++i) {
    wide += "\xC3\xA9";
  }
  EXPECT_EQ(dalli_key(wide), wide);
  // A byte that starts no valid sequence counts as a character, as in Ruby.
  EXPECT_NE(dalli_key(std::string(250, 'a') + "\x80"), std::string(250, 'a') + "\x80");
}

TEST(RendezvousLocatorTest, TranscodedKeysOfEveryLengthScoreAsDefined) {
  const auto servers = memshard::parse_servers("a:11211,b:11211,c:11211,d:11211");
  const auto str_keys = memshard::profiles::pymemcache_rendezvous(servers);
  const auto bytes_keys = memshard::profiles::pymemcache_rendezvous_bytes(servers);
  for (const std::size_t length : {1U, 100U, 255U, 256U, 1023U, 1024U, 1025U, 3000U}) {
    std::string key;
    while (key.size() < length) {
      key += key.size() % 3 == 0 ? "\xC3\xA9" : "x'";
    }
    // Python's view of the key: é is one character, U+00E9, low byte 0xE9.
    std::string low;
    const char quote = key.find('\'') != std::string::npos ? '"' : '\'';
    std::string repr = std::string("b") + quote;
    for (std::size_t i = 0; i < key.size(); ++i) {
      const auto byte = static_cast<unsigned char>(key[i]);
      if (byte == 0xC3 && i + 1 < key.size()) {
        low += '\xE9';
      } else if (byte != 0xA9 || i == 0 || static_cast<unsigned char>(key[i - 1]) != 0xC3) {
        low += key[i];
      }
      static constexpr char kHex[] = "0123456789abcdef";
      if (byte >= 0x7F) {
        repr += std::string("\\x") + kHex[byte >> 4U] + kHex[byte & 0xFU];
      } else {
        repr += key[i];
      }
    }
    repr += quote;
    for (const auto* locator : {&str_keys, &bytes_keys}) {
      const bool is_str = locator == &str_keys;
      std::size_t best = 0;
      std::uint32_t top = 0;
      for (std::size_t s = 0; s < servers.size(); ++s) {
        const std::uint32_t score =
            memshard::Murmur3_32{}(servers[s].host + ":11211-" + (is_str ? low : repr));
        if (s == 0 || score > top) {
          best = s;
          top = score;
        }
      }
      EXPECT_EQ(locator->locate(key), best) << length << (is_str ? " str" : " bytes");
    }
  }
  const std::vector<std::uint8_t> everyone(4, 1);
  EXPECT_EQ(str_keys.locate_avoiding("k", everyone), str_keys.locate("k"));
}

}  // namespace

namespace {

TEST(HashTagTest, OnlyTheTaggedPartIsHashed) {
  const memshard::HashTag braces = memshard::HashTag::parse("{}");
  EXPECT_EQ(braces.apply("user:{42}:name"), "42");
  EXPECT_EQ(braces.apply("{a}{b}"), "a");
  EXPECT_EQ(braces.apply("}x{y}"), "y");  // the first open, then the first close after it
  EXPECT_EQ(braces.apply("user:{}:name"), "user:{}:name");  // empty tag: the whole key
  EXPECT_EQ(braces.apply("user:{42"), "user:{42");          // no close
  EXPECT_EQ(braces.apply("plain"), "plain");
  const memshard::HashTag colons = memshard::HashTag::parse("::");
  EXPECT_EQ(colons.apply("a:b:c"), "b");
  EXPECT_THROW(static_cast<void>(memshard::HashTag::parse("{")), ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::HashTag::parse("{}}")), ConfigError);
}

TEST(HashTagTest, TaggedKeysShareAServerAndProfilesTakeTheOption) {
  std::mt19937 rng(14);
  const auto servers = random_fleet(rng, 10);
  memshard::ProfileOptions options;
  options.hash_tag = "{}";
  const auto tagged = memshard::make_locator("twemproxy-ketama", servers, options);
  const auto plain = memshard::profiles::twemproxy_ketama(servers);
  std::set<std::size_t> servers_of_42;
  for (const std::string& key : random_keys(rng, 500)) {
    if (key.find('{') != std::string::npos) {
      continue;  // the tag below must be the key's first
    }
    servers_of_42.insert(tagged.locate(key + "{42}" + key));
    ASSERT_EQ(tagged.locate(key), plain.locate(key)) << key;
  }
  EXPECT_EQ(servers_of_42.size(), 1U);
  EXPECT_EQ(*servers_of_42.begin(), plain.locate("42"));
  EXPECT_NE(tagged.description().find("hash_tag={}"), std::string_view::npos);
  // Only twemproxy pools have hash tags.
  EXPECT_THROW(static_cast<void>(memshard::make_locator("libmemcached-ketama", servers, options)),
               ConfigError);
  options.hash_tag = "{";
  EXPECT_THROW(static_cast<void>(memshard::make_locator("twemproxy-modula", servers, options)),
               ConfigError);
}

}  // namespace

namespace {

// md5 x4 points never collide in practice, so no golden table shows a tie:
// the tie rules measured on the real clients (twemproxy: the name first in
// (length, bytes) order; spymemcached: the server added last; libketama: the
// first) are pinned here on the profiles' options, and their effect by
// KetamaLocatorTiesTest.
TEST(ProfileTiesTest, EachRingBreaksTiesAsItsClientDoes) {
  EXPECT_EQ(memshard::profiles::twemproxy_ketama_options().ties, memshard::TieBreak::kNameOrder);
  EXPECT_EQ(memshard::profiles::spymemcached_ketama_options(false, false).ties,
            memshard::TieBreak::kLastServer);
  EXPECT_EQ(memshard::profiles::spymemcached_ketama_options(true, true).ties,
            memshard::TieBreak::kLastServer);
  EXPECT_EQ(memshard::profiles::libmemcached_ketama_weighted_options().ties,
            memshard::TieBreak::kFirstServer);
  EXPECT_EQ(memshard::profiles::cache_memcached_fast_ketama_options(150).ties,
            memshard::TieBreak::kFirstServer);
}

}  // namespace
