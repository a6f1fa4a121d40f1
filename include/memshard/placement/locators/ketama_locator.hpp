// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_LOCATORS_KETAMA_LOCATOR_HPP_
#define MEMSHARD_PLACEMENT_LOCATORS_KETAMA_LOCATOR_HPP_

// placement/locators/ketama_locator.hpp: KetamaLocator, consistent hashing on a ring of virtual
// points (the ketama family: libketama, libmemcached, twemproxy, spymemcached,
// Cache::Memcached::Fast, Dalli).
//
// Every server owns many points on the 2^32 ring; a key goes to the server of
// the first point at or after the key's hash, wrapping past the top to the
// first point. Adding m servers to n moves only about m/(n+m) of the keys, and
// more points per server give a more even spread. The peers differ in the
// strings they hash for points, how many points a server gets, how a digest
// becomes points and who wins a tie; KetamaOptions names each choice, and
// profiles.hpp sets them to reproduce a given client exactly.

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
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
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/sha1.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// PointFormat: the string hashed for point `i` (0-based) of a server.
enum class PointFormat : std::uint8_t {
  /// "host-i" when the port is 11211, else "host:port-i" (libmemcached, libketama).
  kLibmemcached,
  /// "/host:port-i", port always (libmemcached CONSISTENT_KETAMA_SPY).
  kSlashHostPort,
  /// "name-i", where name is the server's name or, without one, "host:port".
  kName,
  /// "name-i" for a named server, else as kLibmemcached (twemproxy, whose
  /// unnamed servers are called "host", or "host:port" off port 11211).
  kNameOrLibmemcached,
  /// "name:i", name as in kName (Ruby Dalli: "host:port:i").
  kNameColon,
  /// The bytes of host, a NUL byte, the decimal port, then the previous
  /// point's value as four little-endian bytes (0 before the first point): each
  /// point chains on the one before (Cache::Memcached::Fast's ketama, whose
  /// points are always PointHash::kCrc32).
  kHostNulPortChained,
};

/// PointHash: how point strings become ring points.
enum class PointHash : std::uint8_t {
  /// One point per string: the locator's Hash of the string.
  kKeyHash,
  /// Four points per string: the four little-endian words of its MD5 digest.
  kMd5x4,
  /// One point per string: the first four bytes of its SHA-1 digest,
  /// big-endian (Dalli).
  kSha1,
  /// One point per string: its full IEEE CRC-32 (Cache::Memcached::Fast).
  kCrc32,
};

/// PointCount: how many points each server gets.
enum class PointCount : std::uint8_t {
  /// `points_per_server` for every server; weights are ignored.
  kFixed,
  /// libketama's float32 weighting, see weighted_point_count().
  kWeightedFloat32,
  /// `floor(N * points_per_server * w / W)` (Dalli).
  kWeightedShare,
  /// `(int)(points_per_server * w + 0.5)`: the weight scales the base count
  /// and may be fractional (Cache::Memcached::Fast).
  kScaledWeight,
};

/// TieBreak: which server owns a ring position that several servers hash to.
enum class TieBreak : std::uint8_t {
  kFirstServer,  ///< the server listed first (libmemcached, sorted by (value, index))
  kLastServer,   ///< the server listed last (spymemcached's TreeMap overwrite)
  /// the server whose name sorts first by (length, bytes), the name being the
  /// point-string prefix (twemproxy sorts its servers so).
  kNameOrder,
};

/// RingSearch: which point of the ring a key hash selects.
enum class RingSearch : std::uint8_t {
  /// The first point >= hash, wrapping to the first point (ketama).
  kFirstAtOrAfter,
  /// The last point <= hash, wrapping to the last point (Dalli).
  kLastAtOrBefore,
};

