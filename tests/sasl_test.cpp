// SPDX-License-Identifier: MIT
// SASL authentication (ClientOptions::sasl) against real `memcached -S`
// servers whose sasldb saslpasswd2 made: the right credentials serve every
// operation; a wrong password or none is Errc::kAuthFailure, at once, without
// ejecting the server or reconnecting without calls; the credentials appear
// in no Status and no stats(); migration works through libmemcached.
// Skipped, saying why, without saslpasswd2 (sasl2-bin) or a memcached with -S.
#include <libmemcached-1.0/memcached.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "memshard/migration/warmer.hpp"
#include "support/child_process.hpp"
#include "support/memcached_server.hpp"

namespace sasl_test {
namespace {

using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::Errc;
using memshard::MultiGetMode;
using memshard::Protocol;
using memshard::SaslCredentials;
using memshard::Server;
using memshard::Status;
using memshard::testing::MemcachedServer;
using Client = memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>>;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kUser = "cache-user-q7";
constexpr std::string_view kPassword = "Pw-9d41c7e2b0";
constexpr std::string_view kWrongPassword = "Wr-5a07f3e1c8";

// The saslpasswd2 executable, or "".
auto find_saslpasswd2() -> std::string {
  std::string found = memshard::testing::detail::find_in_path("saslpasswd2");
  if (found.empty() && ::access("/usr/sbin/saslpasswd2", X_OK) == 0) {
    found = "/usr/sbin/saslpasswd2";
  }
  return found;
}

// Two SASL servers sharing one SASL configuration (a temporary directory with
// memcached.conf and the sasldb), made once per suite; `skip` says why not.
struct SaslFleet {
  std::filesystem::path dir;
  std::vector<MemcachedServer> servers;
  std::string skip;

  SaslFleet() {
    const std::string saslpasswd2 = find_saslpasswd2();
    if (saslpasswd2.empty()) {
      skip = "saslpasswd2 not found (install sasl2-bin: scripts/install-deps.sh)";
      return;
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "memshard-sasl-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      skip = "cannot create a temporary directory";
      return;
    }
    dir = pattern;
    // memcached runs as nobody when the tests run as root: it must read both.
    ::chmod(dir.c_str(), 0755);
    std::ofstream(dir / "memcached.conf")
        << "mech_list: plain\nsasldb_path: " << (dir / "sasldb").string() << "\n";
    const memshard::testing::RunResult made = memshard::testing::run_program(
        saslpasswd2,
        {"-a", "memcached", "-c", "-p", "-f", (dir / "sasldb").string(), std::string(kUser)},
        kPassword);
    if (made.status != 0) {
      std::ostringstream why;
      why << "saslpasswd2 could not make a sasldb: " << made;
      skip = why.str();
      return;
    }
    ::chmod((dir / "memcached.conf").c_str(), 0644);
    ::chmod((dir / "sasldb").c_str(), 0644);
    try {
      for (int i = 0; i < 2; ++i) {
        servers.push_back(MemcachedServer::with_sasl(dir.string()));
      }
    } catch (const std::runtime_error& error) {
      skip = std::string("memcached does not run with -S (SASL): ") + error.what();
      servers.clear();
    }
  }
  SaslFleet(const SaslFleet&) = delete;
  auto operator=(const SaslFleet&) -> SaslFleet& = delete;
  SaslFleet(SaslFleet&&) = delete;
  auto operator=(SaslFleet&&) -> SaslFleet& = delete;
  ~SaslFleet() {
    servers.clear();
    if (!dir.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }

  [[nodiscard]] auto list(std::size_t count = 2) const -> std::vector<Server> {
    std::vector<Server> out;
    for (std::size_t i = 0; i < count; ++i) {
      out.push_back(memshard::parse_server(servers[i].spec()));
    }
    return out;
  }
};

// A libmemcached handle authenticated to one server, kept open so that asking
// its stats costs one connection in all.
class StatsHandle {
 public:
  explicit StatsHandle(const MemcachedServer& server) : memc_(memcached_create(nullptr)) {
    (void)memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
    (void)memcached_set_sasl_auth_data(memc_, std::string(kUser).c_str(),
                                       std::string(kPassword).c_str());
    (void)memcached_server_add(memc_, "127.0.0.1", server.port());
  }
  StatsHandle(const StatsHandle&) = delete;
  auto operator=(const StatsHandle&) -> StatsHandle& = delete;
  StatsHandle(StatsHandle&&) = delete;
  auto operator=(StatsHandle&&) -> StatsHandle& = delete;
  ~StatsHandle() { memcached_free(memc_); }

