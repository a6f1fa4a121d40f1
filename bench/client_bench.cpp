// SPDX-License-Identifier: MIT
// client_bench.cpp: ShardedClient end to end on real memcached servers, against
// libmemcached used directly, with every contender timed in the same run,
// interleaved.
//
// Benchmarks (each one interleaved measurement, see below):
//   BM_Client/get        single get, a hit with a 100-byte value;
//   BM_Client/set        single set of a 100-byte value;
//   BM_Client/get_multi  one multi-get of 100 keys spread over every server.
//
// Contenders of get and set:
//   ketama, modulo            ShardedClient<KetamaLocator<Md5>> (the
//                             libmemcached_ketama_weighted profile) and
//                             ShardedClient<ModuloLocator<Crc32>>, on keys
//                             wherever their locator puts them;
//   ketama_same, modulo_same  the same clients on the keys their locator puts
//                             on the baseline's server;
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
//                             found; see bench/nutcracker_proxy.hpp);
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
//   libmemcached_all          the every-server KETAMA_WEIGHTED memcached_st on
//                             ketama's lists;
//   twemproxy                 the proxy's memcached_st on ketama's lists (left
//                             out, like above, without nutcracker);
//   libmemcached              the baseline: the memcached_st holding only the
//                             first server, on lists of keys that
//                             KetamaLocator<Md5> puts on that server.
// Every libmemcached contender of get_multi does memcached_mget, then
// memcached_fetch_result into a caller-owned result, each key and value
// copied out into reused strings.
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
// ratio against twemproxy.
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
// Servers: MEMSHARD_SERVERS=host:port,... (2 to 100 servers; only keys under
// "memshard-client:" are written, nothing is flushed) or
// MEMSHARD_BENCH_SERVERS local memcached processes (default 4) on free ports.
//
// Instruction counts: with MEMSHARD_BENCH_CALLGRIND_OPS=N, under
// `valgrind --tool=callgrind`, no timing is done: after the checks each
// contender runs N calls (N/10 multi-gets) alone between CALLGRIND_ZERO_STATS and
// CALLGRIND_DUMP_STATS_AT("<benchmark>/<contender>/<calls>/<keys per call>"),
// so every dump holds exactly one contender's calls.

#include <benchmark/benchmark.h>
#include <libmemcached-1.0/memcached.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define MEMSHARD_BENCH_HAS_CALLGRIND 1
#else
#define MEMSHARD_BENCH_HAS_CALLGRIND 0
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "live_servers.hpp"
#include "memshard/detail/memcached_handle.hpp"
#include "memshard/memshard.hpp"
#include "nutcracker_proxy.hpp"
#include "support/memcached_server.hpp"

namespace {

// Frees a value buffer that memcached_get allocated with malloc.
struct FreeBuffer {
  void operator()(char* buffer) const noexcept { std::free(buffer); }
};

using memshard::ClientOptions;
using memshard::Crc32;
using memshard::KetamaLocator;
using memshard::Md5;
using memshard::ModuloLocator;
using memshard::Server;
using memshard::ShardedClient;
using memshard::bench::FetchResult;
using memshard::bench::KeySet;
using memshard::bench::MemcachedPtr;
using memshard::testing::MemcachedServer;

using KetamaClient = ShardedClient<KetamaLocator<Md5>>;
using ModuloClient = ShardedClient<ModuloLocator<Crc32>>;

constexpr std::string_view kKeyPrefix = "memshard-client:";
constexpr std::size_t kValueSize = 100;
constexpr std::size_t kSingleKeys = 1024;
constexpr std::size_t kMultiKeys = 100;     // keys per get_multi
constexpr std::size_t kMultiRequests = 16;  // distinct get_multi key lists
constexpr std::size_t kSingleBatch = 40;    // calls per contender per round
constexpr std::size_t kMultiBatch = 4;
constexpr std::size_t kDefaultRounds = 500;
constexpr std::size_t kWarmupRounds = 3;
constexpr std::size_t kMaxLibmemcachedServers = 100;  // its ketama asserts above

// ---- servers ----------------------------------------------------------------

// LiveFleet: the servers under test: MEMSHARD_SERVERS, or local processes.
class LiveFleet {
 public:
  LiveFleet() : live_(2, kMaxLibmemcachedServers, local_count(), "memshard_client_") {}

