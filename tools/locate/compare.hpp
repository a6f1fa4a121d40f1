// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_LOCATE_COMPARE_HPP_
#define MEMSHARD_TOOLS_LOCATE_COMPARE_HPP_

// locate/compare.hpp: memshard-locate --compare: every key placed under two
// placements, A and B, and a report of how many keys moved and between which
// servers (per server of A: keys held and keys that left; per server of B: keys
// it holds and keys that arrived), with --per-key each moved key before it.

#include <istream>
#include <ostream>

#include "locate/command_line.hpp"
#include "locate/locate.hpp"

namespace memshard::locate_tool {

/// kSampleKeyPrefix: --sample N compares the keys "key:0" to "key:<N-1>".
inline constexpr std::string_view kSampleKeyPrefix = "key:";

/// make_placement_b: B's placement for `command` (see side_b). Throws
/// memshard::ConfigError, whose message names B (B's options are partly A's,
/// so the value alone may not say which side is wrong).
[[nodiscard]] auto make_placement_b(const CommandLine& command) -> Placement;

/// compare_keys: places every key (those of `in`, or --sample's) under `a` and
/// `b`, each with its side's key prefix, and prints to `out` the moved keys
/// with --per-key (as read), then the report; each line of `in` that is not a
/// valid key under both prefixes is reported on `errors` and skipped. A key
/// moves when its server under B is not its server under A: servers are the
/// same when host, port and name are (not the position in the list, nor the
/// weight). Returns the exit status: kExitMoved with --fail-if-moved when some
/// key moved, else kExitInvalidKeys when some line was invalid, else kExitOk.
/// Throws IoError, or memshard::ConfigError before printing anything when
/// --sample's keys are too long for a side's prefix.
[[nodiscard]] auto compare_keys(const CommandLine& command, const Placement& a, const Placement& b,
                                std::istream& in, std::ostream& out, std::ostream& errors) -> int;

}  // namespace memshard::locate_tool

#endif  // MEMSHARD_TOOLS_LOCATE_COMPARE_HPP_
