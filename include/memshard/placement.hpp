// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_HPP_
#define MEMSHARD_PLACEMENT_HPP_

// placement.hpp: all of placement (keys, servers, hashers, locators, profiles, and the
// codecs' Value and Codec concept), the memshard::placement target, which needs nothing but a
// C++20 compiler (no libmemcached, no zlib).

#include "memshard/any_locator.hpp"
#include "memshard/codecs/any_codec.hpp"
#include "memshard/continuum_locators.hpp"
#include "memshard/crc32.hpp"
#include "memshard/errors.hpp"
#include "memshard/fnv.hpp"
#include "memshard/hash_tag.hpp"
#include "memshard/hasher.hpp"
#include "memshard/hashers.hpp"
#include "memshard/java_string.hpp"
#include "memshard/ketama_locator.hpp"
#include "memshard/key.hpp"
#include "memshard/key_prefix.hpp"
#include "memshard/locator.hpp"
#include "memshard/md5.hpp"
#include "memshard/modulo_locator.hpp"
#include "memshard/murmur.hpp"
#include "memshard/murmur3.hpp"
#include "memshard/one_at_a_time.hpp"
#include "memshard/profiles.hpp"
#include "memshard/rendezvous_locator.hpp"
#include "memshard/server.hpp"
#include "memshard/sha1.hpp"
#include "memshard/version.hpp"

#endif  // MEMSHARD_PLACEMENT_HPP_
