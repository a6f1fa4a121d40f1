// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_PROFILES_HPP_
#define MEMSHARD_PLACEMENT_PROFILES_HPP_

// placement/profiles.hpp: named placements that reproduce a real client key for key, as
// typed constructors (memshard::profiles::*) and through the runtime factory
// make_locator(profile name, servers, options). kProfiles lists every name.
// This umbrella includes one header per peer family (profiles/*.hpp, each with
// its typed constructors and registry entries) and the registry
// (placement/profiles/registry.hpp).
//
// | profiles                           | reproduce                                    |
// |------------------------------------|----------------------------------------------|
// | libmemcached-modula, -ketama,      | libmemcached 1.1's distributions (checked in |
// | -ketama-weighted, -ketama-spy      | process against memcached_server_by_key)     |
// | php-memcached, -libketama,         | PHP new Memcached() (aliases of the          |
// | -consistent                        | libmemcached profiles, by PHP option)        |
// | php-memcache, php-memcache-standard| PHP new Memcache() (pecl memcache)           |
// | twemproxy-ketama, twemproxy-modula | twemproxy (nutcracker)                       |
// | spymemcached-ketama, -ketama-      | spymemcached (Java)                          |
// | libmemcached, -arraymod            |                                              |
// | cache-memcached,                   | Perl Cache::Memcached and                    |
// | cache-memcached-fast               | Cache::Memcached::Fast                       |
// | python-memcache,                   | python-memcache and pymemcache's HashClient  |
// | pymemcache-rendezvous(-bytes)      | (str or bytes keys)                          |
// | dalli                              | Ruby Dalli 3                                 |
// | gomemcache                         | Go gomemcache                                |
// | modulo-crc32, ring-crc32           | the classic crc32 % N and crc32 ring         |
//
// The golden tables in tests/golden/ record where the real clients put keys;
// tests/golden_test.cpp holds every profile to them.

#include "memshard/placement/hash/hashers.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/hash_tag.hpp"
#include "memshard/placement/profiles/dalli.hpp"
#include "memshard/placement/profiles/generic.hpp"
#include "memshard/placement/profiles/gomemcache.hpp"
#include "memshard/placement/profiles/libmemcached.hpp"
#include "memshard/placement/profiles/perl.hpp"
#include "memshard/placement/profiles/php_memcache.hpp"
#include "memshard/placement/profiles/php_memcached.hpp"
#include "memshard/placement/profiles/profile_info.hpp"
#include "memshard/placement/profiles/python.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "memshard/placement/profiles/spymemcached.hpp"
#include "memshard/placement/profiles/twemproxy.hpp"

#endif  // MEMSHARD_PLACEMENT_PROFILES_HPP_
