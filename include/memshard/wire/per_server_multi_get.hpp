// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_PER_SERVER_MULTI_GET_HPP_
#define MEMSHARD_WIRE_PER_SERVER_MULTI_GET_HPP_

// wire/per_server_multi_get.hpp: PerServerMultiGet, the multi-get engine
// that uses each server's own handle (MultiGetMode::kPerServer, fleets of
// more than 100 servers, and the re-reads of the polled engine): every server
// is sent its keys first, then the servers are read one after another, all
// within one deadline.

#include <libmemcached-1.0/memcached.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "memshard/client/client_core.hpp"
#include "memshard/client/multi_get.hpp"
#include "memshard/client/result.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/deadline_watch.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// PerServerMultiGet: see the file comment. Its scratch is its own, kept
/// between calls to save allocations.
class PerServerMultiGet {
 public:
  /// run: reads the keys of `plan` (those with a server), reporting hits and
  /// failures by index in `keys`, and records each server's outcome.
  template <class OnHit, class OnFailure>
  void run(std::span<const std::string_view> keys, BatchPlan& plan, std::int64_t deadline,
           ClientCore& core, OnHit& on_hit, OnFailure& on_failure) {
    const std::size_t count = plan.counts.size();
    ConnectionPool& pool = core.pool();
    // The keys grouped by server with a counting sort that keeps request
    // order inside each group: slot k of server s is in [bounds_[s],
    // bounds_[s + 1]).
    bounds_.assign(count + 1, 0);
    for (std::size_t s = 0; s < count; ++s) {
      bounds_[s + 1] = bounds_[s] + plan.counts[s];
    }
    order_.resize(bounds_[count]);
    answered_.assign(bounds_[count], 0);
    fill_.assign(bounds_.begin(), bounds_.end() - 1);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (plan.server_of[i] != BatchPlan::kNone) {
        order_[fill_[plan.server_of[i]]++] = i;
      }
    }
    sent_.assign(count, MEMCACHED_SUCCESS);
    for (std::size_t s = 0; s < count; ++s) {
      if (bounds_[s] == bounds_[s + 1]) {
        continue;
      }
      key_ptrs_.clear();
      key_lengths_.clear();
      for (std::size_t k = bounds_[s]; k < bounds_[s + 1]; ++k) {
        key_ptrs_.push_back(keys[order_[k]].data());
        key_lengths_.push_back(keys[order_[k]].size());
      }
      memcached_st* memc = pool.handle(s).native_handle();
      plan.wired[s] = 1;  // unread replies or shortened waits until settled
      pool.limit_wait(memc, deadline);
      {
        const WatchedCall watched = core.watch(memc, steady_now_ns(), deadline);
        sent_[s] = memcached_mget(memc, key_ptrs_.data(), key_lengths_.data(), key_ptrs_.size());
      }
      if (core.options().sasl && key_ptrs_.size() > 1 &&
          (sent_[s] == MEMCACHED_SERVER_TEMPORARILY_DISABLED ||
           sent_[s] == MEMCACHED_SERVER_MARKED_DEAD)) {
        sent_[s] = ask_again(pool, s, deadline, core);
      }
    }
    for (std::size_t s = 0; s < count; ++s) {
      const std::size_t first = bounds_[s];
      const std::size_t last = bounds_[s + 1];
      if (last == first) {
        continue;
      }
      memcached_return_t rc = sent_[s];
      std::uint64_t hits = 0;
      if (memcached_success(rc)) {
        MemcachedHandle& connection = pool.handle(s);
        pool.limit_wait(connection.native_handle(), deadline);
        const WatchedCall watched =
            core.watch(connection.native_handle(), steady_now_ns(), deadline);
        // memcached answers in request order, once per requested key (so also
        // once per duplicate), and skips misses: match by walking forward;
        // anything unexpected falls back to a scan for an unanswered key.
        std::size_t next = first;
        rc = ConnectionPool::fetch_all(
            connection, [&](std::string_view key, const memcached_result_st& result) {
              std::size_t k = next;
              while (k < last && keys[order_[k]] != key) {
                ++k;
              }
              if (k == last) {
                for (k = first; k < last; ++k) {
                  if (keys[order_[k]] == key && answered_[k] == 0) {
                    break;
                  }
                }
                if (k == last) {
                  return;
                }
              } else {
                next = k + 1;
              }
              answered_[k] = 1;
              ++hits;
              on_hit(order_[k],
                     ItemView{std::string_view(memcached_result_value(&result),
                                               memcached_result_length(&result)),
                              memcached_result_flags(&result), memcached_result_cas(&result)});
            });
      }
      if (pool.has_handle(s)) {
        pool.restore_wait(pool.handle(s).native_handle());
      }
      plan.wired[s] = 0;
      plan.settled[s] = 1;
      const Status status = core.finish(plan.routes[s], rc, "get_multi");
      if (status.ok()) {
        ServerHealth& health = core.health(s);
        health.hits.fetch_add(hits, std::memory_order_relaxed);
        health.misses.fetch_add((last - first) - hits, std::memory_order_relaxed);
      } else {
        for (std::size_t k = first; k < last; ++k) {
          on_failure(order_[k], status);
        }
      }
    }
  }

 private:
  // The mget of server `s` came back with libmemcached's retry clock: its
  // connection failed at the first key (with SASL, a refused authentication
  // is such a failure) and the later keys were refused by the clock, whose
  // code the mget reports. A fresh handle connects again with a version
  // request, whose failure is the real one; if it connects, the keys are
  // sent again.
  auto ask_again(ConnectionPool& pool, std::size_t s, std::int64_t deadline, ClientCore& core)
      -> memcached_return_t;

  std::vector<std::size_t> bounds_;       // per server: its first slot (and one past the last)
  std::vector<std::size_t> fill_;         // per server: the next slot to fill
  std::vector<std::size_t> order_;        // per slot: the key's index in the request
  std::vector<std::uint8_t> answered_;    // per slot: a value came back
  std::vector<memcached_return_t> sent_;  // per server: memcached_mget's code
  std::vector<const char*> key_ptrs_;     // one server's request
  std::vector<std::size_t> key_lengths_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto PerServerMultiGet::ask_again(ConnectionPool& pool, std::size_t s,
                                                         std::int64_t deadline, ClientCore& core)
    -> memcached_return_t {
  pool.drop(s);
  memcached_st* memc = pool.handle(s).native_handle();
  pool.limit_wait(memc, deadline);
  const WatchedCall watched = core.watch(memc, steady_now_ns(), deadline);
  if (memcached_failed(memcached_version(memc))) {
    // SOME_ERRORS: the handle's one server says what.
    const memcached_return_t own =
        memcached_server_error_return(memcached_server_instance_by_position(memc, 0));
    return memcached_failed(own) ? own : MEMCACHED_CONNECTION_FAILURE;
  }
  return memcached_mget(memc, key_ptrs_.data(), key_lengths_.data(), key_ptrs_.size());
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_PER_SERVER_MULTI_GET_HPP_
