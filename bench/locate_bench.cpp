// SPDX-License-Identifier: MIT
// locate_bench.cpp: the cost of placing a key: memshard's modulo and ketama
// locators against libmemcached's own memcached_generate_hash() on the same
// servers, the two parts of a ring lookup (the key's md5 alone, the ring search
// alone on pre-hashed keys), and ring construction.
//
// Every iteration places the same 4096 keys of 10 to 40 bytes; items/s counts
// keys, so ns per lookup = 1e9 / items_per_second. Before a libmemcached run,
// every key is checked to land on the same server as in memshard's profile,
// so both sides do the same work.

#include <benchmark/benchmark.h>
#include <libmemcached-1.0/memcached.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.hpp"
#include "memshard/memshard.hpp"

#ifdef MEMSHARD_BENCH_HASHKIT
#include <libhashkit-1.0/hashkit.h>
#endif

namespace {

using memshard::Server;
using memshard::bench::KeySet;
using memshard::bench::LibmemcachedPlacement;

constexpr std::size_t kLookupKeys = 4096;

auto lookup_keys() -> const KeySet& {
  static const KeySet keys(kLookupKeys);
  return keys;
}

// Placements: a display name and a factory, one tag type each.
struct ModuloCrc32 {
  static constexpr const char* kName = "modulo-crc32";
  static auto make(std::span<const Server> servers) {
    return memshard::profiles::modulo_crc32(servers);
  }
};
struct ModuloOneAtATime {
  static constexpr const char* kName = "modulo-one_at_a_time";
  static auto make(std::span<const Server> servers) {
    return memshard::profiles::libmemcached_modula(servers);
  }
};
struct RingCrc32 {
  static constexpr const char* kName = "ring-crc32";
  static auto make(std::span<const Server> servers) {
    return memshard::profiles::ring_crc32(servers);
  }
};
struct KetamaMd5Weighted {
  static constexpr const char* kName = "ketama-md5-weighted";
  static auto make(std::span<const Server> servers) {
    return memshard::profiles::libmemcached_ketama_weighted(servers);
  }
};
// The same ring behind AnyLocator, as make_locator() hands it to configurable code.
struct AnyKetamaMd5Weighted {
  static constexpr const char* kName = "any:ketama-md5-weighted";
  static auto make(std::span<const Server> servers) {
    return memshard::make_locator("libmemcached-ketama-weighted", servers);
  }
};

// A hash other than the profile's default, as make_locator() builds it (through
// RuntimeHash: one indirect call per key), and the same placement typed.
struct KetamaOneAtATimeWeighted {
  static constexpr const char* kName = "ketama-oaat-weighted";
  static auto make(std::span<const Server> servers) {
    return memshard::profiles::libmemcached_ketama_weighted<memshard::OneAtATime>(servers);
  }
};
struct AnyKetamaOneAtATimeWeighted {
  static constexpr const char* kName = "any:ketama-oaat-weighted";
  static auto make(std::span<const Server> servers) {
    return memshard::make_locator("libmemcached-ketama-weighted", servers,
                                  {.hash = "one_at_a_time"});
  }
};

// libmemcached placements, each with the memshard profile that must agree with it.
struct LibmemcachedKetamaWeighted {
  static constexpr const char* kName = "libmemcached:ketama-weighted";
  static constexpr LibmemcachedPlacement kPlacement = LibmemcachedPlacement::kKetamaWeighted;
  using Same = KetamaMd5Weighted;
};
struct LibmemcachedModula {
  static constexpr const char* kName = "libmemcached:modula";
  static constexpr LibmemcachedPlacement kPlacement = LibmemcachedPlacement::kModula;
  using Same = ModuloOneAtATime;
};

// timed_pass: one pass of `work` over `items`: the code every lookup benchmark
// times. Out of line so that callgrind can count exactly its instructions
// (bench/run.sh runs `valgrind --tool=callgrind --toggle-collect=*timed_pass*`).
template <class Items, class Work>
[[gnu::noinline]] void timed_pass(const Items& items, const Work& work) {
  for (const auto item : items) {
    benchmark::DoNotOptimize(work(item));
  }
}

void set_common(benchmark::State& state, const char* name, std::size_t servers) {
  state.SetLabel(name);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kLookupKeys));
  state.counters["servers"] = static_cast<double>(servers);
  state.counters["keys_per_pass"] = static_cast<double>(kLookupKeys);
}

template <class Placement>
void BM_Locate(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  const auto locator = Placement::make(servers);
  const KeySet& keys = lookup_keys();
  const auto locate = [&locator](std::string_view key) { return locator.locate(key); };
  for (auto _ : state) {
    timed_pass(keys, locate);
  }
  set_common(state, Placement::kName, servers.size());
}

