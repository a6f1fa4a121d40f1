// SPDX-License-Identifier: MIT
// properties_bench.cpp: the properties of a distribution named by Karger et
// al. ("Consistent hashing and random trees", STOC 1997), modulo against
// ketama. Balance (the first property) is measured in balance_bench.cpp; this
// file measures the other three, on one million deterministic keys:
//
// Monotonicity: when servers are added, a key may only move from an old server
// to a new one. BM_Monotonicity<P>/servers:n/added:m places every key on n
// servers, then on n + m (m servers appended to the list). Counters:
//   moved           fraction of the keys that changed server;
//   theory          the fraction expected to move: a ring m/(n+m); modulo
//                   1 - gcd(n,m)/(n+m) (h % n == h % (n+m) for gcd(n,m) in
//                   n+m hashes);
//   to_new          fraction that moved to one of the m new servers;
//   violations      keys (a count, not a fraction) that moved from one old
//                   server to another: zero for a monotone placement;
//   peak_over_mean  balance on the n servers: the busiest one's keys / mean;
//   points_before, points_after  points per server (rings).
//
// Spread and load: V clients ("views") each know a different subset of the N
// servers, and place keys on the servers they know. Spread of a key: the
// number of distinct servers it is placed on across the V views. Load of a
// server: the number of distinct keys placed on it across all V views. With
// K keys, K/N is the mean load when every client knows all N servers, and the
// counters are relative to it:
//   spread_mean, spread_max          over the keys (1 is ideal);
//   load_mean, load_max              over the servers, / (K/N) (load_mean
//                                    equals spread_mean: both count the
//                                    distinct (key, server) pairs);
//   view_load_max                    the busiest server in any single view,
//                                    / (K/N): what the views' smaller server
//                                    lists cost before they are combined;
//   view_min, view_max               servers per view.
// Two kinds of views:
//   BM_ViewsRolling<P>/servers:N/views:V   a rolling deploy that adds servers
//       one at a time: view v (0 .. V-1) knows the first N - V + 1 + v servers
//       of the list (the last view knows all N);
//   BM_ViewsRandom<P>/servers:N/views:V    Karger's setting: view v knows a
//       random subset of at least half the servers: its size is drawn
//       uniformly from N/2 .. N, its members uniformly (a fixed seed), kept in
//       list order.
//
// Placements: modulo-crc32; ketama-md5 with a fixed 160 md5 x4 points per
// server (the libketama ring without its float32 point count); and
// ketama-md5-weighted (profiles::libmemcached_ketama_weighted, the libketama
// ring itself), whose float32 count gives 156 instead of 160 points to every
// server for some N, so that a change of N can move keys between old servers.
// Runs once (Iterations(1)): the time is that of building and placing.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "memshard/memshard.hpp"
#include "placements.hpp"

namespace {

using memshard::Server;
using memshard::bench::KetamaMd5Fixed160;
using memshard::bench::KetamaMd5Weighted;
using memshard::bench::million_key_hashes;
using memshard::bench::ModuloCrc32;
using memshard::bench::points_per_server;

constexpr std::uint64_t kViewSeed = 0x7669657773ULL;

template <class Placement>
void BM_Monotonicity(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const std::vector<Server> all = memshard::bench::make_servers(n + m);
  const std::span<const Server> servers(all);
  const auto before = Placement::make(servers.first(n));
  const auto after = Placement::make(servers);
  using Hash = typename decltype(before)::hasher;
  const std::vector<std::uint32_t>& hashes = million_key_hashes<Hash>();
  std::vector<std::uint64_t> counts(n, 0);
  std::size_t to_new = 0;
  std::size_t violations = 0;
  for (auto _ : state) {
    std::fill(counts.begin(), counts.end(), 0);
    to_new = 0;
    violations = 0;
    for (const std::uint32_t hash : hashes) {
      const std::size_t from = before.locate_hash(hash);
      const std::size_t to = after.locate_hash(hash);
      ++counts[from];
      if (from != to) {
        if (to >= n) {
          ++to_new;
        } else {
          ++violations;
        }
      }
    }
    benchmark::DoNotOptimize(counts.data());
  }
  const auto keys = static_cast<double>(hashes.size());
  const auto nd = static_cast<double>(n);
  const auto md = static_cast<double>(m);
  state.counters["servers"] = nd;
  state.counters["added"] = md;
  state.counters["keys"] = keys;
  state.counters["moved"] = static_cast<double>(to_new + violations) / keys;
  state.counters["theory"] =
      Placement::kRing ? md / (nd + md) : 1 - static_cast<double>(std::gcd(n, m)) / (nd + md);
  state.counters["to_new"] = static_cast<double>(to_new) / keys;
  state.counters["violations"] = static_cast<double>(violations);
  state.counters["peak_over_mean"] =
      memshard::bench::load_stats(std::span<const std::uint64_t>(counts)).peak_over_mean;
  if constexpr (Placement::kRing) {
    state.counters["points_before"] = points_per_server(before);
    state.counters["points_after"] = points_per_server(after);
  }
  state.SetLabel(Placement::kName);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(hashes.size()));
}

