# SPDX-License-Identifier: MIT
#[=======================================================================[.rst:
FindMemcachedServer
-------------------

Finds the ``memcached`` server executable that memshard's live-server tests
and benchmarks start on 127.0.0.1. Test-only: this module is not installed.

Result variables
^^^^^^^^^^^^^^^^

``MemcachedServer_FOUND``
  True when a memcached executable was found.
``MemcachedServer_EXECUTABLE``
  Its full path (a cache entry: ``-DMemcachedServer_EXECUTABLE=/path`` picks
  another one).
``MemcachedServer_VERSION``
  Its version, from ``memcached -V`` (for example ``1.6.18``).

At run time, the ``MEMSHARD_MEMCACHED`` environment variable overrides the
executable found here.
#]=======================================================================]

find_program(
  MemcachedServer_EXECUTABLE
  NAMES memcached
  PATHS /usr/bin /usr/sbin /usr/local/bin /usr/local/sbin
  DOC "memcached server executable for memshard's live-server tests")
mark_as_advanced(MemcachedServer_EXECUTABLE)

if(MemcachedServer_EXECUTABLE)
  execute_process(
    COMMAND "${MemcachedServer_EXECUTABLE}" -V
    OUTPUT_VARIABLE _memcached_version_output
    ERROR_QUIET
    RESULT_VARIABLE _memcached_version_result
    TIMEOUT 10)
  if(_memcached_version_result EQUAL 0 AND _memcached_version_output MATCHES
                                           "memcached ([0-9]+(\\.[0-9]+)*)")
    set(MemcachedServer_VERSION "${CMAKE_MATCH_1}")
  endif()
  unset(_memcached_version_output)
  unset(_memcached_version_result)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(
  MemcachedServer
  REQUIRED_VARS MemcachedServer_EXECUTABLE
  VERSION_VAR MemcachedServer_VERSION)
