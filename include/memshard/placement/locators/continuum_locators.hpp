// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_LOCATORS_CONTINUUM_LOCATORS_HPP_
#define MEMSHARD_PLACEMENT_LOCATORS_CONTINUUM_LOCATORS_HPP_

// placement/locators/continuum_locators.hpp: two placements built from a continuum of boundary
// points that are neither plain modulo nor a plain ketama ring:
// - CompatContinuumLocator: Cache::Memcached::Fast's default dispatch, which
//   reproduces Cache::Memcached's weighted bucket list while allowing
//   fractional weights;
// - BucketedRingLocator: pecl memcache's "consistent" strategy, a ring looked
//   up through 1024 precomputed buckets.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/detail/throw.hpp"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/hasher.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// CompatContinuumLocator: Cache::Memcached::Fast's default ("compatible")
/// dispatch. Each server owns a stretch of [0, 2^32) proportional to its
/// weight, built in list order: adding a server of weight w, which makes the
/// total T, moves every boundary p to `(uint32)(p - p * (w / T))` and appends
/// the boundary 0xFFFFFFFF for the new server. A key's 15-bit crc h picks
/// bucket `b = h % (uint32)(T + 0.5)`, which maps to the point
/// `(uint32)(b / T * 0xFFFFFFFF + 0.5) + 1`; the first boundary at or after it
/// owns the key. For whole weights this equals Cache::Memcached's bucket list.
///
/// Complexity: construction O(N^2) (as the original; N is small); locate
/// O(key length + log N). Exception guarantee: the constructor throws
/// ConfigError for an invalid server list or a total weight of 2^32 or more,
/// or std::bad_alloc, and has no other effect; locate is noexcept.
template <Hasher Hash = LibmemcachedCrc>
class CompatContinuumLocator {
 public:
  using hasher = Hash;

  explicit CompatContinuumLocator(std::span<const Server> servers, Hash hash = {});

  /// locate: the index of the key's server, in the caller's order.
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    if (boundaries_.size() == 1) {
      return 0;
    }
    return locate_hash(hash_(key));
  }

  /// locate_hash: the server for a key whose hash is already known.
  [[nodiscard]] auto locate_hash(std::uint32_t hash) const noexcept -> std::size_t {
    return boundaries_[find_boundary(hash)].server;
  }

  /// locate_avoiding: the key's server, or, when it is marked in `avoid`, the
  /// owner of the next boundary that is not (wrapping): only the keys of
  /// avoided servers move. Answers locate(key) when every server is avoided.
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    if (boundaries_.size() == 1) {
      return 0;
    }
    const std::size_t first = find_boundary(hash_(key));
    const std::size_t primary = boundaries_[first].server;
    if (avoid.size() != boundaries_.size() || avoid[primary] == 0) {
      return primary;
    }
    for (std::size_t step = 1; step < boundaries_.size(); ++step) {
      const std::size_t server = boundaries_[(first + step) % boundaries_.size()].server;
      if (avoid[server] == 0) {
        return server;
      }
    }
    return primary;
  }

  /// size: the number of servers.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return boundaries_.size(); }

 private:
  [[nodiscard]] auto find_boundary(std::uint32_t hash) const noexcept -> std::size_t {
    const std::uint32_t bucket = hash % buckets_;
    std::uint32_t point = static_cast<std::uint32_t>(
        static_cast<double>(bucket) / total_ * static_cast<double>(kMaxPoint) + 0.5);
    point += 1;  // wraps to 0 past the top, as in the original
    std::size_t lo = 0;
    std::size_t hi = boundaries_.size();
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (boundaries_[mid].point < point) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo == boundaries_.size() ? 0 : lo;
  }

  static constexpr std::uint32_t kMaxPoint = 0xFFFFFFFFU;
  struct Boundary {
    std::uint32_t point;
    std::uint32_t server;
  };

  /// The hasher this locator hashes keys with (stateless but for RuntimeHash).
  [[no_unique_address]] Hash hash_;
  std::vector<Boundary> boundaries_;
  double total_ = 0;
  std::uint32_t buckets_ = 0;
};

