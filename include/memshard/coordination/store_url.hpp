// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_STORE_URL_HPP_
#define MEMSHARD_COORDINATION_STORE_URL_HPP_

// coordination/store_url.hpp: where the coordination store is: `etcd://host:port[,host:port...]`,
// the client endpoints of one etcd cluster, which a request tries in turn. parse_store_url()
// reads it and throws ConfigError for anything else, once, where the store is configured.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/detail/throw.hpp"
#include "memshard/errors.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// kEtcdDefaultPort: etcd's client port, when an endpoint names none.
inline constexpr std::uint16_t kEtcdDefaultPort = 2379;

/// StoreEndpoint: one client endpoint of the store. `host` is a name, an IPv4 address or an
/// IPv6 address (without its brackets).
struct StoreEndpoint {
  std::string host;
  std::uint16_t port = kEtcdDefaultPort;

  /// url: the endpoint as an HTTP base URL ("http://127.0.0.1:2379", "http://[::1]:2379").
  [[nodiscard]] auto url() const -> std::string {
    const bool v6 = host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }
  /// text: "host:port" ("[::1]:2379"), for messages.
  [[nodiscard]] auto text() const -> std::string { return url().substr(7); }

  friend auto operator==(const StoreEndpoint&, const StoreEndpoint&) -> bool = default;
};

namespace detail {

[[nodiscard]] constexpr auto host_char(char c) noexcept -> bool {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

[[nodiscard]] inline auto parse_store_endpoint(std::string_view text, std::string_view url)
    -> StoreEndpoint {
  StoreEndpoint endpoint;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close == 1) {
      throw_config_error("store URL: an IPv6 endpoint is [address]:port", url);
    }
    endpoint.host = std::string(text.substr(1, close - 1));
    for (const char c : endpoint.host) {
      if (!(c == ':' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
            (c >= 'A' && c <= 'F'))) {
        throw_config_error("store URL: not an IPv6 address", url);
      }
    }
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (!rest.starts_with(':')) {
        throw_config_error("store URL: expected ':port' after an IPv6 address", url);
      }
      port_text = rest.substr(1);
      if (port_text.empty()) {
        throw_config_error("store URL: empty port", url);
      }
    }
  } else {
    const std::size_t colon = text.find(':');
    const std::string_view host = text.substr(0, colon);
    if (host.empty()) {
      throw_config_error("store URL: an endpoint without a host", url);
    }
    for (const char c : host) {
      if (!host_char(c)) {
        throw_config_error("store URL: a host may hold letters, digits, '-', '.' and '_'", url);
      }
    }
    endpoint.host = std::string(host);
    if (colon != std::string_view::npos) {
      port_text = text.substr(colon + 1);
      if (port_text.empty()) {
        throw_config_error("store URL: empty port", url);
      }
    }
  }
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto [end, error] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (error != std::errc{} || end != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      throw_config_error("store URL: a port is a number from 1 to 65535", url);
    }
    endpoint.port = static_cast<std::uint16_t>(port);
  }
  return endpoint;
}

}  // namespace detail

/// parse_store_url: the endpoints of `etcd://host:port[,host:port...]` (a port left out is
/// 2379). Throws ConfigError for another scheme, an empty list or endpoint, a path, a bad port,
/// or an endpoint named twice.
///
/// **Example**:
///   parse_store_url("etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379");  // three endpoints
[[nodiscard]] inline auto parse_store_url(std::string_view url) -> std::vector<StoreEndpoint> {
  constexpr std::string_view kScheme = "etcd://";
  if (!url.starts_with(kScheme)) {
    detail::throw_config_error("store URL: expected etcd://host:port[,host:port...]", url);
  }
  std::string_view rest = url.substr(kScheme.size());
  if (rest.empty()) {
    detail::throw_config_error("store URL: no endpoint", url);
  }
  if (rest.find_first_of("/?#@") != std::string_view::npos) {
    detail::throw_config_error("store URL: endpoints only (no path, query or user)", url);
  }
  std::vector<StoreEndpoint> endpoints;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view text = rest.substr(0, comma);
    if (text.empty()) {
      detail::throw_config_error("store URL: an empty endpoint", url);
    }
    StoreEndpoint endpoint = detail::parse_store_endpoint(text, url);
    for (const StoreEndpoint& seen : endpoints) {
      if (seen == endpoint) {
        detail::throw_config_error("store URL: an endpoint named twice", url);
      }
    }
    endpoints.push_back(std::move(endpoint));
    if (comma == std::string_view::npos) {
      break;
    }
    rest = rest.substr(comma + 1);
  }
  return endpoints;
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_STORE_URL_HPP_
