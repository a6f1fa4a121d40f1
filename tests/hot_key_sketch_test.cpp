// SPDX-License-Identifier: MIT
// hot_key_sketch_test.cpp: HotKeySketch (hotkeys/hot_key_sketch.hpp) on generated streams: a
// key at half the traffic and its estimates; recall and precision on a Zipf stream counted in
// full; a uniform stream over a million keys (nothing hot, memory flat); windows rolling over,
// cooling, gaps; a lower bound that inherited counts do not fool; a key that arrives late; exact
// counts through heavy churn of the other entries; Space-Saving's invariants; a cycle of keys that
// a fixed sampling stride would alias; options refused; long keys ignored; the same stream giving
// the same answers.

#include "memshard/hotkeys/hot_key_sketch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace hot_key_sketch_test {
namespace {

using memshard::hot_key_options_error;
using memshard::HotKey;
using memshard::HotKeyChange;
using memshard::HotKeyOptions;
using memshard::HotKeySketch;

constexpr std::int64_t kWindowNs = 1'000'000'000;  // the default window, 1000 ms

// Zipf: ranks 0..n-1 drawn with probability proportional to 1 / (rank + 1)^s, by inverting the
// cumulative weights. The uniform variate is made from the generator's bits directly (not
// std::uniform_real_distribution, whose algorithm the standard leaves open), so the stream is
// the same with every standard library.
class Zipf {
 public:
  Zipf(std::size_t n, double s) : cumulative_(n) {
    double sum = 0.0;
    for (std::size_t rank = 0; rank < n; ++rank) {
      sum += 1.0 / std::pow(static_cast<double>(rank + 1), s);
      cumulative_[rank] = sum;
    }
  }

  auto operator()(std::mt19937_64& random) const -> std::size_t {
    const double unit = static_cast<double>(random() >> 11U) * 0x1.0p-53;  // [0, 1)
    const auto at =
        std::upper_bound(cumulative_.begin(), cumulative_.end(), unit * cumulative_.back());
    return std::min(static_cast<std::size_t>(at - cumulative_.begin()), cumulative_.size() - 1);
  }

