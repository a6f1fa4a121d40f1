// SPDX-License-Identifier: MIT
// memshard_locate.cpp: memshard-locate, the operator's command-line tool. It reads
// memcached keys on standard input, one per line, and prints the server each key
// lives on under one of memshard's profiles:
//
//   $ printf 'user:42\nuser:43\nfeed:home\n' |
//       memshard-locate --profile libmemcached-ketama-weighted --server 10.0.0.1:11211
//                       --server 10.0.0.2:11211:2 --server '[fd00::3]:11211'
//   user:42<TAB>1<TAB>10.0.0.2:11211
//   user:43<TAB>2<TAB>[fd00::3]:11211
//   feed:home<TAB>0<TAB>10.0.0.1:11211
//
// With --compare it places every key under two configurations, A (--profile,
// --server ...) and B (--to-profile, --to-server ...), and reports how many keys
// move and between which servers: whether two clients agree, and what moves when
// a server is added:
//
//   $ memshard-locate --compare --sample 10000 --profile libmemcached-ketama-weighted
//                     --server a:11211 --server b:11211 --server c:11211
//                     --to-server a:11211 --to-server b:11211 --to-server c:11211
//                     --to-server d:11211
//
// Exit status: 0 when every key was placed (or compared); 1 when some lines were
// not valid keys (each one reported on standard error with its line number, and
// skipped; the valid keys are still printed); 2 for a usage, configuration or I/O
// error (a usage or configuration error is found before any key is read, so
// nothing is printed on standard output then); 3 with --compare --fail-if-moved
// when some key moved.

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <exception>
#include <iostream>
#include <memshard/memshard.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

constexpr std::string_view kProgram = "memshard-locate";

constexpr int kExitOk = 0;
constexpr int kExitInvalidKeys = 1;
constexpr int kExitError = 2;
constexpr int kExitMoved = 3;

/// kBufferSize: bytes read from standard input, and written to standard output, at once.
constexpr std::size_t kBufferSize = std::size_t{1} << 20;

/// kSampleKeyPrefix: --sample N compares the keys "key:0" to "key:<N-1>".
constexpr std::string_view kSampleKeyPrefix = "key:";

/// UsageError: the command line is malformed; main adds a hint to --help.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// IoError: reading standard input or writing standard output failed.
class IoError : public std::runtime_error {
 public:
  IoError(std::string_view what, int error)
      : std::runtime_error(std::string(what) + ": " + std::generic_category().message(error)) {}
};

/// Action: what the command line asks for.
enum class Action { kLocate, kCompare, kHelp, kVersion, kListProfiles };

/// SideArgs: one placement as the command line gives it: side A by --profile,
/// --hash, --points, --weighted and --server; side B of --compare by the same
/// options prefixed "--to-". Unset means not given.
struct SideArgs {
  std::optional<std::string> profile;
  std::optional<std::string> hash;
  std::optional<std::size_t> points;
  std::optional<bool> weighted;
  std::optional<std::string> hash_tag;
  std::vector<std::string> server_specs;
};

/// CommandLine: the parsed arguments.
struct CommandLine {
  Action action = Action::kLocate;
  SideArgs from;  ///< side A: --profile, --hash, --points, --weighted, --server
  SideArgs to;    ///< side B: --to-profile, --to-hash, ... (as given, before defaults)
  std::optional<std::size_t> sample;
  bool per_key = false;
  bool fail_if_moved = false;
};

/// kSideOptions: the options that describe a placement, without "--" or "--to-".
constexpr std::array<std::string_view, 6> kSideOptions = {"profile",  "hash",     "points",
                                                          "weighted", "hash-tag", "server"};

