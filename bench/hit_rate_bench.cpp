// SPDX-License-Identifier: MIT
// hit_rate_bench.cpp: the cache hit rate that survives a resize, measured on
// real memcached servers, over several independent rings.
//
// The fleet is n servers plus a more. In every trial, for each placement
// (modulo-crc32, ring-crc32, ketama-md5-weighted), a ShardedClient for the
// first n servers stores K keys, and ShardedClients configured otherwise read
// every key back (visit_multi, 100 keys a call; a read never stores):
//   add m   (BM_HitRate/add/<placement>/added:m/trial:t, m = 1 .. a): a client
//           for the first n + m servers;
//   remove  (BM_HitRate/remove/<placement>/trial:t, when n >= 2): the first
//           server failed and was taken out of the list: a client for servers
//           2 .. n.
// A trial fills once per placement (the keys of its last fill deleted through
// the placement that stored them, then K sets), before the first read that
// needs it; only the reads are timed. Every key starts with the run's prefix
// (MEMSHARD_BENCH_PREFIX, run_keys.hpp): K keys of 10 to 40 random bytes after
// it. Nothing is flushed; on local servers, a deletion must leave every
// server empty, as a flush_all would.
//
// Trials: a ring places keys by hashing "host:port" strings, so one ring is one
// draw of the servers' shares of the hash space. With 160 points per server
// the hit rate of adding 1 server to 4 varies by ~1.5 percentage points
// (standard deviation) from ring to ring; one ring can land 3 points off the
// theory. R trials (MEMSHARD_BENCH_HIT_TRIALS, default 10) each run on fresh
// local memcached processes, so on new kernel ports: new point strings, a new
// ring. Each trial also has its own keys (seed + trial). Every trial is
// reported; the report averages them. MEMSHARD_SERVERS fixes the servers'
// identities, so with it there is 1 trial.
//
// Counters (one row per resize, placement and trial):
//   hit_rate    keys read back with the right value / K, after the resize;
//   predicted   keys the two placements put on the same server / K (what the
//               hit rate must be if the servers kept every key);
//   theory      add m: a ring n/(n+m), modulo gcd(n,m)/(n+m) (h % n ==
//               h % (n+m) for gcd(n,m) in n+m hashes); remove: a ring
//               (n-1)/n, modulo 1/n (h % n == h % (n-1) + 1 for 1 in n);
//   baseline    hit rate through the client that stored the keys (must be 1);
//   trial       the trial's number (0 .. R-1); the row's label lists its
//               servers.
//
// Servers: MEMSHARD_SERVERS=host:port,... uses those (F of them, at least 2;
// each must be empty, unless MEMSHARD_BENCH_ALLOW_NONEMPTY=1: on a server
// that holds items, the benchmark's sets can evict them and the hit rates
// can come out lower; nothing is flushed, the run's keys are deleted at the
// end): a = MEMSHARD_BENCH_ADDED (default 1, below F) and n = F - a. Otherwise n =
// MEMSHARD_BENCH_SERVERS (default 4) plus a = MEMSHARD_BENCH_ADDED (default 4) local memcached
// processes are started for each trial on free ports, and stopped before the next trial starts and
// on exit. MEMSHARD_BENCH_KEYS sets K, per trial (default 10000).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.hpp"
#include "live_servers.hpp"
#include "memshard/memshard.hpp"
#include "run_keys.hpp"