  // The server's count of connections accepted since it started.
  [[nodiscard]] auto total_connections() const -> std::uint64_t {
    memcached_return_t rc = MEMCACHED_SUCCESS;
    memcached_stat_st* stats = memcached_stat(memc_, nullptr, &rc);
    EXPECT_EQ(rc, MEMCACHED_SUCCESS) << memcached_last_error_message(memc_);
    if (stats == nullptr) {
      return 0;
    }
    const std::uint64_t total = stats[0].total_connections;
    memcached_stat_free(nullptr, stats);
    return total;
  }

 private:
  memcached_st* memc_;
};

auto options_with(std::optional<SaslCredentials> sasl, MultiGetMode mode = MultiGetMode::kPolled)
    -> ClientOptions {
  ClientOptions options;
  options.protocol = Protocol::kBinary;
  options.connect_timeout = std::chrono::milliseconds(2000);
  options.io_timeout = std::chrono::milliseconds(2000);
  options.failure_limit = 2;
  options.multi_get = mode;
  options.sasl = std::move(sasl);
  return options;
}

auto right() -> SaslCredentials { return {std::string(kUser), std::string(kPassword)}; }
auto wrong() -> SaslCredentials { return {std::string(kUser), std::string(kWrongPassword)}; }

auto keys(std::size_t count) -> std::vector<std::string> {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back("sasl:key:" + std::to_string(i));
  }
  return out;
}

auto views(const std::vector<std::string>& list) -> std::vector<std::string_view> {
  return {list.begin(), list.end()};
}

// Every text a client can show about its servers: stats() as printed.
auto stats_text(const Client& client) -> std::string {
  std::ostringstream out;
  for (const memshard::ServerStats& s : client.stats()) {
    out << s.server.endpoint() << ' ' << s.server.name << ' ' << s.operations << ' ' << s.errors
        << ' ' << s.ejections << ' ' << s.consecutive_failures << ' ' << s.ejected << '\n';
  }
  return out.str();
}

void expect_no_credentials(std::string_view text) {
  EXPECT_EQ(text.find(kPassword), std::string_view::npos) << text;
  EXPECT_EQ(text.find(kWrongPassword), std::string_view::npos) << text;
  EXPECT_EQ(text.find(kUser), std::string_view::npos) << text;
}

void expect_auth_failure(const Status& status) {
  EXPECT_EQ(status.code(), Errc::kAuthFailure) << status.message();
  EXPECT_NE(status.message().find("AUTHENTICATION FAILURE"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("127.0.0.1:"), std::string::npos) << status.message();
  expect_no_credentials(status.message());
}

class SaslTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fleet_ = new SaslFleet(); }
  static void TearDownTestSuite() {
    delete fleet_;
    fleet_ = nullptr;
  }
  void SetUp() override {
    if (!fleet_->skip.empty()) {
      GTEST_SKIP() << fleet_->skip;
    }
  }

  static auto fleet() -> SaslFleet& { return *fleet_; }