/// print_usage: the --help text.
void print_usage(std::ostream& out) {
  out << "Usage: " << kProgram
      << " --profile NAME [--hash H] [--points K] [--weighted true|false]\n"
         "                       [--hash-tag XY] --server SPEC [--server SPEC ...]\n"
      << "       " << kProgram
      << " --compare --profile NAME [...] --server SPEC [...]\n"
         "                       [--to-profile NAME] [--to-hash H] [--to-points K]\n"
         "                       [--to-weighted true|false] [--to-hash-tag XY]\n"
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
         "  --list-profiles  print each profile, what it reproduces, the hashes it takes\n"
         "                   (and its default) and whether it takes --points\n"
         "  --help           print this help\n"
         "  --version        print the memshard version\n"
         "Options also take the form --name=value.\n"
         "\n"
         "Comparing two placements (--compare):\n"
         "  Places every key under A (--profile, --hash, --points, --weighted, --server)\n"
         "  and under B (the --to-* options), and prints a report: the number of keys,\n"
         "  the keys that moved (count and %), then for each server of A the keys it held\n"
         "  and the keys that left it, and for each server of B the keys it holds and the\n"
         "  keys that arrived. A key moves when its server under B is not its server\n"
         "  under A; servers are the same when host, port and name are (not the position\n"
         "  in the list, nor the weight).\n"
         "  --to-profile NAME, --to-hash H, --to-points K, --to-weighted true|false,\n"
         "  --to-hash-tag XY\n"
         "                   B's placement. B's profile defaults to A's; B's hash, points,\n"
         "                   weighted and hash tag default to A's when B's profile is A's, and to\n"
         "                   the defaults of B's profile otherwise (hash names are per\n"
         "                   profile)\n"
         "  --to-server SPEC B's servers, once per server; when none is given, B has A's\n"
         "                   servers; when any is given, B has exactly those\n"
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

/// print_hashes: the "hash:" line of a profile in --list-profiles.
void print_hashes(std::ostream& out, const memshard::ProfileInfo& profile) {
  out << "    hash:   ";
  if (profile.hashes.empty()) {
    out << "fixed (no --hash)\n";
    return;
  }
  // `hashes` is "a, b (note), c": mark the default where it appears.
  bool marked = false;
  std::string_view rest = profile.hashes;
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

/// print_profiles: for each profile, its name on a line of its own, then,
/// indented, what it reproduces, the hashes it takes and whether it takes
/// --points (and --weighted).
void print_profiles(std::ostream& out) {
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    out << profile.name << '\n' << "    " << profile.summary << '\n';
    print_hashes(out, profile);
    out << "    points: " << (profile.has_points ? "yes (--points K)" : "no")
        << (profile.has_weighted ? "; weighted: yes (--weighted true|false)" : "")
        << (profile.has_hash_tag ? "; hash tag: yes (--hash-tag XY)" : "") << '\n';
  }
}

/// print_version: the --version line.
void print_version(std::ostream& out) {
  out << kProgram << " (memshard) " << MEMSHARD_VERSION_MAJOR << '.' << MEMSHARD_VERSION_MINOR
      << '.' << MEMSHARD_VERSION_PATCH << '\n';
}

/// parse_count: a positive decimal number for option `flag`, or UsageError.
auto parse_count(std::string_view flag, std::string_view text) -> std::size_t {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value == 0) {
    throw UsageError(std::string(flag) + " needs a positive whole number, not '" +
                     std::string(text) + "'");
  }
  return value;
}

/// parse_bool: "true" or "false" for option `flag`, or UsageError.
auto parse_bool(std::string_view flag, std::string_view text) -> bool {
  if (text == "true") {
    return true;
  }
  if (text == "false") {
    return false;
  }
  throw UsageError(std::string(flag) + " needs true or false, not '" + std::string(text) + "'");
}

/// set_once: stores `value` in `slot`, or throws UsageError if `flag` was given before.
template <class T>
void set_once(std::optional<T>& slot, T value, std::string_view flag) {
  if (slot) {
    throw UsageError(std::string(flag) + " given twice");
  }
  slot = std::move(value);
}

/// set_side_option: applies placement option `name` (one of kSideOptions),
/// spelled `flag` on the command line, to `side`.
void set_side_option(SideArgs& side, std::string_view name, std::string_view flag,
                     std::string_view value) {
  if (name == "profile") {
    set_once(side.profile, std::string(value), flag);
  } else if (name == "hash") {
    set_once(side.hash, std::string(value), flag);
  } else if (name == "points") {
    set_once(side.points, parse_count(flag, value), flag);
  } else if (name == "weighted") {
    set_once(side.weighted, parse_bool(flag, value), flag);
  } else if (name == "hash-tag") {
    set_once(side.hash_tag, std::string(value), flag);
  } else {
    side.server_specs.emplace_back(value);
  }
}