  [[nodiscard]] auto servers() const noexcept -> const std::vector<Server>& {
    return live_.servers();
  }

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

// ---- libmemcached handles configured like ShardedClient's ------------------

// The behaviours detail::MemcachedHandle sets, all compared by check_like_client.
constexpr memcached_behavior_t kClientBehaviours[] = {
    MEMCACHED_BEHAVIOR_NO_BLOCK,      MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
    MEMCACHED_BEHAVIOR_POLL_TIMEOUT,  MEMCACHED_BEHAVIOR_SND_TIMEOUT,
    MEMCACHED_BEHAVIOR_RCV_TIMEOUT,   MEMCACHED_BEHAVIOR_TCP_NODELAY,
    MEMCACHED_BEHAVIOR_TCP_KEEPALIVE, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL,
    MEMCACHED_BEHAVIOR_SUPPORT_CAS,   MEMCACHED_BEHAVIOR_RETRY_TIMEOUT,
};

// Sets the behaviours ShardedClient sets on each of its handles for `options`.
void configure_like_client(memcached_st* memc, const ClientOptions& options) {
  const auto set = [memc](memcached_behavior_t flag, std::uint64_t value, std::string_view what) {
    memshard::bench::check(memcached_behavior_set(memc, flag, value), memc, what);
  };
  const auto io_ms = static_cast<std::uint64_t>(options.io_timeout.count());
  set(MEMCACHED_BEHAVIOR_NO_BLOCK, 1, "NO_BLOCK");
  set(MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
      static_cast<std::uint64_t>(options.connect_timeout.count()), "CONNECT_TIMEOUT");
  set(MEMCACHED_BEHAVIOR_POLL_TIMEOUT, io_ms, "POLL_TIMEOUT");
  set(MEMCACHED_BEHAVIOR_SND_TIMEOUT, io_ms * 1000U, "SND_TIMEOUT");
  set(MEMCACHED_BEHAVIOR_RCV_TIMEOUT, io_ms * 1000U, "RCV_TIMEOUT");
  set(MEMCACHED_BEHAVIOR_TCP_NODELAY, options.tcp_nodelay ? 1 : 0, "TCP_NODELAY");
  set(MEMCACHED_BEHAVIOR_TCP_KEEPALIVE, options.tcp_keepalive ? 1 : 0, "TCP_KEEPALIVE");
  set(MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, options.protocol == memshard::Protocol::kBinary ? 1 : 0,
      "BINARY_PROTOCOL");
  set(MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1, "SUPPORT_CAS");
  set(MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 0, "RETRY_TIMEOUT");
}

// Throws unless `memc` has the behaviours of the handle ShardedClient would
// open to `server`, so the baselines stay like for like if that handle changes.
void check_like_client(memcached_st* memc, const Server& server, const ClientOptions& options) {
  const memshard::detail::MemcachedHandle reference(server, options);
  for (const memcached_behavior_t flag : kClientBehaviours) {
    const std::uint64_t mine = memcached_behavior_get(memc, flag);
    const std::uint64_t theirs = memcached_behavior_get(reference.native_handle(), flag);
    if (mine != theirs) {
      throw std::runtime_error("baseline behaviour " + std::to_string(static_cast<int>(flag)) +
                               " is " + std::to_string(mine) + ", ShardedClient's handle has " +
                               std::to_string(theirs));
    }
  }
}

// The single-server baseline: `server` alone, behaviours as ShardedClient's.
auto make_single_server(const Server& server, const ClientOptions& options) -> MemcachedPtr {
  MemcachedPtr memc(memcached_create(nullptr));
  if (!memc) {
    throw std::runtime_error("memcached_create failed");
  }
  configure_like_client(memc.get(), options);
  memshard::bench::check(memcached_server_add(memc.get(), server.host.c_str(), server.port),
                         memc.get(), "adding " + server.endpoint());
  check_like_client(memc.get(), server, options);
  return memc;
}

// The multi-server baseline: every server, KETAMA_WEIGHTED, behaviours as above.
auto make_multi_server(std::span<const Server> servers, const ClientOptions& options)
    -> MemcachedPtr {
  MemcachedPtr memc = memshard::bench::make_libmemcached(
      servers, memshard::bench::LibmemcachedPlacement::kKetamaWeighted);
  configure_like_client(memc.get(), options);
  check_like_client(memc.get(), servers.front(), options);
  return memc;
}

// ---- keys and values --------------------------------------------------------

// Data: keys under kKeyPrefix and their 100-byte values.
struct Data {
  explicit Data(std::size_t count, std::uint64_t seed) {
    const KeySet raw(count, seed);
    keys.reserve(count);
    values.reserve(count);
    for (const std::string_view key : raw) {
      add(key);
    }
  }

  // The first `count` keys, drawn as above from seeds `seed`, `seed` + 1, ...,
  // that `client` places on server 0 (the baseline's).
  template <class Client>
  static auto on_first_server(std::size_t count, std::uint64_t seed, const Client& client) -> Data {
    constexpr std::size_t kChunk = 4096;
    constexpr std::size_t kMaxChunks = 1000;
    Data out(0, seed);
    std::string full;
    for (std::size_t chunk = 0; chunk < kMaxChunks && out.keys.size() < count; ++chunk) {
      const KeySet raw(kChunk, seed + chunk);
      for (const std::string_view key : raw) {
        full.assign(kKeyPrefix).append(key);
        if (client.server_index_for(full) == 0 && out.keys.size() < count) {
          out.add(key);
        }
      }
    }
    if (out.keys.size() < count) {
      throw std::runtime_error("only " + std::to_string(out.keys.size()) + " of " +
                               std::to_string(kChunk * kMaxChunks) +
                               " keys land on the first server");
    }
    return out;
  }

  std::vector<std::string> keys;
  std::vector<std::string> values;

 private:
  void add(std::string_view key) {
    std::string full(kKeyPrefix);
    full.append(key);
    std::string value = "value of " + full + ' ';
    while (value.size() < kValueSize) {
      value.append(full);
    }
    value.resize(kValueSize);
    keys.push_back(std::move(full));
    values.push_back(std::move(value));
  }
};

// Indexes of the keys that `client` places on server 0 (the baseline's).
template <class Client>
auto on_first_server(const Data& data, const Client& client) -> std::vector<std::size_t> {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < data.keys.size(); ++i) {
    if (client.server_index_for(data.keys[i]) == 0) {
      out.push_back(i);
    }
  }
  return out;
}

auto all_indexes(std::size_t count) -> std::vector<std::size_t> {
  std::vector<std::size_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = i;
  }
  return out;
}

// ---- contenders -------------------------------------------------------------

