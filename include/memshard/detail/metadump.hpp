// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_DETAIL_METADUMP_HPP_
#define MEMSHARD_DETAIL_METADUMP_HPP_

// detail/metadump.hpp: the lines memcached's `lru_crawler metadump` sends, parsed
// strictly; the remaining TTL of a listed item on the server's own clock; and
// the hotness order the warmer copies in (a sort, and a bounded "hottest N" of
// a stream).
//
// memcached 1.6.18 (crawler.c, crawler_metadump_eval) writes one line per live
// item, ending in a bare "\n", and "END\r\n" after the last one:
//
//   key=<URI-encoded key> exp=<-1 | absolute unix time> la=<absolute unix time>
//   cas=<u64> fetch=<yes|no> cls=<slab class> size=<item size>
//
// The times are absolute on the server's clock (its relative time plus
// process_started), so a TTL is worked out against that server's `stats time`,
// never the client's clock. `size` is the whole item (header, key, value,
// suffix: ITEM_ntotal), not the value length. Expired and flushed items are
// never listed. The same seven fields, in this order, are still what
// memcached's newest crawler.c writes: no version adds a field, so an unknown
// field is an error here, as are a missing or repeated one.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/key.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// MetadumpEntry: one item as `lru_crawler metadump` lists it.
struct MetadumpEntry {
  /// key: the key, URI-decoded; it passed check_key.
  std::string key;
  /// exp: when the item expires, in unix seconds on the server's clock;
  /// nothing when it never expires ("exp=-1").
  std::optional<std::int64_t> exp;
  /// last_access: the item's last access, in unix seconds on the server's clock.
  std::int64_t last_access = 0;
  /// cas: the item's CAS value.
  std::uint64_t cas = 0;
  /// fetched: whether the item was read since it was stored ("fetch=yes").
  bool fetched = false;
  /// slab_class: the slab class holding the item.
  std::uint32_t slab_class = 0;
  /// size: the whole item's size in memory, in bytes (header and key
  /// included), an upper bound on its value's length.
  std::uint64_t size = 0;

  friend auto operator==(const MetadumpEntry&, const MetadumpEntry&) -> bool = default;
};

/// MetadumpParse: the outcome of parse_metadump_line: an entry, or an error
/// naming the part of the line that is wrong.
struct MetadumpParse {
  /// entry: the parsed entry, when the line is valid.
  std::optional<MetadumpEntry> entry;
  /// error: why the line was rejected ("" when it was not), e.g.
  /// "metadump: field 'exp': not a number: '12x'".
  std::string error;

  /// ok: whether the line was parsed.
  [[nodiscard]] auto ok() const noexcept -> bool { return entry.has_value(); }
};

/// MetadumpLineKind: what a line of a metadump reply is.
enum class MetadumpLineKind : std::uint8_t {
  kEntry,  ///< an item line ("key=...")
  kEnd,    ///< "END": the listing is complete
  kBusy,   ///< "BUSY ...": another crawl runs; ask again later
  kError,  ///< "ERROR ...", "CLIENT_ERROR ...", "SERVER_ERROR ..." or anything else
};

/// strip_line_end: `line` without one final "\n" or "\r\n".
[[nodiscard]] constexpr auto strip_line_end(std::string_view line) noexcept -> std::string_view {
  if (line.ends_with('\n')) {
    line.remove_suffix(1);
    if (line.ends_with('\r')) {
      line.remove_suffix(1);
    }
  }
  return line;
}

/// classify_metadump_line: the kind of one reply line (with or without its
/// line end). O(1), never allocates.
[[nodiscard]] constexpr auto classify_metadump_line(std::string_view line) noexcept
    -> MetadumpLineKind {
  line = strip_line_end(line);
  if (line.starts_with("key=")) {
    return MetadumpLineKind::kEntry;
  }
  if (line == "END") {
    return MetadumpLineKind::kEnd;
  }
  if (line.starts_with("BUSY")) {
    return MetadumpLineKind::kBusy;
  }
  return MetadumpLineKind::kError;
}

