// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_HOTKEYS_HOT_KEY_SKETCH_HPP_
#define MEMSHARD_HOTKEYS_HOT_KEY_SKETCH_HPP_

// hotkeys/hot_key_sketch.hpp: HotKeySketch, which keys make up a large share of one client's
// operations (the keys that make one server hot), in memory fixed when it is built, whatever
// the keys.
//
// Counting: a Space-Saving summary of `capacity` entries (key, count, error). A key already in
// it counts one more; an absent key takes over the entry with the smallest count c, starting at
// c + 1 with error c (it may have been there all along, unseen). So a key's count never falls
// below its true count, and count - error never rises above it: that lower bound is what
// decides whether a key is hot, so a key reported hot had at least its share. Every key with
// more than 1/capacity of the operations is in the summary.
//
// Sampling: one call in sample_every is counted; the others cost a decrement and a branch
// (after the length check every call makes). The gap to the next counted call is drawn from
// [1, 2 * sample_every - 1] by a fixed-seed generator stepped once per counted call: the same
// calls are counted in every run (tests are reproducible), yet a client that cycles through
// sample_every keys is not seen as hammering one of them, as a fixed stride would. Counts and
// totals are the samples times sample_every; the share of a key is its share of the samples,
// which is exact when sample_every is 1.
//
// Windows: the caller's clock (nanoseconds, monotonic) is cut into windows of `window`, aligned
// on multiples of it. Two summaries are kept, the current window's and the previous one's; when
// a counted call falls past the current window, they swap (no copy, no allocation) and the new
// current one starts empty, or both do after a gap of a whole window. The answers are about
// the last complete window as of the time asked: the current one once its end has passed,
// nothing once a whole window has passed since.
//
// Memory: the constructor allocates everything (keys in fixed 250-byte slots, memcached's
// limit; longer keys are not operations memcached accepts, and are not counted at all);
// record() never allocates. memory_bytes() bounds the heap held.

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// HotKeyOptions: how a HotKeySketch counts (see the file comment).
///
/// **Example**:
///   memshard::HotKeySketch sketch({.sample_every = 16, .share = 0.05});
struct HotKeyOptions {
  /// Space-Saving entries kept per window (1 to 65536). A key with more than 1/capacity of a
  /// window's counted operations is always among them; more entries, fewer misses for keys
  /// near the threshold, and more memory (two windows of capacity * ~290 bytes).
  std::size_t capacity = 64;
  /// One operation in sample_every is counted (1: every one). Larger: cheaper record() calls,
  /// noisier estimates (a key's share is estimated from about window_ops / sample_every samples).
  std::uint32_t sample_every = 8;
  /// A key is hot when its guaranteed share of the last complete window's operations is at
  /// least this, in (0, 1].
  double share = 0.01;
  /// The length of a measurement window (positive, at most 30 days).
  std::chrono::milliseconds window{1000};
  /// A window with fewer operations than this (estimated) has no hot key: in a quiet client,
  /// every key would be a large share of next to nothing.
  std::uint64_t min_operations = 1000;

  friend auto operator==(const HotKeyOptions&, const HotKeyOptions&) -> bool = default;
};

/// hot_key_options_error: why `options` are not valid (a capacity of 0 or over 65536, a
/// sample_every of 0, a share outside (0, 1] or NaN, a window that is not positive or is over
/// 30 days), or nothing.
[[nodiscard]] inline auto hot_key_options_error(const HotKeyOptions& options)
    -> std::optional<std::string> {
  constexpr std::size_t kMaxCapacity = 65536;
  constexpr std::chrono::milliseconds kMaxWindow{std::chrono::hours{24 * 30}};
  if (options.capacity == 0 || options.capacity > kMaxCapacity) {
    return "capacity must be 1 to 65536 (" + std::to_string(options.capacity) + ")";
  }
  if (options.sample_every == 0) {
    return std::string("sample_every must be at least 1 (0)");
  }
  if (!(options.share > 0.0 && options.share <= 1.0)) {  // NaN fails both comparisons
    std::array<char, 32> text{};
    const auto printed = std::to_chars(text.data(), text.data() + text.size(), options.share);
    return "share must be in (0, 1] (" + std::string(text.data(), printed.ptr) + ")";
  }
  if (options.window.count() <= 0 || options.window > kMaxWindow) {
    return "window must be 1 ms to 30 days (" + std::to_string(options.window.count()) + " ms)";
  }
  return std::nullopt;
}

