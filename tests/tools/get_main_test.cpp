// SPDX-License-Identifier: MIT
// get_main_test.cpp: the built memshard-get binary end to end on a real
// memcached server, for what only it shows: its exit statuses (0 every key
// read, 1 some key failed, 2 usage or configuration error), keys read from
// standard input, answers on standard output, errors on standard error, and
// --help, --version and --list-codecs. The binary must agree with run().

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <memshard/client/make_client.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "get/command_line.hpp"
#include "get/run.hpp"
#include "support/child_process.hpp"
#include "support/server_set.hpp"
#include "support/value_table.hpp"

namespace get_main_test {
namespace {

namespace tool = memshard::get_tool;
using memshard::testing::RunResult;
using memshard::testing::ServerSet;

constexpr const char* kGetPath = MEMSHARD_GET_PATH;

auto run_binary(const std::vector<std::string>& args, const std::string& input = {}) -> RunResult {
  return memshard::testing::run_program(kGetPath, args, input);
}

auto run_in_process(const std::vector<std::string>& args, const std::string& input = {})
    -> RunResult {
  const std::vector<std::string_view> views(args.begin(), args.end());
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream errors;
  RunResult result;
  result.status = tool::run(views, in, out, errors);
  result.out = out.str();
  result.err = errors.str();
  return result;
}

auto with(std::vector<std::string> args, const std::vector<std::string>& more)
    -> std::vector<std::string> {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

class GetMainTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(1); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  static auto spec() -> std::string { return (*servers_)[0].spec(); }
  static auto fleet() -> std::vector<std::string> {
    return {"--profile", "php-memcached", "--server", spec()};
  }
  static void store(std::string_view key, std::string_view bytes, std::uint32_t flags) {
    auto writer = memshard::make_client("php-memcached", servers_->list());
    const memshard::Status stored = writer.set(key, bytes, {}, flags);
    ASSERT_TRUE(stored.ok()) << stored.message();
  }
  /// expect_same_run: the binary and run() agree on `args` and `input`, with `status`.
  static auto expect_same_run(const std::vector<std::string>& args, const std::string& input,
                              int status) -> RunResult {
    const RunResult binary = run_binary(args, input);
    const RunResult in_process = run_in_process(args, input);
    EXPECT_EQ(binary.status, status) << binary;
    EXPECT_EQ(in_process.status, status) << in_process;
    EXPECT_EQ(binary.out, in_process.out);
    EXPECT_EQ(binary.err, in_process.err);
    return binary;
  }

  static inline std::unique_ptr<ServerSet> servers_;
};

TEST_F(GetMainTest, EveryKeyReadExitsZero) {
  const auto path = std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values" / "php_memcached.values";
  const auto cases = memshard::testing::read_value_cases(path);
  ASSERT_FALSE(cases.empty());
  const memshard::testing::ValueItem* map = cases.front().item("map");
  ASSERT_NE(map, nullptr);
  store("user:42", map->bytes, map->flags);
  store("pi", "3.25", 2);
  const std::string server = "\"server\":\"" + spec() + "\"";
  const RunResult run = expect_same_run(
      with(fleet(), {"--codec", "php-memcached", "user:42", "user:43", "pi"}), {}, tool::kExitOk);
  EXPECT_EQ(run.out, "{\"key\":\"user:42\"," + server +
                         ",\"flags\":4,\"type\":\"map\",\"value\":{\"a\":1,\"b\":[2,3]}}\n"
                         "{\"key\":\"user:43\"," +
                         server + ",\"type\":\"miss\"}\n{\"key\":\"pi\"," + server +
                         ",\"flags\":2,\"type\":\"float\",\"value\":3.25}\n");
  EXPECT_EQ(run.err, "");

  // The same keys on standard input, one per line.
  const RunResult input = expect_same_run(with(fleet(), {"--codec=php-memcached"}),
                                          "user:42\nuser:43\r\npi\n", tool::kExitOk);
  EXPECT_EQ(input.out, run.out);
}

TEST_F(GetMainTest, SomeKeyFailedExitsOne) {
  store("odd", "x", 8);
  store("fine", "ok", 0);
  const RunResult run =
      expect_same_run(with(fleet(), {"--codec", "php-memcached", "odd", "fine", "no good"}), {},
                      tool::kExitKeyErrors);
  const std::vector<std::string> lines = memshard::testing::lines_of(run.out);
  ASSERT_EQ(lines.size(), 3U) << run;
  EXPECT_TRUE(lines[0].starts_with("{\"key\":\"odd\",\"server\":\"" + spec() +
                                   "\",\"flags\":8,\"error\":\"codec_error: "))
      << lines[0];
  EXPECT_EQ(lines[1], "{\"key\":\"fine\",\"server\":\"" + spec() +
                          "\",\"flags\":0,\"type\":\"string\",\"value\":\"ok\"}");
  EXPECT_EQ(lines[2], "{\"key\":\"no good\",\"server\":\"" + spec() +
                          "\",\"error\":\"invalid_key: key has a space at offset 2\"}");
  EXPECT_EQ(run.err, "");
}

TEST_F(GetMainTest, UsageAndConfigurationErrorsExitTwoWithNothingPrinted) {
  const RunResult missing = expect_same_run({"--profile", "php-memcached", "k"}, {}, 2);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err,
            "memshard-get: missing --server SPEC (at least one server)\n"
            "Try 'memshard-get --help' for more information.\n");
  const RunResult codec = expect_same_run(with(fleet(), {"--codec", "yaml", "k"}), {}, 2);
  EXPECT_EQ(codec.out, "");
  EXPECT_TRUE(codec.err.starts_with("memshard-get: --codec: unknown codec (known: ")) << codec;
  const RunResult setting =
      expect_same_run(with(fleet(), {"--codec", "dalli:serializer=YAML", "k"}), {}, 2);
  EXPECT_TRUE(setting.err.starts_with("memshard-get: --codec: dalli setting serializer wants "))
      << setting;
  const RunResult profile =
      expect_same_run({"--profile", "nope", "--server", spec(), "k"}, "k\n", 2);
  EXPECT_EQ(profile.out, "");
  EXPECT_TRUE(profile.err.starts_with("memshard-get: unknown profile (known: ")) << profile;
  EXPECT_EQ(profile.err.find("terminate"), std::string::npos);
  const RunResult unknown = run_binary(with(fleet(), {"--frobnicate"}));
  EXPECT_EQ(unknown.status, 2);
  EXPECT_TRUE(unknown.err.starts_with("memshard-get: unknown option '--frobnicate'")) << unknown;
}

TEST_F(GetMainTest, HelpVersionAndListCodecs) {
  const RunResult help = expect_same_run({"--help"}, "k\n", 0);
  EXPECT_TRUE(help.out.starts_with("Usage: memshard-get --profile NAME --server SPEC")) << help;
  EXPECT_NE(help.out.find("not valid UTF-8"), std::string::npos);
  EXPECT_EQ(help.err, "");
  const RunResult version = expect_same_run({"--version"}, {}, 0);
  EXPECT_TRUE(version.out.starts_with("memshard-get (memshard) ")) << version;
  const RunResult codecs = expect_same_run({"--list-codecs"}, {}, 0);
  EXPECT_EQ(codecs.out,
            "php-memcached\nphp-memcache\nspymemcached\npython-memcache\npymemcache\npylibmc\n"
            "dalli\ncache-memcached\ncache-memcached-fast\nphp-session\nplain\n");
}

}  // namespace
}  // namespace get_main_test