// Contender: one way to do the operation under test. `run(n)` makes n calls,
// moving on through its own keys, and answers how many failed.
struct Contender {
  std::string name;
  std::size_t keys = 0;  // distinct keys (or key lists) it cycles over
  std::function<std::size_t(std::size_t)> run;
  std::string reference{};  // another contender to compare with, besides the baseline
  std::vector<std::string> also_against{};  // more contenders to compare with, if present
};

// Cursor: cycles over a list of key indexes.
class Cursor {
 public:
  explicit Cursor(std::vector<std::size_t> indexes) : indexes_(std::move(indexes)) {
    if (indexes_.empty()) {
      throw std::runtime_error("a contender has no keys");
    }
  }
  auto next() noexcept -> std::size_t {
    const std::size_t index = indexes_[at_];
    at_ = at_ + 1 == indexes_.size() ? 0 : at_ + 1;
    return index;
  }
  [[nodiscard]] auto size() const noexcept -> std::size_t { return indexes_.size(); }

 private:
  std::vector<std::size_t> indexes_;
  std::size_t at_ = 0;
};

// keyed: a contender that makes one call `call(i)` per key index, cycling over
// `indexes`; `call` answers whether the call succeeded.
template <class Call>
auto keyed(std::string name, std::vector<std::size_t> indexes, Call call) -> Contender {
  auto cursor = std::make_shared<Cursor>(std::move(indexes));
  const std::size_t keys = cursor->size();
  return {std::move(name), keys, [cursor, call = std::move(call)](std::size_t calls) {
            std::size_t failed = 0;
            for (std::size_t n = 0; n < calls; ++n) {
              failed += call(cursor->next()) ? 0U : 1U;
            }
            return failed;
          }};
}

template <class Client>
auto sharded_get(std::string name, Client& client, const Data& data,
                 std::vector<std::size_t> indexes) -> Contender {
  return keyed(std::move(name), std::move(indexes), [&client, &data](std::size_t i) {
    const auto hit = client.get(data.keys[i]);
    return hit.ok() && hit.value() && hit.value()->value == data.values[i];
  });
}

auto libmemcached_get(std::string name, memcached_st* memc, const Data& data,
                      std::vector<std::size_t> indexes) -> Contender {
  return keyed(std::move(name), std::move(indexes), [memc, &data](std::size_t i) {
    const std::string& key = data.keys[i];
    std::size_t length = 0;
    std::uint32_t flags = 0;
    memcached_return_t rc = MEMCACHED_SUCCESS;
    const std::unique_ptr<char, FreeBuffer> value(
        memcached_get(memc, key.data(), key.size(), &length, &flags, &rc));
    return value && std::string_view(value.get(), length) == data.values[i];
  });
}

template <class Client>
auto sharded_set(std::string name, Client& client, const Data& data,
                 std::vector<std::size_t> indexes) -> Contender {
  return keyed(std::move(name), std::move(indexes), [&client, &data](std::size_t i) {
    return client.set(data.keys[i], data.values[i]).ok();
  });
}

auto libmemcached_set(std::string name, memcached_st* memc, const Data& data,
                      std::vector<std::size_t> indexes) -> Contender {
  return keyed(std::move(name), std::move(indexes), [memc, &data](std::size_t i) {
    const std::string& key = data.keys[i];
    const std::string& value = data.values[i];
    return memcached_success(
        memcached_set(memc, key.data(), key.size(), value.data(), value.size(), 0, 0));
  });
}

// Requests: kMultiRequests key lists of kMultiKeys keys each, as string_views
// (what a caller of get_multi holds).
struct Requests {
  explicit Requests(const Data& data) {
    for (std::size_t r = 0; r < kMultiRequests; ++r) {
      std::vector<std::string_view> keys;
      std::vector<std::size_t> indexes;
      for (std::size_t k = 0; k < kMultiKeys; ++k) {
        const std::size_t i = r * kMultiKeys + k;
        keys.emplace_back(data.keys[i]);
        indexes.push_back(i);
      }
      lists.push_back(std::move(keys));
      index_lists.push_back(std::move(indexes));
    }
  }
  std::vector<std::vector<std::string_view>> lists;
  std::vector<std::vector<std::size_t>> index_lists;
};

// Checks one get_multi answer: every key found with its value.
auto multi_failures(const memshard::MultiGetResult& out, const Data& data,
                    const std::vector<std::size_t>& indexes) -> std::size_t {
  std::size_t failed = 0;
  for (std::size_t k = 0; k < indexes.size(); ++k) {
    if (!out.items[k] || out.items[k]->value != data.values[indexes[k]]) {
      ++failed;
    }
  }
  return failed;
}

template <class Client>
auto sharded_get_multi(std::string name, Client& client, const Data& data, const Requests& requests)
    -> Contender {
  auto at = std::make_shared<std::size_t>(0);
  return {std::move(name), requests.lists.size(),
          [&client, &data, &requests, at](std::size_t calls) {
            std::size_t failed = 0;
            for (std::size_t n = 0; n < calls; ++n) {
              const std::size_t r = (*at)++ % requests.lists.size();
              const memshard::MultiGetResult out =
                  client.get_multi(std::span<const std::string_view>(requests.lists[r]));
              failed += multi_failures(out, data, requests.index_lists[r]);
            }
            return failed;
          }};
}