/// HotKey: one hot key of a window, as HotKeySketch::hot() reports it. The estimates are the
/// sketch's (Space-Saving's count, which may exceed the truth by what the key inherited, times
/// sample_every).
struct HotKey {
  std::string key;
  /// Its estimated share of the window's operations, in (0, 1].
  double share = 0.0;
  /// Its estimated operations per second over the window (all of the client's, not only the
  /// counted ones).
  double per_second = 0.0;
  /// Its estimated operations in the window.
  std::uint64_t count = 0;

  friend auto operator==(const HotKey&, const HotKey&) -> bool = default;
};

/// HotKeyChange: what changed since the previous HotKeySketch::changes() call, for an observer.
struct HotKeyChange {
  /// Keys hot now that were not then, hottest first.
  std::vector<std::string> became_hot;
  /// Keys hot then that are not now, in key order.
  std::vector<std::string> cooled;

  friend auto operator==(const HotKeyChange&, const HotKeyChange&) -> bool = default;
};

namespace detail {

/// hot_key_change: what changed from the keys `reported` (sorted) to `now_hot` (hottest first):
/// the keys that became hot, hottest first, and those that cooled, in key order; `reported`
/// then holds the keys of `now_hot`, sorted. When it throws, nothing changed.
[[nodiscard]] inline auto hot_key_change(std::vector<std::string>& reported,
                                         const std::vector<HotKey>& now_hot) -> HotKeyChange {
  HotKeyChange change;
  std::vector<std::string> keys;
  keys.reserve(now_hot.size());
  for (const HotKey& key : now_hot) {
    keys.push_back(key.key);
  }
  std::sort(keys.begin(), keys.end());
  for (const HotKey& key : now_hot) {
    if (!std::binary_search(reported.begin(), reported.end(), key.key)) {
      change.became_hot.push_back(key.key);
    }
  }
  for (const std::string& key : reported) {
    if (!std::binary_search(keys.begin(), keys.end(), key)) {
      change.cooled.push_back(key);
    }
  }
  reported = std::move(keys);
  return change;
}

}  // namespace detail

/// HotKeySketch: the hot keys of one client's stream of operations (see the file comment).
///
/// Not thread-safe: one client's thread records and asks (as a client's handles are used by
/// one thread at a time); clients that share a thread may share one, others keep their own.
///
/// Complexity: record() is O(1) (an uncounted call: a length check, a decrement and a branch;
/// a counted one: a hash of the key, a probe of an index at most a quarter full, and when the
/// key is absent a search for the least count that is O(1) amortized); hot() and changes() are
/// O(capacity log capacity). Memory: O(capacity), all allocated by the constructor. record()
/// and the const accessors never throw; hot() and changes() may throw std::bad_alloc, and
/// changes() then changes nothing (the strong guarantee).
///
/// **Example**:
///   memshard::HotKeySketch sketch({.sample_every = 8, .share = 0.02});
///   sketch.record(key, now_ns());  // on each operation: now_ns(), the steady clock in ns
///   // now and then (say once a window):
///   const memshard::HotKeyChange change = sketch.changes(now_ns());
///   for (const std::string& hot : change.became_hot) log("hot key", hot);
class HotKeySketch {
 public:
  /// The longest key counted, memcached's limit: record() ignores longer ones.
  static constexpr std::size_t kMaxKeyBytes = 250;

  /// A sketch that has counted nothing. `options` are assumed valid (hot_key_options_error);
  /// values out of range are clamped into it rather than being undefined. Allocates every
  /// buffer the sketch will use.
  explicit HotKeySketch(HotKeyOptions options = {})
      : sample_every_(std::max<std::uint32_t>(options.sample_every, 1)),
        window_ns_(std::clamp<std::int64_t>(options.window.count(), 1, kMaxWindowMs) * kNsPerMs),
        options_(options),
        current_(std::clamp<std::size_t>(options.capacity, 1, kMaxCapacity)),
        previous_(std::clamp<std::size_t>(options.capacity, 1, kMaxCapacity)) {}

  /// record: one operation on `key` at `now_ns` (a monotonic clock's nanoseconds, such as
  /// detail::steady_now_ns() or coarse_now_ns(); negative times count as 0). A key longer than
  /// kMaxKeyBytes is not counted at all. Never allocates.
  void record(std::string_view key, std::int64_t now_ns) noexcept {
    if (key.size() > kMaxKeyBytes) [[unlikely]] {
      return;
    }
    if (--countdown_ != 0) [[likely]] {
      return;
    }
    sample(key, now_ns);
  }

