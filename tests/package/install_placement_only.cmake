# SPDX-License-Identifier: MIT
# cmake -DSOURCE_DIR=<memshard> -DBINARY_DIR=<dir> -DPREFIX=<dir> -DCXX=<compiler>
#       -DGENERATOR=<generator> [-DWERROR=ON|OFF] -P install_placement_only.cmake
# Configures memshard where libmemcached cannot be found, checks that it says it builds
# placement only and skips what needs libmemcached, installs it into PREFIX, and checks that
# the prefix holds placement and nothing of the client. WERROR (MEMSHARD_WERROR, default OFF)
# is passed on, so that the test builds memshard-locate as strictly as its caller's build.
foreach(var IN ITEMS SOURCE_DIR BINARY_DIR PREFIX CXX GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_placement_only.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT DEFINED WERROR)
  set(WERROR OFF)
endif()

file(REMOVE_RECURSE "${BINARY_DIR}" "${PREFIX}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
          "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_INSTALL_PREFIX=${PREFIX}"
          -DCMAKE_DISABLE_FIND_PACKAGE_Libmemcached=ON "-DMEMSHARD_WERROR=${WERROR}"
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "memshard did not configure without libmemcached")
endif()
foreach(said IN ITEMS "only memshard::placement is built and installed"
                      "the tests, benchmarks and examples need libmemcached, zlib and zstd: skipped")
  string(FIND "${out}" "${said}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "configuring without libmemcached did not say: ${said}")
  endif()
endforeach()

# memshard-locate needs placement only, so it is built and installed too.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the placement-only build failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BINARY_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the placement-only install failed")
endif()

foreach(file IN ITEMS bin/memshard-locate include/memshard/placement.hpp include/memshard/placement/profiles.hpp
                      share/cmake/memshard/memshardConfig.cmake
                      share/cmake/memshard/memshardPlacementTargets.cmake
                      share/pkgconfig/memshard-placement.pc)
  if(NOT EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "the placement-only install lacks ${file}")
  endif()
endforeach()
foreach(file IN ITEMS include/memshard/sharded_client.hpp include/memshard/memshard.hpp
                      include/memshard/client/result.hpp share/cmake/memshard/memshardClientTargets.cmake
                      share/pkgconfig/memshard.pc)
  if(EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "the placement-only install has the client's ${file}")
  endif()
endforeach()
