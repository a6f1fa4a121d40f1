// SPDX-License-Identifier: MIT
// resize_time_bench.cpp: the hit rate and the database load through a resize,
// window by window, on real memcached servers under a cache-aside workload.
//
// Workload: a SQLite database (a temporary file) of K rows, read through the
// cache: get the row's key; on a miss read the row (each read also runs a
// recursive CTE of kDbSpin steps, so a database read costs several cache
// hits) and `add` it. 1 request in 50 is a write: update the row, then delete
// the key (cache-aside invalidation). Keys are drawn Zipf(0.9) by rank (row 0
// the hottest). Three threads (MEMSHARD_RESIZE_TIME_THREADS), each with a
// clone of one client and its own database connection, send requests as fast
// as they can. Before the runs, one thread alone times a cache hit and a
// database read (context memshard_resize_time_hit_us and ..._db_read_us).
//
// Servers: kServers local memcached processes with a small memory limit
// (-m, values of kValueSize bytes), so that the cache holds about half of the
// keys and evictions matter (about 1,500 items per server for 12,500 keys: the
// proportions of the migration model, a simulation of 100,000 keys and 12,000
// items per server whose 10 s windows are about as many requests as keys). Every run restarts them
// empty on the same ports: every run sees the same ring. They are the
// benchmark's own (checked empty when started, stopped at the end), so
// nothing is deleted; still, every key starts with the run's prefix
// (MEMSHARD_BENCH_PREFIX, run_keys.hpp): "<prefix>rt:<row>" and
// "<prefix>ttl:<i>".
//
// Timeline of one run, in windows of W requests (not seconds): kFillWindows
// windows fill the cache to a steady state, kBeforeWindows windows before the
// resize, then the arm's switch to the new configuration, then kAfterWindows
// windows. Counters per window w (three digits): w<w>_hit_rate (hits / reads),
// w<w>_db_reads, w<w>_requests (reads and writes), w<w>_seconds; and
// fill_windows, resize_window (the first window after the switch), windows,
// window_requests, before_hit_rate and before_db_reads (means over the windows
// before), moved (the share of keys whose server changes, by host:port),
// moved_requests (the same weighted by popularity), hit_us and db_read_us
// (mean time of a cache hit and of a database read), errors (cache calls that
// failed), servers_before, servers_after. The label is "<arm's label>:
// <profile before> -> <profile after>".
//
// Scenarios: 4 -> 5 servers, 5 -> 4 (the last leaves), modulo(4) ->
// ketama(4), and a libmemcached ring -> a spymemcached ring on the same 4.
// Arms (kArms): how the client family moves to the new configuration; each
// is one function over a Run (windows before, the switch, windows after).
//
// MEMSHARD_RESIZE_TIME_SCALE=S (default 1) multiplies the keys, the servers'
// memory and the window by S, for longer and finer runs.

#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "memshard/memshard.hpp"
#include "memshard/wire/meta_connection.hpp"
#include "run_keys.hpp"
#include "support/memcached_server.hpp"

