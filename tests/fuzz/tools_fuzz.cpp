// SPDX-License-Identifier: MIT
// libFuzzer target for the tools' command lines (tools/locate/command_line.hpp,
// tools/warm/command_line.hpp): the input is argv, arguments separated by NUL
// bytes, and after an empty argument ("\0\0") the standard input of
// memshard-locate. Both parsers must answer with a command or a usage error
// (never a crash, an exception or an exit), the same one twice; an accepted
// command's placements are completed (side_b) and built (make_placement: a
// ConfigError at most); and memshard-locate's run() on the same arguments must
// return one of its exit statuses, throwing nothing. Run by CTest for a bounded
// time (tests/fuzz/CMakeLists.txt).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "locate/command_line.hpp"
#include "locate/locate.hpp"
#include "locate/run.hpp"
#include "memshard/errors.hpp"
#include "warm/command_line.hpp"

namespace {

namespace locate = memshard::locate_tool;
namespace warm = memshard::warm_tool;
using memshard::fuzz::check;

// Placements small enough to build quickly: few servers, few points.
auto small(const locate::SideArgs& side) -> bool {
  return side.server_specs.size() <= 16 && side.points.value_or(0) <= 1024;
}

// Builds `side`'s placement when it is small; a ConfigError is its answer.
void build(const locate::SideArgs& side) {
  if (!side.profile || !small(side)) {
    return;
  }
  try {
    const locate::Placement placement = locate::make_placement(side);
    static_cast<void>(placement);
  } catch (const memshard::ConfigError&) {
    // refused, as it may be; any other exception is a crash
  }
}

}  // namespace

extern "C" auto LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) -> int {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> args;
  std::string_view stdin_text;
  std::size_t at = 0;
  while (at <= bytes.size()) {
    const std::size_t end = std::min(bytes.find('\0', at), bytes.size());
    const std::string_view arg = bytes.substr(at, end - at);
    if (arg.empty() && end < bytes.size()) {
      stdin_text = bytes.substr(end + 1);
      break;
    }
    if (!arg.empty()) {
      args.push_back(arg);
    }
    at = end + 1;
  }

  const locate::ParsedCommandLine parsed = locate::parse_command_line(args);
  const locate::ParsedCommandLine twice = locate::parse_command_line(args);
  check(parsed.ok() == twice.ok() && parsed.error == twice.error);
  const bool locate_small = parsed.ok() && small(parsed.command.from) && small(parsed.command.to);
  if (parsed.ok()) {
    check(parsed.command == twice.command);
    const locate::CommandLine& command = parsed.command;
    if (command.action == locate::Action::kLocate || command.action == locate::Action::kCompare) {
      check(command.from.profile.has_value() && !command.from.server_specs.empty());
      build(command.from);
      if (command.action == locate::Action::kCompare) {
        build(locate::side_b(command.from, command.to));
      }
    }
  }

  const warm::ParsedWarmCommandLine warm_parsed = warm::parse_warm_command_line(args);
  const warm::ParsedWarmCommandLine warm_twice = warm::parse_warm_command_line(args);
  check(warm_parsed.ok() == warm_twice.ok() && warm_parsed.error == warm_twice.error);
  if (warm_parsed.ok()) {
    check(warm_parsed.command == warm_twice.command);
    if (warm_parsed.command.action == warm::WarmAction::kWarm) {
      build(warm_parsed.command.from);
      build(locate::side_b(warm_parsed.command.from, warm_parsed.command.to));
    }
  }

  // The whole tool, in process, when what it would build is small (or it is
  // refused before anything is built).
  if (!parsed.ok() || locate_small) {
    std::istringstream in{std::string(stdin_text)};
    std::ostringstream out;
    std::ostringstream errors;
    const int status = locate::run(args, in, out, errors);
    check(status == locate::kExitOk || status == locate::kExitInvalidKeys ||
          status == locate::kExitError || status == locate::kExitMoved);
    check(parsed.ok() || status == locate::kExitError);
    check(status != locate::kExitError || !errors.str().empty());
  }
  return 0;
}
