// SPDX-License-Identifier: MIT
// fleet/command_line.cpp: parsing memshard-fleet's arguments, and its --help and --version
// texts.

#include "fleet/command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memshard/version.hpp>
#include <system_error>
#include <utility>
#include <vector>

namespace memshard::fleet_tool {
namespace {

/// Parser: the state of one parse; each step returns false once error_ is set.
class Parser {
 public:
  Parser(bool json, bool flushed, bool no_sweep) {
    command_.json = json;
    command_.flushed = flushed;
    command_.no_sweep = no_sweep;
  }

  auto parse(std::span<const std::string_view> args, std::string_view store)
      -> ParsedFleetCommandLine {
    for (const std::string_view arg : args) {
      if (arg == "--help" || arg == "-h") {
        command_.action = FleetAction::kHelp;
        return {command_, {}};
      }
      if (arg == "--version") {
        command_.action = FleetAction::kVersion;
        return {command_, {}};
      }
    }
    command_.store = std::string(store);
    std::vector<std::string_view> words;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string_view arg = args[i];
      if (arg.starts_with("--")) {
        if (i + 1 >= args.size()) {
          return refuse(std::string(arg) + " needs a value");
        }
        if (!option(arg, args[++i])) {
          return {command_, error_};
        }
      } else {
        words.push_back(arg);
      }
    }
    if (words.empty()) {
      return refuse(
          "missing a command: create, show, members, migrate, commit, abort, "
          "reconfigure or evict (see --help)");
    }
    const std::string_view verb = words[0];
    static constexpr std::pair<std::string_view, FleetAction> kVerbs[] = {
        {"create", FleetAction::kCreate},           {"show", FleetAction::kShow},
        {"members", FleetAction::kMembers},         {"migrate", FleetAction::kMigrate},
        {"commit", FleetAction::kCommit},           {"abort", FleetAction::kAbort},
        {"reconfigure", FleetAction::kReconfigure}, {"evict", FleetAction::kEvict}};
    const auto* found = std::find_if(std::begin(kVerbs), std::end(kVerbs),
                                     [verb](const auto& entry) { return entry.first == verb; });
    if (found == std::end(kVerbs)) {
      return refuse("unknown command '" + std::string(verb) + "' (see --help)");
    }
    command_.action = found->second;
    const FleetAction action = command_.action;
    if (action == FleetAction::kEvict) {
      if (words.size() != 3) {
        return refuse("evict takes a fleet name and a member's id");
      }
      command_.member = std::string(words[2]);
    } else if (words.size() != 2) {
      return refuse(std::string(verb) + " takes one fleet name");
    }
    command_.name = std::string(words[1]);
    if (command_.store.empty()) {
      return refuse("missing --store etcd://host:port[,host:port...] (or $MEMSHARD_STORE)");
    }
    const bool create = action == FleetAction::kCreate;
    const bool moves = action == FleetAction::kMigrate || action == FleetAction::kReconfigure;
    if (create && (command_.profile.empty() || command_.servers.empty())) {
      return refuse("create needs --profile P and --servers \"host:port ...\"");
    }
    if (moves && command_.servers.empty()) {
      return refuse(std::string(verb) + " needs --servers \"host:port ...\"");
    }
    if (moves && placement_set_ && command_.profile.empty()) {
      // Without --profile the fleet keeps its profile and that profile's options, whole.
      return refuse("a profile's options go with --profile P");
    }
    if (!create && !moves &&
        (!command_.profile.empty() || !command_.servers.empty() || placement_set_)) {
      return refuse("only create, migrate and reconfigure take a placement");
    }
    if (!create && shared_set_) {
      return refuse("the options every member shares are set by create only");
    }
    if (consistency_set_ && action != FleetAction::kMigrate) {
      return refuse("only migrate takes --consistency");
    }
    if (command_.flushed && !moves) {
      return refuse("only migrate and reconfigure take --flushed");
    }
    if (command_.no_sweep && action != FleetAction::kCommit && action != FleetAction::kAbort &&
        action != FleetAction::kReconfigure) {
      return refuse("only commit, abort and reconfigure take --no-sweep");
    }
    if (command_.json && action != FleetAction::kShow && action != FleetAction::kMembers) {
      return refuse(std::string(verb) + " takes no --json");
    }
    return {command_, {}};
  }

 private:
  auto refuse(std::string why) -> ParsedFleetCommandLine {
    error_ = std::move(why);
    return {command_, error_};
  }
  auto fail(std::string why) -> bool {
    error_ = std::move(why);
    return false;
  }

