// SPDX-License-Identifier: MIT
// migration_race_bench.cpp: stale reads while readers copy keys forward and
// writers invalidate them, in a live migration on real memcached servers.
//
// Servers: kOldServers + kNewServers local memcached processes. The old
// placement is a ketama ring over the first two, the new one over the other
// two, so every key moves.
//
// One round is one fresh migration: delete the last round's keys from every
// server, write version 0 of kKeys keys ("<prefix>race:<arm>:<round>:<k>",
// under the run's prefix from run_keys.hpp, new names every round) through
// the old placement, begin_migration(), let kReaders reader threads and
// kWriters writer threads (clones of the round's client family) run together,
// then commit_migration(). After an arm's last round the servers must be
// empty, as a flush_all would leave them. A copy forward races a write only
// for a key the writers have not touched yet in this round (a write removes
// the old copy), hence many short rounds.
//
// Readers: note the key's completed version, then get() it; a hit that is
// older than the noted version is a stale read (a hit that is not a version
// number counts as stale too, and as a bad value). A full miss is not filled.
// Each reader makes kReadsPerRound reads per round, keys drawn uniformly.
// Writers: each owns the keys k with k % kWriters == its number (one writer
// per key, so versions reach the cache in order); pick one of them, bump its
// database version, then remove(key) (kRemovePercent of the writes) or
// set(key, version), then publish the version as completed. Writers stop when
// the readers are done.
//
// Arms: kFast and kStrict (MigrationOptions::consistency), and the naive
// control, written here with two plain clients (one per placement, no
// migration): read the new owner; on a miss read the old one and `add` its
// value to the new owner without any validation; writers delete (or set) on
// the new owner first, then delete on the old one.
//
// Counters per arm: rounds, gets, hits, stale, stale_rate (stale / hits),
// bad_values, errors (calls that failed), writes, removes, sets, and the sums
// over the rounds of migration_stats(): copies_stored, copies_revoked,
// fallback_hits, leases_won, leases_busy (the naive arm counts its own
// copies_stored: adds that were stored). The label is the arm's description.
//
// MEMSHARD_MIGRATION_RACE_SCALE=S (default 1) multiplies the rounds by S.

#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iostream>
#include <latch>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "benchmark_main.hpp"
#include "memshard/memshard.hpp"
#include "run_keys.hpp"
#include "support/memcached_server.hpp"

namespace {

using memshard::MigrationConsistency;
using memshard::MigrationOptions;
using memshard::MigrationStats;
using memshard::Server;
using memshard::bench::env_count;
using memshard::bench::SplitMix64;
using Ring = memshard::KetamaLocator<memshard::Md5>;
using Client = memshard::ShardedClient<Ring>;

constexpr std::size_t kOldServers = 2;
constexpr std::size_t kNewServers = 2;
constexpr std::size_t kKeys = 64;
constexpr std::size_t kReaders = 3;
constexpr std::size_t kWriters = 2;
constexpr std::size_t kReadsPerRound = 256;  // per reader
constexpr std::size_t kBaseRounds = 180;     // per arm, times the scale
constexpr std::uint64_t kRemovePercent = 70;

/// Settings: the run's size, from MEMSHARD_MIGRATION_RACE_SCALE.
struct Settings {
  std::size_t scale = env_count("MEMSHARD_MIGRATION_RACE_SCALE", 1, 1);
  std::size_t rounds = kBaseRounds * scale;
};

/// Count: what threads counted, summed over rounds.
struct Count {
  std::uint64_t gets = 0;
  std::uint64_t hits = 0;
  std::uint64_t stale = 0;
  std::uint64_t bad_values = 0;
  std::uint64_t errors = 0;
  std::uint64_t writes = 0;
  std::uint64_t removes = 0;
  std::uint64_t sets = 0;
  std::uint64_t naive_copies = 0;

