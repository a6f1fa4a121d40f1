// SPDX-License-Identifier: MIT
// client_bench.cpp: ShardedClient end to end on real memcached servers, against
// libmemcached used directly, with every contender timed in the same run,
// interleaved.
//
// Benchmarks (each one interleaved measurement, see below):
//   BM_Client/get        single get, a hit with a 100-byte value;
//   BM_Client/set        single set of a 100-byte value;
//   BM_Client/get_multi  one multi-get of 100 keys spread over every server;
//   BM_Client/set_multi  one batch write of 100 keys spread over every server;
//   BM_Client/get_in_migration   single get, a hit, during a live migration;
//   BM_Client/miss_in_migration  single get, a miss, during a live migration;
//   BM_Client/migration_round_trips  not timed: requests counted by the servers.
//
// Contenders of get and set:
//   ketama, modulo            ShardedClient<KetamaLocator<Md5>> (the
//                             libmemcached_ketama_weighted profile) and
//                             ShardedClient<ModuloLocator<Crc32>>, on keys
//                             wherever their locator puts them;
//   ketama_same, modulo_same  the same clients on the keys their locator puts
//                             on the baseline's server;
//   ketama_member             a fleet member's client on ketama's keys: a
//                             ShardedClient<AnyLocator> made by make_client
//                             on ketama's profile, servers and options, as
//                             join_fleet makes it, its family served as a
//                             steady record's phase (Fleet::serve) and its
//                             fence gate opened for good, so every call
//                             checks the gate as a member's does (no etcd);
//                             also against ketama (ketama_member_ratio_ketama);
//   ketama_hot_keys           ketama's client counting its hot keys
//                             (ClientOptions::hot_keys, the defaults), on
//                             ketama's keys, also against ketama
//                             (ketama_hot_keys_ratio_ketama);
//   libmemcached_all          libmemcached placing the keys itself: one
//                             memcached_st holding every server with
//                             MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, on the same
//                             keys as ketama (the like-for-like reference of
//                             the contenders whose keys are spread);
//   twemproxy                 libmemcached through twemproxy: nutcracker,
//                             started here on 127.0.0.1 with one md5/ketama
//                             pool of every server, as the single server of a
//                             memcached_st, on the same keys as ketama (left
//                             out, with a note, when no nutcracker binary is
//                             found; see tests/support/nutcracker_proxy.hpp);
//   libmemcached              the baseline: a memcached_st holding only the
//                             first server, doing memcached_get / memcached_set
//                             on keys stored on that server.
// Contenders of get_multi, each one multi-get of 100 keys per call, cycling
// over 16 key lists:
//   ketama, modulo            ShardedClient<KetamaLocator<Md5>>::get_multi and
//                             ShardedClient<ModuloLocator<Crc32>>::get_multi,
//                             on the same lists of keys spread over every
//                             server, each key written through each client;
//   ketama_visit              ShardedClient<KetamaLocator<Md5>>::visit_multi
//                             on ketama's lists, each value copied into a
//                             reused string;
//   ketama_per_server         ketama's get_multi with MultiGetMode::kPerServer
//                             (the servers read in turn, no extra connection);
//   ketama_same, modulo_same  the same clients' get_multi on lists of keys
//                             their locator puts on the baseline's server
//                             (ketama_same on the baseline's own lists);
//   ketama_same_visit         visit_multi, as ketama_visit, on the baseline's
//                             lists: only the client differs from the
//                             baseline;
//   ketama_member             the fleet member's client above, get_multi on
//                             ketama's lists, also against ketama;
//   ketama_hot_keys           the hot-key counting client above, the same;
//   libmemcached_all          the every-server KETAMA_WEIGHTED memcached_st on
//                             ketama's lists;
//   twemproxy                 the proxy's memcached_st on ketama's lists (left
//                             out, like above, without nutcracker);
//   libmemcached              the baseline: the memcached_st holding only the
//                             first server, on lists of keys that
//                             KetamaLocator<Md5> puts on that server.
// Contenders of set_multi, each writing one of ketama's 100-key lists per
// call (the values already stored: every write replaces a value):
//   ketama_set_multi          ShardedClient<KetamaLocator<Md5>>::set_multi
//                             (one pipeline per server);
//   ketama_set_loop           the same client's set, key after key;
//   libmemcached_all          the baseline: memcached_set, key after key,
//                             through the every-server KETAMA_WEIGHTED
//                             memcached_st (libmemcached has no multi-set
//                             with an answer per key).
// Every libmemcached contender of get_multi does memcached_mget, then
// memcached_fetch_result into a caller-owned result, each key and value
// copied out into reused strings.
// Migration (client/migration.hpp): two families of
// ShardedClient<KetamaLocator<Md5>> on the same servers, one of them in a
// migration window (MoveOnCopy::kNever) to those servers plus one extra local
// memcached; every key is written through the other family (the old
// placement), and the moved ones among the hit keys are copied to their new
// owner with migrate_key, so every hit is a hit on its new owner.
// Contenders of get_in_migration, on the same 1024 keys, all hits:
//   in_migration              get through the family in the window;
//   no_migration              the baseline: get through the other family.
// Contenders of miss_in_migration (informational):
//   moved_miss                a key whose owner changed, on neither owner
//                             (the new owner's get, then the old owner's);
//   same_owner_miss           a key whose owner did not change, absent;
//   miss                      a plain miss, no migration (the reference, _ratio_ref,
//                             of both above);
//   hit                       the baseline: a plain get, a hit, no migration.
// migration_round_trips: 100 calls of each kind through the family in the
// window, every server's cmd_get, get_hits and get_misses read (memcached's
// "stats") before and after each kind: hit (moved keys, hits on their new
// owner), moved_miss and same_owner_miss. Counters per kind: <kind>_calls,
// <kind>_gets (requests reaching any server), <kind>_extra_round_trips
// (_gets minus the calls), <kind>_old_owner_gets (requests reaching the old
// owners, moved keys only), <kind>_get_hits, <kind>_get_misses and <kind>_stat
// (MigrationStats: new_hits, fallback_misses, same_owner_misses).
//
// Every libmemcached handle has exactly the behaviours ShardedClient sets on
// its own handles (checked against detail::MemcachedHandle), text protocol.
// Every contender checks every answer (hit, right value; stored), so each one
// does the work a caller must do; a failed operation fails the benchmark.
//
// Measurement: R rounds (MEMSHARD_BENCH_CLIENT_ROUNDS, default 500) after 3
// rounds of warm-up. In each round every contender runs one batch of calls
// (get/set: 40, get_multi: 4) timed with steady_clock, in a fresh random order,
// so each one is equally often first, last or after any other. Per round, each
// contender's time per call is divided by the baseline's (the last contender)
// from the same round, and the median of those R paired ratios is reported
// with its distribution-free ~95% confidence interval (order statistics of the
// binomial). Noise that lasts longer than a round hits both sides of a ratio
// alike, and the median ignores the rounds a burst hit on one side only. Times
// per call are medians over the rounds. Counters per contender: <name>_ns,
// <name>_keys (distinct keys, or key lists, it cycles over), <name>_ratio with
// _lo and _hi, and for ketama and modulo <name>_ratio_ref (with _lo, _hi), the
// same paired ratio against libmemcached_all (get_multi: also for
// ketama_visit); ketama_ratio_twemproxy (with _lo, _hi), ketama's paired
// ratio against twemproxy; ketama_member_ratio_ketama (with _lo, _hi), the
// fleet member's paired ratio against the plain ketama client, and
// ketama_hot_keys_ratio_ketama the hot-key counting client's.
//
// Before timing, every multi-get list is read through each contender that
// uses it: every key once, with its value. Ketama's lists are read through
// libmemcached_all before anything but the ketama client has written them, and
// the baseline's lists through the baseline (written through the ketama
// client only), so both prove the placement too.
//
// Every key of the single get/set runs and of ketama's multi-get lists is
// also written through the proxy and read back through it (the values must
// match; the lists by multi-get), and 200 further keys written through the
// proxy alone are looked for on every server directly: where twemproxy put
// each one, against the server memshard's libmemcached_ketama_weighted ring
// names, goes to the context (memshard_client_twemproxy_placement). A fact,
// not a check: the two rings need not agree.
//
// Servers: MEMSHARD_SERVERS=host:port,... (2 to 100 servers, each empty unless
// MEMSHARD_BENCH_ALLOW_NONEMPTY=1) or MEMSHARD_BENCH_SERVERS local memcached
// processes (default 4) on free ports. Every key starts with the run's prefix
// (MEMSHARD_BENCH_PREFIX, run_keys.hpp), then "memshard-client:"; nothing is
// flushed. At the end, and after a failure, every key the benchmark drew is
// deleted from every server (the migration's extra one too); on local servers
// they must all be empty then.
//
// Instruction counts: with MEMSHARD_BENCH_CALLGRIND_OPS=N, under
// `valgrind --tool=callgrind`, no timing is done: after the checks each
// contender runs N calls (N/10 multi-gets) alone between CALLGRIND_ZERO_STATS and
// CALLGRIND_DUMP_STATS_AT("<benchmark>/<contender>/<calls>/<keys per call>"),
// so every dump holds exactly one contender's calls. They are made inside
// calls_alone (client/paired_statistics.hpp), whose inclusive cost is what they
// cost the calling thread; the dump's total also holds what other threads did
// meanwhile (the deadline watch's ticks).
//
// Code: client/workload.hpp (keys, values, key lists, Contender),
// client/contenders.hpp (the ShardedClient contenders), client/baselines.hpp
// (the libmemcached contenders and twemproxy), client/paired_statistics.hpp
// (interleaving, paired medians, confidence intervals), client/fixture.hpp
// (Setup: every client, every stored key, every check).

