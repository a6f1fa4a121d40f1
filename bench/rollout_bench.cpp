// SPDX-License-Identifier: MIT
// rollout_bench.cpp: a 4 -> 5 server migration rolled out to 8 processes, each with its own
// client, reading and writing 64 shared keys (70% gets, 25% sets, 5% deletes, as fast as they
// can) on 5 local memcached servers, two ways:
//
//   BM_Rollout/coordinated    the processes are members of a fleet in a local etcd
//                             (join_fleet); the benchmark migrates it (kFast) 0.0 s after the
//                             start of the change, and commits it 4 s after, through FleetAdmin:
//                             each phase waits for every member;
//   BM_Rollout/uncoordinated  each process calls begin_migration (kFast) on its own client at a
//                             random moment of the change's first 2 s, and commit_migration at a
//                             random moment 4 to 6 s after its start, as a configuration push
//                             reaches processes one after another.
//
// Each process logs every call (tests/fleet_member_process.cpp, built here as
// memshard_bench_fleet_member), and the merged logs are checked by the history checker
// (tests/support/history.hpp): stale reads (a hit older than a write acknowledged before the get
// began), wrong values, lost writes. Counters: those, the hits, and the hit rate of every 500 ms
// window from 1 s before the change to 8 s after its start (w00 ... w17).

#include <benchmark/benchmark.h>
#include <signal.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "memshard/fleet.hpp"
#include "memshard/memshard.hpp"
#include "support/child_process.hpp"
#include "support/etcd_server.hpp"
#include "support/history.hpp"
#include "support/memcached_server.hpp"

#ifndef MEMSHARD_BENCH_MEMBER_PROCESS
#error "MEMSHARD_BENCH_MEMBER_PROCESS: the path of memshard_bench_fleet_member"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using memshard::testing::ChildProcess;
using memshard::testing::MemcachedServer;

constexpr std::size_t kProcesses = 8;
constexpr std::size_t kKeys = 64;
constexpr std::size_t kServers = 5;
constexpr auto kWarmUp = std::chrono::seconds{2};
constexpr auto kCommitAfter = std::chrono::seconds{4};
constexpr auto kStagger = std::chrono::seconds{2};
constexpr auto kEnd = std::chrono::seconds{8};
constexpr auto kWindow = std::chrono::milliseconds{500};
constexpr std::size_t kWindows = 18;  // from 1 s before the change to kEnd after it

auto ns_of(Clock::time_point at) -> std::int64_t {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

// The gets and sets the servers answered so far.
auto traffic(const std::vector<MemcachedServer>& servers) -> std::uint64_t {
  std::uint64_t sum = 0;
  for (const MemcachedServer& server : servers) {
    sum += server.gets_and_sets();
  }
  return sum;
}

// A temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = std::filesystem::temp_directory_path() / "memshard-rollout-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot make a temporary directory");
    }
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  auto operator=(const TempDir&) -> TempDir& = delete;
  TempDir(TempDir&&) = delete;
  auto operator=(TempDir&&) -> TempDir& = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] auto path() const -> const std::filesystem::path& { return path_; }

 private:
  std::filesystem::path path_;
};

