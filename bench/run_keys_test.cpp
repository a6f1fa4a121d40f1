// SPDX-License-Identifier: MIT
// run_keys_test.cpp: bench/run_keys.hpp (the run's prefix, the emptiness
// check, the deletion of a run's keys), and the benchmarks that write to
// MEMSHARD_SERVERS run against real servers, one of which holds a key of
// someone else's: they refuse to run, and with MEMSHARD_BENCH_ALLOW_NONEMPTY=1
// they run, leave that key as it was and take every key of their own away.

#include "run_keys.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/memcached_server.hpp"

namespace {

using memshard::Server;
using memshard::bench::curr_items;
using memshard::bench::erase_keys;
using memshard::bench::make_run_prefix;
using memshard::bench::prefix_problem;
using memshard::bench::require_empty;
using memshard::testing::MemcachedServer;

constexpr const char* kForeignSet = "set foreign:key 7 0 5\r\nhello\r\n";
constexpr const char* kForeignValue = "VALUE foreign:key 7 5\r\nhello\r\nEND\r\n";

// Outcome: how a child process ended and what it printed (stdout and stderr).
struct Outcome {
  int exit_code = -1;
  std::string output;
};

// run: `command` through the shell, stderr with stdout.
auto run(const std::string& command) -> Outcome {
  Outcome outcome;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    throw std::runtime_error("popen failed: " + command);
  }
  std::array<char, 4096> buffer{};
  while (const std::size_t got = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    outcome.output.append(buffer.data(), got);
  }
  const int status = ::pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

// stat: the value of statistic `name` in `server`'s "stats", "" when absent.
auto stat(const MemcachedServer& server, const std::string& name) -> std::string {
  const std::string reply = server.command("stats");
  const std::string line = "STAT " + name + " ";
  const std::size_t at = reply.find(line);
  if (at == std::string::npos) {
    return {};
  }
  const std::size_t start = at + line.size();
  return reply.substr(start, reply.find("\r\n", start) - start);
}

TEST(RunKeys, MadePrefixIsNineteenBytesOfTimeAndPid) {
  EXPECT_EQ(make_run_prefix(0x6B0ED81EU, 0xF63U), "msb:6b0ed81e000f63:");
  EXPECT_EQ(make_run_prefix(0x1'0000'0001ULL, 0x1'000'002ULL), "msb:00000001000002:");
  EXPECT_EQ(prefix_problem(make_run_prefix(1, 1)), "");
}

TEST(RunKeys, PrefixProblemRejectsEmptyLongAndUnsafePrefixes) {
  EXPECT_EQ(prefix_problem("bench-1.run_a:"), "");
  EXPECT_EQ(prefix_problem(std::string(memshard::bench::kMaxPrefixLength, 'a')), "");
  EXPECT_NE(prefix_problem(""), "");
  EXPECT_NE(prefix_problem(std::string(memshard::bench::kMaxPrefixLength + 1, 'a')), "");
  EXPECT_NE(prefix_problem("a b"), "");
  EXPECT_NE(prefix_problem("a\r\n"), "");
  EXPECT_NE(prefix_problem("a/b"), "");
}

TEST(RunKeys, EraseKeysDeletesOnlyTheGivenKeysFromEveryServer) {
  const MemcachedServer a;
  const MemcachedServer b;
  const std::vector<Server> servers = {memshard::parse_server(a.spec()),
                                       memshard::parse_server(b.spec())};
  ASSERT_EQ(a.command(kForeignSet), "STORED\r\n");
  std::vector<std::string> keys;
  for (int i = 0; i < 1200; ++i) {  // more than one pipeline
    keys.push_back("msb:test:" + std::to_string(i));
    const MemcachedServer& holder = i % 3 == 0 ? b : a;
    ASSERT_EQ(holder.command("set " + keys.back() + " 0 0 1\r\nv\r\n"), "STORED\r\n");
  }
  keys.emplace_back("msb:test:never-written");
  EXPECT_EQ(erase_keys(servers, keys), 1200U);
  EXPECT_EQ(curr_items(servers[0]), 1U);
  EXPECT_EQ(curr_items(servers[1]), 0U);
  EXPECT_EQ(a.command("get foreign:key"), kForeignValue);
}

TEST(RunKeys, RequireEmptyRefusesAServerHoldingItemsUnlessAllowed) {
  const MemcachedServer a;
  const MemcachedServer b;
  const std::vector<Server> servers = {memshard::parse_server(a.spec()),
                                       memshard::parse_server(b.spec())};
  ::unsetenv("MEMSHARD_BENCH_ALLOW_NONEMPTY");
  EXPECT_NO_THROW(require_empty(servers));
  ASSERT_EQ(b.command(kForeignSet), "STORED\r\n");
  try {
    require_empty(servers);
    ADD_FAILURE() << "a server holding an item was accepted";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(b.spec() + " (curr_items 1)"), std::string::npos) << message;
    EXPECT_EQ(message.find(a.spec()), std::string::npos) << message;
    EXPECT_NE(message.find("evict"), std::string::npos) << message;
    EXPECT_NE(message.find("MEMSHARD_BENCH_ALLOW_NONEMPTY=1"), std::string::npos) << message;
  }
  ::setenv("MEMSHARD_BENCH_ALLOW_NONEMPTY", "1", 1);
  EXPECT_NO_THROW(require_empty(servers));
  ::setenv("MEMSHARD_BENCH_ALLOW_NONEMPTY", "yes", 1);
  EXPECT_THROW(require_empty(servers), std::invalid_argument);
  ::unsetenv("MEMSHARD_BENCH_ALLOW_NONEMPTY");
}

