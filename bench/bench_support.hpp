// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_SUPPORT_HPP_
#define MEMSHARD_BENCH_SUPPORT_HPP_

// bench_support.hpp: what every memshard benchmark shares: deterministic keys,
// numbers from the environment, server lists, per-server load statistics, and
// an owning libmemcached handle configured like a memshard profile.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/placement/server.hpp"

namespace memshard::bench {

/// SplitMix64: a tiny deterministic generator (the same sequence on every
/// platform and standard library, unlike std::uniform_int_distribution).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) noexcept : state_(seed) {}

  auto next() noexcept -> std::uint64_t {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
  }

  /// below: a value in [0, bound).
  auto below(std::uint64_t bound) noexcept -> std::uint64_t { return next() % bound; }

 private:
  std::uint64_t state_;
};

/// KeySet: `count` keys of 10 to 40 bytes drawn from 64 key-safe characters,
/// each after `prefix` (none by default), stored back to back in one buffer.
/// The same seed gives the same keys after the same prefix.
class KeySet {
 public:
  static constexpr std::size_t kMinLength = 10;
  static constexpr std::size_t kMaxLength = 40;
  /// kDefaultSeed: the seed of the key set every benchmark uses by default.
  static constexpr std::uint64_t kDefaultSeed = 0x6D656D7368617264ULL;

  explicit KeySet(std::size_t count, std::uint64_t seed = kDefaultSeed,
                  std::string_view prefix = {}) {
    static constexpr std::string_view kAlphabet =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_";
    SplitMix64 random(seed);
    std::vector<std::size_t> lengths(count);
    std::size_t total = 0;
    for (std::size_t& length : lengths) {
      length = kMinLength + random.below(kMaxLength - kMinLength + 1);
      total += prefix.size() + length;
    }
    bytes_.reserve(total);
    for (std::size_t& length : lengths) {
      bytes_.append(prefix);
      for (std::size_t i = 0; i < length; ++i) {
        bytes_.push_back(kAlphabet[random.below(kAlphabet.size())]);
      }
      length += prefix.size();
    }
    views_.reserve(count);
    std::size_t offset = 0;
    for (const std::size_t length : lengths) {
      views_.emplace_back(bytes_.data() + offset, length);
      offset += length;
    }
  }

  [[nodiscard]] auto size() const noexcept -> std::size_t { return views_.size(); }
  [[nodiscard]] auto operator[](std::size_t i) const noexcept -> std::string_view {
    return views_[i];
  }
  /// views: every key, in order.
  [[nodiscard]] auto views() const noexcept -> std::span<const std::string_view> { return views_; }
  [[nodiscard]] auto begin() const noexcept { return views_.begin(); }
  [[nodiscard]] auto end() const noexcept { return views_.end(); }

 private:
  std::string bytes_;
  std::vector<std::string_view> views_;
};

/// env_count: the whole number in environment variable `name`, or `fallback`
/// when it is unset or empty. Throws std::invalid_argument for anything else or
/// a number below `minimum`.
[[nodiscard]] inline auto env_count(const char* name, std::size_t fallback, std::size_t minimum)
    -> std::size_t {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  std::size_t used = 0;
  const unsigned long long value = std::stoull(text, &used);
  if (used != std::string_view(text).size() || value < minimum) {
    throw std::invalid_argument(
        std::string(name) + " must be a whole number >= " + std::to_string(minimum) + ": " + text);
  }
  return static_cast<std::size_t>(value);
}

/// FetchResult: a caller-owned memcached_result_st, reused for every fetch on
/// one handle (libmemcached frees a result it allocated itself at the end of
/// a reply, so a reused one must be the caller's).
class FetchResult {
 public:
  explicit FetchResult(memcached_st* memc) {
    if (memcached_result_create(memc, &result_) == nullptr) {
      throw std::runtime_error("memcached_result_create failed");
    }
  }
  FetchResult(const FetchResult&) = delete;
  auto operator=(const FetchResult&) -> FetchResult& = delete;
  FetchResult(FetchResult&&) = delete;
  auto operator=(FetchResult&&) -> FetchResult& = delete;
  ~FetchResult() { memcached_result_free(&result_); }
  auto get() noexcept -> memcached_result_st* { return &result_; }

 private:
  memcached_result_st result_{};
};

/// hash_all: `Hash{}(key)` for every key.
template <class Hash>
[[nodiscard]] auto hash_all(const KeySet& keys) -> std::vector<std::uint32_t> {
  std::vector<std::uint32_t> hashes;
  hashes.reserve(keys.size());
  for (const std::string_view key : keys) {
    hashes.push_back(Hash{}(key));
  }
  return hashes;
}

/// make_servers: `count` servers "10.0.x.y:11211", for placement only: no
/// benchmark ever connects to them. The first k of make_servers(n) are
/// make_servers(k), so a list of n+1 is "one server added" to a list of n.
[[nodiscard]] inline auto make_servers(std::size_t count) -> std::vector<Server> {
  std::vector<Server> servers;
  servers.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t id = i + 1;
    servers.push_back(Server{"10.0." + std::to_string(id / 256) + "." + std::to_string(id % 256),
                             kDefaultPort,
                             1.0,
                             {}});
  }
  return servers;
}

/// LoadStats: how evenly keys spread over servers.
struct LoadStats {
  double peak_over_mean = 0;  ///< the busiest server's load / the mean load
  double min_over_mean = 0;   ///< the idlest server's load / the mean load
  double cv = 0;              ///< coefficient of variation: stddev / mean
};

