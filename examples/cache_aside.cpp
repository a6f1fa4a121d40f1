// SPDX-License-Identifier: MIT
// cache_aside.cpp: the cache-aside pattern: a product database (SQLite) read through a memcached
// fleet sharded by memshard.
//
//   memshard-cache-aside [--queries N] [host:port ...]   # default: 2000, 127.0.0.1:11211
//
// The database is a temporary SQLite file holding 1,000 products, the same rows on every run.
// The workload repeats popular queries (Zipf-distributed product ids, plus per-category top
// fives), as real traffic does. For each query:
//
//   1. the key is "sql:" + the hex MD5 of the SQL text (the text itself may be longer than
//      memcached's 250 bytes and contains spaces, which keys may not);
//   2. get_or_load the key: a hit is the answer; on a miss it runs the query and `add`s the
//      serialized rows with an expiry (`add`, not `set`: if another client filled the key
//      meanwhile, its copy stays).
//
// A failing cache server never fails a query: the database answers, and the failure is counted
// and printed (the first few in full on stderr). Every answer served from the cache is checked
// against the database. Exits 0 when every answer was right, 1 when a cached answer differed
// from the database, 2 for bad arguments or a database error.

#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <memshard/memshard.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

constexpr int kProducts = 1000;
constexpr std::size_t kDefaultQueries = 2000;
constexpr std::size_t kErrorsShown = 5;
constexpr std::array<std::string_view, 8> kCategories = {"books", "garden", "games",  "kitchen",
                                                         "music", "office", "sports", "tools"};

/// UsageError: bad command-line arguments.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// DatabaseError: SQLite refused a statement.
class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SqliteClose {
  void operator()(sqlite3* db) const noexcept { sqlite3_close(db); }
};
struct SqliteFinalize {
  void operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
};
using Statement = std::unique_ptr<sqlite3_stmt, SqliteFinalize>;

/// TempFile: an empty file in the temporary directory, removed on destruction.
class TempFile {
 public:
  TempFile() {
    std::string path = std::filesystem::temp_directory_path() / "memshard-cache-aside-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) {
      throw DatabaseError("cannot create a file in " + path + ": " +
                          std::generic_category().message(errno));
    }
    ::close(fd);
    path_ = std::move(path);
  }
  TempFile(const TempFile&) = delete;
  auto operator=(const TempFile&) -> TempFile& = delete;
  TempFile(TempFile&&) = delete;
  auto operator=(TempFile&&) -> TempFile& = delete;
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }

  [[nodiscard]] auto path() const noexcept -> const std::string& { return path_; }

 private:
  std::string path_;
};

/// ProductDatabase: a SQLite database in a temporary file with a `products` table. The rows
/// are the same on every run, so answers cached by an earlier run stay right.
class ProductDatabase {
 public:
  ProductDatabase() {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(file_.path().c_str(), &db,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    db_.reset(db);  // sqlite3_open_v2 may return a handle even when it fails
    check(rc, "open " + file_.path());
    execute(
        "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT "
        "NULL, price_cents INTEGER NOT NULL, stock INTEGER NOT NULL)");
    execute("BEGIN");
    const Statement insert = prepare("INSERT INTO products VALUES (?, ?, ?, ?, ?)");
    std::mt19937 random(20240611);  // fixed: the same rows on every run
    std::uniform_int_distribution<int> price(99, 99'999);
    std::uniform_int_distribution<int> stock(0, 500);
    for (int id = 1; id <= kProducts; ++id) {
      const std::string_view category =
          kCategories[static_cast<std::size_t>(id) % kCategories.size()];
      const std::string name = "product " + std::to_string(id) + " (" + std::string(category) + ")";
      sqlite3_bind_int(insert.get(), 1, id);
      sqlite3_bind_text(insert.get(), 2, name.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert.get(), 3, category.data(), static_cast<int>(category.size()),
                        SQLITE_TRANSIENT);
      sqlite3_bind_int(insert.get(), 4, price(random));
      sqlite3_bind_int(insert.get(), 5, stock(random));
      check(sqlite3_step(insert.get()), "insert product " + std::to_string(id));
      sqlite3_reset(insert.get());
    }
    execute("COMMIT");
  }

  /// query: runs `sql` and serializes its rows: columns separated by '\t', each row ended by
  /// '\n', NULL written as "\N". An empty result is an empty string.
  auto query(const std::string& sql) -> std::string {
    const Statement statement = prepare(sql);
    std::string rows;
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(statement.get())) == SQLITE_ROW) {
      const int columns = sqlite3_column_count(statement.get());
      for (int column = 0; column < columns; ++column) {
        if (column > 0) {
          rows += '\t';
        }
        const unsigned char* text = sqlite3_column_text(statement.get(), column);
        rows += text == nullptr ? "\\N" : reinterpret_cast<const char*>(text);
      }
      rows += '\n';
    }
    check(rc, sql);
    return rows;
  }

