// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_PLACEMENTS_HPP_
#define MEMSHARD_BENCH_PLACEMENTS_HPP_

// placements.hpp: what the placement benchmarks (balance, resize, properties)
// share: one million deterministic keys with their hashes, and the placements
// they compare, each with the name the report prints.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bench_support.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"

namespace memshard::bench {

/// kMillionKeys: the keys each placement benchmark places.
inline constexpr std::size_t kMillionKeys = 1'000'000;

/// million_keys: those keys, built once per program.
inline auto million_keys() -> const KeySet& {
  static const KeySet keys(kMillionKeys);
  return keys;
}

/// million_key_hashes: `Hash` of each of them, computed once per program.
template <class Hash>
auto million_key_hashes() -> const std::vector<std::uint32_t>& {
  static const std::vector<std::uint32_t> hashes = hash_all<Hash>(million_keys());
  return hashes;
}

/// The placements compared: kName as reported, kRing whether it is a ring,
/// make(servers) the locator.
struct ModuloCrc32 {
  static constexpr const char* kName = "modulo-crc32";
  static constexpr bool kRing = false;
  static auto make(std::span<const Server> servers) { return profiles::modulo_crc32(servers); }
};
struct RingCrc32 {
  static constexpr const char* kName = "ring-crc32";
  static constexpr bool kRing = true;
  static auto make(std::span<const Server> servers) { return profiles::ring_crc32(servers); }
};
struct KetamaMd5Weighted {
  static constexpr const char* kName = "ketama-md5-weighted";
  static constexpr bool kRing = true;
  static auto make(std::span<const Server> servers) {
    return profiles::libmemcached_ketama_weighted(servers);
  }
};
struct KetamaMd5Fixed160 {
  static constexpr const char* kName = "ketama-md5 160 points";
  static constexpr bool kRing = true;
  static auto make(std::span<const Server> servers) {
    KetamaOptions options;  // libketama's ring: "host-i", md5 x4 points
    options.points_per_server = 160;
    options.count = PointCount::kFixed;
    return KetamaLocator<Md5>(servers, options);
  }
};

/// points_per_server: a ring's points over its servers.
template <class Locator>
auto points_per_server(const Locator& locator) -> double {
  return static_cast<double>(locator.points().size()) / static_cast<double>(locator.size());
}

}  // namespace memshard::bench

#endif  // MEMSHARD_BENCH_PLACEMENTS_HPP_