/// parse_command_line: the meaning of `args` (argv without the program name).
/// Throws UsageError.
auto parse_command_line(std::span<const std::string_view> args) -> CommandLine {
  CommandLine command;
  bool compare = false;
  std::string first_compare_only;  // the first option that only --compare takes
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      command.action = Action::kHelp;
      return command;
    }
    if (arg == "--version") {
      command.action = Action::kVersion;
      return command;
    }
    if (arg == "--list-profiles") {
      command.action = Action::kListProfiles;
      return command;
    }
    if (!arg.starts_with("-")) {
      throw UsageError("unexpected argument '" + std::string(arg) +
                       "' (keys are read from standard input)");
    }
    // The option's name, and its value: after '=' or in the next argument.
    std::string_view flag = arg;
    std::optional<std::string_view> value;
    if (const auto equals = arg.find('='); equals != std::string_view::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    const bool is_switch = flag == "--compare" || flag == "--per-key" || flag == "--fail-if-moved";
    if (is_switch) {
      if (value) {
        throw UsageError("option " + std::string(flag) + " takes no value");
      }
      if (flag == "--compare") {
        compare = true;
        continue;
      }
      if (flag == "--per-key") {
        command.per_key = true;
      } else {
        command.fail_if_moved = true;
      }
      if (first_compare_only.empty()) {
        first_compare_only = flag;
      }
      continue;
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
      throw UsageError("unknown option '" + std::string(flag) + "'");
    }
    if (!value) {
      if (i + 1 == args.size() || args[i + 1].starts_with("--")) {
        throw UsageError("option " + std::string(flag) + " needs a value");
      }
      value = args[++i];
    }
    if (value->empty()) {
      throw UsageError("option " + std::string(flag) + " needs a value");
    }
    if ((to_side || flag == "--sample") && first_compare_only.empty()) {
      first_compare_only = flag;
    }
    if (flag == "--sample") {
      set_once(command.sample, parse_count(flag, *value), flag);
    } else {
      set_side_option(to_side ? command.to : command.from, name, flag, *value);
    }
  }
  if (!compare && !first_compare_only.empty()) {
    throw UsageError("option " + first_compare_only + " is only for --compare");
  }
  if (!command.from.profile) {
    throw UsageError("missing --profile NAME (see --list-profiles)");
  }
  if (command.from.server_specs.empty()) {
    throw UsageError("missing --server SPEC (at least one server)");
  }
  command.action = compare ? Action::kCompare : Action::kLocate;
  return command;
}

/// side_b: B's placement: what the --to-* options give, the rest from A (see
/// the --help text).
auto side_b(const SideArgs& a, const SideArgs& to) -> SideArgs {
  SideArgs b = to;
  if (!b.profile) {
    b.profile = a.profile;
  }
  // Hash names are per profile ("crc32" is not the same hash for twemproxy), and
  // points and weighted are not taken by every profile: they carry over only
  // within the same profile.
  if (*b.profile == *a.profile) {
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
  return b;
}

/// Placement: a side's servers and the locator over them.
struct Placement {
  std::vector<memshard::Server> servers;
  memshard::AnyLocator locator;
};

/// make_placement: parses the side's servers and builds its locator. Throws
/// memshard::ConfigError.
auto make_placement(const SideArgs& side) -> Placement {
  std::vector<memshard::Server> servers;
  servers.reserve(side.server_specs.size());
  for (const std::string& spec : side.server_specs) {
    servers.push_back(memshard::parse_server(spec));
  }
  const memshard::ProfileOptions options{side.hash.value_or(""), side.points.value_or(0),
                                         side.weighted, side.hash_tag.value_or("")};
  memshard::AnyLocator locator = memshard::make_locator(*side.profile, servers, options);
  return Placement{std::move(servers), std::move(locator)};
}

/// write_all: writes all of `bytes` to `fd`, or throws IoError.
void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw IoError("cannot write to standard output", errno);
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

/// Output: standard output behind one large buffer, written only when full or
/// flushed.
class Output {
 public:
  Output() { buffer_.reserve(kBufferSize); }

  void append(std::string_view bytes) {
    if (buffer_.size() + bytes.size() > kBufferSize) {
      flush();
      if (bytes.size() > kBufferSize) {
        write_all(STDOUT_FILENO, bytes);
        return;
      }
    }
    buffer_.append(bytes);
  }

  void flush() {
    write_all(STDOUT_FILENO, buffer_);
    buffer_.clear();
  }

 private:
  std::string buffer_;
};

/// Line: one line of input, without its "\n" and without one "\r" before it.
struct Line {
  /// The line's bytes; for a line longer than the read buffer, only its last
  /// bytes (such a line is far too long to be a key).
  std::string_view text;
  /// The line's length in bytes.
  std::size_t length;
};

/// LineReader: the lines of standard input, read in large blocks. Memory stays
/// bounded whatever the input: of a line longer than the buffer, only the
/// length is kept. The output is flushed before each read that may block, so a
/// process that writes one key at a time and waits for each answer gets it.
class LineReader {
 public:
  explicit LineReader(Output& output) : output_(output), buffer_(kBufferSize) {}

  /// next: stores the next line in `line` and returns true, or returns false at
  /// the end of the input. `line.text` stays valid until the next call.
  auto next(Line& line) -> bool {
    for (;;) {
      const char* first = buffer_.data() + begin_;
      const std::size_t available = end_ - begin_;
      if (const void* newline = std::memchr(first, '\n', available); newline != nullptr) {
        const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - first);
        begin_ += length + 1;
        line = take({first, length});
        return true;
      }
      if (at_end_) {
        if (available == 0) {
          return false;
        }
        begin_ = end_;
        line = take({first, available});
        return true;
      }
      refill();
    }
  }

 private:
  // The line whose last bytes are `tail`.
  auto take(std::string_view tail) noexcept -> Line {
    if (tail.ends_with('\r')) {
      tail.remove_suffix(1);
    }
    const Line line{tail, discarded_ + tail.size()};
    discarded_ = 0;
    return line;
  }

  // Moves the partial line to the front and reads more after it. When the
  // partial line fills the whole buffer, its bytes are counted and dropped,
  // all but the last (which may be the "\r" of a "\r\n").
  void refill() {
    if (begin_ > 0) {
      std::copy(buffer_.begin() + static_cast<std::ptrdiff_t>(begin_),
                buffer_.begin() + static_cast<std::ptrdiff_t>(end_), buffer_.begin());
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buffer_.size()) {
      discarded_ += end_ - 1;
      buffer_.front() = buffer_[end_ - 1];
      end_ = 1;
    }
    output_.flush();
    for (;;) {
      const ssize_t count = ::read(STDIN_FILENO, buffer_.data() + end_, buffer_.size() - end_);
      if (count < 0) {
        if (errno == EINTR) {
          continue;
        }
        throw IoError("cannot read standard input", errno);
      }
      if (count == 0) {
        at_end_ = true;
      }
      end_ += static_cast<std::size_t>(count);
      return;
    }
  }

  Output& output_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;      // first byte not yet returned
  std::size_t end_ = 0;        // one past the last byte read
  std::size_t discarded_ = 0;  // bytes of the current line dropped by refill()
  bool at_end_ = false;
};