 private:
  void check(int rc, const std::string& what) const {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
      throw DatabaseError("sqlite: " + what + ": " +
                          (db_ ? sqlite3_errmsg(db_.get()) : sqlite3_errstr(rc)));
    }
  }
  void execute(const std::string& sql) {
    check(sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr), sql);
  }
  auto prepare(const std::string& sql) -> Statement {
    sqlite3_stmt* statement = nullptr;
    check(sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &statement, nullptr), sql);
    return Statement(statement);
  }

  TempFile file_;  // declared first: removed after the database is closed
  std::unique_ptr<sqlite3, SqliteClose> db_;
};

/// Workload: the SQL text of each query, from a fixed seed. Product ids follow a Zipf law
/// (id k is asked about in proportion to 1/k); one query in ten asks for a category's top five.
class Workload {
 public:
  Workload() {
    std::vector<double> weights(kProducts);
    for (std::size_t k = 0; k < weights.size(); ++k) {
      weights[k] = 1.0 / static_cast<double>(k + 1);
    }
    product_ = std::discrete_distribution<int>(weights.begin(), weights.end());
  }

  auto next() -> std::string {
    if (kind_(random_) == 0) {
      const std::string_view category = kCategories[category_(random_)];
      return "SELECT id, name, price_cents FROM products WHERE category = '" +
             std::string(category) + "' ORDER BY price_cents DESC, id LIMIT 5";
    }
    return "SELECT id, name, category, price_cents, stock FROM products WHERE id = " +
           std::to_string(product_(random_) + 1);
  }

 private:
  std::mt19937 random_{7};
  std::discrete_distribution<int> product_;
  std::uniform_int_distribution<int> kind_{0, 9};
  std::uniform_int_distribution<std::size_t> category_{0, kCategories.size() - 1};
};

/// cache_key: "sql:" + the hex MD5 of the query text (36 bytes, a valid memcached key).
auto cache_key(std::string_view sql) -> std::string {
  static constexpr std::string_view kHex = "0123456789abcdef";
  std::string key = "sql:";
  for (const unsigned char byte : memshard::Md5::digest(sql)) {
    key += kHex[byte >> 4U];
    key += kHex[byte & 0xFU];
  }
  return key;
}

/// Tally: what the workload did.
struct Tally {
  std::size_t hits = 0;
  std::size_t misses = 0;
  std::size_t cache_errors = 0;  // the read failed (then nothing is stored), or the add did
  std::size_t database_queries = 0;
  std::size_t wrong_answers = 0;

  void cache_error(const memshard::Status& status) {
    if (cache_errors++ < kErrorsShown) {
      std::cerr << "cache error: " << status << '\n';
    }
  }
};

using Cache = memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>>;

/// Answer: a query's rows, and whether the cache supplied them.
struct Answer {
  std::string rows;
  bool from_cache = false;
};