/// KetamaOptions: the shape of a ring. The defaults build the classic libketama
/// ring (libmemcached KETAMA_WEIGHTED) when paired with `KetamaLocator<Md5>`.
struct KetamaOptions {
  /// Points per server (kFixed), or the per-server base of the weighted formula.
  /// With kMd5x4 it must be a multiple of 4.
  std::size_t points_per_server = 160;
  PointFormat format = PointFormat::kLibmemcached;
  PointHash point_hash = PointHash::kMd5x4;
  PointCount count = PointCount::kWeightedFloat32;
  TieBreak ties = TieBreak::kFirstServer;
  RingSearch search = RingSearch::kFirstAtOrAfter;
};

/// RingPoint: one virtual point: its position and the index of its server.
struct RingPoint {
  std::uint32_t value;
  std::uint32_t server;

  friend constexpr auto operator==(const RingPoint&, const RingPoint&) -> bool = default;
};

/// weighted_point_count: libketama's point count for a server of `weight` out
/// of `total_weight` among `servers` servers:
/// `4 * floor(f32(f32(f32(f32(w / W) * base) / 4) * N) + 1e-10)`, every step in
/// IEEE float32 exactly as libmemcached, twemproxy and libketama compute it.
/// For equal weights and base 160 it gives 160, except for some N (25, 47, 50,
/// 55, 61, 71, 94, 100, ...) where float32 rounding gives 156.
[[nodiscard]] inline auto weighted_point_count(double weight, double total_weight,
                                               std::size_t servers, std::size_t base) noexcept
    -> std::size_t {
  constexpr auto kFloatMax = static_cast<double>(std::numeric_limits<float>::max());
  if (!(weight > 0) || !(total_weight > 0) || weight > kFloatMax || total_weight > kFloatMax) {
    return 0;  // outside what the float32 formula can express
  }
  const float pct = static_cast<float>(weight) / static_cast<float>(total_weight);
  const float per_server = pct * static_cast<float>(base);
  const float quarter = per_server / 4.0F;
  // volatile: the product must be rounded to float32 before the addition, as
  // in the peers; a fused multiply-add would change some counts.
  const volatile float scaled = quarter * static_cast<float>(servers);
  const float biased = scaled + 1e-10F;
  if (!(biased >= 0) || !std::isfinite(biased)) {
    return 0;  // not a usable share (a total weight float32 cannot hold)
  }
  if (!(biased < 0x1p58F)) {
    return std::numeric_limits<std::size_t>::max();  // beyond any ring: refused by the caller
  }
  return static_cast<std::size_t>(std::floor(static_cast<double>(biased))) * 4;
}

/// KetamaLocator: a sorted ring of virtual points, searched with a prefix table
/// and a binary search, wrapping to the first point.
///
/// `Hash` hashes keys and, with PointHash::kKeyHash, point strings. The answer is
/// the index of the server in the list given to the constructor.
///
/// Complexity: construction O(P log P) for P points in all; locate costs one key
/// hash plus a search over the few points that share the hash's top bits.
/// Memory: 8 bytes per point plus a table of at most 2^20 + 1 words.
/// Exception guarantee: the constructor throws ConfigError (bad server list or
/// options) or std::bad_alloc and has no other effect; locate is noexcept and
/// allocates nothing. Immutable, so safe to share between threads.
///
/// **Example**:
///   auto servers = memshard::parse_servers("10.0.0.1:11211,10.0.0.2:11211");
///   memshard::KetamaLocator<memshard::Md5> ring(servers);   // libketama ring
///   std::size_t index = ring.locate("user:42");
template <Hasher Hash = Md5>
class KetamaLocator {
 public:
  using hasher = Hash;

  /// kMaxPointsPerServer: the most points one server may own (weights that
  /// ask for more are refused rather than exhausting memory).
  static constexpr std::size_t kMaxPointsPerServer = std::size_t{1} << 24U;

  explicit KetamaLocator(std::span<const Server> servers, KetamaOptions options = {},
                         Hash hash = {});