 private:
  static SaslFleet* fleet_;
};

SaslFleet* SaslTest::fleet_ = nullptr;

TEST_F(SaslTest, TheRightCredentialsServeEveryOperation) {
  for (const MultiGetMode mode : {MultiGetMode::kPolled, MultiGetMode::kPerServer}) {
    SCOPED_TRACE(mode == MultiGetMode::kPolled ? "polled multi-get" : "per-server multi-get");
    Client client(fleet().list(), options_with(right(), mode));
    const std::vector<std::string> names = keys(20);
    for (const std::string& key : names) {
      ASSERT_TRUE(client.set(key, "value of " + key).ok());
    }
    for (const std::string& key : names) {
      const auto hit = client.get(key);
      ASSERT_TRUE(hit.ok()) << hit.status().message();
      ASSERT_TRUE(hit.value().has_value()) << key;
      EXPECT_EQ(hit.value()->value, "value of " + key);
    }
    const std::vector<std::string_view> asked = views(names);
    const memshard::MultiGetResult got = client.get_multi(asked);
    EXPECT_EQ(got.hits(), names.size());
    EXPECT_EQ(got.failures(), 0U);
    for (const std::string& key : names) {
      EXPECT_TRUE(client.remove(key).ok()) << key;
    }
    const auto gone = client.get(names.front());
    ASSERT_TRUE(gone.ok()) << gone.status().message();
    EXPECT_FALSE(gone.value().has_value());
    for (const memshard::ServerStats& s : client.stats()) {
      EXPECT_GT(s.operations, 0U) << s.server.endpoint();  // both servers served
      EXPECT_EQ(s.errors, 0U);
    }
  }
}

// The calls that use the meta protocol elsewhere (memcached -S refuses text
// commands) go through the authenticated libmemcached handles: the batch
// writes key by key, gat as a touch and a get.
TEST_F(SaslTest, BatchWritesAndGatGoThroughAuthenticatedHandles) {
  Client client(fleet().list(), options_with(right(), MultiGetMode::kPolled));
  const std::vector<std::string> names = keys(20);
  std::vector<std::pair<std::string, std::string>> items;
  for (const std::string& key : names) {
    items.emplace_back(key, "batch " + key);
  }
  const memshard::MultiWriteResult written = client.set_multi(items);
  EXPECT_TRUE(written.ok()) << written.failures();
  for (const auto& [key, value] : items) {
    const auto hit = client.gat(key, memshard::Expiry::after(std::chrono::seconds(60)));
    ASSERT_TRUE(hit.ok()) << hit.status().message();
    ASSERT_TRUE(hit->has_value()) << key;
    EXPECT_EQ((*hit)->value, value);
  }
  EXPECT_EQ(client.add_multi(items).failures(), items.size());  // all there: not stored
  const auto missing = client.gat("sasl-missing", memshard::Expiry::never());
  ASSERT_TRUE(missing.ok()) << missing.status().message();
  EXPECT_FALSE(missing->has_value());
  EXPECT_TRUE(client.delete_multi(names).ok());
  EXPECT_EQ(client.get_multi(names).hits(), 0U);
  for (const memshard::ServerStats& s : client.stats()) {
    EXPECT_EQ(s.errors, 0U) << s.server.endpoint();
  }
}

TEST_F(SaslTest, AWrongPasswordFailsAtOnceAndNeverEjects) {
  for (const MultiGetMode mode : {MultiGetMode::kPolled, MultiGetMode::kPerServer}) {
    SCOPED_TRACE(mode == MultiGetMode::kPolled ? "polled multi-get" : "per-server multi-get");
    Client client(fleet().list(), options_with(wrong(), mode));
    const std::vector<std::string> names = keys(10);
    for (int round = 0; round < 3; ++round) {
      for (const std::string& key : names) {
        const auto started = Clock::now();
        expect_auth_failure(client.set(key, "v"));
        const auto read = client.get(key);
        EXPECT_FALSE(read.ok());
        expect_auth_failure(read.status());
        expect_auth_failure(client.remove(key));
        // Far below the 2 s timeouts: nothing waited.
        EXPECT_LT(Clock::now() - started, std::chrono::milliseconds(1000));
      }
      const std::vector<std::string_view> asked = views(names);
      const memshard::MultiGetResult got = client.get_multi(asked);
      EXPECT_EQ(got.hits(), 0U);
      ASSERT_EQ(got.statuses.size(), names.size());
      for (const Status& status : got.statuses) {
        expect_auth_failure(status);
      }
    }
    for (const memshard::ServerStats& s : client.stats()) {
      EXPECT_FALSE(s.ejected) << s.server.endpoint();
      EXPECT_EQ(s.ejections, 0U);
      EXPECT_EQ(s.consecutive_failures, 0U);
      EXPECT_EQ(s.refused, 0U);
    }
    expect_no_credentials(stats_text(client));
  }
}

TEST_F(SaslTest, AWrongPasswordReconnectsOnlyForCalls) {
  const StatsHandle stats(fleet().servers[0]);
  Client client(fleet().list(1), options_with(wrong()));
  const std::uint64_t before = stats.total_connections();
  constexpr std::uint64_t kCalls = 20;
  for (std::uint64_t i = 0; i < kCalls; ++i) {
    expect_auth_failure(client.set("sasl:storm:" + std::to_string(i), "v"));
  }
  const std::uint64_t after = stats.total_connections();
  EXPECT_GE(after - before, 1U);      // the calls did reach the server
  EXPECT_LE(after - before, kCalls);  // at most one connection per call
  // Without calls, nothing connects: the count stays for 300 ms.
  const auto until = Clock::now() + std::chrono::milliseconds(300);
  while (Clock::now() < until) {
    ASSERT_EQ(stats.total_connections(), after);
  }
}

TEST_F(SaslTest, NoCredentialsAgainstASaslServerIsAnAuthFailure) {
  Client client(fleet().list(), options_with(std::nullopt));
  for (const std::string& key : keys(6)) {
    expect_auth_failure(client.set(key, "v"));
    const auto read = client.get(key);
    EXPECT_FALSE(read.ok());
    // memcached -S answers the get's first request with its auth error and
    // closes the connection at once, with what libmemcached pipelined after
    // that request still unread: the kernel then resets the connection, and
    // a reset that arrives before the client reads the error discards it.
    const bool reset_first = read.code() == Errc::kConnectionFailure &&
                             read.status().message().find("reset by peer") != std::string::npos;
    EXPECT_TRUE(read.code() == Errc::kAuthFailure || reset_first) << read.status().message();
  }
  for (const memshard::ServerStats& s : client.stats()) {
    EXPECT_FALSE(s.ejected);
    EXPECT_EQ(s.consecutive_failures, 0U);
  }
}

TEST_F(SaslTest, SaslWithTheTextProtocolIsAConfigErrorAtConstruction) {
  ClientOptions options = options_with(right());
  options.protocol = Protocol::kText;
  try {
    Client client(fleet().list(), options);
    FAIL() << "constructed";
  } catch (const ConfigError& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("SASL authentication needs the binary protocol"), std::string::npos)
        << text;
    expect_no_credentials(text);
  }
}

