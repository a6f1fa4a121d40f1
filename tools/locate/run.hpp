// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_LOCATE_RUN_HPP_
#define MEMSHARD_TOOLS_LOCATE_RUN_HPP_

// locate/run.hpp: memshard-locate as a function: the command line carried out
// on given streams, every error reported on the error stream, and the exit
// status returned. main() only connects it to the standard descriptors.

#include <istream>
#include <ostream>
#include <span>
#include <string_view>

namespace memshard::locate_tool {

/// run: does what `args` (argv without the program's name) ask, reading keys
/// from `in`, printing to `out`, and reporting errors on `errors` as
/// "memshard-locate: <problem>" lines (a usage error adds a line pointing to
/// --help). A usage or configuration error is found before any key is read, so
/// nothing is printed on `out` then. Returns the exit status (kExitOk,
/// kExitInvalidKeys, kExitError or kExitMoved); throws nothing but
/// std::bad_alloc.
[[nodiscard]] auto run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
                       std::ostream& errors) -> int;

}  // namespace memshard::locate_tool

#endif  // MEMSHARD_TOOLS_LOCATE_RUN_HPP_
