// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_LOCATORS_MODULO_LOCATOR_HPP_
#define MEMSHARD_PLACEMENT_LOCATORS_MODULO_LOCATOR_HPP_

// placement/locators/modulo_locator.hpp: ModuloLocator, `hash(key) % N`.
//
// Modulo placement spreads keys evenly and costs one hash and one division, but
// adding one server to N moves about N/(N+1) of all keys: see KetamaLocator for
// the placement that survives resizing.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/detail/throw.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/hasher.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// ModuloOptions: how a ModuloLocator treats weights.
struct ModuloOptions {
  /// false: weights are ignored, `hash % N` (libmemcached MODULA, gomemcache).
  /// true: a bucket list holds each server `weight` times in list order and
  /// the key goes to `buckets[hash % buckets]` (Cache::Memcached); weights
  /// must then be whole numbers.
  bool weighted = false;
};

/// ModuloBuckets: an explicit bucket list: `servers[b]` is the index of the
/// server that owns bucket b.
struct ModuloBuckets {
  std::vector<std::uint32_t> servers;
};

/// ModuloLocator: places a key on server `Hash(key) % N` (or on a weighted
/// bucket list, see ModuloOptions). With one server it answers 0 without
/// hashing.
///
/// Complexity: construction O(N + total weight); locate O(key length).
/// Exception guarantee: the constructor throws ConfigError for an invalid
/// server list and has no other effect; everything else is noexcept.
///
/// **Example**:
///   std::vector<memshard::Server> servers = memshard::parse_servers("a:11211,b:11211");
///   memshard::ModuloLocator<memshard::Crc32> locator(servers);
///   std::size_t index = locator.locate("user:42");
template <Hasher Hash = Crc32>
class ModuloLocator {
 public:
  using hasher = Hash;

  explicit ModuloLocator(std::span<const Server> servers, ModuloOptions options = {},
                         Hash hash = {});

  /// ModuloLocator(servers, buckets): `buckets[hash % buckets.size()]`, with
  /// an explicit bucket list of server indexes (twemproxy's modula orders it by
  /// server name). Throws ConfigError for an empty list or an index out of range.
  ModuloLocator(std::span<const Server> servers, ModuloBuckets buckets, Hash hash = {});

  /// locate: the index of the key's server, in the caller's order.
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    if (size_ == 1) {
      return 0;
    }
    return locate_hash(hash_(key));
  }

  /// locate_hash: the server for a key whose hash is already known.
  [[nodiscard]] auto locate_hash(std::uint32_t hash) const noexcept -> std::size_t {
    if (buckets_.empty()) {
      return hash % size_;
    }
    return buckets_[hash % buckets_.size()];
  }

  /// locate_avoiding: the key's server, or, when that server is marked in
  /// `avoid`, live server number `hash % live` among the live servers in list
  /// order (a defined rehash that spreads the failed server's keys evenly).
  /// Answers locate(key) when every server is avoided.
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    if (size_ == 1) {
      return 0;
    }
    const std::uint32_t hash = hash_(key);
    const std::size_t primary = locate_hash(hash);
    if (avoid.size() != size_ || avoid[primary] == 0) {
      return primary;
    }
    std::size_t live = 0;
    for (const std::uint8_t flag : avoid) {
      live += flag == 0 ? 1 : 0;
    }
    if (live == 0) {
      return primary;
    }
    std::size_t pick = hash % live;
    for (std::size_t i = 0; i < size_; ++i) {
      if (avoid[i] == 0 && pick-- == 0) {
        return i;
      }
    }
    return primary;
  }

  /// size: the number of servers.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return size_; }

  /// buckets: the bucket list (empty when the locator is `hash % N`).
  [[nodiscard]] auto buckets() const noexcept -> std::span<const std::uint32_t> { return buckets_; }

 private:
  /// The hasher this locator hashes keys with (stateless but for RuntimeHash).
  [[no_unique_address]] Hash hash_;
  std::size_t size_;
  std::vector<std::uint32_t> buckets_;
};

template <Hasher Hash>
ModuloLocator<Hash>::ModuloLocator(std::span<const Server> servers, ModuloOptions options,
                                   Hash hash)
    : hash_(hash), size_(servers.size()) {
  validate_servers(servers);
  if (options.weighted) {
    for (std::size_t i = 0; i < servers.size(); ++i) {
      const double weight = servers[i].weight;
      if (weight != std::floor(weight) || weight > 1e6) {
        detail::throw_config_error("a weighted modulo list needs whole-number weights",
                                   servers[i].endpoint());
      }
      buckets_.insert(buckets_.end(), static_cast<std::size_t>(weight),
                      static_cast<std::uint32_t>(i));
    }
  }
}

template <Hasher Hash>
ModuloLocator<Hash>::ModuloLocator(std::span<const Server> servers, ModuloBuckets buckets,
                                   Hash hash)
    : hash_(hash), size_(servers.size()), buckets_(std::move(buckets.servers)) {
  validate_servers(servers);
  if (buckets_.empty()) {
    detail::throw_config_error("a modulo bucket list needs at least one bucket", "0");
  }
  for (const std::uint32_t bucket : buckets_) {
    if (bucket >= size_) {
      detail::throw_config_error("a modulo bucket names no server", std::to_string(bucket));
    }
  }
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_LOCATORS_MODULO_LOCATOR_HPP_