#include <benchmark/benchmark.h>

#include <cstddef>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "client/fixture.hpp"
#include "client/migration.hpp"
#include "client/paired_statistics.hpp"
#include "client/workload.hpp"
#include "live_servers.hpp"
#include "memshard/placement/server.hpp"
#include "run_keys.hpp"

namespace {

using memshard::Server;
using memshard::bench::client::check_all;
using memshard::bench::client::Contender;
using memshard::bench::client::drawn_keys;
using memshard::bench::client::kMultiBatch;
using memshard::bench::client::kMultiKeys;
using memshard::bench::client::kMultiRequests;
using memshard::bench::client::kSingleBatch;
using memshard::bench::client::kSingleKeys;
using memshard::bench::client::kValueSize;
using memshard::bench::client::measure;
using memshard::bench::client::MigrationSetup;
using memshard::bench::client::Setup;

constexpr std::size_t kMaxLibmemcachedServers = 100;  // its ketama asserts above

// LiveFleet: the servers under test: MEMSHARD_SERVERS, or local processes.
class LiveFleet {
 public:
  LiveFleet() : live_(2, kMaxLibmemcachedServers, local_count(), "memshard_client_") {}

  [[nodiscard]] auto servers() const noexcept -> const std::vector<Server>& {
    return live_.servers();
  }
  /// started_here: whether the servers are local processes.
  [[nodiscard]] auto started_here() const noexcept -> bool { return live_.started_here(); }