  void add(const Count& other) noexcept {
    gets += other.gets;
    hits += other.hits;
    stale += other.stale;
    bad_values += other.bad_values;
    errors += other.errors;
    writes += other.writes;
    removes += other.removes;
    sets += other.sets;
    naive_copies += other.naive_copies;
  }
};

/// Round: what the threads of one round share.
struct Round {
  std::vector<std::string> keys;
  std::array<std::atomic<std::uint64_t>, kKeys> completed{};  // published versions
  std::array<std::uint64_t, kKeys> database{};                // each only by its key's writer
  std::atomic<bool> stop{false};
  std::latch start{static_cast<std::ptrdiff_t>(kReaders + kWriters)};
};

/// version_of: the version a cached value holds, or nothing for a value
/// that is not a version number.
[[nodiscard]] auto version_of(std::string_view value) noexcept -> std::optional<std::uint64_t> {
  std::uint64_t version = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), version);
  if (error != std::errc() || end != value.data() + value.size() || value.empty()) {
    return std::nullopt;
  }
  return version;
}

/// judge: counts one read of key `k` that answered `got`, begun when the
/// key's completed version was `floor`.
void judge(const memshard::Result<std::optional<memshard::Item>>& got, std::uint64_t floor,
           Count& count) {
  ++count.gets;
  if (!got.ok()) {
    ++count.errors;
    return;
  }
  if (!got.value().has_value()) {
    return;
  }
  ++count.hits;
  const std::optional<std::uint64_t> version = version_of(got.value()->value);
  if (!version) {
    ++count.bad_values;
    ++count.stale;
  } else if (*version < floor) {
    ++count.stale;
  }
}

/// Access: how one thread of an arm reads and writes a key: the migrating
/// family's clone, or the naive control's two plain clients.
class Access {
 public:
  /// A clone of a migrating family.
  explicit Access(Client client) : client_(std::move(client)) {}
  /// The naive control: a client of each placement.
  Access(Client new_client, Client old_client)
      : client_(std::move(new_client)), old_(std::move(old_client)) {}

  /// read: get, and for the naive control, its fallback and unchecked copy.
  auto read(const std::string& key, Count& count)
      -> memshard::Result<std::optional<memshard::Item>> {
    memshard::Result<std::optional<memshard::Item>> got = client_.get(key);
    if (!old_ || !got.ok() || got.value().has_value()) {
      return got;
    }
    memshard::Result<std::optional<memshard::Item>> found = old_->get(key);
    if (found.ok() && found.value().has_value()) {
      if (client_.add(key, found.value()->value, {}, found.value()->flags)) {
        ++count.naive_copies;
      }
    }
    return found;
  }

  /// write: remove or set (to `version`); the naive control then deletes the
  /// old copy.
  void write(const std::string& key, bool remove, std::uint64_t version, Count& count) {
    const memshard::Status status =
        remove ? client_.remove(key) : client_.set(key, std::to_string(version));
    if (!status && status.code() != memshard::Errc::kNotFound) {
      ++count.errors;
    }
    if (old_) {
      if (const memshard::Status old = old_->remove(key);
          !old && old.code() != memshard::Errc::kNotFound) {
        ++count.errors;
      }
    }
  }

 private:
  Client client_;
  std::optional<Client> old_;
};

/// reader: kReadsPerRound reads of random keys.
void reader(Round& round, Access access, std::uint64_t seed, Count& count) {
  SplitMix64 random(seed);
  round.start.arrive_and_wait();
  for (std::size_t i = 0; i < kReadsPerRound; ++i) {
    const auto k = static_cast<std::size_t>(random.below(kKeys));
    const std::uint64_t floor = round.completed[k].load(std::memory_order_acquire);
    judge(access.read(round.keys[k], count), floor, count);
  }
}

/// writer: writes its own keys until the readers are done.
void writer(Round& round, Access access, std::size_t number, std::uint64_t seed, Count& count) {
  SplitMix64 random(seed);
  constexpr std::size_t kOwned = kKeys / kWriters;
  round.start.arrive_and_wait();
  while (!round.stop.load(std::memory_order_relaxed)) {
    const std::size_t k = number + kWriters * static_cast<std::size_t>(random.below(kOwned));
    const std::uint64_t version = ++round.database[k];
    const bool remove = random.below(100) < kRemovePercent;
    access.write(round.keys[k], remove, version, count);
    ++count.writes;
    ++(remove ? count.removes : count.sets);
    round.completed[k].store(version, std::memory_order_release);
  }
}