/// key_problem: what is wrong with `line` as a memcached key, if anything.
auto key_problem(const Line& line) noexcept -> std::optional<memshard::KeyError> {
  if (line.length != line.text.size()) {
    return memshard::KeyError{memshard::KeyErrc::kTooLong, line.length, 0};
  }
  return memshard::check_key(line.text);
}

/// read_keys: calls `on_key(key)` for every valid key on standard input, in
/// order, and reports each invalid line on standard error. Returns the number
/// of invalid lines.
template <class OnKey>
auto read_keys(Output& output, OnKey&& on_key) -> std::size_t {
  LineReader reader(output);
  Line line{};
  std::size_t line_number = 0;
  std::size_t invalid = 0;
  while (reader.next(line)) {
    ++line_number;
    if (const auto problem = key_problem(line)) {
      std::cerr << std::string(kProgram) + ": line " + std::to_string(line_number) + ": " +
                       problem->message() + "\n";
      ++invalid;
      continue;
    }
    on_key(line.text);
  }
  return invalid;
}

/// locate_keys: prints the server of every key on standard input. Returns the
/// exit status: kExitOk, or kExitInvalidKeys when a line was not a valid key.
auto locate_keys(const Placement& placement) -> int {
  // Everything printed after a key: "\t<index>\t<host:port>\n", one per server.
  std::vector<std::string> suffixes;
  suffixes.reserve(placement.servers.size());
  for (std::size_t i = 0; i < placement.servers.size(); ++i) {
    suffixes.push_back("\t" + std::to_string(i) + "\t" + placement.servers[i].endpoint() + "\n");
  }
  Output output;
  const std::size_t invalid = read_keys(output, [&](std::string_view key) {
    output.append(key);
    output.append(suffixes[placement.locator.locate(key)]);
  });
  output.flush();
  return invalid == 0 ? kExitOk : kExitInvalidKeys;
}

/// kNoServer: "no such server on the other side".
constexpr std::size_t kNoServer = static_cast<std::size_t>(-1);

/// same_server: whether `x` and `y` are the same server for --compare: the same
/// host, port and name. (Not the weight: a server whose weight changes is still
/// the same server.)
auto same_server(const memshard::Server& x, const memshard::Server& y) noexcept -> bool {
  return x.host == y.host && x.port == y.port && x.name == y.name;
}

