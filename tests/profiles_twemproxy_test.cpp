// SPDX-License-Identifier: MIT
// twemproxy (placement/profiles/twemproxy.hpp): the typed constructors place keys as
// their registry entries do for every name of nutcracker's vocabulary, and the
// names nutcracker means otherwise are refused; modula's slot order, the ring's
// equality with libketama for unnamed servers, its tie rule, the server lists
// refused, and modula's failover.
#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/errors.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/placement/profiles/libmemcached.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "memshard/placement/profiles/twemproxy.hpp"
#include "support/fleet.hpp"
#include "support/locator_checks.hpp"
#include "support/same_placement.hpp"

namespace profiles_twemproxy_test {
namespace {

using memshard::ConfigError;
using memshard::testing::FleetShape;
using memshard::testing::random_ascii_keys;
using memshard::testing::random_fleet;
using memshard::testing::same_placement;
namespace profiles = memshard::profiles;

// Both distributions with hasher H against the registry with nutcracker's `name` for it.
template <memshard::Hasher H>
void expect_both_match(std::span<const memshard::Server> servers, const char* name) {
  SCOPED_TRACE(name);
  const memshard::ProfileOptions options{.hash = name};
  EXPECT_TRUE(
      same_placement(profiles::twemproxy_ketama<H>(servers), "twemproxy-ketama", servers, options));
  EXPECT_TRUE(
      same_placement(profiles::twemproxy_modula<H>(servers), "twemproxy-modula", servers, options));
}

TEST(TwemproxyProfileTest, TypedConstructorsEqualTheRegistryForEveryNutcrackerHash) {
  std::mt19937 rng(11);
  const auto servers = random_fleet(rng, 7, FleetShape{.weights = true, .names = true});
  EXPECT_TRUE(same_placement(profiles::twemproxy_ketama(servers), "twemproxy-ketama", servers));
  EXPECT_TRUE(same_placement(profiles::twemproxy_modula(servers), "twemproxy-modula", servers));
  expect_both_match<memshard::Md5>(servers, "md5");
  expect_both_match<memshard::OneAtATime>(servers, "one_at_a_time");
  expect_both_match<memshard::LibmemcachedCrc>(servers, "crc32");  // nutcracker's 15-bit crc
  expect_both_match<memshard::Crc32>(servers, "crc32a");
  expect_both_match<memshard::Fnv1_32>(servers, "fnv1_32");
  expect_both_match<memshard::Fnv1a_32>(servers, "fnv1a_32");
  expect_both_match<memshard::Fnv1_64>(servers, "fnv1_64");
  expect_both_match<memshard::Fnv1a_64>(servers, "fnv1a_64");
  expect_both_match<memshard::Murmur>(servers, "murmur");
}

TEST(TwemproxyProfileTest, NamesNutcrackerMeansOtherwiseAreRefusedWithTheReason) {
  const auto servers = memshard::parse_servers("a:11211,b:11211");
  for (const char* profile : {"twemproxy-ketama", "twemproxy-modula"}) {
    SCOPED_TRACE(profile);
    const auto message = [&](const char* hash) -> std::string {
      try {
        static_cast<void>(memshard::make_locator(profile, servers, {.hash = hash}));
      } catch (const ConfigError& error) {
        return error.what();
      }
      return "(accepted)";
    };
    for (const char* spelling : {"crc", "default"}) {
      EXPECT_NE(message(spelling).find("not a twemproxy hash"), std::string::npos) << spelling;
    }
    for (const char* unsupported : {"crc16", "hsieh", "jenkins"}) {
      EXPECT_NE(message(unsupported).find("not supported by memshard"), std::string::npos)
          << unsupported;
    }
    EXPECT_NE(message("sha1").find("unknown hash for " + std::string(profile) +
                                   " (known: md5, one_at_a_time"),
              std::string::npos)
        << message("sha1");
  }
}

TEST(TwemproxyProfileTest, ModulaSlotsFollowTheNameOrderRepeatedByWeight) {
  const auto servers = memshard::parse_servers(
      "10.0.0.1:11211:1:cache-10,10.0.0.2:11211:2:cache-9,10.0.0.3:11211:3:b");
  const auto locator = profiles::twemproxy_modula<memshard::Crc32>(servers);
  const std::vector<std::uint32_t> expected = {2, 2, 2, 1, 1, 0};
  EXPECT_TRUE(std::equal(locator.buckets().begin(), locator.buckets().end(), expected.begin(),
                         expected.end()));
}

// Unnamed twemproxy servers hash as libmemcached's weighted ring does: the
// two profiles must agree (ties aside, which md5 makes vanishingly rare).
TEST(TwemproxyProfileTest, UnnamedKetamaIsLibketama) {
  std::mt19937 rng(9);
  for (const std::size_t n : {2U, 5U, 25U}) {
    const auto servers = random_fleet(rng, n, FleetShape{.weights = true});
    const auto twemproxy = profiles::twemproxy_ketama(servers);
    const auto libketama = profiles::libmemcached_ketama_weighted(servers);
    for (const std::string& key : random_ascii_keys(rng, 3000)) {
      ASSERT_EQ(twemproxy.locate(key), libketama.locate(key)) << key;
    }
  }
}

// md5 x4 points never collide in practice, so no golden table shows a tie:
// the rule measured on nutcracker (the name first in (length, bytes) order)
// is pinned on the options; its effect is KetamaLocatorTiesTest's.
TEST(TwemproxyProfileTest, KetamaBreaksTiesByNameOrder) {
  EXPECT_EQ(profiles::twemproxy_ketama_options().ties, memshard::TieBreak::kNameOrder);
}

TEST(TwemproxyProfileTest, ServersThatWouldShareEveryPointAreRefused) {
  // twemproxy names an unnamed server on 11211 by its host alone.
  EXPECT_THROW(static_cast<void>(profiles::twemproxy_ketama(memshard::parse_servers(
                   "10.0.0.1:11211,10.0.0.2:11211:1:10.0.0.1,10.0.0.3:11211"))),
               ConfigError);
  EXPECT_THROW(static_cast<void>(profiles::twemproxy_modula(
                   memshard::parse_servers("10.0.0.1:11211,10.0.0.2:11211:1:10.0.0.1"))),
               ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::make_locator(
                   "twemproxy-ketama", memshard::parse_servers("a:11211:1:x,b:11211:1:x"))),
               ConfigError);
}

TEST(TwemproxyProfileTest, NamesLongerThanNutcrackersPointStringsAreRefused) {
  // twemproxy hashes point strings of at most 85 bytes whole: "name-39".
  const std::string fits(82, 'n');
  EXPECT_NO_THROW(static_cast<void>(memshard::make_locator(
      "twemproxy-ketama", memshard::parse_servers("a:11211:1:" + fits + ",b:11211"))));
  EXPECT_THROW(static_cast<void>(memshard::make_locator(
                   "twemproxy-ketama", memshard::parse_servers("a:11211:1:" + fits + "n,b:11211"))),
               ConfigError);
}

// Ejecting a server moves only its own keys, each to a server not ejected.
TEST(TwemproxyProfileTest, ModulaFailoverMovesOnlyTheAvoidedServersKeys) {
  const auto make = [](std::span<const memshard::Server> servers) {
    return profiles::twemproxy_modula(servers);
  };
  static_assert(memshard::FailoverLocator<decltype(make(std::span<const memshard::Server>{}))>);
  memshard::testing::expect_avoiding_keeps_live_servers_keys(make, true);
  memshard::testing::expect_all_avoided_answers_locate(make, true);
  memshard::testing::expect_ejecting_one_moves_only_its_keys(make, true);
}

}  // namespace
}  // namespace profiles_twemproxy_test