/// Arm: one way of reading through a migration.
struct Arm {
  std::string_view name;   ///< in the benchmark's name: fast, strict, naive
  std::string_view label;  ///< in the report
  std::optional<MigrationConsistency> consistency;  ///< none: the naive control
};

/// kArms: kFast, kStrict and the naive control.
constexpr std::array<Arm, 3> kArms = {
    Arm{"fast", "kFast: add, then the old copy's cas validated", MigrationConsistency::kFast},
    Arm{"strict", "kStrict: the new slot leased (mg N), filled with ms C",
        MigrationConsistency::kStrict},
    Arm{"naive", "naive control: add without validation; writers new, then old", std::nullopt},
};

/// Experiment: the servers and what every arm sums up.
class Experiment {
 public:
  Experiment() {
    for (std::size_t i = 0; i < kOldServers + kNewServers; ++i) {
      processes_.emplace_back();
      (i < kOldServers ? old_ : new_).push_back(memshard::parse_server(processes_.back().spec()));
      all_.push_back(memshard::parse_server(processes_.back().spec()));
    }
    memshard::bench::require_empty(all_);
  }

  void add_context() const {
    benchmark::AddCustomContext("memshard_migration_race_scale", std::to_string(settings_.scale));
    benchmark::AddCustomContext("memshard_migration_race_rounds", std::to_string(settings_.rounds));
    benchmark::AddCustomContext("memshard_migration_race_keys", std::to_string(kKeys));
    benchmark::AddCustomContext("memshard_migration_race_readers", std::to_string(kReaders));
    benchmark::AddCustomContext("memshard_migration_race_writers", std::to_string(kWriters));
    benchmark::AddCustomContext("memshard_migration_race_reads_per_round",
                                std::to_string(kReadsPerRound));
    benchmark::AddCustomContext("memshard_migration_race_remove_percent",
                                std::to_string(kRemovePercent));
    benchmark::AddCustomContext("memshard_migration_race_servers",
                                endpoints(old_) + " -> " + endpoints(new_));
    benchmark::AddCustomContext("memshard_migration_race_memcached_version", version());
  }

  void run(benchmark::State& state, const Arm& arm) {
    try {
      Count count;
      MigrationStats sums;
      for (auto _ : state) {
        for (std::size_t r = 0; r < settings_.rounds; ++r) {
          run_round(arm, r, count, sums);
        }
      }
      erase_last_round();
      // Every round deleted only the keys of the one before it: the servers
      // must be as empty as flush_all left them.
      memshard::bench::require_emptied(all_, "deleting each round's keys");
      report(state, count, sums);
      state.SetLabel(std::string(arm.label));
    } catch (const std::exception& error) {
      state.SkipWithError(error.what());
    }
  }

 private:
  // Deletes the keys of the last round, if any, from every server.
  void erase_last_round() {
    static_cast<void>(memshard::bench::erase_keys(all_, last_round_));
    last_round_.clear();
  }

