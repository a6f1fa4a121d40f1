// SPDX-License-Identifier: MIT
// hit_rate_bench.cpp: the cache hit rate that survives a resize, measured on
// real memcached servers.
//
// The fleet is n servers plus a more. For each placement (modulo-crc32,
// ring-crc32, ketama-md5-weighted):
//   add m (BM_HitRate/add/<placement>/added:m, for m = 1 .. a):
//           flush_all, store K keys on the first n servers (routed by the
//           placement for n servers), then read every key back through the
//           placement for the first n + m servers;
//   remove (BM_HitRate/remove/<placement>): flush_all, store K keys on the
//           first M = n + 1 servers, then read them back through the placement
//           for the last n of those (the first server failed and was taken out
//           of the list).
// Keys go through one libmemcached handle per server, routed by memshard; reads
// use memcached_mget batches. Counters:
//   hit_rate    keys read back with the right value / K, after the resize;
//   predicted   keys the two placements put on the same server / K (what the
//               hit rate must be if the servers kept every key);
//   theory      add m: a ring n/(n+m), modulo gcd(n,m)/(n+m) (h % n ==
//               h % (n+m) for gcd(n,m) in n+m hashes); remove: a ring (M-1)/M,
//               modulo 1/M (r % M == r % (M-1) + 1 holds for 1 in M values);
//   baseline    hit rate through the placement used to store (must be 1).
//
// Servers: MEMSHARD_SERVERS=host:port,... uses those (F of them, at least 2;
// every one is flushed): a = MEMSHARD_BENCH_ADDED (default 1, below F) and
// n = F - a. Otherwise n = MEMSHARD_BENCH_SERVERS (default 4) plus
// a = MEMSHARD_BENCH_ADDED (default 4) local memcached processes are started
// on free ports and stopped on exit. MEMSHARD_BENCH_KEYS sets K (default 20000).

#include <benchmark/benchmark.h>
#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.hpp"
#include "live_servers.hpp"
#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"

namespace {

using memshard::Server;
using memshard::bench::env_count;
using memshard::bench::FetchResult;
using memshard::bench::KeySet;
using memshard::bench::MemcachedPtr;
using memshard::testing::MemcachedServer;

constexpr std::string_view kValuePrefix = "memshard-hit-rate:";
constexpr std::size_t kBatch = 500;

// Fleet: the servers under test, with one libmemcached handle each: the n
// before an add, then the ones that may be added.
class Fleet {
 public:
  Fleet()
      : live_(2, static_cast<std::size_t>(-1),
              env_count("MEMSHARD_BENCH_SERVERS", 4, 1) + env_count("MEMSHARD_BENCH_ADDED", 4, 1),
              "memshard_") {
    const std::size_t total = live_.servers().size();
    added_ = live_.started_here() ? env_count("MEMSHARD_BENCH_ADDED", 4, 1)
                                  : env_count("MEMSHARD_BENCH_ADDED", 1, 1);
    if (added_ >= total) {
      throw std::invalid_argument("MEMSHARD_BENCH_ADDED must be below the number of servers (" +
                                  std::to_string(total) + ")");
    }
    before_ = total - added_;
    for (const Server& server : live_.servers()) {
      handles_.push_back(connect(server));
    }
  }

  /// before: n, the servers before an add.
  [[nodiscard]] auto before() const noexcept -> std::size_t { return before_; }
  /// added: a, the most servers an add brings.
  [[nodiscard]] auto added() const noexcept -> std::size_t { return added_; }

  [[nodiscard]] auto servers() const noexcept -> std::span<const Server> { return live_.servers(); }
  [[nodiscard]] auto handle(std::size_t i) const noexcept -> memcached_st* {
    return handles_[i].get();
  }
  [[nodiscard]] auto local() const noexcept -> bool { return live_.started_here(); }

  void flush_all() const {
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      memshard::bench::check(memcached_flush(handle(i), 0), handle(i),
                             "flush_all on " + live_.servers()[i].endpoint());
    }
  }