 private:
  std::vector<double> cumulative_;
};

auto key_of(std::size_t rank) -> std::string { return "user:" + std::to_string(rank); }

auto keys_of(const std::vector<HotKey>& hot) -> std::vector<std::string> {
  std::vector<std::string> keys;
  for (const HotKey& key : hot) {
    keys.push_back(key.key);
  }
  return keys;
}

auto find(const std::vector<HotKey>& hot, const std::string& key) -> const HotKey* {
  const auto at =
      std::find_if(hot.begin(), hot.end(), [&key](const HotKey& h) { return h.key == key; });
  return at == hot.end() ? nullptr : &*at;
}

TEST(HotKeySketchTest, AKeyAtHalfTheTrafficIsHot) {
  HotKeySketch sketch;  // defaults: 1 in 8 counted, 64 entries, 1% share, 1 s windows
  std::mt19937_64 random(42);
  const Zipf zipf(10'000, 0.99);
  constexpr std::size_t kOps = 200'000;
  std::size_t home = 0;
  for (std::size_t i = 0; i < kOps; ++i) {
    const auto now = static_cast<std::int64_t>(i) * 1000;  // 0.2 s, all in the first window
    if (random() % 2 == 0) {
      sketch.record("page:home", now);
      ++home;
    } else {
      sketch.record(key_of(zipf(random)), now);
    }
  }
  const auto home_ops = static_cast<double>(home);
  const double true_share = home_ops / kOps;
  ASSERT_NEAR(true_share, 0.5, 0.01);

  EXPECT_TRUE(sketch.hot(kWindowNs / 2).empty()) << "the window has not ended yet";
  EXPECT_EQ(sketch.total(kWindowNs / 2), 0U);

  const std::vector<HotKey> hot = sketch.hot(kWindowNs);
  ASSERT_FALSE(hot.empty());
  EXPECT_EQ(hot[0].key, "page:home");
  EXPECT_NEAR(hot[0].share, 0.5, 0.025);  // within 5% of 0.5
  EXPECT_NEAR(hot[0].share, true_share, 0.025);
  EXPECT_NEAR(static_cast<double>(hot[0].count), home_ops, 0.05 * home_ops);
  EXPECT_NEAR(hot[0].per_second, home_ops, 0.05 * home_ops);  // over a 1 s window
  EXPECT_NEAR(static_cast<double>(sketch.total(kWindowNs)), static_cast<double>(kOps), 0.02 * kOps);
  for (std::size_t i = 1; i < hot.size(); ++i) {
    EXPECT_GE(hot[i - 1].count, hot[i].count) << "sorted by count";
    EXPECT_LT(hot[i].share, 0.1) << hot[i].key;
  }
}

TEST(HotKeySketchTest, EveryKeyAboveTwoPercentIsReportedAndNoneBelowHalfAPercent) {
  HotKeySketch sketch({.capacity = 64, .sample_every = 1, .share = 0.01});
  std::mt19937_64 random(20240611);
  const Zipf zipf(10'000, 0.99);
  constexpr std::size_t kOps = 100'000;
  std::map<std::string, std::uint64_t> truth;
  for (std::size_t i = 0; i < kOps; ++i) {
    const std::string key = key_of(zipf(random));
    ++truth[key];
    sketch.record(key, static_cast<std::int64_t>(i) * 1000);
  }
  EXPECT_EQ(sketch.total(kWindowNs), kOps);  // every operation counted

  const std::vector<HotKey> hot = sketch.hot(kWindowNs);
  std::size_t above_two_percent = 0;
  for (const auto& [key, count] : truth) {
    const double share = static_cast<double>(count) / kOps;
    const HotKey* reported = find(hot, key);
    if (share >= 0.02) {
      ++above_two_percent;
      ASSERT_NE(reported, nullptr) << key << " has " << share << " of the operations";
      EXPECT_GE(reported->count, count) << "Space-Saving never counts less than the truth";
      EXPECT_NEAR(reported->share, share, 0.005) << key;
    }
    if (share < 0.005) {
      EXPECT_EQ(reported, nullptr) << key << " has only " << share << " of the operations";
    }
  }
  EXPECT_GE(above_two_percent, 3U) << "the stream is not skewed enough to test anything";
  for (const HotKey& key : hot) {
    EXPECT_GE(static_cast<double>(truth[key.key]) / kOps, 0.005) << key.key;
  }
}

TEST(HotKeySketchTest, AUniformStreamOverAMillionKeysIsNeverHotAndMemoryStaysFlat) {
  for (const std::uint32_t sample_every : {1U, 8U}) {
    SCOPED_TRACE(sample_every);
    HotKeySketch sketch({.sample_every = sample_every});
    std::mt19937_64 random(7);
    constexpr std::size_t kOps = 1'000'000;
    constexpr std::int64_t kStepNs = 5000;  // 5 s: five windows roll over under the stream
    std::size_t after_first_thousand = 0;
    for (std::size_t i = 0; i < kOps; ++i) {
      const auto now = static_cast<std::int64_t>(i) * kStepNs;
      sketch.record("item:" + std::to_string(random() % kOps), now);
      if (i + 1 == 1000) {
        after_first_thousand = sketch.memory_bytes();
      } else if (i > 1000 && i % 50'000 == 0) {
        EXPECT_LE(sketch.memory_bytes(), after_first_thousand) << "after " << i << " ops";
        EXPECT_TRUE(sketch.hot(now).empty()) << "after " << i << " ops";
      }
    }
    EXPECT_LE(sketch.memory_bytes(), after_first_thousand);
    EXPECT_LE(sketch.memory_bytes(), 64U * 1024U) << "two windows of 64 entries";
    const auto end = static_cast<std::int64_t>(kOps) * kStepNs;
    EXPECT_TRUE(sketch.hot(end).empty());
    EXPECT_GT(sketch.total(end), 0U);
    EXPECT_TRUE(sketch.changes(end).became_hot.empty());
  }
}

TEST(HotKeySketchTest, KeysHotInOneWindowAndAbsentFromTheNextCool) {
  HotKeySketch sketch({.sample_every = 1, .share = 0.1});
  EXPECT_EQ(sketch.changes(0), HotKeyChange{});
  for (std::int64_t i = 0; i < 1000; ++i) {  // window 1: [0, W)
    sketch.record(i % 2 == 0 ? "a" : "b", i * 1000);
  }
  HotKeyChange change = sketch.changes(kWindowNs);  // window 1 just ended
  EXPECT_EQ(change.became_hot, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(change.cooled.empty());
  EXPECT_EQ(sketch.total(kWindowNs), 1000U);

  for (std::int64_t i = 0; i < 1000; ++i) {  // window 2: [W, 2W)
    sketch.record(i % 4 == 0 ? "d" : "c", kWindowNs + i * 1000);
  }
  EXPECT_EQ(keys_of(sketch.hot(2 * kWindowNs - 1)), (std::vector<std::string>{"a", "b"}))
      << "window 2 has not ended: window 1 is still the last complete one";
  change = sketch.changes(2 * kWindowNs);
  EXPECT_EQ(change.became_hot, (std::vector<std::string>{"c", "d"}));  // hottest first
  EXPECT_EQ(change.cooled, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(sketch.changes(2 * kWindowNs + 1), HotKeyChange{}) << "nothing changed since";

  EXPECT_EQ(keys_of(sketch.hot(3 * kWindowNs - 1)), (std::vector<std::string>{"c", "d"}));
  EXPECT_TRUE(sketch.hot(3 * kWindowNs).empty()) << "a whole window without records";
  EXPECT_TRUE(sketch.hot(4 * kWindowNs).empty()) << "two whole windows without records";
  EXPECT_EQ(sketch.total(4 * kWindowNs), 0U);
  change = sketch.changes(4 * kWindowNs);
  EXPECT_TRUE(change.became_hot.empty());
  EXPECT_EQ(change.cooled, (std::vector<std::string>{"c", "d"}));
}

TEST(HotKeySketchTest, AWindowWithoutRecordsInBetweenIsEmpty) {
  HotKeySketch sketch({.sample_every = 1, .min_operations = 0});
  for (std::int64_t i = 0; i < 100; ++i) {
    sketch.record("first", i);               // window 0
    sketch.record("second", kWindowNs + i);  // window 1
  }
  EXPECT_EQ(keys_of(sketch.hot(kWindowNs + 100)), (std::vector<std::string>{"first"}));
  for (std::int64_t i = 0; i < 100; ++i) {
    sketch.record("fourth", 3 * kWindowNs + i);  // window 3: window 2 had nothing
  }
  EXPECT_TRUE(sketch.hot(3 * kWindowNs + 100).empty()) << "window 2 is the last complete one";
  EXPECT_EQ(sketch.total(3 * kWindowNs + 100), 0U);
  EXPECT_EQ(keys_of(sketch.hot(4 * kWindowNs)), (std::vector<std::string>{"fourth"}));
  EXPECT_EQ(sketch.total(4 * kWindowNs), 100U);
}

TEST(HotKeySketchTest, AnInheritedCountIsNotEvidence) {
  // Every key once: Space-Saving's 4 entries end up counting about 2,500 each, nearly all of it
  // inherited. Judged by the count they would look like 25% each; their lower bound is 1.
  HotKeySketch sketch({.capacity = 4, .sample_every = 1, .share = 0.2});
  for (std::int64_t i = 0; i < 10'000; ++i) {
    sketch.record("once:" + std::to_string(i), i);
  }
  EXPECT_TRUE(sketch.hot(kWindowNs).empty());
  EXPECT_EQ(sketch.total(kWindowNs), 10'000U);
}

TEST(HotKeySketchTest, AKeyThatArrivesHalfwayThroughTheWindowIsFound) {
  // 10,000 distinct keys, then the hot key on every other operation: 25% of the window, all of
  // it after the summary was full (it inherits a count, and is still found by what it adds).
  HotKeySketch sketch({.capacity = 8, .sample_every = 1, .share = 0.1});
  std::int64_t now = 0;
  for (int i = 0; i < 10'000; ++i) {
    sketch.record("cold:" + std::to_string(i), ++now);
  }
  for (int i = 0; i < 10'000; ++i) {
    sketch.record(i % 2 == 0 ? std::string("late:hot") : "cold2:" + std::to_string(i), ++now);
  }
  const std::vector<HotKey> hot = sketch.hot(kWindowNs);
  ASSERT_EQ(keys_of(hot), (std::vector<std::string>{"late:hot"}));
  EXPECT_GE(hot[0].count, 5000U);
  EXPECT_GE(hot[0].share, 0.25);
}

TEST(HotKeySketchTest, KeysThatNeverLeaveAreCountedExactlyThroughHeavyChurn) {
  // 8 keys counted from the start, then a quarter of the traffic one-off keys: the other 8
  // entries change hands on every one of them (each a removal from the index and an insertion),
  // and the 8 keys, always above the least count, must each be found in their one entry.
  HotKeySketch sketch({.capacity = 16, .sample_every = 1, .share = 0.02});
  std::mt19937_64 random(5);
  std::map<std::string, std::uint64_t> truth;
  std::int64_t now = 0;
  for (int round = 0; round < 10; ++round) {
    for (int k = 0; k < 8; ++k) {
      const std::string key = "steady:" + std::to_string(k);
      ++truth[key];
      sketch.record(key, ++now);
    }
  }
  for (int i = 0; i < 200'000; ++i) {
    if (i % 4 == 0) {
      sketch.record("once:" + std::to_string(i), ++now);
    } else {
      const std::string key = "steady:" + std::to_string(random() % 8);
      ++truth[key];
      sketch.record(key, ++now);
    }
  }
  const std::vector<HotKey> hot = sketch.hot(kWindowNs);
  ASSERT_EQ(hot.size(), 8U);
  for (const HotKey& key : hot) {
    EXPECT_EQ(key.count, truth[key.key]) << key.key;
  }
  EXPECT_EQ(truth.size(), 8U);
}

TEST(HotKeySketchTest, EveryEntryHoldsADistinctKeyAndNeverUndercounts) {
  // A share so small that hot() lists every entry (each has a guaranteed count of at least 1).
  // After each of many short windows, the entries are distinct keys, as many as the capacity
  // allows, their counts add up to the window's operations, and none counts less than its key's
  // truth: what Space-Saving guarantees, and what a key lost in the index (then counted again
  // in a second entry) would break. Half the keys come twice in a row, so that a key just
  // inserted is looked up again at once.
  for (const std::size_t capacity : {std::size_t{4}, std::size_t{16}, std::size_t{64}}) {
    SCOPED_TRACE(capacity);
    HotKeySketch sketch(
        {.capacity = capacity, .sample_every = 1, .share = 1e-9, .min_operations = 0});
    std::mt19937_64 random(capacity);
    const Zipf zipf(2'000, 0.8);
    constexpr std::uint64_t kOps = 300;
    for (std::int64_t window = 0; window < 300; ++window) {
      std::map<std::string, std::uint64_t> truth;
      std::int64_t now = window * kWindowNs;
      for (std::uint64_t ops = 0; ops < kOps;) {
        const std::string key = key_of(zipf(random));
        for (std::uint64_t times = 1 + random() % 2; times > 0 && ops < kOps; --times, ++ops) {
          ++truth[key];
          sketch.record(key, now++);
        }
      }
      const std::vector<HotKey> hot = sketch.hot((window + 1) * kWindowNs);
      ASSERT_EQ(hot.size(), std::min(capacity, truth.size())) << "window " << window;
      std::vector<std::string> keys = keys_of(hot);
      std::sort(keys.begin(), keys.end());
      ASSERT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end()) << "window " << window;
      std::uint64_t sum = 0;
      for (const HotKey& key : hot) {
        ASSERT_GE(key.count, truth[key.key]) << key.key << " in window " << window;
        sum += key.count;
      }
      ASSERT_EQ(sum, kOps) << "window " << window;
    }
  }
}

TEST(HotKeySketchTest, ACycleOfSampleEveryKeysIsNotAliased) {
  // A client that cycles through 8 keys: a fixed stride of 8 would count one of them only, and
  // report it at 100%.
  HotKeySketch sketch({.sample_every = 8, .share = 0.05});
  const std::vector<std::string> keys = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};
  for (std::int64_t i = 0; i < 80'000; ++i) {
    sketch.record(keys[static_cast<std::size_t>(i % 8)], i * 1000);
  }
  const std::vector<HotKey> hot = sketch.hot(kWindowNs);
  ASSERT_EQ(hot.size(), 8U);
  for (const HotKey& key : hot) {
    EXPECT_NEAR(key.share, 0.125, 0.02) << key.key;
  }
}

TEST(HotKeySketchTest, AQuietWindowHasNoHotKey) {
  HotKeySketch sketch({.sample_every = 1, .share = 0.1, .min_operations = 100});
  for (std::int64_t i = 0; i < 99; ++i) {  // window 1: 99 operations, all on one key
    sketch.record("only", i);
  }
  for (std::int64_t i = 0; i < 100; ++i) {  // window 2: 100
    sketch.record("only", kWindowNs + i);
  }
  EXPECT_TRUE(sketch.hot(kWindowNs).empty()) << "99 operations: too few to judge";
  EXPECT_EQ(keys_of(sketch.hot(2 * kWindowNs)), (std::vector<std::string>{"only"}));
}

TEST(HotKeySketchTest, EachBadOptionIsRefused) {
  EXPECT_EQ(hot_key_options_error(HotKeyOptions{}), std::nullopt);
  EXPECT_EQ(hot_key_options_error({.capacity = 1, .sample_every = 1, .share = 1.0}), std::nullopt);
  EXPECT_EQ(hot_key_options_error({.capacity = 65536}), std::nullopt);

  const auto refused = [](const HotKeyOptions& options, const std::string& field) {
    const std::optional<std::string> error = hot_key_options_error(options);
    EXPECT_TRUE(error.has_value() && error->find(field) != std::string::npos)
        << field << ": " << error.value_or("(accepted)");
  };
  refused({.capacity = 0}, "capacity");
  refused({.capacity = 65537}, "capacity");
  refused({.sample_every = 0}, "sample_every");
  refused({.share = 0.0}, "share");
  refused({.share = -0.5}, "share");
  refused({.share = 1.01}, "share");
  refused({.share = std::numeric_limits<double>::quiet_NaN()}, "share");
  refused({.share = std::numeric_limits<double>::infinity()}, "share");
  refused({.window = std::chrono::milliseconds{0}}, "window");
  refused({.window = std::chrono::milliseconds{-5}}, "window");
  refused({.window = std::chrono::hours{24 * 31}}, "window");
}

TEST(HotKeySketchTest, KeysLongerThan250BytesAreIgnored) {
  HotKeySketch sketch({.sample_every = 1, .min_operations = 0});
  const std::string longest(HotKeySketch::kMaxKeyBytes, 'x');
  const std::string too_long(HotKeySketch::kMaxKeyBytes + 1, 'x');
  for (std::int64_t i = 0; i < 100; ++i) {
    sketch.record(too_long, i);
  }
  EXPECT_TRUE(sketch.hot(kWindowNs).empty());
  EXPECT_EQ(sketch.total(kWindowNs), 0U) << "not counted at all";
  for (std::int64_t i = 0; i < 100; ++i) {
    sketch.record(too_long, 2 * kWindowNs + 2 * i);
    sketch.record(longest, 2 * kWindowNs + 2 * i + 1);
  }
  const std::vector<HotKey> hot = sketch.hot(3 * kWindowNs);
  ASSERT_EQ(hot.size(), 1U);
  EXPECT_EQ(hot[0].key, longest);
  EXPECT_EQ(hot[0].share, 1.0);
  EXPECT_EQ(sketch.total(3 * kWindowNs), 100U);
}

TEST(HotKeySketchTest, TheSameStreamGivesTheSameAnswers) {
  HotKeySketch first;
  HotKeySketch second;
  std::mt19937_64 random(99);
  const Zipf zipf(5'000, 1.1);
  std::size_t answers = 0;
  for (std::int64_t i = 0; i < 300'000; ++i) {
    const auto now = i * 10'000;  // 3 s: three windows
    const std::string key = key_of(zipf(random));
    first.record(key, now);
    second.record(key, now);
    if (i % 25'000 == 0) {
      const std::vector<HotKey> hot = first.hot(now);
      EXPECT_EQ(hot, second.hot(now)) << "at " << now;
      EXPECT_EQ(first.total(now), second.total(now));
      EXPECT_EQ(first.changes(now), second.changes(now));
      answers += hot.size();
    }
  }
  EXPECT_GT(answers, 0U) << "nothing was ever hot: the comparison proved nothing";
}

}  // namespace
}  // namespace hot_key_sketch_test
