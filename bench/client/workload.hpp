// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_CLIENT_WORKLOAD_HPP_
#define MEMSHARD_BENCH_CLIENT_WORKLOAD_HPP_

// client/workload.hpp: what every contender of the client benchmark works on:
// the keys and their 100-byte values (Data), the key lists of the multi-gets
// (Requests), and Contender, one way to do the operation under test, with the
// helpers that build and check contenders.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "run_keys.hpp"

namespace memshard::bench::client {

/// kKeyTag: after the run's prefix, every key the client benchmark writes
/// starts with it.
inline constexpr std::string_view kKeyTag = "memshard-client:";

/// key_prefix: what every key the client benchmark writes starts with:
/// run_prefix(), then kKeyTag.
[[nodiscard]] inline auto key_prefix() -> const std::string& {
  static const std::string prefix = run_prefix() + std::string(kKeyTag);
  return prefix;
}

/// drawn_keys: every key any Data of this process has made, in order, so
/// that the benchmark can delete all it may have written, after a failure
/// too (Data is made on one thread only).
[[nodiscard]] inline auto drawn_keys() -> std::vector<std::string>& {
  static std::vector<std::string> keys;
  return keys;
}
/// kValueSize: the size of every value, in bytes.
inline constexpr std::size_t kValueSize = 100;
/// kSingleKeys: the keys of the single get and set runs.
inline constexpr std::size_t kSingleKeys = 1024;
/// kMultiKeys: keys per get_multi.
inline constexpr std::size_t kMultiKeys = 100;
/// kMultiRequests: distinct get_multi key lists.
inline constexpr std::size_t kMultiRequests = 16;
/// kSingleBatch: single calls per contender per round.
inline constexpr std::size_t kSingleBatch = 40;
/// kMultiBatch: multi-gets per contender per round.
inline constexpr std::size_t kMultiBatch = 4;

/// Data: keys under key_prefix() and their 100-byte values; each key is also
/// added to drawn_keys().
struct Data {
  /// Data: `count` keys drawn by KeySet from `seed`.
  explicit Data(std::size_t count, std::uint64_t seed) {
    const KeySet raw(count, seed);
    keys.reserve(count);
    values.reserve(count);
    for (const std::string_view key : raw) {
      add(key);
    }
  }

  /// on_first_server: the first `count` keys, drawn as above from seeds
  /// `seed`, `seed` + 1, ..., that `client` places on server 0 (the
  /// baseline's).
  template <class Client>
  [[nodiscard]] static auto on_first_server(std::size_t count, std::uint64_t seed,
                                            const Client& client) -> Data {
    constexpr std::size_t kChunk = 4096;
    constexpr std::size_t kMaxChunks = 1000;
    Data out(0, seed);
    std::string full;
    for (std::size_t chunk = 0; chunk < kMaxChunks && out.keys.size() < count; ++chunk) {
      const KeySet raw(kChunk, seed + chunk);
      for (const std::string_view key : raw) {
        full.assign(key_prefix()).append(key);
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

  std::vector<std::string> keys;    ///< the keys, key_prefix() included
  std::vector<std::string> values;  ///< the value of each key

 private:
  void add(std::string_view key) {
    std::string full(key_prefix());
    full.append(key);
    drawn_keys().push_back(full);
    std::string value = "value of " + full + ' ';
    while (value.size() < kValueSize) {
      value.append(full);
    }
    value.resize(kValueSize);
    keys.push_back(std::move(full));
    values.push_back(std::move(value));
  }
};

/// on_first_server: indexes of the keys of `data` that `client` places on
/// server 0 (the baseline's).
template <class Client>
[[nodiscard]] auto on_first_server(const Data& data, const Client& client)
    -> std::vector<std::size_t> {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < data.keys.size(); ++i) {
    if (client.server_index_for(data.keys[i]) == 0) {
      out.push_back(i);
    }
  }
  return out;
}

/// all_indexes: 0, 1, ..., `count` - 1.
[[nodiscard]] inline auto all_indexes(std::size_t count) -> std::vector<std::size_t> {
  std::vector<std::size_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = i;
  }
  return out;
}

/// Requests: kMultiRequests key lists of kMultiKeys keys each, as string_views
/// (what a caller of get_multi holds), with the indexes of their keys in the
/// Data they view.
struct Requests {
  /// Requests: the lists of the first kMultiKeys * kMultiRequests keys of `data`.
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
  std::vector<std::vector<std::string_view>> lists;   ///< the keys of each request
  std::vector<std::vector<std::size_t>> index_lists;  ///< their indexes in the Data
};

/// Contender: one way to do the operation under test. `run(n)` makes n calls,
/// moving on through its own keys, and answers how many failed.
struct Contender {
  std::string name;                             ///< the prefix of its counters
  std::size_t keys = 0;                         ///< distinct keys (or key lists) it cycles over
  std::function<std::size_t(std::size_t)> run;  ///< makes n calls, answers the failures
  std::string reference{};  ///< another contender to compare with, besides the baseline
  std::vector<std::string> also_against{};  ///< more contenders to compare with, if present
};

/// Cursor: cycles over a list of key indexes.
class Cursor {
 public:
  /// Cursor: over `indexes` (at least one), from the first.
  explicit Cursor(std::vector<std::size_t> indexes) : indexes_(std::move(indexes)) {
    if (indexes_.empty()) {
      throw std::runtime_error("a contender has no keys");
    }
  }
  /// next: the next index, after the last the first again.
  auto next() noexcept -> std::size_t {
    const std::size_t index = indexes_[at_];
    at_ = at_ + 1 == indexes_.size() ? 0 : at_ + 1;
    return index;
  }
  /// size: how many indexes it cycles over.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return indexes_.size(); }

 private:
  std::vector<std::size_t> indexes_;
  std::size_t at_ = 0;
};

/// keyed: a contender that makes one call `call(i)` per key index, cycling
/// over `indexes`; `call` answers whether the call succeeded.
template <class Call>
[[nodiscard]] auto keyed(std::string name, std::vector<std::size_t> indexes, Call call)
    -> Contender {
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

/// check_all: throws unless every contender answers every key of its list
/// correctly in `calls_each` calls (which also opens every connection before
/// anything is timed).
inline void check_all(const std::vector<Contender>& contenders, std::size_t calls_each) {
  for (const Contender& contender : contenders) {
    if (const std::size_t failed = contender.run(calls_each); failed > 0) {
      throw std::runtime_error(contender.name + ": " + std::to_string(failed) + " of " +
                               std::to_string(calls_each) + " calls failed before timing");
    }
  }
}

}  // namespace memshard::bench::client

#endif  // MEMSHARD_BENCH_CLIENT_WORKLOAD_HPP_