// A benchmark binary on MEMSHARD_SERVERS = two local servers, the first
// holding one foreign key.
class BenchOnServers : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    ASSERT_EQ(a_.command(kForeignSet), "STORED\r\n");
    servers_ = {memshard::parse_server(a_.spec()), memshard::parse_server(b_.spec())};
  }

  [[nodiscard]] auto run_bench(const std::string& allow) const -> Outcome {
    return run("env -u MEMSHARD_BENCH_PREFIX MEMSHARD_SERVERS=" + a_.spec() + "," + b_.spec() +
               " MEMSHARD_BENCH_ALLOW_NONEMPTY=" + allow +
               " MEMSHARD_BENCH_KEYS=300 MEMSHARD_BENCH_CLIENT_ROUNDS=5 " + GetParam());
  }

  // Expects the servers to hold what they held before the run: the foreign
  // key alone.
  void expect_untouched() const {
    EXPECT_EQ(a_.command("get foreign:key"), kForeignValue);
    EXPECT_EQ(curr_items(servers_[0]), 1U);
    EXPECT_EQ(curr_items(servers_[1]), 0U);
  }

  MemcachedServer a_;
  MemcachedServer b_;
  std::vector<Server> servers_;
};

TEST_P(BenchOnServers, RefusesServersThatAreNotEmpty) {
  const Outcome outcome = run_bench("0");
  EXPECT_NE(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("refusing to run on servers that are not empty: " + a_.spec()),
            std::string::npos)
      << outcome.output;
  expect_untouched();
  // Nothing was written: the foreign key's set is the only one.
  EXPECT_EQ(stat(a_, "cmd_set"), "1");
  EXPECT_EQ(stat(b_, "cmd_set"), "0");
}

TEST_P(BenchOnServers, WithAllowNonemptyRunsAndLeavesOnlyTheForeignKey) {
  const Outcome outcome = run_bench("1");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(outcome.output.find("error_occurred"), std::string::npos) << outcome.output;
  EXPECT_EQ(outcome.output.find("ERROR OCCURRED"), std::string::npos) << outcome.output;
  // It wrote (the hit-rate benchmark, with one server before the add, to the
  // first only), then deleted its own keys.
  EXPECT_NE(stat(a_, "cmd_set"), "1");
  EXPECT_NE(stat(a_, "delete_hits"), "0");
  expect_untouched();
}

INSTANTIATE_TEST_SUITE_P(Benchmarks, BenchOnServers,
                         ::testing::Values(MEMSHARD_HIT_RATE_BENCH, MEMSHARD_CLIENT_BENCH),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           return std::string(param.index == 0 ? "hit_rate" : "client");
                         });

}  // namespace