// The same through visit_multi: each value copied into a reused string, as
// the libmemcached contenders do, instead of a MultiGetResult of its own.
template <class Client>
auto sharded_visit_multi(std::string name, Client& client, const Requests& requests) -> Contender {
  auto at = std::make_shared<std::size_t>(0);
  auto values = std::make_shared<std::vector<std::string>>(kMultiKeys);
  return {std::move(name), requests.lists.size(),
          [&client, &requests, at, values](std::size_t calls) {
            std::size_t failed = 0;
            for (std::size_t n = 0; n < calls; ++n) {
              const std::size_t r = (*at)++ % requests.lists.size();
              std::size_t found = 0;
              client.visit_multi(
                  std::span<const std::string_view>(requests.lists[r]),
                  [&](std::size_t index, const memshard::ItemView& item) {
                    (*values)[index].assign(item.value);
                    ++found;
                  },
                  [&](std::size_t, const memshard::Status&) { ++failed; });
              // Counted like the libmemcached contenders; the values are
              // checked against the data before timing (check_sharded_multi).
              failed += kMultiKeys - std::min(found, kMultiKeys);
            }
            return failed;
          }};
}

// MultiFetch: libmemcached's multi-get as a caller writes it: mget, then
// fetch_result into a caller-owned result, each key and value copied out.
class MultiFetch {
 public:
  explicit MultiFetch(memcached_st* memc) : memc_(memc), result_(memc) {
    pointers_.reserve(kMultiKeys);
    lengths_.reserve(kMultiKeys);
    keys_.resize(kMultiKeys);
    values_.resize(kMultiKeys);
  }

  // Fetches `keys`; answers how many results came back, or 0 on a failure.
  auto fetch(std::span<const std::string_view> keys) -> std::size_t {
    pointers_.clear();
    lengths_.clear();
    for (const std::string_view key : keys) {
      pointers_.push_back(key.data());
      lengths_.push_back(key.size());
    }
    if (!memcached_success(
            memcached_mget(memc_, pointers_.data(), lengths_.data(), pointers_.size()))) {
      return 0;
    }
    std::size_t count = 0;
    memcached_return_t rc = MEMCACHED_SUCCESS;
    while (memcached_fetch_result(memc_, result_.get(), &rc) != nullptr) {
      if (count == values_.size()) {
        keys_.emplace_back();
        values_.emplace_back();
      }
      keys_[count].assign(memcached_result_key_value(result_.get()),
                          memcached_result_key_length(result_.get()));
      values_[count].assign(memcached_result_value(result_.get()),
                            memcached_result_length(result_.get()));
      ++count;
    }
    if (rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND && !memcached_success(rc)) {
      return 0;
    }
    return count;
  }

  [[nodiscard]] auto key(std::size_t i) const noexcept -> std::string_view { return keys_[i]; }
  [[nodiscard]] auto value(std::size_t i) const noexcept -> std::string_view { return values_[i]; }

 private:
  memcached_st* memc_;
  FetchResult result_;
  std::vector<const char*> pointers_;
  std::vector<std::size_t> lengths_;
  std::vector<std::string> keys_;
  std::vector<std::string> values_;
};

auto libmemcached_get_multi(std::string name, MultiFetch& fetch, const Requests& requests)
    -> Contender {
  auto at = std::make_shared<std::size_t>(0);
  return {std::move(name), requests.lists.size(), [&fetch, &requests, at](std::size_t calls) {
            std::size_t failed = 0;
            for (std::size_t n = 0; n < calls; ++n) {
              const std::size_t r = (*at)++ % requests.lists.size();
              const std::size_t found =
                  fetch.fetch(std::span<const std::string_view>(requests.lists[r]));
              // Values are checked against the data before timing (check_fetch).
              failed += kMultiKeys - std::min(found, kMultiKeys);
            }
            return failed;
          }};
}

// ---- interleaved measurement ------------------------------------------------

// Rounds: ns per call of every contender (outer) in every round (inner).
using Rounds = std::vector<std::vector<double>>;

auto interleave(const std::vector<Contender>& contenders, std::size_t rounds, std::size_t batch,
                std::size_t& failed) -> Rounds {
  using Clock = std::chrono::steady_clock;
  const std::size_t count = contenders.size();
  Rounds ns(count, std::vector<double>());
  for (auto& row : ns) {
    row.reserve(rounds);
  }
  std::vector<std::size_t> order(count);
  for (std::size_t c = 0; c < count; ++c) {
    order[c] = c;
  }
  memshard::bench::SplitMix64 random(0x726F756E6473ULL);
  for (std::size_t round = 0; round < kWarmupRounds + rounds; ++round) {
    // A fresh random order every round: each contender is equally often first,
    // last, or after any other (whose traffic may leave servers busy or idle).
    for (std::size_t i = count; i > 1; --i) {
      std::swap(order[i - 1], order[random.below(i)]);
    }
    for (const std::size_t c : order) {
      const auto start = Clock::now();
      failed += contenders[c].run(batch);
      const auto stop = Clock::now();
      if (round >= kWarmupRounds) {
        ns[c].push_back(std::chrono::duration<double, std::nano>(stop - start).count() /
                        static_cast<double>(batch));
      }
    }
  }
  return ns;
}