namespace {

using memshard::AnyLocator;
using memshard::Server;
using memshard::bench::env_count;
using memshard::bench::SplitMix64;
using Client = memshard::ShardedClient<AnyLocator>;

constexpr std::size_t kBaseKeys = 12'500;
constexpr std::size_t kBaseMemoryMb = 2;
constexpr std::size_t kBaseWindow = 12'500;  // requests per window
constexpr std::size_t kFillWindows = 3;
constexpr std::size_t kBeforeWindows = 2;
constexpr std::size_t kAfterWindows = 14;
constexpr std::size_t kDefaultThreads = 3;
constexpr std::size_t kServers = 5;
// 1,250-byte values with keys "<prefix>rt:<row>" fill memcached's 1,368-byte
// chunks (-f 1.1): 1,532 items in 2 MB. Keys up to 40 bytes fit (a prefix of
// at most kMaxPrefixLength = 32 bytes, rows up to 99,999: scale 8); the
// generated prefix is 19 bytes.
constexpr std::size_t kValueSize = 1'250;
constexpr const char* kGrowthFactor = "1.1";
constexpr double kZipfExponent = 0.9;
constexpr std::uint64_t kWriteOneIn = 50;  // 2% writes
constexpr int kDbSpin = 150;               // recursive CTE steps per database read
constexpr std::size_t kCalibrationCalls = 2'000;

constexpr std::string_view kModulo = "modulo-crc32";
constexpr std::string_view kKetama = "libmemcached-ketama-weighted";
// libmemcached's default consistent ring (one_at_a_time, 100 points per
// server); its KETAMA_WEIGHTED ring places keys exactly as spymemcached's
// ketama does when the weights are equal, so switching between those two
// moves nothing.
constexpr std::string_view kLibmemcachedRing = "libmemcached-ketama";
constexpr std::string_view kSpymemcached = "spymemcached-ketama";

[[nodiscard]] auto now_ns() noexcept -> std::int64_t {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Settings: the run's size, from MEMSHARD_RESIZE_TIME_SCALE.
struct Settings {
  std::size_t scale = env_count("MEMSHARD_RESIZE_TIME_SCALE", 1, 1);
  std::size_t keys = kBaseKeys * scale;
  std::size_t memory_mb = kBaseMemoryMb * scale;
  std::size_t window = kBaseWindow * scale;
  std::size_t threads = env_count("MEMSHARD_RESIZE_TIME_THREADS", kDefaultThreads, 1);
};

/// Zipf: ranks 0 .. n-1 with P(r) proportional to 1 / (r + 1)^s.
class Zipf {
 public:
  Zipf(std::size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (std::size_t r = 0; r < n; ++r) {
      sum += 1.0 / std::pow(static_cast<double>(r + 1), s);
      cdf_[r] = sum;
    }
    for (double& c : cdf_) {
      c /= sum;
    }
  }

  [[nodiscard]] auto sample(SplitMix64& random) const noexcept -> std::size_t {
    const double u = static_cast<double>(random.next() >> 11U) * 0x1.0p-53;
    const auto found = std::lower_bound(cdf_.begin(), cdf_.end(), u);
    return std::min(static_cast<std::size_t>(found - cdf_.begin()), cdf_.size() - 1);
  }

  /// probability: P(r).
  [[nodiscard]] auto probability(std::size_t r) const noexcept -> double {
    return r == 0 ? cdf_[0] : cdf_[r] - cdf_[r - 1];
  }

 private:
  std::vector<double> cdf_;
};

[[noreturn]] void sqlite_failure(sqlite3* db, std::string_view what) {
  throw std::runtime_error("memshard bench: sqlite: " + std::string(what) + ": " +
                           (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

struct SqliteClose {
  void operator()(sqlite3* db) const noexcept { sqlite3_close(db); }
};
struct SqliteFinalize {
  void operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
};
using SqlitePtr = std::unique_ptr<sqlite3, SqliteClose>;
using StatementPtr = std::unique_ptr<sqlite3_stmt, SqliteFinalize>;

[[nodiscard]] auto open_database(const std::string& path) -> SqlitePtr {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  SqlitePtr db(raw);
  if (rc != SQLITE_OK) {
    sqlite_failure(db.get(), "open " + path);
  }
  sqlite3_busy_timeout(db.get(), 10'000);
  return db;
}

void execute(sqlite3* db, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite_failure(db, sql);
  }
}

[[nodiscard]] auto prepare(sqlite3* db, const char* sql) -> StatementPtr {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) {
    sqlite_failure(db, sql);
  }
  return StatementPtr(raw);
}

/// Database: a temporary SQLite file of `rows` rows (id, version, body),
/// removed with this object.
class Database {
 public:
  explicit Database(std::size_t rows) {
    path_ = std::filesystem::temp_directory_path() / "memshard-resize-time-XXXXXX";
    const int fd = ::mkstemp(path_.data());
    if (fd < 0) {
      throw std::runtime_error("memshard bench: cannot create a temporary file in " +
                               std::filesystem::temp_directory_path().string());
    }
    ::close(fd);
    const SqlitePtr db = open_database(path_);
    execute(db.get(), "PRAGMA journal_mode=WAL");
    execute(db.get(),
            "CREATE TABLE items (id INTEGER PRIMARY KEY, version INTEGER NOT NULL, body TEXT NOT "
            "NULL)");
    const StatementPtr fill = prepare(db.get(),
                                      "WITH RECURSIVE r(id) AS (SELECT 0 UNION ALL SELECT id + 1 "
                                      "FROM r WHERE id + 1 < ?1) INSERT INTO items SELECT id, 0, "
                                      "printf('%-1200s', 'item ' || id) FROM r");
    sqlite3_bind_int64(fill.get(), 1, static_cast<sqlite3_int64>(rows));
    if (sqlite3_step(fill.get()) != SQLITE_DONE) {
      sqlite_failure(db.get(), "filling the table");
    }
  }
  Database(const Database&) = delete;
  auto operator=(const Database&) -> Database& = delete;
  Database(Database&&) = delete;
  auto operator=(Database&&) -> Database& = delete;
  ~Database() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(path_ + suffix, ignored);
    }
  }

  [[nodiscard]] auto path() const noexcept -> const std::string& { return path_; }

 private:
  std::string path_;
};

/// DatabaseConnection: one thread's connection: read a row (with the fixed
/// added cost) as the value to cache, or write one (a new version).
class DatabaseConnection {
 public:
  explicit DatabaseConnection(const Database& database)
      : db_(open_database(database.path())),
        read_(prepare(db_.get(),
                      "SELECT version, body, (WITH RECURSIVE spin(n) AS (SELECT 1 UNION ALL "
                      "SELECT n + 1 FROM spin WHERE n < ?2) SELECT count(*) FROM spin) FROM items "
                      "WHERE id = ?1")),
        write_(prepare(db_.get(), "UPDATE items SET version = version + 1 WHERE id = ?1")) {
    execute(db_.get(), "PRAGMA synchronous=OFF");
  }

  /// read: the value of row `id`: "<version>:<body>", kValueSize bytes.
  void read(std::size_t id, std::string& value) {
    sqlite3_stmt* statement = read_.get();
    sqlite3_reset(statement);
    sqlite3_bind_int64(statement, 1, static_cast<sqlite3_int64>(id));
    sqlite3_bind_int(statement, 2, kDbSpin);
    if (sqlite3_step(statement) != SQLITE_ROW || sqlite3_column_int(statement, 2) != kDbSpin) {
      sqlite_failure(db_.get(), "reading row " + std::to_string(id));
    }
    value.assign(std::to_string(sqlite3_column_int64(statement, 0))).push_back(':');
    value.append(reinterpret_cast<const char*>(sqlite3_column_text(statement, 1)),
                 static_cast<std::size_t>(sqlite3_column_bytes(statement, 1)));
    value.resize(kValueSize, '.');
    sqlite3_reset(statement);  // ends the read transaction: a later write would find it stale
  }

  /// write: a new version of row `id`.
  void write(std::size_t id) {
    sqlite3_stmt* statement = write_.get();
    sqlite3_reset(statement);
    sqlite3_bind_int64(statement, 1, static_cast<sqlite3_int64>(id));
    if (sqlite3_step(statement) != SQLITE_DONE) {
      sqlite_failure(db_.get(), "writing row " + std::to_string(id));
    }
  }

 private:
  SqlitePtr db_;
  StatementPtr read_;
  StatementPtr write_;
};

/// LocalFleet: kServers local memcached processes with the memory limit.
class LocalFleet {
 public:
  explicit LocalFleet(std::size_t memory_mb) {
    for (std::size_t i = 0; i < kServers; ++i) {
      processes_.push_back(memshard::testing::MemcachedServer::with_args(
          {"-m", std::to_string(memory_mb), "-f", kGrowthFactor}));
      servers_.push_back(memshard::parse_server(processes_.back().spec()));
    }
    memshard::bench::require_empty(servers_);
  }

  /// restart: every server again, empty, on its port.
  void restart() {
    for (memshard::testing::MemcachedServer& process : processes_) {
      process.restart();
    }
  }

  [[nodiscard]] auto servers(std::size_t count) const -> std::vector<Server> {
    return {servers_.begin(), servers_.begin() + static_cast<std::ptrdiff_t>(count)};
  }

  [[nodiscard]] auto endpoints() const -> std::string {
    std::string specs;
    for (const Server& server : servers_) {
      specs.append(specs.empty() ? "" : ",").append(server.endpoint());
    }
    return specs;
  }

  [[nodiscard]] auto version() const -> std::string {
    std::string text = processes_.front().command("version\r\n");
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
      text.pop_back();
    }
    return text;
  }

 private:
  std::vector<memshard::testing::MemcachedServer> processes_;
  std::vector<Server> servers_;
};

/// Placement: a server list and the locator of a profile for it.
struct Placement {
  std::string profile;
  std::vector<Server> servers;
  std::shared_ptr<const AnyLocator> locator;

