// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_CLIENT_BASELINES_HPP_
#define MEMSHARD_BENCH_CLIENT_BASELINES_HPP_

// client/baselines.hpp: the contenders of the client benchmark that use
// libmemcached directly: the memcached_st holding the first server alone (b),
// the memcached_st holding every server under KETAMA_WEIGHTED (c), and
// twemproxy (d), nutcracker in front of every server as the single server of
// a memcached_st. Every handle has the behaviours ShardedClient sets on its
// own (checked against detail::MemcachedHandle); every answer is checked.

#include <benchmark/benchmark.h>
#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "client/workload.hpp"
#include "memshard/memshard.hpp"
#include "memshard/wire/detail/memcached_handle.hpp"
#include "support/nutcracker_proxy.hpp"

namespace memshard::bench::client {

/// FreeBuffer: frees a value buffer that memcached_get allocated with malloc.
struct FreeBuffer {
  void operator()(char* buffer) const noexcept { std::free(buffer); }
};

/// kClientBehaviours: the behaviours detail::MemcachedHandle sets, all
/// compared by check_like_client.
inline constexpr memcached_behavior_t kClientBehaviours[] = {
    MEMCACHED_BEHAVIOR_NO_BLOCK,      MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
    MEMCACHED_BEHAVIOR_POLL_TIMEOUT,  MEMCACHED_BEHAVIOR_SND_TIMEOUT,
    MEMCACHED_BEHAVIOR_RCV_TIMEOUT,   MEMCACHED_BEHAVIOR_TCP_NODELAY,
    MEMCACHED_BEHAVIOR_TCP_KEEPALIVE, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL,
    MEMCACHED_BEHAVIOR_SUPPORT_CAS,   MEMCACHED_BEHAVIOR_RETRY_TIMEOUT,
};

/// configure_like_client: sets the behaviours ShardedClient sets on each of
/// its handles for `options`.
inline void configure_like_client(memcached_st* memc, const ClientOptions& options) {
  const auto set = [memc](memcached_behavior_t flag, std::uint64_t value, std::string_view what) {
    check(memcached_behavior_set(memc, flag, value), memc, what);
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
  set(MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, options.protocol == Protocol::kBinary ? 1 : 0,
      "BINARY_PROTOCOL");
  set(MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1, "SUPPORT_CAS");
  set(MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 0, "RETRY_TIMEOUT");
}

/// check_like_client: throws unless `memc` has the behaviours of the handle
/// ShardedClient would open to `server`, so the baselines stay like for like
/// if that handle changes.
inline void check_like_client(memcached_st* memc, const Server& server,
                              const ClientOptions& options) {
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

/// make_single_server: the single-server baseline (b): `server` alone,
/// behaviours as ShardedClient's.
[[nodiscard]] inline auto make_single_server(const Server& server, const ClientOptions& options)
    -> MemcachedPtr {
  MemcachedPtr memc(memcached_create(nullptr));
  if (!memc) {
    throw std::runtime_error("memcached_create failed");
  }
  configure_like_client(memc.get(), options);
  check(memcached_server_add(memc.get(), server.host.c_str(), server.port), memc.get(),
        "adding " + server.endpoint());
  check_like_client(memc.get(), server, options);
  return memc;
}

/// make_multi_server: the multi-server baseline (c): every server,
/// KETAMA_WEIGHTED, behaviours as above.
[[nodiscard]] inline auto make_multi_server(std::span<const Server> servers,
                                            const ClientOptions& options) -> MemcachedPtr {
  MemcachedPtr memc = make_libmemcached(servers, LibmemcachedPlacement::kKetamaWeighted);
  configure_like_client(memc.get(), options);
  check_like_client(memc.get(), servers.front(), options);
  return memc;
}

/// read_value: the value stored under `key` through `memc`, or "" on a miss
/// or failure.
[[nodiscard]] inline auto read_value(memcached_st* memc, const std::string& key) -> std::string {
  std::size_t length = 0;
  std::uint32_t flags = 0;
  memcached_return_t rc = MEMCACHED_SUCCESS;
  const std::unique_ptr<char, FreeBuffer> value(
      memcached_get(memc, key.data(), key.size(), &length, &flags, &rc));
  return value ? std::string(value.get(), length) : std::string();
}

/// libmemcached_get: memcached_get of the keys `indexes` of `data` through
/// `memc`; a call succeeds on a hit with the key's value.
[[nodiscard]] inline auto libmemcached_get(std::string name, memcached_st* memc, const Data& data,
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

/// libmemcached_set: memcached_set of the keys `indexes` of `data` with their
/// values through `memc`.
[[nodiscard]] inline auto libmemcached_set(std::string name, memcached_st* memc, const Data& data,
                                           std::vector<std::size_t> indexes) -> Contender {
  return keyed(std::move(name), std::move(indexes), [memc, &data](std::size_t i) {
    const std::string& key = data.keys[i];
    const std::string& value = data.values[i];
    return memcached_success(
        memcached_set(memc, key.data(), key.size(), value.data(), value.size(), 0, 0));
  });
}

/// libmemcached_set_loop: each list of `requests` (keys with their values in
/// `data`) written with memcached_set, one key after another, through `memc`:
/// libmemcached's own way to store many keys with an answer for each.
[[nodiscard]] inline auto libmemcached_set_loop(std::string name, memcached_st* memc,
                                                const Data& data, const Requests& requests)
    -> Contender {
  auto at = std::make_shared<std::size_t>(0);
  return {std::move(name), requests.lists.size(), [memc, &data, &requests, at](std::size_t calls) {
            std::size_t failed = 0;
            for (std::size_t n = 0; n < calls; ++n) {
              for (const std::size_t i : requests.index_lists[(*at)++ % requests.lists.size()]) {
                const std::string& key = data.keys[i];
                const std::string& value = data.values[i];
                if (!memcached_success(memcached_set(memc, key.data(), key.size(), value.data(),
                                                     value.size(), 0, 0))) {
                  ++failed;
                }
              }
            }
            return failed;
          }};
}

/// write_all_through: every key of `data` with its value, through `memc`
/// (twemproxy's handle).
inline void write_all_through(memcached_st* memc, const Data& data) {
  for (std::size_t i = 0; i < data.keys.size(); ++i) {
    const std::string& key = data.keys[i];
    const std::string& value = data.values[i];
    check(memcached_set(memc, key.data(), key.size(), value.data(), value.size(), 0, 0), memc,
          "set through twemproxy");
  }
}

/// MultiFetch: libmemcached's multi-get as a caller writes it: mget, then
/// fetch_result into a caller-owned result, each key and value copied out.
class MultiFetch {
 public:
  /// MultiFetch: multi-gets through `memc`, which must outlive it.
  explicit MultiFetch(memcached_st* memc) : memc_(memc), result_(memc) {
    pointers_.reserve(kMultiKeys);
    lengths_.reserve(kMultiKeys);
    keys_.resize(kMultiKeys);
    values_.resize(kMultiKeys);
  }

  /// fetch: fetches `keys`; answers how many results came back, or 0 on a
  /// failure.
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

  /// key: the key of result `i` of the last fetch.
  [[nodiscard]] auto key(std::size_t i) const noexcept -> std::string_view { return keys_[i]; }
  /// value: the value of result `i` of the last fetch.
  [[nodiscard]] auto value(std::size_t i) const noexcept -> std::string_view { return values_[i]; }

 private:
  memcached_st* memc_;
  FetchResult result_;
  std::vector<const char*> pointers_;
  std::vector<std::size_t> lengths_;
  std::vector<std::string> keys_;
  std::vector<std::string> values_;
};

/// libmemcached_get_multi: `fetch` of each list of `requests` in turn; every
/// key that does not come back counts as a failure (the values are checked
/// before timing, by check_fetch).
[[nodiscard]] inline auto libmemcached_get_multi(std::string name, MultiFetch& fetch,
                                                 const Requests& requests) -> Contender {
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

/// check_fetch: throws unless `fetch` answers every key of every list of
/// `requests` exactly once, with its value.
inline void check_fetch(std::string_view name, MultiFetch& fetch, const Data& data,
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

/// Twemproxy: contender (d): nutcracker started on 127.0.0.1 with one
/// md5/ketama pool of every server, as the only server of a memcached_st with
/// ShardedClient's behaviours. Not movable: it owns the proxy process, which
/// is stopped with it.
class Twemproxy {
 public:
  /// start: starts nutcracker in front of `servers` and names it in the
  /// benchmark context (memshard_client_twemproxy); nullptr, with the reason
  /// in the context, when there is no nutcracker binary.
  [[nodiscard]] static auto start(std::span<const Server> servers, const ClientOptions& options)
      -> std::unique_ptr<Twemproxy> {
    const std::string binary = testing::find_nutcracker();
    if (binary.empty()) {
      benchmark::AddCustomContext("memshard_client_twemproxy",
                                  "skipped: no nutcracker binary (install the Debian package "
                                  "nutcracker, or set MEMSHARD_NUTCRACKER)");
      std::cerr << "memshard: nutcracker not found, no twemproxy contender\n";
      return nullptr;
    }
    return std::make_unique<Twemproxy>(binary, servers, options);
  }

  /// Twemproxy: runs `binary` in front of `servers` (see start).
  Twemproxy(const std::string& binary, std::span<const Server> servers,
            const ClientOptions& options)
      : proxy_(binary, servers),
        memc_(make_single_server(parse_server(proxy_.endpoint()), options)),
        fetch_(memc_.get()) {
    std::cerr << "memshard: started " << proxy_.version() << " on " << proxy_.endpoint() << " (pid "
              << proxy_.pid() << ")\n";
    benchmark::AddCustomContext("memshard_client_twemproxy",
                                proxy_.version() + " on " + proxy_.endpoint() +
                                    " (hash md5, distribution ketama, auto_eject_hosts false)");
  }

  Twemproxy(const Twemproxy&) = delete;
  auto operator=(const Twemproxy&) -> Twemproxy& = delete;
  Twemproxy(Twemproxy&&) = delete;
  auto operator=(Twemproxy&&) -> Twemproxy& = delete;
  ~Twemproxy() = default;

  /// handle: the memcached_st holding the proxy as its only server.
  [[nodiscard]] auto handle() const noexcept -> memcached_st* { return memc_.get(); }
  /// fetch: multi-gets through handle().
  [[nodiscard]] auto fetch() noexcept -> MultiFetch& { return fetch_; }

  /// check_round_trip: throws unless what the proxy stores, it reads back:
  /// every key of `single` by get, and the lists `requests` of `multi` by
  /// multi-get.
  void check_round_trip(const Data& single, const Data& multi, const Requests& requests) {
    write_all_through(handle(), single);
    for (std::size_t i = 0; i < single.keys.size(); ++i) {
      if (read_value(handle(), single.keys[i]) != single.values[i]) {
        throw std::runtime_error("twemproxy: a wrong value or a miss for " + single.keys[i] +
                                 " after a set through it");
      }
    }
    write_all_through(handle(), multi);
    check_fetch("twemproxy", fetch_, multi, requests);
  }

  /// report_placement: writes 200 fresh keys through the proxy only, then
  /// asks every server directly which of them it holds, against the server
  /// `ketama` names; the finding goes to the benchmark context
  /// (memshard_client_twemproxy_placement).
  template <class Client>
  void report_placement(std::span<const Server> servers, const ClientOptions& options,
                        const Client& ketama) {
    constexpr std::size_t kProbeKeys = 200;
    const Data probes(kProbeKeys, 0x7477656D70726F78ULL);
    memcached_st* proxy = handle();
    std::vector<MemcachedPtr> direct;
    for (const Server& server : servers) {
      direct.push_back(make_single_server(server, options));
    }
    std::size_t same = 0;
    std::size_t other = 0;
    std::size_t none = 0;
    std::size_t several = 0;
    std::vector<std::size_t> per_server(servers.size(), 0);
    for (std::size_t i = 0; i < kProbeKeys; ++i) {
      const std::string& key = probes.keys[i];
      const std::string& value = probes.values[i];
      for (const MemcachedPtr& memc : direct) {
        static_cast<void>(memcached_delete(memc.get(), key.data(), key.size(), 0));
      }
      check(memcached_set(proxy, key.data(), key.size(), value.data(), value.size(), 0, 0), proxy,
            "set through twemproxy");
      if (read_value(proxy, key) != value) {
        throw std::runtime_error("twemproxy: a wrong value or a miss for " + key);
      }
      std::vector<std::size_t> holders;
      for (std::size_t s = 0; s < direct.size(); ++s) {
        if (read_value(direct[s].get(), key) == value) {
          holders.push_back(s);
        }
      }
      if (holders.empty()) {
        ++none;
      } else if (holders.size() > 1) {
        ++several;
      } else {
        ++per_server[holders.front()];
        ++(holders.front() == ketama.server_index_for(key) ? same : other);
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

 private:
  testing::NutcrackerProxy proxy_;
  MemcachedPtr memc_;  // the proxy as a single server
  MultiFetch fetch_;   // through memc_
};

}  // namespace memshard::bench::client

#endif  // MEMSHARD_BENCH_CLIENT_BASELINES_HPP_