auto median(std::vector<double> values) -> double {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct MedianInterval {
  double median = 0;
  double low = 0;
  double high = 0;
};

// The median and its distribution-free ~95% confidence interval: the order
// statistics of ranks n/2 -+ 0.98 sqrt(n) (the normal approximation of the
// binomial(n, 1/2) that counts values below the true median).
auto median_interval(std::vector<double> values) -> MedianInterval {
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  const double half_width = 0.98 * std::sqrt(n);
  const auto low_rank = static_cast<std::size_t>(std::max(1.0, std::floor(n / 2 - half_width)));
  const auto high_rank = static_cast<std::size_t>(std::min(n, std::ceil(n / 2 + 1 + half_width)));
  return {median(values), values[low_rank - 1], values[high_rank - 1]};
}

// Runs `contenders` (the last is the baseline) and publishes the counters; or,
// in callgrind mode, runs each alone between a zero and a dump of the stats.
void measure(benchmark::State& state, const std::string& benchmark_name,
             const std::vector<Contender>& contenders, std::size_t batch,
             std::size_t keys_per_call) {
  const std::size_t callgrind_calls =
      memshard::bench::env_count("MEMSHARD_BENCH_CALLGRIND_OPS", 0, 0);
  std::size_t failed = 0;
  if (callgrind_calls > 0) {
    for (auto _ : state) {
      for (const Contender& contender : contenders) {
        // A multi-get costs about as much as 10 single calls: a tenth as many.
        const std::size_t calls =
            keys_per_call > 1 ? std::max<std::size_t>(1, callgrind_calls / 10) : callgrind_calls;
        const std::string name = benchmark_name + "/" + contender.name + "/" +
                                 std::to_string(calls) + "/" + std::to_string(keys_per_call);
#if MEMSHARD_BENCH_HAS_CALLGRIND
        CALLGRIND_ZERO_STATS;
#endif
        failed += contender.run(calls);
#if MEMSHARD_BENCH_HAS_CALLGRIND
        CALLGRIND_DUMP_STATS_AT(name.c_str());
#endif
      }
    }
    state.counters["callgrind_calls"] = static_cast<double>(callgrind_calls);
  } else {
    const std::size_t rounds =
        memshard::bench::env_count("MEMSHARD_BENCH_CLIENT_ROUNDS", kDefaultRounds, 5);
    Rounds ns;
    for (auto _ : state) {
      ns = interleave(contenders, rounds, batch, failed);
    }
    // Paired ratios: contender c over contender `to`, round by round.
    const auto publish = [&state, &ns](const std::string& prefix, std::size_t c, std::size_t to) {
      std::vector<double> ratios(ns[c].size());
      for (std::size_t r = 0; r < ratios.size(); ++r) {
        ratios[r] = ns[c][r] / ns[to][r];
      }
      const MedianInterval ratio = median_interval(std::move(ratios));
      state.counters[prefix] = ratio.median;
      state.counters[prefix + "_lo"] = ratio.low;
      state.counters[prefix + "_hi"] = ratio.high;
    };
    for (std::size_t c = 0; c < contenders.size(); ++c) {
      const std::string& name = contenders[c].name;
      state.counters[name + "_ns"] = median(ns[c]);
      state.counters[name + "_keys"] = static_cast<double>(contenders[c].keys);
      publish(name + "_ratio", c, contenders.size() - 1);
      for (std::size_t to = 0; to < contenders.size(); ++to) {
        if (contenders[to].name == contenders[c].reference) {
          publish(name + "_ratio_ref", c, to);
        }
        const auto& others = contenders[c].also_against;
        if (std::find(others.begin(), others.end(), contenders[to].name) != others.end()) {
          publish(name + "_ratio_" + contenders[to].name, c, to);
        }
      }
    }
    state.counters["rounds"] = static_cast<double>(rounds);
    state.counters["batch"] = static_cast<double>(batch);
  }
  state.counters["keys_per_call"] = static_cast<double>(keys_per_call);
  if (failed > 0) {
    state.SkipWithError((std::to_string(failed) + " calls failed while timed").c_str());
  }
}

// ---- benchmarks -------------------------------------------------------------

// Setup: the clients, baselines and stored data every benchmark uses.
class Setup {
 public:
  explicit Setup(const LiveFleet& fleet)
      : servers_(fleet.servers()),
        ketama_(servers_,
                std::make_shared<const KetamaLocator<Md5>>(
                    memshard::profiles::libmemcached_ketama_weighted(servers_)),
                options_),
        ketama_per_server_(servers_, ketama_.locator(), per_server(options_)),
        modulo_(servers_,
                std::make_shared<const ModuloLocator<Crc32>>(
                    memshard::profiles::modulo_crc32(servers_)),
                options_),
        single_(make_single_server(servers_.front(), options_)),
        multi_(make_multi_server(servers_, options_)),
        single_data_(kSingleKeys, 0x636C69656E74ULL),
        multi_data_(kMultiKeys * kMultiRequests, 0x6D756C7469ULL),
        ketama_same_data_(
            Data::on_first_server(kMultiKeys * kMultiRequests, 0x6B73616D65ULL, ketama_)),
        modulo_same_data_(
            Data::on_first_server(kMultiKeys * kMultiRequests, 0x6D73616D65ULL, modulo_)),
        requests_(multi_data_),
        ketama_same_requests_(ketama_same_data_),
        modulo_same_requests_(modulo_same_data_),
        all_fetch_(multi_.get()),
        single_fetch_(single_.get()) {
    // Single-key data: through each client (wherever it places the keys) and
    // all of it on the baseline's server.
    for (std::size_t i = 0; i < single_data_.keys.size(); ++i) {
      const std::string& key = single_data_.keys[i];
      const std::string& value = single_data_.values[i];
      require(ketama_.set(key, value), "ketama set");
      require(modulo_.set(key, value), "modulo set");
      memshard::bench::check(
          memcached_set(single_.get(), key.data(), key.size(), value.data(), value.size(), 0, 0),
          single_.get(), "baseline set");
    }
    // Multi-get data: through the ketama client only at first, so that
    // libmemcached_all finds a key only if it places it as memshard does, and
    // the baseline only if memshard's ketama put it on the first server.
    write_all(ketama_, multi_data_, "ketama set (multi)");
    write_all(ketama_, ketama_same_data_, "ketama set (multi, first server)");
    write_all(modulo_, modulo_same_data_, "modulo set (multi, first server)");
    check_fetch("libmemcached_all", all_fetch_, multi_data_, requests_);
    check_fetch("libmemcached", single_fetch_, ketama_same_data_, ketama_same_requests_);
    check_sharded_multi("ketama", ketama_, multi_data_, requests_);
    check_sharded_multi("ketama_per_server", ketama_per_server_, multi_data_, requests_);
    check_sharded_multi("ketama_same", ketama_, ketama_same_data_, ketama_same_requests_);
    check_sharded_multi("modulo_same", modulo_, modulo_same_data_, modulo_same_requests_);
    start_proxy();
    // Then through the modulo client, wherever it places them.
    write_all(modulo_, multi_data_, "modulo set (multi)");
    check_sharded_multi("modulo", modulo_, multi_data_, requests_);
    ketama_spread_ = spread(ketama_, requests_);
    modulo_spread_ = spread(modulo_, requests_);
  }

  // Order: the ShardedClient contenders, (c), (d) when there is a proxy, then
  // the baseline (b) last.
  auto single_get_contenders() -> std::vector<Contender> {
    return single_contenders([](auto&&... args) { return sharded_get(args...); },
                             [](auto&&... args) { return libmemcached_get(args...); });
  }

  auto single_set_contenders() -> std::vector<Contender> {
    return single_contenders([](auto&&... args) { return sharded_set(args...); },
                             [](auto&&... args) { return libmemcached_set(args...); });
  }

  template <class Sharded, class Plain>
  auto single_contenders(Sharded sharded, Plain plain) -> std::vector<Contender> {
    std::vector<Contender> out;
    out.push_back(sharded("ketama", ketama_, single_data_, all_indexes(kSingleKeys)));
    out.push_back(sharded("modulo", modulo_, single_data_, all_indexes(kSingleKeys)));
    out.push_back(
        sharded("ketama_same", ketama_, single_data_, on_first_server(single_data_, ketama_)));
    out.push_back(
        sharded("modulo_same", modulo_, single_data_, on_first_server(single_data_, modulo_)));
    out.push_back(plain("libmemcached_all", multi_.get(), single_data_, all_indexes(kSingleKeys)));
    if (via_proxy_) {
      out.push_back(plain("twemproxy", via_proxy_.get(), single_data_, all_indexes(kSingleKeys)));
      out[0].also_against = {"twemproxy"};
    }
    out.push_back(plain("libmemcached", single_.get(), single_data_, all_indexes(kSingleKeys)));
    out[0].reference = out[1].reference = "libmemcached_all";
    return out;
  }

  // The same order as above; (a) also against (c) (_ratio_ref), as in get/set.
  auto multi_contenders() -> std::vector<Contender> {
    std::vector<Contender> out;
    out.push_back(sharded_get_multi("ketama", ketama_, multi_data_, requests_));
    out.push_back(sharded_visit_multi("ketama_visit", ketama_, requests_));
    out.push_back(
        sharded_get_multi("ketama_per_server", ketama_per_server_, multi_data_, requests_));
    out.push_back(sharded_get_multi("modulo", modulo_, multi_data_, requests_));
    out.push_back(
        sharded_get_multi("ketama_same", ketama_, ketama_same_data_, ketama_same_requests_));
    out.push_back(sharded_visit_multi("ketama_same_visit", ketama_, ketama_same_requests_));
    out.push_back(
        sharded_get_multi("modulo_same", modulo_, modulo_same_data_, modulo_same_requests_));
    out.push_back(libmemcached_get_multi("libmemcached_all", all_fetch_, requests_));
    if (proxy_fetch_) {
      out.push_back(libmemcached_get_multi("twemproxy", *proxy_fetch_, requests_));
      out[0].also_against = {"twemproxy"};
    }
    out.push_back(libmemcached_get_multi("libmemcached", single_fetch_, ketama_same_requests_));
    out[0].reference = out[1].reference = out[2].reference = out[3].reference = "libmemcached_all";
    return out;
  }

  // Checks that every contender answers every key of its list correctly (and
  // opens every connection before anything is timed).
  static void check_all(const std::vector<Contender>& contenders, std::size_t calls_each) {
    for (const Contender& contender : contenders) {
      if (const std::size_t failed = contender.run(calls_each); failed > 0) {
        throw std::runtime_error(contender.name + ": " + std::to_string(failed) + " of " +
                                 std::to_string(calls_each) + " calls failed before timing");
      }
    }
  }

  [[nodiscard]] auto servers() const noexcept -> const std::vector<Server>& { return servers_; }
  // The fewest and most keys a request of ketama's lists asks one server
  // for, under each client's placement.
  [[nodiscard]] auto ketama_spread() const noexcept -> std::pair<std::size_t, std::size_t> {
    return ketama_spread_;
  }
  [[nodiscard]] auto modulo_spread() const noexcept -> std::pair<std::size_t, std::size_t> {
    return modulo_spread_;
  }

 private:
  static auto per_server(ClientOptions options) -> ClientOptions {
    options.multi_get = memshard::MultiGetMode::kPerServer;
    return options;
  }

  static void require(const memshard::Status& status, std::string_view what) {
    if (!status.ok()) {
      throw std::runtime_error(std::string(what) + ": " + status.message());
    }
  }

  template <class Client>
  static void write_all(Client& client, const Data& data, std::string_view what) {
    for (std::size_t i = 0; i < data.keys.size(); ++i) {
      require(client.set(data.keys[i], data.values[i]), what);
    }
  }

  // Throws unless get_multi and visit_multi of `client` answer every key of
  // every list of `requests` with its value.
  template <class Client>
  static void check_sharded_multi(std::string_view name, Client& client, const Data& data,
                                  const Requests& requests) {
    for (std::size_t r = 0; r < requests.lists.size(); ++r) {
      const std::span<const std::string_view> keys(requests.lists[r]);
      const std::vector<std::size_t>& indexes = requests.index_lists[r];
      const memshard::MultiGetResult out = client.get_multi(keys);
      if (const std::size_t failed = multi_failures(out, data, indexes); failed > 0) {
        throw std::runtime_error(std::string(name) + ": get_multi: " + std::to_string(failed) +
                                 " of 100 keys missing or wrong");
      }
      std::size_t visited = 0;
      client.visit_multi(
          keys,
          [&](std::size_t index, const memshard::ItemView& item) {
            visited += item.value == data.values[indexes[index]] ? 1U : 0U;
          },
          [&](std::size_t, const memshard::Status& status) {
            throw std::runtime_error(std::string(name) + ": visit_multi: " + status.message());
          });
      if (visited != kMultiKeys) {
        throw std::runtime_error(std::string(name) +
                                 ": visit_multi: " + std::to_string(kMultiKeys - visited) +
                                 " of 100 keys missing or wrong");
      }
    }
  }

  // Throws unless `fetch` answers every key of every list of `requests`
  // exactly once, with its value.
  static void check_fetch(std::string_view name, MultiFetch& fetch, const Data& data,
                          const Requests& requests) {
    for (std::size_t r = 0; r < requests.lists.size(); ++r) {
      const std::span<const std::string_view> keys(requests.lists[r]);
      const std::vector<std::size_t>& indexes = requests.index_lists[r];
      const std::size_t found = fetch.fetch(keys);
      std::vector<std::size_t> seen(kMultiKeys, 0);
      for (std::size_t k = 0; k < found; ++k) {
        const auto at = std::find(keys.begin(), keys.end(), fetch.key(k));
        if (at == keys.end()) {
          throw std::runtime_error(std::string(name) + ": mget: an unrequested key came back");
        }
        const auto position = static_cast<std::size_t>(at - keys.begin());
        ++seen[position];
        if (fetch.value(k) != data.values[indexes[position]]) {
          throw std::runtime_error(std::string(name) + ": mget: a wrong value for " +
                                   std::string(*at));
        }
      }
      if (found != kMultiKeys ||
          std::count(seen.begin(), seen.end(), 1) != static_cast<std::ptrdiff_t>(kMultiKeys)) {
        throw std::runtime_error(std::string(name) + ": mget: " + std::to_string(found) +
                                 " results for 100 keys (a placement that differs from "
                                 "memshard's ketama-md5-weighted?)");
      }
    }
  }

  template <class Client>
  [[nodiscard]] auto spread(const Client& client, const Requests& requests) const
      -> std::pair<std::size_t, std::size_t> {
    std::pair<std::size_t, std::size_t> out{kMultiKeys, 0};
    for (const std::vector<std::string_view>& keys : requests.lists) {
      std::vector<std::size_t> per_server(servers_.size(), 0);
      for (const std::string_view key : keys) {
        ++per_server[client.server_index_for(key)];
      }
      const auto [low, high] = std::minmax_element(per_server.begin(), per_server.end());
      out = {std::min(out.first, *low), std::max(out.second, *high)};
    }
    return out;
  }

  // Starts nutcracker in front of every server (or notes why there is none),
  // checks what it stores and reads, and finds where it places keys.
  void start_proxy() {
    const std::string binary = memshard::bench::find_nutcracker();
    if (binary.empty()) {
      benchmark::AddCustomContext("memshard_client_twemproxy",
                                  "skipped: no nutcracker binary (install the Debian package "
                                  "nutcracker, or set MEMSHARD_NUTCRACKER)");
      std::cerr << "memshard: nutcracker not found, no twemproxy contender\n";
      return;
    }
    proxy_ = std::make_unique<memshard::bench::NutcrackerProxy>(binary, servers_);
    via_proxy_ = make_single_server(memshard::parse_server(proxy_->endpoint()), options_);
    std::cerr << "memshard: started " << proxy_->version() << " on " << proxy_->endpoint()
              << " (pid " << proxy_->pid() << ")\n";
    benchmark::AddCustomContext("memshard_client_twemproxy",
                                proxy_->version() + " on " + proxy_->endpoint() +
                                    " (hash md5, distribution ketama, auto_eject_hosts false)");
    memcached_st* proxy = via_proxy_.get();
    // What the proxy stores, it reads back: the contender's keys and values.
    write_all_through(proxy, single_data_);
    for (std::size_t i = 0; i < single_data_.keys.size(); ++i) {
      if (read(proxy, single_data_.keys[i]) != single_data_.values[i]) {
        throw std::runtime_error("twemproxy: a wrong value or a miss for " + single_data_.keys[i] +
                                 " after a set through it");
      }
    }
    // Ketama's multi-get lists likewise, read back by multi-get.
    write_all_through(proxy, multi_data_);
    proxy_fetch_ = std::make_unique<MultiFetch>(proxy);
    check_fetch("twemproxy", *proxy_fetch_, multi_data_, requests_);
    check_proxy_placement(proxy);
  }

  static void write_all_through(memcached_st* memc, const Data& data) {
    for (std::size_t i = 0; i < data.keys.size(); ++i) {
      const std::string& key = data.keys[i];
      const std::string& value = data.values[i];
      memshard::bench::check(
          memcached_set(memc, key.data(), key.size(), value.data(), value.size(), 0, 0), memc,
          "set through twemproxy");
    }
  }

  // Writes 200 fresh keys through the proxy only, then asks every server
  // directly which of them it holds.
  void check_proxy_placement(memcached_st* proxy) {
    constexpr std::size_t kProbeKeys = 200;
    const Data probes(kProbeKeys, 0x7477656D70726F78ULL);
    std::vector<MemcachedPtr> direct;
    for (const Server& server : servers_) {
      direct.push_back(make_single_server(server, options_));
    }
    std::size_t same = 0;
    std::size_t other = 0;
    std::size_t none = 0;
    std::size_t several = 0;
    std::vector<std::size_t> per_server(servers_.size(), 0);
    for (std::size_t i = 0; i < kProbeKeys; ++i) {
      const std::string& key = probes.keys[i];
      const std::string& value = probes.values[i];
      for (const MemcachedPtr& memc : direct) {
        static_cast<void>(memcached_delete(memc.get(), key.data(), key.size(), 0));
      }
      memshard::bench::check(
          memcached_set(proxy, key.data(), key.size(), value.data(), value.size(), 0, 0), proxy,
          "set through twemproxy");
      if (read(proxy, key) != value) {
        throw std::runtime_error("twemproxy: a wrong value or a miss for " + key);
      }
      std::vector<std::size_t> holders;
      for (std::size_t s = 0; s < direct.size(); ++s) {
        if (read(direct[s].get(), key) == value) {
          holders.push_back(s);
        }
      }
      if (holders.empty()) {
        ++none;
      } else if (holders.size() > 1) {
        ++several;
      } else {
        ++per_server[holders.front()];
        ++(holders.front() == ketama_.server_index_for(key) ? same : other);
      }
      static_cast<void>(memcached_delete(proxy, key.data(), key.size(), 0));
    }
    std::string spread;
    for (const std::size_t count : per_server) {
      spread.append(spread.empty() ? "" : "/").append(std::to_string(count));
    }
    const std::string finding = std::to_string(same) + " of " + std::to_string(kProbeKeys) +
                                " keys set through twemproxy are on the server memshard's "
                                "libmemcached_ketama_weighted ring names, " +
                                std::to_string(other) + " on another, " + std::to_string(none) +
                                " on none, " + std::to_string(several) +
                                " on several (keys per server " + spread +
                                "; read from each server directly)";
    benchmark::AddCustomContext("memshard_client_twemproxy_placement", finding);
    std::cerr << "memshard: " << finding << '\n';
  }

  // The value stored under `key` through `memc`, or "" on a miss or failure.
  static auto read(memcached_st* memc, const std::string& key) -> std::string {
    std::size_t length = 0;
    std::uint32_t flags = 0;
    memcached_return_t rc = MEMCACHED_SUCCESS;
    const std::unique_ptr<char, FreeBuffer> value(
        memcached_get(memc, key.data(), key.size(), &length, &flags, &rc));
    return value ? std::string(value.get(), length) : std::string();
  }

  ClientOptions options_;
  std::vector<Server> servers_;
  KetamaClient ketama_;
  KetamaClient ketama_per_server_;  // ketama_ with MultiGetMode::kPerServer
  ModuloClient modulo_;
  MemcachedPtr single_;
  MemcachedPtr multi_;
  Data single_data_;
  Data multi_data_;
  Data ketama_same_data_;  // keys the ketama client puts on the first server
  Data modulo_same_data_;  // keys the modulo client puts on the first server
  Requests requests_;
  Requests ketama_same_requests_;
  Requests modulo_same_requests_;
  MultiFetch all_fetch_;     // through multi_
  MultiFetch single_fetch_;  // through single_
  std::pair<std::size_t, std::size_t> ketama_spread_{0, 0};
  std::pair<std::size_t, std::size_t> modulo_spread_{0, 0};
  std::unique_ptr<memshard::bench::NutcrackerProxy> proxy_;  // none without nutcracker
  MemcachedPtr via_proxy_;                                   // the proxy as a single server
  std::unique_ptr<MultiFetch> proxy_fetch_;                  // through via_proxy_
};

void register_all(Setup& setup) {
  benchmark::RegisterBenchmark("BM_Client/get",
                               [&setup](benchmark::State& state) {
                                 try {
                                   const std::vector<Contender> contenders =
                                       setup.single_get_contenders();
                                   Setup::check_all(contenders, kSingleKeys);
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
                                   Setup::check_all(contenders, kSingleKeys);
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
          Setup::check_all(contenders, kMultiRequests);
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
}

}  // namespace

auto main(int argc, char** argv) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  try {
    const LiveFleet fleet;
    Setup setup(fleet);
    benchmark::AddCustomContext("memshard_client_value_bytes", std::to_string(kValueSize));
    register_all(setup);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << "memshard client benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
