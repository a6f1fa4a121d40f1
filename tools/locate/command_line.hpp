// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_LOCATE_COMMAND_LINE_HPP_
#define MEMSHARD_TOOLS_LOCATE_COMMAND_LINE_HPP_

// locate/command_line.hpp: memshard-locate's command line: the arguments parsed
// into a plain CommandLine (or the usage error that refuses them, as a value),
// B's placement options completed from A's, and the texts of --help, --version
// and --list-profiles.

#include <cstddef>
#include <memshard/placement/key_prefix.hpp>
#include <memshard/placement/profiles.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memshard::locate_tool {

/// kProgram: the tool's name, which starts each of its error messages.
inline constexpr std::string_view kProgram = "memshard-locate";

/// kExitOk: every key placed (with --compare: the comparison ran).
inline constexpr int kExitOk = 0;
/// kExitInvalidKeys: some input lines were not valid keys (reported and skipped).
inline constexpr int kExitInvalidKeys = 1;
/// kExitError: a usage, configuration or I/O error.
inline constexpr int kExitError = 2;
/// kExitMoved: with --compare --fail-if-moved, some key moved (wins over 1).
inline constexpr int kExitMoved = 3;

/// Action: what the command line asks for.
enum class Action { kLocate, kCompare, kHelp, kVersion, kListProfiles };

/// SideArgs: one placement as the command line gives it: side A by --profile,
/// --hash, --points, --weighted, --hash-tag, --server, --prefix and
/// --prefix-hashing; side B of --compare by the same options prefixed "--to-".
/// Unset means not given. (memshard-warm shares the struct and sets no prefix.)
struct SideArgs {
  std::optional<std::string> profile = {};
  std::optional<std::string> hash = {};
  std::optional<std::size_t> points = {};
  std::optional<bool> weighted = {};
  std::optional<std::string> hash_tag = {};
  std::vector<std::string> server_specs = {};
  /// --prefix P: the key prefix sent in front of every key (a valid
  /// KeyPrefix; empty, from --prefix=, is no prefix).
  std::optional<std::string> prefix = {};
  /// --prefix-hashing bare|prefixed: which form of a key is placed (only
  /// with a prefix; unset is kBareKey).
  std::optional<memshard::PrefixHashing> prefix_hashing = {};

  /// operator==: whether two sides were given the same options.
  auto operator==(const SideArgs&) const -> bool = default;
};

/// CommandLine: the parsed arguments.
struct CommandLine {
  Action action = Action::kLocate;
  SideArgs from = {};  ///< side A: --profile, --hash, --points, --weighted, --server
  SideArgs to = {};    ///< side B: --to-profile, --to-hash, ... (as given, before defaults)
  std::optional<std::size_t> sample = {};  ///< --sample N
  bool per_key = false;                    ///< --per-key
  bool fail_if_moved = false;              ///< --fail-if-moved

  /// operator==: whether two command lines mean the same.
  auto operator==(const CommandLine&) const -> bool = default;
};

/// ParsedCommandLine: the outcome of parse_command_line: the command, or the
/// usage error (without the program's name) when the arguments are refused.
struct ParsedCommandLine {
  CommandLine command;
  std::string error;  ///< empty when the arguments were accepted

  /// ok: whether the arguments were accepted.
  [[nodiscard]] auto ok() const noexcept -> bool { return error.empty(); }
};

/// parse_command_line: the meaning of `args` (argv without the program's name).
/// --help, -h, --version and --list-profiles win over everything after them,
/// and over errors in nothing but the arguments before them. No I/O.
[[nodiscard]] auto parse_command_line(std::span<const std::string_view> args) -> ParsedCommandLine;

/// side_b: B's placement for --compare: what the --to-* options of `to` give,
/// the rest from `a` (hash, points, weighted and hash tag only when B's profile
/// is A's: those are per profile; the servers when `to` lists none; the prefix
/// and the prefix hashing, each on its own, whatever the profile).
[[nodiscard]] auto side_b(const SideArgs& a, const SideArgs& to) -> SideArgs;

/// print_usage: writes the --help text to `out`.
void print_usage(std::ostream& out);

/// print_version: writes the --version line to `out`.
void print_version(std::ostream& out);

/// profile_hashes: the hash names `profile` accepts, as "a, b (note), c" ("" for
/// a profile with a fixed hash).
[[nodiscard]] auto profile_hashes(const memshard::ProfileInfo& profile) -> std::string;

/// print_profiles: writes the --list-profiles text to `out`: for each profile,
/// its name on a line of its own, then, indented, what it reproduces, the hashes
/// it takes (with its default) and whether it takes --points, --weighted and
/// --hash-tag.
void print_profiles(std::ostream& out);

}  // namespace memshard::locate_tool

#endif  // MEMSHARD_TOOLS_LOCATE_COMMAND_LINE_HPP_
