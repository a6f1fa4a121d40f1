// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_RUN_KEYS_HPP_
#define MEMSHARD_BENCH_RUN_KEYS_HPP_

// run_keys.hpp: how a benchmark leaves other data on its servers alone: the
// run's key prefix (MEMSHARD_BENCH_PREFIX, or made here from the time and the
// pid), which starts every key a benchmark writes; the check, before anything
// is written, that every server is empty (curr_items 0), which
// MEMSHARD_BENCH_ALLOW_NONEMPTY=1 turns off; and the deletion of the run's own
// keys, key by key: no benchmark flushes a server.

#include <libmemcached-1.0/memcached.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/placement/server.hpp"
#include "memshard/wire/meta_connection.hpp"

namespace memshard::bench {

/// kMaxPrefixLength: the longest MEMSHARD_BENCH_PREFIX. The resize-through-time
/// benchmark sizes its items to fill one slab class with keys up to 8 bytes
/// longer than this.
inline constexpr std::size_t kMaxPrefixLength = 32;

/// make_run_prefix: "msb:<8 hex digits of `unix_seconds`><6 of `pid`>:", 19
/// bytes (both numbers are cut to their low 32 and 24 bits).
[[nodiscard]] inline auto make_run_prefix(std::uint64_t unix_seconds, std::uint64_t pid)
    -> std::string {
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(),
                "msb:%08llx%06llx:", static_cast<unsigned long long>(unix_seconds & 0xFFFFFFFFULL),
                static_cast<unsigned long long>(pid & 0xFFFFFFULL));
  return text.data();
}

/// prefix_problem: what is wrong with `prefix` as a run prefix ("" when
/// nothing): 1 to kMaxPrefixLength bytes of letters, digits and ":_.-".
[[nodiscard]] inline auto prefix_problem(std::string_view prefix) -> std::string {
  if (prefix.empty() || prefix.size() > kMaxPrefixLength) {
    return "must be 1 to " + std::to_string(kMaxPrefixLength) + " bytes long";
  }
  for (const char c : prefix) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == ':' || c == '_' || c == '.' || c == '-';
    if (!allowed) {
      return "may hold only letters, digits and ':_.-'";
    }
  }
  return {};
}

/// run_prefix: the prefix of every key this process writes: MEMSHARD_BENCH_PREFIX
/// (bench/run.sh sets one for the whole run) or, when it is unset or empty,
/// make_run_prefix() of now and this process. The same string on every call.
/// Throws std::invalid_argument for a MEMSHARD_BENCH_PREFIX that prefix_problem
/// rejects.
[[nodiscard]] inline auto run_prefix() -> const std::string& {
  static const std::string prefix = [] {
    const char* given = std::getenv("MEMSHARD_BENCH_PREFIX");
    if (given == nullptr || *given == '\0') {
      return make_run_prefix(static_cast<std::uint64_t>(std::time(nullptr)),
                             static_cast<std::uint64_t>(::getpid()));
    }
    if (const std::string problem = prefix_problem(given); !problem.empty()) {
      throw std::invalid_argument("MEMSHARD_BENCH_PREFIX " + problem + ": '" + given + "'");
    }
    return std::string(given);
  }();
  return prefix;
}

/// allow_nonempty: whether MEMSHARD_BENCH_ALLOW_NONEMPTY is "1" (unset, empty
/// or "0": no). Throws std::invalid_argument for any other value.
[[nodiscard]] inline auto allow_nonempty() -> bool {
  const char* text = std::getenv("MEMSHARD_BENCH_ALLOW_NONEMPTY");
  const std::string_view value = text == nullptr ? std::string_view{} : std::string_view(text);
  if (value.empty() || value == "0") {
    return false;
  }
  if (value == "1") {
    return true;
  }
  throw std::invalid_argument("MEMSHARD_BENCH_ALLOW_NONEMPTY must be 0 or 1: " +
                              std::string(value));
}

/// curr_items: `server`'s curr_items (memcached's "stats"): the items it holds.
/// Throws std::runtime_error when the server does not answer.
[[nodiscard]] inline auto curr_items(const Server& server) -> std::uint64_t {
  memcached_stat_st stat{};
  const memcached_return_t rc =
      memcached_stat_servername(&stat, nullptr, server.host.c_str(), server.port);
  if (rc != MEMCACHED_SUCCESS) {
    throw std::runtime_error("memshard bench: stats of " + server.endpoint() + ": " +
                             memcached_strerror(nullptr, rc));
  }
  return stat.curr_items;
}