namespace {

using memshard::Server;
using memshard::bench::env_count;
using memshard::bench::KeySet;
using memshard::bench::LiveServers;

constexpr std::string_view kValuePrefix = "memshard-hit-rate:";
constexpr std::size_t kBatch = 100;  // keys per visit_multi
constexpr std::size_t kDefaultTrials = 10;
constexpr std::size_t kDefaultKeys = 10'000;

// value_for: sets `value` to what is stored under `key`: the prefix, then the key.
void value_for(std::string_view key, std::string& value) { value.assign(kValuePrefix).append(key); }

[[nodiscard]] auto holds_value_for(std::string_view value, std::string_view key) noexcept -> bool {
  return value.size() == kValuePrefix.size() + key.size() && value.starts_with(kValuePrefix) &&
         value.substr(kValuePrefix.size()) == key;
}

// View: the servers a locator was built for, as a window [first, first + size)
// of the fleet's list: locator index i is fleet server first + i.
struct View {
  std::size_t first;
  std::size_t size;
};

struct ReadOutcome {
  std::size_t hits = 0;
  std::size_t wrong = 0;  // found, but with another value
};

template <class Locator>
[[nodiscard]] auto client_for(std::span<const Server> servers, const Locator& locator)
    -> memshard::ShardedClient<Locator> {
  return memshard::ShardedClient<Locator>(std::vector<Server>(servers.begin(), servers.end()),
                                          locator);
}

// Stores every key through a client for `servers`; throws on the first failure.
template <class Locator>
void store_all(std::span<const Server> servers, const Locator& locator, const KeySet& keys) {
  auto client = client_for(servers, locator);
  std::string value;
  for (const std::string_view key : keys) {
    value_for(key, value);
    if (const memshard::Status status = client.set(key, value); !status) {
      throw std::runtime_error("memshard bench: set through " + client.server_for(key).endpoint() +
                               ": " + status.message());
    }
  }
}

// Deletes every key through a client for `servers` (a miss is fine: the set
// may never have happened); throws on the first other failure.
template <class Locator>
void remove_all(std::span<const Server> servers, const Locator& locator, const KeySet& keys) {
  auto client = client_for(servers, locator);
  for (const std::string_view key : keys) {
    if (const memshard::Status status = client.remove(key);
        !status && status.code() != memshard::Errc::kNotFound) {
      throw std::runtime_error("memshard bench: delete through " +
                               client.server_for(key).endpoint() + ": " + status.message());
    }
  }
}

// Reads every key through a client for `servers`, kBatch keys per visit_multi.
// Throws if any key could not be read (a miss is not a failure).
template <class Locator>
auto read_back(std::span<const Server> servers, const Locator& locator,
               std::span<const std::string_view> keys) -> ReadOutcome {
  auto client = client_for(servers, locator);
  ReadOutcome outcome;
  std::size_t failures = 0;
  std::string first_failure;
  for (std::size_t start = 0; start < keys.size(); start += kBatch) {
    const std::span<const std::string_view> batch =
        keys.subspan(start, std::min(kBatch, keys.size() - start));
    client.visit_multi(
        batch,
        [&outcome, batch](std::size_t index, const memshard::ItemView& item) {
          ++(holds_value_for(item.value, batch[index]) ? outcome.hits : outcome.wrong);
        },
        [&failures, &first_failure, batch](std::size_t index, const memshard::Status& status) {
          if (failures++ == 0) {
            first_failure = std::string(batch[index]) + ": " + status.message();
          }
        });
  }
  if (failures != 0) {
    throw std::runtime_error("memshard bench: get_multi could not read " +
                             std::to_string(failures) + " keys; first: " + first_failure);
  }
  return outcome;
}

// Trial: one trial's servers, its keys (under the run's prefix), which
// placement's keys the servers hold now, and how to delete them.
class Trial {
 public:
  Trial(std::size_t index, std::size_t local_count, std::size_t key_count)
      : index_(index),
        live_(2, static_cast<std::size_t>(-1), local_count),
        keys_(key_count, KeySet::kDefaultSeed + index, memshard::bench::run_prefix()) {}

  [[nodiscard]] auto index() const noexcept -> std::size_t { return index_; }
  [[nodiscard]] auto live() const noexcept -> const LiveServers& { return live_; }
  [[nodiscard]] auto servers() const noexcept -> std::span<const Server> { return live_.servers(); }
  [[nodiscard]] auto keys() const noexcept -> const KeySet& { return keys_; }

  /// erase: deletes the keys of the last fill, if any, through the placement
  /// that stored them; on local servers, checks that every server is empty
  /// again (as a flush_all would have left it). Throws on a failure (and can
  /// be called again).
  void erase() {
    if (!erase_) {
      return;
    }
    filled_.clear();
    erase_();
    erase_ = nullptr;
    if (live_.started_here()) {
      memshard::bench::require_emptied(servers(), "deleting the hit-rate keys");
    }
  }

