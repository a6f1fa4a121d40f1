// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_DETAIL_COMPILED_CLIENTS_HPP_
#define MEMSHARD_CLIENT_DETAIL_COMPILED_CLIENTS_HPP_

// client/detail/compiled_clients.hpp: the clients the compiled library (CMake target
// memshard::compiled) compiles once: ShardedClient over AnyLocator (make_client's) and over
// the locator of every typed profile. Linking memshard::compiled defines
// MEMSHARD_COMPILED_LIB, under which these are declared `extern template`: a unit that uses
// one of them compiles none of its code, the library has it. A ShardedClient over any other
// locator is compiled where it is used, as in the header-only mode.

#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/java_string.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/continuum_locators.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/locators/rendezvous_locator.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/version.hpp"

// MEMSHARD_DETAIL_COMPILED_LOCATORS(X): X(locator type) for each compiled client's locator:
// the typed profiles' return types (placement/profiles/) that are class templates, then the
// two that are classes. One entry a line: CMakeLists.txt reads them to generate one unit of
// the library per client (and, for a class template, its locator too).
#define MEMSHARD_DETAIL_COMPILED_TEMPLATE_LOCATORS(X)                 \
  X(::memshard::KetamaLocator<::memshard::Md5>)                       \
  X(::memshard::KetamaLocator<::memshard::OneAtATime>)                \
  X(::memshard::KetamaLocator<::memshard::Crc32>)                     \
  X(::memshard::ModuloLocator<::memshard::OneAtATime>)                \
  X(::memshard::ModuloLocator<::memshard::Md5>)                       \
  X(::memshard::ModuloLocator<::memshard::Crc32>)                     \
  X(::memshard::ModuloLocator<::memshard::LibmemcachedCrc>)           \
  X(::memshard::ModuloLocator<::memshard::JavaStringHash>)            \
  X(::memshard::ModuloLocator<::memshard::Fold15<::memshard::Crc32>>) \
  X(::memshard::CompatContinuumLocator<::memshard::LibmemcachedCrc>)  \
  X(::memshard::BucketedRingLocator<::memshard::Crc32>)
#define MEMSHARD_DETAIL_COMPILED_LOCATORS(X)    \
  MEMSHARD_DETAIL_COMPILED_TEMPLATE_LOCATORS(X) \
  X(::memshard::AnyLocator)                     \
  X(::memshard::RendezvousLocator)

#if defined(MEMSHARD_COMPILED_LIB)
// A unit that builds a typed profile's locator compiles none of its ring building either.
#define MEMSHARD_DETAIL_EXTERN_LOCATOR(L) extern template class L;
MEMSHARD_DETAIL_COMPILED_TEMPLATE_LOCATORS(MEMSHARD_DETAIL_EXTERN_LOCATOR)
#undef MEMSHARD_DETAIL_EXTERN_LOCATOR
#define MEMSHARD_DETAIL_EXTERN_CLIENT(L) extern template class ::memshard::ShardedClient<L>;
MEMSHARD_DETAIL_COMPILED_LOCATORS(MEMSHARD_DETAIL_EXTERN_CLIENT)
#undef MEMSHARD_DETAIL_EXTERN_CLIENT
#endif

#endif  // MEMSHARD_CLIENT_DETAIL_COMPILED_CLIENTS_HPP_