  /// locate: the index of the key's server, in the caller's order. With one
  /// server it answers 0 without hashing, as libmemcached does.
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    if (size_ == 1) {
      return 0;
    }
    return locate_hash(hash_(key));
  }

  /// locate_many: locate() of every key, out[i] for keys[i] (out.size() >=
  /// keys.size()). With a hasher that hashes several keys at once
  /// (Md5::hash_many), faster than one locate() per key.
  void locate_many(std::span<const std::string_view> keys,
                   std::span<std::size_t> out) const noexcept {
    if (size_ == 1) {
      std::fill_n(out.begin(), keys.size(), std::size_t{0});
      return;
    }
    if constexpr (requires(std::span<const std::string_view> k, std::span<std::uint32_t> h) {
                    Hash::hash_many(k, h);
                  }) {
      constexpr std::size_t kChunk = 64;
      std::array<std::uint32_t, kChunk> hashes{};
      for (std::size_t first = 0; first < keys.size(); first += kChunk) {
        const std::size_t count = std::min(kChunk, keys.size() - first);
        Hash::hash_many(keys.subspan(first, count), hashes);
        for (std::size_t i = 0; i < count; ++i) {
          out[first + i] = locate_hash(hashes[i]);
        }
      }
    } else {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        out[i] = locate_hash(hash_(keys[i]));
      }
    }
  }

  /// locate_hash: the server owning the first point >= `hash`, wrapping to the
  /// first point (for RingSearch::kLastAtOrBefore: the last point <= `hash`,
  /// wrapping to the last point).
  [[nodiscard]] auto locate_hash(std::uint32_t hash) const noexcept -> std::size_t {
    return find_point(hash ^ flip_)->server;
  }

  /// locate_avoiding: the key's server, or, when that server is marked in
  /// `avoid`, the server of the next point in search order that is not (the
  /// ketama failover: only the failed server's keys move, each to its ring
  /// successor). A server without points (a weight too small for the count)
  /// is never a target. Answers locate(key) when no server that owns points
  /// is left.
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    if (size_ == 1) {
      return 0;
    }
    const RingPoint* point = find_point(hash_(key) ^ flip_);
    const std::size_t primary = point->server;
    if (avoid.size() != size_ || avoid[primary] == 0) {
      return primary;
    }
    const RingPoint* const begin = points_.data();
    const RingPoint* const end = points_.data() + (points_.size() - 1);  // the sentinel
    if (point == end) {
      point = begin;
    }
    for (std::size_t step = 0; step + 1 < points_.size(); ++step) {
      if (avoid[point->server] == 0) {
        return point->server;
      }
      if (++point == end) {
        point = begin;
      }
    }
    return primary;
  }

  /// size: the number of servers.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return size_; }

  /// points: the ring in search order, one point per position (ties resolved).
  /// With RingSearch::kLastAtOrBefore the ring is kept mirrored: each stored
  /// value is the bitwise complement of the point's position, so the order
  /// runs from the highest position down.
  [[nodiscard]] auto points() const noexcept -> std::span<const RingPoint> {
    return {points_.data(), points_.size() - 1};
  }

  /// options: the options the ring was built with.
  [[nodiscard]] auto options() const noexcept -> const KetamaOptions& { return options_; }

  /// point_string: the string hashed for point `index` of `server`.
  [[nodiscard]] static auto point_string(const Server& server, std::size_t index,
                                         PointFormat format) -> std::string;

  /// point_count: how many points `server` (one of `servers`) gets.
  [[nodiscard]] static auto point_count(std::span<const Server> servers, std::size_t server,
                                        const KetamaOptions& options) -> std::size_t;

 private:
  // The first point >= hash, or the sentinel after the last point (which
  // repeats point 0's server).
  [[nodiscard]] auto find_point(std::uint32_t hash) const noexcept -> const RingPoint* {
    const std::uint32_t prefix = hash >> shift_;
    const RingPoint* first = points_.data() + table_[prefix];
    const RingPoint* last = points_.data() + table_[prefix + 1];
    // Within a bucket: the first point >= hash, or `last` (the next bucket's
    // first point, or the sentinel).
    std::size_t count = static_cast<std::size_t>(last - first);
    while (count > 0) {
      const std::size_t half = count / 2;
      if (first[half].value < hash) {
        first += half + 1;
        count -= half + 1;
      } else {
        count = half;
      }
    }
    return first;
  }

  static void append_number(std::string& out, std::size_t value);

  static void append_point_prefix(std::string& out, const Server& server, PointFormat format);

  static void append_le32(std::string& out, std::uint32_t value);

  [[nodiscard]] static auto count_points(double weight, double total_weight, std::size_t servers,
                                         const KetamaOptions& options) -> std::size_t;

  void build_ring(std::span<const Server> servers);

  // table_[p] is the index of the first point whose top `bits` bits are >= p,
  // so the points of prefix p are [table_[p], table_[p + 1]).
  void build_table();

  /// The hasher this locator hashes keys with (stateless but for RuntimeHash).
  [[no_unique_address]] Hash hash_;
  std::size_t size_;
  KetamaOptions options_;
  std::vector<RingPoint> points_;  // sorted, unique values, then one sentinel
  std::vector<std::uint32_t> table_;
  unsigned shift_ = 32;
  std::uint32_t flip_ = 0;  // complements hashes and points for kLastAtOrBefore
};

