// SPDX-License-Identifier: MIT
// make_client.cpp: a client whose placement is a profile named at run time
// (make_client), one set and one get: what a user who reads the profile from
// a configuration file compiles.

#include <memshard/memshard.hpp>

auto main() -> int {
  const auto servers = memshard::parse_servers("127.0.0.1:11211,127.0.0.1:11212");
  auto client = memshard::make_client("libmemcached-ketama-weighted", servers);
  const memshard::Status stored = client.set("greeting", "hello");
  const auto hit = client.get("greeting");
  return stored && hit ? 0 : 1;
}