  Placement(std::string_view name, std::vector<Server> list)
      : profile(name),
        servers(std::move(list)),
        locator(std::make_shared<const AnyLocator>(memshard::make_locator(name, servers))) {}

  [[nodiscard]] auto endpoint_for(std::string_view key) const -> std::string {
    return servers[locator->locate(key)].endpoint();
  }
};

/// Window: what one window of requests did.
struct Window {
  std::size_t requests = 0;
  std::size_t reads = 0;
  std::size_t hits = 0;
  std::size_t db_reads = 0;

  void add(const Window& other) noexcept {
    requests += other.requests;
    reads += other.reads;
    hits += other.hits;
    db_reads += other.db_reads;
  }
};

/// Workload: what every thread of a run shares: the keys, their popularity,
/// the database.
struct Workload {
  const Settings& settings;
  const Zipf& zipf;
  const std::vector<std::string>& keys;
  const Database& database;
};

/// Worker: one thread's client (a clone), database connection and counts.
class Worker {
 public:
  Worker(const Workload& workload, Client client, std::uint64_t seed, std::size_t windows)
      : workload_(workload),
        client_(std::move(client)),
        db_(workload.database),
        random_(seed),
        windows_(windows) {}

  /// serve: takes request numbers from `next` until `end`, each counted in
  /// its window (number / W); the first request of a window stamps its start.
  void serve(std::atomic<std::size_t>& next, std::size_t end, std::vector<std::int64_t>& starts) {
    const std::size_t window = workload_.settings.window;
    for (std::size_t i = next.fetch_add(1, std::memory_order_relaxed); i < end;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      if (i % window == 0) {
        starts[i / window] = now_ns();
      }
      Window& counts = windows_[i / window];
      ++counts.requests;
      const std::size_t row = workload_.zipf.sample(random_);
      const std::string& key = workload_.keys[row];
      if (random_.below(kWriteOneIn) == 0) {
        db_.write(row);
        if (const memshard::Status status = client_.remove(key);
            !status && status.code() != memshard::Errc::kNotFound) {
          ++errors_;
        }
        continue;
      }
      ++counts.reads;
      const std::int64_t asked = now_ns();
      const memshard::Result<std::optional<memshard::Item>> got = client_.get(key);
      if (got.ok() && got.value().has_value()) {
        ++counts.hits;
        hit_ns_ += now_ns() - asked;
        continue;
      }
      if (!got.ok()) {
        ++errors_;
      }
      ++counts.db_reads;
      const std::int64_t read = now_ns();
      db_.read(row, value_);
      db_ns_ += now_ns() - read;
      if (const memshard::Status status = client_.add(key, value_);
          !status && status.code() != memshard::Errc::kNotStored) {
        ++errors_;
      }
    }
  }

