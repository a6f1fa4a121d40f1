// SPDX-License-Identifier: MIT
// examples_test.cpp: runs the example programs as child processes against two real memcached
// servers (three for memshard-php-session, which shares them with real php-cli), and checks how
// they exit, what they print, and what they leave on the servers (asked directly over the text
// protocol). memshard-cache-aside is tested only when it was built; memshard-php-session's tests
// skip when php or php-memcached is missing.
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
#include <array>
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
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/detail/bytes.hpp"
#include "memshard/memshard.hpp"
#include "support/child_process.hpp"
#include "support/memcached_server.hpp"
#include "support/server_set.hpp"

namespace examples_test {
namespace {

using memshard::testing::Fd;
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

// ---- memshard-php-session ---------------------------------------------------------------------

constexpr const char* kPhpSession = MEMSHARD_PHP_SESSION_PATH;
constexpr const char* kPhp = MEMSHARD_PHP_BINARY;
constexpr const char* kPhpScripts = MEMSHARD_PHP_SCRIPTS;

/// kSessionPrefix: php-memcached's memcached.sess_prefix, as Debian leaves it.
constexpr std::string_view kSessionPrefix = "memc.sess.key.";
/// kPollLimit: how long a test waits for another process to reach a state.
constexpr std::chrono::seconds kPollLimit{20};

/// poll_until: whether `done()` became true within kPollLimit (checked every 10 ms).
template <class Done>
auto poll_until(Done done) -> bool {
  const auto deadline = std::chrono::steady_clock::now() + kPollLimit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  return true;
}

/// PhpFleet: three servers (placement over more than two servers is what the tests check),
/// php-cli with php-memcached and Debian's ini, and memshard-php-session. Skips when php or its
/// memcached extension is missing (tests/run.sh installs both: scripts/install-deps.sh).
class PhpFleet : public ::testing::Test {
 protected:
  static constexpr std::size_t kServers = 3;

  static void SetUpTestSuite() {
    servers_ = std::make_unique<ServerSet>(kServers);
    if (::access(kPhp, X_OK) != 0) {
      missing_ = "php-cli is not installed (Debian: php-cli php-memcached)";
    } else if (run_program(kPhp, {"-r", "exit(extension_loaded('memcached') ? 0 : 1);"}).status !=
               0) {
      missing_ = "php's memcached extension is not installed (Debian: php-memcached)";
    }
  }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override {
    if (!missing_.empty()) {
      GTEST_SKIP() << missing_;
    }
    ASSERT_TRUE(servers_->reset());
  }

  /// save_path: the server list as PHP's session.save_path and memshard's --servers take it.
  static auto save_path() -> std::string {
    std::string path;
    for (const MemcachedServer& server : *servers_) {
      path.append(path.empty() ? "" : ",").append(server.spec());
    }
    return path;
  }
  static auto servers() -> std::vector<memshard::Server> { return servers_->list(); }
  static auto script(std::string_view name) -> std::string {
    return std::string(kPhpScripts) + "/" + std::string(name);
  }
  /// php_args: php-cli with the memcached session handler over the servers, running `name`.
  static auto php_args(std::string_view name, std::vector<std::string> args)
      -> std::vector<std::string> {
    std::vector<std::string> all = {"-d", "session.save_handler=memcached", "-d",
                                    "session.save_path=" + save_path(), script(name)};
    all.insert(all.end(), args.begin(), args.end());
    return all;
  }
  static auto php(std::string_view name, std::vector<std::string> args) -> RunResult {
    return run_program(kPhp, php_args(name, std::move(args)));
  }
  static auto example(std::vector<std::string> args) -> RunResult {
    args.insert(args.begin(), {"--servers", save_path()});
    return run_program(kPhpSession, args);
  }
  /// holders: the servers holding `key` (asked directly: the full key, prefix included).
  static auto holders(const std::string& key) -> std::vector<std::size_t> {
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i < kServers; ++i) {
      if ((*servers_)[i].command("get " + key) != "END\r\n") {
        found.push_back(i);
      }
    }
    return found;
  }
  static auto server(std::size_t i) -> MemcachedServer& { return (*servers_)[i]; }
  /// item: server `i`'s reply to `get key`.
  static auto item(std::size_t i, const std::string& key) -> std::string {
    return (*servers_)[i].command("get " + key);
  }
  /// session_owner: where php-memcached's session handler places `id` (Debian: consistent
  /// hashing, libmemcached's ketama ring over one_at_a_time, the prefix left out).
  static auto session_owner(std::string_view id) -> std::size_t {
    return memshard::profiles::php_memcached_consistent(servers()).locate(id);
  }

