// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_HOTKEYS_HOT_KEY_WATCH_HPP_
#define MEMSHARD_HOTKEYS_HOT_KEY_WATCH_HPP_

// hotkeys/hot_key_watch.hpp: HotKeyWatch, the hot keys of a client family (a client and its
// clones, ClientOptions::hot_keys). Each client counts its own operations in a HotKeySketch of
// its own (a Seat): an operation that is not counted costs the sketch's countdown; a counted one
// reads the coarse clock (detail::coarse_now_ns(), on which every time here is read) and takes
// the seat's mutex, which only a reader of the family's hot keys
// contends for. hot() merges the seats' last complete windows (windows are aligned on the
// clock, so the seats' windows are the same): a key's counts and errors add up, and a key is
// hot when its guaranteed count is at least `share` of the family's operations.
//
// roll(): the first counted call of a client in a new window asks the family what changed since
// the last window; once per window (the first client to ask), it answers the keys that became
// hot and those that cooled, for the client's observer.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memshard/detail/clock.hpp"
#include "memshard/hotkeys/hot_key_sketch.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// HotKeyWatch: see the file comment. Thread-safe; each Seat records from its client's thread.
class HotKeyWatch {
 public:
  /// Seat: one client's sketch.
  class Seat {
   public:
    explicit Seat(const HotKeyOptions& options) : sketch_(options) {}

    /// record: one operation on the sent key `key`; true when it was counted and began a new
    /// window for this client (then the family's changes may be due: HotKeyWatch::roll()).
    auto record(std::string_view key) noexcept -> bool {
      if (key.size() > HotKeySketch::kMaxKeyBytes || !sketch_.due()) [[likely]] {
        return false;
      }
      return count(key);
    }

   private:
    friend class HotKeyWatch;

    [[gnu::noinline]] auto count(std::string_view key) noexcept -> bool {
      const std::int64_t now = coarse_now_ns();  // a window is a second: a tick late is nothing
      const std::lock_guard<std::mutex> lock(mutex_);
      const std::int64_t before = sketch_.current_window();
      sketch_.count(key, now);
      return sketch_.current_window() != before;
    }

    std::mutex mutex_;
    HotKeySketch sketch_;
  };

  explicit HotKeyWatch(const HotKeyOptions& options) : options_(options) {}

  /// seat: a new client's seat in the family; it counts no more once the client drops it.
  [[nodiscard]] auto seat() -> std::shared_ptr<Seat> {
    auto seat = std::make_shared<Seat>(options_);
    const std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(seats_, [](const std::weak_ptr<Seat>& s) { return s.expired(); });
    seats_.push_back(seat);
    return seat;
  }

  /// hot: the family's hot keys of the last complete window as of `now_ns`, highest count
  /// first (see HotKeySketch::hot: the same rules, over every seat's counts).
  [[nodiscard]] auto hot(std::int64_t now_ns) const -> std::vector<HotKey> {
    struct Counted {
      std::uint64_t count = 0;
      std::uint64_t error = 0;
    };
    std::unordered_map<std::string, Counted> merged;
    std::uint64_t sampled = 0;
    for (const std::shared_ptr<Seat>& seat : live_seats()) {
      const std::lock_guard<std::mutex> lock(seat->mutex_);
      sampled += seat->sketch_.visit_complete(
          now_ns, [&merged](std::string_view key, std::uint64_t count, std::uint64_t error) {
            Counted& entry = merged[std::string(key)];
            entry.count += count;
            entry.error += error;
          });
    }
    std::vector<HotKey> keys;
    const std::uint64_t every = std::max<std::uint32_t>(options_.sample_every, 1);
    if (sampled == 0 || sampled * every < options_.min_operations) {
      return keys;
    }
    const auto total = static_cast<double>(sampled);
    const double seconds = static_cast<double>(options_.window.count()) / 1e3;
    for (const auto& [key, counted] : merged) {
      if (static_cast<double>(counted.count - counted.error) / total >= options_.share) {
        keys.push_back(HotKey{.key = key,
                              .share = static_cast<double>(counted.count) / total,
                              .per_second = static_cast<double>(counted.count * every) / seconds,
                              .count = counted.count * every});
      }
    }
    std::sort(keys.begin(), keys.end(), [](const HotKey& a, const HotKey& b) {
      return a.count != b.count ? a.count > b.count : a.key < b.key;
    });
    return keys;
  }

  /// roll: what changed in the family's hot keys since the last roll, once per window: the
  /// first call in a window answers (by hot(now_ns)); a later one in the same window, nothing.
  auto roll(std::int64_t now_ns) -> std::optional<std::pair<HotKeyChange, std::vector<HotKey>>> {
    const std::int64_t window = now_ns / std::max<std::int64_t>(window_ns(), 1);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (window <= rolled_) {
        return std::nullopt;
      }
      rolled_ = window;
    }
    std::vector<HotKey> now_hot = hot(now_ns);
    const std::lock_guard<std::mutex> lock(mutex_);
    HotKeyChange change = hot_key_change(reported_, now_hot);
    return std::pair{std::move(change), std::move(now_hot)};
  }

  /// options: the options every seat counts by.
  [[nodiscard]] auto options() const noexcept -> const HotKeyOptions& { return options_; }

 private:
  [[nodiscard]] auto window_ns() const noexcept -> std::int64_t {
    return static_cast<std::int64_t>(options_.window.count()) * 1'000'000;
  }

  [[nodiscard]] auto live_seats() const -> std::vector<std::shared_ptr<Seat>> {
    std::vector<std::shared_ptr<Seat>> live;
    const std::lock_guard<std::mutex> lock(mutex_);
    live.reserve(seats_.size());
    for (const std::weak_ptr<Seat>& seat : seats_) {
      if (auto held = seat.lock()) {
        live.push_back(std::move(held));
      }
    }
    return live;
  }

  HotKeyOptions options_;
  mutable std::mutex mutex_;  // seats_, rolled_, reported_
  std::vector<std::weak_ptr<Seat>> seats_;
  std::int64_t rolled_ = -1;           // the window of the last roll
  std::vector<std::string> reported_;  // sorted: the keys the last roll found hot
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_HOTKEYS_HOT_KEY_WATCH_HPP_