  [[nodiscard]] auto windows() const noexcept -> const std::vector<Window>& { return windows_; }
  [[nodiscard]] auto errors() const noexcept -> std::size_t { return errors_; }
  [[nodiscard]] auto hit_ns() const noexcept -> std::int64_t { return hit_ns_; }
  [[nodiscard]] auto db_ns() const noexcept -> std::int64_t { return db_ns_; }

 private:
  const Workload& workload_;
  Client client_;
  DatabaseConnection db_;
  SplitMix64 random_;
  std::vector<Window> windows_;
  std::string value_;
  std::size_t errors_ = 0;
  std::int64_t hit_ns_ = 0;
  std::int64_t db_ns_ = 0;
};

/// Run: one scenario under one arm. The client family starts on `from` and
/// the constructor fills the cache (kFillWindows windows); then the arm calls
/// before(), moves the family to to(), and calls after().
class Run {
 public:
  Run(const Workload& workload, Placement from, Placement to)
      : workload_(workload),
        from_(std::move(from)),
        to_(std::move(to)),
        client_(memshard::make_client(from_.profile, from_.servers)),
        starts_(kFillWindows + kBeforeWindows + kAfterWindows) {
    workers_.reserve(workload_.settings.threads);
    for (std::size_t t = 0; t < workload_.settings.threads; ++t) {
      workers_.emplace_back(workload_, client_.clone(), memshard::bench::KeySet::kDefaultSeed + t,
                            starts_.size());
    }
    windows(kFillWindows);
  }

