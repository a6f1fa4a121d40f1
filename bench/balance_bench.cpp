// SPDX-License-Identifier: MIT
// balance_bench.cpp: how evenly placements spread keys over servers.
//
// One million deterministic keys are placed on N = 4, 10, 100, 1000 and 10000
// servers by a ketama ring with a fixed number of md5 points per server (1, 64,
// 100, 160, 1000: one point per server shows why virtual nodes exist), by
// libmemcached's weighted ring (160 md5 x4 points, or 156 for the N where its
// float32 point count rounds down, such as 100) and by modulo. Each run
// reports, as counters:
//   peak_over_mean, min_over_mean, cv   per-server key counts;
//   ring_peak_over_mean, ring_min_over_mean, ring_cv
//                                       the same over the exact shares of the
//                                       hash space (no key sampling), which is
//                                       what a placement gives an endless
//                                       stream of keys;
//   sampling_cv                         the cv that ideal random placement of
//                                       these keys would still show, sqrt((N-1)/K).
// At N = 10000 the mean is 100 keys per server, so the per-key columns there
// are mostly sampling noise: the exact columns are the placement's own balance.
//
// With MEMSHARD_BENCH_LOADS_OUT=<file>, every run with N <= 1000 also appends
// its per-server key counts to that CSV file (placement, servers,
// points_per_server, server, keys), for bench/plot.py.
// Runs once (Iterations(1)): the time is that of placing the keys.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.hpp"
#include "memshard/memshard.hpp"
#include "placements.hpp"

namespace {

using memshard::KetamaLocator;
using memshard::KetamaOptions;
using memshard::Md5;
using memshard::Server;
using memshard::bench::million_key_hashes;
using memshard::bench::points_per_server;

// Runs with at most this many servers write their per-server counts.
constexpr std::size_t kMaxLoadsOut = 1000;

// ring_shares: the fraction of the 2^32 ring each server owns. A point owns
// the arc from the previous point (exclusive) up to itself; the first point
// also owns the arc that wraps past the top.
template <class Locator>
auto ring_shares(const Locator& locator) -> std::vector<double> {
  std::vector<double> shares(locator.size(), 0.0);
  const auto points = locator.points();
  constexpr double kRing = 4294967296.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double from = i == 0 ? static_cast<double>(points.back().value) - kRing
                               : static_cast<double>(points[i - 1].value);
    shares[points[i].server] += (static_cast<double>(points[i].value) - from) / kRing;
  }
  return shares;
}

// write_loads: appends one run's per-server key counts to the file named by
// MEMSHARD_BENCH_LOADS_OUT (header first when this process opens it), if set.
void write_loads(benchmark::State& state, std::string_view placement, std::size_t points_per_server,
                 std::span<const std::uint64_t> counts) {
  const char* path = std::getenv("MEMSHARD_BENCH_LOADS_OUT");
  if (path == nullptr || *path == '\0' || counts.size() > kMaxLoadsOut) {
    return;
  }
  static std::ofstream out;
  if (!out.is_open()) {
    out.open(path, std::ios::trunc);
    out << "placement,servers,points_per_server,server,keys\n";
  }
  for (std::size_t i = 0; i < counts.size(); ++i) {
    out << placement << ',' << counts.size() << ',' << points_per_server << ',' << i << ','
        << counts[i] << '\n';
  }
  out.flush();
  if (!out) {
    state.SkipWithError((std::string("cannot write MEMSHARD_BENCH_LOADS_OUT: ") + path).c_str());
  }
}

