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
// It answers where a key lives, what moves when a server is added (run it twice and
// diff), and whether two clients agree. Exit status: 0 when every key was placed; 1
// when some lines were not valid keys (each one reported on standard error with its
// line number, and skipped; the valid keys are still printed); 2 for a usage,
// configuration or I/O error (a usage or configuration error is found before any
// key is read, so nothing is printed on standard output then).

#include <unistd.h>

#include <algorithm>
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

/// kBufferSize: bytes read from standard input, and written to standard output, at once.
constexpr std::size_t kBufferSize = std::size_t{1} << 20;

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
enum class Action { kLocate, kHelp, kVersion, kListProfiles };

/// CommandLine: the parsed arguments.
struct CommandLine {
  Action action = Action::kLocate;
  std::string profile;
  memshard::ProfileOptions options;
  std::vector<std::string> server_specs;
};

/// print_usage: the --help text.
void print_usage(std::ostream& out) {
  out << "Usage: " << kProgram
      << " --profile NAME [--hash H] [--points K] --server SPEC [--server SPEC ...]\n"
      << "       " << kProgram << " --list-profiles | --help | --version\n"
      << "\n"
         "Reads memcached keys on standard input, one per line (a trailing CR is ignored),\n"
         "and prints one line per key:\n"
         "  key<TAB>index<TAB>host:port\n"
         "where index counts the --server options from 0, in the order given.\n"
         "\n"
         "Options:\n"
         "  --profile NAME   the client placement to reproduce (see --list-profiles)\n"
         "  --hash H         key hash instead of the profile's default; one of:\n"
         "                   ";
  std::string_view separator;
  for (const std::string_view hash : memshard::kHashNames) {
    out << separator << hash;
    separator = ", ";
  }
  out << "\n"
         "  --points K       points per server on a ring profile (default: the profile's)\n"
         "  --server SPEC    host:port[:weight[:name]], once per server, in the order the\n"
         "                   clients list them; an IPv6 host goes in brackets\n"
         "                   ([fd00::1]:11211); the name is everything after the third ':'\n"
         "  --list-profiles  print each profile, its default hash and what it reproduces\n"
         "  --help           print this help\n"
         "  --version        print the memshard version\n"
         "Options also take the form --name=value.\n"
         "\n"
         "Exit status: 0 every key placed; 1 some lines were not valid memcached keys\n"
         "(each reported on standard error with its line number, and skipped);\n"
         "2 usage, configuration or I/O error.\n";
}

/// print_profiles: one line per profile: name, default hash, summary, in columns.
void print_profiles(std::ostream& out) {
  std::size_t name_width = 0;
  std::size_t hash_width = 0;
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    name_width = std::max(name_width, profile.name.size());
    hash_width = std::max(hash_width, profile.default_hash.size());
  }
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    out << profile.name << std::string(name_width - profile.name.size() + 2, ' ')
        << profile.default_hash << std::string(hash_width - profile.default_hash.size() + 2, ' ')
        << profile.summary << '\n';
  }
}

/// print_version: the --version line.
void print_version(std::ostream& out) {
  out << kProgram << " (memshard) " << MEMSHARD_VERSION_MAJOR << '.' << MEMSHARD_VERSION_MINOR
      << '.' << MEMSHARD_VERSION_PATCH << '\n';
}

/// parse_points: a positive decimal number, or UsageError.
auto parse_points(std::string_view text) -> std::size_t {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value == 0) {
    throw UsageError("--points needs a positive whole number, not '" + std::string(text) + "'");
  }
  return value;
}

/// parse_command_line: the meaning of `args` (argv without the program name).
/// Throws UsageError.
auto parse_command_line(std::span<const std::string_view> args) -> CommandLine {
  CommandLine command;
  bool have_hash = false;
  bool have_points = false;
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
    const bool takes_value =
        flag == "--profile" || flag == "--hash" || flag == "--points" || flag == "--server";
    if (!takes_value) {
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
    if (flag == "--profile") {
      if (!command.profile.empty()) {
        throw UsageError("--profile given twice");
      }
      command.profile = std::string(*value);
    } else if (flag == "--hash") {
      if (have_hash) {
        throw UsageError("--hash given twice");
      }
      have_hash = true;
      command.options.hash = std::string(*value);
    } else if (flag == "--points") {
      if (have_points) {
        throw UsageError("--points given twice");
      }
      have_points = true;
      command.options.points = parse_points(*value);
    } else {
      command.server_specs.emplace_back(*value);
    }
  }
  if (command.profile.empty()) {
    throw UsageError("missing --profile NAME (see --list-profiles)");
  }
  if (command.server_specs.empty()) {
    throw UsageError("missing --server SPEC (at least one server)");
  }
  return command;
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

/// locate_keys: prints the server of every key on standard input. Returns the
/// exit status: kExitOk, or kExitInvalidKeys when a line was not a valid key.
auto locate_keys(const memshard::AnyLocator& locator, std::span<const memshard::Server> servers)
    -> int {
  // Everything printed after a key: "\t<index>\t<host:port>\n", one per server.
  std::vector<std::string> suffixes;
  suffixes.reserve(servers.size());
  for (std::size_t i = 0; i < servers.size(); ++i) {
    suffixes.push_back("\t" + std::to_string(i) + "\t" + servers[i].endpoint() + "\n");
  }
  Output output;
  LineReader reader(output);
  Line line{};
  std::size_t line_number = 0;
  int status = kExitOk;
  while (reader.next(line)) {
    ++line_number;
    if (const auto problem = key_problem(line)) {
      std::cerr << std::string(kProgram) + ": line " + std::to_string(line_number) + ": " +
                       problem->message() + "\n";
      status = kExitInvalidKeys;
      continue;
    }
    output.append(line.text);
    output.append(suffixes[locator.locate(line.text)]);
  }
  output.flush();
  return status;
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
      break;
  }
  std::vector<memshard::Server> servers;
  servers.reserve(command.server_specs.size());
  for (const std::string& spec : command.server_specs) {
    servers.push_back(memshard::parse_server(spec));
  }
  const memshard::AnyLocator locator =
      memshard::make_locator(command.profile, servers, command.options);
  return locate_keys(locator, servers);
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