void run_arm(benchmark::State& state, bool coordinated) {
  std::vector<MemcachedServer> servers(kServers);
  std::vector<memshard::Server> all;
  std::string list;
  for (const MemcachedServer& server : servers) {
    all.push_back(memshard::parse_server(server.spec()));
    list += (list.empty() ? "" : ",") + server.spec();
  }
  const std::vector<memshard::Server> before(all.begin(), all.end() - 1);
  std::unique_ptr<memshard::testing::EtcdServer> etcd;
  std::unique_ptr<memshard::FleetAdmin> admin;
  if (coordinated) {
    etcd = std::make_unique<memshard::testing::EtcdServer>();
    admin = std::make_unique<memshard::FleetAdmin>(etcd->url());
    memshard::FleetRecord record;
    record.placement = {before, "libmemcached-ketama", {}};
    if (const memshard::StoreStatus created = admin->create("rollout", record); !created) {
      throw std::runtime_error("cannot create the fleet: " + created.message());
    }
  }
  TempDir logs;
  const auto log_of = [&](std::size_t p) {
    return (logs.path() / ("process-" + std::to_string(p) + ".log")).string();
  };
  const Clock::time_point change = Clock::now() + kWarmUp;
  std::mt19937_64 rng(0x726F6C6C6F7574ULL);
  std::vector<std::unique_ptr<ChildProcess>> processes;
  for (std::size_t p = 0; p < kProcesses; ++p) {
    std::vector<std::string> args = {
        coordinated ? etcd->url() : "-", "rollout", std::to_string(p), std::to_string(kProcesses),
        std::to_string(kKeys),           "60",      log_of(p),         list};
    if (!coordinated) {
      const auto stagger = std::chrono::nanoseconds(static_cast<std::int64_t>(
          rng() % static_cast<std::uint64_t>(std::chrono::nanoseconds(kStagger).count())));
      const auto stagger_commit = std::chrono::nanoseconds(static_cast<std::int64_t>(
          rng() % static_cast<std::uint64_t>(std::chrono::nanoseconds(kStagger).count())));
      args.insert(args.end(), {"alone", std::to_string(ns_of(change + stagger)),
                               std::to_string(ns_of(change + kCommitAfter + stagger_commit))});
    }
    processes.push_back(
        std::make_unique<ChildProcess>(MEMSHARD_BENCH_MEMBER_PROCESS, std::move(args), -1, -1, 2));
  }
  const std::uint64_t at_start = traffic(servers);
  while (traffic(servers) < at_start + 3'000) {
    if (Clock::now() > change) {
      throw std::runtime_error("the processes made too few calls before the change");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  std::this_thread::sleep_until(change);
  if (coordinated) {
    const memshard::FleetCommand migrate{memshard::FleetCommandKind::kMigrate,
                                         {all, "libmemcached-ketama", {}},
                                         memshard::MigrationConsistency::kFast,
                                         false};
    if (const auto migrated = admin->apply("rollout", migrate, std::chrono::seconds{20});
        !migrated) {
      throw std::runtime_error("migrate: " + migrated.message());
    }
    std::this_thread::sleep_until(change + kCommitAfter);
    const memshard::FleetCommand commit{memshard::FleetCommandKind::kCommit, {}, {}, false};
    if (const auto committed = admin->apply("rollout", commit, std::chrono::seconds{20});
        !committed) {
      throw std::runtime_error("commit: " + committed.message());
    }
  }
  std::this_thread::sleep_until(change + kEnd);  // the load after the change
  for (auto& process : processes) {
    process->terminate();
  }
  std::vector<std::string> keys;
  for (std::size_t k = 0; k < kKeys; ++k) {
    keys.push_back("fleet:" + std::to_string(k));
  }
  memshard::testing::History history(keys, kProcesses);
  std::vector<double> gets(kWindows, 0);
  std::vector<double> hits(kWindows, 0);
  const Clock::time_point first = change - std::chrono::seconds{1};
  for (std::size_t p = 0; p < kProcesses; ++p) {
    if (processes[p]->wait_for(std::chrono::seconds{20}) != 0) {
      throw std::runtime_error("process " + std::to_string(p) + " failed");
    }
    std::FILE* log = std::fopen(log_of(p).c_str(), "rb");
    if (log == nullptr) {
      throw std::runtime_error("no log of process " + std::to_string(p));
    }
    memshard::testing::Call call;
    while (std::fread(&call, sizeof call, 1, log) == 1) {
      history.record(call);
      if (call.op == memshard::testing::Op::kGet && call.start >= first) {
        const auto window = static_cast<std::size_t>((call.start - first) / kWindow);
        if (window < kWindows) {
          gets[window] += 1;
          hits[window] += call.read == memshard::testing::Read::kHit ? 1 : 0;
        }
      }
    }
    std::fclose(log);
  }
  const memshard::testing::HistoryReport report = history.check(std::chrono::milliseconds{2'000});
  state.counters["calls"] = static_cast<double>(report.calls);
  state.counters["gets"] = static_cast<double>(report.gets);
  state.counters["hits"] = static_cast<double>(report.hits);
  state.counters["stale"] = static_cast<double>(report.stale_reads);
  state.counters["stale_rate"] =
      report.hits == 0 ? 0
                       : static_cast<double>(report.stale_reads) / static_cast<double>(report.hits);
  state.counters["wrong"] = static_cast<double>(report.wrong_values);
  state.counters["lost"] = static_cast<double>(report.lost_writes);
  for (std::size_t w = 0; w < kWindows; ++w) {
    char name[8];
    std::snprintf(name, sizeof name, "w%02zu", w);
    state.counters[name] = gets[w] == 0 ? 0 : hits[w] / gets[w];
  }
}

void BM_Rollout(benchmark::State& state, bool coordinated) {
  for (auto _ : state) {
    try {
      run_arm(state, coordinated);
    } catch (const std::exception& error) {
      state.SkipWithError(error.what());
    }
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_Rollout, coordinated, true)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Rollout, uncoordinated, false)->Iterations(1)->Unit(benchmark::kSecond);

auto main(int argc, char** argv) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  try {
    benchmark::AddCustomContext("memshard_rollout_processes", std::to_string(kProcesses));
    benchmark::AddCustomContext("memshard_rollout_keys", std::to_string(kKeys));
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << "memshard rollout benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
