// SPDX-License-Identifier: MIT
// locate/command_line.cpp: parsing memshard-locate's arguments, and its
// --help, --version and --list-profiles texts.

#include "locate/command_line.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <memshard/errors.hpp>
#include <memshard/placement/key_prefix.hpp>
#include <memshard/version.hpp>
#include <system_error>
#include <utility>

namespace memshard::locate_tool {
namespace {

/// kSideOptions: the options that describe a placement, without "--" or "--to-".
constexpr std::array<std::string_view, 8> kSideOptions = {
    "profile", "hash", "points", "weighted", "hash-tag", "server", "prefix", "prefix-hashing"};

/// parse_count: a positive decimal number, or nothing.
auto parse_count(std::string_view text) noexcept -> std::optional<std::size_t> {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value == 0) {
    return std::nullopt;
  }
  return value;
}

/// parse_bool: "true" or "false", or nothing.
auto parse_bool(std::string_view text) noexcept -> std::optional<bool> {
  if (text == "true") {
    return true;
  }
  if (text == "false") {
    return false;
  }
  return std::nullopt;
}

/// parse_prefix_hashing: "bare" or "prefixed", or nothing.
auto parse_prefix_hashing(std::string_view text) noexcept
    -> std::optional<memshard::PrefixHashing> {
  if (text == "bare") {
    return memshard::PrefixHashing::kBareKey;
  }
  if (text == "prefixed") {
    return memshard::PrefixHashing::kPrefixedKey;
  }
  return std::nullopt;
}

/// prefix_problem: why `prefix` cannot be a key prefix (KeyPrefix::validate's
/// message without "memshard: "), or "" when it can.
auto prefix_problem(std::string_view prefix) -> std::string {
  try {
    memshard::KeyPrefix::validate(prefix);
  } catch (const memshard::ConfigError& error) {
    std::string_view message = error.what();
    constexpr std::string_view kLibrary = "memshard: ";
    if (message.starts_with(kLibrary)) {
      message.remove_prefix(kLibrary.size());
    }
    return std::string(message);
  }
  return {};
}

/// has_prefix: whether a side's --prefix (or, when unset, `fallback`) is a prefix.
auto has_prefix(const std::optional<std::string>& prefix,
                const std::optional<std::string>& fallback = {}) noexcept -> bool {
  return !(prefix ? *prefix : fallback.value_or("")).empty();
}

/// Parser: the state of one parse; each step returns false once error_ is set.
class Parser {
 public:
  auto parse(std::span<const std::string_view> args) -> ParsedCommandLine {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string_view arg = args[i];
      if (arg == "--help" || arg == "-h") {
        return done(Action::kHelp);
      }
      if (arg == "--version") {
        return done(Action::kVersion);
      }
      if (arg == "--list-profiles") {
        return done(Action::kListProfiles);
      }
      if (!option(args, i)) {
        return refused();
      }
    }
    if (!compare_ && !first_compare_only_.empty()) {
      return refuse("option " + first_compare_only_ + " is only for --compare");
    }
    // The prefix hashing says how a prefix is placed: alone it means nothing.
    if (command_.from.prefix_hashing && !has_prefix(command_.from.prefix)) {
      return refuse("option --prefix-hashing needs --prefix P");
    }
    if (command_.to.prefix_hashing && !has_prefix(command_.to.prefix, command_.from.prefix)) {
      return refuse("option --to-prefix-hashing needs a prefix for B (--prefix or --to-prefix)");
    }
    if (!command_.from.profile) {
      return refuse("missing --profile NAME (see --list-profiles)");
    }
    if (command_.from.server_specs.empty()) {
      return refuse("missing --server SPEC (at least one server)");
    }
    return done(compare_ ? Action::kCompare : Action::kLocate);
  }

