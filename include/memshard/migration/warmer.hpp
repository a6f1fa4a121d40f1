// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MIGRATION_WARMER_HPP_
#define MEMSHARD_MIGRATION_WARMER_HPP_

// migration/warmer.hpp: Warmer, the background warmer of a live migration: it lists the
// keys of every old server (`lru_crawler metadump all`), keeps those whose
// owner changes and that live long enough (on that server's own clock), and
// copies them to their new owners hottest first with
// ShardedClient::migrate_key, under an ops/s and bytes/s budget that backs
// off while the new owners evict. WarmerOptions holds its settings; its
// progress is a WarmerProgress (warmer_progress.hpp). It owns no thread: the
// caller drives it with step() or run_for().

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "memshard/detail/clock.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/migration/detail/rate_limiter.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/migration/warmer_progress.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/metadump.hpp"
#include "memshard/wire/meta_connection.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// WarmerClock: the monotonic clock a Warmer reads, in ns (its rate limit,
/// time budgets, polls and elapsed times). Tests pass a function of their own.
using WarmerClock = detail::RateClock;

/// WarmerOptions: the settings of a Warmer.
struct WarmerOptions {
  /// ops_per_second: copies (migrate_key calls) per second; 0: unlimited.
  std::uint64_t ops_per_second = 1000;
  /// bytes_per_second: item bytes copied per second, as the listing sizes
  /// them (an upper bound on the value bytes); 0: unlimited.
  std::uint64_t bytes_per_second = 8'000'000;
  /// burst: how much of the budget may be taken at once after an idle spell,
  /// as time at the rate.
  std::chrono::milliseconds burst{100};
  /// min_ttl: a listed item with less time left than this (on its server's
  /// clock) is not copied. At least 1 s is always required.
  std::chrono::seconds min_ttl{1};
  /// chunk_size: the listing's eligible items are kept in chunks of this
  /// many, in listing order, each copied hottest first (fetched items, then
  /// the most recently accessed). Must be positive.
  std::size_t chunk_size = 10'000;
  /// max_keys_per_server: the most eligible items kept from one server's
  /// listing (their memory: about 100 bytes plus the key each); the rest of
  /// the listing is still read (the crawler must be drained) and counted as
  /// scanned, and those keys are left to the read-through. 0: no cap.
  std::size_t max_keys_per_server = 2'000'000;
  /// only_fetched: copy only the items read at least once since they were
  /// stored (metadump `fetch=yes`), leaving the rest to the read-through: for
  /// a fleet that shrinks, where copies of cold items would evict hot ones.
  bool only_fetched = false;
  /// backoff_factor: how much the budget is divided by each time a new
  /// owner's `evictions` rose since the last poll (cumulatively, down to
  /// 1/1024); the full budget comes back at the first poll without new
  /// evictions. 1 turns the back-off off. Needs a rate: an unlimited budget
  /// stays unlimited.
  double backoff_factor = 2;
  /// eviction_poll_interval: how often the new owners' `stats` are read for
  /// `evictions`; 0: before every copy.
  std::chrono::milliseconds eviction_poll_interval{1000};
  /// listing_timeout: the longest one server's stats and listing may take,
  /// from the step that begins it to the step that ends it (the listing is
  /// read across steps; the server's crawler stays held between them).
  std::chrono::milliseconds listing_timeout{300'000};
  /// busy_retries: how many more times a listing answered BUSY (another
  /// crawl runs on that server) is asked again, busy_retry_delay apart,
  /// before the server is reported as not listed.
  std::size_t busy_retries = 5;
  /// busy_retry_delay: the wait before asking a BUSY server again.
  std::chrono::milliseconds busy_retry_delay{200};
  /// on_progress: called with the progress at most every progress_interval
  /// while the warmer works, and once when it is done. May be empty.
  std::function<void(const WarmerProgress&)> on_progress = {};
  /// progress_interval: see on_progress.
  std::chrono::milliseconds progress_interval{500};
  /// clock: the clock read for rates, budgets, polls and elapsed times.
  WarmerClock clock = &detail::rate_clock_now;
};

/// validate_warmer_options: throws ConfigError for options that cannot work
/// (a zero chunk size, a back-off factor below 1 or not a number, negative
/// times, a null clock).
inline void validate_warmer_options(const WarmerOptions& options) {
  if (options.chunk_size == 0) {
    detail::throw_config_error("warmer chunk_size must be positive", "0");
  }
  if (!(options.backoff_factor >= 1)) {
    detail::throw_config_error("warmer backoff_factor must be at least 1",
                               std::to_string(options.backoff_factor));
  }
  if (options.min_ttl.count() < 0 || options.burst.count() < 0 ||
      options.eviction_poll_interval.count() < 0 || options.busy_retry_delay.count() < 0 ||
      options.progress_interval.count() < 0) {
    detail::throw_config_error("warmer times must not be negative",
                               "min_ttl, burst, eviction_poll_interval, busy_retry_delay or "
                               "progress_interval");
  }
  if (options.listing_timeout.count() <= 0) {
    detail::throw_config_error("warmer listing_timeout must be positive",
                               std::to_string(options.listing_timeout.count()) + " ms");
  }
  if (options.clock == nullptr) {
    detail::throw_config_error("warmer clock is null", "WarmerOptions::clock");
  }
}

/// WarmerBudget: how much one Warmer::step() may do: at most `max_keys()`
/// copies, each started before `max_time()` has passed on the warmer's clock.
/// Waits for the rate limit count, and so does a listing: it is read for as
/// long as the time allows and resumed by the next step. A wait for the rate
/// limit that would end past `max_time()` is not begun: with a time of 0, a
/// step copies what the budget allows at once, and reads only what a listing
/// has already sent. A step with a time limit returns by `max_time()` plus
/// what it began before then: one copy, and the poll of the new owners'
/// evictions that may come before it (each bound by the client's
/// connect_timeout and io_timeout), and on_progress. A budget of keys alone
/// reads a listing to its end (bound by listing_timeout).
///
/// It is made only by its named factories, so that every budget spells its
/// unit: there is no constructor from a bare number.
///
/// **Example**:
///   warmer.step(memshard::WarmerBudget::keys(100));
///   warmer.step(memshard::WarmerBudget::time(std::chrono::milliseconds(50)));
///   warmer.step(memshard::WarmerBudget::keys_and_time(100, std::chrono::milliseconds(50)));
class WarmerBudget {
 public:
  /// keys: at most `max_keys` copies, however long they take.
  [[nodiscard]] static constexpr auto keys(std::size_t max_keys) noexcept -> WarmerBudget {
    return WarmerBudget(max_keys, kNoTimeLimit);
  }
  /// time: as many copies as `max_time` allows (negative: none but what
  /// needs no wait).
  [[nodiscard]] static constexpr auto time(std::chrono::nanoseconds max_time) noexcept
      -> WarmerBudget {
    return WarmerBudget(kNoKeyLimit, max_time);
  }
  /// keys_and_time: at most `max_keys` copies within `max_time`.
  [[nodiscard]] static constexpr auto keys_and_time(std::size_t max_keys,
                                                    std::chrono::nanoseconds max_time) noexcept
      -> WarmerBudget {
    return WarmerBudget(max_keys, max_time);
  }
  /// unlimited: everything that is left.
  [[nodiscard]] static constexpr auto unlimited() noexcept -> WarmerBudget {
    return WarmerBudget(kNoKeyLimit, kNoTimeLimit);
  }

