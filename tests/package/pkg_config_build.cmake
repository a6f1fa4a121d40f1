# SPDX-License-Identifier: MIT
# cmake -DPKG_CONFIG=<pkg-config> -DPREFIX=<dir> -DMODULE=<name> -DCXX=<compiler>
#       -DSOURCE=<file.cpp> -DOUTPUT=<executable> [-DFIRST_INCLUDE=<dir>] [-DEXPECT=<regex>]
#       -P pkg_config_build.cmake
# Builds SOURCE as a user without CMake would, against memshard installed in PREFIX:
#   c++ -std=c++20 SOURCE $(pkg-config --cflags --libs MODULE)
# (FIRST_INCLUDE, if set, goes before those flags), checks that pkg-config read MODULE from
# PREFIX, then runs the program, which must succeed (and print a line matching EXPECT, if set).
foreach(var IN ITEMS PKG_CONFIG PREFIX MODULE CXX SOURCE OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "pkg_config_build.cmake: ${var} is not set")
  endif()
endforeach()

set(ENV{PKG_CONFIG_PATH} "${PREFIX}/share/pkgconfig")
execute_process(
  COMMAND "${PKG_CONFIG}" --variable=pcfiledir "${MODULE}"
  OUTPUT_VARIABLE pcfiledir
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not find ${MODULE} in ${PREFIX}/share/pkgconfig")
endif()
file(REAL_PATH "${pcfiledir}" pcfiledir)
file(REAL_PATH "${PREFIX}" prefix)
if(NOT pcfiledir STREQUAL "${prefix}/share/pkgconfig")
  message(FATAL_ERROR "pkg-config read ${MODULE} from ${pcfiledir}, not from ${prefix}")
endif()

execute_process(
  COMMAND "${PKG_CONFIG}" --cflags --libs "${MODULE}"
  OUTPUT_VARIABLE flags
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs ${MODULE} failed")
endif()
message("pkg-config --cflags --libs ${MODULE}: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")

set(first "")
if(FIRST_INCLUDE)
  set(first "-I${FIRST_INCLUDE}")
endif()
execute_process(COMMAND "${CXX}" -std=c++20 ${first} "${SOURCE}" ${flags} -o "${OUTPUT}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "c++ -std=c++20 $(pkg-config --cflags --libs ${MODULE}) failed")
endif()
execute_process(
  COMMAND "${OUTPUT}"
  OUTPUT_VARIABLE out
  RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OUTPUT} failed: ${rc}")
endif()
if(DEFINED EXPECT AND NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${OUTPUT} did not print a line matching ${EXPECT}")
endif()
