// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_CLIENT_MIGRATION_HPP_
#define MEMSHARD_BENCH_CLIENT_MIGRATION_HPP_

// client/migration.hpp: MigrationSetup, the client benchmark's live-migration
// runs: two client families on the same servers, one of them in a migration
// window to those servers plus one extra local server; the contenders of a
// hit and of a miss during the window; and the round trips of a hit, a
// moved-key miss and a same-owner miss, counted with memcached's own stats.

#include <benchmark/benchmark.h>
#include <libmemcached-1.0/memcached.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "client/contenders.hpp"
#include "client/workload.hpp"
#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"

namespace memshard::bench::client {

/// kCountedCalls: calls of each kind whose round trips are counted.
inline constexpr std::size_t kCountedCalls = 100;
/// kMigrationMissKeys: absent keys of each kind (moved, same owner) the timed
/// misses cycle over.
inline constexpr std::size_t kMigrationMissKeys = 256;

/// ServerGets: memcached's get counters of one server.
struct ServerGets {
  std::uint64_t cmd_get = 0;     ///< get requests (a multi-key get counts each key; mg counts)
  std::uint64_t get_hits = 0;    ///< of them, hits
  std::uint64_t get_misses = 0;  ///< of them, misses
};

/// server_gets: `server`'s cmd_get, get_hits and get_misses (its "stats").
[[nodiscard]] inline auto server_gets(const Server& server) -> ServerGets {
  memcached_stat_st stat{};
  const memcached_return_t rc =
      memcached_stat_servername(&stat, nullptr, server.host.c_str(), server.port);
  if (rc != MEMCACHED_SUCCESS) {
    throw std::runtime_error("stats of " + server.endpoint() + ": " +
                             memcached_strerror(nullptr, rc));
  }
  return {stat.cmd_get, stat.get_hits, stat.get_misses};
}

/// MigrationSetup: the clients, keys and checks of the migration runs: two
/// families of ShardedClient<KetamaLocator<Md5>>. `migrating_` writes every
/// key on the benchmark's servers (the old placement), then begins a
/// migration (MoveOnCopy::kNever) to those servers plus one extra local
/// memcached and copies the moved ones among the hit keys to their new owner
/// with migrate_key, so that every measured hit is a hit on its new owner.
/// `settled_` has no migration: it is built on the new server list, so it
/// reads every key on the server `migrating_` reads it on (same keys, same
/// servers: only the migration window differs). The constructor throws on
/// any failure.
class MigrationSetup {
 public:
  /// MigrationSetup: on `servers` (the client benchmark's).
  explicit MigrationSetup(const std::vector<Server>& servers)
      : old_servers_(servers),
        new_servers_(with_extra(servers, extra_)),
        old_ring_(profiles::libmemcached_ketama_weighted(old_servers_)),
        new_ring_(profiles::libmemcached_ketama_weighted(new_servers_)),
        settled_(new_servers_, std::make_shared<const KetamaLocator<Md5>>(new_ring_)),
        migrating_(old_servers_, std::make_shared<const KetamaLocator<Md5>>(old_ring_)),
        hit_data_(kSingleKeys, 0x6D69672D686974ULL),
        moved_hit_data_(Data::on_first_server(kCountedCalls, 0x6D696D6F766564ULL, moved())),
        moved_miss_data_(Data::on_first_server(kMigrationMissKeys, 0x6D69616273656EULL, moved())),
        stayed_miss_data_(
            Data::on_first_server(kMigrationMissKeys, 0x6D697374617964ULL, stayed())) {
    write_all(migrating_, hit_data_, "migration: set before the window");
    write_all(migrating_, moved_hit_data_, "migration: set before the window (moved)");
    MigrationOptions options;
    options.move_on_copy = MoveOnCopy::kNever;
    migrating_.begin_migration(new_servers_, std::make_shared<const KetamaLocator<Md5>>(new_ring_),
                               options);
    if (!migrating_.migration_stats().active) {
      throw std::runtime_error("migration: begin_migration did not start a migration");
    }
    moved_hits_ = copy_forward(hit_data_);
    if (copy_forward(moved_hit_data_) != moved_hit_data_.keys.size()) {
      throw std::runtime_error("migration: a key drawn as moved did not move");
    }
  }