  /// max_keys: the most copies (std::size_t's maximum: no limit).
  [[nodiscard]] constexpr auto max_keys() const noexcept -> std::size_t { return max_keys_; }
  /// max_time: the time a step may take (nanoseconds::max(): no limit).
  [[nodiscard]] constexpr auto max_time() const noexcept -> std::chrono::nanoseconds {
    return max_time_;
  }
  /// has_time_limit: whether max_time bounds the step.
  [[nodiscard]] constexpr auto has_time_limit() const noexcept -> bool {
    return max_time_ != kNoTimeLimit;
  }

  friend constexpr auto operator==(const WarmerBudget&, const WarmerBudget&) -> bool = default;

 private:
  static constexpr std::size_t kNoKeyLimit = std::numeric_limits<std::size_t>::max();
  static constexpr std::chrono::nanoseconds kNoTimeLimit = std::chrono::nanoseconds::max();

  constexpr WarmerBudget(std::size_t max_keys, std::chrono::nanoseconds max_time) noexcept
      : max_keys_(max_keys), max_time_(max_time) {}

  std::size_t max_keys_;
  std::chrono::nanoseconds max_time_;
};

/// Warmer: copies the keys a running migration moves from their old servers
/// to their new owners before anyone reads them (see the file comment).
///
/// For each server of the old placement, in the old list's order: its
/// `stats` (the server's `time`, and `curr_items` for the estimate), then
/// `lru_crawler metadump all` (memcached 1.6.18's `hash` mode held an item
/// lock while writing to the network), on a connection of its own with no
/// other request on it meanwhile, read as the steps' budgets allow (a long
/// listing spans many steps; memcached's crawler waits for it between them,
/// up to listing_timeout); every listed item is parsed and
/// kept when (1) its remaining TTL, on that server's clock, is at least
/// min_ttl (else counted `expired`), (2) the old placement puts it on this
/// server (copies other servers made here are not this server's to move) and
/// (3) the new placement puts it elsewhere (compared by member: host and
/// port). Then each kept item goes through migrate_key() under the rate
/// limit, and its outcome is counted in that server's WarmerServerProgress
/// (kTooShort moves it from `eligible` to `expired`). A server that cannot
/// be listed (no connection, BUSY after busy_retries, crawler dumps disabled
/// with -X, a timeout) gets its `error` set and is done: nothing is thrown.
/// If the migration ends meanwhile, what is left is counted as failed and
/// every server says so in its error.
///
/// It works on its own clone of the client (its own connections) and the
/// migration's snapshot at construction. Memory: the kept items of the
/// server being worked on (max_keys_per_server). It owns no thread and is
/// not thread-safe: one thread drives it. step() and run_for() throw nothing
/// but std::bad_alloc and what on_progress throws.
///
/// **Example**:
///   client.begin_migration(new_servers);
///   memshard::Warmer warmer(client, {.ops_per_second = 2000});
///   while (warmer.run_for(std::chrono::milliseconds(100))) serve_other_work();
///   std::cout << warmer.progress().to_json() << '\n';
template <Locator L>
class Warmer {
 public:
  /// Warmer: a warmer of `client`'s running migration. Throws ConfigError
  /// when no migration runs, `options` are invalid, or the client has SASL
  /// credentials (the key lists are read with a text command).
  explicit Warmer(const ShardedClient<L>& client, WarmerOptions options = {})
      : options_(checked(std::move(options))),
        client_(client.clone()),
        snapshot_(client_.snapshot()),
        limiter_(
            detail::RateBudget{options_.ops_per_second, options_.bytes_per_second, options_.burst},
            options_.clock) {
    if (!snapshot_->migration) {
      detail::throw_config_error("the warmer needs a running migration", "begin_migration() first");
    }
    if (client_.options().sasl) {
      // Its key lists come from lru_crawler metadump, a text command.
      detail::throw_config_error("the warmer cannot list keys on servers that need SASL",
                                 "memcached -S refuses lru_crawler metadump");
    }
    const MigrationPlacement<L>& migration = *snapshot_->migration;
    for (std::size_t o = 0; o < migration.servers.size(); ++o) {
      Pass pass;
      pass.member = migration.member_of[o];
      pass.progress.server = migration.servers[o].endpoint();
      passes_.push_back(std::move(pass));
    }
    owners_.resize(snapshot_->placed);
    for (std::size_t m = 0; m < snapshot_->placed; ++m) {
      owners_[m].server = snapshot_->members.servers[m];
    }
  }