  // One fresh migration (see the file comment).
  void run_round(const Arm& arm, std::size_t number, Count& count, MigrationStats& sums) {
    erase_last_round();
    Round round;
    for (std::size_t k = 0; k < kKeys; ++k) {
      round.keys.push_back(memshard::bench::run_prefix() + "race:" + std::string(arm.name) + ":" +
                           std::to_string(number) + ":" + std::to_string(k));
    }
    last_round_ = round.keys;  // before the first write: a failed round is deleted too
    Client family(old_);
    for (std::size_t k = 0; k < kKeys; ++k) {
      if (const memshard::Status status = family.set(round.keys[k], "0"); !status) {
        throw std::runtime_error("memshard bench: filling version 0: " + status.message());
      }
    }
    std::optional<Client> naive_new;
    if (arm.consistency) {
      MigrationOptions options;
      options.consistency = *arm.consistency;
      family.begin_migration(new_, options);
    } else {
      naive_new.emplace(new_);
    }
    // Every thread's clients first: nothing below throws before the threads
    // have met at the start.
    std::vector<Access> access;
    for (std::size_t t = 0; t < kReaders + kWriters; ++t) {
      access.push_back(naive_new ? Access(naive_new->clone(), family.clone())
                                 : Access(family.clone()));
    }
    std::array<Count, kReaders + kWriters> counts{};
    std::array<std::exception_ptr, kReaders + kWriters> failures{};
    const std::uint64_t seed = memshard::bench::KeySet::kDefaultSeed + number * 16;
    {
      std::vector<std::jthread> writers;
      writers.reserve(kWriters);
      for (std::size_t w = 0; w < kWriters; ++w) {
        const std::size_t t = kReaders + w;
        writers.emplace_back([&, w, t] {
          try {
            writer(round, std::move(access[t]), w, seed + t, counts[t]);
          } catch (...) {
            failures[t] = std::current_exception();
          }
        });
      }
      {
        std::vector<std::jthread> readers;
        readers.reserve(kReaders);
        for (std::size_t t = 0; t < kReaders; ++t) {
          readers.emplace_back([&, t] {
            try {
              reader(round, std::move(access[t]), seed + t, counts[t]);
            } catch (...) {
              failures[t] = std::current_exception();
            }
          });
        }
      }
      round.stop.store(true, std::memory_order_relaxed);
    }
    for (const std::exception_ptr& failure : failures) {
      if (failure) {
        std::rethrow_exception(failure);
      }
    }
    for (const Count& c : counts) {
      count.add(c);
    }
    if (arm.consistency) {
      const MigrationStats stats = family.migration_stats();
      sums.copies_stored += stats.copies_stored;
      sums.copies_revoked += stats.copies_revoked;
      sums.fallback_hits += stats.fallback_hits;
      sums.leases_won += stats.leases_won;
      sums.leases_busy += stats.leases_busy;
      if (!family.commit_migration()) {
        throw std::runtime_error("memshard bench: no migration to commit");
      }
    }
  }

  void report(benchmark::State& state, const Count& count, const MigrationStats& sums) const {
    const auto set = [&state](const char* name, std::uint64_t value) {
      state.counters[name] = static_cast<double>(value);
    };
    set("rounds", settings_.rounds);
    set("keys", kKeys);
    set("readers", kReaders);
    set("writers", kWriters);
    set("gets", count.gets);
    set("hits", count.hits);
    set("stale", count.stale);
    state.counters["stale_rate"] =
        count.hits == 0 ? 0 : static_cast<double>(count.stale) / static_cast<double>(count.hits);
    set("bad_values", count.bad_values);
    set("errors", count.errors);
    set("writes", count.writes);
    set("removes", count.removes);
    set("sets", count.sets);
    set("copies_stored", count.naive_copies + sums.copies_stored);
    set("copies_revoked", sums.copies_revoked);
    set("fallback_hits", sums.fallback_hits);
    set("leases_won", sums.leases_won);
    set("leases_busy", sums.leases_busy);
  }

  [[nodiscard]] static auto endpoints(const std::vector<Server>& servers) -> std::string {
    std::string specs;
    for (const Server& server : servers) {
      specs.append(specs.empty() ? "" : ",").append(server.endpoint());
    }
    return specs;
  }

  [[nodiscard]] auto version() const -> std::string {
    std::string text = processes_.front().command("version");
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
      text.pop_back();
    }
    return text;
  }

  Settings settings_;
  std::vector<memshard::testing::MemcachedServer> processes_;
  std::vector<Server> old_;
  std::vector<Server> new_;
  std::vector<Server> all_;              // old_, then new_
  std::vector<std::string> last_round_;  // the keys the last round wrote
};

}  // namespace

auto main(int argc, char** argv) -> int {
  return memshard::bench::run_benchmarks(argc, argv, "memshard migration race benchmark", [] {
    Experiment experiment;
    experiment.add_context();
    memshard::bench::register_arms("BM_MigrationRace", experiment, kArms);
    benchmark::RunSpecifiedBenchmarks();
  });
}