  /// due: counts this call down to the next counted one; true when this one is counted, which
  /// count() then does. record() is the two; a caller that takes a lock or reads a clock for
  /// the counted calls only calls them apart. Ignores the key's length: check it first.
  [[nodiscard]] auto due() noexcept -> bool { return --countdown_ == 0; }

  /// count: the counted call on `key` at `now_ns` (due() said so).
  void count(std::string_view key, std::int64_t now_ns) noexcept { sample(key, now_ns); }

  /// current_window: the index of the window of the latest counted call (now_ns / window),
  /// -1 before the first.
  [[nodiscard]] auto current_window() const noexcept -> std::int64_t {
    return started_ ? current_index_ : -1;
  }

  /// visit_complete: calls `on(key, count, error)` for each entry of the last complete window
  /// as of `now_ns` (counted calls, not times sample_every), and answers the counted calls of
  /// that window (0 when there is none).
  template <class On>
  auto visit_complete(std::int64_t now_ns, On&& on) const -> std::uint64_t {
    const Summary* window = complete_window(now_ns);
    if (window == nullptr) {
      return 0;
    }
    for (std::size_t slot = 0; slot < window->size(); ++slot) {
      on(window->key(slot), window->count(slot), window->error(slot));
    }
    return window->sampled();
  }

  /// hot: the keys of the last complete window as of `now_ns` whose guaranteed share (count -
  /// error, over the window's operations) is at least options().share, by count, highest
  /// first (then by key). Empty when no window has completed, a whole window has passed since
  /// the last one did, or that window had fewer than options().min_operations.
  [[nodiscard]] auto hot(std::int64_t now_ns) const -> std::vector<HotKey> {
    std::vector<HotKey> keys;
    const Summary* window = complete_window(now_ns);
    if (window == nullptr || window->sampled() == 0 ||
        window->sampled() * sample_every_ < options_.min_operations) {
      return keys;
    }
    const double samples = static_cast<double>(window->sampled());
    const double seconds = static_cast<double>(window_ns_) / 1e9;
    for (std::size_t slot = 0; slot < window->size(); ++slot) {
      const std::uint64_t guaranteed = window->count(slot) - window->error(slot);
      if (static_cast<double>(guaranteed) / samples >= options_.share) {
        const std::uint64_t operations = window->count(slot) * sample_every_;
        keys.push_back(HotKey{.key = std::string(window->key(slot)),
                              .share = static_cast<double>(window->count(slot)) / samples,
                              .per_second = static_cast<double>(operations) / seconds,
                              .count = operations});
      }
    }
    std::sort(keys.begin(), keys.end(), [](const HotKey& a, const HotKey& b) {
      return a.count != b.count ? a.count > b.count : a.key < b.key;
    });
    return keys;
  }

  /// changes: which keys became hot and which cooled since the previous call (the first call
  /// compares with none), by hot(now_ns).
  auto changes(std::int64_t now_ns) -> HotKeyChange {
    return detail::hot_key_change(reported_, hot(now_ns));
  }

  /// total: the estimated operations of the last complete window as of `now_ns` (0 when
  /// there is none).
  [[nodiscard]] auto total(std::int64_t now_ns) const noexcept -> std::uint64_t {
    const Summary* window = complete_window(now_ns);
    return window == nullptr ? 0 : window->sampled() * sample_every_;
  }

  /// memory_bytes: an upper bound on the heap the sketch holds. It does not grow with the keys
  /// recorded; only changes() adds the keys it last reported (at most min(capacity, 1 / share)
  /// of them, kMaxKeyBytes each).
  [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
    std::size_t bytes = current_.memory_bytes() + previous_.memory_bytes() +
                        reported_.capacity() * sizeof(std::string);
    for (const std::string& key : reported_) {
      bytes += key.capacity() + 1;
    }
    return bytes;
  }

  /// options: the options the sketch was built with.
  [[nodiscard]] auto options() const noexcept -> const HotKeyOptions& { return options_; }

 private:
  static constexpr std::size_t kMaxCapacity = 65536;
  static constexpr std::int64_t kMaxWindowMs = std::int64_t{30} * 24 * 60 * 60 * 1000;
  static constexpr std::int64_t kNsPerMs = 1'000'000;

  // Summary: one window's Space-Saving entries, as parallel arrays (the search for the least
  // count reads only the counts), and an open-addressing index over them (linear probing,
  // at most a quarter full, 0 for empty, slot + 1 otherwise: few probes, few mispredicted
  // branches).
  class Summary {
   public:
    explicit Summary(std::size_t capacity)
        : capacity_(capacity),
          mask_(std::bit_ceil(4 * capacity) - 1),
          hashes_(capacity),
          counts_(capacity),
          errors_(capacity),
          lengths_(capacity),
          keys_(capacity * kMaxKeyBytes),
          index_(mask_ + 1) {}