  Warmer(Warmer&&) noexcept = default;
  auto operator=(Warmer&&) noexcept -> Warmer& = default;
  Warmer(const Warmer&) = delete;
  auto operator=(const Warmer&) -> Warmer& = delete;
  ~Warmer() = default;

  /// step: does at most `budget`'s worth of work (listing the next server
  /// when its turn comes, then copying); answers whether work remains. With a
  /// clock of the caller's that does not move while it waits, a step ends at
  /// the first wait for the rate limit, and reads a listing for `max_time()`
  /// of the steady clock.
  auto step(WarmerBudget budget) -> bool {
    const std::int64_t start = now();
    const std::int64_t deadline =
        budget.has_time_limit()
            ? saturating_add(start, std::max<std::int64_t>(budget.max_time().count(), 0))
            : std::numeric_limits<std::int64_t>::max();
    std::size_t copies = 0;
    while (current_ < passes_.size()) {
      Pass& pass = passes_[current_];
      if (!pass.listed) {
        const bool over = list(pass, pause_at(deadline));
        report(false);
        if (!over) {
          break;  // the step's time is up: the listing resumes at the next step
        }
        continue;
      }
      if (pass.next == pass.queue.size()) {
        finish(pass);
        continue;
      }
      if (copies >= budget.max_keys() || now() > deadline) {
        break;
      }
      poll_evictions();
      const detail::MetadumpEntry& entry = pass.queue[pass.next];
      if (!acquire(entry.size, deadline)) {
        break;
      }
      if (!copy(pass, entry)) {
        continue;  // the migration ended: everything left was counted
      }
      ++pass.next;
      ++copies;
      if (pass.next == pass.chunk_end) {
        next_chunk(pass);
      }
      report(false);
    }
    elapse();
    report(done());
    return !done();
  }

