// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_FLEET_RUN_HPP_
#define MEMSHARD_TOOLS_FLEET_RUN_HPP_

// fleet/run.hpp: memshard-fleet's work: one command of the command line against the store,
// its result on `out` and any error on `err`.

#include <ostream>
#include <span>
#include <string_view>

namespace memshard::fleet_tool {

/// run: parses `args` (argv without the program's name; `store_from_environment` is
/// $MEMSHARD_STORE or empty), carries out the command and returns the exit status (kExitOk,
/// kExitFailed, kExitUsage).
[[nodiscard]] auto run(std::span<const std::string_view> args,
                       std::string_view store_from_environment, std::ostream& out,
                       std::ostream& err) -> int;

}  // namespace memshard::fleet_tool

#endif  // MEMSHARD_TOOLS_FLEET_RUN_HPP_
