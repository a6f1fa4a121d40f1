// SPDX-License-Identifier: MIT
// The registry (placement/profiles/registry.hpp): every entry found by name, in its
// order, with the options and hash names it had as a positional table (pinned
// here), and make_locator's refusals.
#include <cstddef>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/errors.hpp"
#include "memshard/placement/hash/runtime_hash.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "support/fleet.hpp"

namespace profiles_registry_test {
namespace {

using memshard::ConfigError;
using memshard::Server;

constexpr std::string_view kLibhashkit =
    "one_at_a_time, md5, crc, crc32, fnv1_32, fnv1a_32, fnv1_64, fnv1a_64, murmur";
constexpr std::string_view kNutcracker =
    "md5, one_at_a_time, crc32 (15-bit), crc32a, fnv1_32, fnv1a_32, fnv1_64, fnv1a_64, murmur";

struct Expected {
  std::string_view name;
  std::string_view default_hash;
  std::string_view hash_names;
  bool has_points;
  bool has_weighted;
  bool has_hash_tag;
};

// The registry as it was written before it was split by family, row by row.
constexpr Expected kExpected[] = {
    {"libmemcached-modula", "one_at_a_time", kLibhashkit, false, false, false},
    {"libmemcached-ketama", "one_at_a_time", kLibhashkit, true, false, false},
    {"libmemcached-ketama-weighted", "md5", kLibhashkit, true, false, false},
    {"libmemcached-ketama-spy", "one_at_a_time", kLibhashkit, true, false, false},
    {"php-memcached", "one_at_a_time", kLibhashkit, false, false, false},
    {"php-memcached-libketama", "md5", kLibhashkit, true, false, false},
    {"php-memcached-consistent", "one_at_a_time", kLibhashkit, true, false, false},
    {"twemproxy-ketama", "md5", kNutcracker, false, false, true},
    {"twemproxy-modula", "md5", kNutcracker, false, false, true},
    {"spymemcached-ketama", "", "", false, true, false},
    {"spymemcached-ketama-libmemcached", "", "", false, true, false},
    {"spymemcached-arraymod", "java_string", "java_string, crc", false, false, false},
    {"cache-memcached", "", "", false, false, false},
    {"cache-memcached-fast", "", "", true, false, false},
    {"python-memcache", "", "", false, false, false},
    {"pymemcache-rendezvous", "", "", false, false, false},
    {"pymemcache-rendezvous-bytes", "", "", false, false, false},
    {"php-memcache", "crc32", "crc32, fnv", false, false, false},
    {"php-memcache-standard", "crc32", "crc32, fnv", false, false, false},
    {"dalli", "", "", false, false, false},
    {"gomemcache", "", "", false, false, false},
    {"modulo-crc32", "crc32", kLibhashkit, false, false, false},
    {"ring-crc32", "crc32", kLibhashkit, true, false, false},
};

TEST(ProfilesRegistryTest, ListsEveryProfileInOrderWithItsOptionsAndHashNames) {
  ASSERT_EQ(memshard::kProfiles.size(), std::size(kExpected));
  for (std::size_t i = 0; i < memshard::kProfiles.size(); ++i) {
    const memshard::ProfileInfo& profile = memshard::kProfiles.at(i);
    const Expected& expected = kExpected[i];
    SCOPED_TRACE(std::string(expected.name));
    EXPECT_EQ(profile.name, expected.name);
    EXPECT_EQ(profile.default_hash, expected.default_hash);
    EXPECT_EQ(memshard::hash_names(profile), expected.hash_names);
    EXPECT_EQ(profile.has_points, expected.has_points);
    EXPECT_EQ(profile.has_weighted, expected.has_weighted);
    EXPECT_EQ(profile.has_hash_tag, expected.has_hash_tag);
    EXPECT_FALSE(profile.summary.empty());
  }
}

TEST(ProfilesRegistryTest, EveryEntryIsFoundByItsName) {
  std::set<std::string_view> names;
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    EXPECT_EQ(memshard::find_profile(profile.name), &profile) << profile.name;
    EXPECT_TRUE(names.insert(profile.name).second) << profile.name << " listed twice";
  }
  EXPECT_EQ(memshard::find_profile("ketama"), nullptr);
  EXPECT_EQ(memshard::find_profile(""), nullptr);
}

TEST(ProfilesRegistryTest, EachEntryBuildsEitherThroughItsHashesOrItsOwnBuilder) {
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    SCOPED_TRACE(std::string(profile.name));
    if (profile.hashes.empty()) {
      EXPECT_NE(profile.build, nullptr);
      EXPECT_TRUE(profile.default_hash.empty());
      continue;
    }
    EXPECT_EQ(profile.build, nullptr);
    // The default is a name of the vocabulary, not an alias.
    bool found = false;
    for (const memshard::HashChoice& choice : profile.hashes) {
      if (choice.name == profile.default_hash) {
        found = choice.build != nullptr && !choice.alias;
      }
      EXPECT_TRUE(choice.build != nullptr || !choice.refusal.empty()) << choice.name;
    }
    EXPECT_TRUE(found) << profile.default_hash;
  }
}

TEST(ProfilesRegistryTest, EveryProfileBuildsForSeveralSizesAndEveryHashItNames) {
  std::mt19937 rng(6);
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    SCOPED_TRACE(std::string(profile.name));
    for (const std::size_t n : {1U, 2U, 5U}) {
      const auto servers = memshard::testing::random_fleet(rng, n);
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
      EXPECT_NO_THROW(static_cast<void>(memshard::make_locator(
          profile.name, memshard::testing::random_fleet(rng, 3), {.hash = hash})))
          << hash;
      start = end + 2;
    }
  }
}