template <Hasher Hash>
KetamaLocator<Hash>::KetamaLocator(std::span<const Server> servers, KetamaOptions options,
                                   Hash hash)
    : hash_(hash), size_(servers.size()), options_(options) {
  validate_servers(servers);
  if (servers.size() > std::numeric_limits<std::uint32_t>::max() / 2) {
    detail::throw_config_error("too many servers", std::to_string(servers.size()));
  }
  if (options.points_per_server == 0) {
    detail::throw_config_error("points per server must be at least 1", "0");
  }
  if (options.points_per_server > kMaxPointsPerServer) {
    detail::throw_config_error("points per server too large",
                               std::to_string(options.points_per_server));
  }
  if (options.point_hash == PointHash::kMd5x4 &&
      (options.count == PointCount::kWeightedShare || options.count == PointCount::kScaledWeight)) {
    detail::throw_config_error(
        "md5 x4 points need a point count that is a multiple of 4 (fixed or float32 weighted)",
        "kMd5x4");
  }
  if ((options.format == PointFormat::kHostNulPortChained) !=
      (options.point_hash == PointHash::kCrc32)) {
    detail::throw_config_error(
        "chained host/port point strings go with CRC-32 points, and only with them",
        "kHostNulPortChained");
  }
  if (options.point_hash == PointHash::kMd5x4 && options.points_per_server % 4 != 0) {
    detail::throw_config_error("points per server must be a multiple of 4 with md5 x4 points",
                               std::to_string(options.points_per_server));
  }
  build_ring(servers);
}

template <Hasher Hash>
auto KetamaLocator<Hash>::point_string(const Server& server, std::size_t index, PointFormat format)
    -> std::string {
  std::string out;
  append_point_prefix(out, server, format);
  if (format == PointFormat::kHostNulPortChained) {
    const std::size_t prefix_size = out.size();
    std::uint32_t previous = 0;
    for (std::size_t i = 0; i < index; ++i) {
      append_le32(out, previous);
      previous = Crc32{}(out);
      out.resize(prefix_size);
    }
    append_le32(out, previous);
    return out;
  }
  append_number(out, index);
  return out;
}

template <Hasher Hash>
auto KetamaLocator<Hash>::point_count(std::span<const Server> servers, std::size_t server,
                                      const KetamaOptions& options) -> std::size_t {
  double total = 0;
  for (const Server& s : servers) {
    total += s.weight;
  }
  return count_points(servers[server].weight, total, servers.size(), options);
}

template <Hasher Hash>
void KetamaLocator<Hash>::append_number(std::string& out, std::size_t value) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  // A length, not an end pointer: g++ 12 at -O2 warns falsely (-Wstringop-overflow) on
  // append(first, last) inlined into some callers.
  out.append(digits, static_cast<std::size_t>(result.ptr - digits));
}