  /// client: the family's first client (the threads use its clones).
  [[nodiscard]] auto client() noexcept -> Client& { return client_; }
  /// to: the configuration to move to.
  [[nodiscard]] auto to() const noexcept -> const Placement& { return to_; }
  /// from: the configuration the run starts with.
  [[nodiscard]] auto from() const noexcept -> const Placement& { return from_; }
  /// note: one more counter for the report (an arm's own figures).
  void note(const std::string& name, double value) { notes_[name] = value; }

  /// before: the windows before the resize.
  void before() { windows(kBeforeWindows); }
  /// after: the windows after it; the switch happens between the two calls.
  void after() {
    if (done_ != kFillWindows + kBeforeWindows) {
      throw std::logic_error("memshard bench: an arm must call before() once, then after()");
    }
    windows(kAfterWindows);
  }

  /// report: the counters (see the file comment).
  void report(benchmark::State& state) const {
    if (done_ != starts_.size()) {
      throw std::logic_error("memshard bench: the arm did not run every window");
    }
    std::vector<Window> merged(starts_.size());
    std::size_t errors = 0;
    std::int64_t hit_ns = 0;
    std::int64_t db_ns = 0;
    for (const Worker& worker : workers_) {
      for (std::size_t w = 0; w < merged.size(); ++w) {
        merged[w].add(worker.windows()[w]);
      }
      errors += worker.errors();
      hit_ns += worker.hit_ns();
      db_ns += worker.db_ns();
    }
    std::size_t hits = 0;
    std::size_t db_reads = 0;
    double before_hit_rate = 0;
    double before_db_reads = 0;
    for (std::size_t w = 0; w < merged.size(); ++w) {
      const Window& window = merged[w];
      std::string number = std::to_string(w);
      number.insert(0, number.size() < 3 ? 3 - number.size() : 0, '0');
      const std::string prefix = "w" + number + "_";
      const double hit_rate =
          window.reads == 0 ? 0
                            : static_cast<double>(window.hits) / static_cast<double>(window.reads);
      state.counters[prefix + "hit_rate"] = hit_rate;
      state.counters[prefix + "db_reads"] = static_cast<double>(window.db_reads);
      state.counters[prefix + "requests"] = static_cast<double>(window.requests);
      state.counters[prefix + "seconds"] = static_cast<double>(ends_[w] - starts_[w]) * 1e-9;
      hits += window.hits;
      db_reads += window.db_reads;
      if (w >= kFillWindows && w < kFillWindows + kBeforeWindows) {
        before_hit_rate += hit_rate / static_cast<double>(kBeforeWindows);
        before_db_reads +=
            static_cast<double>(window.db_reads) / static_cast<double>(kBeforeWindows);
      }
    }
    state.counters["fill_windows"] = static_cast<double>(kFillWindows);
    state.counters["resize_window"] = static_cast<double>(kFillWindows + kBeforeWindows);
    state.counters["windows"] = static_cast<double>(merged.size());
    state.counters["window_requests"] = static_cast<double>(workload_.settings.window);
    state.counters["before_hit_rate"] = before_hit_rate;
    state.counters["before_db_reads"] = before_db_reads;
    state.counters["errors"] = static_cast<double>(errors);
    state.counters["hit_us"] =
        static_cast<double>(hit_ns) * 1e-3 / static_cast<double>(std::max<std::size_t>(hits, 1));
    state.counters["db_read_us"] =
        static_cast<double>(db_ns) * 1e-3 / static_cast<double>(std::max<std::size_t>(db_reads, 1));
    state.counters["servers_before"] = static_cast<double>(from_.servers.size());
    state.counters["servers_after"] = static_cast<double>(to_.servers.size());
    std::size_t moved = 0;
    double moved_requests = 0;
    for (std::size_t row = 0; row < workload_.keys.size(); ++row) {
      const std::string& key = workload_.keys[row];
      if (from_.endpoint_for(key) != to_.endpoint_for(key)) {
        ++moved;
        moved_requests += workload_.zipf.probability(row);
      }
    }
    state.counters["moved"] =
        static_cast<double>(moved) / static_cast<double>(workload_.keys.size());
    state.counters["moved_requests"] = moved_requests;
    for (const auto& [name, value] : notes_) {
      state.counters[name] = value;
    }
  }

