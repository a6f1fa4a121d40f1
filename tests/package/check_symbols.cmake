# SPDX-License-Identifier: MIT
# cmake -DNM=<nm> -DOBJECTS=<file.o>[|<file.o>...] -DMODE=header-only|compiled
#       -P check_symbols.cmake
# Reads from object files which mode a unit that uses make_client's client
# (ShardedClient<AnyLocator>, consumer/client.cpp) was compiled in. Header-only, the unit
# compiles the members it uses and defines them (weak symbols): at least one must be there, or
# this check would prove nothing. Compiled, it must define none: memshard::compiled has them all
# (extern template, client/detail/compiled_clients.hpp) and the unit only calls them.
cmake_minimum_required(VERSION 3.24)
foreach(var IN ITEMS NM OBJECTS MODE)
  if(NOT ${var})
    message(FATAL_ERROR "check_symbols.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT MODE MATCHES "^(header-only|compiled)$")
  message(FATAL_ERROR "check_symbols.cmake: MODE is header-only or compiled, not ${MODE}")
endif()

set(member "ShardedClient<memshard::(v[0-9_]+::)?AnyLocator>::")
string(REPLACE "|" ";" OBJECTS "${OBJECTS}")
set(defined "")
foreach(object IN LISTS OBJECTS)
  execute_process(
    COMMAND "${NM}" -C --defined-only "${object}"
    OUTPUT_VARIABLE symbols
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -C --defined-only ${object} failed")
  endif()
  string(REGEX MATCHALL "[^\n]*${member}[^\n]*" found "${symbols}")
  list(APPEND defined ${found})
endforeach()
list(LENGTH defined count)

if(MODE STREQUAL "compiled" AND count GREATER 0)
  string(REPLACE ";" "\n  " lines "${defined}")
  message(FATAL_ERROR "compiled mode, yet the unit defines ${count} symbols of "
                      "ShardedClient<AnyLocator>, which memshard::compiled has:\n  ${lines}")
elseif(MODE STREQUAL "header-only" AND count EQUAL 0)
  message(FATAL_ERROR "header-only mode, yet the unit defines no symbol of "
                      "ShardedClient<AnyLocator>: the symbols no longer tell the modes apart")
endif()
message("${MODE} mode: the unit defines ${count} symbols of ShardedClient<AnyLocator>")