/// load_stats: statistics of per-server loads (key counts or ring shares).
template <class T>
[[nodiscard]] auto load_stats(std::span<const T> loads) -> LoadStats {
  if (loads.empty()) {
    return {};
  }
  double sum = 0;
  for (const T load : loads) {
    sum += static_cast<double>(load);
  }
  const double mean = sum / static_cast<double>(loads.size());
  double squares = 0;
  for (const T load : loads) {
    const double d = static_cast<double>(load) - mean;
    squares += d * d;
  }
  const auto [low, high] = std::minmax_element(loads.begin(), loads.end());
  LoadStats stats;
  stats.peak_over_mean = static_cast<double>(*high) / mean;
  stats.min_over_mean = static_cast<double>(*low) / mean;
  stats.cv = std::sqrt(squares / static_cast<double>(loads.size())) / mean;
  return stats;
}

/// MemcachedDeleter: frees a libmemcached handle.
struct MemcachedDeleter {
  void operator()(memcached_st* memc) const noexcept { memcached_free(memc); }
};

/// MemcachedPtr: an owning libmemcached handle.
using MemcachedPtr = std::unique_ptr<memcached_st, MemcachedDeleter>;

/// check: throws std::runtime_error naming `what` unless `rc` is a success.
inline void check(memcached_return_t rc, const memcached_st* memc, std::string_view what) {
  if (!memcached_success(rc)) {
    std::string message = "memshard bench: ";
    message.append(what).append(": ").append(memcached_strerror(memc, rc));
    throw std::runtime_error(message);
  }
}

/// LibmemcachedPlacement: the libmemcached distributions the benchmarks compare with.
enum class LibmemcachedPlacement : std::uint8_t {
  kKetamaWeighted,  ///< MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (md5 keys, md5 x4 points)
  kModula,          ///< MEMCACHED_DISTRIBUTION_MODULA (one_at_a_time % N)
};

/// make_libmemcached: a handle holding `servers` (weights as given) with the
/// placement set before the servers are added, as pylibmc and PHP do.
[[nodiscard]] inline auto make_libmemcached(std::span<const Server> servers,
                                            LibmemcachedPlacement placement) -> MemcachedPtr {
  MemcachedPtr memc(memcached_create(nullptr));
  if (!memc) {
    throw std::runtime_error("memshard bench: memcached_create failed");
  }
  if (placement == LibmemcachedPlacement::kKetamaWeighted) {
    check(memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1), memc.get(),
          "KETAMA_WEIGHTED");
  } else {
    check(memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                 MEMCACHED_DISTRIBUTION_MODULA),
          memc.get(), "DISTRIBUTION_MODULA");
  }
  // memcached_server_list_append reallocates the list: free whatever it is last.
  class ListGuard {
   public:
    explicit ListGuard(memcached_server_list_st& list) noexcept : list_(list) {}
    ListGuard(const ListGuard&) = delete;
    auto operator=(const ListGuard&) -> ListGuard& = delete;
    ~ListGuard() { memcached_server_list_free(list_); }

   private:
    memcached_server_list_st& list_;
  };
  memcached_server_list_st list = nullptr;
  const ListGuard guard(list);
  for (const Server& server : servers) {
    memcached_return_t rc = MEMCACHED_SUCCESS;
    list = memcached_server_list_append_with_weight(list, server.host.c_str(), server.port,
                                                    static_cast<std::uint32_t>(server.weight), &rc);
    check(rc, memc.get(), "memcached_server_list_append " + server.endpoint());
  }
  check(memcached_server_push(memc.get(), list), memc.get(), "memcached_server_push");
  return memc;
}

/// median: the median of `values` (not empty).
[[nodiscard]] inline auto median(std::vector<double> values) -> double {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// MedianInterval: a median and its confidence interval.
struct MedianInterval {
  double median = 0;  ///< the median
  double low = 0;     ///< the interval's lower end
  double high = 0;    ///< its upper end
};

/// interleaved_rounds: `warmup` + `rounds` rounds, each calling
/// `run(index, timed)` once for every index below `count` in a fresh random
/// order (from `seed`): each one is equally often first, last, or after any
/// other, whose work may leave the machine or the servers busy or idle;
/// `timed` is false in the warm-up rounds.
template <class Run>
void interleaved_rounds(std::size_t count, std::size_t warmup, std::size_t rounds,
                        std::uint64_t seed, Run run) {
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) {
    order[i] = i;
  }
  SplitMix64 random(seed);
  for (std::size_t round = 0; round < warmup + rounds; ++round) {
    for (std::size_t i = count; i > 1; --i) {
      std::swap(order[i - 1], order[random.below(i)]);
    }
    for (const std::size_t index : order) {
      run(index, round >= warmup);
    }
  }
}

/// median_interval: the median and its distribution-free ~95% confidence
/// interval: the order statistics of ranks n/2 -+ 0.98 sqrt(n) (the normal
/// approximation of the binomial(n, 1/2) that counts values below the true
/// median).
[[nodiscard]] inline auto median_interval(std::vector<double> values) -> MedianInterval {
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  const double half_width = 0.98 * std::sqrt(n);
  const auto low_rank = static_cast<std::size_t>(std::max(1.0, std::floor(n / 2 - half_width)));
  const auto high_rank = static_cast<std::size_t>(std::min(n, std::ceil(n / 2 + 1 + half_width)));
  return {median(values), values[low_rank - 1], values[high_rank - 1]};
}

}  // namespace memshard::bench

#endif  // MEMSHARD_BENCH_SUPPORT_HPP_