  /// step: at most `max_keys` copies, waiting for the rate limit as needed.
  auto step(std::size_t max_keys) -> bool { return step(WarmerBudget::keys(max_keys)); }

  /// run_for: works for at most `duration` (see WarmerBudget for the slack;
  /// a longer listing is read across calls); answers whether work remains.
  auto run_for(std::chrono::nanoseconds duration) -> bool {
    return step(WarmerBudget::time(duration));
  }

  /// done: every old server was listed (or could not be) and each of its
  /// eligible items settled.
  [[nodiscard]] auto done() const noexcept -> bool { return current_ == passes_.size(); }

  /// progress: every old server's counts, in the old list's order.
  [[nodiscard]] auto progress() const -> WarmerProgress {
    WarmerProgress out;
    out.servers.reserve(passes_.size());
    for (const Pass& pass : passes_) {
      out.servers.push_back(pass.progress);
    }
    return out;
  }

  /// slowdown: the rate limit's back-off factor now (1: the full budget).
  [[nodiscard]] auto slowdown() const noexcept -> double { return limiter_.slowdown(); }

  /// backoffs: how many times the warmer slowed down for evictions.
  [[nodiscard]] auto backoffs() const noexcept -> std::uint64_t { return backoffs_; }

  /// options: the options in force.
  [[nodiscard]] auto options() const noexcept -> const WarmerOptions& { return options_; }

 private:
  // The listing of an old server under way, read across steps.
  struct Listing {
    enum class Phase : std::uint8_t { kConnect, kStats, kDump, kBusyWait };

    Listing(std::string_view host, std::uint16_t port, detail::MetaDeadline deadline)
        : link(host, port), until(deadline) {}

    detail::ListingConnection link;
    Phase phase = Phase::kConnect;
    detail::MetaDeadline until;              // listing_timeout after the listing began
    detail::MetaDeadline stats_until{};      // the stats reply's own bound
    detail::MetaDeadline retry_at{};         // after BUSY: when to ask again
    std::size_t attempt = 0;                 // BUSY answers so far
    std::optional<std::int64_t> server_now;  // the server's clock, from its stats
    std::optional<std::uint64_t> curr_items;
    bool bad_stats = false;  // a stats line that is not "STAT name value"
    std::string bad;         // the first metadump line that did not parse
  };