// A profile's default hash builds its typed locator (the hash inlined); another
// name of its vocabulary builds the same placement over RuntimeHash (one locator
// type for every name, one indirect call per key), key for key as the typed one.
TEST(ProfilesRegistryTest, TheDefaultHashIsTypedAndTheOthersPlaceAsTheTypedProfile) {
  std::mt19937 rng(7);
  const auto servers = memshard::testing::random_fleet(rng, 7);
  const auto by_default = memshard::make_locator("libmemcached-ketama", servers);
  EXPECT_NE(by_default.target<memshard::KetamaLocator<memshard::OneAtATime>>(), nullptr);
  const auto by_name = memshard::make_locator("libmemcached-ketama", servers, {.hash = "md5"});
  const auto* runtime = by_name.target<memshard::KetamaLocator<memshard::RuntimeHash>>();
  ASSERT_NE(runtime, nullptr);
  const auto typed = memshard::profiles::libmemcached_ketama<memshard::Md5>(servers);
  const auto modula = memshard::make_locator("twemproxy-modula", servers, {.hash = "fnv1a_64"});
  EXPECT_NE(modula.target<memshard::ModuloLocator<memshard::RuntimeHash>>(), nullptr);
  const auto typed_modula = memshard::profiles::twemproxy_modula<memshard::Fnv1a_64>(servers);
  for (int i = 0; i < 5000; ++i) {
    const std::string key = "key:" + std::to_string(i);
    ASSERT_EQ(by_name.locate(key), typed.locate(key)) << key;
    ASSERT_EQ(modula.locate(key), typed_modula.locate(key)) << key;
  }
}

TEST(ProfilesRegistryTest, TheFamilyEntriesAreTheRegistrys) {
  EXPECT_EQ(memshard::kProfiles.front().name, memshard::profiles::kLibmemcachedModulaProfile.name);
  EXPECT_EQ(memshard::find_profile("php-memcached-consistent")->hashes.data(),
            memshard::profiles::kLibmemcachedKetamaProfile.hashes.data());
  EXPECT_EQ(memshard::find_profile("dalli")->build, memshard::profiles::kDalliProfile.build);
}

TEST(ProfilesRegistryTest, HashNamesListsNotesButNotAliasesOrRefusals) {
  const memshard::HashChoice kChoices[] = {
      {.name = "a", .build = memshard::profiles::kGomemcacheProfile.build},
      {.name = "b", .note = "note", .build = memshard::profiles::kGomemcacheProfile.build},
      {.name = "c", .build = memshard::profiles::kGomemcacheProfile.build, .alias = true},
      {.name = "d", .refusal = "no"},
  };
  const memshard::ProfileInfo profile{.name = "x", .summary = "y", .hashes = kChoices};
  EXPECT_EQ(memshard::hash_names(profile), "a, b (note)");
  EXPECT_EQ(memshard::hash_names(memshard::profiles::kDalliProfile), "");
}

TEST(ProfilesMakeLocatorTest, RejectsUnknownProfileHashAndMisplacedPoints) {
  const auto servers = memshard::testing::make_fleet(3);
  EXPECT_THROW((void)memshard::make_locator("ketama", servers), ConfigError);
  EXPECT_THROW((void)memshard::make_locator("libmemcached-ketama", servers, {"sha1", 0}),
               ConfigError);
  EXPECT_THROW((void)memshard::make_locator("libmemcached-modula", servers, {"", 100}),
               ConfigError);
  EXPECT_THROW((void)memshard::make_locator("ring-crc32", std::span<const Server>{}), ConfigError);
  try {
    (void)memshard::make_locator("ketama", servers);
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("libmemcached-ketama-weighted"), std::string::npos);
  }
}

TEST(ProfilesMakeLocatorTest, OptionsAProfileDoesNotTakeAreRefused) {
  const auto servers = memshard::parse_servers("a:11211,b:11211");
  EXPECT_THROW((void)memshard::make_locator("dalli", servers, {.hash = "md5"}), ConfigError);
  EXPECT_THROW((void)memshard::make_locator("twemproxy-ketama", servers, {.points = 100}),
               ConfigError);
  EXPECT_THROW((void)memshard::make_locator("dalli", servers, {.weighted = true}), ConfigError);
}

TEST(ProfilesMakeLocatorTest, PointsOptionChangesTheRing) {
  const auto servers = memshard::testing::make_fleet(3);
  const auto locator = memshard::make_locator("ring-crc32", servers, {"", 16});
  const auto* ring = locator.target<memshard::KetamaLocator<memshard::Crc32>>();
  ASSERT_NE(ring, nullptr);
  EXPECT_EQ(ring->points().size(), 48U);
  EXPECT_EQ(locator.description(), "ring-crc32 hash=crc32 points=16");
}

TEST(ProfilesMakeLocatorTest, UnknownHashesAreNamedWithTheProfilesOwnVocabulary) {
  const auto servers = memshard::testing::make_fleet(3);
  try {
    (void)memshard::make_locator("php-memcache", servers, {"crc", 0});
    ADD_FAILURE() << "crc accepted";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "memshard: unknown hash for php-memcache (known: crc32, fnv): crc");
  }
  // An alias builds what it names.
  const auto by_alias = memshard::make_locator("libmemcached-modula", servers, {"default", 0});
  const auto by_name = memshard::make_locator("libmemcached-modula", servers);
  EXPECT_EQ(by_alias.locate("user:42"), by_name.locate("user:42"));
  EXPECT_EQ(by_alias.description(), "libmemcached-modula hash=default");
}

}  // namespace
}  // namespace profiles_registry_test
