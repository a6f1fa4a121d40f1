// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MIGRATION_SWEEPER_HPP_
#define MEMSHARD_MIGRATION_SWEEPER_HPP_

// migration/sweeper.hpp: sweep_moved_keys, which deletes from servers the copies of keys that a
// placement puts elsewhere. After a change of placement, a server that held a key before may
// keep its copy: nothing reads it there any more, and nothing keeps it current. A later change
// that puts the key back on that server (a grow, then a shrink) would serve that copy as a hit
// with an old value. Sweeping the old servers once the new placement is the only one written
// removes those copies: each server's keys are listed (`lru_crawler metadump all`), and every
// key of the application (its key prefix) that the placement puts on another server is deleted
// there, only if it did not change since it was listed (its cas).

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "memshard/detail/throw.hpp"
#include "memshard/placement/key_prefix.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/metadump.hpp"
#include "memshard/wire/meta_connection.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// SweepOptions: the bounds of a sweep.
struct SweepOptions {
  /// key_prefix: the application's keys start with it (ClientOptions::key_prefix); a key without
  /// it is another application's and is never deleted. With an empty prefix every key on the
  /// servers is taken for the application's: servers shared with another application need one.
  std::string key_prefix;
  /// placement_skip: how many bytes of a key the placement does not hash (the prefix's length
  /// when the placement hashes the bare key, 0 when it hashes the key as sent).
  std::size_t placement_skip = 0;
  /// server_timeout: the longest one server's sweep (its listing and its deletes) may take.
  std::chrono::milliseconds server_timeout{60'000};
  /// io_timeout: the longest a connection or one batch of deletes may take.
  std::chrono::milliseconds io_timeout{2'000};
  /// batch_size: deletes sent together (one write, their replies read together). Positive.
  std::size_t batch_size = 256;
  /// busy_wait: while the server's crawler is busy with another listing, how long to wait
  /// before asking again (within server_timeout).
  std::chrono::milliseconds busy_wait{100};
};

/// SweptServer: what a sweep did on one server.
struct SweptServer {
  std::string server;         ///< "host:port"
  std::uint64_t listed = 0;   ///< items listed
  std::uint64_t foreign = 0;  ///< items without the key prefix: left alone
  std::uint64_t staying = 0;  ///< the application's items the placement puts on this server
  std::uint64_t deleted = 0;  ///< moved-away items deleted
  std::uint64_t changed = 0;  ///< moved-away items written since listed (left), or gone already
  std::string error;          ///< empty when the whole listing was read and every delete answered

  [[nodiscard]] auto ok() const noexcept -> bool { return error.empty(); }
};

/// SweepReport: every swept server's outcome, in the order given.
struct SweepReport {
  std::vector<SweptServer> servers;

  /// complete: whether every server was swept whole.
  [[nodiscard]] auto complete() const noexcept -> bool {
    for (const SweptServer& server : servers) {
      if (!server.ok()) {
        return false;
      }
    }
    return true;
  }
};

namespace detail {

// Thrown by a sweep's line callback to end a listing whose deletes failed.
struct SweepStopped {};

// Deletes, in batches, the items a listing found moved away.
class SweepBatch {
 public:
  SweepBatch(MetaConnection& link, SweptServer& report, std::size_t size,
             std::chrono::milliseconds io_timeout)
      : link_(link), report_(report), size_(size), io_timeout_(io_timeout) {}

  // Adds a delete of `key` if unchanged since its listing (`cas`, when the server keeps them);
  // sends the batch once full. False when a batch failed (the report says why).
  auto add(std::string_view key, std::uint64_t cas) -> bool {
    MetaDeleteFlags flags;
    if (cas != 0) {
      flags.cas = cas;
    }
    if (write_meta_delete(requests_, key, flags)) {
      return true;  // a listed key memcached itself could not hold: nothing to delete
    }
    return ++pending_ < size_ || send();
  }

  // Sends what is pending. False when it failed.
  auto send() -> bool {
    if (pending_ == 0) {
      return true;
    }
    const MetaDeadline deadline = std::chrono::steady_clock::now() + io_timeout_;
    MetaPipelineOutcome outcome = link_.pipeline(requests_, deadline);
    requests_.clear();
    pending_ = 0;
    if (!outcome.ok()) {
      report_.error = "deletes: " + outcome.status.message;
      return false;
    }
    for (const MetaReply& reply : outcome.replies) {
      switch (reply.kind) {
        case MetaReplyKind::kHeader:
          ++report_.deleted;
          break;
        case MetaReplyKind::kExists:
        case MetaReplyKind::kNotFound:
          ++report_.changed;
          break;
        default:
          report_.error = "deletes: the server answered " + std::string(to_string(reply.kind));
          return false;
      }
    }
    return true;
  }

 private:
  MetaConnection& link_;
  SweptServer& report_;
  std::size_t size_;
  std::chrono::milliseconds io_timeout_;
  std::string requests_;
  std::size_t pending_ = 0;
};

// Sweeps one server: see sweep_moved_keys.
template <Locator L>
void sweep_server(const Server& server, const L& placement, std::span<const Server> placed,
                  const SweepOptions& options, SweptServer& report) {
  const auto until = std::chrono::steady_clock::now() + options.server_timeout;
  const auto io_deadline = [&] {
    return std::min(until, std::chrono::steady_clock::now() + options.io_timeout);
  };
  MetaConnection listing;
  MetaConnection deleting;
  if (MetaStatus connected = listing.connect(server.host, server.port, io_deadline()); !connected) {
    report.error = "cannot connect: " + connected.message;
    return;
  }
  if (MetaStatus connected = deleting.connect(server.host, server.port, io_deadline());
      !connected) {
    report.error = "cannot connect: " + connected.message;
    return;
  }
  SweepBatch batch(deleting, report, options.batch_size, options.io_timeout);
  std::string bad;
  const auto on_line = [&](std::string_view line) {
    if (classify_metadump_line(line) != MetadumpLineKind::kEntry) {
      return;
    }
    MetadumpParse parsed = parse_metadump_line(line);
    if (!parsed.ok()) {
      if (bad.empty()) {
        bad = parsed.error;
      }
      return;
    }
    ++report.listed;
    const std::string_view key = parsed.entry->key;
    if (!key.starts_with(options.key_prefix)) {
      ++report.foreign;
      return;
    }
    const Server& owner = placed[placement.locate(placement_part(key, options.placement_skip))];
    if (owner.host == server.host && owner.port == server.port) {
      ++report.staying;
      return;
    }
    if (!batch.add(key, parsed.entry->cas)) {
      throw SweepStopped{};
    }
  };
  for (;;) {
    MetaStatus listed;
    try {
      listed = listing.lines("lru_crawler metadump all", until, on_line);
    } catch (const SweepStopped&) {
      return;  // the report holds the failed batch's error
    }
    const bool busy = listed.code == MetaErrc::kRefused &&
                      listed.message.find("'BUSY") != std::string::npos && report.listed == 0;
    if (busy && std::chrono::steady_clock::now() + options.busy_wait < until) {
      std::this_thread::sleep_for(options.busy_wait);  // another listing holds the crawler
      continue;
    }
    if (!batch.send()) {
      return;
    }
    if (!listed) {
      report.error = "lru_crawler metadump all: " + listed.message;
    } else if (!bad.empty()) {
      report.error = bad;
    }
    return;
  }
}

}  // namespace detail

/// sweep_moved_keys: on each of `servers` in turn, deletes every item of the application (its
/// key starts with options.key_prefix) that `placement` puts on another server, as its listing
/// (`lru_crawler metadump all`) finds it, and only if its cas did not change since. `placement`
/// indexes `placed` (the placement's own servers, compared with a swept server by host and
/// port). Run it once no writer puts those keys on `servers` any more: after a commit, on the
/// servers of the placement before it (after an abort, on those of the placement abandoned).
/// Each server takes at most options.server_timeout; one that cannot be listed whole (no
/// connection, crawler dumps refused, a timeout) gets an error in the report, and what was
/// listed before is still deleted. Throws ConfigError for a batch size of 0 or a placement whose
/// size is not placed.size(); nothing else, but std::bad_alloc.
///
/// **Example**:
///   memshard::SweepReport swept = memshard::sweep_moved_keys(
///       old_servers, *locator, new_servers, {.key_prefix = "app:", .placement_skip = 4});
template <Locator L>
auto sweep_moved_keys(std::span<const Server> servers, const L& placement,
                      std::span<const Server> placed, const SweepOptions& options = {})
    -> SweepReport {
  if (options.batch_size == 0) {
    detail::throw_config_error("a sweep's batch size must be positive", "0");
  }
  if (placement.size() != placed.size() || placed.empty()) {
    detail::throw_config_error(
        "a sweep's placement must place keys on the servers given",
        std::to_string(placement.size()) + " placed, " + std::to_string(placed.size()) + " given");
  }
  SweepReport report;
  report.servers.reserve(servers.size());
  for (const Server& server : servers) {
    SweptServer& swept = report.servers.emplace_back();
    swept.server = server.endpoint();
    detail::sweep_server(server, placement, placed, options, swept);
  }
  return report;
}

/// sweep_moved_keys: sweeps `servers` against the placement a client (a ShardedClient) serves
/// now, with its key prefix (see above). Throws ConfigError while its migration runs.
///
/// **Example** (a single process, after its migration):
///   const std::vector<memshard::Server> before = client.servers();
///   client.begin_migration(after);  /* ... */  client.commit_migration();
///   const memshard::SweepReport swept = memshard::sweep_moved_keys(before, client);
template <class Client>
requires requires(const Client& client) {
  client.snapshot()->locator;
  client.options().key_prefix;
}
auto sweep_moved_keys(std::span<const Server> servers, const Client& client,
                      SweepOptions options = {}) -> SweepReport {
  const auto snapshot = client.snapshot();
  if (snapshot->migration) {
    detail::throw_config_error("a sweep needs a client that serves one placement",
                               "commit or abort its migration first");
  }
  options.key_prefix = client.options().key_prefix;
  options.placement_skip = snapshot->placement_skip;
  const std::vector<Server> placed = snapshot->servers();
  return sweep_moved_keys(servers, *snapshot->locator, std::span<const Server>(placed), options);
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_MIGRATION_SWEEPER_HPP_
