# SPDX-License-Identifier: MIT
# memshard_warnings(<target>): the warning set memshard's own tests, benchmarks
# and examples build with. Not installed: consumers keep their own flags.
option(MEMSHARD_WERROR "Treat warnings as errors in memshard's own targets" ${PROJECT_IS_TOP_LEVEL})

function(memshard_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion
                                             -Wshadow -Wold-style-cast)
    if(MEMSHARD_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