  /// fill: makes the servers hold this trial's keys as `locator` for `servers`
  /// stores them (erase(), then a set per key), unless the last fill was
  /// `fill_id` already: reads store nothing, so it still holds. Returns the
  /// baseline: the keys read back through that same placement.
  template <class Locator>
  auto fill(const std::string& fill_id, std::span<const Server> servers, const Locator& locator)
      -> ReadOutcome {
    if (fill_id == filled_) {
      return baseline_;
    }
    erase();
    // Known before the first set, so that a fill that fails half-way is
    // deleted too.
    erase_ = [this, stored = std::vector<Server>(servers.begin(), servers.end()), locator] {
      remove_all(std::span<const Server>(stored), locator, keys_);
    };
    store_all(servers, locator, keys_);
    baseline_ = read_back(servers, locator, keys_.views());
    filled_ = fill_id;
    return baseline_;
  }

 private:
  std::size_t index_;
  LiveServers live_;
  KeySet keys_;
  std::string filled_;           // the fill the servers hold, "" for none known
  std::function<void()> erase_;  // deletes the last fill's keys; empty for none
  ReadOutcome baseline_;
};

// Trials: the R trials, one at a time: trial(t) stops the servers of the
// previous trial before it starts those of trial t. Trial 0 starts at once.
class Trials {
 public:
  Trials()
      : local_count_(env_count("MEMSHARD_BENCH_SERVERS", 4, 1) +
                     env_count("MEMSHARD_BENCH_ADDED", 4, 1)),
        key_count_(env_count("MEMSHARD_BENCH_KEYS", kDefaultKeys, 1)),
        current_(std::make_unique<Trial>(0, local_count_, key_count_)) {
    const std::size_t total = current_->servers().size();
    const bool local = current_->live().started_here();
    added_ =
        local ? env_count("MEMSHARD_BENCH_ADDED", 4, 1) : env_count("MEMSHARD_BENCH_ADDED", 1, 1);
    if (added_ >= total) {
      throw std::invalid_argument("MEMSHARD_BENCH_ADDED must be below the number of servers (" +
                                  std::to_string(total) + ")");
    }
    before_ = total - added_;
    const std::size_t asked = env_count("MEMSHARD_BENCH_HIT_TRIALS", kDefaultTrials, 1);
    count_ = local ? asked : 1;
    if (!local) {
      std::cerr << "memshard: MEMSHARD_SERVERS fixes the servers' identities (one ring): 1 trial\n";
    }
  }

  /// count: R, the number of trials.
  [[nodiscard]] auto count() const noexcept -> std::size_t { return count_; }
  /// before: n, the servers before an add.
  [[nodiscard]] auto before() const noexcept -> std::size_t { return before_; }
  /// added: a, the most servers an add brings.
  [[nodiscard]] auto added() const noexcept -> std::size_t { return added_; }
  [[nodiscard]] auto key_count() const noexcept -> std::size_t { return key_count_; }
  /// finish: deletes the current trial's keys (Trial::erase).
  void finish() {
    if (current_) {
      current_->erase();
    }
  }

  /// first: trial 0, started by the constructor (for the run's context).
  [[nodiscard]] auto first() const noexcept -> const Trial& { return *current_; }

  /// trial: trial `index`, with the keys of any other trial deleted and its
  /// servers stopped first.
  auto trial(std::size_t index) -> Trial& {
    if (!current_ || current_->index() != index) {
      finish();
      current_.reset();
      current_ = std::make_unique<Trial>(index, local_count_, key_count_);
    }
    return *current_;
  }

