// SPDX-License-Identifier: MIT
// A placement-only user of memshard (a proxy, a tool): places keys under two profiles and
// checks them against libmemcached 1.1's own answers, recorded once (libmemcached itself is
// neither included nor linked here, and may be absent).
#include <cstddef>
#include <cstdio>
#include <iterator>
#include <memshard/placement.hpp>
#include <string_view>
#include <vector>

namespace {

struct Expected {
  std::string_view key;
  std::size_t ketama_weighted;  // server index under libmemcached-ketama-weighted
  std::size_t modula;           // server index under libmemcached-modula
};

// memcached_server_by_key() of libmemcached 1.1.4, KETAMA_WEIGHTED and the default MODULA.
constexpr Expected kExpected[] = {
    {"user:42", 0, 2}, {"session:7f3a", 3, 3}, {"cart:1001", 3, 2},   {"feed:home", 2, 3},
    {"a", 3, 2},       {"memshard", 0, 2},     {"placement:0", 2, 0}, {"placement:1", 0, 0},
};

}  // namespace

auto main() -> int {
  const std::vector<memshard::Server> servers =
      memshard::parse_servers("10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11211,10.0.0.4:11212");
  // The typed profile: make_locator by name compiles every profile, which the pkg-config
  // client (make_client) already shows.
  const auto ketama = memshard::profiles::libmemcached_ketama_weighted(servers);
  const auto modula = memshard::profiles::libmemcached_modula(servers);
  int mismatches = 0;
  for (const Expected& expected : kExpected) {
    const std::size_t got_ketama = ketama.locate(expected.key);
    const std::size_t got_modula = modula.locate(expected.key);
    if (got_ketama != expected.ketama_weighted || got_modula != expected.modula) {
      std::printf("%.*s: ketama %zu (want %zu), modula %zu (want %zu)\n",
                  static_cast<int>(expected.key.size()), expected.key.data(), got_ketama,
                  expected.ketama_weighted, got_modula, expected.modula);
      ++mismatches;
    }
  }
  std::printf("memshard %d.%d.%d placement: %d mismatches in %zu keys\n", MEMSHARD_VERSION_MAJOR,
              MEMSHARD_VERSION_MINOR, MEMSHARD_VERSION_PATCH, mismatches, std::size(kExpected));
  return mismatches == 0 ? 0 : 1;
}