 private:
  static inline std::unique_ptr<ServerSet> servers_;
  static inline std::string missing_;
};

/// PhpRequest: a PHP request running in the background (session_hold.php): it holds the
/// session's lock until release() (or its destruction, which also kills it).
class PhpRequest {
 public:
  explicit PhpRequest(std::vector<std::string> args) : input_(make_pipe()) {
    const Fd read_end(input_[0]);
    child_.emplace(kPhp, std::move(args), read_end.get(), out_.get(), err_.get());
  }
  PhpRequest(const PhpRequest&) = delete;
  auto operator=(const PhpRequest&) -> PhpRequest& = delete;
  PhpRequest(PhpRequest&&) = delete;
  auto operator=(PhpRequest&&) -> PhpRequest& = delete;
  ~PhpRequest() {
    write_end_.reset();
    if (child_) {
      child_->kill();
    }
  }

  /// release: lets the request finish (it closes its session), and waits for it.
  auto release() -> std::optional<int> {
    write_end_.reset();
    return child_->wait_for(std::chrono::duration_cast<std::chrono::milliseconds>(kPollLimit));
  }
  [[nodiscard]] auto output() const -> std::string { return out_.contents() + err_.contents(); }

 private:
  static auto make_pipe() -> std::array<int, 2> {
    std::array<int, 2> fds{};
    if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
      throw std::system_error(errno, std::generic_category(), "pipe2");
    }
    return fds;
  }

  std::array<int, 2> input_;
  std::optional<Fd> write_end_{std::in_place, input_[1]};
  Fd out_{::memfd_create("php-out", MFD_CLOEXEC)};
  Fd err_{::memfd_create("php-err", MFD_CLOEXEC)};
  std::optional<memshard::testing::ChildProcess> child_;
};

using PhpSessionExample = PhpFleet;

TEST_F(PhpSessionExample, ReadsTheLoginStateAPhpRequestStored) {
  const RunResult stored = php("session_login.php", {"u7q2", "42", "Ada", "admin", "editor"});
  ASSERT_EQ(stored.status, 0) << stored;

  // PHP stored the session where the consistent profile places the bare id, with flags 0.
  const std::string key = std::string(kSessionPrefix) + "u7q2";
  ASSERT_EQ(holders(key), std::vector<std::size_t>{session_owner("u7q2")});
  const std::string data =
      "user_id|i:42;name|s:3:\"Ada\";roles|a:2:{i:0;s:5:\"admin\";i:1;s:6:\"editor\";}"
      "cart|a:2:{i:3;i:2;i:17;i:1;}";
  EXPECT_EQ(item(session_owner("u7q2"), key),
            "VALUE " + key + " 0 " + std::to_string(data.size()) + "\r\n" + data + "\r\nEND\r\n");

  const RunResult shown = example({"show", "u7q2"});
  ASSERT_EQ(shown.status, 0) << shown;
  EXPECT_EQ(shown.out,
            "user_id: 42\nname: \"Ada\"\nroles: [\"admin\", \"editor\"]\ncart: {3: 2, 17: 1}\n");
  EXPECT_EQ(shown.err, "") << shown;
  EXPECT_TRUE(holders(std::string(kSessionPrefix) + "lock.u7q2").empty()) << "lock left behind";
}

TEST_F(PhpSessionExample, PhpSeesTheLoginTheExampleWrote) {
  ASSERT_EQ(php("session_login.php", {"s3k9", "42", "Ada", "admin"}).status, 0);
  const RunResult login = example({"login", "s3k9", "7", "Grace", "ops", "audit"});
  ASSERT_EQ(login.status, 0) << login;
  EXPECT_TRUE(
      login.out.starts_with("user_id: 7\nname: \"Grace\"\nroles: [\"ops\", \"audit\"]\n"
                            "cart: {3: 2, 17: 1}\nlogged_in_by: \"memshard-php-session\"\n"
                            "login_time: "))
      << login;

  const RunResult seen = php("session_show.php", {"s3k9"});
  ASSERT_EQ(seen.status, 0) << seen;
  EXPECT_TRUE(
      seen.out.starts_with("{\"user_id\":7,\"name\":\"Grace\",\"roles\":[\"ops\",\"audit\"],"
                           "\"cart\":{\"3\":2,\"17\":1},\"logged_in_by\":"
                           "\"memshard-php-session\",\"login_time\":"))
      << seen;
  EXPECT_EQ(seen.err, "") << seen;
  const std::string key = std::string(kSessionPrefix) + "s3k9";
  EXPECT_EQ(holders(key), std::vector<std::size_t>{session_owner("s3k9")});
}

