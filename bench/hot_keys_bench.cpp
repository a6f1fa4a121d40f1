// SPDX-License-Identifier: MIT
// hot_keys_bench.cpp: what finding hot keys costs a client's operation, and how well it finds
// them: HotKeySketch (hotkeys/hot_key_sketch.hpp) on a generated stream, no server.
//
// The stream: 4,000,000 operations on 100,000 keys, Zipf s = 0.99 over the keys' ranks, one key
// in 10 being "page:home" (a hot key above the Zipf tail), made once with a fixed seed and kept
// as strings (a client's keys are strings). A synthetic clock advances 1 µs a call, so each
// 1 s window holds 1,000,000 operations.
//
//   BM_HotKeySketch/record/<sample_every>    record() over the stream, time per call (the
//                                            counted calls included);
//   BM_HotKeySketch/accuracy/<sample_every>  the keys hot() reports for the stream's third
//                                            window against the true ones (an exact count of
//                                            that window): counters true_hot, reported,
//                                            precision, recall, recall_2x (of the keys at twice
//                                            the share or more), and the share error of the
//                                            reported keys (max_share_error, in points).
// sample_every: 1, 8 (the default) and 16; the other options are the defaults (64 entries, 1%).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "memshard/hotkeys/hot_key_sketch.hpp"

namespace {

using memshard::HotKey;
using memshard::HotKeyOptions;
using memshard::HotKeySketch;

constexpr std::size_t kOperations = 4'000'000;
constexpr std::size_t kKeys = 100'000;
constexpr double kZipf = 0.99;
constexpr std::int64_t kStepNs = 1'000;  // the synthetic clock: 1 µs a call
constexpr std::int64_t kWindowNs = 1'000'000'000;

/// Stream: the operations' keys (indexes into `keys`), made once.
struct Stream {
  std::vector<std::string> keys;
  std::vector<std::uint32_t> order;

  Stream() {
    keys.reserve(kKeys + 1);
    for (std::size_t k = 0; k < kKeys; ++k) {
      keys.push_back("user:" + std::to_string(k) + ":profile");
    }
    keys.emplace_back("page:home");
    std::vector<double> cumulative(kKeys);
    double sum = 0;
    for (std::size_t rank = 0; rank < kKeys; ++rank) {
      sum += 1.0 / std::pow(static_cast<double>(rank + 1), kZipf);
      cumulative[rank] = sum;
    }
    std::mt19937_64 random(0x686F744B657973ULL);
    std::uniform_real_distribution<double> uniform(0.0, sum);
    order.reserve(kOperations);
    for (std::size_t i = 0; i < kOperations; ++i) {
      if (random() % 10 == 0) {
        order.push_back(static_cast<std::uint32_t>(kKeys));  // page:home
        continue;
      }
      const auto at = std::lower_bound(cumulative.begin(), cumulative.end(), uniform(random));
      order.push_back(static_cast<std::uint32_t>(at - cumulative.begin()));
    }
  }
};

auto stream() -> const Stream& {
  static const Stream made;
  return made;
}

void record(benchmark::State& state) {
  const Stream& s = stream();
  HotKeySketch sketch(HotKeyOptions{.sample_every = static_cast<std::uint32_t>(state.range(0))});
  std::size_t i = 0;
  std::int64_t now = 0;
  for (auto _ : state) {
    sketch.record(s.keys[s.order[i]], now);
    now += kStepNs;
    i = i + 1 == kOperations ? 0 : i + 1;
  }
  benchmark::DoNotOptimize(sketch.total(now));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void accuracy(benchmark::State& state) {
  const Stream& s = stream();
  const HotKeyOptions options{.sample_every = static_cast<std::uint32_t>(state.range(0))};
  std::vector<HotKey> reported;
  std::unordered_map<std::uint32_t, std::uint64_t> truth;  // the third window's exact counts
  std::uint64_t window_ops = 0;
  for (auto _ : state) {
    HotKeySketch sketch(options);
    truth.clear();
    window_ops = 0;
    for (std::size_t i = 0; i < kOperations; ++i) {
      const std::int64_t now = static_cast<std::int64_t>(i) * kStepNs;
      sketch.record(s.keys[s.order[i]], now);
      if (now / kWindowNs == 2) {
        ++truth[s.order[i]];
        ++window_ops;
      }
    }
    reported = sketch.hot(3 * kWindowNs);  // the third window has just ended
  }
  std::size_t true_hot = 0;
  std::size_t clearly_hot = 0;  // at twice the share or more
  std::size_t clearly_found = 0;
  const auto reported_key = [&reported, &s](std::uint32_t index) {
    return std::any_of(reported.begin(), reported.end(),
                       [&](const HotKey& hot) { return hot.key == s.keys[index]; });
  };
  for (const auto& [key, count] : truth) {
    const double share = static_cast<double>(count) / static_cast<double>(window_ops);
    true_hot += share >= options.share ? 1U : 0U;
    if (share >= 2 * options.share) {
      ++clearly_hot;
      clearly_found += reported_key(key) ? 1U : 0U;
    }
  }
  std::size_t right = 0;
  double max_error = 0;
  for (const HotKey& hot : reported) {
    const auto index = static_cast<std::uint32_t>(std::find(s.keys.begin(), s.keys.end(), hot.key) -
                                                  s.keys.begin());
    const auto found = truth.find(index);
    const double share = found == truth.end()
                             ? 0.0
                             : static_cast<double>(found->second) / static_cast<double>(window_ops);
    right += share >= options.share ? 1U : 0U;
    max_error = std::max(max_error, std::abs(hot.share - share) * 100);
  }
  state.counters["true_hot"] = static_cast<double>(true_hot);
  state.counters["reported"] = static_cast<double>(reported.size());
  state.counters["precision"] =
      reported.empty() ? 1.0 : static_cast<double>(right) / static_cast<double>(reported.size());
  state.counters["recall"] =
      true_hot == 0 ? 1.0 : static_cast<double>(right) / static_cast<double>(true_hot);
  state.counters["recall_2x"] =
      clearly_hot == 0 ? 1.0
                       : static_cast<double>(clearly_found) / static_cast<double>(clearly_hot);
  state.counters["max_share_error"] = max_error;
  state.counters["window_operations"] = static_cast<double>(window_ops);
}

BENCHMARK(record)->Name("BM_HotKeySketch/record")->Arg(1)->Arg(8)->Arg(16);
BENCHMARK(accuracy)
    ->Name("BM_HotKeySketch/accuracy")
    ->Arg(1)
    ->Arg(8)
    ->Arg(16)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
