// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_HPP_
#define MEMSHARD_CLIENT_HPP_

// client.hpp: the client component: ShardedClient over its shared fleet,
// make_client for a profile named at run time, their options and outcomes.
// Needs libmemcached (CMake target memshard::client).

#include "memshard/client/fleet.hpp"
#include "memshard/client/multi_get.hpp"
#include "memshard/client/server_health.hpp"
#include "memshard/client_options.hpp"
#include "memshard/client_pool.hpp"
#include "memshard/make_client.hpp"
#include "memshard/migration_options.hpp"
#include "memshard/prometheus.hpp"
#include "memshard/result.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/warmer.hpp"
#include "memshard/warmer_progress.hpp"

#endif  // MEMSHARD_CLIENT_HPP_
