// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_SERVER_HPP_
#define MEMSHARD_PLACEMENT_SERVER_HPP_

// placement/server.hpp: a memcached server as a placement sees it, and the parser for
// the `host:port[:weight[:name]]` strings that operators write.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/detail/compiled.hpp"
#include "memshard/errors.hpp"  // ConfigError, which the functions below throw
#include "memshard/version.hpp"

// What the definitions use (the compiled mode's units see declarations only).
#if MEMSHARD_DETAIL_DEFINITIONS
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <system_error>
#include <utility>

#include "memshard/detail/throw.hpp"
#endif

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// kDefaultPort: memcached's well-known port.
inline constexpr std::uint16_t kDefaultPort = 11211;

/// Server: one memcached server. Placement hashes `host` exactly as written
/// (never resolved): "localhost" and "127.0.0.1" are different servers to every
/// ketama ring. `name`, when set, replaces "host:port" in the profiles that
/// hash a server name (twemproxy, the crc32 ring).
struct Server {
  std::string host;
  std::uint16_t port = kDefaultPort;
  double weight = 1;
  std::string name;

  /// endpoint: "host:port", with an IPv6 literal in brackets ("[::1]:11211").
  [[nodiscard]] auto endpoint() const -> std::string;

  friend auto operator==(const Server&, const Server&) -> bool = default;
};

/// validate_server: throws ConfigError unless `server` has a host without
/// spaces or control bytes, a port from 1 to 65535 and a positive, finite weight.
MEMSHARD_DETAIL_INLINE void validate_server(const Server& server);

/// validate_servers: throws ConfigError for an empty list, an invalid server,
/// or the same host:port (or the same name) listed twice.
MEMSHARD_DETAIL_INLINE void validate_servers(std::span<const Server> servers);

/// parse_server: parses `host[:port[:weight[:name]]]`.
///
/// - `host` is a name or an IPv4 literal, or an IPv6 literal in brackets
///   (`[::1]:11211`); it is kept as written, without brackets, and may hold
///   no bracket of its own.
/// - `port` defaults to 11211; `weight` (a positive number) to 1.
/// - `name` is everything after the third `:` and may itself contain `:`.
///
/// Throws ConfigError naming the problem and the whole spec.
///
/// **Example**:
///   auto s = memshard::parse_server("10.0.0.7:11212:2:cache-a");
///   // s.host == "10.0.0.7", s.port == 11212, s.weight == 2, s.name == "cache-a"
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto parse_server(std::string_view spec) -> Server;

/// parse_servers: parses a list of server specs separated by commas and/or
/// white space. Throws ConfigError for an empty list, a bad spec, or a server
/// listed twice.
[[nodiscard]] MEMSHARD_DETAIL_INLINE auto parse_servers(std::string_view list)
    -> std::vector<Server>;

// The definitions: in every unit of the header-only mode; in the compiled mode, in the library.
#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto Server::endpoint() const -> std::string {
  std::string out;
  if (host.find(':') != std::string::npos) {
    out.append("[").append(host).append("]");
  } else {
    out.append(host);
  }
  out.append(":").append(std::to_string(port));
  return out;
}

namespace detail {

[[nodiscard]] inline auto has_space_or_control(std::string_view text) noexcept -> bool {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return true;
    }
  }
  return false;
}

[[nodiscard]] inline auto parse_weight(std::string_view text, std::string_view spec) -> double {
  // std::from_chars for double is available in libstdc++ 11+.
  double weight = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, weight);
  if (text.empty() || ec != std::errc{} || ptr != end) {
    throw_config_error("server weight is not a number", spec);
  }
  if (!std::isfinite(weight) || weight <= 0) {
    throw_config_error("server weight must be a positive number", spec);
  }
  return weight;
}

[[nodiscard]] inline auto parse_port(std::string_view text, std::string_view spec)
    -> std::uint16_t {
  unsigned value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value == 0 || value > 65535) {
    throw_config_error("server port must be a number from 1 to 65535", spec);
  }
  return static_cast<std::uint16_t>(value);
}

}  // namespace detail