template <Hasher Hash>
CompatContinuumLocator<Hash>::CompatContinuumLocator(std::span<const Server> servers, Hash hash)
    : hash_(hash) {
  validate_servers(servers);
  for (std::size_t s = 0; s < servers.size(); ++s) {
    total_ += servers[s].weight;
    const double scale = servers[s].weight / total_;
    for (Boundary& boundary : boundaries_) {
      const auto point = static_cast<double>(boundary.point);
      boundary.point = static_cast<std::uint32_t>(point - point * scale);
    }
    boundaries_.push_back({kMaxPoint, static_cast<std::uint32_t>(s)});
  }
  if (!(total_ + 0.5 < 4294967296.0)) {
    detail::throw_config_error("total weight too large (at most 2^32 buckets)",
                               std::to_string(total_));
  }
  buckets_ = static_cast<std::uint32_t>(total_ + 0.5);
  if (buckets_ == 0) {
    detail::throw_config_error("total weight rounds to zero buckets", std::to_string(total_));
  }
}

/// BucketedRingLocator: pecl memcache's "consistent" strategy. The ring holds
/// `points_per_server x weight` points "host:port-i" per server (port always
/// written), each `Hash` of its string; then 1024 buckets are fixed once:
/// bucket j belongs to the owner of the first point >= j * 4194303 (wrapping
/// to the first point). A key goes to bucket `Hash(key) % 1024`: only the low
/// ten bits of the key hash matter.
///
/// Complexity: construction O(P log P); locate O(key length).
/// Exception guarantee: the constructor throws ConfigError for an invalid
/// server list or weights that are not whole numbers below 2^32, or
/// std::bad_alloc; locate is noexcept. With more than 1024 servers some own
/// no bucket, as in pecl memcache.
template <Hasher Hash = Crc32>
class BucketedRingLocator {
 public:
  using hasher = Hash;
  static constexpr std::size_t kBuckets = 1024;
  static constexpr std::uint32_t kBucketSpan = 0xFFFFFFFFU / kBuckets;  // 4194303

  explicit BucketedRingLocator(std::span<const Server> servers, std::size_t points_per_server = 160,
                               Hash hash = {});

  /// locate: the index of the key's server, in the caller's order.
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    if (size_ == 1) {
      return 0;
    }
    return buckets_[hash_(key) % kBuckets];
  }

  /// locate_avoiding: the key's server, or, when it is marked in `avoid`, the
  /// server of the next bucket that is not (wrapping): only the keys of
  /// avoided servers move. Answers locate(key) when every server is avoided.
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    if (size_ == 1) {
      return 0;
    }
    const std::size_t bucket = hash_(key) % kBuckets;
    const std::size_t primary = buckets_[bucket];
    if (avoid.size() != size_ || avoid[primary] == 0) {
      return primary;
    }
    for (std::size_t step = 1; step < kBuckets; ++step) {
      const std::size_t server = buckets_[(bucket + step) % kBuckets];
      if (avoid[server] == 0) {
        return server;
      }
    }
    return primary;
  }

  /// size: the number of servers.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return size_; }

 private:
  /// The hasher this locator hashes keys with (stateless but for RuntimeHash).
  [[no_unique_address]] Hash hash_;
  std::size_t size_;
  std::array<std::uint32_t, kBuckets> buckets_{};
};

template <Hasher Hash>
BucketedRingLocator<Hash>::BucketedRingLocator(std::span<const Server> servers,
                                               std::size_t points_per_server, Hash hash)
    : hash_(hash), size_(servers.size()) {
  validate_servers(servers);
  std::vector<Server> unnamed(servers.begin(), servers.end());
  for (Server& server : unnamed) {
    if (server.weight != std::floor(server.weight) || server.weight > 4294967295.0) {
      detail::throw_config_error("this ring needs whole-number weights", server.endpoint());
    }
    server.name.clear();  // the point strings are always "host:port-i"
  }
  KetamaOptions options;
  options.points_per_server = points_per_server;
  options.format = PointFormat::kName;
  options.point_hash = PointHash::kKeyHash;
  options.count = PointCount::kScaledWeight;
  options.ties = TieBreak::kFirstServer;
  const KetamaLocator<Hash> ring(unnamed, options, hash_);
  for (std::size_t j = 0; j < kBuckets; ++j) {
    buckets_[j] =
        static_cast<std::uint32_t>(ring.locate_hash(static_cast<std::uint32_t>(j) * kBucketSpan));
  }
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_LOCATORS_CONTINUUM_LOCATORS_HPP_
