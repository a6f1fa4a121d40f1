// SPDX-License-Identifier: MIT
// warm_main_test.cpp: the built memshard-warm binary end to end, on real
// memcached servers filled by libmemcached: the JSON summary parsed and
// checked against the servers, the human summary, exit statuses (done, a
// server that could not be listed, usage and configuration errors) and --help.
// The same run() is also called in process once, to agree with the binary.

#include <gtest/gtest.h>
#include <libmemcached-1.0/memcached.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/memshard.hpp"
#include "support/child_process.hpp"
#include "support/memcached_server.hpp"
#include "warm/command_line.hpp"
#include "warm/run.hpp"

namespace warm_main_test {
namespace {

namespace tool = memshard::warm_tool;
using memshard::testing::MemcachedServer;
using memshard::testing::RunResult;

constexpr const char* kWarmPath = MEMSHARD_WARM_PATH;

auto run_binary(const std::vector<std::string>& args) -> RunResult {
  return memshard::testing::run_program(kWarmPath, args);
}

auto run_in_process(const std::vector<std::string>& args) -> RunResult {
  const std::vector<std::string_view> views(args.begin(), args.end());
  std::ostringstream out;
  std::ostringstream errors;
  RunResult result;
  result.status = tool::run(views, out, errors);
  result.out = out.str();
  result.err = errors.str();
  return result;
}

// The unsigned number after "\"<name>\":" in `json`, from `from` on.
auto json_number(const std::string& json, std::string_view name, std::size_t from = 0)
    -> std::uint64_t {
  const std::string field = "\"" + std::string(name) + "\":";
  const std::size_t at = json.find(field, from);
  EXPECT_NE(at, std::string::npos) << name << " in " << json;
  return at == std::string::npos ? 0 : std::stoull(json.substr(at + field.size()));
}

class WarmMainTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    servers_ = new std::vector<MemcachedServer>();
    for (int i = 0; i < 3; ++i) {
      servers_->emplace_back();
    }
  }
  static void TearDownTestSuite() {
    delete servers_;
    servers_ = nullptr;
  }
  void SetUp() override {
    for (auto& server : *servers_) {
      ASSERT_EQ(server.command("flush_all"), "OK\r\n");
    }
  }
  static auto specs(std::size_t count) -> std::string {
    std::string out;
    for (std::size_t i = 0; i < count; ++i) {
      out += i == 0 ? "" : ",";
      out += (*servers_)[i].spec();
    }
    return out;
  }
  // Stores key:0 ... through libmemcached (modula) over the first `count` servers.
  static void fill(std::size_t count, std::size_t keys) {
    memcached_st* memc = memcached_create(nullptr);
    ASSERT_NE(memc, nullptr);
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(memcached_server_add(memc, "127.0.0.1", (*servers_)[i].port()), MEMCACHED_SUCCESS);
    }
    for (std::size_t k = 0; k < keys; ++k) {
      const std::string key = "key:" + std::to_string(k);
      const std::string value = "value:" + std::to_string(k);
      ASSERT_EQ(memcached_set(memc, key.data(), key.size(), value.data(), value.size(), 600,
                              static_cast<std::uint32_t>(k)),
                MEMCACHED_SUCCESS);
    }
    memcached_free(memc);
  }
  static auto holds(std::size_t server, const std::string& key) -> bool {
    return (*servers_)[server].command("get " + key).starts_with("VALUE ");
  }
  static inline std::vector<MemcachedServer>* servers_ = nullptr;
};

