// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HPP_
#define MEMSHARD_PLACEMENT_HPP_

// placement.hpp: all of placement (keys, servers, hashers, locators, profiles, and the
// codecs' Value and Codec concept), the memshard::placement target, which needs nothing but a
// C++20 compiler (no libmemcached, no zlib).

#include "memshard/codecs/any_codec.hpp"
#include "memshard/errors.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/hasher.hpp"
#include "memshard/placement/hash/hashers.hpp"
#include "memshard/placement/hash/java_string.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/hash/murmur3.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/placement/hash/runtime_hash.hpp"
#include "memshard/placement/hash/sha1.hpp"
#include "memshard/placement/key.hpp"
#include "memshard/placement/key_prefix.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/continuum_locators.hpp"
#include "memshard/placement/locators/hash_tag.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/locators/rendezvous_locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

#endif  // MEMSHARD_PLACEMENT_HPP_