 private:
  // windows: `count` more windows, every thread sending requests until the
  // last request of the last one is taken.
  void windows(std::size_t count) {
    const std::size_t window = workload_.settings.window;
    const std::size_t first = done_;
    next_.store(first * window, std::memory_order_relaxed);
    const std::size_t end = (first + count) * window;
    std::vector<std::exception_ptr> failures(workers_.size());
    {
      std::vector<std::jthread> threads;
      for (std::size_t t = 0; t < workers_.size(); ++t) {
        threads.emplace_back([this, t, end, &failures] {
          try {
            workers_[t].serve(next_, end, starts_);
          } catch (...) {
            failures[t] = std::current_exception();
            next_.store(end, std::memory_order_relaxed);  // the others stop too
          }
        });
      }
    }
    for (const std::exception_ptr& failure : failures) {
      if (failure) {
        std::rethrow_exception(failure);
      }
    }
    const std::int64_t finished = now_ns();
    ends_.resize(first + count);
    for (std::size_t w = first; w < first + count; ++w) {
      ends_[w] = w + 1 < first + count ? starts_[w + 1] : finished;
    }
    done_ = first + count;
  }

  const Workload& workload_;
  Placement from_;
  Placement to_;
  Client client_;
  std::vector<Worker> workers_;
  std::atomic<std::size_t> next_{0};
  std::vector<std::int64_t> starts_;
  std::vector<std::int64_t> ends_;
  std::size_t done_ = 0;
  std::map<std::string, double> notes_;
};

// ---- arms -------------------------------------------------------------------

// (a): reconfigure(servers): the client's factory builds the same profile
// for the new list.
void rebuild_switch(Run& run) {
  run.before();
  run.client().reconfigure(run.to().servers);
  run.after();
}

// (b): reconfigure(servers, locator): the new list with the new placement.
void direct_switch(Run& run) {
  run.before();
  run.client().reconfigure(run.to().servers, run.to().locator);
  run.after();
}

// The remaining TTL of `key` on `server` (meta mg t), -2 when absent.
auto remaining_ttl(const Server& server, std::string_view key) -> std::int64_t {
  memshard::detail::MetaConnection link;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{2};
  if (!link.connect(server.host, server.port, deadline).ok()) {
    return -2;
  }
  const auto got = link.get(key, {.ttl = true}, deadline);
  return got.ok() && got.reply.ttl ? *got.reply.ttl : -2;
}

// TTL probes: kTtlProbes keys that move, stored before the resize with
// 600 s to live; once the migration begins, each one's TTL on its old owner
// is read, then the key through the client (which copies it), then the
// copy's TTL on the new owner: the largest difference is reported
// (ttl_error_max_s; the target is 1 s).
constexpr std::size_t kTtlProbes = 50;

auto ttl_probe_keys(const Run& run) -> std::vector<std::string> {
  std::vector<std::string> keys;
  for (std::size_t i = 0; keys.size() < kTtlProbes; ++i) {
    std::string key = memshard::bench::run_prefix() + "ttl:" + std::to_string(i);
    if (run.from().endpoint_for(key) != run.to().endpoint_for(key)) {
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

// The probes' values are as large as the rows' (kValueSize), so that they
// share the rows' slab class: a small value would open a slab class of its
// own, and its first page, taken on an empty new server by the first copy,
// would be memory the rows never get back (a 2 MB server then holds half as
// many rows, for as long as it runs).
void store_ttl_probes(Run& run, const std::vector<std::string>& keys) {
  const std::string value(kValueSize, 'p');
  for (const std::string& key : keys) {
    (void)run.client().set(key, value, memshard::Expiry::after(std::chrono::seconds{600}));
  }
}

void probe_ttls(Run& run, const std::vector<std::string>& keys) {
  double worst = 0;
  std::size_t probed = 0;
  for (const std::string& key : keys) {
    const auto old_index = run.from().locator->locate(key);
    const std::int64_t before = remaining_ttl(run.from().servers[old_index], key);
    const auto hit = run.client().get(key);
    if (before < 0 || !hit.ok() || !hit.value()) {
      continue;  // evicted meanwhile
    }
    const std::int64_t copy = remaining_ttl(run.client().server_for(key), key);
    if (copy < 0) {
      continue;
    }
    worst = std::max(worst, std::abs(static_cast<double>(copy - before)));
    ++probed;
  }
  run.note("ttl_probes", static_cast<double>(probed));
  run.note("ttl_error_max_s", worst);
}

// The migration's counters, for the report.
void note_migration(Run& run) {
  const memshard::MigrationStats stats = run.client().migration_stats();
  run.note("migration_fallback_hits", static_cast<double>(stats.fallback_hits));
  run.note("migration_fallback_misses", static_cast<double>(stats.fallback_misses));
  run.note("migration_copies_stored", static_cast<double>(stats.copies_stored));
  run.note("migration_copies_present", static_cast<double>(stats.copies_present));
  run.note("migration_copies_revoked", static_cast<double>(stats.copies_revoked));
  run.note("migration_invalidations", static_cast<double>(stats.invalidations));
  run.note("migration_old_copies_moved", static_cast<double>(stats.old_copies_moved));
}

// (c): begin_migration(servers, locator): the new placement, reading moved
// keys through from their old owners until the last window; then commit.
void read_through(Run& run) {
  const std::vector<std::string> probes = ttl_probe_keys(run);
  run.before();
  store_ttl_probes(run, probes);
  run.client().begin_migration(run.to().servers, run.to().locator);
  probe_ttls(run, probes);
  run.after();
  note_migration(run);
  (void)run.client().commit_migration();
}

// (d): (c) plus a Warmer on a thread of its own, copying the moved keys
// hottest first while the windows run (at most 20,000 copies a second);
// stopped after the last window if it is not done by then.
void read_through_warmer(Run& run) {
  const std::vector<std::string> probes = ttl_probe_keys(run);
  run.before();
  store_ttl_probes(run, probes);
  run.client().begin_migration(run.to().servers, run.to().locator);
  probe_ttls(run, probes);
  memshard::WarmerOptions options;
  options.ops_per_second = 20'000;
  options.bytes_per_second = 0;
  options.only_fetched = true;
  memshard::Warmer<AnyLocator> warmer(run.client(), options);
  std::atomic<bool> stop{false};
  std::thread warming([&warmer, &stop] {
    while (!stop.load(std::memory_order_relaxed) && warmer.run_for(std::chrono::milliseconds{20})) {
    }
  });
  run.after();
  stop = true;
  warming.join();
  const memshard::WarmerServerProgress total = warmer.progress().totals();
  run.note("warmer_copied", static_cast<double>(total.copied));
  run.note("warmer_eligible", static_cast<double>(total.eligible));
  run.note("warmer_done", warmer.done() ? 1 : 0);
  note_migration(run);
  (void)run.client().commit_migration();
}

/// Arm: one way of moving to the new configuration.
struct Arm {
  std::string_view name;       ///< in the benchmark's name; the report judges the read-through
                               ///< targets for "read-through" and "read-through-warmer"
  std::string_view label;      ///< in the report
  std::string_view placement;  ///< the profile on both sides, "" for the scenario's own (an
                               ///< arm with its own runs only where the profile stays)
  void (*run)(Run& run);       ///< before(), the switch, after()
};

/// kArms: the arms, each run in every scenario (one with a placement of its
/// own only in the scenarios that keep their profile).
constexpr std::array<Arm, 4> kArms = {
    Arm{"modulo-direct", "(a) modulo direct switch", kModulo, &rebuild_switch},
    Arm{"direct", "(b) direct switch", "", &direct_switch},
    Arm{"read-through", "(c) read-through", "", &read_through},
    Arm{"read-through-warmer", "(d) read-through + warmer", "", &read_through_warmer},
};

/// Scenario: the servers (the first `before`, then the first `after`, of
/// the fleet) and the profiles before and after.
struct Scenario {
  std::string_view name;
  std::size_t before;
  std::size_t after;
  std::string_view from;
  std::string_view to;
};

/// kScenarios: 4 -> 5 servers, 5 -> 4 (the last leaves), and two changes of
/// placement on the same 4 servers.
constexpr std::array<Scenario, 4> kScenarios = {
    Scenario{"4-to-5", 4, 5, kKetama, kKetama},
    Scenario{"5-to-4", 5, 4, kKetama, kKetama},
    Scenario{"modulo-to-ketama", 4, 4, kModulo, kKetama},
    Scenario{"libmemcached-to-spymemcached", 4, 4, kLibmemcachedRing, kSpymemcached},
};

/// Experiment: the fleet, the database and the keys every run shares.
class Experiment {
 public:
  Experiment()
      : zipf_(settings_.keys, kZipfExponent),
        database_(settings_.keys),
        fleet_(settings_.memory_mb),
        workload_{settings_, zipf_, keys_, database_} {
    keys_.reserve(settings_.keys);
    for (std::size_t row = 0; row < settings_.keys; ++row) {
      keys_.push_back(memshard::bench::run_prefix() + "rt:" + std::to_string(row));
    }
  }

  /// calibrate: the mean time of a cache hit and of a database read, one
  /// thread alone (before any run), in µs.
  void calibrate() {
    Client client = memshard::make_client(kKetama, fleet_.servers(kServers));
    DatabaseConnection db(database_);
    std::string value;
    db.read(0, value);
    if (const memshard::Status status = client.set(keys_[0], value); !status) {
      throw std::runtime_error("memshard bench: set: " + status.message());
    }
    const std::int64_t started = now_ns();
    for (std::size_t i = 0; i < kCalibrationCalls; ++i) {
      const memshard::Result<std::optional<memshard::Item>> got = client.get(keys_[0]);
      if (!got.ok() || !got.value().has_value()) {
        throw std::runtime_error("memshard bench: calibration get missed or failed");
      }
    }
    const std::int64_t between = now_ns();
    for (std::size_t i = 0; i < kCalibrationCalls; ++i) {
      db.read(i % keys_.size(), value);
    }
    const std::int64_t finished = now_ns();
    const auto calls = static_cast<double>(kCalibrationCalls);
    hit_us_ = static_cast<double>(between - started) * 1e-3 / calls;
    db_read_us_ = static_cast<double>(finished - between) * 1e-3 / calls;
  }

  void add_context() const {
    benchmark::AddCustomContext("memshard_resize_time_scale", std::to_string(settings_.scale));
    benchmark::AddCustomContext("memshard_resize_time_keys", std::to_string(settings_.keys));
    benchmark::AddCustomContext("memshard_resize_time_window", std::to_string(settings_.window));
    benchmark::AddCustomContext("memshard_resize_time_threads", std::to_string(settings_.threads));
    benchmark::AddCustomContext("memshard_resize_time_memory_mb",
                                std::to_string(settings_.memory_mb));
    benchmark::AddCustomContext("memshard_resize_time_value_bytes", std::to_string(kValueSize));
    benchmark::AddCustomContext("memshard_resize_time_db_spin", std::to_string(kDbSpin));
    benchmark::AddCustomContext("memshard_resize_time_hit_us", std::to_string(hit_us_));
    benchmark::AddCustomContext("memshard_resize_time_db_read_us", std::to_string(db_read_us_));
    benchmark::AddCustomContext("memshard_resize_time_servers", fleet_.endpoints());
    benchmark::AddCustomContext("memshard_resize_time_memcached_version", fleet_.version());
  }

  void run(benchmark::State& state, const Scenario& scenario, const Arm& arm) {
    try {
      const std::string_view from = arm.placement.empty() ? scenario.from : arm.placement;
      const std::string_view to = arm.placement.empty() ? scenario.to : arm.placement;
      fleet_.restart();
      std::unique_ptr<Run> run;
      for (auto _ : state) {
        run = std::make_unique<Run>(workload_, Placement(from, fleet_.servers(scenario.before)),
                                    Placement(to, fleet_.servers(scenario.after)));
        arm.run(*run);
      }
      run->report(state);
      state.SetLabel(std::string(arm.label) + ": " + std::string(from) + " -> " + std::string(to));
    } catch (const std::exception& error) {
      state.SkipWithError(error.what());
    }
  }

 private:
  Settings settings_;
  Zipf zipf_;
  std::vector<std::string> keys_;
  Database database_;
  LocalFleet fleet_;
  Workload workload_;
  double hit_us_ = 0;
  double db_read_us_ = 0;
};

void register_all(Experiment& experiment) {
  for (const Scenario& scenario : kScenarios) {
    for (const Arm& arm : kArms) {
      if (!arm.placement.empty() && scenario.from != scenario.to) {
        continue;
      }
      const std::string name =
          "BM_ResizeTime/" + std::string(scenario.name) + "/" + std::string(arm.name);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [&experiment, &scenario, &arm](benchmark::State& state) {
                                     experiment.run(state, scenario, arm);
                                   })
          ->Iterations(1)
          ->Unit(benchmark::kSecond);
    }
  }
}

}  // namespace

auto main(int argc, char** argv) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  try {
    Experiment experiment;
    experiment.calibrate();
    experiment.add_context();
    register_all(experiment);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << "memshard resize-through-time benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
