// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MEMSHARD_HPP_
#define MEMSHARD_MEMSHARD_HPP_

// memshard.hpp: the whole library.

#include "memshard/client/client_options.hpp"
#include "memshard/client/client_pool.hpp"
#include "memshard/client/make_client.hpp"
#include "memshard/client/result.hpp"
#include "memshard/errors.hpp"
#include "memshard/hotkeys/load_options.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/migration/sweeper.hpp"
#include "memshard/migration/warmer.hpp"
#include "memshard/migration/warmer_progress.hpp"
#include "memshard/observability/prometheus.hpp"
#include "memshard/placement/hash/hashers.hpp"
#include "memshard/placement/key.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/continuum_locators.hpp"
#include "memshard/placement/locators/hash_tag.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/locators/rendezvous_locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/version.hpp"

#endif  // MEMSHARD_MEMSHARD_HPP_