 private:
  static auto local_count() -> std::size_t {
    const std::size_t count = memshard::bench::env_count("MEMSHARD_BENCH_SERVERS", 4, 2);
    if (count > kMaxLibmemcachedServers) {
      throw std::invalid_argument("MEMSHARD_BENCH_SERVERS must be at most 100");
    }
    return count;
  }

  memshard::bench::LiveServers live_;
};

void register_migration(MigrationSetup& migration) {
  benchmark::RegisterBenchmark(
      "BM_Client/get_in_migration",
      [&migration](benchmark::State& state) {
        try {
          const std::vector<Contender> contenders = migration.hit_contenders();
          check_all(contenders, kSingleKeys);
          measure(state, "get_in_migration", contenders, kSingleBatch, 1);
          state.counters["moved_hit_keys"] = static_cast<double>(migration.moved_hits());
        } catch (const std::exception& error) {
          state.SkipWithError(error.what());
        }
      })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Client/miss_in_migration",
                               [&migration](benchmark::State& state) {
                                 try {
                                   const std::vector<Contender> contenders =
                                       migration.miss_contenders();
                                   check_all(contenders, kSingleKeys);
                                   measure(state, "miss_in_migration", contenders, kSingleBatch, 1);
                                 } catch (const std::exception& error) {
                                   state.SkipWithError(error.what());
                                 }
                               })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Client/migration_round_trips",
                               [&migration](benchmark::State& state) {
                                 try {
                                   for (auto _ : state) {
                                     migration.count_round_trips(state);
                                   }
                                 } catch (const std::exception& error) {
                                   state.SkipWithError(error.what());
                                 }
                               })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