/// nonempty_servers: "host:port (curr_items n), ..." for every server of `servers`
/// that holds items, "" when none does.
[[nodiscard]] inline auto nonempty_servers(std::span<const Server> servers) -> std::string {
  std::string found;
  for (const Server& server : servers) {
    if (const std::uint64_t items = curr_items(server); items != 0) {
      found.append(found.empty() ? "" : ", ")
          .append(server.endpoint())
          .append(" (curr_items ")
          .append(std::to_string(items))
          .append(")");
    }
  }
  return found;
}

/// require_empty: before a benchmark writes anything: throws
/// std::runtime_error, naming the servers that hold items and why that
/// matters, unless every server of `servers` is empty or allow_nonempty();
/// then it only notes them on stderr.
inline void require_empty(std::span<const Server> servers) {
  const std::string found = nonempty_servers(servers);
  if (found.empty()) {
    return;
  }
  if (allow_nonempty()) {
    std::cerr << "memshard: MEMSHARD_BENCH_ALLOW_NONEMPTY=1: running on servers that hold items: "
              << found << "; only keys under '" << run_prefix() << "' are written and deleted\n";
    return;
  }
  throw std::runtime_error(
      "memshard bench: refusing to run on servers that are not empty: " + found +
      ". The benchmark writes only keys under '" + run_prefix() +
      "' and deletes them at the end, but its writes can evict the items already there, and "
      "their memory can get its own keys evicted: hit rates would come out lower than on empty "
      "servers, and checks that expect hits would fail. Set MEMSHARD_BENCH_ALLOW_NONEMPTY=1 to "
      "run anyway.");
}

/// kEraseBatch: deletes sent in one pipeline by erase_keys.
inline constexpr std::size_t kEraseBatch = 512;

/// erase_keys: deletes every key of `keys` from every server of `servers`
/// (meta `md`, kEraseBatch to a round trip; memcached 1.6 or later; a miss is
/// fine) and answers how many deletes found the key. Throws
/// std::runtime_error on any other answer or failure.
[[nodiscard]] inline auto erase_keys(std::span<const Server> servers,
                                     std::span<const std::string> keys) -> std::size_t {
  using memshard::detail::MetaReplyKind;
  std::size_t deleted = 0;
  for (const Server& server : servers) {
    const auto fail = [&server](const std::string& why) {
      throw std::runtime_error("memshard bench: deleting the run's keys from " + server.endpoint() +
                               ": " + why);
    };
    memshard::detail::MetaConnection link;
    const auto deadline = [] { return std::chrono::steady_clock::now() + std::chrono::seconds{5}; };
    if (const memshard::detail::MetaStatus status =
            link.connect(server.host, server.port, deadline());
        !status) {
      fail(status.message);
    }
    std::string requests;
    for (std::size_t first = 0; first < keys.size(); first += kEraseBatch) {
      const std::size_t count = std::min(kEraseBatch, keys.size() - first);
      requests.clear();
      for (std::size_t i = first; i < first + count; ++i) {
        if (const auto problem = memshard::detail::write_meta_delete(requests, keys[i], {})) {
          fail("bad key '" + keys[i] + "': " + problem->message());
        }
      }
      const memshard::detail::MetaPipelineOutcome done = link.pipeline(requests, deadline());
      if (!done.ok()) {
        fail(done.status.message);
      }
      if (done.replies.size() != count) {
        fail(std::to_string(done.replies.size()) + " replies to " + std::to_string(count) +
             " deletes");
      }
      for (const memshard::detail::MetaReply& reply : done.replies) {
        if (reply.kind == MetaReplyKind::kHeader) {
          ++deleted;
        } else if (reply.kind != MetaReplyKind::kNotFound) {
          fail("md answered " + std::string(to_string(reply.kind)) + " " + reply.message);
        }
      }
    }
  }
  return deleted;
}

/// require_emptied: after a benchmark deleted its keys from servers of its
/// own (started empty, used by nothing else): throws std::runtime_error
/// naming `what` unless every server of `servers` is empty again, as a
/// flush_all would have left it.
inline void require_emptied(std::span<const Server> servers, std::string_view what) {
  if (const std::string found = nonempty_servers(servers); !found.empty()) {
    throw std::runtime_error("memshard bench: " + std::string(what) +
                             " left items behind: " + found);
  }
}

}  // namespace memshard::bench

#endif  // MEMSHARD_BENCH_RUN_KEYS_HPP_
