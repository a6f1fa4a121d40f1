// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_FUZZ_FUZZ_SUPPORT_HPP_
#define MEMSHARD_TESTS_FUZZ_FUZZ_SUPPORT_HPP_

// fuzz/fuzz_support.hpp: what the libFuzzer targets share: check(), which
// aborts (libFuzzer then saves the input), and fuzzed server lists and keys
// drawn from a FuzzedDataProvider.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "memshard/placement/server.hpp"

namespace memshard::fuzz {

/// check: aborts unless `condition` holds.
inline void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

/// FleetLimits: the bounds of a fuzzed fleet.
struct FleetLimits {
  std::size_t max_servers = 2000;  ///< at most this many servers
  int max_weight = 100;            ///< weights at most this
  bool whole_weights = false;      ///< weights are whole numbers (else also fractions)
  bool safe_hosts = false;         ///< hosts only of [a-z0-9.-] (what libmemcached takes as is)
  bool names = true;               ///< some servers get a name
};

/// fuzzed_text: up to `max` bytes of the input mapped to printable ASCII
/// without space (0x21..0x7e), or, with `safe`, to [a-z0-9.-].
inline auto fuzzed_text(FuzzedDataProvider& input, std::size_t max, bool safe) -> std::string {
  static constexpr char kSafe[] = "abcdefghijklmnopqrstuvwxyz0123456789.-";
  std::string text = input.ConsumeRandomLengthString(max);
  for (char& c : text) {
    const auto byte = static_cast<unsigned char>(c);
    c = safe ? kSafe[byte % (sizeof kSafe - 1)] : static_cast<char>(0x21 + byte % 94);
  }
  return text;
}

/// fuzzed_fleet: 1 to `limits.max_servers` servers (mostly at most 16), each host unique (a
/// fuzzed part after "s<i>."), ports and weights from the input. Whether
/// the list is valid for a given locator is for its constructor to say.
inline auto fuzzed_fleet(FuzzedDataProvider& input, const FleetLimits& limits)
    -> std::vector<Server> {
  // Mostly small fleets, which run fast; now and then up to the limit.
  const auto size_class = input.ConsumeIntegral<std::uint8_t>();
  const std::size_t most = size_class < 200 ? 16 : size_class < 250 ? 200 : limits.max_servers;
  const auto count =
      input.ConsumeIntegralInRange<std::size_t>(1, std::min(most, limits.max_servers));
  const auto weight_mode = input.ConsumeIntegralInRange<int>(0, limits.whole_weights ? 1 : 2);
  std::vector<Server> servers(count);
  for (std::size_t i = 0; i < count; ++i) {
    Server& server = servers[i];
    server.host = "s" + std::to_string(i);
    if (input.remaining_bytes() > 0) {
      server.host += "." + fuzzed_text(input, 12, limits.safe_hosts);
    }
    server.port = input.ConsumeBool() ? kDefaultPort : input.ConsumeIntegral<std::uint16_t>();
    if (server.port == 0) {
      server.port = kDefaultPort;
    }
    switch (weight_mode) {
      case 1:
        server.weight = input.ConsumeIntegralInRange<int>(1, limits.max_weight);
        break;
      case 2:
        server.weight = input.ConsumeIntegralInRange<int>(1, 40 * limits.max_weight) / 40.0;
        break;
      default:
        break;
    }
    if (limits.names && input.ConsumeIntegralInRange<int>(0, 3) == 0) {
      server.name = "n" + std::to_string(i) + fuzzed_text(input, 8, limits.safe_hosts);
    }
  }
  return servers;
}

/// fuzzed_keys: up to `max` keys of up to 250 bytes each, any bytes (the
/// locators take any key; key rules are the caller's).
inline auto fuzzed_keys(FuzzedDataProvider& input, std::size_t max) -> std::vector<std::string> {
  std::vector<std::string> keys;
  while (keys.size() < max && input.remaining_bytes() > 0) {
    keys.push_back(input.ConsumeRandomLengthString(250));
  }
  if (keys.empty()) {
    keys.emplace_back("key");
  }
  return keys;
}

}  // namespace memshard::fuzz

#endif  // MEMSHARD_TESTS_FUZZ_FUZZ_SUPPORT_HPP_
