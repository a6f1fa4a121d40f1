// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_LOCATOR_CHECKS_HPP_
#define MEMSHARD_TESTS_SUPPORT_LOCATOR_CHECKS_HPP_

// support/locator_checks.hpp: the checks of locator.hpp's contracts for any
// locator, as functions over a `make(servers)` callable: what the typed suites
// of support/locator_conformance.hpp run, and what tests over locators chosen
// at run time (the profiles) call directly. Defines no test suite, so a file
// may include it without instantiating any.

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/server.hpp"
#include "support/fleet.hpp"

namespace memshard::testing {

/// kFleetSizes: the server counts every check builds a locator for.
inline constexpr std::size_t kFleetSizes[] = {1, 2, 3, 5, 16};

/// kWeightedFleets: whether the traits ask for fleets with weights
/// (`static constexpr bool kWeights = true;`).
template <class Traits>
inline constexpr bool kWeightedFleets = requires {
  requires Traits::kWeights;
};

/// conformance_keys: keys of every shape a locator must place: ASCII of every
/// length 1..250, UTF-8, hash-tagged keys, each byte value alone, all 256
/// byte values forward and reversed, and random legal keys.
inline auto conformance_keys() -> std::vector<std::string> {
  std::vector<std::string> keys;
  std::mt19937 rng(30);
  for (std::size_t length = 1; length <= 250; ++length) {
    std::string key(length, 'a');
    for (char& c : key) {
      c = static_cast<char>(0x21 + rng() % 94);
    }
    keys.push_back(std::move(key));
  }
  for (const std::string_view piece :
       {"\xC3\xA9", "\xE6\x9D\xB1\xE4\xBA\xAC", "\xF0\x9F\x98\x80", "caf\xC3\xA9:"}) {
    std::string key;
    while (key.size() + piece.size() <= 250) {
      key += piece;
      keys.push_back(key);
    }
  }
  for (const std::string_view tagged : {"user:{42}:name", "user:{42}:cart", "{}", "{a}{b}", "::"}) {
    keys.emplace_back(tagged);
  }
  std::string forward;
  for (int byte = 0; byte < 256; ++byte) {
    keys.emplace_back(1, static_cast<char>(byte));
    forward.push_back(static_cast<char>(byte));
  }
  keys.push_back(forward);
  keys.emplace_back(forward.rbegin(), forward.rend());
  for (std::string& key : random_keys(rng, 1000)) {
    keys.push_back(std::move(key));
  }
  return keys;
}

/// conformance_fleet: a random fleet of `count` servers for the checks.
inline auto conformance_fleet(std::size_t count, bool weights, std::uint32_t seed)
    -> std::vector<Server> {
  std::mt19937 rng(seed + static_cast<std::uint32_t>(count));
  return random_fleet(rng, count, FleetShape{.weights = weights});
}

/// expect_indexes_below_size: for fleets of every size, size() is the count
/// and every key's index is below it.
template <class Make>
void expect_indexes_below_size(Make make, bool weights) {
  const auto keys = conformance_keys();
  for (const std::size_t n : kFleetSizes) {
    const auto servers = conformance_fleet(n, weights, 1);
    const auto locator = make(std::span<const Server>(servers));
    ASSERT_EQ(locator.size(), n);
    for (const std::string& key : keys) {
      ASSERT_LT(locator.locate(key), n) << n << " servers, key of " << key.size() << " bytes";
    }
    ASSERT_LT(locator.locate(std::string_view{}), n) << "the empty key";
  }
}

/// expect_deterministic: two locators built from the same arguments agree key
/// by key, and each answers the same when asked again.
template <class Make>
void expect_deterministic(Make make, bool weights) {
  const auto keys = conformance_keys();
  for (const std::size_t n : {std::size_t{2}, std::size_t{7}}) {
    const auto servers = conformance_fleet(n, weights, 2);
    const auto first = make(std::span<const Server>(servers));
    const std::vector<Server> same_list = servers;  // equal arguments, other objects
    const auto second = make(std::span<const Server>(same_list));
    std::vector<std::size_t> answers;
    for (const std::string& key : keys) {
      answers.push_back(first.locate(key));
      ASSERT_EQ(second.locate(key), answers.back()) << n << " servers, " << key.size() << " bytes";
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(first.locate(keys[i]), answers[i]) << "asked again, key " << i;
      ASSERT_EQ(first.locate(std::string(keys[i])), answers[i]) << "another copy of key " << i;
    }
  }
}

/// expect_locate_many_equals_locate: locate_many of batches of 0..20 keys and
/// of a large batch gives locate() of each key and writes nothing past them.
template <class Make>
void expect_locate_many_equals_locate(Make make, bool weights) {
  const auto keys = conformance_keys();
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  constexpr std::size_t kUnwritten = 0xC0FFEE;
  for (const std::size_t n : kFleetSizes) {
    const auto servers = conformance_fleet(n, weights, 3);
    const auto locator = make(std::span<const Server>(servers));
    std::vector<std::size_t> counts(21);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      counts[i] = i;
    }
    counts.push_back(views.size());
    for (const std::size_t count : counts) {
      for (std::size_t first = 0; first + count <= views.size(); first += count + 97) {
        const std::span<const std::string_view> batch(views.data() + first, count);
        std::vector<std::size_t> out(count + 1, kUnwritten);
        locator.locate_many(batch, out);
        for (std::size_t i = 0; i < count; ++i) {
          ASSERT_EQ(out[i], locator.locate(batch[i]))
              << n << " servers, key " << i << " of a batch of " << count;
        }
        ASSERT_EQ(out[count], kUnwritten) << "wrote past a batch of " << count;
        if (count == 0 || count == views.size()) {
          break;
        }
      }
    }
  }
}

