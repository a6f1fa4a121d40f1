// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_POLLED_MULTI_GET_HPP_
#define MEMSHARD_WIRE_POLLED_MULTI_GET_HPP_

// wire/polled_multi_get.hpp: PolledMultiGet, the multi-get engine of
// MultiGetMode::kPolled: one request to every server through the fan handle
// (wire/detail/fan_handle.hpp), the replies read as they arrive, whichever server
// answers first, all within one deadline. A server's outcome is read from its
// connection afterwards; after any failure the fan handle is dropped, so
// every multi-get starts on connections without old errors or unread
// replies. How libmemcached's fetch is kept to the deadline and how a reply
// that breaks off is pinned on its server: docs/architecture.md.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "memshard/client/client_core.hpp"
#include "memshard/client/multi_get.hpp"
#include "memshard/client/result.hpp"
#include "memshard/detail/clock.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/fan_handle.hpp"
#include "memshard/wire/detail/key_table.hpp"
#include "memshard/wire/per_server_multi_get.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// PolledMultiGet: see the file comment. Its scratch is its own, kept between
/// calls to save allocations.
class PolledMultiGet {
 public:
  /// run: reads the keys of `plan` (those with a server) through the fan
  /// handle, reporting hits and failures by index in `keys`, and records each
  /// server's outcome; servers whose replies broke off ambiguously are read
  /// again through `per_server`.
  template <class OnHit, class OnFailure>
  void run(std::span<const std::string_view> keys, BatchPlan& plan, std::int64_t deadline,
           ClientCore& core, PerServerMultiGet& per_server, OnHit& on_hit, OnFailure& on_failure) {
    const std::size_t count = plan.counts.size();
    ConnectionPool& pool = core.pool();
    const ClientOptions& options = core.options();
    key_ptrs_.clear();
    key_lengths_.clear();
    fan_servers_.clear();
    positions_.clear();
    hits_.assign(count, 0);
    sent_.assign(count, MEMCACHED_SUCCESS);
    // Each server's keys, chained in request order: memcached answers a
    // server's keys in that order, skipping misses.
    cursor_.assign(count, kNone);
    tail_.assign(count, kNone);
    chain_.clear();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::size_t server = plan.server_of[i];
      if (server == kNone) {
        continue;
      }
      auto route = static_cast<std::uint32_t>(server);
      const std::size_t position = positions_.size();
      if (tail_[server] == kNone) {
        cursor_[server] = position;
        route |= FanRoutes::kFirst;
      } else {
        if (tail_[server] == cursor_[server]) {
          route |= FanRoutes::kSecond;  // the first key's connect has been tried
        }
        chain_[tail_[server]] = position;
      }
      tail_[server] = position;
      chain_.push_back(kNone);
      key_ptrs_.push_back(keys[i].data());
      key_lengths_.push_back(keys[i].size());
      fan_servers_.push_back(route);
      positions_.push_back(i);
    }
    const std::size_t m = positions_.size();
    answered_.assign(m, 0);
    FanHandle& fan = pool.fan();
    FanRoutes& routes = fan.routes();
    routes.keys = key_ptrs_.data();
    routes.lengths = key_lengths_.data();
    routes.servers = fan_servers_.data();
    routes.count = m;
    routes.next = 0;
    routes.deadline_ns = deadline;
    memcached_st* memc = fan.native_handle();
    pool.limit_wait(memc, deadline);
    // Past the deadline, replies are still read while each comes within
    // kLateWait, for at most kGrace (see below).
    constexpr std::uint64_t kLateWait = 4;       // ms
    constexpr std::int64_t kGrace = 12'000'000;  // ns
    // Whatever a server does, waits end by the deadline: see
    // wire/deadline_watch.hpp. Disarmed before the fan handle may close.
    WatchedCall watched = core.watch(memc, steady_now_ns(), deadline);
    routes.poll_ms = static_cast<std::uint64_t>(options.io_timeout.count());
    routes.begin(count);
    const memcached_return_t sent = memcached_mget(memc, key_ptrs_.data(), key_lengths_.data(), m);
    routes.count = 0;
    bool broken = false;  // the fan handle must be dropped
    // The servers still owing a reply. A server sent its keys has one pending;
    // one without failed to connect or to write.
    live_.clear();
    instances_.resize(count);
    for (const std::size_t s : plan.used) {
      const memcached_instance_st* instance = fan.instance(s);
      instances_[s] = instance;
      if (memcached_server_response_count(instance) != 0) {
        live_.push_back(s);
        continue;
      }
      // Its own error, else the request's (when nothing could be sent at
      // all, such as memory), else a write that failed.
      const memcached_return_t own = routes.cause(s, memcached_server_error_return(instance));
      const bool general =
          memcached_failed(sent) && sent != MEMCACHED_SOME_ERRORS && sent != MEMCACHED_FAILURE;
      sent_[s] = memcached_failed(own) ? own : general ? sent : MEMCACHED_WRITE_FAILURE;
      broken = true;
    }
    // A reply that breaks off (an error line, a malformed value) ends
    // libmemcached's fetch, and some such errors are not recorded on the
    // connection: they are pinned on the servers whose replies ended during
    // the fetch call that failed. To know which, the servers still owing a
    // reply are checked after every result while they are few.
    constexpr std::size_t kTrackedServers = 16;
    auto prune = [&] {
      std::erase_if(live_, [&](std::size_t s) {
        return memcached_server_response_count(instances_[s]) == 0;
      });
    };
    memcached_result_st* result = fan.result();
    std::size_t last = kNone;  // the server of the previous reply
    bool tabled = false;
    // The request position a reply answers: a few keys on from the cursor of
    // the previous reply's server (libmemcached reads a server's buffered
    // replies in a row), then of the others; else by a table of all keys.
    auto answered_position = [&](std::string_view key) -> std::size_t {
      auto walk = [&](std::size_t server, std::size_t steps) -> std::size_t {
        std::size_t position = cursor_[server];
        for (; position != kNone && steps > 0; position = chain_[position], --steps) {
          if (answered_[position] == 0 && keys[positions_[position]] == key) {
            cursor_[server] = chain_[position];  // the keys passed were misses
            last = server;
            return position;
          }
        }
        return kNone;
      };
      if (last != kNone) {
        if (const std::size_t position = walk(last, 8); position != kNone) {
          return position;
        }
      }
      for (const std::size_t s : plan.used) {
        if (s != last && cursor_[s] != kNone) {
          if (const std::size_t position = walk(s, 4); position != kNone) {
            return position;
          }
        }
      }
      if (!tabled) {
        table_.reset(m);
        for (std::size_t position = 0; position < m; ++position) {
          table_.insert(keys[positions_[position]], static_cast<std::uint32_t>(position));
        }
        tabled = true;
      }
      const std::size_t position = table_.find(
          key, [&](std::size_t at) { return answered_[at] == 0 && keys[positions_[at]] == key; });
      return position == KeyTable::kNone ? kNone : position;
    };
    recheck_.assign(count, 0);
    // Every wait ends by the deadline. Inside one fetch call libmemcached may
    // wait once per server that ends without a hit, so while several servers
    // owe replies each wait gets a share of what is left. libmemcached sends
    // the requests only once it has connected to every server, so connections
    // that hang can use the deadline up before a live server was even asked:
    // past the deadline, replies are still read while each comes within
    // kLateWait, for at most kGrace (the deadline watch is set again for it).
    const auto io_ms = static_cast<std::uint64_t>(options.io_timeout.count());
    std::int64_t grace_end = 0;  // set when the deadline is first seen passed
    while (result != nullptr && !live_.empty()) {
      const std::uint64_t left = routes.left_ms();
      if (left == 0) {
        const std::int64_t now = coarse_now_ns();
        if (grace_end == 0) {
          grace_end = now + kGrace;
          watched.rearm(grace_end);
        } else if (now >= grace_end) {
          break;
        }
      }
      routes.set_poll(left == 0 ? kLateWait
                                : std::clamp<std::uint64_t>(left / live_.size(), 1, io_ms));
      memcached_return_t rc = MEMCACHED_SUCCESS;
      keep_fetch_code(*result);
      if (memcached_fetch_result(memc, result, &rc) == nullptr) {
        if (rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND && rc != MEMCACHED_SUCCESS) {
          // A reply broke off somewhere. libmemcached neither records every
          // such error on its connection nor says whose it was, and other
          // servers may have ended normally in the same call: every server
          // whose reply ended unrecorded is read again on its own.
          for (const std::size_t s : live_) {
            const memcached_instance_st* instance = instances_[s];
            if (memcached_server_response_count(instance) == 0 &&
                !memcached_failed(memcached_server_error_return(instance))) {
              recheck_[s] = 1;
            }
          }
        }
        // libmemcached also stops when a poll of several servers times out:
        // read on while replies are owed and time is left. Past the deadline
        // too, within the grace: a server that trickled its reply until the
        // deadline has just been cut off, and replies of others may be
        // waiting behind it.
        prune();
        continue;
      }
      if (live_.size() <= kTrackedServers) {
        prune();
      }
      const std::string_view key(memcached_result_key_value(result),
                                 memcached_result_key_length(result));
      const std::size_t at = answered_position(key);
      if (at == kNone) {
        continue;  // not asked for (a server's confusion): ignored
      }
      answered_[at] = 1;
      const std::size_t index = positions_[at];
      ++hits_[plan.server_of[index]];
      on_hit(index, ItemView{std::string_view(memcached_result_value(result),
                                              memcached_result_length(result)),
                             memcached_result_flags(result), memcached_result_cas(result)});
    }
    watched.end();
    for (const std::size_t s : plan.used) {
      if (recheck_[s] != 0) {
        broken = true;
        continue;
      }
      memcached_return_t rc = sent_[s];
      std::string cause;
      if (memcached_success(rc)) {
        const memcached_instance_st* instance = instances_[s];
        const memcached_return_t own = routes.cause(s, memcached_server_error_return(instance));
        if (result == nullptr) {
          rc = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        } else if (to_errc(own) != Errc::kOk) {
          rc = own;
        } else if (memcached_server_response_count(instance) != 0) {
          rc = MEMCACHED_TIMEOUT;
          cause = "no complete reply by the call's deadline";
        }
      }
      if (cause.empty() && rc == routes.causes[s] && routes.errnos[s] != 0) {
        cause = std::generic_category().message(routes.errnos[s]);
        if (to_errc(rc, routes.errnos[s]) == Errc::kConnectionFailure) {
          rc = MEMCACHED_CONNECTION_FAILURE;  // a bare FAILURE on a reset socket
        }
      }
      broken = broken || !memcached_success(rc);
      plan.settled[s] = 1;
      const Status status = core.finish(plan.routes[s], rc, "get_multi", cause, false);
      if (status.ok()) {
        ServerHealth& state = core.health(s);
        state.hits.fetch_add(hits_[s], std::memory_order_relaxed);
        state.misses.fetch_add(plan.counts[s] - hits_[s], std::memory_order_relaxed);
      } else {
        for (std::size_t i = 0; i < keys.size(); ++i) {
          if (plan.server_of[i] == s) {
            on_failure(i, status);
          }
        }
      }
    }
    if (broken) {
      pool.drop_fan();
    }
    reread(keys, plan, deadline, core, per_server, on_hit, on_failure);
  }

  // Reads the keys not yet answered of the servers marked in recheck_
  // again, each server on its own handle (its hits so far are counted here).
  template <class OnHit, class OnFailure>
  void reread(std::span<const std::string_view> keys, BatchPlan& plan, std::int64_t deadline,
              ClientCore& core, PerServerMultiGet& per_server, OnHit& on_hit,
              OnFailure& on_failure) {
    const std::size_t count = plan.counts.size();
    bool any = false;
    for (const std::size_t s : plan.used) {
      if (recheck_[s] != 0) {
        core.health(s).hits.fetch_add(hits_[s], std::memory_order_relaxed);
        any = true;
      }
    }
    if (!any) {
      return;
    }
    // The answered keys and the other servers' keys leave the batch.
    for (std::size_t position = 0; position < positions_.size(); ++position) {
      const std::size_t i = positions_[position];
      const std::size_t s = plan.server_of[i];
      if (recheck_[s] == 0 || answered_[position] != 0) {
        plan.server_of[i] = kNone;
      }
    }
    std::fill(plan.counts.begin(), plan.counts.end(), 0);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (plan.server_of[i] != kNone) {
        ++plan.counts[plan.server_of[i]];
      }
    }
    for (std::size_t s = 0; s < count; ++s) {
      if (recheck_[s] != 0 && plan.counts[s] == 0) {
        // Every key answered: only its health is left to settle.
        plan.settled[s] = 1;
        (void)core.finish(plan.routes[s], MEMCACHED_SUCCESS, "get_multi");
      }
    }
    per_server.run(keys, plan, deadline, core, on_hit, on_failure);
  }

 private:
  static constexpr std::size_t kNone = BatchPlan::kNone;

  // Per request position (the keys sent, in request order).
  std::vector<const char*> key_ptrs_;
  std::vector<std::size_t> key_lengths_;
  std::vector<std::uint32_t> fan_servers_;  // its server, maybe | FanRoutes::kFirst / kSecond
  std::vector<std::size_t> positions_;      // its index in the request
  std::vector<std::uint8_t> answered_;      // a value came back
  std::vector<std::size_t> chain_;          // the same server's next position
  KeyTable table_;                          // key -> position, built when the order breaks
  // Per server.
  std::vector<std::uint64_t> hits_;                      // values that came back
  std::vector<memcached_return_t> sent_;                 // failure to send, if any
  std::vector<std::size_t> cursor_;                      // its first unanswered position
  std::vector<std::size_t> tail_;                        // its last position
  std::vector<const memcached_instance_st*> instances_;  // the fan's connection
  std::vector<std::uint8_t> recheck_;                    // read again on its own handle
  std::vector<std::size_t> live_;                        // the servers still owing a reply
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_POLLED_MULTI_GET_HPP_
