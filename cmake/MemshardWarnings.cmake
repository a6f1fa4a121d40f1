# SPDX-License-Identifier: MIT
# memshard_warnings(<target>): the warning set memshard's own tests, benchmarks
# and examples build with. Not installed: consumers keep their own flags.
# MEMSHARD_WERROR is off by default: a user's build must not fail on a warning that a
# newer (or older) compiler or an optimisation level brings. The presets, hence
# tests/run.sh and CI, turn it on.
option(MEMSHARD_WERROR "Treat warnings as errors in memshard's own targets" OFF)

function(memshard_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion
                                             -Wshadow -Wold-style-cast)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC 12 at -O3 reports a false -Wrestrict inside std::string appends.
      target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
    if(MEMSHARD_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