template <Hasher Hash>
void KetamaLocator<Hash>::append_point_prefix(std::string& out, const Server& server,
                                              PointFormat format) {
  switch (format) {
    case PointFormat::kLibmemcached:
      out.append(server.host);
      if (server.port != kDefaultPort) {
        out.push_back(':');
        append_number(out, server.port);
      }
      break;
    case PointFormat::kSlashHostPort:
      out.push_back('/');
      out.append(server.host);
      out.push_back(':');
      append_number(out, server.port);
      break;
    case PointFormat::kName:
    case PointFormat::kNameColon:
      if (server.name.empty()) {
        out.append(server.host);
        out.push_back(':');
        append_number(out, server.port);
      } else {
        out.append(server.name);
      }
      break;
    case PointFormat::kNameOrLibmemcached:
      if (server.name.empty()) {
        append_point_prefix(out, server, PointFormat::kLibmemcached);
        return;
      }
      out.append(server.name);
      break;
    case PointFormat::kHostNulPortChained:
      out.append(server.host);
      out.push_back('\0');
      append_number(out, server.port);
      return;  // no separator
  }
  out.push_back(format == PointFormat::kNameColon ? ':' : '-');
}

template <Hasher Hash>
void KetamaLocator<Hash>::append_le32(std::string& out, std::uint32_t value) {
  for (unsigned shift = 0; shift < 32; shift += 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xFFU));
  }
}

template <Hasher Hash>
auto KetamaLocator<Hash>::count_points(double weight, double total_weight, std::size_t servers,
                                       const KetamaOptions& options) -> std::size_t {
  const auto base = static_cast<double>(options.points_per_server);
  double wanted = 0;
  switch (options.count) {
    case PointCount::kFixed:
      return options.points_per_server;
    case PointCount::kWeightedFloat32:
      return weighted_point_count(weight, total_weight, servers, options.points_per_server);
    case PointCount::kWeightedShare:
      wanted = std::floor(static_cast<double>(servers) * base * weight / total_weight);
      break;
    case PointCount::kScaledWeight:
      wanted = std::floor(base * weight + 0.5);
      break;
  }
  // Beyond kMaxPointsPerServer (or not a number): one more than allowed, refused by the caller.
  if (!(wanted <= static_cast<double>(kMaxPointsPerServer))) {
    return kMaxPointsPerServer + 1;
  }
  return wanted > 0 ? static_cast<std::size_t>(wanted) : 0;
}