// views_run: places every key in every view (views[v] lists the servers view
// v knows, as indices into the N servers, in list order) and reports spread
// and load; see the file comment.
template <class Placement>
void views_run(benchmark::State& state, std::size_t total,
               const std::vector<std::vector<std::uint32_t>>& views) {
  const std::vector<Server> all = memshard::bench::make_servers(total);
  const std::size_t v_count = views.size();
  using Hash = typename decltype(Placement::make(std::span<const Server>(all)))::hasher;
  const std::vector<std::uint32_t>& hashes = million_key_hashes<Hash>();
  const std::size_t k_count = hashes.size();
  // placed[k * V + v]: the server (index into all) of key k in view v.
  std::vector<std::uint32_t> placed(k_count * v_count);
  std::vector<std::uint64_t> load(total, 0);
  std::vector<std::uint64_t> view_load(total, 0);
  std::uint64_t view_load_max = 0;
  std::uint64_t spread_sum = 0;
  std::size_t spread_max = 0;
  for (auto _ : state) {
    view_load_max = 0;
    for (std::size_t v = 0; v < v_count; ++v) {
      std::vector<Server> known;
      known.reserve(views[v].size());
      for (const std::uint32_t index : views[v]) {
        known.push_back(all[index]);
      }
      const auto locator = Placement::make(std::span<const Server>(known));
      std::fill(view_load.begin(), view_load.end(), 0);
      for (std::size_t k = 0; k < k_count; ++k) {
        const std::uint32_t server = views[v][locator.locate_hash(hashes[k])];
        placed[k * v_count + v] = server;
        ++view_load[server];
      }
      view_load_max =
          std::max(view_load_max, *std::max_element(view_load.begin(), view_load.end()));
    }
    std::fill(load.begin(), load.end(), 0);
    spread_sum = 0;
    spread_max = 0;
    for (std::size_t k = 0; k < k_count; ++k) {
      const auto row = placed.begin() + static_cast<std::ptrdiff_t>(k * v_count);
      const auto row_end = row + static_cast<std::ptrdiff_t>(v_count);
      std::sort(row, row_end);
      const auto distinct_end = std::unique(row, row_end);
      const auto spread = static_cast<std::size_t>(distinct_end - row);
      for (auto it = row; it != distinct_end; ++it) {
        ++load[*it];
      }
      spread_sum += spread;
      spread_max = std::max(spread_max, spread);
    }
    benchmark::DoNotOptimize(load.data());
  }
  const auto keys = static_cast<double>(k_count);
  const double single_mean = keys / static_cast<double>(total);
  std::size_t view_min = total;
  std::size_t view_max = 0;
  for (const auto& view : views) {
    view_min = std::min(view_min, view.size());
    view_max = std::max(view_max, view.size());
  }
  state.counters["servers"] = static_cast<double>(total);
  state.counters["views"] = static_cast<double>(v_count);
  state.counters["view_min"] = static_cast<double>(view_min);
  state.counters["view_max"] = static_cast<double>(view_max);
  state.counters["keys"] = keys;
  state.counters["spread_mean"] = static_cast<double>(spread_sum) / keys;
  state.counters["spread_max"] = static_cast<double>(spread_max);
  state.counters["load_mean"] = static_cast<double>(spread_sum) / static_cast<double>(total) /
                                single_mean;  // the sum of loads is the sum of spreads
  state.counters["load_max"] =
      static_cast<double>(*std::max_element(load.begin(), load.end())) / single_mean;
  state.counters["view_load_max"] = static_cast<double>(view_load_max) / single_mean;
  state.SetLabel(Placement::kName);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(k_count * v_count));
}

