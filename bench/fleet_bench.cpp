// SPDX-License-Identifier: MIT
// fleet_bench.cpp: what the shared fleet costs a client.
//
// BM_SnapshotCheck: the check every operation makes, one atomic load of the
// fleet's generation compared with the client's (no lock).
// BM_Reconfigure/servers:N: a reconfigure with a ready-made locator: the list
// validated, the health of every server looked up, the snapshot published and
// the client moved to it (its connection pool re-bound). The list alternates
// between two that differ in one server. No server is contacted (the client
// connects on first use only).

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memshard/memshard.hpp"

namespace {

using Ring = memshard::KetamaLocator<memshard::Md5>;
using memshard::Server;

// `count` servers on 127.0.0.1 (never contacted); `variant` changes the last.
auto servers_of(std::size_t count, int variant) -> std::vector<Server> {
  std::vector<Server> out;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t port = i + 1 == count ? 60000 + static_cast<std::size_t>(variant) : i + 1;
    out.push_back(memshard::parse_server("127.0.0.1:" + std::to_string(port)));
  }
  return out;
}

void BM_SnapshotCheck(benchmark::State& state) {
  const std::vector<Server> servers = servers_of(10, 0);
  memshard::Fleet<Ring> fleet(servers, std::make_shared<const Ring>(servers), {});
  const std::uint64_t seen = fleet.generation();
  for (auto _ : state) {
    bool changed = fleet.generation() != seen;
    benchmark::DoNotOptimize(changed);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SnapshotCheck);

void BM_Reconfigure(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const std::vector<Server> lists[2] = {servers_of(count, 0), servers_of(count, 1)};
  const std::shared_ptr<const Ring> rings[2] = {std::make_shared<const Ring>(lists[0]),
                                                std::make_shared<const Ring>(lists[1])};
  memshard::ShardedClient<Ring> client(lists[0], rings[0]);
  std::size_t next = 1;
  for (auto _ : state) {
    client.reconfigure(lists[next], rings[next]);
    next ^= 1U;
  }
  benchmark::DoNotOptimize(client.snapshot()->generation);
  state.SetItemsProcessed(state.iterations());
  state.counters["servers"] = static_cast<double>(count);
}
BENCHMARK(BM_Reconfigure)->Arg(10)->Arg(100)->Arg(1000)->ArgName("servers");

}  // namespace

BENCHMARK_MAIN();