  // One old server's pass: its listing's kept items and where the copying is.
  struct Pass {
    std::size_t member = 0;                    // its member index in snapshot_
    bool listed = false;                       // the listing is over (read whole, or failed)
    std::optional<Listing> listing;            // the listing under way
    std::vector<detail::MetadumpEntry> queue;  // kept items, each chunk hottest first
    std::size_t next = 0;                      // the next item to copy
    std::size_t chunk_end = 0;                 // the end of the chunk being copied
    std::int64_t started = 0;                  // clock ns
    WarmerServerProgress progress;
    // The keys in `queue`, by their hash: metadump walks the LRUs while they change, and may
    // list an item twice (bumped to another LRU meanwhile); an item is queued once.
    std::unordered_set<std::uint64_t> queued;
  };

  // A new owner, polled for its evictions.
  struct Owner {
    Server server;
    detail::MetaConnection link;
    std::optional<std::uint64_t> evictions;
    std::int64_t retry_at = 0;  // clock ns: after a failed poll, when to poll it again
  };

  // How long a new owner whose stats could not be read is not polled.
  static constexpr std::int64_t kUnansweredPollPause = 5'000'000'000;

  [[nodiscard]] static auto checked(WarmerOptions options) -> WarmerOptions {
    validate_warmer_options(options);
    return options;
  }

  [[nodiscard]] auto now() const noexcept -> std::int64_t { return options_.clock(); }

  [[nodiscard]] static auto saturating_add(std::int64_t a, std::int64_t b) noexcept
      -> std::int64_t {
    return a > std::numeric_limits<std::int64_t>::max() - b
               ? std::numeric_limits<std::int64_t>::max()
               : a + b;
  }

  [[nodiscard]] static auto ms(std::int64_t ns) noexcept -> std::chrono::milliseconds {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(ns));
  }

  [[nodiscard]] auto io_deadline() const -> detail::MetaDeadline {
    const ClientOptions& client = client_.options();
    return std::chrono::steady_clock::now() + client.connect_timeout + client.io_timeout;
  }

  // The steady-clock time by which a step that ends at `deadline` (on the
  // warmer's clock) stops reading a listing.
  [[nodiscard]] auto pause_at(std::int64_t deadline) const -> detail::MetaDeadline {
    if (deadline == std::numeric_limits<std::int64_t>::max()) {
      return detail::MetaDeadline::max();
    }
    const std::int64_t left = std::max<std::int64_t>(deadline - now(), 0);
    const std::int64_t steady = detail::steady_now_ns();
    if (left > std::numeric_limits<std::int64_t>::max() - steady) {
      return detail::MetaDeadline::max();
    }
    return detail::MetaDeadline(std::chrono::nanoseconds(steady + left));
  }

