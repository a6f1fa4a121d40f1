# SPDX-License-Identifier: MIT
# cmake -DINCLUDE_DIR=<include> -DHEADERS=<a.hpp|b.hpp|...> -P placement_umbrella.cmake
# Checks that memshard/placement.hpp reaches each of HEADERS (the memshard::placement header
# set, absolute paths) outside detail/, so that placement.hpp stays all of placement.
cmake_policy(VERSION 3.24)
foreach(var IN ITEMS INCLUDE_DIR HEADERS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "placement_umbrella.cmake: ${var} is not set")
  endif()
endforeach()

# Every memshard header placement.hpp reaches, directly or through the headers it includes
# (profiles.hpp brings in profiles/).
set(reached "memshard/placement.hpp")
set(queue "memshard/placement.hpp")
while(queue)
  list(POP_FRONT queue current)
  file(STRINGS "${INCLUDE_DIR}/${current}" includes REGEX "^#include \"memshard/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
    if(NOT included IN_LIST reached)
      list(APPEND reached "${included}")
      list(APPEND queue "${included}")
    endif()
  endforeach()
endwhile()

string(REPLACE "|" ";" headers "${HEADERS}")
set(missing "")
foreach(header IN LISTS headers)
  file(RELATIVE_PATH name "${INCLUDE_DIR}" "${header}")
  if(name MATCHES "/detail/" OR name STREQUAL "memshard/placement.hpp")
    continue()
  endif()
  if(NOT name IN_LIST reached)
    list(APPEND missing "${name}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "memshard/placement.hpp does not include: ${missing}")
endif()
list(LENGTH headers count)
message("memshard/placement.hpp includes all of placement (${count} headers)")