    void clear() noexcept {
      size_ = 0;
      sampled_ = 0;
      least_ = 0;
      cursor_ = 0;
      std::fill(index_.begin(), index_.end(), std::uint32_t{0});
    }

    // add: one counted operation on `key`, whose hash is `hash`.
    void add(std::string_view key, std::uint64_t hash) noexcept {
      ++sampled_;
      std::size_t at = static_cast<std::size_t>(hash) & mask_;
      for (std::uint32_t held = index_[at]; held != 0; held = index_[at]) {
        const std::size_t slot = held - 1;
        if (hashes_[slot] == hash && this->key(slot) == key) {
          ++counts_[slot];
          return;
        }
        at = (at + 1) & mask_;
      }
      std::size_t slot = 0;
      if (size_ < capacity_) {
        slot = size_++;
        counts_[slot] = 1;
        errors_[slot] = 0;
      } else {
        slot = least_slot();
        unlink(slot);
        errors_[slot] = counts_[slot];
        counts_[slot] += 1;
        at = static_cast<std::size_t>(hash) & mask_;  // unlink may have moved the empty place
        while (index_[at] != 0) {
          at = (at + 1) & mask_;
        }
      }
      index_[at] = static_cast<std::uint32_t>(slot + 1);
      hashes_[slot] = hash;
      lengths_[slot] = static_cast<std::uint8_t>(key.size());
      if (!key.empty()) {
        std::memcpy(&keys_[slot * kMaxKeyBytes], key.data(), key.size());
      }
    }

    [[nodiscard]] auto size() const noexcept -> std::size_t { return size_; }
    [[nodiscard]] auto sampled() const noexcept -> std::uint64_t { return sampled_; }
    [[nodiscard]] auto count(std::size_t slot) const noexcept -> std::uint64_t {
      return counts_[slot];
    }
    [[nodiscard]] auto error(std::size_t slot) const noexcept -> std::uint64_t {
      return errors_[slot];
    }
    [[nodiscard]] auto key(std::size_t slot) const noexcept -> std::string_view {
      return {&keys_[slot * kMaxKeyBytes], lengths_[slot]};
    }
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
      return hashes_.capacity() * sizeof(std::uint64_t) +
             counts_.capacity() * sizeof(std::uint64_t) +
             errors_.capacity() * sizeof(std::uint64_t) + lengths_.capacity() + keys_.capacity() +
             index_.capacity() * sizeof(std::uint32_t);
    }

   private:
    // least_slot: an entry with the least count (the summary is full). Counts only grow, and
    // an entry taken over gets least_ + 1, so the entries before cursor_ all count more than
    // least_: the search resumes there, and scans every count again only once none is left
    // at least_ (each scan then serves the many take-overs at the new least count).
    auto least_slot() noexcept -> std::size_t {
      for (;;) {
        while (cursor_ < size_) {
          const std::size_t slot = cursor_++;
          if (counts_[slot] == least_) {
            return slot;
          }
        }
        least_ = *std::min_element(counts_.begin(),
                                   counts_.begin() + static_cast<std::ptrdiff_t>(size_));
        cursor_ = 0;
      }
    }

    // unlink: removes `slot` from the index, moving back the entries after it in its probe
    // run that may fill its place (so that no lookup meets an empty place before its key).
    void unlink(std::size_t slot) noexcept {
      std::size_t hole = static_cast<std::size_t>(hashes_[slot]) & mask_;
      while (index_[hole] != slot + 1) {
        hole = (hole + 1) & mask_;
      }
      for (std::size_t next = (hole + 1) & mask_; index_[next] != 0; next = (next + 1) & mask_) {
        const std::size_t home = static_cast<std::size_t>(hashes_[index_[next] - 1]) & mask_;
        if (((next - home) & mask_) >= ((next - hole) & mask_)) {  // home is not after the hole
          index_[hole] = index_[next];
          hole = next;
        }
      }
      index_[hole] = 0;
    }

