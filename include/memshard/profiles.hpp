// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PROFILES_HPP_
#define MEMSHARD_PROFILES_HPP_

// profiles.hpp: named placements that reproduce a real client key for key, as
// typed constructors (memshard::profiles::*) and through the runtime factory
// make_locator(profile name, servers, options). kProfiles lists every name.
// This umbrella includes one header per peer family (profiles/*.hpp, each with
// its typed constructors and registry entries) and the registry
// (profiles/registry.hpp).
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

#include "memshard/any_locator.hpp"
#include "memshard/hash_tag.hpp"
#include "memshard/hashers.hpp"
#include "memshard/profiles/dalli.hpp"
#include "memshard/profiles/generic.hpp"
#include "memshard/profiles/gomemcache.hpp"
#include "memshard/profiles/libmemcached.hpp"
#include "memshard/profiles/perl.hpp"
#include "memshard/profiles/php_memcache.hpp"
#include "memshard/profiles/php_memcached.hpp"
#include "memshard/profiles/profile_info.hpp"
#include "memshard/profiles/python.hpp"
#include "memshard/profiles/registry.hpp"
#include "memshard/profiles/spymemcached.hpp"
#include "memshard/profiles/twemproxy.hpp"

#endif  // MEMSHARD_PROFILES_HPP_
