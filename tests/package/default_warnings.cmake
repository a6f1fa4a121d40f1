# SPDX-License-Identifier: MIT
# cmake -DSOURCE_DIR=<memshard> -DBINARY_DIR=<dir> -DCXX=<compiler> -DGENERATOR=<generator>
#       -P default_warnings.cmake
# Configures memshard as a user would, with its default options (no preset) in Release, the
# tests, benchmarks and examples off, and checks that none of its own targets (the tools) is
# compiled with -Werror: a warning a user's compiler finds must not fail the user's build.
# BINARY_DIR is removed before and after, also when a check fails.
cmake_minimum_required(VERSION 3.24)
foreach(var IN ITEMS SOURCE_DIR BINARY_DIR CXX GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "default_warnings.cmake: ${var} is not set")
  endif()
endforeach()

macro(fail what)
  file(REMOVE_RECURSE "${BINARY_DIR}")
  message(FATAL_ERROR "${what}")
endmacro()

file(REMOVE_RECURSE "${BINARY_DIR}")
execute_process(
  COMMAND
    "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" -DCMAKE_BUILD_TYPE=Release -DMEMSHARD_BUILD_TESTS=OFF
    -DMEMSHARD_BUILD_BENCHMARKS=OFF -DMEMSHARD_BUILD_EXAMPLES=OFF
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message("${out}")
  fail("memshard did not configure with its default options")
endif()

file(STRINGS "${BINARY_DIR}/CMakeCache.txt" werror REGEX "^MEMSHARD_WERROR:")
if(NOT werror STREQUAL "MEMSHARD_WERROR:BOOL=OFF")
  fail("MEMSHARD_WERROR is not OFF by default: ${werror}")
endif()

# Each command of compile_commands.json; the tools must be among them, with memshard's
# warnings (so that the check below looks at the commands that would carry -Werror).
file(READ "${BINARY_DIR}/compile_commands.json" json)
string(JSON count LENGTH "${json}")
set(warned 0)
if(count GREATER 0)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON file GET "${json}" ${i} file)
    string(JSON command GET "${json}" ${i} command)
    if(command MATCHES "(^| )-Werror([= ]|$)")
      fail("${file} is compiled with -Werror by default: ${command}")
    endif()
    if(file MATCHES "/tools/locate/main[.]cpp$" AND command MATCHES " -Wall ")
      math(EXPR warned "${warned} + 1")
    endif()
  endforeach()
endif()
if(NOT warned EQUAL 1)
  fail("compile_commands.json has no command for tools/locate/main.cpp with memshard's warnings")
endif()
file(REMOVE_RECURSE "${BINARY_DIR}")
