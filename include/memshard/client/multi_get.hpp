// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_MULTI_GET_HPP_
#define MEMSHARD_CLIENT_MULTI_GET_HPP_

// client/multi_get.hpp: what both multi-get engines share: MultiGetResult
// (get_multi's answer) and BatchPlan, the routing of one multi-get that the
// client makes and the engines carry out.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ranges>
#include <string_view>
#include <vector>

#include "memshard/client/client_core.hpp"
#include "memshard/client/result.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// KeyRange: a sized range of string-like keys (std::vector<std::string>,
/// std::span<const std::string_view>, std::array<const char*, N>, ...), as
/// the multi-key calls take them.
template <class R>
concept KeyRange = std::ranges::sized_range<R> &&
    std::convertible_to<std::ranges::range_reference_t<R>, std::string_view>;

/// MultiGetResult: get_multi's answer, one entry per requested key, in order.
struct MultiGetResult {
  /// The item for each key found; empty for a miss or a failure.
  std::vector<std::optional<Item>> items;
  /// ok for a hit or a miss; otherwise why the key could not be read.
  std::vector<Status> statuses;

  /// hits: how many keys were found.
  [[nodiscard]] auto hits() const noexcept -> std::size_t {
    return static_cast<std::size_t>(std::count_if(
        items.begin(), items.end(), [](const auto& item) { return item.has_value(); }));
  }
  /// failures: how many keys could not be read.
  [[nodiscard]] auto failures() const noexcept -> std::size_t {
    return static_cast<std::size_t>(std::count_if(
        statuses.begin(), statuses.end(), [](const Status& status) { return !status.ok(); }));
  }
};

/// MultiValueResult: get_values's answer, one entry per requested key, in
/// order: MultiGetResult with every hit decoded by the call's codec.
struct MultiValueResult {
  /// The value of each key found and decoded; empty for a miss or a failure.
  std::vector<std::optional<Value>> values;
  /// ok for a hit or a miss; otherwise why the key could not be read or decoded.
  std::vector<Status> statuses;

  /// hits: how many keys were found and decoded.
  [[nodiscard]] auto hits() const noexcept -> std::size_t {
    return static_cast<std::size_t>(std::count_if(
        values.begin(), values.end(), [](const auto& value) { return value.has_value(); }));
  }
  /// failures: how many keys could not be read or decoded.
  [[nodiscard]] auto failures() const noexcept -> std::size_t {
    return static_cast<std::size_t>(std::count_if(
        statuses.begin(), statuses.end(), [](const Status& status) { return !status.ok(); }));
  }
};

namespace detail {

/// BatchPlan: the routing of one multi-get, kept by a client between calls to
/// save allocations. Every field has one meaning, whatever engine runs.
struct BatchPlan {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  // Per key (index into the request).
  std::vector<std::size_t> server_of;  ///< the key's server, or kNone (refused, answered)

  // Per server (index into the members).
  std::vector<Route> routes;          ///< the route of its request (the probe flag)
  std::vector<std::uint8_t> routed;   ///< routes[s] is set
  std::vector<std::size_t> counts;    ///< keys routed to it
  std::vector<std::uint8_t> settled;  ///< its outcome was recorded (finish)
  std::vector<std::uint8_t> wired;    ///< its own handle was sent a request in this call
  std::vector<std::size_t> used;      ///< the servers with keys, in first-key order

  // Routing scratch, per valid key.
  std::vector<std::string_view> valid_keys;  // placement keys (FleetSnapshot::placement_key)
  std::vector<std::size_t> valid_index;      ///< index in the request
  std::vector<std::size_t> primaries;        ///< its own server

  /// reset: an empty plan for `keys` keys over `servers` servers.
  void reset(std::size_t keys, std::size_t servers) {
    server_of.assign(keys, kNone);
    routes.assign(servers, Route{});
    routed.assign(servers, 0);
    counts.assign(servers, 0);
    settled.assign(servers, 0);
    wired.assign(servers, 0);
    used.clear();
    valid_keys.clear();
    valid_index.clear();
  }

  /// assign: sends key `index` to `route.server` (a route without failure);
  /// a server probed in this call keeps its probe flag.
  void assign(std::size_t index, const Route& route) {
    const std::size_t s = route.server;
    if (routed[s] == 0) {
      routes[s] = Route{s, route.probe, Status()};
      routed[s] = 1;
    } else if (route.probe) {
      routes[s].probe = true;  // this call's request is the probe
    }
    server_of[index] = s;
    if (counts[s]++ == 0) {
      used.push_back(s);
    }
  }

  /// probing: whether this call already probes server `s` (its other keys go
  /// there too).
  [[nodiscard]] auto probing(std::size_t s) const noexcept -> bool {
    return routed[s] != 0 && routes[s].probe;
  }
};

/// kMaxPolledServers: libmemcached polls at most 100 sockets at once, so a
/// multi-get that reaches more servers is read one server after another.
inline constexpr std::size_t kMaxPolledServers = 100;

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_MULTI_GET_HPP_
