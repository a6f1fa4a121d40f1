// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_CLIENT_PAIRED_STATISTICS_HPP_
#define MEMSHARD_BENCH_CLIENT_PAIRED_STATISTICS_HPP_

// client/paired_statistics.hpp: how the client benchmark measures its
// contenders: interleaved rounds in a fresh random order, paired ratios to the
// baseline round by round, their medians with distribution-free ~95%
// confidence intervals, published as benchmark counters; or, in callgrind
// mode, each contender alone between a zero and a dump of the counts, its
// calls made inside calls_alone.

#include <benchmark/benchmark.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define MEMSHARD_BENCH_HAS_CALLGRIND 1
#else
#define MEMSHARD_BENCH_HAS_CALLGRIND 0
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "client/workload.hpp"

namespace memshard::bench::client {

/// kDefaultRounds: timed rounds without MEMSHARD_BENCH_CLIENT_ROUNDS.
inline constexpr std::size_t kDefaultRounds = 500;
/// kWarmupRounds: untimed rounds before them.
inline constexpr std::size_t kWarmupRounds = 3;

/// Rounds: ns per call of every contender (outer) in every round (inner).
using Rounds = std::vector<std::vector<double>>;

/// interleave: kWarmupRounds + `rounds` rounds, each running every contender
/// for `batch` calls in a fresh random order; answers the ns per call of the
/// timed rounds and adds the failed calls to `failed`.
[[nodiscard]] inline auto interleave(const std::vector<Contender>& contenders, std::size_t rounds,
                                     std::size_t batch, std::size_t& failed) -> Rounds {
  using Clock = std::chrono::steady_clock;
  const std::size_t count = contenders.size();
  Rounds ns(count, std::vector<double>());
  for (auto& row : ns) {
    row.reserve(rounds);
  }
  interleaved_rounds(
      count, kWarmupRounds, rounds, 0x726F756E6473ULL, [&](std::size_t c, bool timed) {
        const auto start = Clock::now();
        failed += contenders[c].run(batch);
        const auto stop = Clock::now();
        if (timed) {
          ns[c].push_back(std::chrono::duration<double, std::nano>(stop - start).count() /
                          static_cast<double>(batch));
        }
      });
  return ns;
}

/// calls_alone: `contender`'s `calls` calls, in callgrind mode. Never inlined: its inclusive cost
/// in a dump is what the calls cost the thread that makes them, without what other threads of the
/// process (the deadline watch's ticks) did meanwhile, which the dump's total includes
/// (bench/report/client.py reads both).
[[gnu::noinline]] inline auto calls_alone(const Contender& contender, std::size_t calls)
    -> std::size_t {
  return contender.run(calls);
}

/// measure: runs `contenders` (the last is the baseline) and publishes the
/// counters (<name>_ns, <name>_keys, <name>_ratio with _lo and _hi,
/// <name>_ratio_ref against its reference, <name>_ratio_<other> against each
/// of also_against, rounds, batch, keys_per_call); or, with
/// MEMSHARD_BENCH_CALLGRIND_OPS, runs each alone between a zero and a dump of
/// the stats named "<benchmark_name>/<contender>/<calls>/<keys per call>".
inline void measure(benchmark::State& state, const std::string& benchmark_name,
                    const std::vector<Contender>& contenders, std::size_t batch,
                    std::size_t keys_per_call) {
  const std::size_t callgrind_calls = env_count("MEMSHARD_BENCH_CALLGRIND_OPS", 0, 0);
  std::size_t failed = 0;
  if (callgrind_calls > 0) {
    for (auto _ : state) {
      for (const Contender& contender : contenders) {
        // A multi-get costs about as much as 10 single calls: a tenth as many.
        const std::size_t calls =
            keys_per_call > 1 ? std::max<std::size_t>(1, callgrind_calls / 10) : callgrind_calls;
        const std::string name = benchmark_name + "/" + contender.name + "/" +
                                 std::to_string(calls) + "/" + std::to_string(keys_per_call);
#if MEMSHARD_BENCH_HAS_CALLGRIND
        CALLGRIND_ZERO_STATS;
#endif
        failed += calls_alone(contender, calls);
#if MEMSHARD_BENCH_HAS_CALLGRIND
        CALLGRIND_DUMP_STATS_AT(name.c_str());
#endif
      }
    }
    state.counters["callgrind_calls"] = static_cast<double>(callgrind_calls);
  } else {
    const std::size_t rounds = env_count("MEMSHARD_BENCH_CLIENT_ROUNDS", kDefaultRounds, 5);
    Rounds ns;
    for (auto _ : state) {
      ns = interleave(contenders, rounds, batch, failed);
    }
    // Paired ratios: contender c over contender `to`, round by round.
    const auto publish = [&state, &ns](const std::string& prefix, std::size_t c, std::size_t to) {
      std::vector<double> ratios(ns[c].size());
      for (std::size_t r = 0; r < ratios.size(); ++r) {
        ratios[r] = ns[c][r] / ns[to][r];
      }
      const MedianInterval ratio = median_interval(std::move(ratios));
      state.counters[prefix] = ratio.median;
      state.counters[prefix + "_lo"] = ratio.low;
      state.counters[prefix + "_hi"] = ratio.high;
    };
    for (std::size_t c = 0; c < contenders.size(); ++c) {
      const std::string& name = contenders[c].name;
      state.counters[name + "_ns"] = median(ns[c]);
      state.counters[name + "_keys"] = static_cast<double>(contenders[c].keys);
      publish(name + "_ratio", c, contenders.size() - 1);
      for (std::size_t to = 0; to < contenders.size(); ++to) {
        if (contenders[to].name == contenders[c].reference) {
          publish(name + "_ratio_ref", c, to);
        }
        const auto& others = contenders[c].also_against;
        if (std::find(others.begin(), others.end(), contenders[to].name) != others.end()) {
          publish(name + "_ratio_" + contenders[to].name, c, to);
        }
      }
    }
    state.counters["rounds"] = static_cast<double>(rounds);
    state.counters["batch"] = static_cast<double>(batch);
  }
  state.counters["keys_per_call"] = static_cast<double>(keys_per_call);
  if (failed > 0) {
    state.SkipWithError((std::to_string(failed) + " calls failed while timed").c_str());
  }
}

}  // namespace memshard::bench::client

#endif  // MEMSHARD_BENCH_CLIENT_PAIRED_STATISTICS_HPP_