/// server_label: how --compare names a server: "host:port", or "host:port (name)".
auto server_label(const memshard::Server& server) -> std::string {
  return server.name.empty() ? server.endpoint() : server.endpoint() + " (" + server.name + ")";
}

/// ServerTally: one server's keys in a comparison.
struct ServerTally {
  std::size_t keys = 0;   ///< keys on the server (under A for A's servers, B for B's)
  std::size_t moved = 0;  ///< of those, keys that left it (A) or that arrived (B)
};

/// ComparedSide: one side's servers as the report shows them.
struct ComparedSide {
  std::string_view name;  ///< "A" or "B"
  const Placement* placement;
  std::vector<std::string> labels;
  std::vector<bool> on_other_side;  ///< whether the server is on the other side too
  std::vector<ServerTally> tallies;
};

/// percent: `part` of `whole` as "12.34%" (0.00% when whole is 0).
auto percent(std::size_t part, std::size_t whole) -> std::string {
  const std::size_t hundredths = whole == 0 ? 0 : (part * 10000 + whole / 2) / whole;
  const std::string fraction = std::to_string(hundredths % 100);
  return std::to_string(hundredths / 100) + "." + (fraction.size() == 1 ? "0" : "") + fraction +
         "%";
}

auto pad_right(std::string text, std::size_t width) -> std::string {
  text.resize(std::max(width, text.size()), ' ');
  return text;
}

