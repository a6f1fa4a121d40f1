// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_FLEET_HPP_
#define MEMSHARD_TESTS_SUPPORT_FLEET_HPP_

// support/fleet.hpp: deterministic server lists and keys for placement tests.

#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "memshard/placement/server.hpp"

namespace memshard::testing {

/// make_fleet: `count` servers "10.0.x.y:11211", weight 1.
inline auto make_fleet(std::size_t count) -> std::vector<Server> {
  std::vector<Server> servers;
  for (std::size_t i = 0; i < count; ++i) {
    servers.push_back(Server{"10." + std::to_string(i / 65536) + "." +
                                 std::to_string(i / 256 % 256) + "." + std::to_string(i % 256),
                             11211, 1, ""});
  }
  return servers;
}

/// FleetShape: what a random fleet may contain.
struct FleetShape {
  bool weights = false;  ///< weights 1..10 (else all 1)
  bool names = false;    ///< give every server a name
};

/// random_fleet: `count` distinct servers, a mix of hostnames and IPv4
/// literals, on port 11211 or others.
inline auto random_fleet(std::mt19937& rng, std::size_t count, FleetShape shape = {})
    -> std::vector<Server> {
  std::vector<Server> servers;
  std::set<std::string> seen;
  while (servers.size() < count) {
    Server server;
    if (rng() % 2 == 0) {
      server.host = "10." + std::to_string(rng() % 256) + "." + std::to_string(rng() % 256) + "." +
                    std::to_string(rng() % 254 + 1);
    } else {
      static constexpr const char* kWords[] = {"cache", "mc", "memcache", "shard", "kv"};
      server.host = std::string(kWords[rng() % 5]) + std::to_string(rng() % 1000) +
                    (rng() % 2 == 0 ? ".example.com" : ".prod.internal");
    }
    server.port = rng() % 3 == 0 ? static_cast<std::uint16_t>(11212 + rng() % 20000) : 11211;
    server.weight = shape.weights ? static_cast<double>(1 + rng() % 10) : 1;
    if (shape.names) {
      server.name = "node" + std::to_string(servers.size() + 1);
    }
    if (seen.insert(server.endpoint()).second) {
      servers.push_back(server);
    }
  }
  return servers;
}

/// random_key: a legal memcached key of 1 to `max_length` bytes, printable
/// ASCII and UTF-8-like high bytes, no spaces or control bytes.
inline auto random_key(std::mt19937& rng, std::size_t max_length = 250) -> std::string {
  std::string key(1 + rng() % max_length, 'k');
  for (char& c : key) {
    const auto pick = rng() % 100;
    c = pick < 90 ? static_cast<char>(0x21 + rng() % 94) : static_cast<char>(0x80 + rng() % 128);
  }
  return key;
}

/// random_keys: `count` random legal keys of 1 to `max_length` bytes.
inline auto random_keys(std::mt19937& rng, std::size_t count, std::size_t max_length = 250)
    -> std::vector<std::string> {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    keys.push_back(random_key(rng, max_length));
  }
  return keys;
}

/// random_ascii_keys: `count` keys of 1 to 60 printable ASCII bytes (0x21 to
/// 0x7E).
inline auto random_ascii_keys(std::mt19937& rng, std::size_t count) -> std::vector<std::string> {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::string key(1 + rng() % 60, 'a');
    for (char& c : key) {
      c = static_cast<char>(0x21 + rng() % 0x5E);
    }
    keys.push_back(key);
  }
  return keys;
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_FLEET_HPP_
