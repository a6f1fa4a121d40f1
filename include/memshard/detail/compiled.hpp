// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_DETAIL_COMPILED_HPP_
#define MEMSHARD_DETAIL_COMPILED_HPP_

// detail/compiled.hpp: the two modes of the library. Header-only (memshard::memshard), every
// function is defined in the headers. Compiled (memshard::compiled, a library that defines
// MEMSHARD_COMPILED_LIB for every unit linking it): the functions the library holds are only
// declared, and the clients it compiles are `extern template` (client/detail/compiled_clients.hpp).
// The library's own sources define MEMSHARD_DETAIL_COMPILED_SOURCE to see the definitions.
// One program uses one mode: a function inline in one unit and not in another breaks the
// one-definition rule.

// MEMSHARD_DETAIL_INLINE: `inline` on a definition the compiled library holds, in the
// header-only mode; nothing in the compiled mode, whose library defines it once.
#if defined(MEMSHARD_COMPILED_LIB)
#define MEMSHARD_DETAIL_INLINE
#else
#define MEMSHARD_DETAIL_INLINE inline
#endif

#endif  // MEMSHARD_DETAIL_COMPILED_HPP_
