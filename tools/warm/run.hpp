// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_WARM_RUN_HPP_
#define MEMSHARD_TOOLS_WARM_RUN_HPP_

// warm/run.hpp: memshard-warm as a function: the command line carried out on
// given streams (a live migration begun on a client of the old fleet, its
// Warmer run to the end, the summary printed), every error reported on the
// error stream, and the exit status returned. main() only connects it to the
// standard descriptors and says whether standard error is a terminal.

#include <cstddef>
#include <ostream>
#include <span>
#include <string_view>

namespace memshard::warm_tool {

/// Terminal: where the progress line goes: shown only when `progress` (the
/// error stream is a terminal), `width` characters wide, redrawn with "\r".
struct Terminal {
  bool progress = false;
  std::size_t width = 80;
};

/// run: does what `args` (argv without the program's name) ask, printing the
/// summary (with --json: WarmerProgress::to_json and a newline) on `out`,
/// the progress line (see Terminal; not with --quiet) and every problem on
/// `errors` as "memshard-warm: <problem>" lines (a usage error adds a line
/// pointing to --help). Returns the exit status (kExitOk, kExitIncomplete or
/// kExitError); throws nothing but std::bad_alloc.
[[nodiscard]] auto run(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& errors, Terminal terminal = {}) -> int;

}  // namespace memshard::warm_tool

#endif  // MEMSHARD_TOOLS_WARM_RUN_HPP_
