// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_BENCHMARK_MAIN_HPP_
#define MEMSHARD_BENCH_BENCHMARK_MAIN_HPP_

// benchmark_main.hpp: the main() of a benchmark whose setup can fail (servers to start, data to
// write): Google Benchmark's flags, then the body, which builds what the benchmarks share,
// registers them (one per arm of an experiment: register_arms) and runs them; a failure is one
// line on stderr and exit code 1.

#include <benchmark/benchmark.h>

#include <exception>
#include <iostream>
#include <string>
#include <string_view>

namespace memshard::bench {

/// run_benchmarks: `body()` between benchmark::Initialize and benchmark::Shutdown; 1 when the
/// flags are not Google Benchmark's or `body` throws (after "<name>: <what>" on stderr), else 0.
template <class Body>
auto run_benchmarks(int argc, char** argv, std::string_view name, Body&& body) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  try {
    body();
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << name << ": " << error.what() << '\n';
    return 1;
  }
  return 0;
}

/// register_arms: one benchmark "<family>/<arm.name>" for each of `arms`, run once and reported
/// in seconds, that calls experiment.run(state, arm). `experiment` and `arms` outlive the run.
template <class Experiment, class Arms>
void register_arms(std::string_view family, Experiment& experiment, const Arms& arms) {
  for (const auto& arm : arms) {
    const std::string name = std::string(family) + "/" + std::string(arm.name);
    benchmark::RegisterBenchmark(
        name.c_str(), [&experiment, &arm](benchmark::State& state) { experiment.run(state, arm); })
        ->Iterations(1)
        ->Unit(benchmark::kSecond);
  }
}

}  // namespace memshard::bench

#endif  // MEMSHARD_BENCH_BENCHMARK_MAIN_HPP_
