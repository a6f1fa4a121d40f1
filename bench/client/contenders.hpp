// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_CLIENT_CONTENDERS_HPP_
#define MEMSHARD_BENCH_CLIENT_CONTENDERS_HPP_

// client/contenders.hpp: the ShardedClient contenders of the client benchmark,
// (a) and (a'): single get and set, get_multi and visit_multi, set_multi and
// its loop of single sets, and the checks
// of what a ShardedClient stores and reads before anything is timed.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/workload.hpp"
#include "memshard/memshard.hpp"

namespace memshard::bench::client {

/// sharded_get: `client.get` of the keys `indexes` of `data`; a call succeeds
/// on a hit with the key's value.
template <class Client>
[[nodiscard]] auto sharded_get(std::string name, Client& client, const Data& data,
                               std::vector<std::size_t> indexes) -> Contender {
  return keyed(std::move(name), std::move(indexes), [&client, &data](std::size_t i) {
    const auto hit = client.get(data.keys[i]);
    return hit.ok() && hit.value() && hit.value()->value == data.values[i];
  });
}

/// sharded_set: `client.set` of the keys `indexes` of `data` with their values.
template <class Client>
[[nodiscard]] auto sharded_set(std::string name, Client& client, const Data& data,
                               std::vector<std::size_t> indexes) -> Contender {
  return keyed(std::move(name), std::move(indexes), [&client, &data](std::size_t i) {
    return client.set(data.keys[i], data.values[i]).ok();
  });
}

/// multi_failures: how many keys of one get_multi answer are missing or have
/// another value than in `data` (`indexes`: the request's keys in `data`).
[[nodiscard]] inline auto multi_failures(const MultiGetResult& out, const Data& data,
                                         const std::vector<std::size_t>& indexes) -> std::size_t {
  std::size_t failed = 0;
  for (std::size_t k = 0; k < indexes.size(); ++k) {
    if (!out.items[k] || out.items[k]->value != data.values[indexes[k]]) {
      ++failed;
    }
  }
  return failed;
}

/// sharded_get_multi: `client.get_multi` of each list of `requests` in turn;
/// every key missing or wrong counts as a failure.
template <class Client>
[[nodiscard]] auto sharded_get_multi(std::string name, Client& client, const Data& data,
                                     const Requests& requests) -> Contender {
  auto at = std::make_shared<std::size_t>(0);
  return {std::move(name), requests.lists.size(),
          [&client, &data, &requests, at](std::size_t calls) {
            std::size_t failed = 0;
            for (std::size_t n = 0; n < calls; ++n) {
              const std::size_t r = (*at)++ % requests.lists.size();
              const MultiGetResult out =
                  client.get_multi(std::span<const std::string_view>(requests.lists[r]));
              failed += multi_failures(out, data, requests.index_lists[r]);
            }
            return failed;
          }};
}

/// request_pairs: each list of `requests` as (key, value) pairs of `data`,
/// what set_multi takes.
[[nodiscard]] inline auto request_pairs(const Data& data, const Requests& requests)
    -> std::vector<std::vector<std::pair<std::string_view, std::string_view>>> {
  std::vector<std::vector<std::pair<std::string_view, std::string_view>>> out;
  for (const std::vector<std::size_t>& indexes : requests.index_lists) {
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (const std::size_t i : indexes) {
      pairs.emplace_back(data.keys[i], data.values[i]);
    }
    out.push_back(std::move(pairs));
  }
  return out;
}

/// sharded_set_multi: `client.set_multi` of each list of `requests` (keys
/// with their values in `data`) in turn; every key not stored is a failure.
template <class Client>
[[nodiscard]] auto sharded_set_multi(std::string name, Client& client, const Data& data,
                                     const Requests& requests) -> Contender {
  auto at = std::make_shared<std::size_t>(0);
  auto pairs = std::make_shared<
      const std::vector<std::vector<std::pair<std::string_view, std::string_view>>>>(
      request_pairs(data, requests));
  return {std::move(name), requests.lists.size(), [&client, pairs, at](std::size_t calls) {
            std::size_t failed = 0;
            for (std::size_t n = 0; n < calls; ++n) {
              failed += client.set_multi((*pairs)[(*at)++ % pairs->size()]).failures();
            }
            return failed;
          }};
}

/// sharded_set_loop: the same writes as a loop of `client.set`, one key after
/// another.
template <class Client>
[[nodiscard]] auto sharded_set_loop(std::string name, Client& client, const Data& data,
                                    const Requests& requests) -> Contender {
  auto at = std::make_shared<std::size_t>(0);
  return {std::move(name), requests.lists.size(),
          [&client, &data, &requests, at](std::size_t calls) {
            std::size_t failed = 0;
            for (std::size_t n = 0; n < calls; ++n) {
              for (const std::size_t i : requests.index_lists[(*at)++ % requests.lists.size()]) {
                if (!client.set(data.keys[i], data.values[i]).ok()) {
                  ++failed;
                }
              }
            }
            return failed;
          }};
}

/// sharded_visit_multi: the same through visit_multi: each value copied into
/// a reused string, as the libmemcached contenders do, instead of a
/// MultiGetResult of its own.
template <class Client>
[[nodiscard]] auto sharded_visit_multi(std::string name, Client& client, const Requests& requests)
    -> Contender {
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
                  [&](std::size_t index, const ItemView& item) {
                    (*values)[index].assign(item.value);
                    ++found;
                  },
                  [&](std::size_t, const Status&) { ++failed; });
              // Counted like the libmemcached contenders; the values are
              // checked against the data before timing (check_sharded_multi).
              failed += kMultiKeys - std::min(found, kMultiKeys);
            }
            return failed;
          }};
}

/// require: throws, naming `what`, unless `status` is ok.
inline void require(const Status& status, std::string_view what) {
  if (!status.ok()) {
    throw std::runtime_error(std::string(what) + ": " + status.message());
  }
}

/// write_all: every key of `data` with its value, through `client`.
template <class Client>
void write_all(Client& client, const Data& data, std::string_view what) {
  for (std::size_t i = 0; i < data.keys.size(); ++i) {
    require(client.set(data.keys[i], data.values[i]), what);
  }
}

/// check_sharded_multi: throws unless get_multi and visit_multi of `client`
/// answer every key of every list of `requests` with its value.
template <class Client>
void check_sharded_multi(std::string_view name, Client& client, const Data& data,
                         const Requests& requests) {
  for (std::size_t r = 0; r < requests.lists.size(); ++r) {
    const std::span<const std::string_view> keys(requests.lists[r]);
    const std::vector<std::size_t>& indexes = requests.index_lists[r];
    const MultiGetResult out = client.get_multi(keys);
    if (const std::size_t failed = multi_failures(out, data, indexes); failed > 0) {
      throw std::runtime_error(std::string(name) + ": get_multi: " + std::to_string(failed) +
                               " of 100 keys missing or wrong");
    }
    std::size_t visited = 0;
    client.visit_multi(
        keys,
        [&](std::size_t index, const ItemView& item) {
          visited += item.value == data.values[indexes[index]] ? 1U : 0U;
        },
        [&](std::size_t, const Status& status) {
          throw std::runtime_error(std::string(name) + ": visit_multi: " + status.message());
        });
    if (visited != kMultiKeys) {
      throw std::runtime_error(std::string(name) +
                               ": visit_multi: " + std::to_string(kMultiKeys - visited) +
                               " of 100 keys missing or wrong");
    }
  }
}

}  // namespace memshard::bench::client

#endif  // MEMSHARD_BENCH_CLIENT_CONTENDERS_HPP_
