# SPDX-License-Identifier: MIT
# cmake -DSOURCE_DIR=<memshard> -DWORK_DIR=<dir> -DCXX=<compiler> -P readme_install.cmake
# The README's install commands work as written, in order, on a clean clone: copies the tracked
# files of SOURCE_DIR (git ls-files; without git, the tree but .git and build*) to WORK_DIR/src,
# takes the ```sh block that follows the README's "<!-- memshard.package.readme_install" comment,
# and runs each of its commands there with sh, as written, with DESTDIR=WORK_DIR/destdir so that
# its --prefix lands inside WORK_DIR. Then checks that the prefix holds the CMake package, the
# headers, the pkg-config files, the tools and the compiled mode's library. The commands find
# this cmake first in PATH, and CXX set to the compiler given. WORK_DIR is removed before and
# after, also when a check fails.
cmake_minimum_required(VERSION 3.24)
foreach(var IN ITEMS SOURCE_DIR WORK_DIR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "readme_install.cmake: ${var} is not set")
  endif()
endforeach()

macro(fail what)
  file(REMOVE_RECURSE "${WORK_DIR}")
  message(FATAL_ERROR "${what}")
endmacro()

set(copy "${WORK_DIR}/src")
set(destdir "${WORK_DIR}/destdir")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${copy}" "${destdir}")

# The clean clone: what git tracks, as it is in the working tree (so that an edit is tested
# before it is committed).
find_program(GIT git)
set(tracked "")
if(GIT)
  execute_process(
    COMMAND "${GIT}" -c core.quotePath=false ls-files --cached
    WORKING_DIRECTORY "${SOURCE_DIR}"
    OUTPUT_VARIABLE tracked
    ERROR_QUIET
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(tracked "")
  endif()
endif()
if(tracked)
  string(REGEX REPLACE "\n$" "" tracked "${tracked}")
  string(REPLACE "\n" ";" tracked "${tracked}")
  foreach(file IN LISTS tracked)
    if(file MATCHES "^\"")
      fail("cannot copy ${file}: git quotes its name")
    endif()
    if(EXISTS "${SOURCE_DIR}/${file}" OR IS_SYMLINK "${SOURCE_DIR}/${file}")
      get_filename_component(dir "${file}" DIRECTORY)
      file(COPY "${SOURCE_DIR}/${file}" DESTINATION "${copy}/${dir}")
    endif()
  endforeach()
  message("copied the files git tracks in ${SOURCE_DIR} to ${copy}")
else()
  file(GLOB entries LIST_DIRECTORIES true RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*"
       "${SOURCE_DIR}/.*")
  foreach(entry IN LISTS entries)
    if(NOT entry MATCHES "^([.]git|build.*|bench-results)$")
      file(COPY "${SOURCE_DIR}/${entry}" DESTINATION "${copy}")
    endif()
  endforeach()
  message("not a git checkout: copied ${SOURCE_DIR} but .git and build* to ${copy}")
endif()

# The block: the first ```sh fence right after the marker comment, up to its closing fence.
file(READ "${copy}/README.md" readme)
set(marker "<!-- memshard.package.readme_install")
string(FIND "${readme}" "${marker}" at)
if(at EQUAL -1)
  fail("README.md has no ${marker} comment")
endif()
string(SUBSTRING "${readme}" ${at} -1 rest)
string(FIND "${rest}" "-->" at)
if(at EQUAL -1)
  fail("README.md: the ${marker} comment is not closed")
endif()
math(EXPR at "${at} + 3")
string(SUBSTRING "${rest}" ${at} -1 rest)
if(NOT rest MATCHES "^[ \n]*```sh\n")
  fail("README.md: no ```sh block right after the ${marker} comment")
endif()
string(REGEX REPLACE "^[ \n]*```sh\n" "" rest "${rest}")
string(FIND "${rest}" "```" at)
if(at EQUAL -1)
  fail("README.md: the install block is not closed")
endif()
string(SUBSTRING "${rest}" 0 ${at} block)

string(REGEX MATCH "--prefix +([^ \n]+)" prefix_arg "${block}")
if(NOT prefix_arg)
  fail("README.md: the install block has no --prefix")
endif()
set(prefix "${CMAKE_MATCH_1}")

get_filename_component(cmake_bin "${CMAKE_COMMAND}" DIRECTORY)
set(ENV{PATH} "${cmake_bin}:$ENV{PATH}")
set(ENV{CXX} "${CXX}")
set(ENV{DESTDIR} "${destdir}")

# Each command: a line, with the lines that end in a backslash joined to it; blank lines and
# comments are skipped.
set(command "")
set(commands_run 0)
while(NOT block STREQUAL "")
  string(FIND "${block}" "\n" at)
  if(at EQUAL -1)
    set(line "${block}")
    set(block "")
  else()
    string(SUBSTRING "${block}" 0 ${at} line)
    math(EXPR at "${at} + 1")
    string(SUBSTRING "${block}" ${at} -1 block)
  endif()
  if(line MATCHES "\\\\$")
    string(REGEX REPLACE "\\\\$" "" line "${line}")
    string(APPEND command "${line} ")
    continue()
  endif()
  string(APPEND command "${line}")
  string(STRIP "${command}" command)
  if(command STREQUAL "" OR command MATCHES "^#")
    set(command "")
    continue()
  endif()
  message("$ ${command}")
  string(TIMESTAMP started "%s")
  execute_process(
    COMMAND sh -c "${command}"
    WORKING_DIRECTORY "${copy}"
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out
    RESULT_VARIABLE rc)
  string(TIMESTAMP ended "%s")
  math(EXPR seconds "${ended} - ${started}")
  if(NOT rc EQUAL 0)
    message("${out}")
    fail("the README's install command failed (${rc}): ${command}")
  endif()
  message("  done in ${seconds} s")
  math(EXPR commands_run "${commands_run} + 1")
  set(command "")
endwhile()
if(commands_run EQUAL 0)
  fail("README.md: the install block has no command")
endif()

set(installed "${destdir}${prefix}")
foreach(
  file IN
  ITEMS share/cmake/memshard/memshardConfig.cmake
        share/cmake/memshard/memshardConfigVersion.cmake
        share/cmake/memshard/FindLibmemcached.cmake
        share/pkgconfig/memshard.pc
        include/memshard/memshard.hpp
        include/memshard/placement.hpp
        include/memshard/sharded_client.hpp
        bin/memshard-locate
        bin/memshard-warm
        bin/memshard-get)
  if(NOT EXISTS "${installed}/${file}")
    fail("the README's install commands did not install ${prefix}/${file}")
  endif()
endforeach()
# The compiled mode, arch-dependent: under the library directory (lib, lib64, lib/<triplet>).
foreach(name IN ITEMS libmemshard-compiled.a memshard-compiled.pc memshardCompiledTargets.cmake)
  file(GLOB_RECURSE found RELATIVE "${installed}" "${installed}/lib*/${name}")
  if(NOT found)
    fail("the README's install commands did not install ${name} under ${prefix}/lib")
  endif()
endforeach()
message("the README's ${commands_run} install commands installed memshard into ${installed}")
file(REMOVE_RECURSE "${WORK_DIR}")