  // Works on `pass`'s listing (stats, then the metadump, keeping what moves;
  // BUSY answers asked again) until it ends, true, or `pause` comes, false: it
  // then resumes at the next call.
  auto list(Pass& pass, detail::MetaDeadline pause) -> bool {
    if (!pass.listing) {
      const Server& server = snapshot_->members.servers[pass.member];
      pass.started = now();
      pass.listing.emplace(server.host, server.port,
                           std::chrono::steady_clock::now() + options_.listing_timeout);
    }
    Listing& listing = *pass.listing;
    for (;;) {
      switch (listing.phase) {
        case Listing::Phase::kConnect: {
          const std::optional<detail::MetaStatus> connected =
              listing.link.connect(pause, listing.until);
          if (!connected) {
            return false;
          }
          if (!connected->ok()) {
            fail(pass, "cannot connect: " + without(pass, connected->message));
            return true;
          }
          ask_stats(listing);
          break;
        }
        case Listing::Phase::kStats: {
          const std::optional<detail::MetaStatus> stats =
              listing.link.read(pause, listing.stats_until, [&listing](std::string_view line) {
                const auto stat = detail::split_stat_line(line);
                if (!stat) {
                  listing.bad_stats = true;
                } else if (stat->first == "time") {
                  listing.server_now = number<std::int64_t>(stat->second);
                } else if (stat->first == "curr_items") {
                  listing.curr_items = number<std::uint64_t>(stat->second);
                }
              });
          if (!stats) {
            return false;
          }
          if (!stats->ok()) {
            fail(pass, "stats: " + without(pass, stats->message));
            return true;
          }
          if (listing.bad_stats) {
            fail(pass, "stats: a stats line is not 'STAT name value'");
            return true;
          }
          if (!listing.server_now) {
            fail(pass, "stats has no time");
            return true;
          }
          pass.progress.expected_items = listing.curr_items.value_or(0);
          listing.phase = Listing::Phase::kDump;
          listing.bad.clear();
          listing.link.start("lru_crawler metadump all");
          break;
        }
        case Listing::Phase::kDump: {
          std::optional<detail::MetaStatus> listed = listing.link.read(
              pause, listing.until, [&](std::string_view line) { keep(pass, line); });
          if (!listed) {
            return false;
          }
          if (listed->ok() && !listing.bad.empty()) {
            listed->code = detail::MetaErrc::kMalformed;
            listed->message = listing.bad;
          }
          if (listed->ok()) {
            pass.progress.scan_done = true;
            end_listing(pass);
            return true;
          }
          const bool busy = listed->code == detail::MetaErrc::kRefused &&
                            listed->message.find("'BUSY") != std::string::npos;
          if (busy && pass.progress.scanned == 0 && listing.attempt < options_.busy_retries) {
            ++listing.attempt;
            listing.phase = Listing::Phase::kBusyWait;
            listing.retry_at = std::chrono::steady_clock::now() + options_.busy_retry_delay;
            break;
          }
          // What was listed before a failure is still worth copying.
          fail(pass, "lru_crawler metadump all: " + without(pass, listed->message));
          return true;
        }
        case Listing::Phase::kBusyWait: {
          const detail::MetaDeadline wake = std::min(listing.retry_at, pause);
          if (std::chrono::steady_clock::now() < wake) {
            std::this_thread::sleep_until(wake);
          }
          if (std::chrono::steady_clock::now() < listing.retry_at) {
            return false;
          }
          ask_stats(listing);
          break;
        }
      }
    }
  }

  // Sends `stats` on `listing`'s connection (its reply has the server's clock).
  void ask_stats(Listing& listing) {
    listing.phase = Listing::Phase::kStats;
    listing.stats_until = std::min(listing.until, io_deadline());
    listing.server_now.reset();
    listing.curr_items.reset();
    listing.bad_stats = false;
    listing.link.start("stats");
  }

  // Parses one metadump line of `pass`'s server and keeps its item when it
  // is this server's, moves, and lives long enough.
  void keep(Pass& pass, std::string_view line) {
    if (detail::classify_metadump_line(line) != detail::MetadumpLineKind::kEntry) {
      return;
    }
    Listing& listing = *pass.listing;
    detail::MetadumpParse parsed = detail::parse_metadump_line(line);
    if (!parsed.ok()) {
      if (listing.bad.empty()) {
        listing.bad = parsed.error;
      }
      return;
    }
    WarmerServerProgress& p = pass.progress;
    ++p.scanned;
    detail::MetadumpEntry& entry = *parsed.entry;
    if (detail::copy_ttl(entry, *listing.server_now, options_.min_ttl).verdict ==
        detail::TtlVerdict::kSkip) {
      ++p.expired;
      return;
    }
    if (!entry.key.starts_with(client_.options().key_prefix)) {
      return;  // another application's key (ClientOptions::key_prefix)
    }
    const MigrationPlacement<L>& migration = *snapshot_->migration;
    if (migration.old_owner(entry.key) != pass.member ||
        snapshot_->locate(entry.key) == pass.member) {
      return;  // not this server's under the old placement, or it stays
    }
    if (options_.only_fetched && !entry.fetched) {
      return;  // never read since stored: left to the read-through
    }
    if (options_.max_keys_per_server != 0 && pass.queue.size() >= options_.max_keys_per_server) {
      return;  // over the cap: left to the read-through
    }
    // A key listed again is not queued again. Of two keys with one hash (for a million keys,
    // one chance in about 40 million), the second is left to the read-through, as over the cap.
    if (!pass.queued.insert(std::hash<std::string_view>{}(entry.key)).second) {
      return;
    }
    ++p.eligible;
    pass.queue.push_back(std::move(entry));
  }