/// expect_avoiding_keeps_live_servers_keys: for many sets of avoided servers
/// (not all): a key whose server is live stays there; a key whose server is
/// avoided goes to a live server; avoiding nobody changes nothing.
template <class Make>
void expect_avoiding_keeps_live_servers_keys(Make make, bool weights) {
  const auto keys = conformance_keys();
  std::mt19937 rng(31);
  for (const std::size_t n : kFleetSizes) {
    const auto servers = conformance_fleet(n, weights, 4);
    const auto locator = make(std::span<const Server>(servers));
    const std::vector<std::uint8_t> nobody(n, 0);
    std::vector<std::size_t> primaries;
    for (const std::string& key : keys) {
      primaries.push_back(locator.locate(key));
      ASSERT_EQ(locator.locate_avoiding(key, nobody), primaries.back()) << "nobody avoided";
    }
    for (int round = 0; round < 8 && n > 1; ++round) {
      std::vector<std::uint8_t> avoid(n, 0);
      for (std::uint8_t& flag : avoid) {
        flag = static_cast<std::uint8_t>(rng() % 2);
      }
      avoid[rng() % n] = 0;  // at least one live server
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::size_t chosen = locator.locate_avoiding(keys[i], avoid);
        ASSERT_LT(chosen, n);
        if (avoid[primaries[i]] == 0) {
          ASSERT_EQ(chosen, primaries[i]) << n << " servers: a live server's key moved";
        } else {
          ASSERT_EQ(avoid[chosen], 0) << n << " servers: sent to an avoided server";
        }
      }
    }
  }
}

/// expect_all_avoided_answers_locate: with every server avoided,
/// locate_avoiding answers locate(key).
template <class Make>
void expect_all_avoided_answers_locate(Make make, bool weights) {
  const auto keys = conformance_keys();
  for (const std::size_t n : kFleetSizes) {
    const auto servers = conformance_fleet(n, weights, 5);
    const auto locator = make(std::span<const Server>(servers));
    const std::vector<std::uint8_t> everyone(n, 1);
    for (const std::string& key : keys) {
      ASSERT_EQ(locator.locate_avoiding(key, everyone), locator.locate(key)) << n << " servers";
    }
  }
}

/// expect_ejecting_one_moves_only_its_keys: avoiding one server moves only
/// its keys, each to another server, for every server of a fleet.
template <class Make>
void expect_ejecting_one_moves_only_its_keys(Make make, bool weights) {
  const auto keys = conformance_keys();
  const std::size_t n = 6;
  const auto servers = conformance_fleet(n, weights, 6);
  const auto locator = make(std::span<const Server>(servers));
  for (std::size_t ejected = 0; ejected < n; ++ejected) {
    std::vector<std::uint8_t> avoid(n, 0);
    avoid[ejected] = 1;
    std::size_t moved = 0;
    for (const std::string& key : keys) {
      const std::size_t primary = locator.locate(key);
      const std::size_t chosen = locator.locate_avoiding(key, avoid);
      if (primary == ejected) {
        ASSERT_NE(chosen, ejected) << "the key stayed on ejected server " << ejected;
        ++moved;
      } else {
        ASSERT_EQ(chosen, primary)
            << "server " << ejected << " ejected, a key of " << primary << " moved";
      }
    }
    EXPECT_GT(moved, 0U) << "server " << ejected << " owned no key: the check proved nothing";
  }
}

/// expect_removal_moves_only_its_keys: a locator built for the list without
/// one server places every other server's keys as before.
template <class Make>
void expect_removal_moves_only_its_keys(Make make, bool weights) {
  const auto keys = conformance_keys();
  const std::size_t n = 6;
  const auto servers = conformance_fleet(n, weights, 7);
  const auto all = make(std::span<const Server>(servers));
  for (std::size_t removed = 0; removed < n; ++removed) {
    std::vector<Server> fewer = servers;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(removed));
    const auto without = make(std::span<const Server>(fewer));
    for (const std::string& key : keys) {
      const std::size_t before = all.locate(key);
      const std::size_t after = without.locate(key);
      const std::size_t after_in_old_order = after >= removed ? after + 1 : after;
      if (before != removed) {
        ASSERT_EQ(after_in_old_order, before) << "server " << removed << " removed";
      }
    }
  }
}

/// make_with: `Traits::make` as a callable.
template <class Traits>
auto make_with() {
  return [](std::span<const Server> servers) { return Traits::make(servers); };
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_LOCATOR_CHECKS_HPP_
