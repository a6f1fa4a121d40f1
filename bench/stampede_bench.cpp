// SPDX-License-Identifier: MIT
// stampede_bench.cpp: a hot key that expires under 64 concurrent readers in 4 processes, with a
// loader that takes 50 ms (a database query), on 2 local memcached servers, two ways:
//
//   BM_Stampede/plain   get_or_load as before: every reader that misses runs the loader;
//   BM_Stampede/lease   get_or_load with a lease (LoadOptions::lease_ttl): one reader loads,
//                       the others wait for its value.
//
// Each arm forks 4 reader processes of 16 threads, each thread a client of its own, calling
// get_or_load on the key and pausing kThink between calls. This process deletes the key (an
// expiry) every kCycle, kExpiries times. Each reader process writes every call (its start, its
// end, whether it ran the loader, its outcome) to a file; this process merges them.
//
// Counters: expiries, loads (loader runs), loads_per_expiry, max_loads (the most in one
// expiry's cycle), calls, and the latency of the calls that began while the key was missing
// (from an expiry to the loader's time after it): episode_p50_ms, episode_p99_ms,
// episode_max_ms; timeouts (calls that waited out their deadline), errors, not_stored.

#include <benchmark/benchmark.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "benchmark_main.hpp"
#include "memshard/memshard.hpp"
#include "run_keys.hpp"
#include "support/memcached_server.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using memshard::ClientOptions;
using memshard::Errc;
using memshard::Server;
using Client = memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>>;
using std::chrono::milliseconds;

constexpr std::size_t kServers = 2;
constexpr std::size_t kProcesses = 4;
constexpr std::size_t kThreads = 16;  // per process: 64 readers
constexpr milliseconds kLoad{50};
constexpr milliseconds kThink{5};
constexpr milliseconds kCycle{500};
constexpr std::size_t kExpiries = 20;
constexpr milliseconds kSpinUp{500};