TEST_F(PhpSessionExample, ASessionTheExampleCreatesIsOnePhpReads) {
  // Ids PHP would make (26 characters of [0-9a-v]), so that they spread over the servers.
  for (const char* id : {"9kq1cvmd1l0r3h4n4s2p6f3e7t", "ab0ucd2u5jhnq1fq9be6t3ih1m",
                         "v31gk7oq8r2a0s6h1d4j5l9m0c", "0hd1s8n3j6p4u2c7m5o9q1r3t5"}) {
    const RunResult login = example({"login", id, "5", "Linus"});
    ASSERT_EQ(login.status, 0) << login;
    EXPECT_EQ(holders(std::string(kSessionPrefix) + id),
              std::vector<std::size_t>{session_owner(id)})
        << id;
    const RunResult seen = php("session_show.php", {id});
    ASSERT_EQ(seen.status, 0) << seen;
    EXPECT_TRUE(
        seen.out.starts_with("{\"user_id\":5,\"name\":\"Linus\",\"roles\":[],"
                             "\"logged_in_by\":\"memshard-php-session\",\"login_time\":"))
        << seen;
  }
}

TEST_F(PhpSessionExample, WaitsForTheLockOfARunningPhpRequestWithinItsBound) {
  const std::string lock = std::string(kSessionPrefix) + "lock.w4it";
  ASSERT_EQ(php("session_login.php", {"w4it", "42", "Ada"}).status, 0);
  PhpRequest request(php_args("session_hold.php", {"w4it"}));
  ASSERT_TRUE(poll_until([&] { return !holders(lock).empty(); })) << request.output();

  // The lock as PHP took it: "1", flags 0, placed by "lock.<id>" without the prefix.
  const std::size_t lock_owner =
      memshard::profiles::php_memcached_consistent(servers()).locate("lock.w4it");
  EXPECT_EQ(holders(lock), std::vector<std::size_t>{lock_owner});
  EXPECT_EQ(item(lock_owner, lock), "VALUE " + lock + " 0 1\r\n1\r\nEND\r\n");

  // PHP's bound: 1 + 5 attempts; then the example gives up and leaves PHP's lock alone.
  const RunResult refused = example({"show", "w4it"});
  EXPECT_EQ(refused.status, 3) << refused;
  EXPECT_EQ(refused.out, "") << refused;
  EXPECT_NE(refused.err.find("locked by another request (6 attempts)"), std::string::npos)
      << refused;
  EXPECT_EQ(holders(lock), std::vector<std::size_t>{lock_owner}) << "PHP's lock was taken away";

  // With a longer bound it waits, and reads what the request wrote once the lock is released.
  const Fd out(::memfd_create("out", MFD_CLOEXEC));
  const Fd err(::memfd_create("err", MFD_CLOEXEC));
  memshard::testing::ChildProcess waiting(
      kPhpSession, {"--servers", save_path(), "--lock-retries", "1000", "show", "w4it"}, -1,
      out.get(), err.get());
  ASSERT_TRUE(poll_until([&] {
    return err.contents().find("is locked, waiting") != std::string::npos;
  })) << err.contents();
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds{0}), std::nullopt) << "it did not wait";
  EXPECT_EQ(request.release(), 0) << request.output();
  EXPECT_EQ(waiting.wait_for(std::chrono::duration_cast<std::chrono::milliseconds>(kPollLimit)), 0)
      << out.contents() << err.contents();
  EXPECT_EQ(out.contents(),
            "user_id: 42\nname: \"Ada\"\nroles: []\ncart: {3: 2, 17: 1}\n"
            "held_by: \"php\"\n");
  EXPECT_TRUE(holders(lock).empty()) << "lock left behind";
}