 private:
  static auto connect(const Server& server) -> MemcachedPtr {
    MemcachedPtr memc(memcached_create(nullptr));
    if (!memc) {
      throw std::runtime_error("memcached_create failed");
    }
    memcached_st* m = memc.get();
    memshard::bench::check(memcached_behavior_set(m, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1), m,
                           "TCP_NODELAY");
    memshard::bench::check(memcached_behavior_set(m, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, 2000), m,
                           "CONNECT_TIMEOUT");
    memshard::bench::check(memcached_behavior_set(m, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, 2000), m,
                           "POLL_TIMEOUT");
    memshard::bench::check(memcached_server_add(m, server.host.c_str(), server.port), m,
                           "adding " + server.endpoint());
    return memc;
  }

  memshard::bench::LiveServers live_;
  std::vector<MemcachedPtr> handles_;
  std::size_t before_ = 0;
  std::size_t added_ = 0;
};

auto value_for(std::string_view key) -> std::string {
  std::string value(kValuePrefix);
  value.append(key);
  return value;
}

// View: the servers a locator was built for, as a window [first, first + size)
// of the fleet's list: locator index i is fleet server first + i.
struct View {
  std::size_t first;
  std::size_t size;
};

// Stores every key on its server under `locator`; throws on the first failure.
template <class Locator>
void fill(const Fleet& fleet, const Locator& locator, View view, const KeySet& keys) {
  for (const std::string_view key : keys) {
    const std::size_t server = view.first + locator.locate(key);
    const std::string value = value_for(key);
    memcached_st* memc = fleet.handle(server);
    memshard::bench::check(
        memcached_set(memc, key.data(), key.size(), value.data(), value.size(), 0, 0), memc,
        "set on " + fleet.servers()[server].endpoint());
  }
}

struct ReadOutcome {
  std::size_t hits = 0;
  std::size_t wrong = 0;  // found, but with another value
};

// Reads every key from its server under `locator`, in mget batches.
template <class Locator>
auto read_back(const Fleet& fleet, const Locator& locator, View view, const KeySet& keys)
    -> ReadOutcome {
  std::vector<std::vector<std::string_view>> by_server(locator.size());
  for (const std::string_view key : keys) {
    by_server[locator.locate(key)].push_back(key);
  }
  ReadOutcome outcome;
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
  for (std::size_t index = 0; index < by_server.size(); ++index) {
    const std::size_t server = view.first + index;
    memcached_st* memc = fleet.handle(server);
    FetchResult result(memc);
    const std::vector<std::string_view>& mine = by_server[index];
    for (std::size_t start = 0; start < mine.size(); start += kBatch) {
      const std::size_t count = std::min(kBatch, mine.size() - start);
      pointers.clear();
      lengths.clear();
      for (std::size_t i = start; i < start + count; ++i) {
        pointers.push_back(mine[i].data());
        lengths.push_back(mine[i].size());
      }
      memshard::bench::check(memcached_mget(memc, pointers.data(), lengths.data(), count), memc,
                             "mget on " + fleet.servers()[server].endpoint());
      memcached_return_t rc = MEMCACHED_SUCCESS;
      while (memcached_fetch_result(memc, result.get(), &rc) != nullptr) {
        const std::string_view key(memcached_result_key_value(result.get()),
                                   memcached_result_key_length(result.get()));
        const std::string_view value(memcached_result_value(result.get()),
                                     memcached_result_length(result.get()));
        if (value == value_for(key)) {
          ++outcome.hits;
        } else {
          ++outcome.wrong;
        }
      }
      if (rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND && !memcached_success(rc)) {
        memshard::bench::check(rc, memc, "fetch on " + fleet.servers()[server].endpoint());
      }
    }
  }
  return outcome;
}

template <class Locator>
auto same_server_fraction(const Locator& before, View before_view, const Locator& after,
                          View after_view, const KeySet& keys) -> double {
  std::size_t same = 0;
  for (const std::string_view key : keys) {
    if (before_view.first + before.locate(key) == after_view.first + after.locate(key)) {
      ++same;
    }
  }
  return static_cast<double>(same) / static_cast<double>(keys.size());
}

