// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_DETAIL_COMPILED_HPP_
#define MEMSHARD_DETAIL_COMPILED_HPP_

// detail/compiled.hpp: the two modes of the library. Header-only (memshard::memshard), every
// function is defined in the headers. Compiled (memshard::compiled, a library that defines
// MEMSHARD_COMPILED_LIB for every unit linking it): the functions the library holds are only
// declared, and the clients it compiles are `extern template` (client/detail/compiled_clients.hpp).
// One unit of the library, src/memshard.cpp, defines MEMSHARD_DETAIL_COMPILED_SOURCE to compile
// the definitions; its other units (one per client) see them declared.
// One program uses one mode: a function inline in one unit and not in another breaks the
// one-definition rule.

// MEMSHARD_DETAIL_INLINE: `inline` on a definition the compiled library holds, in the
// header-only mode; nothing in the compiled mode, whose library defines it once.
#if defined(MEMSHARD_COMPILED_LIB)
#define MEMSHARD_DETAIL_INLINE
#else
#define MEMSHARD_DETAIL_INLINE inline
#endif

// MEMSHARD_DETAIL_DEFINITIONS: 1 where the definitions the compiled library holds are
// compiled: every unit of the header-only mode, and the library's own source. 0 in a unit of
// the compiled mode, which sees them declared only.
#if !defined(MEMSHARD_COMPILED_LIB) || defined(MEMSHARD_DETAIL_COMPILED_SOURCE)
#define MEMSHARD_DETAIL_DEFINITIONS 1
#else
#define MEMSHARD_DETAIL_DEFINITIONS 0
#endif

// MEMSHARD_DETAIL_DECLARE_ENTRY(name, type...) and MEMSHARD_DETAIL_ENTRY: a constant the
// library holds in the compiled mode (the profile registry's entries, whose initializers point
// to every profile's builder). Header-only: `inline constexpr type name{...};`. Compiled:
// declared `extern const` in every unit, and defined `constexpr` (with external linkage, from
// that declaration) in the library only, under #if MEMSHARD_DETAIL_DEFINITIONS.
#if defined(MEMSHARD_COMPILED_LIB)
#define MEMSHARD_DETAIL_DECLARE_ENTRY(name, ...) extern const __VA_ARGS__ name;
#define MEMSHARD_DETAIL_ENTRY constexpr
#else
#define MEMSHARD_DETAIL_DECLARE_ENTRY(name, ...)
#define MEMSHARD_DETAIL_ENTRY inline constexpr
#endif

#endif  // MEMSHARD_DETAIL_COMPILED_HPP_