  template <typename T>
  [[nodiscard]] static auto number(std::optional<std::string_view> text) -> std::optional<T> {
    return text ? detail::parse_metadump_number<T>(*text) : std::nullopt;
  }

  // `message` without a leading "<the pass's server>: ", which its error has.
  [[nodiscard]] static auto without(const Pass& pass, const std::string& message) -> std::string {
    const std::string prefix = pass.progress.server + ": ";
    return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
  }

  // A server that cannot be (fully) listed: report it; what was kept is copied.
  void fail(Pass& pass, std::string why) {
    pass.progress.error = pass.progress.server + ": " + std::move(why);
    pass.progress.scan_done = true;
    end_listing(pass);
  }

  // The listing of `pass` is over: its connection closes, and its copies start.
  void end_listing(Pass& pass) {
    pass.listing.reset();
    pass.listed = true;
    start_chunks(pass);
  }

  // Orders the first chunk of `pass`'s queue hottest first.
  void start_chunks(Pass& pass) {
    pass.next = 0;
    pass.chunk_end = 0;
    next_chunk(pass);
  }

  // Orders the chunk that starts at pass.next hottest first.
  void next_chunk(Pass& pass) {
    const std::size_t begin = pass.next;
    const std::size_t end = std::min(pass.queue.size(), begin + options_.chunk_size);
    detail::sort_hottest_first(
        std::span<detail::MetadumpEntry>(pass.queue.data() + begin, end - begin));
    pass.chunk_end = end;
  }

  void finish(Pass& pass) {
    pass.progress.elapsed = ms(now() - pass.started);
    std::vector<detail::MetadumpEntry>().swap(pass.queue);
    pass.next = 0;
    pass.chunk_end = 0;
    ++current_;
  }

  void elapse() {
    if (current_ < passes_.size() && (passes_[current_].listed || passes_[current_].listing)) {
      Pass& pass = passes_[current_];
      pass.progress.elapsed = ms(now() - pass.started);
    }
  }

  // Waits for the rate limit to allow one copy of `bytes`, until `deadline`.
  // False when the deadline (or a clock that does not move) comes first.
  auto acquire(std::uint64_t bytes, std::int64_t deadline) -> bool {
    for (;;) {
      if (limiter_.try_acquire(1, bytes)) {
        return true;
      }
      const std::int64_t before = now();
      const std::int64_t wait = limiter_.wait_time(1, bytes).count();
      if (wait <= 0) {
        continue;
      }
      if (before >= deadline || wait > deadline - before) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
      if (now() == before) {
        return false;  // a clock of the caller's that only the caller moves
      }
    }
  }

  // Copies one item and counts what happened; false when the migration has
  // ended (and what was left is counted).
  auto copy(Pass& pass, const detail::MetadumpEntry& entry) -> bool {
    WarmerServerProgress& p = pass.progress;
    const std::string_view key =
        std::string_view(entry.key).substr(client_.options().key_prefix.size());
    switch (client_.migrate_key(key)) {
      case KeyMigration::kCopied:
        ++p.copied;
        p.bytes += entry.size;
        break;
      case KeyMigration::kAlreadyPresent:
        ++p.already_present;
        break;
      case KeyMigration::kNotOnOldOwner:
        ++p.vanished;
        break;
      case KeyMigration::kRevoked:
        ++p.revoked;
        break;
      case KeyMigration::kTooShort:
        --p.eligible;
        ++p.expired;
        break;
      case KeyMigration::kNoMigration:
        migration_ended();
        return false;
      case KeyMigration::kSameOwner:  // failed over onto its old owner
      case KeyMigration::kInvalidKey:
      case KeyMigration::kOldOwnerUnavailable:
      case KeyMigration::kNewOwnerFailed:
        ++p.failed;
        break;
    }
    return true;
  }

