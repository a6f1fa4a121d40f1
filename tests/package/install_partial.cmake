# SPDX-License-Identifier: MIT
# cmake -DSOURCE_DIR=<memshard> -DBINARY_DIR=<dir> -DPREFIX=<dir> -DCXX=<compiler>
#       -DGENERATOR=<generator> -DOPTIONS=<-D...>[|<-D...>...] [-DSAYS=<text>[|<text>...]]
#       -DHAS=<file>[|<file>...] -DLACKS=<file>[|<file>...] -P install_partial.cmake
# memshard installed without some of its parts: configures it with OPTIONS (as the user who
# leaves them out would), checks that configuring said each of SAYS, builds and installs it
# into PREFIX, and checks that the prefix has each of HAS and none of LACKS (paths relative to
# PREFIX; one with a * is a pattern, matched anywhere below its directory).
foreach(var IN ITEMS SOURCE_DIR BINARY_DIR PREFIX CXX GENERATOR OPTIONS HAS LACKS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_partial.cmake: ${var} is not set")
  endif()
endforeach()
foreach(list IN ITEMS OPTIONS SAYS HAS LACKS)
  string(REPLACE "|" ";" ${list} "${${list}}")
endforeach()
list(JOIN OPTIONS " " options)  # for the messages

file(REMOVE_RECURSE "${BINARY_DIR}" "${PREFIX}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
          "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_INSTALL_PREFIX=${PREFIX}" ${OPTIONS}
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "memshard did not configure with ${options}")
endif()
foreach(said IN LISTS SAYS)
  string(FIND "${out}" "${said}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "configuring with ${options} did not say: ${said}")
  endif()
endforeach()

foreach(step IN ITEMS --build --install)
  execute_process(COMMAND "${CMAKE_COMMAND}" ${step} "${BINARY_DIR}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake ${step} failed (configured with ${options})")
  endif()
endforeach()

foreach(file IN LISTS HAS)
  if(NOT EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "the install with ${options} lacks ${file}")
  endif()
endforeach()
foreach(file IN LISTS LACKS)
  if(file MATCHES "[*]")
    file(GLOB_RECURSE found "${PREFIX}/${file}")
  elseif(EXISTS "${PREFIX}/${file}")
    set(found "${file}")
  else()
    set(found "")
  endif()
  if(found)
    message(FATAL_ERROR "the install with ${options} has ${found}")
  endif()
endforeach()
