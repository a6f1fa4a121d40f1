# SPDX-License-Identifier: MIT
# cmake -DSOURCE_DIR=<memshard> -DBINARY_DIR=<dir> -DPREFIX=<dir> -DCXX=<compiler>
#       -DGENERATOR=<generator> -P install_without_compiled.cmake
# Configures memshard with -DMEMSHARD_COMPILED=OFF (and no tools, tests, benchmarks or
# examples: nothing to build), installs it into PREFIX, and checks that the prefix holds the
# client and nothing of the compiled mode.
foreach(var IN ITEMS SOURCE_DIR BINARY_DIR PREFIX CXX GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_without_compiled.cmake: ${var} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${BINARY_DIR}" "${PREFIX}")
execute_process(
  COMMAND
    "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_INSTALL_PREFIX=${PREFIX}" -DMEMSHARD_COMPILED=OFF
    -DMEMSHARD_BUILD_TOOLS=OFF -DMEMSHARD_BUILD_TESTS=OFF -DMEMSHARD_BUILD_BENCHMARKS=OFF
    -DMEMSHARD_BUILD_EXAMPLES=OFF
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "memshard did not configure with -DMEMSHARD_COMPILED=OFF")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BINARY_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the install without the compiled mode failed")
endif()

foreach(file IN ITEMS include/memshard/memshard.hpp share/cmake/memshard/memshardConfig.cmake
                      share/cmake/memshard/memshardClientTargets.cmake share/pkgconfig/memshard.pc)
  if(NOT EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "the install without the compiled mode lacks ${file}")
  endif()
endforeach()
file(GLOB_RECURSE compiled RELATIVE "${PREFIX}" "${PREFIX}/*memshard-compiled*"
     "${PREFIX}/*memshardCompiled*")
if(compiled)
  message(FATAL_ERROR "the install without the compiled mode has ${compiled}")
endif()
