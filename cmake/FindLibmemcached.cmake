# SPDX-License-Identifier: MIT
#[=======================================================================[.rst:
FindLibmemcached
----------------

Finds libmemcached (the C client library for memcached). Debian's
libmemcached-dev ships a pkg-config file but no CMake package, hence this module.

Imported targets
^^^^^^^^^^^^^^^^

``Libmemcached::Libmemcached``
  libmemcached itself (``-lmemcached``), with libhashkit.
``Libmemcached::Hashkit``
  libhashkit, libmemcached's hash library (``-lhashkit``; Debian's
  libhashkit-dev, which libmemcached-dev depends on). Its header is part of
  libmemcached's, and memshard sets libmemcached's hash function with it.

Result variables
^^^^^^^^^^^^^^^^

``Libmemcached_FOUND``, ``Libmemcached_VERSION``, ``Libmemcached_INCLUDE_DIRS``,
``Libmemcached_LIBRARIES``, ``Libmemcached_Hashkit_FOUND``.
#]=======================================================================]

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_Libmemcached QUIET libmemcached)
endif()

find_path(
  Libmemcached_INCLUDE_DIR
  NAMES libmemcached-1.0/memcached.h
  HINTS ${PC_Libmemcached_INCLUDE_DIRS})
find_library(
  Libmemcached_LIBRARY
  NAMES memcached
  HINTS ${PC_Libmemcached_LIBRARY_DIRS})
find_library(
  Libmemcached_Hashkit_LIBRARY
  NAMES hashkit
  HINTS ${PC_Libmemcached_LIBRARY_DIRS})

if(PC_Libmemcached_VERSION)
  set(Libmemcached_VERSION "${PC_Libmemcached_VERSION}")
elseif(Libmemcached_INCLUDE_DIR AND EXISTS
                                    "${Libmemcached_INCLUDE_DIR}/libmemcached-1.0/configure.h")
  file(STRINGS "${Libmemcached_INCLUDE_DIR}/libmemcached-1.0/configure.h" _lm_version_line
       REGEX "^#define LIBMEMCACHED_VERSION_STRING \"[^\"]*\"")
  string(REGEX REPLACE ".*\"([^\"]*)\".*" "\\1" Libmemcached_VERSION "${_lm_version_line}")
  unset(_lm_version_line)
endif()

if(Libmemcached_Hashkit_LIBRARY)
  set(Libmemcached_Hashkit_FOUND TRUE)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(
  Libmemcached
  REQUIRED_VARS Libmemcached_LIBRARY Libmemcached_Hashkit_LIBRARY Libmemcached_INCLUDE_DIR
  VERSION_VAR Libmemcached_VERSION
  HANDLE_COMPONENTS)

if(Libmemcached_FOUND)
  set(Libmemcached_INCLUDE_DIRS "${Libmemcached_INCLUDE_DIR}")
  set(Libmemcached_LIBRARIES "${Libmemcached_LIBRARY}" "${Libmemcached_Hashkit_LIBRARY}")
  if(NOT TARGET Libmemcached::Hashkit)
    add_library(Libmemcached::Hashkit UNKNOWN IMPORTED)
    set_target_properties(
      Libmemcached::Hashkit
      PROPERTIES IMPORTED_LOCATION "${Libmemcached_Hashkit_LIBRARY}"
                 INTERFACE_INCLUDE_DIRECTORIES "${Libmemcached_INCLUDE_DIR}")
  endif()
  if(NOT TARGET Libmemcached::Libmemcached)
    add_library(Libmemcached::Libmemcached UNKNOWN IMPORTED)
    set_target_properties(
      Libmemcached::Libmemcached
      PROPERTIES IMPORTED_LOCATION "${Libmemcached_LIBRARY}"
                 INTERFACE_INCLUDE_DIRECTORIES "${Libmemcached_INCLUDE_DIR}"
                 INTERFACE_LINK_LIBRARIES Libmemcached::Hashkit)
  endif()
endif()

mark_as_advanced(Libmemcached_INCLUDE_DIR Libmemcached_LIBRARY Libmemcached_Hashkit_LIBRARY)
