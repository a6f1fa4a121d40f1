// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_HPP_
#define MEMSHARD_CLIENT_HPP_

// client.hpp: the client component: ShardedClient over its shared fleet,
// make_client for a profile named at run time, their options and outcomes.
// Needs libmemcached (CMake target memshard::client).

#include "memshard/client/client_options.hpp"
#include "memshard/client/client_pool.hpp"
#include "memshard/client/make_client.hpp"
#include "memshard/client/multi_get.hpp"
#include "memshard/client/result.hpp"
#include "memshard/fleet/fleet.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/migration/sweeper.hpp"
#include "memshard/migration/warmer.hpp"
#include "memshard/migration/warmer_progress.hpp"
#include "memshard/observability/prometheus.hpp"
#include "memshard/sharded_client.hpp"

#endif  // MEMSHARD_CLIENT_HPP_
