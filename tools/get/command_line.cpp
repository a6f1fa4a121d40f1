// SPDX-License-Identifier: MIT
// get/command_line.cpp: parsing memshard-get's arguments, and its --help,
// --version and --list-codecs texts.

#include "get/command_line.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <memshard/codecs/make_codec.hpp>
#include <memshard/errors.hpp>
#include <memshard/placement/key_prefix.hpp>
#include <memshard/version.hpp>
#include <optional>
#include <system_error>
#include <utility>

#include "locate/locate.hpp"

namespace memshard::get_tool {
namespace {

/// kValueOptions: the options that take a value.
constexpr std::array<std::string_view, 9> kValueOptions = {
    "--profile", "--hash",   "--points",         "--weighted", "--hash-tag",
    "--server",  "--prefix", "--prefix-hashing", "--codec"};

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

/// config_problem: the text of a memshard::ConfigError that `check()` throws,
/// without "memshard: ", or "" when it throws none.
template <class Check>
auto config_problem(Check&& check) -> std::string {
  try {
    std::forward<Check>(check)();
  } catch (const memshard::ConfigError& error) {
    return std::string(locate_tool::without_library_prefix(error.what()));
  }
  return {};
}

/// Parser: the state of one parse; each step returns false once error_ is set.
class Parser {
 public:
  auto parse(std::span<const std::string_view> args) -> ParsedGetCommandLine {
    bool options_ended = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string_view arg = args[i];
      if (options_ended || !arg.starts_with("-")) {
        command_.keys.emplace_back(arg);
        continue;
      }
      if (arg == "--") {
        options_ended = true;
        continue;
      }
      if (arg == "--help" || arg == "-h") {
        return done(GetAction::kHelp);
      }
      if (arg == "--version") {
        return done(GetAction::kVersion);
      }
      if (arg == "--list-codecs") {
        return done(GetAction::kListCodecs);
      }
      if (!option(args, i)) {
        return refused();
      }
    }
    const locate_tool::SideArgs& placement = command_.placement;
    if (placement.prefix_hashing && placement.prefix.value_or("").empty()) {
      return refuse("option --prefix-hashing needs --prefix P");
    }
    if (!placement.profile) {
      return refuse("missing --profile NAME (see memshard-locate --list-profiles)");
    }
    if (placement.server_specs.empty()) {
      return refuse("missing --server SPEC (at least one server)");
    }
    if (std::string problem =
            config_problem([this] { (void)memshard::make_codec_from_spec(command_.codec); });
        !problem.empty()) {
      return refuse("--codec: " + problem + " (see --list-codecs)");
    }
    return done(GetAction::kGet);
  }

