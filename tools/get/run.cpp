// SPDX-License-Identifier: MIT
// get/run.cpp: memshard-get's work: a client of the placement, the codec, and
// one line per key; and its error reports.

#include "get/run.hpp"

#include <cstddef>
#include <exception>
#include <memshard/client/make_client.hpp>
#include <memshard/codecs/make_codec.hpp>
#include <memshard/errors.hpp>
#include <memshard/placement/key.hpp>
#include <memshard/placement/profiles.hpp>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "get/command_line.hpp"
#include "get/output.hpp"
#include "locate/io.hpp"
#include "locate/locate.hpp"

namespace memshard::get_tool {
namespace {

/// make_fleet_client: the client of `placement`: its servers (one per spec),
/// its profile and options, and its key prefix. Throws memshard::ConfigError.
auto make_fleet_client(const locate_tool::SideArgs& placement)
    -> memshard::ShardedClient<memshard::AnyLocator> {
  std::vector<memshard::Server> servers;
  servers.reserve(placement.server_specs.size());
  for (const std::string& spec : placement.server_specs) {
    servers.push_back(memshard::parse_server(spec));
  }
  const memshard::ProfileOptions profile_options{placement.hash.value_or(""),
                                                 placement.points.value_or(0), placement.weighted,
                                                 placement.hash_tag.value_or("")};
  memshard::ClientOptions options;
  options.key_prefix = placement.prefix.value_or("");
  options.prefix_hashing = placement.prefix_hashing.value_or(memshard::PrefixHashing::kBareKey);
  return memshard::make_client(placement.profile.value_or(""), std::move(servers), profile_options,
                               std::move(options));
}

/// Getter: the keys of one run, each read, printed and flushed at once.
class Getter {
 public:
  Getter(memshard::ShardedClient<memshard::AnyLocator>& client, const memshard::AnyCodec& codec,
         locate_tool::Output& output, std::size_t prefix_size)
      : client_(client), codec_(codec), output_(output), prefix_size_(prefix_size) {}

  /// key: reads and prints `key`. Throws locate_tool::IoError.
  void key(std::string_view key) { print(get_key(client_, codec_, key)); }

  /// line: reads and prints the key of an input line; a line too long to be
  /// kept whole is an invalid key, printed with the bytes kept.
  void line(const locate_tool::Line& line) {
    if (line.length == line.text.size()) {
      key(line.text);
      return;
    }
    const memshard::KeyError too_long{memshard::KeyErrc::kTooLong, prefix_size_ + line.length, 0};
    print({error_line(line.text, client_.server_for(line.text).endpoint(), std::nullopt,
                      "invalid_key: " + too_long.message()),
           false});
  }

  [[nodiscard]] auto failures() const noexcept -> std::size_t { return failures_; }

 private:
  void print(const KeyOutcome& outcome) {
    output_.append(outcome.line);
    output_.append("\n");
    output_.flush();
    if (!outcome.ok) {
      ++failures_;
    }
  }

  memshard::ShardedClient<memshard::AnyLocator>& client_;
  const memshard::AnyCodec& codec_;
  locate_tool::Output& output_;
  std::size_t prefix_size_;
  std::size_t failures_ = 0;
};

/// carry_out: does what `command` asks. Throws memshard::ConfigError or
/// locate_tool::IoError.
auto carry_out(const GetCommandLine& command, std::istream& in, std::ostream& out) -> int {
  switch (command.action) {
    case GetAction::kHelp:
      print_usage(out);
      return kExitOk;
    case GetAction::kVersion:
      print_version(out);
      return kExitOk;
    case GetAction::kListCodecs:
      print_codecs(out);
      return kExitOk;
    case GetAction::kGet:
      break;
  }
  const memshard::AnyCodec codec = memshard::make_codec_from_spec(command.codec);
  memshard::ShardedClient<memshard::AnyLocator> client = make_fleet_client(command.placement);
  locate_tool::Output output(out);
  Getter getter(client, codec, output, command.placement.prefix.value_or("").size());
  if (!command.keys.empty()) {
    for (const std::string& key : command.keys) {
      getter.key(key);
    }
  } else {
    locate_tool::LineReader reader(in, output);
    locate_tool::Line line{};
    while (reader.next(line)) {
      getter.line(line);
    }
  }
  output.flush();
  return getter.failures() == 0 ? kExitOk : kExitKeyErrors;
}

}  // namespace

auto get_key(memshard::ShardedClient<memshard::AnyLocator>& client, const memshard::AnyCodec& codec,
             std::string_view key) -> KeyOutcome {
  const std::string server = client.server_for(key).endpoint();
  const memshard::Result<std::optional<memshard::Item>> read = client.get(key);
  if (!read.ok()) {
    return {error_line(key, server, std::nullopt, read.status().message()), false};
  }
  const std::optional<memshard::Item>& item = read.value();
  if (!item) {
    return {miss_line(key, server), true};
  }
  const memshard::CodecResult<memshard::Value> decoded = codec.decode(item->value, item->flags);
  if (!decoded.ok()) {
    return {error_line(key, server, item->flags, codec_error_message(decoded.error())), false};
  }
  return {value_line(key, server, item->flags, decoded.value()), true};
}

auto run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
         std::ostream& errors) -> int {
  const ParsedGetCommandLine parsed = parse_get_command_line(args);
  if (!parsed.ok()) {
    errors << kProgram << ": " << parsed.error << "\nTry '" << kProgram
           << " --help' for more information.\n";
    return kExitError;
  }
  try {
    return carry_out(parsed.command, in, out);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const memshard::ConfigError& error) {
    errors << kProgram << ": " << locate_tool::without_library_prefix(error.what()) << '\n';
  } catch (const std::exception& error) {
    errors << kProgram << ": " << error.what() << '\n';
  }
  return kExitError;
}

}  // namespace memshard::get_tool