TEST_F(SaslTest, MigrationReadsAndCopiesThroughAuthenticatedHandles) {
  Client client(fleet().list(1), options_with(right()));
  const std::vector<std::string> names = keys(40);
  for (const std::string& key : names) {
    ASSERT_TRUE(client.set(key, "old " + key).ok());
  }
  client.begin_migration(fleet().list(2));
  for (const std::string& key : names) {
    const auto hit = client.get(key);
    ASSERT_TRUE(hit.ok()) << hit.status().message();
    ASSERT_TRUE(hit.value().has_value()) << key;
    EXPECT_EQ(hit.value()->value, "old " + key);
  }
  const memshard::MigrationStats moved = client.migration_stats();
  EXPECT_GT(moved.fallback_hits, 0U);  // keys whose owner is now the second server
  EXPECT_EQ(moved.copies_stored, moved.fallback_hits);
  EXPECT_EQ(moved.copies_failed, 0U);
  // The key lists of a warmer come from a text command memcached -S refuses.
  EXPECT_THROW(memshard::Warmer<Client::locator_type> warmer(client), ConfigError);
  EXPECT_TRUE(client.commit_migration());
  for (const std::string& key : names) {
    EXPECT_TRUE(client.remove(key).ok());
  }
}

}  // namespace
}  // namespace sasl_test
