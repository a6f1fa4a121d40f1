// SPDX-License-Identifier: MIT
// warm/command_line.cpp: parsing memshard-warm's arguments, and its --help and
// --version texts.

#include "warm/command_line.hpp"

#include <charconv>
#include <memshard/version.hpp>
#include <system_error>
#include <utility>

namespace memshard::warm_tool {
namespace {

/// parse_number: a decimal number (0 allowed), or nothing.
auto parse_number(std::string_view text) noexcept -> std::optional<std::uint64_t> {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end) {
    return std::nullopt;
  }
  return value;
}

/// parse_positive: a positive decimal number, or nothing.
auto parse_positive(std::string_view text) noexcept -> std::optional<std::size_t> {
  const std::optional<std::uint64_t> value = parse_number(text);
  if (!value || *value == 0) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(*value);
}

/// Parser: the state of one parse; each step returns false once error_ is set.
class Parser {
 public:
  auto parse(std::span<const std::string_view> args) -> ParsedWarmCommandLine {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string_view arg = args[i];
      if (arg == "--help" || arg == "-h") {
        return done(WarmAction::kHelp);
      }
      if (arg == "--version") {
        return done(WarmAction::kVersion);
      }
      if (!option(args, i)) {
        return refused();
      }
    }
    if (!command_.from.profile) {
      return refuse(
          "missing --from PROFILE, the old fleet's profile (see memshard-locate "
          "--list-profiles)");
    }
    if (command_.from.server_specs.empty()) {
      return refuse("missing --from-servers LIST, the old fleet's servers");
    }
    if (command_.to.server_specs.empty()) {
      return refuse("missing --to-servers LIST, the new fleet's servers");
    }
    return done(WarmAction::kWarm);
  }

 private:
  // Reads the option at args[i] (and its value, which may be args[i + 1]).
  auto option(std::span<const std::string_view> args, std::size_t& i) -> bool {
    const std::string_view arg = args[i];
    if (!arg.starts_with("-")) {
      return fail("unexpected argument '" + std::string(arg) + "'");
    }
    std::string_view flag = arg;
    std::optional<std::string_view> value;
    if (const auto equals = arg.find('='); equals != std::string_view::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    if (flag == "--json" || flag == "--quiet") {
      if (value) {
        return fail("option " + std::string(flag) + " takes no value");
      }
      (flag == "--json" ? command_.json : command_.quiet) = true;
      return true;
    }
    if (!known(flag)) {
      return fail("unknown option '" + std::string(flag) + "'");
    }
    if (!value) {
      if (i + 1 == args.size() || args[i + 1].starts_with("--")) {
        return fail("option " + std::string(flag) + " needs a value");
      }
      value = args[++i];
    }
    if (value->empty()) {
      return fail("option " + std::string(flag) + " needs a value");
    }
    return apply(flag, *value);
  }

  [[nodiscard]] static auto known(std::string_view flag) noexcept -> bool {
    static constexpr std::string_view kOptions[] = {
        "--from",        "--profile",        "--from-servers",     "--server",    "--hash",
        "--points",      "--weighted",       "--hash-tag",         "--to",        "--to-profile",
        "--to-servers",  "--to-server",      "--to-hash",          "--to-points", "--to-weighted",
        "--to-hash-tag", "--ops-per-second", "--bytes-per-second", "--min-ttl"};
    for (const std::string_view option : kOptions) {
      if (option == flag) {
        return true;
      }
    }
    return false;
  }

  auto apply(std::string_view flag, std::string_view value) -> bool {
    if (flag == "--ops-per-second") {
      return set_number(command_.ops_per_second, flag, value);
    }
    if (flag == "--bytes-per-second") {
      return set_number(command_.bytes_per_second, flag, value);
    }
    if (flag == "--min-ttl") {
      return set_number(command_.min_ttl, flag, value);
    }
    const bool to_side = flag.starts_with("--to");
    locate_tool::SideArgs& side = to_side ? command_.to : command_.from;
    std::string_view name = to_side ? flag.substr(4) : flag.substr(2);
    if (name.starts_with("-")) {
      name.remove_prefix(1);
    }
    if (name.empty() || name == "from" || name == "profile") {
      return set_once(side.profile, std::string(value), flag);
    }
    if (name == "servers" || name == "from-servers" || name == "server") {
      side.server_specs.emplace_back(value);
      return true;
    }
    if (name == "hash") {
      return set_once(side.hash, std::string(value), flag);
    }
    if (name == "points") {
      const std::optional<std::size_t> points = parse_positive(value);
      if (!points) {
        return fail(std::string(flag) + " needs a positive whole number, not '" +
                    std::string(value) + "'");
      }
      return set_once(side.points, *points, flag);
    }
    if (name == "weighted") {
      if (value != "true" && value != "false") {
        return fail(std::string(flag) + " needs true or false, not '" + std::string(value) + "'");
      }
      return set_once(side.weighted, value == "true", flag);
    }
    return set_once(side.hash_tag, std::string(value), flag);  // hash-tag
  }

  auto set_number(std::optional<std::uint64_t>& slot, std::string_view flag, std::string_view value)
      -> bool {
    const std::optional<std::uint64_t> number = parse_number(value);
    if (!number) {
      return fail(std::string(flag) + " needs a whole number, not '" + std::string(value) + "'");
    }
    return set_once(slot, *number, flag);
  }

  template <class T>
  auto set_once(std::optional<T>& slot, T value, std::string_view flag) -> bool {
    if (slot) {
      return fail(std::string(flag) + " given twice (or with its other spelling)");
    }
    slot = std::move(value);
    return true;
  }

  auto fail(std::string message) -> bool {
    error_ = std::move(message);
    return false;
  }
  auto refuse(std::string message) -> ParsedWarmCommandLine {
    fail(std::move(message));
    return refused();
  }
  auto refused() -> ParsedWarmCommandLine { return ParsedWarmCommandLine{{}, std::move(error_)}; }
  auto done(WarmAction action) -> ParsedWarmCommandLine {
    command_.action = action;
    return ParsedWarmCommandLine{std::move(command_), {}};
  }

  WarmCommandLine command_;
  std::string error_;
};

}  // namespace

