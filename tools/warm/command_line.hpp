// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_WARM_COMMAND_LINE_HPP_
#define MEMSHARD_TOOLS_WARM_COMMAND_LINE_HPP_

// warm/command_line.hpp: memshard-warm's command line: the arguments parsed
// into a plain WarmCommandLine (or the usage error that refuses them, as a
// value), and the texts of --help and --version. The two placements are
// memshard-locate's SideArgs: the old fleet by --from (or --profile) and its
// options, the new one by --to (or --to-profile) and the --to-* options.

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "locate/command_line.hpp"

namespace memshard::warm_tool {

/// kProgram: the tool's name, which starts each of its error messages.
inline constexpr std::string_view kProgram = "memshard-warm";

/// kExitOk: every old server was listed and each of its moved keys settled.
inline constexpr int kExitOk = 0;
/// kExitIncomplete: the warmer ran to its end, but some old server could not
/// be listed (each reported on standard error and in the summary).
inline constexpr int kExitIncomplete = 1;
/// kExitError: a usage or configuration error; nothing was copied.
inline constexpr int kExitError = 2;

/// WarmAction: what the command line asks for.
enum class WarmAction { kWarm, kHelp, kVersion };

/// WarmCommandLine: the parsed arguments. Each server spec of `from` and
/// `to` is one --server SPEC or one --from-servers LIST (a comma-separated
/// list); `to` is as given, before side_b() completes it from `from`.
struct WarmCommandLine {
  WarmAction action = WarmAction::kWarm;
  locate_tool::SideArgs from = {};
  locate_tool::SideArgs to = {};
  std::optional<std::uint64_t> ops_per_second = {};    ///< --ops-per-second N (0: unlimited)
  std::optional<std::uint64_t> bytes_per_second = {};  ///< --bytes-per-second N (0: unlimited)
  std::optional<std::uint64_t> min_ttl = {};           ///< --min-ttl S
  bool json = false;                                   ///< --json
  bool quiet = false;                                  ///< --quiet

  /// operator==: whether two command lines mean the same.
  auto operator==(const WarmCommandLine&) const -> bool = default;
};

/// ParsedWarmCommandLine: the outcome of parse_warm_command_line: the
/// command, or the usage error (without the program's name).
struct ParsedWarmCommandLine {
  WarmCommandLine command;
  std::string error;  ///< empty when the arguments were accepted

  /// ok: whether the arguments were accepted.
  [[nodiscard]] auto ok() const noexcept -> bool { return error.empty(); }
};

/// parse_warm_command_line: the meaning of `args` (argv without the program's
/// name). --help, -h and --version win over everything after them, and over
/// errors in nothing but the arguments before them. No I/O.
[[nodiscard]] auto parse_warm_command_line(std::span<const std::string_view> args)
    -> ParsedWarmCommandLine;

/// print_usage: writes the --help text to `out`.
void print_usage(std::ostream& out);

/// print_version: writes the --version line to `out`.
void print_version(std::ostream& out);

}  // namespace memshard::warm_tool

#endif  // MEMSHARD_TOOLS_WARM_COMMAND_LINE_HPP_