 private:
  // Reads the option at args[i] (and its value, which may be args[i + 1]).
  auto option(std::span<const std::string_view> args, std::size_t& i) -> bool {
    const std::string_view arg = args[i];
    if (!arg.starts_with("-")) {
      return fail("unexpected argument '" + std::string(arg) +
                  "' (keys are read from standard input)");
    }
    // The option's name, and its value: after '=' or in the next argument.
    std::string_view flag = arg;
    std::optional<std::string_view> value;
    if (const auto equals = arg.find('='); equals != std::string_view::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    if (flag == "--compare" || flag == "--per-key" || flag == "--fail-if-moved") {
      return switch_option(flag, value);
    }
    // A placement option of side A ("--hash") or side B ("--to-hash"), or --sample.
    const bool to_side = flag.starts_with("--to-");
    std::string_view name;
    if (to_side) {
      name = flag.substr(5);
    } else if (flag.starts_with("--")) {
      name = flag.substr(2);
    }
    const bool is_side_option =
        std::find(kSideOptions.begin(), kSideOptions.end(), name) != kSideOptions.end();
    if (!is_side_option && flag != "--sample") {
      return fail("unknown option '" + std::string(flag) + "'");
    }
    if (!value) {
      if (i + 1 == args.size() || args[i + 1].starts_with("--")) {
        return fail("option " + std::string(flag) + " needs a value");
      }
      value = args[++i];
    }
    // An empty prefix (--prefix=) is no prefix: B's way to drop A's.
    if (value->empty() && name != "prefix") {
      return fail("option " + std::string(flag) + " needs a value");
    }
    if ((to_side || flag == "--sample") && first_compare_only_.empty()) {
      first_compare_only_ = flag;
    }
    if (flag == "--sample") {
      return set_count(command_.sample, flag, *value);
    }
    return side_option(to_side ? command_.to : command_.from, name, flag, *value);
  }

  // --compare, --per-key or --fail-if-moved, which take no value.
  auto switch_option(std::string_view flag, std::optional<std::string_view> value) -> bool {
    if (value) {
      return fail("option " + std::string(flag) + " takes no value");
    }
    if (flag == "--compare") {
      compare_ = true;
      return true;
    }
    if (flag == "--per-key") {
      command_.per_key = true;
    } else {
      command_.fail_if_moved = true;
    }
    if (first_compare_only_.empty()) {
      first_compare_only_ = flag;
    }
    return true;
  }

  // Applies placement option `name` (one of kSideOptions), spelled `flag`.
  auto side_option(SideArgs& side, std::string_view name, std::string_view flag,
                   std::string_view value) -> bool {
    if (name == "profile") {
      return set_once(side.profile, std::string(value), flag);
    }
    if (name == "hash") {
      return set_once(side.hash, std::string(value), flag);
    }
    if (name == "points") {
      return set_count(side.points, flag, value);
    }
    if (name == "weighted") {
      const std::optional<bool> weighted = parse_bool(value);
      if (!weighted) {
        return fail(std::string(flag) + " needs true or false, not '" + std::string(value) + "'");
      }
      return set_once(side.weighted, *weighted, flag);
    }
    if (name == "hash-tag") {
      return set_once(side.hash_tag, std::string(value), flag);
    }
    if (name == "prefix") {
      if (std::string problem = prefix_problem(value); !problem.empty()) {
        return fail(std::string(flag) + ": " + problem);
      }
      return set_once(side.prefix, std::string(value), flag);
    }
    if (name == "prefix-hashing") {
      const std::optional<memshard::PrefixHashing> hashing = parse_prefix_hashing(value);
      if (!hashing) {
        return fail(std::string(flag) + " needs bare or prefixed, not '" + std::string(value) +
                    "'");
      }
      return set_once(side.prefix_hashing, *hashing, flag);
    }
    side.server_specs.emplace_back(value);
    return true;
  }

  auto set_count(std::optional<std::size_t>& slot, std::string_view flag, std::string_view value)
      -> bool {
    const std::optional<std::size_t> count = parse_count(value);
    if (!count) {
      return fail(std::string(flag) + " needs a positive whole number, not '" + std::string(value) +
                  "'");
    }
    return set_once(slot, *count, flag);
  }

  template <class T>
  auto set_once(std::optional<T>& slot, T value, std::string_view flag) -> bool {
    if (slot) {
      return fail(std::string(flag) + " given twice");
    }
    slot = std::move(value);
    return true;
  }

  auto fail(std::string message) -> bool {
    error_ = std::move(message);
    return false;
  }
  auto refuse(std::string message) -> ParsedCommandLine {
    fail(std::move(message));
    return refused();
  }
  auto refused() -> ParsedCommandLine { return ParsedCommandLine{{}, std::move(error_)}; }
  auto done(Action action) -> ParsedCommandLine {
    command_.action = action;
    return ParsedCommandLine{std::move(command_), {}};
  }

  CommandLine command_;
  bool compare_ = false;
  std::string first_compare_only_;  // the first option that only --compare takes
  std::string error_;
};

/// print_hashes: the "hash:" line of a profile in --list-profiles.
void print_hashes(std::ostream& out, const memshard::ProfileInfo& profile) {
  out << "    hash:   ";
  const std::string hashes = profile_hashes(profile);
  if (hashes.empty()) {
    out << "fixed (no --hash)\n";
    return;
  }
  // The hashes are "a, b (note), c": mark the default where it appears.
  bool marked = false;
  std::string_view rest = hashes;
  std::string_view separator;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    while (item.starts_with(' ')) {
      item.remove_prefix(1);
    }
    out << separator << item;
    separator = ", ";
    const std::string_view word = item.substr(0, item.find(' '));
    if (!marked && word == profile.default_hash) {
      out << " (default)";
      marked = true;
    }
  }
  if (!marked && !profile.default_hash.empty()) {
    out << "; default " << profile.default_hash;
  }
  out << '\n';
}

}  // namespace