auto parse_warm_command_line(std::span<const std::string_view> args) -> ParsedWarmCommandLine {
  return Parser().parse(args);
}

void print_usage(std::ostream& out) {
  out << "Usage: " << kProgram
      << " --from PROFILE --from-servers LIST --to PROFILE --to-servers LIST\n"
         "                     [--ops-per-second N] [--bytes-per-second N] [--min-ttl S]\n"
         "                     [--json] [--quiet]\n"
      << "       " << kProgram << " --help | --version\n"
      << "\n"
         "Warms a new memcached fleet before its clients switch to it: lists every key\n"
         "of the old fleet's servers (lru_crawler metadump all, memcached 1.6), and copies\n"
         "each key whose server changes to its new server, hottest first, with its flags\n"
         "and its exact remaining time to live (add: a key the new server holds is kept).\n"
         "A copied key's old copy is deleted when its old server stays in the new fleet;\n"
         "a retiring server is only read. The copies follow memshard's live migration\n"
         "rules, so the fleet's clients may keep reading and writing meanwhile.\n"
         "\n"
         "memshard-warm does not switch anything: the fleet's own clients move to the\n"
         "new servers (ShardedClient::begin_migration, then commit_migration once this\n"
         "tool is done). Run it after they began their migration window.\n"
         "\n"
         "Options:\n"
         "  --from PROFILE       the old fleet's placement (memshard-locate --list-profiles);\n"
         "                       also spelled --profile, as memshard-locate --compare\n"
         "  --from-servers LIST  the old fleet's servers, host:port[:weight[:name]]\n"
         "                       separated by commas, in the clients' order; may be given\n"
         "                       more than once, and --server SPEC adds one server\n"
         "  --to PROFILE         the new fleet's placement (also --to-profile); default:\n"
         "                       the old one's\n"
         "  --to-servers LIST    the new fleet's servers (also --to-server SPEC)\n"
         "  --hash H, --points K, --weighted true|false, --hash-tag XY\n"
         "  --to-hash H, --to-points K, --to-weighted true|false, --to-hash-tag XY\n"
         "                       the placements' options, as for memshard-locate; the new\n"
         "                       fleet's default to the old one's when the profile is the\n"
         "                       same\n"
         "  --ops-per-second N   keys copied per second at most (default 1000; 0: no limit)\n"
         "  --bytes-per-second N item bytes copied per second at most (default 8000000;\n"
         "                       0: no limit); the budget is halved each time a new server's\n"
         "                       evictions rise, and comes back when they stop\n"
         "  --min-ttl S          do not copy keys with less than S seconds to live, on their\n"
         "                       server's clock (default 1)\n"
         "  --json               print the summary as one JSON object (see docs/tools.md)\n"
         "  --quiet              no progress line on standard error\n"
         "  --help               print this help\n"
         "  --version            print the memshard version\n"
         "Options also take the form --name=value. On a terminal, standard error shows a\n"
         "progress line.\n"
         "\n"
         "Exit status: 0 every old server listed and each moved key settled; 1 some old\n"
         "server could not be listed (reported, the others were warmed); 2 usage or\n"
         "configuration error (nothing copied).\n";
}

void print_version(std::ostream& out) {
  out << kProgram << " (memshard) " << MEMSHARD_VERSION_MAJOR << '.' << MEMSHARD_VERSION_MINOR
      << '.' << MEMSHARD_VERSION_PATCH << '\n';
}

}  // namespace memshard::warm_tool
