// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_GET_COMMAND_LINE_HPP_
#define MEMSHARD_TOOLS_GET_COMMAND_LINE_HPP_

// get/command_line.hpp: memshard-get's command line: the arguments parsed into
// a plain GetCommandLine (or the usage error that refuses them, as a value),
// and the texts of --help, --version and --list-codecs. The placement is
// memshard-locate's SideArgs, given by the same options (--profile, --hash,
// --points, --weighted, --hash-tag, --server, --prefix, --prefix-hashing).

#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "locate/command_line.hpp"

namespace memshard::get_tool {

/// kProgram: the tool's name, which starts each of its error messages.
inline constexpr std::string_view kProgram = "memshard-get";

/// kExitOk: every key was read: a value or a miss.
inline constexpr int kExitOk = 0;
/// kExitKeyErrors: some key could not be read or decoded, or was not a valid
/// key (each one printed as an error line; the other keys were still read).
inline constexpr int kExitKeyErrors = 1;
/// kExitError: a usage, configuration or I/O error.
inline constexpr int kExitError = 2;

/// kDefaultCodec: the codec when --codec is not given: the bytes as a string.
inline constexpr std::string_view kDefaultCodec = "plain";

/// GetAction: what the command line asks for.
enum class GetAction { kGet, kHelp, kVersion, kListCodecs };

/// GetCommandLine: the parsed arguments.
struct GetCommandLine {
  GetAction action = GetAction::kGet;
  /// The placement and its servers, as memshard-locate takes them (one server
  /// per --server SPEC).
  locate_tool::SideArgs placement = {};
  /// --codec C: a codec spec for make_codec_from_spec ("php-memcached",
  /// "dalli:serializer=JSON"); kDefaultCodec when not given.
  std::string codec = std::string(kDefaultCodec);
  /// The KEY arguments, in order; none: the keys are read from standard input.
  std::vector<std::string> keys = {};

  /// operator==: whether two command lines mean the same.
  auto operator==(const GetCommandLine&) const -> bool = default;
};

/// ParsedGetCommandLine: the outcome of parse_get_command_line: the command,
/// or the usage error (without the program's name) when the arguments are
/// refused.
struct ParsedGetCommandLine {
  GetCommandLine command;
  std::string error;  ///< empty when the arguments were accepted

  /// ok: whether the arguments were accepted.
  [[nodiscard]] auto ok() const noexcept -> bool { return error.empty(); }
};

/// parse_get_command_line: the meaning of `args` (argv without the program's
/// name). An argument that does not start with '-' is a KEY, and so is every
/// argument after "--". --help, -h, --version and --list-codecs win over
/// everything after them, and over errors in nothing but the arguments before
/// them. The codec spec is checked here (make_codec_from_spec): an unknown
/// codec or setting is a usage error. No I/O.
[[nodiscard]] auto parse_get_command_line(std::span<const std::string_view> args)
    -> ParsedGetCommandLine;

/// print_usage: writes the --help text to `out`.
void print_usage(std::ostream& out);

/// print_version: writes the --version line to `out`.
void print_version(std::ostream& out);

/// print_codecs: writes the --list-codecs text to `out`: each codec name
/// (memshard::codec_names()) on a line of its own.
void print_codecs(std::ostream& out);

}  // namespace memshard::get_tool

#endif  // MEMSHARD_TOOLS_GET_COMMAND_LINE_HPP_
