// SPDX-License-Identifier: MIT
// examples_test.cpp: runs the example programs as child processes against two real memcached
// servers, and checks how they exit, what they print, and what they leave on the servers (asked
// directly over the text protocol). memshard-cache-aside is tested only when it was built.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/detail/bytes.hpp"
#include "memshard/memshard.hpp"
#include "support/child_process.hpp"
#include "support/memcached_server.hpp"
#include "support/server_set.hpp"

namespace {

using memshard::testing::lines_of;
using memshard::testing::MemcachedServer;
using memshard::testing::run_program;
using memshard::testing::RunResult;
using memshard::testing::ServerSet;

/// Fleet: the two servers shared by a suite. Before every test, a stopped server is started
/// again and both are emptied.
class Fleet : public ::testing::Test {
 protected:
  static constexpr std::size_t kServers = 2;

  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(kServers); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  static auto server(std::size_t i) -> MemcachedServer& { return (*servers_)[i]; }
  /// specs: "127.0.0.1:port" of every server, the example's arguments.
  static auto specs() -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const MemcachedServer& server : *servers_) {
      out.push_back(server.spec());
    }
    return out;
  }
  /// index_of: the server whose spec is `endpoint`.
  static auto index_of(std::string_view endpoint) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < kServers; ++i) {
      if (server(i).spec() == endpoint) {
        return i;
      }
    }
    return std::nullopt;
  }
  /// stored: the value server `i` holds for `key`, asked directly, or nothing.
  static auto stored(std::size_t i, const std::string& key) -> std::optional<std::string> {
    const std::string reply = server(i).command("get " + key);
    if (reply == "END\r\n") {
      return std::nullopt;
    }
    const std::string header = "VALUE " + key + " ";
    EXPECT_TRUE(reply.starts_with(header)) << reply;
    const auto data = reply.find("\r\n") + 2;
    const auto end = reply.rfind("\r\nEND\r\n");
    return reply.substr(data, end - data);
  }
  /// placement: the libmemcached-ketama-weighted ring over the servers, as the examples use.
  static auto placement() -> memshard::KetamaLocator<memshard::Md5> {
    std::string list;
    for (const std::string& spec : specs()) {
      list.append(spec).append(" ");
    }
    return memshard::profiles::libmemcached_ketama_weighted(memshard::parse_servers(list));
  }

 private:
  static inline std::unique_ptr<ServerSet> servers_;
};

// ---- memshard-quick-start ---------------------------------------------------------------------

constexpr const char* kQuickStart = MEMSHARD_QUICK_START_PATH;

/// QuickStartLine: one line of memshard-quick-start's output, `key -> endpoint value`.
struct QuickStartLine {
  std::string key;
  std::string endpoint;
  std::optional<std::string> value;  ///< empty for "(miss)"
};

auto parse_quick_start(std::string_view out) -> std::vector<QuickStartLine> {
  std::vector<QuickStartLine> parsed;
  for (const std::string& line : lines_of(out)) {
    const auto arrow = line.find(" -> ");
    const auto space = line.find(' ', arrow + 4);
    if (arrow == std::string::npos || space == std::string::npos) {
      ADD_FAILURE() << "unexpected line: " << line;
      continue;
    }
    QuickStartLine entry{line.substr(0, arrow), line.substr(arrow + 4, space - arrow - 4), {}};
    const std::string value = line.substr(space + 1);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      entry.value = value.substr(1, value.size() - 2);
    } else if (value != "(miss)") {
      ADD_FAILURE() << "unexpected value in line: " << line;
    }
    parsed.push_back(std::move(entry));
  }
  return parsed;
}

using QuickStartExample = Fleet;

TEST_F(QuickStartExample, StoresEveryKeyOnTheServerItPrints) {
  const RunResult result = run_program(kQuickStart, specs());
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "") << result;
  const std::vector<QuickStartLine> lines = parse_quick_start(result.out);
  ASSERT_EQ(lines.size(), 5U) << result;
  const auto ring = placement();
  std::size_t hits = 0;
  for (const QuickStartLine& line : lines) {
    const std::optional<std::size_t> owner = index_of(line.endpoint);
    ASSERT_TRUE(owner.has_value()) << line.endpoint << " is not one of the servers\n" << result;
    EXPECT_EQ(*owner, ring.locate(line.key)) << line.key << " is not where the ring puts it";
    for (std::size_t i = 0; i < kServers; ++i) {
      // The value read back is the one on the printed server, and no other server has the key.
      EXPECT_EQ(stored(i, line.key), i == *owner ? line.value : std::nullopt)
          << line.key << " on server " << i;
    }
    hits += line.value.has_value() ? 1U : 0U;
  }
  EXPECT_EQ(hits, 4U) << result;
  EXPECT_EQ(lines.back().key, "no-such-key");
  EXPECT_FALSE(lines.back().value.has_value()) << result;
}