template <class Locator>
auto place_and_report(benchmark::State& state, const Locator& locator,
                      const std::vector<std::uint32_t>& hashes) -> std::vector<std::uint64_t> {
  std::vector<std::uint64_t> counts(locator.size(), 0);
  for (auto _ : state) {
    std::fill(counts.begin(), counts.end(), 0);
    for (const std::uint32_t hash : hashes) {
      ++counts[locator.locate_hash(hash)];
    }
    benchmark::DoNotOptimize(counts.data());
  }
  const memshard::bench::LoadStats stats =
      memshard::bench::load_stats(std::span<const std::uint64_t>(counts));
  const auto n = static_cast<double>(locator.size());
  state.counters["servers"] = n;
  state.counters["keys"] = static_cast<double>(hashes.size());
  state.counters["peak_over_mean"] = stats.peak_over_mean;
  state.counters["min_over_mean"] = stats.min_over_mean;
  state.counters["cv"] = stats.cv;
  state.counters["sampling_cv"] = std::sqrt((n - 1) / static_cast<double>(hashes.size()));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(hashes.size()));
  return counts;
}

// report_exact: the ring_* counters from exact shares of the hash space.
template <class T>
void report_exact(benchmark::State& state, std::span<const T> shares) {
  const memshard::bench::LoadStats stats = memshard::bench::load_stats(shares);
  state.counters["ring_peak_over_mean"] = stats.peak_over_mean;
  state.counters["ring_min_over_mean"] = stats.min_over_mean;
  state.counters["ring_cv"] = stats.cv;
}

template <class Locator>
void report_ring(benchmark::State& state, const Locator& locator) {
  const std::vector<double> shares = ring_shares(locator);
  report_exact(state, std::span<const double>(shares));
  state.counters["ring_points"] = static_cast<double>(locator.points().size());
}

// A ketama ring with range(1) md5 points per server: point i of a server is
// the first md5 word of "host-i" (one point per string, so any count works).
void BM_BalanceKetamaMd5(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  KetamaOptions options;
  options.format = memshard::PointFormat::kLibmemcached;
  options.point_hash = memshard::PointHash::kKeyHash;
  options.count = memshard::PointCount::kFixed;
  options.points_per_server = static_cast<std::size_t>(state.range(1));
  const KetamaLocator<Md5> ring(servers, options);
  const auto counts = place_and_report(state, ring, million_key_hashes<Md5>());
  report_ring(state, ring);
  state.counters["points_per_server"] = static_cast<double>(options.points_per_server);
  state.SetLabel("ketama-md5 fixed points");
  write_loads(state, "ketama-md5", options.points_per_server, counts);
}

// libmemcached KETAMA_WEIGHTED / libketama: 160 md5 x4 points (float32 count).
void BM_BalanceKetamaMd5Weighted(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  const auto ring = memshard::profiles::libmemcached_ketama_weighted(servers);
  const auto counts = place_and_report(state, ring, million_key_hashes<Md5>());
  report_ring(state, ring);
  const std::size_t points = decltype(ring)::point_count(servers, 0, ring.options());
  state.counters["points_per_server"] = static_cast<double>(points);
  state.SetLabel("ketama-md5-weighted");
  write_loads(state, "ketama-md5-weighted", points, counts);
}

void BM_BalanceModuloCrc32(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  const auto modulo = memshard::profiles::modulo_crc32(servers);
  const auto counts = place_and_report(state, modulo, million_key_hashes<memshard::Crc32>());
  // Exact shares of hash % N over all 2^32 hashes: (2^32 mod N) servers own
  // one hash value more than the others.
  const std::uint64_t n = servers.size();
  constexpr std::uint64_t kHashes = std::uint64_t{1} << 32U;
  std::vector<std::uint64_t> owned(servers.size(), kHashes / n);
  for (std::uint64_t i = 0; i < kHashes % n; ++i) {
    ++owned[i];
  }
  report_exact(state, std::span<const std::uint64_t>(owned));
  state.SetLabel("modulo-crc32");
  write_loads(state, "modulo-crc32", 0, counts);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("servers")->Iterations(1)->Unit(benchmark::kMillisecond);
  for (const std::int64_t n : {4, 10, 100, 1000, 10000}) {
    b->Arg(n);
  }
}

BENCHMARK(BM_BalanceKetamaMd5)
    ->ArgNames({"servers", "points"})
    ->ArgsProduct({{4, 10, 100, 1000, 10000}, {1, 64, 100, 160, 1000}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BalanceKetamaMd5Weighted)->Apply(sizes);
BENCHMARK(BM_BalanceModuloCrc32)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