template <Hasher Hash>
void KetamaLocator<Hash>::build_ring(std::span<const Server> servers) {
  double total_weight = 0;
  for (const Server& server : servers) {
    total_weight += server.weight;
  }
  if (total_weight > static_cast<double>(std::numeric_limits<float>::max())) {
    detail::throw_config_error("total weight exceeds the float32 range of the weighted ring",
                               std::to_string(total_weight));
  }
  // Two servers with the same point strings would share every point, and the
  // tie rule would leave one of them without keys: refused.
  {
    std::vector<std::string> prefixes(servers.size());
    for (std::size_t s = 0; s < servers.size(); ++s) {
      append_point_prefix(prefixes[s], servers[s], options_.format);
    }
    std::sort(prefixes.begin(), prefixes.end());
    const auto same = std::adjacent_find(prefixes.begin(), prefixes.end());
    if (same != prefixes.end()) {
      detail::throw_config_error("two servers have the same point strings (same name?)",
                                 same->substr(0, same->size() - 1));
    }
  }
  flip_ = options_.search == RingSearch::kLastAtOrBefore ? 0xFFFFFFFFU : 0U;
  const std::size_t per_hash = options_.point_hash == PointHash::kMd5x4 ? 4 : 1;
  const bool chained = options_.format == PointFormat::kHostNulPortChained;
  std::string text;
  for (std::size_t s = 0; s < servers.size(); ++s) {
    const std::size_t count =
        count_points(servers[s].weight, total_weight, servers.size(), options_);
    if (count > kMaxPointsPerServer) {
      detail::throw_config_error("too many points for one server (weight too large)",
                                 servers[s].endpoint());
    }
    if (points_.size() + count > std::numeric_limits<std::uint32_t>::max() - 1) {
      detail::throw_config_error("too many points in the ring", std::to_string(count));
    }
    const auto server = static_cast<std::uint32_t>(s);
    text.clear();
    append_point_prefix(text, servers[s], options_.format);
    const std::size_t prefix_size = text.size();
    std::uint32_t previous = 0;  // the last point, for chained point strings
    for (std::size_t i = 0; i < count / per_hash; ++i) {
      text.resize(prefix_size);
      if (chained) {
        append_le32(text, previous);
      } else {
        append_number(text, i);
      }
      switch (options_.point_hash) {
        case PointHash::kMd5x4:
          for (const std::uint32_t word : Md5::words(text)) {
            points_.push_back({word ^ flip_, server});
          }
          break;
        case PointHash::kKeyHash:
          points_.push_back({hash_(text) ^ flip_, server});
          break;
        case PointHash::kSha1:
          points_.push_back({Sha1{}(text) ^ flip_, server});
          break;
        case PointHash::kCrc32:
          points_.push_back({Crc32{}(text) ^ flip_, server});
          break;
      }
      previous = points_.back().value ^ flip_;
    }
  }
  if (points_.empty()) {
    detail::throw_config_error("the ring has no points (weights too small for the base count)",
                               std::to_string(options_.points_per_server));
  }
  // rank[s]: the tie priority of server s, lowest wins.
  std::vector<std::uint32_t> rank(servers.size());
  for (std::size_t s = 0; s < servers.size(); ++s) {
    rank[s] = static_cast<std::uint32_t>(
        options_.ties == TieBreak::kLastServer ? servers.size() - 1 - s : s);
  }
  if (options_.ties == TieBreak::kNameOrder) {
    std::vector<std::string> names(servers.size());
    for (std::size_t s = 0; s < servers.size(); ++s) {
      append_point_prefix(names[s], servers[s], options_.format);
      if (options_.format != PointFormat::kHostNulPortChained) {
        names[s].pop_back();  // the separator
      }
    }
    std::vector<std::uint32_t> order(servers.size());
    for (std::size_t s = 0; s < servers.size(); ++s) {
      order[s] = static_cast<std::uint32_t>(s);
    }
    std::stable_sort(order.begin(), order.end(), [&names](std::uint32_t a, std::uint32_t b) {
      if (names[a].size() != names[b].size()) {
        return names[a].size() < names[b].size();
      }
      return names[a] < names[b];
    });
    for (std::size_t position = 0; position < order.size(); ++position) {
      rank[order[position]] = static_cast<std::uint32_t>(position);
    }
  }
  std::sort(points_.begin(), points_.end(), [&rank](const RingPoint& a, const RingPoint& b) {
    if (a.value != b.value) {
      return a.value < b.value;
    }
    return rank[a.server] < rank[b.server];
  });
  // Keep one point per position: the tie winner sorts first.
  points_.erase(
      std::unique(points_.begin(), points_.end(),
                  [](const RingPoint& a, const RingPoint& b) { return a.value == b.value; }),
      points_.end());
  build_table();
  points_.push_back({std::numeric_limits<std::uint32_t>::max(), points_.front().server});
  points_.shrink_to_fit();
}

template <Hasher Hash>
void KetamaLocator<Hash>::build_table() {
  const int bits = std::clamp(static_cast<int>(std::bit_width(points_.size())), 4, 20);
  shift_ = static_cast<unsigned>(32 - bits);
  const std::size_t buckets = std::size_t{1} << static_cast<unsigned>(bits);
  table_.assign(buckets + 1, 0);
  std::size_t index = 0;
  for (std::size_t prefix = 0; prefix < buckets; ++prefix) {
    while (index < points_.size() && (points_[index].value >> shift_) < prefix) {
      ++index;
    }
    table_[prefix] = static_cast<std::uint32_t>(index);
  }
  table_[buckets] = static_cast<std::uint32_t>(points_.size());
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_LOCATORS_KETAMA_LOCATOR_HPP_
