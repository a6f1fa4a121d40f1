# SPDX-License-Identifier: MIT
# cmake -DINCLUDE_DIR=<include> -DHEADERS=<a.hpp|b.hpp|...> -P placement_umbrella.cmake
# Checks that memshard/placement.hpp includes each of HEADERS (the memshard::placement header
# set, absolute paths) outside detail/, so that placement.hpp stays all of placement.
foreach(var IN ITEMS INCLUDE_DIR HEADERS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "placement_umbrella.cmake: ${var} is not set")
  endif()
endforeach()

file(READ "${INCLUDE_DIR}/memshard/placement.hpp" umbrella)
string(REPLACE "|" ";" headers "${HEADERS}")
set(missing "")
foreach(header IN LISTS headers)
  file(RELATIVE_PATH name "${INCLUDE_DIR}" "${header}")
  if(name MATCHES "^memshard/detail/" OR name STREQUAL "memshard/placement.hpp")
    continue()
  endif()
  string(FIND "${umbrella}" "#include \"${name}\"" at)
  if(at EQUAL -1)
    list(APPEND missing "${name}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "memshard/placement.hpp does not include: ${missing}")
endif()
list(LENGTH headers count)
message("memshard/placement.hpp includes all of placement (${count} headers)")