/// cached_query: the cache-aside read, in one get_or_load: the cache first; on a miss the
/// database, whose answer is then added to the cache. A cache failure never fails the query: the
/// database answers (and nothing is stored after a failed read).
auto cached_query(Cache& cache, ProductDatabase& db, const std::string& sql, Tally& tally)
    -> Answer {
  bool loaded = false;
  memshard::Result<std::string> rows = cache.get_or_load(cache_key(sql), [&] {
    loaded = true;
    ++tally.database_queries;
    return db.query(sql);
  });
  const memshard::Status& status = rows.status();
  if (!status.ok() && status.code() != memshard::Errc::kNotStored) {
    tally.cache_error(status);
  } else {
    ++(loaded ? tally.misses : tally.hits);
  }
  return {std::move(*rows), !loaded};
}

struct Arguments {
  std::size_t queries = kDefaultQueries;
  std::vector<memshard::Server> servers;
};

auto parse_arguments(int argc, char** argv) -> Arguments {
  Arguments arguments;
  std::string list;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--queries") {
      const std::string_view count = i + 1 < argc ? argv[++i] : "";
      const auto [end, error] =
          std::from_chars(count.data(), count.data() + count.size(), arguments.queries);
      if (count.empty() || error != std::errc{} || end != count.data() + count.size()) {
        throw UsageError("--queries needs a number, got '" + std::string(count) + "'");
      }
    } else if (arg.starts_with("-")) {
      throw UsageError("unknown option " + std::string(arg));
    } else {
      list.append(arg).append(" ");
    }
  }
  arguments.servers = memshard::parse_servers(list.empty() ? "127.0.0.1:11211" : list);
  return arguments;
}

void print_summary(const Tally& tally, std::size_t queries, const Cache& cache) {
  const double hit_rate =
      queries == 0 ? 0.0 : 100.0 * static_cast<double>(tally.hits) / static_cast<double>(queries);
  std::cout << "queries: " << queries << '\n'
            << "hits: " << tally.hits << '\n'
            << "misses: " << tally.misses << '\n'
            << "cache errors: " << tally.cache_errors << '\n'
            << "database queries: " << tally.database_queries << '\n'
            << "hit rate: " << std::fixed << std::setprecision(1) << hit_rate << "%\n"
            << "wrong answers: " << tally.wrong_answers << '\n';
  for (const memshard::ServerStats& server : cache.stats()) {
    std::cout << "server " << server.server.endpoint() << ": " << server.operations
              << " operations, " << server.hits << " hits, " << server.misses << " misses, "
              << server.errors << " errors, " << server.ejections << " ejections\n";
  }
  if (tally.cache_errors > kErrorsShown) {
    std::cerr << "cache errors: " << tally.cache_errors << " (the first " << kErrorsShown
              << " shown)\n";
  }
}

}  // namespace

auto main(int argc, char** argv) -> int try {
  const Arguments arguments = parse_arguments(argc, argv);
  ProductDatabase db;

  // The database is the fallback, so the cache should fail fast rather than wait.
  memshard::ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds{250};
  options.io_timeout = std::chrono::milliseconds{250};
  options.default_expiry = std::chrono::minutes{10};  // every add of get_or_load
  auto ring = std::make_shared<const memshard::KetamaLocator<memshard::Md5>>(
      memshard::profiles::libmemcached_ketama_weighted(arguments.servers));
  Cache cache(arguments.servers, ring, options);

  Workload workload;
  Tally tally;
  for (std::size_t i = 0; i < arguments.queries; ++i) {
    const std::string sql = workload.next();
    const Answer answer = cached_query(cache, db, sql, tally);
    if (answer.from_cache && answer.rows != db.query(sql)) {
      ++tally.wrong_answers;
      std::cerr << "wrong answer from the cache for " << sql << '\n';
    }
  }
  print_summary(tally, arguments.queries, cache);
  return tally.wrong_answers == 0 ? 0 : 1;
} catch (const UsageError& error) {
  std::cerr << "memshard-cache-aside: " << error.what()
            << "\nusage: memshard-cache-aside [--queries N] [host:port ...]\n";
  return 2;
} catch (const memshard::ConfigError& error) {
  std::cerr << error.what() << '\n';
  return 2;
} catch (const DatabaseError& error) {
  std::cerr << "memshard-cache-aside: " << error.what() << '\n';
  return 2;
}