TEST_F(PhpSessionExample, ALockMadeAsTheExampleMakesItHoldsPhpOffWithinPhpsBound) {
  // A lock item made as the example makes it blocks PHP like PHP's own; PHP gives up after its
  // retries, and gets in once the lock is gone.
  ASSERT_EQ(php("session_login.php", {"p9x", "1", "Bob"}).status, 0);
  const std::size_t lock_owner =
      memshard::profiles::php_memcached_consistent(servers()).locate("lock.p9x");
  const std::string lock = std::string(kSessionPrefix) + "lock.p9x";
  ASSERT_EQ(server(lock_owner).command("add " + lock + " 0 30 1\r\n1\r\n"), "STORED\r\n");
  const RunResult blocked = php("session_show.php", {"p9x"});
  EXPECT_EQ(blocked.status, 1) << blocked;
  EXPECT_NE(blocked.err.find("Unable to clear session lock record"), std::string::npos) << blocked;
  ASSERT_EQ(server(lock_owner).command("delete " + lock + "\r\n"), "DELETED\r\n");
  const RunResult seen = php("session_show.php", {"p9x"});
  EXPECT_EQ(seen.status, 0) << seen;
}

TEST_F(PhpSessionExample, ReportsAMissingSessionAndBadArguments) {
  const RunResult missing = example({"show", "nosuchsession"});
  EXPECT_EQ(missing.status, 1) << missing;
  EXPECT_NE(missing.err.find("no session nosuchsession"), std::string::npos) << missing;
  EXPECT_TRUE(holders(std::string(kSessionPrefix) + "lock.nosuchsession").empty());

  const RunResult no_servers = run_program(kPhpSession, {"show", "x"});
  EXPECT_EQ(no_servers.status, 2) << no_servers;
  EXPECT_NE(no_servers.err.find("usage: "), std::string::npos) << no_servers;
  const RunResult bad_command = example({"frobnicate"});
  EXPECT_EQ(bad_command.status, 2) << bad_command;
  const RunResult bad_user = example({"login", "x", "seven", "Ada"});
  EXPECT_EQ(bad_user.status, 2) << bad_user;
}

TEST_F(PhpSessionExample, ReadsTheRowsAPhpPageCachedUnderTheMd5OfItsQuery) {
  const auto ring = memshard::profiles::php_memcached(servers());  // new Memcached()
  // 3 rows are stored as they are (flags 4: serialize()); 60 are over 2,000 bytes and
  // FastLZ-compressed (flags 0x54).
  for (const auto& [count, flags] : {std::pair{3, 4U}, std::pair{60, 0x54U}}) {
    const std::string sql =
        "SELECT id, name, price, in_stock FROM products LIMIT " + std::to_string(count);
    const RunResult cached =
        run_program(kPhp, {script("cache_rows.php"), save_path(), sql, std::to_string(count)});
    ASSERT_EQ(cached.status, 0) << cached;
    std::string key;
    memshard::detail::append_hex(key, memshard::Md5::digest(sql));
    EXPECT_EQ(cached.out, key + "\n");
    ASSERT_EQ(holders(key), std::vector<std::size_t>{ring.locate(key)}) << sql;
    EXPECT_TRUE(item(ring.locate(key), key)
                    .starts_with("VALUE " + key + " " + std::to_string(flags) + " "));

    const RunResult rows = example({"rows", sql});
    ASSERT_EQ(rows.status, 0) << rows;
    const std::vector<std::string> lines = lines_of(rows.out);
    ASSERT_EQ(lines.size(), static_cast<std::size_t>(count) + 1) << rows;
    EXPECT_EQ(lines[0], std::to_string(count) + " rows");
    EXPECT_EQ(lines[1], "{\"id\": 1, \"name\": \"product 1\", \"price\": 1.5, \"in_stock\": true}");
    EXPECT_EQ(lines[2],
              "{\"id\": 2, \"name\": \"product 2\", \"price\": 2.5, \"in_stock\": false}");
  }
  const RunResult missing = example({"rows", "SELECT 1"});
  EXPECT_EQ(missing.status, 1) << missing;
  EXPECT_NE(missing.err.find("no rows cached under"), std::string::npos) << missing;
}

}  // namespace
}  // namespace examples_test