auto parse_command_line(std::span<const std::string_view> args) -> ParsedCommandLine {
  return Parser().parse(args);
}

auto side_b(const SideArgs& a, const SideArgs& to) -> SideArgs {
  SideArgs b = to;
  if (!b.profile) {
    b.profile = a.profile;
  }
  // Hash names are per profile ("crc32" is not the same hash for twemproxy), and
  // points and weighted are not taken by every profile: they carry over only
  // within the same profile.
  if (b.profile == a.profile) {
    if (!b.hash) {
      b.hash = a.hash;
    }
    if (!b.points) {
      b.points = a.points;
    }
    if (!b.weighted) {
      b.weighted = a.weighted;
    }
    if (!b.hash_tag) {
      b.hash_tag = a.hash_tag;
    }
  }
  if (b.server_specs.empty()) {
    b.server_specs = a.server_specs;
  }
  // A key prefix belongs to the application, not to the profile.
  if (!b.prefix) {
    b.prefix = a.prefix;
  }
  if (!b.prefix_hashing) {
    b.prefix_hashing = a.prefix_hashing;
  }
  return b;
}

void print_usage(std::ostream& out) {
  out << "Usage: " << kProgram
      << " --profile NAME [--hash H] [--points K] [--weighted true|false]\n"
         "                       [--hash-tag XY] --server SPEC [--server SPEC ...]\n"
         "                       [--prefix P [--prefix-hashing bare|prefixed]]\n"
      << "       " << kProgram
      << " --compare --profile NAME [...] --server SPEC [...]\n"
         "                       [--to-profile NAME] [--to-hash H] [--to-points K]\n"
         "                       [--to-weighted true|false] [--to-hash-tag XY]\n"
         "                       [--to-prefix P] [--to-prefix-hashing bare|prefixed]\n"
         "                       [--to-server SPEC ...]\n"
         "                       [--sample N] [--per-key] [--fail-if-moved]\n"
      << "       " << kProgram << " --list-profiles | --help | --version\n"
      << "\n"
         "Reads memcached keys on standard input, one per line (a trailing CR is ignored),\n"
         "and prints one line per key:\n"
         "  key<TAB>index<TAB>host:port\n"
         "where index counts the --server options from 0, in the order given.\n"
         "\n"
         "Options:\n"
         "  --profile NAME   the client placement to reproduce (see --list-profiles)\n"
         "  --hash H         key hash instead of the profile's default; the names depend\n"
         "                   on the profile (twemproxy profiles take nutcracker.yml's):\n"
         "                   see --list-profiles\n"
         "  --points K       points per server on a ring profile (default: the profile's)\n"
         "  --weighted true|false\n"
         "                   spymemcached-ketama profiles only: whether the Java locator\n"
         "                   was given a weights map (default: true when any weight is not 1)\n"
         "  --hash-tag XY    twemproxy profiles only: the pool's hash_tag (e.g. {}): only the\n"
         "                   part of a key between X and the next Y is hashed\n"
         "  --server SPEC    host:port[:weight[:name]], once per server, in the order the\n"
         "                   clients list them; an IPv6 host goes in brackets\n"
         "                   ([fd00::1]:11211); the name is everything after the third ':'\n"
         "  --prefix P       the key prefix (namespace) the clients send in front of every\n"
         "                   key: each key is sent as P + key, and the key rules apply to\n"
         "                   that (a key over 250 bytes with P is an invalid line); keys\n"
         "                   are printed as read. No space or control character, at most\n"
         "                   249 bytes; --prefix= is no prefix\n"
         "  --prefix-hashing bare|prefixed\n"
         "                   with --prefix only: which key is placed. bare (the default):\n"
         "                   the key without P, as libmemcached's namespace and\n"
         "                   php-memcached's OPT_PREFIX_KEY; prefixed: P + key, as\n"
         "                   libmemcached's HASH_WITH_PREFIX_KEY, Dalli's namespace (P is\n"
         "                   \"namespace:\") and a prefix added to the keys by hand\n"
         "  --list-profiles  print each profile, what it reproduces, the hashes it takes\n"
         "                   (and its default) and whether it takes --points\n"
         "  --help           print this help\n"
         "  --version        print the memshard version\n"
         "Options also take the form --name=value.\n"
         "\n"
         "Comparing two placements (--compare):\n"
         "  Places every key under A (--profile, --hash, --points, --weighted, --server,\n"
         "  --prefix) and under B (the --to-* options), and prints a report: the number\n"
         "  of keys, the keys that moved (count and %), then for each server of A the keys\n"
         "  it held and the keys that left it, and for each server of B the keys it holds\n"
         "  and the keys that arrived. A key moves when its server under B is not its\n"
         "  server under A; servers are the same when host, port and name are (not the\n"
         "  position in the list, nor the weight).\n"
         "  --to-profile NAME, --to-hash H, --to-points K, --to-weighted true|false,\n"
         "  --to-hash-tag XY\n"
         "                   B's placement. B's profile defaults to A's; B's hash, points,\n"
         "                   weighted and hash tag default to A's when B's profile is A's, and to\n"
         "                   the defaults of B's profile otherwise (hash names are per\n"
         "                   profile)\n"
         "  --to-server SPEC B's servers, once per server; when none is given, B has A's\n"
         "                   servers; when any is given, B has exactly those\n"
         "  --to-prefix P, --to-prefix-hashing bare|prefixed\n"
         "                   B's key prefix and its hashing; each defaults to A's\n"
         "                   whatever the profile (--to-prefix= : B has no prefix). A\n"
         "                   key is compared when it is valid with both prefixes\n"
         "  --sample N       compare the N keys key:0, key:1, ... key:<N-1> instead of\n"
         "                   reading keys from standard input\n"
         "  --per-key        before the report, print each moved key as\n"
         "                     key<TAB>server under A<TAB>server under B\n"
         "                   a server as host:port, or host:port (name) when it has a\n"
         "                   name; a blank line follows, and the report has no TAB\n"
         "  --fail-if-moved  exit with status 3 when any key moved (for scripts: do these\n"
         "                   two configurations agree?)\n"
         "\n"
         "Exit status: 0 every key placed (with --compare: the comparison ran, whether or\n"
         "not keys moved); 1 some lines were not valid memcached keys (each reported on\n"
         "standard error with its line number, and skipped);\n"
         "2 usage, configuration or I/O error;\n"
         "3 with --fail-if-moved, some key moved (this wins over 1).\n";
}

void print_version(std::ostream& out) {
  out << kProgram << " (memshard) " << MEMSHARD_VERSION_MAJOR << '.' << MEMSHARD_VERSION_MINOR
      << '.' << MEMSHARD_VERSION_PATCH << '\n';
}

auto profile_hashes(const memshard::ProfileInfo& profile) -> std::string {
  return memshard::hash_names(profile);
}

void print_profiles(std::ostream& out) {
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    out << profile.name << '\n' << "    " << profile.summary << '\n';
    print_hashes(out, profile);
    out << "    points: " << (profile.has_points ? "yes (--points K)" : "no")
        << (profile.has_weighted ? "; weighted: yes (--weighted true|false)" : "")
        << (profile.has_hash_tag ? "; hash tag: yes (--hash-tag XY)" : "") << '\n';
  }
}

}  // namespace memshard::locate_tool