 private:
  // Reads the option at args[i] (and its value, which may be args[i + 1]).
  auto option(std::span<const std::string_view> args, std::size_t& i) -> bool {
    const std::string_view arg = args[i];
    std::string_view flag = arg;
    std::optional<std::string_view> value;
    if (const auto equals = arg.find('='); equals != std::string_view::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    if (flag == "--list-codecs") {
      return fail("option --list-codecs takes no value");
    }
    if (std::find(kValueOptions.begin(), kValueOptions.end(), flag) == kValueOptions.end()) {
      return fail("unknown option '" + std::string(flag) +
                  "' (a key that starts with '-' goes after --)");
    }
    if (!value) {
      if (i + 1 == args.size() || args[i + 1].starts_with("--")) {
        return fail("option " + std::string(flag) + " needs a value");
      }
      value = args[++i];
    }
    // An empty prefix (--prefix=) is no prefix, as for memshard-locate.
    if (value->empty() && flag != "--prefix") {
      return fail("option " + std::string(flag) + " needs a value");
    }
    return apply(flag, *value);
  }

  auto apply(std::string_view flag, std::string_view value) -> bool {
    locate_tool::SideArgs& side = command_.placement;
    if (flag == "--profile") {
      return set_once(side.profile, std::string(value), flag);
    }
    if (flag == "--hash") {
      return set_once(side.hash, std::string(value), flag);
    }
    if (flag == "--points") {
      const std::optional<std::size_t> points = parse_count(value);
      if (!points) {
        return fail(std::string(flag) + " needs a positive whole number, not '" +
                    std::string(value) + "'");
      }
      return set_once(side.points, *points, flag);
    }
    if (flag == "--weighted") {
      if (value != "true" && value != "false") {
        return fail(std::string(flag) + " needs true or false, not '" + std::string(value) + "'");
      }
      return set_once(side.weighted, value == "true", flag);
    }
    if (flag == "--hash-tag") {
      return set_once(side.hash_tag, std::string(value), flag);
    }
    if (flag == "--prefix") {
      if (std::string problem = config_problem([value] { memshard::KeyPrefix::validate(value); });
          !problem.empty()) {
        return fail(std::string(flag) + ": " + problem);
      }
      return set_once(side.prefix, std::string(value), flag);
    }
    if (flag == "--prefix-hashing") {
      if (value == "bare") {
        return set_once(side.prefix_hashing, memshard::PrefixHashing::kBareKey, flag);
      }
      if (value == "prefixed") {
        return set_once(side.prefix_hashing, memshard::PrefixHashing::kPrefixedKey, flag);
      }
      return fail(std::string(flag) + " needs bare or prefixed, not '" + std::string(value) + "'");
    }
    if (flag == "--codec") {
      if (codec_given_) {
        return fail("--codec given twice");
      }
      codec_given_ = true;
      command_.codec = std::string(value);
      return true;
    }
    side.server_specs.emplace_back(value);  // --server
    return true;
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
  auto refuse(std::string message) -> ParsedGetCommandLine {
    fail(std::move(message));
    return refused();
  }
  auto refused() -> ParsedGetCommandLine { return ParsedGetCommandLine{{}, std::move(error_)}; }
  auto done(GetAction action) -> ParsedGetCommandLine {
    command_.action = action;
    return ParsedGetCommandLine{std::move(command_), {}};
  }

  GetCommandLine command_;
  bool codec_given_ = false;
  std::string error_;
};

}  // namespace

auto parse_get_command_line(std::span<const std::string_view> args) -> ParsedGetCommandLine {
  return Parser().parse(args);
}

void print_usage(std::ostream& out) {
  out << "Usage: " << kProgram
      << " --profile NAME --server SPEC [--server SPEC ...] [--hash H]\n"
         "                    [--points K] [--weighted true|false] [--hash-tag XY]\n"
         "                    [--prefix P [--prefix-hashing bare|prefixed]] [--codec C]\n"
         "                    [--] [KEY ...]\n"
      << "       " << kProgram << " --list-codecs | --help | --version\n"
      << "\n"
         "Reads each KEY from its server under the profile's placement, decodes the item\n"
         "as the client that stored it would (--codec), and prints one JSON object per\n"
         "key, in order, one per line:\n"
         "  {\"key\":\"K\",\"server\":\"host:port\",\"flags\":N,\"type\":\"T\",\"value\":V}\n"
         "where T is null, bool, int, float, string, bytes, list, map or serialized.\n"
         "A miss:\n"
         "  {\"key\":\"K\",\"server\":\"host:port\",\"type\":\"miss\"}\n"
         "A key that could not be read, whose item the codec cannot decode, or that is\n"
         "not a valid memcached key:\n"
         "  {\"key\":\"K\",\"server\":\"host:port\",\"flags\":N,\"error\":\"MESSAGE\"}\n"
         "with \"flags\" only when an item was read. MESSAGE starts with what happened:\n"
         "invalid_key, connection_failure, timeout, server_ejected, ... (the client's\n"
         "status), or codec_error: <reason>: <what the codec found>.\n"
         "Without KEY arguments, the keys are read from standard input, one per line (a\n"
         "trailing CR is ignored; every line is a key, an empty one too); each answer is\n"
         "written before the next line is waited for. A line of over 1 MiB is reported\n"
         "as an invalid key with its last bytes as the key.\n"
         "\n"
         "Values (V):\n"
         "  null, bool   null, true, false\n"
         "  int          the integer\n"
         "  float        the shortest decimal that reads back as the same double (2.0\n"
         "               prints as 2, 1e21 as 1e+21, -0.0 as -0); infinities and NaN as\n"
         "               the strings \"inf\", \"-inf\" and \"nan\"\n"
         "  string       a JSON string: UTF-8 as it is; \", \\ and control characters\n"
         "               escaped (\\n, \\t, ..., \\u00XX); a string that is not valid UTF-8\n"
         "               is printed as {\"base64\":\"...\"}, as bytes are\n"
         "  bytes        {\"base64\":\"...\"} (standard base64 with padding), at the top and\n"
         "               inside lists and maps\n"
         "  list         a JSON array\n"
         "  map          a JSON object, its entries in their stored order; a string key\n"
         "               as it is, an integer key as its decimal text, any other key as\n"
         "               its compact JSON text in a string (true as \"true\", bytes as\n"
         "               \"{\\\"base64\\\":\\\"...\\\"}\"); keys may repeat\n"
         "  serialized   an object the codec recognises but does not take apart (a PHP\n"
         "               or Java object, a pickled class instance, ...): at the top,\n"
         "               \"type\":\"serialized\",\"format\":\"F\",\"base64\":\"...\" in place of\n"
         "               \"value\"; inside a list or map, {\"format\":\"F\",\"base64\":\"...\"}\n"
         "A key that is not valid UTF-8 is printed as {\"base64\":\"...\"} too.\n"
         "\n"
         "Options:\n"
         "  --profile NAME   the clients' placement (see memshard-locate --list-profiles)\n"
         "  --hash H, --points K, --weighted true|false, --hash-tag XY\n"
         "                   the placement's options, as for memshard-locate\n"
         "  --server SPEC    host:port[:weight[:name]], once per server, in the order the\n"
         "                   clients list them; an IPv6 host goes in brackets\n"
         "  --prefix P       the key prefix (namespace) the clients send in front of every\n"
         "                   key: KEY is read as P + KEY, and printed as given; --prefix=\n"
         "                   is no prefix\n"
         "  --prefix-hashing bare|prefixed\n"
         "                   with --prefix only: which key is placed, bare (the default)\n"
         "                   or P + key (see memshard-locate --help)\n"
         "  --codec C        how the items were stored: a name of --list-codecs, with\n"
         "                   settings after a colon, separated by commas:\n"
         "                   php-memcached:serializer=igbinary, dalli:serializer=JSON\n"
         "                   (default: plain, the bytes as a string, or as bytes when\n"
         "                   they are not UTF-8)\n"
         "  --list-codecs    print the codec names, one per line\n"
         "  --help           print this help\n"
         "  --version        print the memshard version\n"
         "  --               every argument after it is a KEY (for a key that starts\n"
         "                   with -)\n"
         "Options also take the form --name=value.\n"
         "\n"
         "Exit status: 0 every key read (a miss is not an error); 1 some key could not be\n"
         "read or decoded, or was not a valid key (each printed as an error line, the\n"
         "other keys still read); 2 usage, configuration or I/O error (a usage or\n"
         "configuration error is found before any key is read).\n";
}

void print_version(std::ostream& out) {
  out << kProgram << " (memshard) " << MEMSHARD_VERSION_MAJOR << '.' << MEMSHARD_VERSION_MINOR
      << '.' << MEMSHARD_VERSION_PATCH << '\n';
}

void print_codecs(std::ostream& out) {
  for (const std::string_view name : memshard::codec_names()) {
    out << name << '\n';
  }
}

}  // namespace memshard::get_tool
