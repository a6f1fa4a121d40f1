// SPDX-License-Identifier: MIT
// resize_bench.cpp: how many keys move when one server joins or leaves.
//
// One million deterministic keys are placed on N servers (N = 4, 10, 100, 1000,
// 10000), then on N + 1 (one server appended) or N - 1 (the last server
// removed); a key moved when its server changed. Counters:
//   moved          fraction of all keys that changed server;
//   theory         the expected fraction: modulo N/(N+1) on add and (N-1)/N on
//                  remove; a ring 1/(N+1) on add and 1/N on remove;
//   needless       fraction of keys that moved from one surviving server to
//                  another (a ring should move none; modulo moves most);
//   points_before, points_after  points per server (rings only).
// Runs once (Iterations(1)): the time is that of placing the keys twice.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bench_support.hpp"
#include "memshard/memshard.hpp"
#include "placements.hpp"

namespace {

using memshard::Server;
using memshard::bench::KetamaMd5Weighted;
using memshard::bench::million_key_hashes;
using memshard::bench::ModuloCrc32;
using memshard::bench::points_per_server;
using memshard::bench::RingCrc32;

// Places every key with `before` and `after`; servers below `kept` are the
// same server in both lists.
template <class Placement>
void resize(benchmark::State& state, std::size_t before_size, std::size_t after_size) {
  const std::vector<Server> all = memshard::bench::make_servers(std::max(before_size, after_size));
  const std::span<const Server> servers(all);
  const auto before = Placement::make(servers.first(before_size));
  const auto after = Placement::make(servers.first(after_size));
  using Hash = typename decltype(before)::hasher;
  const std::vector<std::uint32_t>& hashes = million_key_hashes<Hash>();
  const std::size_t kept = std::min(before_size, after_size);
  std::size_t moved = 0;
  std::size_t needless = 0;
  for (auto _ : state) {
    moved = 0;
    needless = 0;
    for (const std::uint32_t hash : hashes) {
      const std::size_t from = before.locate_hash(hash);
      const std::size_t to = after.locate_hash(hash);
      if (from != to) {
        ++moved;
        if (from < kept && to < kept) {
          ++needless;
        }
      }
    }
    benchmark::DoNotOptimize(moved);
  }
  const auto keys = static_cast<double>(hashes.size());
  const auto n = static_cast<double>(before_size);
  const bool add = after_size > before_size;
  double theory = 0;
  if (Placement::kRing) {
    theory = add ? 1 / (n + 1) : 1 / n;
  } else {
    theory = add ? n / (n + 1) : (n - 1) / n;
  }
  state.counters["servers"] = n;
  state.counters["keys"] = keys;
  state.counters["moved"] = static_cast<double>(moved) / keys;
  state.counters["theory"] = theory;
  state.counters["needless"] = static_cast<double>(needless) / keys;
  if constexpr (Placement::kRing) {
    state.counters["points_before"] = points_per_server(before);
    state.counters["points_after"] = points_per_server(after);
  }
  state.SetLabel(Placement::kName);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(hashes.size()));
}

template <class Placement>
void BM_AddOne(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  resize<Placement>(state, n, n + 1);
}

template <class Placement>
void BM_RemoveOne(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  resize<Placement>(state, n, n - 1);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("servers")->Iterations(1)->Unit(benchmark::kMillisecond);
  for (const std::int64_t n : {4, 10, 100, 1000, 10000}) {
    b->Arg(n);
  }
}

BENCHMARK_TEMPLATE(BM_AddOne, ModuloCrc32)->Apply(sizes);
BENCHMARK_TEMPLATE(BM_AddOne, RingCrc32)->Apply(sizes);
BENCHMARK_TEMPLATE(BM_AddOne, KetamaMd5Weighted)->Apply(sizes);
BENCHMARK_TEMPLATE(BM_RemoveOne, ModuloCrc32)->Apply(sizes);
BENCHMARK_TEMPLATE(BM_RemoveOne, RingCrc32)->Apply(sizes);
BENCHMARK_TEMPLATE(BM_RemoveOne, KetamaMd5Weighted)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
