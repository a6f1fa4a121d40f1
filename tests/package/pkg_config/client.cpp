// SPDX-License-Identifier: MIT
// A user of memshard that builds without CMake:
//   c++ -std=c++20 client.cpp $(pkg-config --cflags --libs memshard)
// It constructs a ShardedClient (no server is contacted) and prints where a key goes, which
// needs libmemcached and libhashkit linked.
#include <cstdio>
#include <memshard/memshard.hpp>

auto main() -> int {
  auto client = memshard::make_client("libmemcached-ketama-weighted",
                                      memshard::parse_servers("10.0.0.1:11211,10.0.0.3:11211"));
  std::printf("user:42 -> %s\n", client.server_for("user:42").endpoint().c_str());
  return 0;
}
