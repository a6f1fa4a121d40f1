// SPDX-License-Identifier: MIT
// typed_client.cpp: a client whose placement is a typed profile, one set and
// one get: what a user who picks the locator in code compiles.

#include <memshard/memshard.hpp>

auto main() -> int {
  const auto servers = memshard::parse_servers("127.0.0.1:11211,127.0.0.1:11212");
  memshard::ShardedClient client(servers,
                                 memshard::profiles::libmemcached_ketama_weighted(servers));
  const memshard::Status stored = client.set("greeting", "hello");
  const auto hit = client.get("greeting");
  return stored && hit ? 0 : 1;
}