// One resize on real servers: keys stored through the placement of
// `stored_view`, read through that of `read_view`; see the file comment.
template <class Make>
void run_resize(benchmark::State& state, const Fleet& fleet, const KeySet& keys, Make make,
                View stored_view, View read_view, double theory) {
  const std::span<const Server> all = fleet.servers();
  const auto stored_with = make(all.subspan(stored_view.first, stored_view.size));
  const auto read_with = make(all.subspan(read_view.first, read_view.size));
  ReadOutcome baseline;
  ReadOutcome after;
  try {
    for (auto _ : state) {
      fleet.flush_all();
      fill(fleet, stored_with, stored_view, keys);
      baseline = read_back(fleet, stored_with, stored_view, keys);
      after = read_back(fleet, read_with, read_view, keys);
    }
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
    return;
  }
  const auto k = static_cast<double>(keys.size());
  state.counters["servers_before"] = static_cast<double>(stored_view.size);
  state.counters["servers_after"] = static_cast<double>(read_view.size);
  state.counters["keys"] = k;
  state.counters["hit_rate"] = static_cast<double>(after.hits) / k;
  state.counters["predicted"] =
      same_server_fraction(stored_with, stored_view, read_with, read_view, keys);
  state.counters["theory"] = theory;
  state.counters["baseline"] = static_cast<double>(baseline.hits) / k;
  state.counters["wrong_values"] = static_cast<double>(after.wrong + baseline.wrong);
  state.counters["local_servers"] = fleet.local() ? 1 : 0;
}

// register_one: one resize of one placement, as a benchmark called `name`.
template <class Make>
void register_one(const std::string& name, const Fleet& fleet, const KeySet& keys, Make make,
                  View stored_view, View read_view, double theory) {
  benchmark::RegisterBenchmark(
      name.c_str(),
      [&fleet, &keys, make, stored_view, read_view, theory](benchmark::State& state) {
        run_resize(state, fleet, keys, make, stored_view, read_view, theory);
      })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

template <class Make>
void register_placement(const std::string& label, bool ring, const Fleet& fleet, const KeySet& keys,
                        Make make) {
  const std::size_t n = fleet.before();
  const auto nd = static_cast<double>(n);
  for (std::size_t m = 1; m <= fleet.added(); ++m) {
    const auto md = static_cast<double>(m);
    const double theory = ring ? nd / (nd + md) : static_cast<double>(std::gcd(n, m)) / (nd + md);
    register_one("BM_HitRate/add/" + label + "/added:" + std::to_string(m), fleet, keys, make,
                 View{0, n}, View{0, n + m}, theory);
  }
  // remove: M = n + 1 servers, then all but the first.
  const double md = nd + 1;
  register_one("BM_HitRate/remove/" + label, fleet, keys, make, View{0, n + 1}, View{1, n},
               ring ? (md - 1) / md : 1 / md);
}

void register_all(const Fleet& fleet, const KeySet& keys) {
  register_placement("modulo-crc32", false, fleet, keys,
                     [](std::span<const Server> s) { return memshard::profiles::modulo_crc32(s); });
  register_placement("ring-crc32", true, fleet, keys,
                     [](std::span<const Server> s) { return memshard::profiles::ring_crc32(s); });
  register_placement("ketama-md5-weighted", true, fleet, keys, [](std::span<const Server> s) {
    return memshard::profiles::libmemcached_ketama_weighted(s);
  });
}

}  // namespace

auto main(int argc, char** argv) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  try {
    const KeySet keys(env_count("MEMSHARD_BENCH_KEYS", 20'000, 1));
    benchmark::AddCustomContext("memshard_keys", std::to_string(keys.size()));
    const Fleet fleet;
    benchmark::AddCustomContext("memshard_servers_before", std::to_string(fleet.before()));
    benchmark::AddCustomContext("memshard_added", std::to_string(fleet.added()));
    register_all(fleet, keys);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << "memshard hit-rate benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
