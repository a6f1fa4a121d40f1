// SPDX-License-Identifier: MIT
// warm/run.cpp: memshard-warm's work: a client of the old fleet, a migration
// to the new one, its Warmer run to the end, and the summary.

#include "warm/run.hpp"

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <memshard/client/make_client.hpp>
#include <memshard/errors.hpp>
#include <memshard/migration/warmer.hpp>
#include <memshard/placement/profiles.hpp>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "locate/locate.hpp"
#include "warm/command_line.hpp"

namespace memshard::warm_tool {
namespace {

/// servers_of: every server of `side`'s specs (each one spec or a list).
/// Throws memshard::ConfigError.
auto servers_of(const locate_tool::SideArgs& side) -> std::vector<memshard::Server> {
  std::vector<memshard::Server> servers;
  for (const std::string& spec : side.server_specs) {
    for (memshard::Server& server : memshard::parse_servers(spec)) {
      servers.push_back(std::move(server));
    }
  }
  return servers;
}

auto profile_options(const locate_tool::SideArgs& side) -> memshard::ProfileOptions {
  return memshard::ProfileOptions{side.hash.value_or(""), side.points.value_or(0), side.weighted,
                                  side.hash_tag.value_or("")};
}

/// print_summary: one line per old server and the total, for people.
void print_summary(std::ostream& out, const memshard::WarmerProgress& progress) {
  const auto line = [&out](const memshard::WarmerServerProgress& p) {
    out << p.server << ": scanned " << p.scanned << ", eligible " << p.eligible << ", copied "
        << p.copied << ", already present " << p.already_present << ", vanished " << p.vanished
        << ", revoked " << p.revoked << ", expired " << p.expired << ", failed " << p.failed << ", "
        << p.elapsed.count() << " ms";
    if (!p.error.empty()) {
      out << " (not listed: " << p.error << ")";
    }
    out << '\n';
  };
  for (const memshard::WarmerServerProgress& p : progress.servers) {
    line(p);
  }
  line(progress.totals());
}

/// warm: carries out `command` (kWarm). Throws memshard::ConfigError.
auto warm(const WarmCommandLine& command, std::ostream& out, std::ostream& errors,
          Terminal terminal) -> int {
  const locate_tool::SideArgs to = locate_tool::side_b(command.from, command.to);
  std::vector<memshard::Server> old_servers = servers_of(command.from);
  std::vector<memshard::Server> new_servers = servers_of(to);
  auto new_locator = std::make_shared<const memshard::AnyLocator>(
      memshard::make_locator(to.profile.value_or(""), new_servers, profile_options(to)));
  memshard::ShardedClient<memshard::AnyLocator> client = memshard::make_client(
      command.from.profile.value_or(""), std::move(old_servers), profile_options(command.from));
  client.begin_migration(std::move(new_servers), std::move(new_locator));

  memshard::WarmerOptions options;
  if (command.ops_per_second) {
    options.ops_per_second = *command.ops_per_second;
  }
  if (command.bytes_per_second) {
    options.bytes_per_second = *command.bytes_per_second;
  }
  if (command.min_ttl) {
    options.min_ttl = std::chrono::seconds{static_cast<std::int64_t>(*command.min_ttl)};
  }
  const bool show = terminal.progress && !command.quiet;
  if (show) {
    options.on_progress = [&errors, width = terminal.width](const memshard::WarmerProgress& now) {
      errors << '\r' << now.render_progress_line(width) << std::flush;
    };
  }
  memshard::Warmer<memshard::AnyLocator> warmer(client, std::move(options));
  while (warmer.run_for(std::chrono::milliseconds{250})) {
  }
  if (show) {
    errors << '\n';
  }
  const memshard::WarmerProgress progress = warmer.progress();
  bool complete = true;
  for (const memshard::WarmerServerProgress& p : progress.servers) {
    if (!p.error.empty()) {
      errors << kProgram << ": " << p.error << '\n';
      complete = false;
    }
  }
  if (command.json) {
    out << progress.to_json() << '\n';
  } else {
    print_summary(out, progress);
  }
  out.flush();
  return complete ? kExitOk : kExitIncomplete;
}

}  // namespace

auto run(std::span<const std::string_view> args, std::ostream& out, std::ostream& errors,
         Terminal terminal) -> int {
  const ParsedWarmCommandLine parsed = parse_warm_command_line(args);
  if (!parsed.ok()) {
    errors << kProgram << ": " << parsed.error << "\nTry '" << kProgram
           << " --help' for more information.\n";
    return kExitError;
  }
  try {
    switch (parsed.command.action) {
      case WarmAction::kHelp:
        print_usage(out);
        return kExitOk;
      case WarmAction::kVersion:
        print_version(out);
        return kExitOk;
      case WarmAction::kWarm:
        break;
    }
    return warm(parsed.command, out, errors, terminal);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const memshard::ConfigError& error) {
    errors << kProgram << ": " << locate_tool::without_library_prefix(error.what()) << '\n';
  } catch (const std::exception& error) {
    errors << kProgram << ": " << error.what() << '\n';
  }
  return kExitError;
}

}  // namespace memshard::warm_tool
