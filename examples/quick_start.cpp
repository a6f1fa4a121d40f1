// SPDX-License-Identifier: MIT
// quick_start.cpp: where a few keys live on a three-server fleet, placed exactly as
// libmemcached KETAMA_WEIGHTED (PHP OPT_LIBKETAMA_COMPATIBLE, pylibmc ketama_weighted) does.

#include <iostream>
#include <memshard/memshard.hpp>
#include <string_view>

auto main() -> int {
  const auto servers = memshard::parse_servers("10.0.0.1:11211 10.0.0.2:11211:2 10.0.0.3:11211");
  const auto locator = memshard::profiles::libmemcached_ketama_weighted(servers);
  for (const std::string_view key : {"user:42", "session:7f3a", "cart:1001", "feed:home"}) {
    std::cout << key << " -> " << servers[locator.locate(key)].endpoint() << '\n';
  }
}
