// SPDX-License-Identifier: MIT
// twemproxy (profiles/twemproxy.hpp): the typed constructors place keys as
// their registry entries do for every name of nutcracker's vocabulary, and the
// names nutcracker means otherwise are refused.
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "memshard/crc32.hpp"
#include "memshard/errors.hpp"
#include "memshard/fnv.hpp"
#include "memshard/md5.hpp"
#include "memshard/murmur.hpp"
#include "memshard/one_at_a_time.hpp"
#include "memshard/profiles/registry.hpp"
#include "memshard/profiles/twemproxy.hpp"
#include "support/fleet.hpp"
#include "support/same_placement.hpp"

namespace {

using memshard::testing::FleetShape;
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
  const auto message = [&](const char* hash) -> std::string {
    try {
      static_cast<void>(memshard::make_locator("twemproxy-ketama", servers, {.hash = hash}));
    } catch (const memshard::ConfigError& error) {
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
  EXPECT_NE(message("sha1").find("unknown hash for twemproxy-ketama (known: md5, one_at_a_time"),
            std::string::npos)
      << message("sha1");
}

}  // namespace