// locate_many over the same keys, in one call per pass (how multi-gets place
// their keys; md5 rings hash four keys at a time).
template <class Placement>
void BM_LocateMany(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  const auto locator = Placement::make(servers);
  const std::vector<std::string_view> keys(lookup_keys().begin(), lookup_keys().end());
  std::vector<std::size_t> out(keys.size());
  locator.locate_many(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (out[i] != locator.locate(keys[i])) {
      state.SkipWithError("locate_many and locate disagree");
      return;
    }
  }
  for (auto _ : state) {
    locator.locate_many(keys, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_common(state, Placement::kName, servers.size());
}

template <class Placement>
void BM_LocateLibmemcached(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  const auto memc = memshard::bench::make_libmemcached(servers, Placement::kPlacement);
  const auto same = Placement::Same::make(servers);
  const KeySet& keys = lookup_keys();
  for (const std::string_view key : keys) {
    if (memcached_generate_hash(memc.get(), key.data(), key.size()) != same.locate(key)) {
      state.SkipWithError("libmemcached and memshard place a key differently");
      return;
    }
  }
  const auto locate = [handle = memc.get()](std::string_view key) {
    return memcached_generate_hash(handle, key.data(), key.size());
  };
  for (auto _ : state) {
    timed_pass(keys, locate);
  }
  set_common(state, Placement::kName, servers.size());
}

// The key hash alone, the other part of a lookup: memshard's Md5 and the md5
// that libmemcached's KETAMA_WEIGHTED uses (libhashkit's).
struct Md5Key {
  static constexpr const char* kName = "memshard md5";
  static auto hash(std::string_view key) noexcept { return memshard::Md5{}(key); }
};
#ifdef MEMSHARD_BENCH_HASHKIT
struct HashkitMd5Key {
  static constexpr const char* kName = "libhashkit md5";
  static auto hash(std::string_view key) noexcept { return libhashkit_md5(key.data(), key.size()); }
};
#endif

template <class Key>
void BM_HashOnly(benchmark::State& state) {
  const auto hash = [](std::string_view key) { return Key::hash(key); };
  for (auto _ : state) {
    timed_pass(lookup_keys(), hash);
  }
  set_common(state, Key::kName, 0);
}

// The ring search alone: keys hashed beforehand, then only locate_hash().
template <class Placement>
void BM_SearchOnly(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  const auto locator = Placement::make(servers);
  using Hash = typename decltype(locator)::hasher;
  const std::vector<std::uint32_t> hashes = memshard::bench::hash_all<Hash>(lookup_keys());
  const auto search = [&locator](std::uint32_t hash) { return locator.locate_hash(hash); };
  for (auto _ : state) {
    timed_pass(hashes, search);
  }
  set_common(state, Placement::kName, servers.size());
}

template <class Placement>
void BM_Build(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  std::size_t points = 0;
  for (auto _ : state) {
    const auto locator = Placement::make(servers);
    points = locator.points().size();
    benchmark::DoNotOptimize(locator.points().data());
  }
  state.SetLabel(Placement::kName);
  state.counters["servers"] = static_cast<double>(servers.size());
  state.counters["points"] = static_cast<double>(points);
}

// libmemcached builds its continuum when the server list is pushed.
template <class Placement>
void BM_BuildLibmemcached(benchmark::State& state) {
  const auto servers = memshard::bench::make_servers(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    const auto memc = memshard::bench::make_libmemcached(servers, Placement::kPlacement);
    benchmark::DoNotOptimize(memc.get());
  }
  state.SetLabel(Placement::kName);
  state.counters["servers"] = static_cast<double>(servers.size());
}

// Lookups for N = 4, 10, 100, 1000; libmemcached only up to 100 servers (its
// consistent distributions assert above that).
void all_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("servers")->Arg(4)->Arg(10)->Arg(100)->Arg(1000);
}
void libmemcached_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("servers")->Arg(4)->Arg(10)->Arg(100);
}

BENCHMARK_TEMPLATE(BM_Locate, ModuloCrc32)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_Locate, ModuloOneAtATime)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_Locate, RingCrc32)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_Locate, KetamaMd5Weighted)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_Locate, AnyKetamaMd5Weighted)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_Locate, KetamaOneAtATimeWeighted)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_Locate, AnyKetamaOneAtATimeWeighted)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_LocateMany, KetamaMd5Weighted)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_LocateLibmemcached, LibmemcachedKetamaWeighted)->Apply(libmemcached_sizes);
BENCHMARK_TEMPLATE(BM_LocateLibmemcached, LibmemcachedModula)->Apply(libmemcached_sizes);
BENCHMARK_TEMPLATE(BM_SearchOnly, KetamaMd5Weighted)->Apply(all_sizes);
BENCHMARK_TEMPLATE(BM_HashOnly, Md5Key);
#ifdef MEMSHARD_BENCH_HASHKIT
BENCHMARK_TEMPLATE(BM_HashOnly, HashkitMd5Key);
#endif
BENCHMARK_TEMPLATE(BM_Build, KetamaMd5Weighted)
    ->ArgName("servers")
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_BuildLibmemcached, LibmemcachedKetamaWeighted)
    ->ArgName("servers")
    ->Arg(10)
    ->Arg(100)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