/// hex_digit_value: the value of one hex digit (either case), or -1.
[[nodiscard]] constexpr auto hex_digit_value(char c) noexcept -> int {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

/// uri_decode: `text` with every "%XX" (two hex digits, either case) replaced
/// by its byte, into `out`; other bytes are kept. Returns "" on success, else
/// what is wrong with which escape. memcached's uriencode escapes every byte
/// but letters, digits and "-._~", in upper case.
[[nodiscard]] inline auto uri_decode(std::string_view text, std::string& out) -> std::string {
  out.clear();
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    const std::string_view escape = text.substr(i, 3);
    const int high = escape.size() == 3 ? hex_digit_value(escape[1]) : -1;
    const int low = escape.size() == 3 ? hex_digit_value(escape[2]) : -1;
    if (high < 0 || low < 0) {
      return "bad %-escape '" + std::string(escape) + "' at offset " + std::to_string(i);
    }
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return {};
}

/// parse_metadump_number: `text` as a decimal T (no sign, no spaces, no
/// leading '+', in range), or nothing.
template <typename T>
[[nodiscard]] constexpr auto parse_metadump_number(std::string_view text) noexcept
    -> std::optional<T> {
  if (text.empty() || text.front() < '0' || text.front() > '9') {
    return std::nullopt;
  }
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

/// parse_metadump_line: one metadump item line (a final "\n" or "\r\n" is
/// allowed) as a MetadumpEntry. Strict: fields are separated by one space;
/// each of key, exp, la, cas, fetch, cls and size must appear exactly once, in
/// any order, and nothing else; numbers are plain decimals in range; exp is -1
/// or a non-negative time; fetch is yes or no; the key must URI-decode and then
/// pass check_key. The error names the field and the offending text. O(length).
[[nodiscard]] inline auto parse_metadump_line(std::string_view line) -> MetadumpParse {
  const auto fail = [](std::string what) {
    MetadumpParse result;
    result.error = "metadump: " + std::move(what);
    return result;
  };
  line = strip_line_end(line);
  if (line.empty()) {
    return fail("empty line");
  }
  static constexpr std::string_view kNames[] = {"key", "exp", "la", "cas", "fetch", "cls", "size"};
  constexpr std::size_t kFields = std::size(kNames);
  std::string_view values[kFields] = {};
  bool seen[kFields] = {};
  std::size_t pos = 0;
  while (pos <= line.size()) {
    std::size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) {
      end = line.size();
    }
    const std::string_view token = line.substr(pos, end - pos);
    if (token.empty()) {
      return fail("empty field at offset " + std::to_string(pos));
    }
    const std::size_t equals = token.find('=');
    if (equals == std::string_view::npos) {
      return fail("field without '=': '" + std::string(token) + "'");
    }
    const std::string_view name = token.substr(0, equals);
    const auto* found = std::find(std::begin(kNames), std::end(kNames), name);
    if (found == std::end(kNames)) {
      return fail("unknown field '" + std::string(name) + "'");
    }
    const auto index = static_cast<std::size_t>(found - std::begin(kNames));
    if (seen[index]) {
      return fail("repeated field '" + std::string(name) + "'");
    }
    seen[index] = true;
    values[index] = token.substr(equals + 1);
    pos = end + 1;
  }
  for (std::size_t i = 0; i < kFields; ++i) {
    if (!seen[i]) {
      return fail("missing field '" + std::string(kNames[i]) + "'");
    }
  }
  const auto bad_number = [&](std::size_t field) {
    return fail("field '" + std::string(kNames[field]) + "': not a number: '" +
                std::string(values[field]) + "'");
  };

  MetadumpEntry entry;
  if (std::string problem = uri_decode(values[0], entry.key); !problem.empty()) {
    return fail("field 'key': " + problem + " in '" + std::string(values[0]) + "'");
  }
  if (const std::optional<KeyError> problem = check_key(entry.key)) {
    return fail("field 'key': decoded " + problem->message() + ": '" + std::string(values[0]) +
                "'");
  }
  if (values[1] != "-1") {
    const auto exp = parse_metadump_number<std::int64_t>(values[1]);
    if (!exp) {
      return bad_number(1);
    }
    entry.exp = *exp;
  }
  const auto last_access = parse_metadump_number<std::int64_t>(values[2]);
  if (!last_access) {
    return bad_number(2);
  }
  entry.last_access = *last_access;
  const auto cas = parse_metadump_number<std::uint64_t>(values[3]);
  if (!cas) {
    return bad_number(3);
  }
  entry.cas = *cas;
  if (values[4] == "yes") {
    entry.fetched = true;
  } else if (values[4] != "no") {
    return fail("field 'fetch': neither yes nor no: '" + std::string(values[4]) + "'");
  }
  const auto slab_class = parse_metadump_number<std::uint32_t>(values[5]);
  if (!slab_class) {
    return bad_number(5);
  }
  entry.slab_class = *slab_class;
  const auto size = parse_metadump_number<std::uint64_t>(values[6]);
  if (!size) {
    return bad_number(6);
  }
  entry.size = *size;

  MetadumpParse result;
  result.entry = std::move(entry);
  return result;
}

/// kRelativeExptimeLimit: memcached reads an exptime above this (30 days, in
/// seconds) as an absolute unix time, not a TTL (memcached.c realtime()).
inline constexpr std::int64_t kRelativeExptimeLimit = 60 * 60 * 24 * 30;

/// remaining_ttl: how long `entry` still lives, at `server_now` (the unix time
/// of the server that listed it: its `stats time`, never the client's clock);
/// nothing when it never expires. Zero or less means expired: skip it. memcached
/// keeps an item through the second its exp names, and a TTL of 0 would mean
/// "never", so 0 is reported as expired too.
[[nodiscard]] constexpr auto remaining_ttl(const MetadumpEntry& entry,
                                           std::int64_t server_now) noexcept
    -> std::optional<std::chrono::seconds> {
  if (!entry.exp) {
    return std::nullopt;
  }
  return std::chrono::seconds{*entry.exp - server_now};
}

/// TtlVerdict: what the warmer does with a listed item, by its TTL.
enum class TtlVerdict : std::uint8_t {
  kUnlimited,  ///< copy it with no expiry
  kRemaining,  ///< copy it with CopyTtl::remaining
  kSkip,       ///< expired, or lives less than the minimum: do not copy
};

/// CopyTtl: a TtlVerdict, and the TTL to copy with for kRemaining (else 0).
struct CopyTtl {
  TtlVerdict verdict = TtlVerdict::kSkip;
  std::chrono::seconds remaining{0};

  friend constexpr auto operator==(const CopyTtl&, const CopyTtl&) -> bool = default;
};

/// copy_ttl: the min_ttl skip rule: an item that expires in less than
/// `min_ttl` (at least 1 s) at `server_now`, on the listing server's clock, is
/// skipped; one that never expires is copied without expiry; any other is
/// copied with its exact remaining TTL.
[[nodiscard]] constexpr auto copy_ttl(const MetadumpEntry& entry, std::int64_t server_now,
                                      std::chrono::seconds min_ttl) noexcept -> CopyTtl {
  const std::optional<std::chrono::seconds> left = remaining_ttl(entry, server_now);
  if (!left) {
    return {TtlVerdict::kUnlimited, std::chrono::seconds{0}};
  }
  if (*left < std::max(min_ttl, std::chrono::seconds{1})) {
    return {TtlVerdict::kSkip, std::chrono::seconds{0}};
  }
  return {TtlVerdict::kRemaining, *left};
}

/// exptime_for_copy: the exptime argument that gives an item `ttl` seconds
/// (at least 1) on a target server whose clock reads `target_now`: the TTL
/// itself up to 30 days, else the absolute time on the target's clock, since
/// memcached reads a larger exptime as a unix time.
[[nodiscard]] constexpr auto exptime_for_copy(std::chrono::seconds ttl,
                                              std::int64_t target_now) noexcept -> std::int64_t {
  const std::int64_t seconds = std::max<std::int64_t>(ttl.count(), 1);
  return seconds <= kRelativeExptimeLimit ? seconds : target_now + seconds;
}

/// hotter: the hotness order: fetched items first, then the most recently
/// accessed, then by key (so the order is total). A strict weak order.
[[nodiscard]] inline auto hotter(const MetadumpEntry& a, const MetadumpEntry& b) noexcept -> bool {
  if (a.fetched != b.fetched) {
    return a.fetched;
  }
  if (a.last_access != b.last_access) {
    return a.last_access > b.last_access;
  }
  return a.key < b.key;
}

/// sort_hottest_first: sorts `entries` by hotter. O(n log n).
inline void sort_hottest_first(std::span<MetadumpEntry> entries) noexcept {
  std::sort(entries.begin(), entries.end(), hotter);
}

/// HottestN: keeps the `capacity` hottest entries of a stream, in bounded
/// memory (a heap whose top is the coldest kept entry).
///
/// offer() is O(log capacity); take() is O(capacity log capacity). Not
/// thread-safe. offer() and take() give the basic exception guarantee (they
/// may throw std::bad_alloc).
///
/// **Example**:
///   HottestN hottest(10'000);
///   for (MetadumpEntry& entry : chunk) hottest.offer(std::move(entry));
///   std::vector<MetadumpEntry> batch = hottest.take();   // hottest first
class HottestN {
 public:
  /// HottestN: keeps at most `capacity` entries (0 keeps none).
  explicit HottestN(std::size_t capacity) noexcept : capacity_(capacity) {}

  /// offer: keeps `entry` if fewer than capacity entries are kept or it is
  /// hotter than the coldest kept one (which is then dropped). Returns
  /// whether it was kept.
  auto offer(MetadumpEntry entry) -> bool {
    if (capacity_ == 0) {
      return false;
    }
    if (heap_.size() < capacity_) {
      heap_.push_back(std::move(entry));
      std::push_heap(heap_.begin(), heap_.end(), hotter);
      return true;
    }
    if (!hotter(entry, heap_.front())) {
      return false;
    }
    std::pop_heap(heap_.begin(), heap_.end(), hotter);
    heap_.back() = std::move(entry);
    std::push_heap(heap_.begin(), heap_.end(), hotter);
    return true;
  }

  /// take: the kept entries, hottest first; leaves this empty.
  [[nodiscard]] auto take() -> std::vector<MetadumpEntry> {
    std::vector<MetadumpEntry> out = std::exchange(heap_, {});
    sort_hottest_first(out);
    return out;
  }

  /// size: how many entries are kept.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return heap_.size(); }

  /// capacity: the most entries kept.
  [[nodiscard]] auto capacity() const noexcept -> std::size_t { return capacity_; }

 private:
  std::size_t capacity_;
  std::vector<MetadumpEntry> heap_;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_DETAIL_METADUMP_HPP_