void register_all(Setup& setup) {
  benchmark::RegisterBenchmark("BM_Client/get",
                               [&setup](benchmark::State& state) {
                                 try {
                                   const std::vector<Contender> contenders =
                                       setup.single_get_contenders();
                                   check_all(contenders, kSingleKeys);
                                   measure(state, "get", contenders, kSingleBatch, 1);
                                 } catch (const std::exception& error) {
                                   state.SkipWithError(error.what());
                                 }
                               })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Client/set",
                               [&setup](benchmark::State& state) {
                                 try {
                                   const std::vector<Contender> contenders =
                                       setup.single_set_contenders();
                                   check_all(contenders, kSingleKeys);
                                   measure(state, "set", contenders, kSingleBatch, 1);
                                 } catch (const std::exception& error) {
                                   state.SkipWithError(error.what());
                                 }
                               })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(
      "BM_Client/get_multi",
      [&setup](benchmark::State& state) {
        try {
          const std::vector<Contender> contenders = setup.multi_contenders();
          check_all(contenders, kMultiRequests);
          measure(state, "get_multi", contenders, kMultiBatch, kMultiKeys);
          state.counters["servers"] = static_cast<double>(setup.servers().size());
          state.counters["keys_per_server_min"] = static_cast<double>(setup.ketama_spread().first);
          state.counters["keys_per_server_max"] = static_cast<double>(setup.ketama_spread().second);
          state.counters["modulo_keys_per_server_min"] =
              static_cast<double>(setup.modulo_spread().first);
          state.counters["modulo_keys_per_server_max"] =
              static_cast<double>(setup.modulo_spread().second);
        } catch (const std::exception& error) {
          state.SkipWithError(error.what());
        }
      })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(
      "BM_Client/set_multi",
      [&setup](benchmark::State& state) {
        try {
          const std::vector<Contender> contenders = setup.set_multi_contenders();
          check_all(contenders, kMultiRequests);
          measure(state, "set_multi", contenders, kMultiBatch, kMultiKeys);
          state.counters["servers"] = static_cast<double>(setup.servers().size());
        } catch (const std::exception& error) {
          state.SkipWithError(error.what());
        }
      })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

// run_all: every benchmark on `fleet`, then the deletion of every key drawn,
// from the fleet and the migration's extra server; on local servers, a check
// that they are all empty again.
void run_all(const LiveFleet& fleet) {
  Setup setup(fleet.servers());
  benchmark::AddCustomContext("memshard_client_value_bytes", std::to_string(kValueSize));
  MigrationSetup migration(fleet.servers());
  benchmark::AddCustomContext("memshard_client_migration_extra_server", migration.extra_server());
  register_all(setup);
  register_migration(migration);
  benchmark::RunSpecifiedBenchmarks();
  std::vector<Server> every = fleet.servers();
  every.push_back(memshard::parse_server(migration.extra_server()));
  const std::size_t deleted = memshard::bench::erase_keys(every, drawn_keys());
  std::cerr << "memshard: deleted " << deleted << " keys under '" << memshard::bench::run_prefix()
            << "'\n";
  if (fleet.started_here()) {
    memshard::bench::require_emptied(every, "deleting the client benchmark's keys");
  }
}

}  // namespace

auto main(int argc, char** argv) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  try {
    const LiveFleet fleet;
    try {
      run_all(fleet);
    } catch (const std::exception&) {
      // What was written before the failure goes too (the extra server dies
      // with the process).
      try {
        static_cast<void>(memshard::bench::erase_keys(fleet.servers(), drawn_keys()));
      } catch (const std::exception& error) {
        std::cerr << "memshard client benchmark: " << error.what() << '\n';
      }
      throw;
    }
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << "memshard client benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