TEST_F(QuickStartExample, ReportsFailuresOfADeadServerAndExitsNonZero) {
  const RunResult healthy = run_program(kQuickStart, specs());
  ASSERT_EQ(healthy.status, 0) << healthy;
  const std::vector<QuickStartLine> lines = parse_quick_start(healthy.out);
  ASSERT_FALSE(lines.empty()) << healthy;
  const std::string dead = lines.front().endpoint;  // holds at least one key
  const std::optional<std::size_t> index = index_of(dead);
  ASSERT_TRUE(index.has_value()) << healthy;
  server(*index).stop();

  const RunResult result = run_program(kQuickStart, specs());
  EXPECT_EQ(result.status, 1) << result;
  EXPECT_NE(result.err.find(dead), std::string::npos) << result;
  EXPECT_NE(result.err.find("connection_failure"), std::string::npos) << result;
  for (const QuickStartLine& line : parse_quick_start(result.out)) {
    EXPECT_NE(line.endpoint, dead) << "a key of the dead server was printed as read\n" << result;
  }
}

TEST_F(QuickStartExample, RefusesABadServerList) {
  const RunResult result = run_program(kQuickStart, {"127.0.0.1:not-a-port"});
  EXPECT_EQ(result.status, 2) << result;
  EXPECT_NE(result.err.find("memshard: "), std::string::npos) << result;
  EXPECT_EQ(result.out, "") << result;
}

// ---- memshard-cache-aside ---------------------------------------------------------------------

#ifdef MEMSHARD_CACHE_ASIDE_PATH
constexpr const char* kCacheAside = MEMSHARD_CACHE_ASIDE_PATH;
#else
constexpr const char* kCacheAside = nullptr;
#endif

/// Summary: memshard-cache-aside's counters, read from its `name: number` lines.
struct Summary {
  std::map<std::string, std::uint64_t, std::less<>> counters;
  std::string hit_rate;

  [[nodiscard]] auto operator[](std::string_view name) const -> std::uint64_t {
    const auto found = counters.find(name);
    if (found == counters.end()) {
      ADD_FAILURE() << "no '" << name << "' line in the summary";
      return 0;
    }
    return found->second;
  }
};

auto parse_summary(std::string_view out) -> Summary {
  Summary summary;
  for (const std::string& line : lines_of(out)) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos || line.starts_with("server ")) {
      continue;
    }
    const std::string name = line.substr(0, colon);
    const std::string value = line.substr(colon + 2);
    if (name == "hit rate") {
      summary.hit_rate = value;
      continue;
    }
    std::uint64_t number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error == std::errc{} && end == value.data() + value.size()) {
      summary.counters.emplace(name, number);
    }
  }
  return summary;
}

/// hit_rate: the "hit rate: 61.7%" line's number.
auto hit_rate(const Summary& summary) -> double {
  if (!summary.hit_rate.ends_with('%')) {
    ADD_FAILURE() << "hit rate '" << summary.hit_rate << "' is not a percentage";
    return -1;
  }
  return std::stod(summary.hit_rate.substr(0, summary.hit_rate.size() - 1));
}

/// items: the number of items server `i` holds.
auto items(std::size_t i, const MemcachedServer& server) -> std::uint64_t {
  const std::string reply = server.command("stats");
  const std::string label = "STAT curr_items ";
  const auto at = reply.find(label);
  EXPECT_NE(at, std::string::npos) << "server " << i << ": " << reply;
  std::uint64_t count = 0;
  if (at != std::string::npos) {
    const char* begin = reply.data() + at + label.size();
    std::from_chars(begin, reply.data() + reply.size(), count);
  }
  return count;
}

/// sql_key: the cache key the example documents: "sql:" + hex MD5 of the query text.
auto sql_key(std::string_view sql) -> std::string {
  std::string key = "sql:";
  memshard::detail::append_hex(key, memshard::Md5::digest(sql));
  return key;
}

class CacheAsideExample : public Fleet {
 protected:
  void SetUp() override {
    if (kCacheAside == nullptr) {
      GTEST_SKIP() << "memshard-cache-aside was not built (SQLite3 not found)";
    }
    Fleet::SetUp();
  }
};

