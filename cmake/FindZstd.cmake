# SPDX-License-Identifier: MIT
#[=======================================================================[.rst:
FindZstd
--------

Finds the zstd compression library (Debian's libzstd-dev). Debian ships a CMake package for it
too, but its target names have changed between releases (``zstd::libzstd_shared``,
``zstd::libzstd``); this module gives one name.

Imported targets
^^^^^^^^^^^^^^^^

``Zstd::Zstd``
  libzstd (``-lzstd``) and ``zstd.h``.

Result variables
^^^^^^^^^^^^^^^^

``Zstd_FOUND``, ``Zstd_VERSION``, ``Zstd_INCLUDE_DIRS``, ``Zstd_LIBRARIES``.
#]=======================================================================]

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_Zstd QUIET libzstd)
endif()

find_path(
  Zstd_INCLUDE_DIR
  NAMES zstd.h
  HINTS ${PC_Zstd_INCLUDE_DIRS})
find_library(
  Zstd_LIBRARY
  NAMES zstd
  HINTS ${PC_Zstd_LIBRARY_DIRS})

if(Zstd_INCLUDE_DIR AND EXISTS "${Zstd_INCLUDE_DIR}/zstd.h")
  file(STRINGS "${Zstd_INCLUDE_DIR}/zstd.h" _zstd_version_lines
       REGEX "^#define ZSTD_VERSION_(MAJOR|MINOR|RELEASE) +[0-9]+")
  foreach(_zstd_part IN ITEMS MAJOR MINOR RELEASE)
    string(REGEX REPLACE ".*#define ZSTD_VERSION_${_zstd_part} +([0-9]+).*" "\\1"
                         _zstd_${_zstd_part} "${_zstd_version_lines}")
  endforeach()
  set(Zstd_VERSION "${_zstd_MAJOR}.${_zstd_MINOR}.${_zstd_RELEASE}")
  unset(_zstd_version_lines)
  unset(_zstd_part)
  unset(_zstd_MAJOR)
  unset(_zstd_MINOR)
  unset(_zstd_RELEASE)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(
  Zstd
  REQUIRED_VARS Zstd_LIBRARY Zstd_INCLUDE_DIR
  VERSION_VAR Zstd_VERSION)

if(Zstd_FOUND)
  set(Zstd_INCLUDE_DIRS "${Zstd_INCLUDE_DIR}")
  set(Zstd_LIBRARIES "${Zstd_LIBRARY}")
  if(NOT TARGET Zstd::Zstd)
    add_library(Zstd::Zstd UNKNOWN IMPORTED)
    set_target_properties(
      Zstd::Zstd PROPERTIES IMPORTED_LOCATION "${Zstd_LIBRARY}" INTERFACE_INCLUDE_DIRECTORIES
                                                                  "${Zstd_INCLUDE_DIR}")
  endif()
endif()
mark_as_advanced(Zstd_INCLUDE_DIR Zstd_LIBRARY)