auto ns_of(Clock::time_point at) -> std::int64_t {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

/// Call: one get_or_load, as a reader process writes it.
struct Call {
  std::int64_t start = 0;  // steady ns (one clock for every process of the machine)
  std::int64_t end = 0;
  std::uint8_t loaded = 0;   // this call ran the loader
  std::uint8_t outcome = 0;  // 0 ok, 1 timeout, 2 not stored, 3 another failure
};

/// Arm: one way of loading.
struct Arm {
  const char* name;
  const char* label;
  bool lease;
};

constexpr std::array<Arm, 2> kArms = {
    Arm{"plain", "get_or_load: every reader that misses loads", false},
    Arm{"lease", "get_or_load with a lease (mg N): one reader loads, the others wait", true},
};

/// read_calls: every Call a reader process wrote to `path`.
auto read_calls(const std::filesystem::path& path) -> std::vector<Call> {
  std::ifstream in(path, std::ios::binary);
  std::vector<Call> calls;
  Call call;
  while (in.read(reinterpret_cast<char*>(&call), sizeof call)) {
    calls.push_back(call);
  }
  return calls;
}

/// percentile: the p-th percentile (0..1) of `values` (sorted here), 0 for none.
auto percentile(std::vector<double>& values, double p) -> double {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  const auto at = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

class Experiment {
 public:
  Experiment() {
    for (std::size_t i = 0; i < kServers; ++i) {
      processes_.emplace_back();
      servers_.push_back(memshard::parse_server(processes_.back().spec()));
    }
    memshard::bench::require_empty(servers_);
    key_ = memshard::bench::run_prefix() + "stampede:hot";
    dir_ = std::filesystem::temp_directory_path() /
           ("memshard-stampede-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  Experiment(const Experiment&) = delete;
  auto operator=(const Experiment&) -> Experiment& = delete;
  Experiment(Experiment&&) = delete;
  auto operator=(Experiment&&) -> Experiment& = delete;
  ~Experiment() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  static void add_context() {
    benchmark::AddCustomContext("memshard_stampede_processes", std::to_string(kProcesses));
    benchmark::AddCustomContext("memshard_stampede_threads", std::to_string(kThreads));
    benchmark::AddCustomContext("memshard_stampede_load_ms", std::to_string(kLoad.count()));
    benchmark::AddCustomContext("memshard_stampede_think_ms", std::to_string(kThink.count()));
    benchmark::AddCustomContext("memshard_stampede_cycle_ms", std::to_string(kCycle.count()));
    benchmark::AddCustomContext("memshard_stampede_expiries", std::to_string(kExpiries));
    benchmark::AddCustomContext("memshard_stampede_servers", std::to_string(kServers));
  }

  void run(benchmark::State& state, const Arm& arm) {
    try {
      std::vector<Call> calls;
      std::vector<std::int64_t> expiries;
      for (auto _ : state) {
        calls = run_arm(arm, expiries);
      }
      static_cast<void>(memshard::bench::erase_keys(servers_, std::vector<std::string>{key_}));
      memshard::bench::require_emptied(servers_, "deleting the hot key");
      report(state, calls, expiries);
      state.SetLabel(arm.label);
    } catch (const std::exception& error) {
      state.SkipWithError(error.what());
    }
  }

 private:
  auto run_arm(const Arm& arm, std::vector<std::int64_t>& expiries) -> std::vector<Call> {
    static_cast<void>(memshard::bench::erase_keys(servers_, std::vector<std::string>{key_}));
    const std::int64_t start = ns_of(Clock::now() + kSpinUp);
    const std::int64_t end =
        start + std::chrono::nanoseconds(kCycle).count() * static_cast<std::int64_t>(kExpiries);
    std::vector<pid_t> children;
    for (std::size_t p = 0; p < kProcesses; ++p) {
      const std::filesystem::path out = dir_ / (std::string(arm.name) + std::to_string(p));
      const pid_t child = ::fork();
      if (child < 0) {
        throw std::system_error(errno, std::generic_category(), "fork");
      }
      if (child == 0) {
        // Nothing of this process's objects is destroyed in the child: _exit.
        ::_exit(reader_process(arm, out, start, end));
      }
      children.push_back(child);
    }
    Client remover(servers_, ClientOptions{});
    expiries.clear();
    for (std::size_t e = 0; e < kExpiries; ++e) {
      const auto at = Clock::time_point(std::chrono::nanoseconds(start) + kCycle * e);
      std::this_thread::sleep_until(at);
      expiries.push_back(ns_of(Clock::now()));
      static_cast<void>(remover.remove(key_));
    }
    bool failed = false;
    for (const pid_t child : children) {
      int status = 0;
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    if (failed) {
      throw std::runtime_error("a reader process failed");
    }
    std::vector<Call> calls;
    for (std::size_t p = 0; p < kProcesses; ++p) {
      const std::filesystem::path out = dir_ / (std::string(arm.name) + std::to_string(p));
      std::vector<Call> some = read_calls(out);
      calls.insert(calls.end(), some.begin(), some.end());
      std::filesystem::remove(out);
    }
    return calls;
  }

  // One reader process: kThreads clients calling get_or_load until `end`; 0 when it wrote its
  // calls.
  auto reader_process(const Arm& arm, const std::filesystem::path& out, std::int64_t start,
                      std::int64_t end) noexcept -> int {
    try {
      std::vector<std::vector<Call>> logs(kThreads);
      std::vector<std::thread> threads;
      for (std::size_t t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          ClientOptions options;
          options.call_timeout = milliseconds{1'000};
          if (arm.lease) {
            options.load_options.lease_ttl = std::chrono::seconds{2};
            if (const char* poll = std::getenv("MEMSHARD_STAMPEDE_MAX_POLL_MS")) {
              options.load_options.max_poll = milliseconds{std::atoi(poll)};
            }
          }
          Client client(servers_, options);
          std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(start)));
          std::vector<Call>& log = logs[t];
          log.reserve(8192);
          while (ns_of(Clock::now()) < end) {
            Call call;
            call.start = ns_of(Clock::now());
            auto got = client.get_or_load(
                key_,
                [&] {
                  call.loaded = 1;
                  std::this_thread::sleep_for(kLoad);
                  return std::string(100, 'v');
                },
                memshard::Expiry::after(std::chrono::seconds{60}));
            call.end = ns_of(Clock::now());
            if (!got.ok()) {
              call.outcome = got.code() == Errc::kTimeout ? 1 : 3;
            } else if (got.code() == Errc::kNotStored) {
              call.outcome = 2;
            } else if (got.code() != Errc::kOk) {
              call.outcome = 3;  // the loader's value, and a cache that failed
            }
            log.push_back(call);
            std::this_thread::sleep_for(kThink);
          }
        });
      }
      for (auto& thread : threads) {
        thread.join();
      }
      std::ofstream file(out, std::ios::binary);
      for (const auto& log : logs) {
        file.write(reinterpret_cast<const char*>(log.data()),
                   static_cast<std::streamsize>(log.size() * sizeof(Call)));
      }
      return file ? 0 : 1;
    } catch (...) {
      return 1;
    }
  }

  static void report(benchmark::State& state, const std::vector<Call>& calls,
                     const std::vector<std::int64_t>& expiries) {
    const auto load_ns = std::chrono::nanoseconds(kLoad).count();
    std::vector<std::uint64_t> loads_in(expiries.size(), 0);
    std::vector<double> episode;
    std::vector<double> all;
    std::uint64_t loads = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t errors = 0;
    std::uint64_t not_stored = 0;
    for (const Call& call : calls) {
      const double ms = static_cast<double>(call.end - call.start) / 1e6;
      all.push_back(ms);
      // The cycle the call began in: the last expiry at or before it.
      const auto after = std::upper_bound(expiries.begin(), expiries.end(), call.start);
      if (after != expiries.begin()) {
        const auto cycle = static_cast<std::size_t>(after - expiries.begin() - 1);
        if (call.loaded != 0) {
          ++loads_in[cycle];
        }
        if (call.start - expiries[cycle] < load_ns) {
          episode.push_back(ms);
        }
      }
      loads += call.loaded;
      timeouts += call.outcome == 1 ? 1 : 0;
      not_stored += call.outcome == 2 ? 1 : 0;
      errors += call.outcome == 3 ? 1 : 0;
    }
    const auto set = [&state](const char* name, double value) {
      state.counters[name] = benchmark::Counter(value);
    };
    set("expiries", static_cast<double>(expiries.size()));
    set("loads", static_cast<double>(loads));
    std::uint64_t cycle_loads = 0;  // a load before the first expiry (the first fill) is none's
    for (const std::uint64_t n : loads_in) {
      cycle_loads += n;
    }
    set("loads_per_expiry",
        expiries.empty() ? 0
                         : static_cast<double>(cycle_loads) / static_cast<double>(expiries.size()));
    set("max_loads", loads_in.empty() ? 0
                                      : static_cast<double>(
                                            *std::max_element(loads_in.begin(), loads_in.end())));
    set("calls", static_cast<double>(calls.size()));
    set("episode_calls", static_cast<double>(episode.size()));
    set("episode_p50_ms", percentile(episode, 0.50));
    set("episode_p99_ms", percentile(episode, 0.99));
    set("episode_max_ms", episode.empty() ? 0 : *std::max_element(episode.begin(), episode.end()));
    set("all_p99_ms", percentile(all, 0.99));
    set("timeouts", static_cast<double>(timeouts));
    set("not_stored", static_cast<double>(not_stored));
    set("errors", static_cast<double>(errors));
  }

  std::vector<memshard::testing::MemcachedServer> processes_;
  std::vector<Server> servers_;
  std::string key_;
  std::filesystem::path dir_;
};

}  // namespace

auto main(int argc, char** argv) -> int {
  return memshard::bench::run_benchmarks(argc, argv, "memshard stampede benchmark", [] {
    Experiment experiment;
    Experiment::add_context();
    memshard::bench::register_arms("BM_Stampede", experiment, kArms);
    benchmark::RunSpecifiedBenchmarks();
  });
}