TEST_F(CacheAsideExample, CachesQueriesAndEveryCachedAnswerIsRight) {
  const RunResult result = run_program(kCacheAside, specs());
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "") << result;
  const Summary summary = parse_summary(result.out);
  EXPECT_EQ(summary["queries"], 2000U) << result;
  EXPECT_GT(summary["hits"], 0U) << result;
  EXPECT_GT(summary["misses"], 0U) << result;
  EXPECT_EQ(summary["hits"] + summary["misses"], 2000U) << result;
  EXPECT_EQ(summary["misses"], summary["database queries"]) << result;
  EXPECT_EQ(summary["cache errors"], 0U) << result;
  EXPECT_EQ(summary["wrong answers"], 0U) << result;
  EXPECT_NEAR(hit_rate(summary), static_cast<double>(summary["hits"]) / 20.0, 0.051) << result;

  // On empty servers every miss added one new key, spread over both servers.
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < kServers; ++i) {
    const std::uint64_t held = items(i, server(i));
    EXPECT_GT(held, 0U) << "server " << i << " holds nothing";
    total += held;
  }
  EXPECT_EQ(total, summary["misses"]);

  // The most popular query is cached, under its documented key, on the server the ring names.
  const std::string key =
      sql_key("SELECT id, name, category, price_cents, stock FROM products WHERE id = 1");
  const std::size_t owner = placement().locate(key);
  const std::optional<std::string> rows = stored(owner, key);
  ASSERT_TRUE(rows.has_value()) << key << " is not on server " << owner;
  EXPECT_TRUE(rows->starts_with("1\tproduct 1 ")) << *rows;
  EXPECT_EQ(stored(1 - owner, key), std::nullopt);
}

TEST_F(CacheAsideExample, ASecondRunOnWarmServersHitsMore) {
  const RunResult cold = run_program(kCacheAside, specs());
  ASSERT_EQ(cold.status, 0) << cold;
  const RunResult warm = run_program(kCacheAside, specs());
  ASSERT_EQ(warm.status, 0) << warm;
  const Summary first = parse_summary(cold.out);
  const Summary second = parse_summary(warm.out);
  EXPECT_GT(second["hits"], first["hits"]) << cold << warm;
  EXPECT_LT(second["misses"], first["misses"]) << cold << warm;
  EXPECT_EQ(second["misses"], second["database queries"]) << warm;
  EXPECT_EQ(second["wrong answers"], 0U) << warm;
}

TEST_F(CacheAsideExample, WithAServerDownTheDatabaseAnswersAndTheFailuresAreReported) {
  server(1).stop();
  const RunResult result = run_program(kCacheAside, specs());
  ASSERT_EQ(result.status, 0) << result;
  const Summary summary = parse_summary(result.out);
  EXPECT_EQ(summary["queries"], 2000U) << result;
  EXPECT_EQ(summary["wrong answers"], 0U) << result;
  EXPECT_GT(summary["cache errors"], 0U) << result;
  EXPECT_GT(summary["hits"], 0U) << "the live server should still serve its keys\n" << result;
  EXPECT_EQ(summary["hits"] + summary["misses"] + summary["cache errors"], 2000U) << result;
  EXPECT_EQ(summary["database queries"], summary["misses"] + summary["cache errors"]) << result;
  EXPECT_NE(result.err.find("cache error: "), std::string::npos) << result;
  EXPECT_NE(result.err.find(server(1).spec()), std::string::npos) << result;
  EXPECT_NE(result.out.find("server " + server(1).spec() + ": "), std::string::npos) << result;
}

TEST_F(CacheAsideExample, RefusesBadArguments) {
  const RunResult bad_count = run_program(kCacheAside, {"--queries", "many"});
  EXPECT_EQ(bad_count.status, 2) << bad_count;
  EXPECT_NE(bad_count.err.find("usage: "), std::string::npos) << bad_count;
  const RunResult bad_server = run_program(kCacheAside, {"127.0.0.1:0"});
  EXPECT_EQ(bad_server.status, 2) << bad_server;
  EXPECT_NE(bad_server.err.find("memshard: "), std::string::npos) << bad_server;
}

TEST_F(CacheAsideExample, RunsTheNumberOfQueriesAsked) {
  std::vector<std::string> args = specs();
  args.insert(args.begin(), {"--queries", "50"});
  const RunResult result = run_program(kCacheAside, args);
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_EQ(parse_summary(result.out)["queries"], 50U) << result;
}

}  // namespace
