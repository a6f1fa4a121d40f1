// SPDX-License-Identifier: MIT
// locate/run.cpp: memshard-locate's actions and its error reports.

#include "locate/run.hpp"

#include <exception>
#include <memshard/errors.hpp>
#include <new>

#include "locate/command_line.hpp"
#include "locate/compare.hpp"
#include "locate/io.hpp"
#include "locate/locate.hpp"

namespace memshard::locate_tool {
namespace {

/// carry_out: does what `command` asks. Throws memshard::ConfigError or IoError.
auto carry_out(const CommandLine& command, std::istream& in, std::ostream& out,
               std::ostream& errors) -> int {
  switch (command.action) {
    case Action::kHelp:
      print_usage(out);
      return kExitOk;
    case Action::kVersion:
      print_version(out);
      return kExitOk;
    case Action::kListProfiles:
      print_profiles(out);
      return kExitOk;
    case Action::kLocate:
    case Action::kCompare:
      break;
  }
  const Placement a = make_placement(command.from);
  if (command.action == Action::kLocate) {
    return locate_keys(a, in, out, errors);
  }
  const Placement b = make_placement_b(command);
  return compare_keys(command, a, b, in, out, errors);
}

}  // namespace

auto run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
         std::ostream& errors) -> int {
  const ParsedCommandLine parsed = parse_command_line(args);
  if (!parsed.ok()) {
    errors << kProgram << ": " << parsed.error << "\nTry '" << kProgram
           << " --help' for more information.\n";
    return kExitError;
  }
  try {
    return carry_out(parsed.command, in, out, errors);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const memshard::ConfigError& error) {
    errors << kProgram << ": " << without_library_prefix(error.what()) << '\n';
  } catch (const std::exception& error) {
    errors << kProgram << ": " << error.what() << '\n';
  }
  return kExitError;
}

}  // namespace memshard::locate_tool
