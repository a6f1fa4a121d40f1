// SPDX-License-Identifier: MIT
// rendezvous_locator.hpp: RendezvousLocator (pymemcache's HashClient) against
// its definition written out here, and the locator conformance suites.
#include "memshard/placement/locators/rendezvous_locator.hpp"

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/profiles.hpp"
#include "support/fleet.hpp"
#include "support/locator_conformance.hpp"

namespace memshard::testing {

template <RendezvousInput kInput>
struct RendezvousOf {
  using Locator = RendezvousLocator;
  static auto make(std::span<const Server> servers) -> Locator { return Locator(servers, kInput); }
  static constexpr bool kWeights = true;  // ignored: every server scores alike
};

using Rendezvous = ::testing::Types<RendezvousOf<RendezvousInput::kBytes>,
                                    RendezvousOf<RendezvousInput::kCodePointLowBytes>,
                                    RendezvousOf<RendezvousInput::kPythonBytesRepr>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Rendezvous, LocatorConformanceTest, Rendezvous);
INSTANTIATE_TYPED_TEST_SUITE_P(Rendezvous, FailoverLocatorConformanceTest, Rendezvous);
INSTANTIATE_TYPED_TEST_SUITE_P(Rendezvous, ConsistentLocatorConformanceTest, Rendezvous);

}  // namespace memshard::testing

namespace rendezvous_locator_test {
namespace {

using memshard::Server;
using memshard::testing::FleetShape;
using memshard::testing::random_ascii_keys;
using memshard::testing::random_fleet;

auto node_of(const Server& server) -> std::string {
  return server.name.empty() ? server.host + ":" + std::to_string(server.port) : server.name;
}

TEST(RendezvousLocatorTest, HighestMurmur3ScoreWins) {
  std::mt19937 rng(1);
  for (const std::size_t n : {1U, 2U, 3U, 7U, 20U}) {
    const auto servers = random_fleet(rng, n, FleetShape{.names = n == 7});
    const memshard::RendezvousLocator locator(servers);
    for (const std::string& key : random_ascii_keys(rng, 2000)) {
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
  for (const std::string& key : random_ascii_keys(rng, 5000)) {
    const std::size_t before = all.locate(key);
    const std::size_t after = without.locate(key);
    const std::size_t after_in_old_order = after >= 3 ? after + 1 : after;
    if (before != 3) {
      ASSERT_EQ(after_in_old_order, before) << key;
    }
    ASSERT_EQ(all.locate_avoiding(key, avoid), after_in_old_order) << key;
  }
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
}  // namespace rendezvous_locator_test