  /// hit_contenders: the contenders of BM_Client/get_in_migration:
  /// in_migration (a get, a hit, through the family in the window), then the
  /// baseline no_migration (the same keys on the same servers, `settled_`).
  [[nodiscard]] auto hit_contenders() -> std::vector<Contender> {
    std::vector<Contender> out;
    out.push_back(sharded_get("in_migration", migrating_, hit_data_, all_indexes(kSingleKeys)));
    out.push_back(sharded_get("no_migration", settled_, hit_data_, all_indexes(kSingleKeys)));
    return out;
  }

  /// miss_contenders: the contenders of BM_Client/miss_in_migration: a
  /// moved-key miss (on neither owner) and a same-owner miss in the window, a
  /// plain miss (no migration; the reference of both), and the baseline, a
  /// plain get (a hit, no migration).
  [[nodiscard]] auto miss_contenders() -> std::vector<Contender> {
    std::vector<Contender> out;
    out.push_back(sharded_miss("moved_miss", migrating_, moved_miss_data_));
    out.push_back(sharded_miss("same_owner_miss", migrating_, stayed_miss_data_));
    out.push_back(sharded_miss("miss", settled_, moved_miss_data_));
    out.push_back(sharded_get("hit", settled_, hit_data_, all_indexes(kSingleKeys)));
    out[0].reference = out[1].reference = "miss";
    return out;
  }

  /// count_round_trips: kCountedCalls calls of each kind through the family in
  /// the window, with every server's get counters read before and after each
  /// kind, published as counters of `state` (see client_bench.cpp). Throws
  /// when a call answers other than expected.
  void count_round_trips(benchmark::State& state) {
    count("hit", state, moved_hit_data_, true, [](const MigrationStats& s) { return s.new_hits; });
    count("moved_miss", state, moved_miss_data_, false,
          [](const MigrationStats& s) { return s.fallback_misses; });
    count("same_owner_miss", state, stayed_miss_data_, false,
          [](const MigrationStats& s) { return s.same_owner_misses; });
    state.counters["calls"] = static_cast<double>(kCountedCalls);
    state.counters["servers_before"] = static_cast<double>(old_servers_.size());
    state.counters["servers_after"] = static_cast<double>(new_servers_.size());
    state.counters["moved_hit_keys"] = static_cast<double>(moved_hits_);
    state.counters["hit_keys"] = static_cast<double>(hit_data_.keys.size());
  }

  /// extra_server: the local server the migration adds.
  [[nodiscard]] auto extra_server() const -> std::string { return extra_.spec(); }
  /// moved_hits: how many of the timed hit keys moved (hits on the extra server).
  [[nodiscard]] auto moved_hits() const noexcept -> std::size_t { return moved_hits_; }

 private:
  // KeyFilter: for Data::on_first_server: "server 0" is a key that moves
  // (`want_moved`) or one that stays.
  struct KeyFilter {
    const MigrationSetup* setup;
    bool want_moved;
    [[nodiscard]] auto server_index_for(std::string_view key) const noexcept -> std::size_t {
      return setup->moves(key) == want_moved ? 0 : 1;
    }
  };

  [[nodiscard]] auto moved() const noexcept -> KeyFilter { return {this, true}; }
  [[nodiscard]] auto stayed() const noexcept -> KeyFilter { return {this, false}; }

  static auto with_extra(const std::vector<Server>& servers, const testing::MemcachedServer& extra)
      -> std::vector<Server> {
    std::vector<Server> out = servers;
    out.push_back(parse_server(extra.spec()));
    return out;
  }

  // Whether `key`'s owner changes (servers compared by host and port, as the
  // client compares them).
  [[nodiscard]] auto moves(std::string_view key) const noexcept -> bool {
    const Server& was = old_servers_[old_ring_.locate(key)];
    const Server& is = new_servers_[new_ring_.locate(key)];
    return was.host != is.host || was.port != is.port;
  }

  // Copies the moved keys of `data` to their new owner; answers how many moved.
  auto copy_forward(const Data& data) -> std::size_t {
    std::size_t moved_keys = 0;
    for (const std::string& key : data.keys) {
      const KeyMigration done = migrating_.migrate_key(key);
      const KeyMigration expected = moves(key) ? KeyMigration::kCopied : KeyMigration::kSameOwner;
      if (done != expected) {
        throw std::runtime_error("migration: migrate_key(" + key +
                                 "): " + std::string(to_string(done)) + ", expected " +
                                 std::string(to_string(expected)));
      }
      moved_keys += done == KeyMigration::kCopied ? 1U : 0U;
    }
    return moved_keys;
  }

