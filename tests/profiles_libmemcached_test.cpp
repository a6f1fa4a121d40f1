// SPDX-License-Identifier: MIT
// Every libmemcached profile (placement/profiles/libmemcached.hpp) against libmemcached
// itself: the same servers and behaviours in an in-process memcached_st, and
// memcached_server_by_key() must name the server memshard picks, for every key;
// and the weighted ring's tie rule.
#include <libmemcached-1.0/memcached.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/profiles/libmemcached.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"

namespace profiles_libmemcached_test {
namespace {

using memshard::ConfigError;
using memshard::Server;
using memshard::testing::FleetShape;
using memshard::testing::random_fleet;

struct MemcachedFree {
  void operator()(memcached_st* memc) const noexcept { memcached_free(memc); }
};
using Memcached = std::unique_ptr<memcached_st, MemcachedFree>;

// How a profile is configured in libmemcached, in the order its users do it:
// behaviours first, then servers.
using Configure = std::function<void(memcached_st*)>;

auto make_oracle(std::span<const Server> servers, const Configure& configure) -> Memcached {
  Memcached memc(memcached(nullptr, 0));
  if (!memc) {
    throw std::runtime_error("memcached() returned NULL");
  }
  configure(memc.get());
  for (const Server& server : servers) {
    const memcached_return_t rc = memcached_server_add_with_weight(
        memc.get(), server.host.c_str(), server.port, static_cast<std::uint32_t>(server.weight));
    if (memcached_failed(rc)) {
      throw std::runtime_error("memcached_server_add_with_weight failed for " + server.endpoint());
    }
  }
  return memc;
}

// Counts keys on which memshard and libmemcached disagree (and reports the first).
auto count_mismatches(const Memcached& oracle, std::span<const Server> servers,
                      const memshard::AnyLocator& locator, std::span<const std::string> keys)
    -> int {
  int mismatches = 0;
  for (const std::string& key : keys) {
    memcached_return_t rc = MEMCACHED_SUCCESS;
    const memcached_instance_st* expected =
        memcached_server_by_key(oracle.get(), key.data(), key.size(), &rc);
    const Server& actual = servers[locator.locate(key)];
    if (expected == nullptr || actual.host != memcached_server_name(expected) ||
        actual.port != memcached_server_port(expected)) {
      if (mismatches == 0) {
        ADD_FAILURE() << locator.description() << " N=" << servers.size() << " key '" << key
                      << "': memshard " << actual.endpoint() << ", libmemcached "
                      << (expected == nullptr
                              ? "(none)"
                              : std::string(memcached_server_name(expected)) + ":" +
                                    std::to_string(memcached_server_port(expected)));
      }
      ++mismatches;
    }
  }
  return mismatches;
}

struct HashName {
  const char* memshard;
  memcached_hash_t libmemcached;
};
constexpr HashName kHashes[] = {
    {"one_at_a_time", MEMCACHED_HASH_DEFAULT},
    {"md5", MEMCACHED_HASH_MD5},
    {"crc", MEMCACHED_HASH_CRC},
    {"fnv1_64", MEMCACHED_HASH_FNV1_64},
    {"fnv1a_64", MEMCACHED_HASH_FNV1A_64},
    {"fnv1_32", MEMCACHED_HASH_FNV1_32},
    {"fnv1a_32", MEMCACHED_HASH_FNV1A_32},
    {"murmur", MEMCACHED_HASH_MURMUR},
};

// Server counts: small, the float32 point-count traps (25, 47), and
// libmemcached's ceiling for consistent distributions (100).
constexpr std::size_t kSizes[] = {1, 2, 3, 5, 10, 25, 47, 64, 100};

struct ProfileCase {
  const char* profile;
  // Configures libmemcached like the profile with `hash` (nullptr: the default).
  std::function<void(memcached_st*, const HashName*)> configure;
};

const ProfileCase kCases[] = {
    {"libmemcached-modula",
     [](memcached_st* memc, const HashName* hash) {
       memcached_behavior_set_distribution(memc, MEMCACHED_DISTRIBUTION_MODULA);
       if (hash != nullptr) memcached_behavior_set_key_hash(memc, hash->libmemcached);
     }},
    {"libmemcached-ketama",
     [](memcached_st* memc, const HashName* hash) {
       memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA, 1);
       if (hash != nullptr) memcached_behavior_set_key_hash(memc, hash->libmemcached);
     }},
    {"libmemcached-ketama-weighted",
     [](memcached_st* memc, const HashName* hash) {
       memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
       if (hash != nullptr) memcached_behavior_set_key_hash(memc, hash->libmemcached);
     }},
    {"libmemcached-ketama-spy",
     [](memcached_st* memc, const HashName* hash) {
       memcached_behavior_set_distribution(memc, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY);
       if (hash != nullptr) memcached_behavior_set_key_hash(memc, hash->libmemcached);
     }},
};

// GoogleTest prints a case by its profile name.
void PrintTo(const ProfileCase& profile_case, std::ostream* out) { *out << profile_case.profile; }

class LibmemcachedProfileTest : public ::testing::TestWithParam<ProfileCase> {};

// Default hash, many random fleets, with and without weights, 10,000 keys each.
TEST_P(LibmemcachedProfileTest, AgreesWithLibmemcachedOnEveryKey) {
  const ProfileCase& profile = GetParam();
  std::mt19937 rng(2024);
  const auto keys = memshard::testing::random_keys(rng, 10000);
  for (const std::size_t n : kSizes) {
    for (const bool weights : {false, true}) {
      for (int round = 0; round < 2; ++round) {
        const auto servers = random_fleet(rng, n, FleetShape{.weights = weights});
        const auto oracle =
            make_oracle(servers, [&](memcached_st* memc) { profile.configure(memc, nullptr); });
        const auto locator = memshard::make_locator(profile.profile, servers);
        ASSERT_EQ(count_mismatches(oracle, servers, locator, keys), 0)
            << profile.profile << " N=" << n << (weights ? " weighted" : "");
      }
    }
  }
}

// Every key hash libmemcached offers.
TEST_P(LibmemcachedProfileTest, AgreesForEveryHash) {
  const ProfileCase& profile = GetParam();
  std::mt19937 rng(7);
  const auto keys = memshard::testing::random_keys(rng, 10000);
  for (const HashName& hash : kHashes) {
    for (const std::size_t n : {3U, 10U, 47U}) {
      for (const bool weights : {false, true}) {
        const auto servers = random_fleet(rng, n, FleetShape{.weights = weights});
        const auto oracle =
            make_oracle(servers, [&](memcached_st* memc) { profile.configure(memc, &hash); });
        const auto locator =
            memshard::make_locator(profile.profile, servers, {.hash = hash.memshard});
        ASSERT_EQ(count_mismatches(oracle, servers, locator, keys), 0)
            << profile.profile << " hash=" << hash.memshard << " N=" << n;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Profiles, LibmemcachedProfileTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ProfileCase>& param_info) {
                           std::string name = param_info.param.profile;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(LibmemcachedProfileTest, EqualWeightsAtTwentyFiveServersUseFloat32Counts) {
  // At N = 25 float32 gives 156 points per server, exact arithmetic 160: a
  // ring built with exact arithmetic misplaces a few percent of keys.
  std::mt19937 rng(25);
  const auto servers = random_fleet(rng, 25);
  const auto oracle = make_oracle(servers, [](memcached_st* memc) {
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
  });
  const auto keys = memshard::testing::random_keys(rng, 20000, 40);
  const auto typed = memshard::profiles::libmemcached_ketama_weighted(servers);
  EXPECT_EQ(typed.points().size(), 25U * 156U);
  const memshard::AnyLocator locator(typed, "typed");
  EXPECT_EQ(count_mismatches(oracle, servers, locator, keys), 0);
}

TEST(LibmemcachedProfileTest, TypedConstructorsEqualTheFactory) {
  std::mt19937 rng(99);
  const auto servers = random_fleet(rng, 12, FleetShape{.weights = true});
  const auto keys = memshard::testing::random_keys(rng, 5000);
  const auto modula = memshard::profiles::libmemcached_modula(servers);
  const auto ketama = memshard::profiles::libmemcached_ketama(servers);
  const auto weighted = memshard::profiles::libmemcached_ketama_weighted(servers);
  const auto spy = memshard::profiles::libmemcached_ketama_spy<memshard::Murmur>(servers);
  const auto any_modula = memshard::make_locator("libmemcached-modula", servers);
  const auto any_ketama = memshard::make_locator("libmemcached-ketama", servers);
  const auto any_weighted = memshard::make_locator("libmemcached-ketama-weighted", servers);
  const auto any_spy = memshard::make_locator("libmemcached-ketama-spy", servers, {"murmur", 0});
  for (const auto& key : keys) {
    ASSERT_EQ(modula.locate(key), any_modula.locate(key));
    ASSERT_EQ(ketama.locate(key), any_ketama.locate(key));
    ASSERT_EQ(weighted.locate(key), any_weighted.locate(key));
    ASSERT_EQ(spy.locate(key), any_spy.locate(key));
  }
}

TEST(LibmemcachedProfileTest, FractionalWeightsAreRefused) {
  auto servers = memshard::testing::make_fleet(3);
  servers[1].weight = 1.5;
  EXPECT_THROW((void)memshard::make_locator("libmemcached-ketama-weighted", servers), ConfigError);
  EXPECT_THROW((void)memshard::profiles::libmemcached_modula(servers), ConfigError);
  // The article profiles take no weights, so any positive weight is fine.
  EXPECT_NO_THROW((void)memshard::make_locator("ring-crc32", servers));
}

// md5 x4 points never collide in practice, so no golden table shows a tie:
// the rule measured on libketama (the first server) is pinned on the options;
// its effect is KetamaLocatorTiesTest's.
TEST(LibmemcachedProfileTest, WeightedKetamaBreaksTiesForTheFirstServer) {
  EXPECT_EQ(memshard::profiles::libmemcached_ketama_weighted_options().ties,
            memshard::TieBreak::kFirstServer);
}

}  // namespace
}  // namespace profiles_libmemcached_test