 private:
  std::size_t local_count_;
  std::size_t key_count_;
  std::unique_ptr<Trial> current_;
  std::size_t count_ = 1;
  std::size_t before_ = 0;
  std::size_t added_ = 0;
};

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

// Resize: one row: keys stored through the placement of `stored`, read through
// that of `read`, in trial `trial`.
struct Resize {
  std::string placement;
  std::size_t trial;
  View stored;
  View read;
  double theory;
};

// One resize on real servers; see the file comment.
template <class Make>
void run_resize(benchmark::State& state, Trials& trials, const Resize& resize, Make make) {
  try {
    Trial& trial = trials.trial(resize.trial);
    const std::span<const Server> all = trial.servers();
    const std::span<const Server> stored_servers =
        all.subspan(resize.stored.first, resize.stored.size);
    const std::span<const Server> read_servers = all.subspan(resize.read.first, resize.read.size);
    const auto stored_with = make(stored_servers);
    const auto read_with = make(read_servers);
    const ReadOutcome baseline =
        trial.fill(resize.placement + "@" + std::to_string(resize.stored.first) + "+" +
                       std::to_string(resize.stored.size),
                   stored_servers, stored_with);
    ReadOutcome after;
    for (auto _ : state) {
      after = read_back(read_servers, read_with, trial.keys().views());
    }
    const auto k = static_cast<double>(trial.keys().size());
    state.counters["trial"] = static_cast<double>(resize.trial);
    state.counters["servers_before"] = static_cast<double>(resize.stored.size);
    state.counters["servers_after"] = static_cast<double>(resize.read.size);
    state.counters["keys"] = k;
    state.counters["hit_rate"] = static_cast<double>(after.hits) / k;
    state.counters["predicted"] =
        same_server_fraction(stored_with, resize.stored, read_with, resize.read, trial.keys());
    state.counters["theory"] = resize.theory;
    state.counters["baseline"] = static_cast<double>(baseline.hits) / k;
    state.counters["wrong_values"] = static_cast<double>(after.wrong + baseline.wrong);
    state.counters["local_servers"] = trial.live().started_here() ? 1 : 0;
    state.SetLabel(trial.live().endpoints());
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
  }
}

// register_one: one resize of one placement in one trial, as a benchmark
// called `name`.
template <class Make>
void register_one(const std::string& name, Trials& trials, const Resize& resize, Make make) {
  benchmark::RegisterBenchmark(
      name.c_str(),
      [&trials, resize, make](benchmark::State& state) { run_resize(state, trials, resize, make); })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

template <class Make>
void register_placement(const std::string& label, bool ring, Trials& trials, std::size_t trial,
                        Make make) {
  const std::size_t n = trials.before();
  const auto nd = static_cast<double>(n);
  const std::string suffix = "/trial:" + std::to_string(trial);
  for (std::size_t m = 1; m <= trials.added(); ++m) {
    const auto md = static_cast<double>(m);
    const double theory = ring ? nd / (nd + md) : static_cast<double>(std::gcd(n, m)) / (nd + md);
    register_one("BM_HitRate/add/" + label + "/added:" + std::to_string(m) + suffix, trials,
                 Resize{label, trial, View{0, n}, View{0, n + m}, theory}, make);
  }
  // remove: the first of the n servers is gone; the other n - 1 stay.
  if (n >= 2) {
    register_one("BM_HitRate/remove/" + label + suffix, trials,
                 Resize{label, trial, View{0, n}, View{1, n - 1}, ring ? (nd - 1) / nd : 1 / nd},
                 make);
  }
}

void register_all(Trials& trials) {
  for (std::size_t trial = 0; trial < trials.count(); ++trial) {
    register_placement("modulo-crc32", false, trials, trial, [](std::span<const Server> s) {
      return memshard::profiles::modulo_crc32(s);
    });
    register_placement("ring-crc32", true, trials, trial,
                       [](std::span<const Server> s) { return memshard::profiles::ring_crc32(s); });
    register_placement("ketama-md5-weighted", true, trials, trial, [](std::span<const Server> s) {
      return memshard::profiles::libmemcached_ketama_weighted(s);
    });
  }
}

}  // namespace

auto main(int argc, char** argv) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  try {
    Trials trials;
    const LiveServers& first = trials.first().live();
    benchmark::AddCustomContext("memshard_keys", std::to_string(trials.key_count()));
    benchmark::AddCustomContext("memshard_hit_trials", std::to_string(trials.count()));
    benchmark::AddCustomContext("memshard_servers_before", std::to_string(trials.before()));
    benchmark::AddCustomContext("memshard_added", std::to_string(trials.added()));
    benchmark::AddCustomContext("memshard_server_source",
                                first.started_here() ? "local" : "MEMSHARD_SERVERS");
    if (first.started_here()) {
      benchmark::AddCustomContext("memshard_memcached_version", first.memcached_version());
    }
    register_all(trials);
    benchmark::RunSpecifiedBenchmarks();
    trials.finish();
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << "memshard hit-rate benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