auto pad_left(const std::string& text, std::size_t width) -> std::string {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

/// append_description: "A: <profile and options>, N servers".
void append_description(std::string& out, const ComparedSide& side) {
  const std::size_t count = side.placement->servers.size();
  out.append(side.name)
      .append(": ")
      .append(side.placement->locator.description())
      .append(", ")
      .append(std::to_string(count))
      .append(count == 1 ? " server\n" : " servers\n");
}

/// append_table: one side's servers with their keys and moved keys, in the
/// side's order.
void append_table(std::string& out, const ComparedSide& side, std::string_view keys_heading,
                  std::string_view moved_heading, std::string_view other) {
  const std::string title = std::string(side.name) + " server";
  std::size_t label_width = title.size();
  std::size_t keys_width = keys_heading.size();
  std::size_t moved_width = moved_heading.size();
  for (std::size_t i = 0; i < side.labels.size(); ++i) {
    label_width = std::max(label_width, side.labels[i].size());
    keys_width = std::max(keys_width, std::to_string(side.tallies[i].keys).size());
    moved_width = std::max(moved_width, std::to_string(side.tallies[i].moved).size());
  }
  out.append(pad_right(title, label_width + 2))
      .append(pad_left(std::string(keys_heading), keys_width))
      .append("  ")
      .append(pad_left(std::string(moved_heading), moved_width))
      .append("\n");
  for (std::size_t i = 0; i < side.labels.size(); ++i) {
    out.append(pad_right(side.labels[i], label_width + 2))
        .append(pad_left(std::to_string(side.tallies[i].keys), keys_width))
        .append("  ")
        .append(pad_left(std::to_string(side.tallies[i].moved), moved_width));
    if (!side.on_other_side[i]) {
      out.append("  not in ").append(other);
    }
    out.append("\n");
  }
}

/// compared_side: a side of the comparison before any key.
auto compared_side(std::string_view name, const Placement& placement, const Placement& other)
    -> ComparedSide {
  ComparedSide side{name, &placement, {}, {}, {}};
  for (const memshard::Server& server : placement.servers) {
    side.labels.push_back(server_label(server));
    side.on_other_side.push_back(std::any_of(
        other.servers.begin(), other.servers.end(),
        [&server](const memshard::Server& candidate) { return same_server(server, candidate); }));
  }
  side.tallies.resize(placement.servers.size());
  return side;
}

/// compare_keys: places every key (standard input, or --sample's) under `a`
/// and `b`, prints the moved keys with --per-key, then the report. Returns the
/// exit status.
auto compare_keys(const CommandLine& command, const Placement& a, const Placement& b) -> int {
  ComparedSide from = compared_side("A", a, b);
  ComparedSide to = compared_side("B", b, a);
  // a_in_b[i]: the index in B of A's server i, or kNoServer.
  std::vector<std::size_t> a_in_b(a.servers.size(), kNoServer);
  for (std::size_t i = 0; i < a.servers.size(); ++i) {
    for (std::size_t j = 0; j < b.servers.size(); ++j) {
      if (same_server(a.servers[i], b.servers[j])) {
        a_in_b[i] = j;
      }
    }
  }
  Output output;
  std::size_t keys = 0;
  std::size_t moved = 0;
  auto compare_key = [&](std::string_view key) {
    const std::size_t i = a.locator.locate(key);
    const std::size_t j = b.locator.locate(key);
    ++keys;
    ++from.tallies[i].keys;
    ++to.tallies[j].keys;
    if (a_in_b[i] == j) {
      return;
    }
    ++moved;
    ++from.tallies[i].moved;
    ++to.tallies[j].moved;
    if (command.per_key) {
      output.append(key);
      output.append("\t");
      output.append(from.labels[i]);
      output.append("\t");
      output.append(to.labels[j]);
      output.append("\n");
    }
  };
  std::size_t invalid = 0;
  std::string source;
  if (command.sample) {
    std::string key(kSampleKeyPrefix);
    for (std::size_t n = 0; n < *command.sample; ++n) {
      key.resize(kSampleKeyPrefix.size());
      key.append(std::to_string(n));
      compare_key(key);
    }
    source = std::string(kSampleKeyPrefix) + "0";
    if (*command.sample > 1) {
      source.append(" to ").append(kSampleKeyPrefix).append(std::to_string(*command.sample - 1));
    }
  } else {
    invalid = read_keys(output, compare_key);
    source = "standard input";
    if (invalid > 0) {
      source.append("; ")
          .append(std::to_string(invalid))
          .append(invalid == 1 ? " invalid line skipped" : " invalid lines skipped");
    }
  }

  std::string report;
  if (command.per_key && moved > 0) {
    report.append("\n");
  }
  append_description(report, from);
  append_description(report, to);
  report.append("keys: ").append(std::to_string(keys)).append(" (").append(source).append(")\n");
  report.append("moved: ")
      .append(std::to_string(moved))
      .append(" (")
      .append(percent(moved, keys))
      .append(")\n\n");
  append_table(report, from, "held", "left", "B");
  report.append("\n");
  append_table(report, to, "holds", "arrived", "A");
  output.append(report);
  output.flush();
  if (command.fail_if_moved && moved > 0) {
    return kExitMoved;
  }
  return invalid == 0 ? kExitOk : kExitInvalidKeys;
}

/// without_library_prefix: a ConfigError's text without its "memshard: ", which
/// would only repeat the program's name.
auto without_library_prefix(std::string_view message) -> std::string_view {
  constexpr std::string_view kPrefix = "memshard: ";
  if (message.starts_with(kPrefix)) {
    message.remove_prefix(kPrefix.size());
  }
  return message;
}

/// run: does what the command line asks and returns the exit status. Throws
/// UsageError, memshard::ConfigError or IoError.
auto run(std::span<const std::string_view> args) -> int {
  const CommandLine command = parse_command_line(args);
  switch (command.action) {
    case Action::kHelp:
      print_usage(std::cout);
      return kExitOk;
    case Action::kVersion:
      print_version(std::cout);
      return kExitOk;
    case Action::kListProfiles:
      print_profiles(std::cout);
      return kExitOk;
    case Action::kLocate:
    case Action::kCompare:
      break;
  }
  const Placement a = make_placement(command.from);
  if (command.action == Action::kLocate) {
    return locate_keys(a);
  }
  const Placement b = [&command] {
    try {
      return make_placement(side_b(command.from, command.to));
    } catch (const memshard::ConfigError& error) {
      // Name the side: B's options are partly A's, so the value alone may not say.
      throw memshard::ConfigError("memshard: B (the --to-* side): " +
                                  std::string(without_library_prefix(error.what())));
    }
  }();
  return compare_keys(command, a, b);
}

}  // namespace

auto main(int argc, char** argv) -> int {
  std::ios::sync_with_stdio(false);
  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) {
    args.emplace_back(argv[i]);
  }
  int status = kExitError;
  try {
    status = run(args);
  } catch (const UsageError& error) {
    std::cerr << kProgram << ": " << error.what() << "\nTry '" << kProgram
              << " --help' for more information.\n";
    return kExitError;
  } catch (const memshard::ConfigError& error) {
    std::cerr << kProgram << ": " << without_library_prefix(error.what()) << '\n';
    return kExitError;
  } catch (const std::exception& error) {
    std::cerr << kProgram << ": " << error.what() << '\n';
    return kExitError;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << kProgram << ": cannot write to standard output\n";
    return kExitError;
  }
  return status;
}