template <class Placement>
void BM_ViewsRolling(benchmark::State& state) {
  const auto total = static_cast<std::size_t>(state.range(0));
  const auto v_count = static_cast<std::size_t>(state.range(1));
  std::vector<std::vector<std::uint32_t>> views(v_count);
  for (std::size_t v = 0; v < v_count; ++v) {
    views[v].resize(total - v_count + 1 + v);
    std::iota(views[v].begin(), views[v].end(), std::uint32_t{0});
  }
  views_run<Placement>(state, total, views);
}

template <class Placement>
void BM_ViewsRandom(benchmark::State& state) {
  const auto total = static_cast<std::size_t>(state.range(0));
  const auto v_count = static_cast<std::size_t>(state.range(1));
  memshard::bench::SplitMix64 random(kViewSeed + total);
  std::vector<std::uint32_t> order(total);
  std::vector<std::vector<std::uint32_t>> views(v_count);
  const std::size_t half = (total + 1) / 2;
  for (auto& view : views) {
    const std::size_t size = half + random.below(total - half + 1);
    // A partial Fisher-Yates shuffle picks `size` distinct servers.
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    for (std::size_t i = 0; i < size; ++i) {
      std::swap(order[i], order[i + random.below(total - i)]);
    }
    view.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(size));
    std::sort(view.begin(), view.end());
  }
  views_run<Placement>(state, total, views);
}

void additions(benchmark::internal::Benchmark* b) {
  b->ArgNames({"servers", "added"})->Iterations(1)->Unit(benchmark::kMillisecond);
  // One server, a tenth more (half more at 10), and twice as many.
  for (const std::int64_t n : {10, 100, 1000, 10000}) {
    b->Args({n, 1});
    b->Args({n, n == 10 ? 5 : n / 10});
    b->Args({n, n});
  }
}

void rolling(benchmark::internal::Benchmark* b) {
  b->ArgNames({"servers", "views"})->Iterations(1)->Unit(benchmark::kMillisecond);
  b->Args({20, 11});    // 10 -> 20, one server at a time
  b->Args({110, 11});   // 100 -> 110
  b->Args({1010, 11});  // 1000 -> 1010
}

void random_subsets(benchmark::internal::Benchmark* b) {
  b->ArgNames({"servers", "views"})->Iterations(1)->Unit(benchmark::kMillisecond);
  b->Args({10, 10});
  b->Args({100, 10});
  b->Args({1000, 10});
}

BENCHMARK_TEMPLATE(BM_Monotonicity, ModuloCrc32)->Apply(additions);
BENCHMARK_TEMPLATE(BM_Monotonicity, KetamaMd5Fixed160)->Apply(additions);
BENCHMARK_TEMPLATE(BM_Monotonicity, KetamaMd5Weighted)->Apply(additions);
BENCHMARK_TEMPLATE(BM_ViewsRolling, ModuloCrc32)->Apply(rolling);
BENCHMARK_TEMPLATE(BM_ViewsRolling, KetamaMd5Fixed160)->Apply(rolling);
BENCHMARK_TEMPLATE(BM_ViewsRolling, KetamaMd5Weighted)->Apply(rolling);
BENCHMARK_TEMPLATE(BM_ViewsRandom, ModuloCrc32)->Apply(random_subsets);
BENCHMARK_TEMPLATE(BM_ViewsRandom, KetamaMd5Fixed160)->Apply(random_subsets);
BENCHMARK_TEMPLATE(BM_ViewsRandom, KetamaMd5Weighted)->Apply(random_subsets);

}  // namespace

BENCHMARK_MAIN();