  template <class Client>
  static auto sharded_miss(std::string name, Client& client, const Data& data) -> Contender {
    return keyed(std::move(name), all_indexes(data.keys.size()), [&client, &data](std::size_t i) {
      const auto miss = client.get(data.keys[i]);
      return miss.ok() && !miss.value();
    });
  }

  auto snapshot() const -> std::vector<ServerGets> {
    std::vector<ServerGets> out;
    out.reserve(new_servers_.size());
    for (const Server& server : new_servers_) {
      out.push_back(server_gets(server));
    }
    return out;
  }

  // The first kCountedCalls keys of `data`, one get each through the family
  // in the window (each a hit with its value when `hits`, else a miss),
  // between two reads of every server's counters. Publishes <name>_calls,
  // _gets (requests reaching any server), _extra_round_trips (_gets minus the
  // calls), _old_owner_gets (requests reaching servers that are the old owner
  // of a key of the kind and the new owner of none; moved keys only),
  // _get_hits, _get_misses and _stat (the MigrationStats counter of the kind).
  template <class Stat>
  auto count(const std::string& name, benchmark::State& state, const Data& data, bool hits,
             Stat stat) -> void {
    std::vector<bool> old_owner(new_servers_.size(), false);
    std::vector<bool> new_owner(new_servers_.size(), false);
    for (std::size_t i = 0; i < kCountedCalls; ++i) {
      old_owner[old_ring_.locate(data.keys[i])] = true;  // old index == new index
      new_owner[new_ring_.locate(data.keys[i])] = true;
    }
    const std::uint64_t stat_before = stat(migrating_.migration_stats());
    const std::vector<ServerGets> before = snapshot();
    for (std::size_t i = 0; i < kCountedCalls; ++i) {
      const auto got = migrating_.get(data.keys[i]);
      const bool right =
          got.ok() && (hits ? got.value() && got.value()->value == data.values[i] : !got.value());
      if (!right) {
        throw std::runtime_error(
            "migration: " + name + ": " + data.keys[i] + " answered " +
            (got.ok() ? (got.value() ? "a hit" : "a miss") : got.status().message()));
      }
    }
    const std::vector<ServerGets> after = snapshot();
    const std::uint64_t stat_after = stat(migrating_.migration_stats());
    std::uint64_t gets_total = 0;
    std::uint64_t old_owner_gets = 0;
    ServerGets sum;
    for (std::size_t s = 0; s < new_servers_.size(); ++s) {
      const std::uint64_t gets = after[s].cmd_get - before[s].cmd_get;
      gets_total += gets;
      if (old_owner[s] && !new_owner[s]) {
        old_owner_gets += gets;
      }
      sum.get_hits += after[s].get_hits - before[s].get_hits;
      sum.get_misses += after[s].get_misses - before[s].get_misses;
    }
    state.counters[name + "_calls"] = static_cast<double>(kCountedCalls);
    state.counters[name + "_gets"] = static_cast<double>(gets_total);
    state.counters[name + "_extra_round_trips"] =
        static_cast<double>(gets_total) - static_cast<double>(kCountedCalls);
    if (moves(data.keys.front())) {
      state.counters[name + "_old_owner_gets"] = static_cast<double>(old_owner_gets);
    }
    state.counters[name + "_get_hits"] = static_cast<double>(sum.get_hits);
    state.counters[name + "_get_misses"] = static_cast<double>(sum.get_misses);
    state.counters[name + "_stat"] = static_cast<double>(stat_after - stat_before);
  }

  testing::MemcachedServer extra_;  // started first: new_servers_ names it
  std::vector<Server> old_servers_;
  std::vector<Server> new_servers_;
  KetamaLocator<Md5> old_ring_;
  KetamaLocator<Md5> new_ring_;
  ShardedClient<KetamaLocator<Md5>> settled_;    // no migration, on new_servers_
  ShardedClient<KetamaLocator<Md5>> migrating_;  // in the window
  Data hit_data_;          // the timed hits, moved ones copied to their new owner
  Data moved_hit_data_;    // the counted hits: moved keys, copied to their new owner
  Data moved_miss_data_;   // moved keys, never written
  Data stayed_miss_data_;  // keys whose owner does not change, never written
  std::size_t moved_hits_ = 0;
};

}  // namespace memshard::bench::client

#endif  // MEMSHARD_BENCH_CLIENT_MIGRATION_HPP_
