// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MEMSHARD_HPP_
#define MEMSHARD_MEMSHARD_HPP_

// memshard.hpp: the whole library.

#include "memshard/any_locator.hpp"
#include "memshard/client_options.hpp"
#include "memshard/client_pool.hpp"
#include "memshard/continuum_locators.hpp"
#include "memshard/errors.hpp"
#include "memshard/hash_tag.hpp"
#include "memshard/hashers.hpp"
#include "memshard/ketama_locator.hpp"
#include "memshard/key.hpp"
#include "memshard/locator.hpp"
#include "memshard/make_client.hpp"
#include "memshard/migration_options.hpp"
#include "memshard/modulo_locator.hpp"
#include "memshard/profiles.hpp"
#include "memshard/prometheus.hpp"
#include "memshard/rendezvous_locator.hpp"
#include "memshard/result.hpp"
#include "memshard/server.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/version.hpp"
#include "memshard/warmer.hpp"
#include "memshard/warmer_progress.hpp"

#endif  // MEMSHARD_MEMSHARD_HPP_
