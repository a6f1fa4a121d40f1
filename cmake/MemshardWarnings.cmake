# SPDX-License-Identifier: MIT
# memshard_warnings(<target>): the warning set memshard's own tests, benchmarks
# and examples build with. Not installed: consumers keep their own flags.
option(MEMSHARD_WERROR "Treat warnings as errors in memshard's own targets" ${PROJECT_IS_TOP_LEVEL})

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