MEMSHARD_DETAIL_INLINE void validate_server(const Server& server) {
  if (server.host.empty()) {
    detail::throw_config_error("server has an empty host", server.endpoint());
  }
  if (detail::has_space_or_control(server.host)) {
    detail::throw_config_error("server host has a space or control byte", server.host);
  }
  if (server.port == 0) {
    detail::throw_config_error("server port must be a number from 1 to 65535", server.endpoint());
  }
  // Weights are used in float32 by the weighted rings: they must survive it.
  if (!std::isfinite(server.weight) || server.weight <= 0 ||
      server.weight > static_cast<double>(std::numeric_limits<float>::max()) ||
      static_cast<float>(server.weight) < std::numeric_limits<float>::min()) {
    detail::throw_config_error("server weight must be a positive number (float range)",
                               server.endpoint() + " weight " + std::to_string(server.weight));
  }
  if (detail::has_space_or_control(server.name)) {
    detail::throw_config_error("server name has a space or control byte", server.name);
  }
}

MEMSHARD_DETAIL_INLINE void validate_servers(std::span<const Server> servers) {
  if (servers.empty()) {
    detail::throw_config_error("server list is empty", "[]");
  }
  std::set<std::pair<std::string_view, std::uint16_t>> endpoints;
  std::set<std::string_view> names;
  for (const Server& server : servers) {
    validate_server(server);
    if (!endpoints.emplace(server.host, server.port).second) {
      detail::throw_config_error("server listed twice", server.endpoint());
    }
    if (!server.name.empty() && !names.insert(server.name).second) {
      detail::throw_config_error("server name used twice", server.name);
    }
  }
}

MEMSHARD_DETAIL_INLINE auto parse_server(std::string_view spec) -> Server {
  Server server;
  std::string_view rest;
  if (spec.starts_with('[')) {
    const auto close = spec.find(']');
    if (close == std::string_view::npos) {
      detail::throw_config_error("server IPv6 literal lacks its closing ']'", spec);
    }
    server.host = std::string(spec.substr(1, close - 1));
    rest = spec.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      detail::throw_config_error("server spec has text after ']' that is not ':port'", spec);
    }
  } else {
    const auto colon = spec.find(':');
    server.host = std::string(spec.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon);
  }
  if (server.host.empty()) {
    detail::throw_config_error("server spec has an empty host", spec);
  }
  // A bracket inside the host ("[[::1]" gives "[::1") would make endpoint()
  // a spec that reads back differently, or not at all.
  if (server.host.find_first_of("[]") != std::string::npos) {
    detail::throw_config_error("server host has a '[' or ']' of its own", spec);
  }
  if (!rest.empty()) {
    rest.remove_prefix(1);  // the ':' before the port
    const auto colon = rest.find(':');
    server.port = detail::parse_port(rest.substr(0, colon), spec);
    if (colon != std::string_view::npos) {
      rest = rest.substr(colon + 1);
      const auto name_colon = rest.find(':');
      server.weight = detail::parse_weight(rest.substr(0, name_colon), spec);
      if (name_colon != std::string_view::npos) {
        server.name = std::string(rest.substr(name_colon + 1));
        if (server.name.empty()) {
          detail::throw_config_error("server spec has an empty name after the last ':'", spec);
        }
      }
    }
  }
  if (detail::has_space_or_control(server.host) || detail::has_space_or_control(server.name)) {
    detail::throw_config_error("server spec has a space or control byte", spec);
  }
  return server;
}

MEMSHARD_DETAIL_INLINE auto parse_servers(std::string_view list) -> std::vector<Server> {
  std::vector<Server> servers;
  std::size_t pos = 0;
  auto is_separator = [](char c) {
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  while (pos < list.size()) {
    while (pos < list.size() && is_separator(list[pos])) {
      ++pos;
    }
    std::size_t end = pos;
    while (end < list.size() && !is_separator(list[end])) {
      ++end;
    }
    if (end > pos) {
      servers.push_back(parse_server(list.substr(pos, end - pos)));
    }
    pos = end;
  }
  validate_servers(servers);
  return servers;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_SERVER_HPP_
