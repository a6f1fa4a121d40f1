// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_FLEET_COMMAND_LINE_HPP_
#define MEMSHARD_TOOLS_FLEET_COMMAND_LINE_HPP_

// fleet/command_line.hpp: memshard-fleet's command line: the arguments parsed into a plain
// FleetCommandLine (or the usage error that refuses them, as a value), and the texts of --help
// and --version.

#include <chrono>
#include <memshard/client/client_options.hpp>
#include <memshard/migration/migration_options.hpp>
#include <memshard/placement/key_prefix.hpp>
#include <memshard/placement/profiles/profile_info.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace memshard::fleet_tool {

/// kProgram: the tool's name, which starts each of its error messages.
inline constexpr std::string_view kProgram = "memshard-fleet";
/// kExitOk: done.
inline constexpr int kExitOk = 0;
/// kExitFailed: the store could not be reached in time, refused the request (a fleet that
/// exists, or does not), or holds a record that cannot be read.
inline constexpr int kExitFailed = 1;
/// kExitUsage: a usage or configuration error; nothing was asked of the store.
inline constexpr int kExitUsage = 2;

/// FleetAction: the command.
enum class FleetAction {
  kCreate,
  kShow,
  kMembers,
  kMigrate,
  kCommit,
  kAbort,
  kReconfigure,
  kEvict,
  kHelp,
  kVersion
};

/// FleetCommandLine: the parsed arguments.
struct FleetCommandLine {
  FleetAction action = FleetAction::kHelp;
  std::string store;   ///< --store URL (or $MEMSHARD_STORE)
  std::string name;    ///< the fleet
  std::string member;  ///< evict: the member's id
  /// --timeout S: the bound of each wait for the members (and of each request to etcd, at most
  /// 5 s of it)
  std::chrono::milliseconds timeout{60'000};
  std::string profile;             ///< create: --profile P
  std::string servers;             ///< create: --servers "h:p ..."
  ProfileOptions profile_options;  ///< create: --hash, --points, --weighted, --hash-tag
  std::string key_prefix;          ///< create: --key-prefix
  PrefixHashing prefix_hashing = PrefixHashing::kBareKey;   ///< create: --prefix-hashing
  FailurePolicy failure_policy = FailurePolicy::kFailFast;  ///< create: --failure-policy
  bool json = false;                                        ///< show, members: --json
  /// migrate: --consistency fast|strict
  MigrationConsistency consistency = MigrationConsistency::kFast;
  bool flushed = false;  ///< migrate, reconfigure: --flushed (servers flushed since an abort)
  /// commit, abort, reconfigure: --no-sweep (the servers that would be swept are recorded as
  /// holding stale copies instead)
  bool no_sweep = false;
};

/// ParsedFleetCommandLine: the command, or the usage error (without the program's name).
struct ParsedFleetCommandLine {
  FleetCommandLine command;
  std::string error;  ///< empty when the arguments were accepted
  [[nodiscard]] auto ok() const noexcept -> bool { return error.empty(); }
};

/// parse_fleet_command_line: the meaning of `args` (argv without the program's name);
/// `store_from_environment` is $MEMSHARD_STORE (or empty), used when --store is not given.
/// --help, -h and --version win over everything else. No I/O.
[[nodiscard]] auto parse_fleet_command_line(std::span<const std::string_view> args,
                                            std::string_view store_from_environment)
    -> ParsedFleetCommandLine;

/// print_usage: writes the --help text to `out`.
void print_usage(std::ostream& out);
/// print_version: writes the --version line to `out`.
void print_version(std::ostream& out);

}  // namespace memshard::fleet_tool

#endif  // MEMSHARD_TOOLS_FLEET_COMMAND_LINE_HPP_