  auto option(std::string_view name, std::string_view value) -> bool {
    if (name == "--store") {
      command_.store = std::string(value);
    } else if (name == "--timeout") {
      double seconds = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (error != std::errc{} || end != value.data() + value.size() || !(seconds > 0) ||
          seconds > 3600) {
        return fail("--timeout takes seconds, more than 0 and at most 3600: " + std::string(value));
      }
      command_.timeout = std::chrono::milliseconds(
          std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(seconds * 1000))));
    } else if (name == "--profile") {
      command_.profile = std::string(value);
    } else if (name == "--servers") {
      command_.servers = std::string(value);
    } else if (name == "--hash") {
      command_.profile_options.hash = std::string(value);
      placement_set_ = true;
    } else if (name == "--points") {
      std::size_t points = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), points);
      if (error != std::errc{} || end != value.data() + value.size() || points == 0) {
        return fail("--points takes a positive number: " + std::string(value));
      }
      command_.profile_options.points = points;
      placement_set_ = true;
    } else if (name == "--weighted") {
      if (value != "true" && value != "false") {
        return fail("--weighted takes true or false: " + std::string(value));
      }
      command_.profile_options.weighted = value == "true";
      placement_set_ = true;
    } else if (name == "--hash-tag") {
      command_.profile_options.hash_tag = std::string(value);
      placement_set_ = true;
    } else if (name == "--consistency") {
      if (value != "fast" && value != "strict") {
        return fail("--consistency takes fast or strict: " + std::string(value));
      }
      command_.consistency =
          value == "fast" ? MigrationConsistency::kFast : MigrationConsistency::kStrict;
      consistency_set_ = true;
    } else if (name == "--key-prefix") {
      command_.key_prefix = std::string(value);
      shared_set_ = true;
    } else if (name == "--prefix-hashing") {
      if (value != "bare-key" && value != "prefixed-key") {
        return fail("--prefix-hashing takes bare-key or prefixed-key: " + std::string(value));
      }
      command_.prefix_hashing =
          value == "bare-key" ? PrefixHashing::kBareKey : PrefixHashing::kPrefixedKey;
      shared_set_ = true;
    } else if (name == "--failure-policy") {
      if (value != "fail-fast" && value != "failover") {
        return fail("--failure-policy takes fail-fast or failover: " + std::string(value));
      }
      command_.failure_policy =
          value == "fail-fast" ? FailurePolicy::kFailFast : FailurePolicy::kFailover;
      shared_set_ = true;
    } else {
      return fail("unknown option " + std::string(name) + " (see --help)");
    }
    return true;
  }

  FleetCommandLine command_;
  std::string error_;
  bool placement_set_ = false;    // a profile option
  bool shared_set_ = false;       // an option every member shares
  bool consistency_set_ = false;  // --consistency
};

}  // namespace

auto parse_fleet_command_line(std::span<const std::string_view> args,
                              std::string_view store_from_environment) -> ParsedFleetCommandLine {
  // --json, --flushed and --no-sweep are the options without a value: take them out first.
  std::vector<std::string_view> rest;
  bool json = false;
  bool flushed = false;
  bool no_sweep = false;
  for (const std::string_view arg : args) {
    if (arg == "--json") {
      json = true;
    } else if (arg == "--flushed") {
      flushed = true;
    } else if (arg == "--no-sweep") {
      no_sweep = true;
    } else {
      rest.push_back(arg);
    }
  }
  return Parser(json, flushed, no_sweep).parse(rest, store_from_environment);
}

void print_usage(std::ostream& out) {
  out << "usage: memshard-fleet --store etcd://host:port[,host:port...] COMMAND NAME [options]\n"
         "\n"
         "A fleet is the processes that share one placement of keys on memcached servers,\n"
         "kept in etcd so that every one of them follows each change in step.\n"
         "\n"
         "commands:\n"
         "  create NAME --profile P --servers \"host:port[:weight] ...\"\n"
         "         [--hash H] [--points N] [--weighted true|false] [--hash-tag AB]\n"
         "         [--key-prefix X] [--prefix-hashing bare-key|prefixed-key]\n"
         "         [--failure-policy fail-fast|failover]\n"
         "                    writes a new fleet's record (refused if it exists)\n"
         "  show NAME [--json]     the fleet's record: placement, options, change in progress\n"
         "  members NAME [--json]  the live members and the epoch of the record each serves\n"
         "  migrate NAME --servers \"...\" [--profile P] [profile options]\n"
         "         [--consistency fast|strict] [--flushed]\n"
         "                    opens the read-through window to the new placement; returns once\n"
         "                    every live member reads through it\n"
         "  commit NAME [--no-sweep]\n"
         "                    moves every member to the new placement alone\n"
         "  abort NAME [--no-sweep]\n"
         "                    moves every member back to the old placement\n"
         "  reconfigure NAME --servers \"...\" [--profile P] [profile options] [--flushed]\n"
         "         [--no-sweep]\n"
         "                    switches every member to the new placement, without the window\n"
         "  evict NAME MEMBER  removes a member known to be dead, so that changes stop waiting\n"
         "\n"
         "options:\n"
         "  --store URL      etcd's client endpoints (default: $MEMSHARD_STORE)\n"
         "  --timeout S      the most each wait for the members may take (default 60), and\n"
         "                   each request to etcd (at most 5 s of it)\n"
         "  --help, --version\n"
         "\n"
         "Each change moves through its phases (1 prepare, 2 read-through, 3 settle, 4 done),\n"
         "each only once every live member serves the one before it; a line on standard error\n"
         "says how many do while it waits. Before the new placement is served alone (and before\n"
         "an abort after the window ends), the servers left with copies nothing keeps current\n"
         "are swept: each one's keys are listed, and those placed elsewhere deleted (a line\n"
         "each). A server not swept whole (or with --no-sweep) is recorded as holding stale\n"
         "copies: a later change onto it needs it flushed, and --flushed.\n"
         "\n"
         "exit status: 0 done; 1 etcd unreachable, the request refused (the fleet exists or\n"
         "does not, a change in progress, nothing to commit), members that did not follow in\n"
         "time (the change stays at the phase reached: give the command again) or a record that\n"
         "cannot be read; 2 usage or configuration error.\n";
}

void print_version(std::ostream& out) {
  out << kProgram << " (memshard) " << MEMSHARD_VERSION_MAJOR << '.' << MEMSHARD_VERSION_MINOR
      << '.' << MEMSHARD_VERSION_PATCH << '\n';
}

}  // namespace memshard::fleet_tool
