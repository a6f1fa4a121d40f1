// SPDX-License-Identifier: MIT
// The profile registry's rules and the peer profiles' own choices (bucket
// order, validation, Dalli's keys, tie rules, failover of each peer placement).
// The placements themselves are tested in the files of their headers; whether
// they match the real clients is golden_test's job.
#include <algorithm>
#include <cstdint>
#include <random>
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
using memshard::Server;
using memshard::testing::FleetShape;
using memshard::testing::random_ascii_keys;
using memshard::testing::random_fleet;

TEST(TwemproxyModulaTest, SlotsFollowTheNameOrderRepeatedByWeight) {
  const auto servers = memshard::parse_servers(
      "10.0.0.1:11211:1:cache-10,10.0.0.2:11211:2:cache-9,10.0.0.3:11211:3:b");
  const auto locator = memshard::profiles::twemproxy_modula<Crc32>(servers);
  const std::vector<std::uint32_t> expected = {2, 2, 2, 1, 1, 0};
  EXPECT_TRUE(std::equal(locator.buckets().begin(), locator.buckets().end(), expected.begin(),
                         expected.end()));
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
  for (const std::string& key : random_ascii_keys(rng, 2000)) {
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
    for (const std::string& key : random_ascii_keys(rng, 3000)) {
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
  for (const std::string& key : random_ascii_keys(rng, 5000)) {
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