TEST_F(WarmMainTest, WarmsTwoToThreeAndPrintsTheJsonSummary) {
  fill(2, 300);
  const std::vector<std::string> args = {"--from",
                                         "libmemcached-modula",
                                         "--from-servers",
                                         specs(2),
                                         "--to",
                                         "libmemcached-modula",
                                         "--to-servers",
                                         specs(3),
                                         "--ops-per-second",
                                         "0",
                                         "--json"};
  const RunResult run = run_binary(args);
  ASSERT_EQ(run.status, tool::kExitOk) << run;
  EXPECT_EQ(run.err, "");  // not a terminal: no progress line
  ASSERT_TRUE(run.out.starts_with("{\"servers\":[{\"server\":\"127.0.0.1:")) << run.out;
  ASSERT_TRUE(run.out.ends_with("}\n")) << run.out;
  EXPECT_EQ(run.out.find('\n'), run.out.size() - 1);
  // Every key whose modulo server changed is on its new server, and only there.
  const auto old_ring =
      memshard::make_locator("libmemcached-modula", memshard::parse_servers(specs(2)));
  const auto new_ring =
      memshard::make_locator("libmemcached-modula", memshard::parse_servers(specs(3)));
  std::uint64_t moved = 0;
  for (int k = 0; k < 300; ++k) {
    const std::string key = "key:" + std::to_string(k);
    const std::size_t was = old_ring.locate(key);
    const std::size_t is = new_ring.locate(key);
    EXPECT_TRUE(holds(is, key)) << key;
    if (was != is) {
      ++moved;
      EXPECT_FALSE(holds(was, key)) << key;
    }
  }
  ASSERT_GT(moved, 100U);
  const std::size_t total = run.out.find("\"total\":");
  ASSERT_NE(total, std::string::npos);
  EXPECT_EQ(json_number(run.out, "eligible", total), moved);
  EXPECT_EQ(json_number(run.out, "copied", total), moved);
  // The second server also lists what was copied onto it from the first.
  EXPECT_GE(json_number(run.out, "scanned", total), 300U);
  EXPECT_NE(run.out.find("\"done\":true", total), std::string::npos);
  EXPECT_EQ(run.out.find("\"error\""), std::string::npos);

  // Again: nothing left to move (the old copies are gone), exit 0.
  const RunResult again = run_in_process(args);
  EXPECT_EQ(again.status, tool::kExitOk) << again;
  EXPECT_EQ(json_number(again.out, "eligible", again.out.find("\"total\":")), 0U);
}

TEST_F(WarmMainTest, HumanSummaryAndAServerThatCannotBeListed) {
  fill(1, 50);
  MemcachedServer gone;
  const std::string gone_spec = gone.spec();
  gone.stop();
  const RunResult run =
      run_binary({"--profile", "libmemcached-modula", "--server", (*servers_)[0].spec(), "--server",
                  gone_spec, "--to-servers", specs(2), "--quiet"});
  EXPECT_EQ(run.status, tool::kExitIncomplete) << run;
  EXPECT_NE(run.err.find("memshard-warm: " + gone_spec + ": cannot connect"), std::string::npos)
      << run;
  EXPECT_NE(run.out.find((*servers_)[0].spec() + ": scanned 50, eligible "), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("total: scanned 50"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(gone_spec + ": scanned 0"), std::string::npos) << run.out;
}

TEST_F(WarmMainTest, UsageAndConfigurationErrorsExitTwoWithoutATrace) {
  const RunResult missing = run_binary({"--from", "libmemcached-modula"});
  EXPECT_EQ(missing.status, tool::kExitError);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err,
            "memshard-warm: missing --from-servers LIST, the old fleet's servers\n"
            "Try 'memshard-warm --help' for more information.\n");
  const RunResult profile = run_binary(
      {"--from", "no-such-profile", "--from-servers", specs(1), "--to-servers", specs(2)});
  EXPECT_EQ(profile.status, tool::kExitError);
  EXPECT_TRUE(profile.err.starts_with("memshard-warm: unknown profile (known: ")) << profile;
  EXPECT_EQ(profile.err.find("terminate"), std::string::npos);
  const RunResult server = run_binary(
      {"--from", "libmemcached-modula", "--from-servers", "a:0", "--to-servers", specs(2)});
  EXPECT_EQ(server.status, tool::kExitError);
  EXPECT_TRUE(server.err.starts_with("memshard-warm: ")) << server;
  EXPECT_EQ(server.out, "");
}

TEST_F(WarmMainTest, HelpSaysItDoesNotCommit) {
  const RunResult help = run_binary({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(help.out.starts_with("Usage: memshard-warm --from PROFILE")) << help.out;
  EXPECT_NE(help.out.find("does not switch anything"), std::string::npos);
  EXPECT_NE(help.out.find("commit_migration"), std::string::npos);
  const RunResult version = run_binary({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_TRUE(version.out.starts_with("memshard-warm (memshard) ")) << version.out;
}

}  // namespace
}  // namespace warm_main_test
