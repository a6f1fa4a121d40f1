// SPDX-License-Identifier: MIT
// locate/locate.cpp: building a placement, and placing every key of the input.

#include "locate/locate.hpp"

#include <array>
#include <cstddef>
#include <memshard/placement/profiles.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "locate/io.hpp"

namespace memshard::locate_tool {

auto make_placement(const SideArgs& side) -> Placement {
  std::vector<memshard::Server> servers;
  servers.reserve(side.server_specs.size());
  for (const std::string& spec : side.server_specs) {
    servers.push_back(memshard::parse_server(spec));
  }
  const memshard::ProfileOptions options{side.hash.value_or(""), side.points.value_or(0),
                                         side.weighted, side.hash_tag.value_or("")};
  memshard::AnyLocator locator =
      memshard::make_locator(side.profile.value_or(""), servers, options);
  memshard::KeyPrefix prefix(side.prefix.value_or(""),
                             side.prefix_hashing.value_or(memshard::PrefixHashing::kBareKey));
  return Placement{std::move(servers), std::move(locator), std::move(prefix)};
}

auto without_library_prefix(std::string_view message) noexcept -> std::string_view {
  constexpr std::string_view kPrefix = "memshard: ";
  if (message.starts_with(kPrefix)) {
    message.remove_prefix(kPrefix.size());
  }
  return message;
}

auto locate_keys(const Placement& placement, std::istream& in, std::ostream& out,
                 std::ostream& errors) -> int {
  // Everything printed after a key: "\t<index>\t<host:port>\n", one per server.
  std::vector<std::string> suffixes;
  suffixes.reserve(placement.servers.size());
  for (std::size_t i = 0; i < placement.servers.size(); ++i) {
    suffixes.push_back("\t" + std::to_string(i) + "\t" + placement.servers[i].endpoint() + "\n");
  }
  Output output(out);
  const std::array<std::size_t, 1> prefix_size = {placement.prefix.text().size()};
  std::string sent;
  const std::size_t invalid = read_keys(in, output, errors, prefix_size, [&](std::string_view key) {
    output.append(key);
    output.append(suffixes[placement.locate(key, sent)]);
  });
  output.flush();
  return invalid == 0 ? kExitOk : kExitInvalidKeys;
}

}  // namespace memshard::locate_tool
