# SPDX-License-Identifier: MIT
# cmake -DPKG_CONFIG=<pkg-config> -DPREFIX=<dir> -DMODULE=<name> -DCXX=<compiler>
#       -DSOURCE=<file.cpp> -DOUTPUT=<executable> [-DPC_DIR=<dir>] [-DFIRST_INCLUDE=<dir>]
#       [-DFLAGS=<flag>;...] [-DSYMBOLS=header-only|compiled -DNM=<nm>] [-DEXPECT=<regex>]
#       -P pkg_config_build.cmake
# Builds SOURCE as a user without CMake would, against memshard installed in PREFIX:
#   c++ -std=c++20 SOURCE $(pkg-config --cflags --libs MODULE)
# checks that pkg-config read MODULE from PREFIX/PC_DIR (default share/pkgconfig; the
# arch-dependent ones are under the library directory), then runs the program, which must
# succeed (and print a line matching EXPECT, if set). FIRST_INCLUDE, if set, goes before those
# flags, and FLAGS too. With SYMBOLS, SOURCE is compiled (-c) and linked in two steps, and its
# object file must show that mode (check_symbols.cmake).
foreach(var IN ITEMS PKG_CONFIG PREFIX MODULE CXX SOURCE OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "pkg_config_build.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT DEFINED PC_DIR)
  set(PC_DIR share/pkgconfig)
endif()

set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${PC_DIR}:${PREFIX}/share/pkgconfig")
execute_process(
  COMMAND "${PKG_CONFIG}" --variable=pcfiledir "${MODULE}"
  OUTPUT_VARIABLE pcfiledir
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not find ${MODULE} in ${PREFIX}/${PC_DIR}")
endif()
file(REAL_PATH "${pcfiledir}" pcfiledir)
file(REAL_PATH "${PREFIX}" prefix)
if(NOT pcfiledir STREQUAL "${prefix}/${PC_DIR}")
  message(FATAL_ERROR "pkg-config read ${MODULE} from ${pcfiledir}, not from ${prefix}/${PC_DIR}")
endif()

foreach(kind IN ITEMS cflags libs)
  execute_process(
    COMMAND "${PKG_CONFIG}" --${kind} "${MODULE}"
    OUTPUT_VARIABLE ${kind}
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --${kind} ${MODULE} failed")
  endif()
  message("pkg-config --${kind} ${MODULE}: ${${kind}}")
  separate_arguments(${kind} UNIX_COMMAND "${${kind}}")
endforeach()

set(first "")
if(FIRST_INCLUDE)
  set(first "-I${FIRST_INCLUDE}")
endif()
if(NOT SYMBOLS)
  execute_process(COMMAND "${CXX}" -std=c++20 ${first} ${FLAGS} "${SOURCE}" ${cflags} ${libs} -o
                          "${OUTPUT}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "c++ -std=c++20 $(pkg-config --cflags --libs ${MODULE}) failed")
  endif()
else()
  execute_process(COMMAND "${CXX}" -std=c++20 ${first} ${FLAGS} -c "${SOURCE}" ${cflags} -o
                          "${OUTPUT}.o" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "c++ -std=c++20 -c $(pkg-config --cflags ${MODULE}) failed")
  endif()
  get_filename_component(here "${CMAKE_CURRENT_LIST_FILE}" DIRECTORY)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DNM=${NM}" "-DOBJECTS=${OUTPUT}.o" "-DMODE=${SYMBOLS}"
                          -P "${here}/check_symbols.cmake" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the object file does not show the ${SYMBOLS} mode")
  endif()
  execute_process(COMMAND "${CXX}" "${OUTPUT}.o" ${libs} -o "${OUTPUT}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "c++ SOURCE.o $(pkg-config --libs ${MODULE}) failed")
  endif()
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
