// SPDX-License-Identifier: MIT
// A user of the memshard package: places keys and links libmemcached.
#include <libmemcached-1.0/memcached.h>

#include <cstdio>
#include <cstring>
#include <memshard/memshard.hpp>
#include <string>
#include <vector>

int main() {
  const std::vector<memshard::Server> servers =
      memshard::parse_servers("10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11211");
  const auto locator = memshard::profiles::libmemcached_ketama_weighted(servers);

  // The same placement through libmemcached itself, which the package links.
  memcached_st* memc = memcached(nullptr, 0);
  if (memc == nullptr) {
    return 1;
  }
  memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
  for (const auto& server : servers) {
    memcached_server_add(memc, server.host.c_str(), server.port);
  }
  int mismatches = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "consumer:" + std::to_string(i);
    memcached_return_t rc = MEMCACHED_SUCCESS;
    const memcached_instance_st* server =
        memcached_server_by_key(memc, key.data(), key.size(), &rc);
    const auto& expected = servers[locator.locate(key)];
    if (server == nullptr || expected.host != memcached_server_name(server)) {
      ++mismatches;
    }
  }
  memcached_free(memc);
  std::printf("memshard %d.%d.%d: %d mismatches in 1000 keys\n", MEMSHARD_VERSION_MAJOR,
              MEMSHARD_VERSION_MINOR, MEMSHARD_VERSION_PATCH, mismatches);
  return mismatches == 0 ? 0 : 1;
}