  // The migration was committed or aborted: nothing is left to copy.
  void migration_ended() {
    for (std::size_t i = current_; i < passes_.size(); ++i) {
      Pass& pass = passes_[i];
      // A pass not listed yet holds nothing; one being listed, what it kept.
      pass.listing.reset();
      pass.progress.failed += pass.queue.size() - pass.next;
      pass.next = pass.queue.size();
      pass.chunk_end = pass.next;
      pass.listed = true;
      pass.progress.scan_done = true;
      if (pass.progress.error.empty()) {
        pass.progress.error = pass.progress.server + ": the migration ended before the warmer";
      }
    }
  }

  // Reads the new owners' evictions when a poll is due: slows down when any
  // rose since the last poll, restores the budget when none did.
  void poll_evictions() {
    const std::int64_t at = now();
    if (polled_ && at < next_poll_) {
      return;
    }
    const bool first = !polled_;
    polled_ = true;
    next_poll_ = saturating_add(
        at, std::chrono::duration_cast<std::chrono::nanoseconds>(options_.eviction_poll_interval)
                .count());
    bool rose = false;
    for (Owner& owner : owners_) {
      if (at < owner.retry_at) {
        continue;
      }
      // A new owner that does not answer is left alone for a while, so that
      // it does not cost a timeout at every poll.
      owner.retry_at = saturating_add(at, kUnansweredPollPause);
      const detail::MetaDeadline until = io_deadline();
      if (!owner.link.is_open() && owner.link.host().empty()) {
        std::string host = owner.server.host;
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
          host = host.substr(1, host.size() - 2);
        }
        if (!owner.link.connect(host, owner.server.port, until)) {
          continue;  // polled again next time (it reconnects)
        }
      }
      const detail::MetaStatsOutcome stats = owner.link.stats(until);
      if (!stats.ok()) {
        continue;
      }
      const std::optional<std::uint64_t> evictions = number<std::uint64_t>(stats.find("evictions"));
      if (!evictions) {
        continue;
      }
      if (owner.evictions && *evictions > *owner.evictions) {
        rose = true;
      }
      owner.evictions = evictions;
      owner.retry_at = 0;
    }
    if (first) {
      return;
    }
    if (rose) {
      if (options_.backoff_factor > 1) {
        limiter_.slow_down(options_.backoff_factor);
        ++backoffs_;
      }
    } else if (limiter_.slowdown() > 1) {
      limiter_.restore();
    }
  }

  // Calls on_progress when it is due (or `final`, once).
  void report(bool final) {
    if (!options_.on_progress || reported_final_) {
      return;
    }
    const std::int64_t at = now();
    if (!final && reported_ && at < next_report_) {
      return;
    }
    reported_ = true;
    reported_final_ = final;
    next_report_ = saturating_add(
        at,
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.progress_interval).count());
    options_.on_progress(progress());
  }

  WarmerOptions options_;
  ShardedClient<L> client_;
  std::shared_ptr<const FleetSnapshot<L>> snapshot_;
  detail::RateLimiter limiter_;
  std::vector<Pass> passes_;
  std::vector<Owner> owners_;
  std::size_t current_ = 0;  // the pass being worked on
  bool polled_ = false;
  std::int64_t next_poll_ = 0;
  std::uint64_t backoffs_ = 0;
  bool reported_ = false;
  bool reported_final_ = false;
  std::int64_t next_report_ = 0;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_MIGRATION_WARMER_HPP_
