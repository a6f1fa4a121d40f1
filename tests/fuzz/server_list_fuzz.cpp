// SPDX-License-Identifier: MIT
// libFuzzer target for server.hpp: the input is a server list for
// parse_servers. A list it refuses must be refused with ConfigError; a list it
// accepts must hold one server per spec, each spec read whole (every field
// exactly what the documented grammar gives: nothing dropped), and the list
// formatted back must parse to the same list. Run by CTest for a bounded time
// (tests/fuzz/CMakeLists.txt).

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "memshard/errors.hpp"
#include "memshard/placement/server.hpp"

namespace {

using memshard::Server;
using memshard::fuzz::check;

auto is_separator(char c) -> bool {
  return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

auto specs_of(std::string_view list) -> std::vector<std::string_view> {
  std::vector<std::string_view> specs;
  std::size_t pos = 0;
  while (pos < list.size()) {
    while (pos < list.size() && is_separator(list[pos])) {
      ++pos;
    }
    std::size_t end = pos;
    while (end < list.size() && !is_separator(list[end])) {
      ++end;
    }
    if (end > pos) {
      specs.push_back(list.substr(pos, end - pos));
    }
    pos = end;
  }
  return specs;
}

// Whether `text` is all decimal digits and means `port`.
auto means_port(std::string_view text, std::uint16_t port) -> bool {
  if (text.empty()) {
    return false;
  }
  unsigned long value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
    value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value > 65535) {
      return false;
    }
  }
  return value == port;
}

// Whether strtod reads all of `text` as `weight`.
auto means_weight(std::string_view text, double weight) -> bool {
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size() && value == weight;
}

// Reads `spec` by the documented grammar, host[:port[:weight[:name]]] with an
// IPv6 literal in brackets, and checks that `server` holds each field whole.
void check_spec(std::string_view spec, const Server& server) {
  std::string_view rest;
  if (spec.front() == '[') {
    const auto close = spec.find(']');
    check(close != std::string_view::npos);
    check(server.host == spec.substr(1, close - 1));
    rest = spec.substr(close + 1);
  } else {
    const auto colon = spec.find(':');
    check(server.host == spec.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon);
  }
  if (rest.empty()) {
    check(server.port == memshard::kDefaultPort && server.weight == 1 && server.name.empty());
    return;
  }
  check(rest.front() == ':');
  rest.remove_prefix(1);
  const auto port_end = rest.find(':');
  check(means_port(rest.substr(0, port_end), server.port));
  if (port_end == std::string_view::npos) {
    check(server.weight == 1 && server.name.empty());
    return;
  }
  rest = rest.substr(port_end + 1);
  const auto weight_end = rest.find(':');
  check(means_weight(rest.substr(0, weight_end), server.weight));
  if (weight_end == std::string_view::npos) {
    check(server.name.empty());
    return;
  }
  check(!server.name.empty() && server.name == rest.substr(weight_end + 1));
}

// The shortest spec that means `server`.
auto format(const Server& server) -> std::string {
  std::string out = server.endpoint();
  if (server.weight != 1 || !server.name.empty()) {
    char digits[64];
    const auto result = std::to_chars(digits, digits + sizeof digits, server.weight);
    check(result.ec == std::errc{});
    out.append(":").append(digits, result.ptr);
  }
  if (!server.name.empty()) {
    out.append(":").append(server.name);
  }
  return out;
}

}  // namespace

extern "C" auto LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) -> int {
  const std::string_view list(reinterpret_cast<const char*>(data), size);
  std::vector<Server> servers;
  try {
    servers = memshard::parse_servers(list);
  } catch (const memshard::ConfigError&) {
    return 0;  // refused, as it may be; any other exception escapes and is a crash
  }
  const std::vector<std::string_view> specs = specs_of(list);
  check(!servers.empty() && servers.size() == specs.size());
  std::string formatted;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    check_spec(specs[i], servers[i]);
    check(memshard::parse_server(specs[i]) == servers[i]);
    memshard::validate_server(servers[i]);
    formatted.append(i == 0 ? "" : ",").append(format(servers[i]));
  }
  check(memshard::parse_servers(formatted) == servers);
  return 0;
}
