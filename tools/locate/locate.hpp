// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_LOCATE_LOCATE_HPP_
#define MEMSHARD_TOOLS_LOCATE_LOCATE_HPP_

// locate/locate.hpp: memshard-locate's placements (a side's servers, the
// locator over them and its key prefix, built from its command-line options)
// and its main job: each key of the input printed with the index and
// host:port of its server.

#include <cstddef>
#include <istream>
#include <memshard/placement/key_prefix.hpp>
#include <memshard/placement/locators/any_locator.hpp>
#include <memshard/placement/server.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "locate/command_line.hpp"

namespace memshard::locate_tool {

/// Placement: a side's servers, the locator over them, and the key prefix its
/// clients send keys with (none by default).
struct Placement {
  std::vector<memshard::Server> servers;
  memshard::AnyLocator locator;
  memshard::KeyPrefix prefix = {};

  /// locate: the index of the server of application key `key` (a valid key
  /// once prefixed): the locator places the placement_key of its sent key.
  /// `buffer` holds the sent key.
  [[nodiscard]] auto locate(std::string_view key, std::string& buffer) const -> std::size_t {
    return locator.locate(prefix.placement_key(prefix.sent_key(key, buffer)));
  }
};

/// make_placement: parses the servers of `side`, builds its locator (its
/// profile must be set) and its key prefix. Throws memshard::ConfigError.
[[nodiscard]] auto make_placement(const SideArgs& side) -> Placement;

/// without_library_prefix: a memshard::ConfigError's text without its
/// "memshard: ", which would only repeat the program's name.
[[nodiscard]] auto without_library_prefix(std::string_view message) noexcept -> std::string_view;

/// locate_keys: prints to `out`, for every valid key of `in` (valid once
/// prefixed with the placement's prefix), the line "key<TAB>index<TAB>host:port"
/// (the key as read; index counts the servers from 0, in their order); each
/// invalid line is reported on `errors` and skipped. Returns the
/// exit status: kExitOk, or kExitInvalidKeys when some line was not a valid
/// key. Throws IoError.
[[nodiscard]] auto locate_keys(const Placement& placement, std::istream& in, std::ostream& out,
                               std::ostream& errors) -> int;

}  // namespace memshard::locate_tool

#endif  // MEMSHARD_TOOLS_LOCATE_LOCATE_HPP_