    std::size_t capacity_;
    std::size_t mask_;
    std::size_t size_ = 0;
    std::uint64_t sampled_ = 0;
    std::uint64_t least_ = 0;
    std::size_t cursor_ = 0;
    std::vector<std::uint64_t> hashes_;
    std::vector<std::uint64_t> counts_;
    std::vector<std::uint64_t> errors_;
    std::vector<std::uint8_t> lengths_;
    std::vector<char> keys_;  // slot * kMaxKeyBytes: each entry's key
    std::vector<std::uint32_t> index_;
  };

  // hash_key: a 64-bit hash of `key`, for this process only (the index and a quick inequality):
  // 8-byte words, each mixed in by a multiply and a shift, the 1 to 7 bytes left as one word
  // (two overlapping 4-byte loads, or the first, middle and last byte), then a final mix.
  [[nodiscard]] static auto hash_key(std::string_view key) noexcept -> std::uint64_t {
    constexpr std::uint64_t kOdd1 = 0x9E3779B97F4A7C15ULL;
    constexpr std::uint64_t kOdd2 = 0xD6E8FEB86659FD93ULL;
    const char* p = key.data();
    std::size_t left = key.size();
    std::uint64_t h = static_cast<std::uint64_t>(left) * kOdd1;
    const auto mix = [&h](std::uint64_t word) {
      h = (h ^ word) * kOdd2;
      h ^= h >> 32U;
    };
    for (; left >= 8; left -= 8, p += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, p, sizeof word);
      mix(word);
    }
    if (left >= 4) {
      std::uint32_t first = 0;
      std::uint32_t last = 0;
      std::memcpy(&first, p, sizeof first);
      std::memcpy(&last, p + left - 4, sizeof last);
      mix(static_cast<std::uint64_t>(first) | static_cast<std::uint64_t>(last) << 32U);
    } else if (left > 0) {
      const auto byte = [p](std::size_t i) {
        return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i]));
      };
      mix(byte(0) | byte(left / 2) << 8U | byte(left - 1) << 16U);
    }
    h ^= h >> 29U;
    h *= kOdd1;
    h ^= h >> 32U;
    h *= kOdd2;
    h ^= h >> 29U;
    return h;
  }

  // sample: the counted call (the gap to the next one drawn), in the window of `now_ns`. Out of
  // line, so that record() inlined into each operation stays a few instructions.
  [[gnu::noinline]] void sample(std::string_view key, std::int64_t now_ns) noexcept {
    if (sample_every_ == 1) {
      countdown_ = 1;
    } else {
      // A 64-bit linear congruential step; its high bits are the good ones, scaled to the
      // spread by a multiply (a division only for strides beyond 2^31).
      stride_state_ = stride_state_ * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::uint64_t spread = 2 * std::uint64_t{sample_every_} - 1;
      const std::uint64_t high = stride_state_ >> 32U;
      countdown_ =
          1 + (spread <= 0xFFFFFFFFULL ? (high * spread) >> 32U : (stride_state_ >> 1U) % spread);
    }
    if (now_ns >= window_end_) [[unlikely]] {
      advance(now_ns);
    }
    current_.add(key, hash_key(key));
  }

  // advance: the counted call at `now_ns` falls past the current window.
  void advance(std::int64_t now_ns) noexcept {
    const std::int64_t index = window_index(now_ns);
    if (started_ && index <= current_index_) {  // only where the window's end saturated
      return;
    }
    if (started_ && index == current_index_ + 1) {
      std::swap(current_, previous_);
    } else {
      previous_.clear();
    }
    current_.clear();
    started_ = true;
    current_index_ = index;
    constexpr std::int64_t kLatest = std::numeric_limits<std::int64_t>::max();
    window_end_ = index < kLatest / window_ns_ ? (index + 1) * window_ns_ : kLatest;
  }

  [[nodiscard]] auto window_index(std::int64_t now_ns) const noexcept -> std::int64_t {
    return std::max<std::int64_t>(now_ns, 0) / window_ns_;
  }

  // complete_window: the last complete window as of `now_ns`, or none.
  [[nodiscard]] auto complete_window(std::int64_t now_ns) const noexcept -> const Summary* {
    if (!started_) {
      return nullptr;
    }
    const std::int64_t index = window_index(now_ns);
    if (index <= current_index_) {
      return &previous_;
    }
    return index == current_index_ + 1 ? &current_ : nullptr;
  }

  std::uint64_t countdown_ = 1;  // calls until the next counted one (the first is counted)
  std::uint32_t sample_every_;
  std::uint64_t stride_state_ = 0x853C49E6748FEA9BULL;
  std::int64_t window_ns_;
  std::int64_t window_end_ = std::numeric_limits<std::int64_t>::min();
  std::int64_t current_index_ = 0;
  bool started_ = false;
  HotKeyOptions options_;
  Summary current_;
  Summary previous_;
  std::vector<std::string> reported_;  // sorted: the keys the last changes() found hot
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_HOTKEYS_HOT_KEY_SKETCH_HPP_
