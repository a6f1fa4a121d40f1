// SPDX-License-Identifier: MIT
// get_run_test.cpp: memshard-get's run() and get_key() in process, against
// real memcached servers holding exactly what the real clients stored (the
// items of tests/golden/values/, written raw with their flags): the exact
// line of each value, a miss, a codec error, an invalid key, a server that is
// down, keys from the input, a key prefix, and the exit statuses.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <memshard/client/make_client.hpp>
#include <memshard/codecs/make_codec.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "get/command_line.hpp"
#include "get/output.hpp"
#include "get/run.hpp"
#include "support/child_process.hpp"
#include "support/server_set.hpp"
#include "support/value_table.hpp"

namespace get_run_test {
namespace {

namespace tool = memshard::get_tool;
using memshard::testing::RunResult;
using memshard::testing::ServerSet;
using memshard::testing::ValueCase;

constexpr std::string_view kProfile = "libmemcached-modula";

/// golden_case: case `id` of the value table `file`.
auto golden_case(std::string_view file, std::string_view id) -> ValueCase {
  const auto path = std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values" / file;
  for (ValueCase& each : memshard::testing::read_value_cases(path)) {
    if (each.id == id) {
      return each;
    }
  }
  ADD_FAILURE() << "no case " << id << " in " << path;
  return {};
}

/// golden_text: the text of value `name` of values.txt.
auto golden_text(std::string_view name) -> std::string {
  const auto dir = std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values";
  for (const auto& [each, value] : memshard::testing::read_value_set(dir)) {
    if (each == name) {
      return value.as_string();
    }
  }
  ADD_FAILURE() << "no value " << name;
  return {};
}

/// run_in_process: run() with `args`, and `input` on its input stream.
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

auto join_lines(const std::vector<std::string>& lines) -> std::string {
  std::string text;
  for (const std::string& line : lines) {
    text.append(line).append("\n");
  }
  return text;
}

class GetRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(2); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  /// fleet: the tool's placement options for the two servers.
  static auto fleet() -> std::vector<std::string> {
    return {"--profile", std::string(kProfile), "--server", (*servers_)[0].spec(),
            "--server",  (*servers_)[1].spec()};
  }
  static auto client(memshard::ClientOptions options = {})
      -> memshard::ShardedClient<memshard::AnyLocator> {
    return memshard::make_client(kProfile, servers_->list(), {}, std::move(options));
  }
  /// store: `bytes` with `flags` under `key`, raw, as the peer client stored them.
  static void store(std::string_view key, std::string_view bytes, std::uint32_t flags) {
    auto writer = client();
    const memshard::Status stored = writer.set(key, bytes, {}, flags);
    ASSERT_TRUE(stored.ok()) << stored.message();
  }
  /// store_golden: item `name` of `golden` under "<prefix><name>".
  static void store_golden(const ValueCase& golden, std::string_view name,
                           std::string_view prefix) {
    const memshard::testing::ValueItem* item = golden.item(name);
    ASSERT_NE(item, nullptr) << name;
    ASSERT_FALSE(item->refused) << name;
    store(std::string(prefix) + std::string(name), item->bytes, item->flags);
  }
  /// server: the endpoint the tool names for `key`.
  static auto server(std::string_view key) -> std::string {
    const std::vector<memshard::Server> list = servers_->list();
    return list[memshard::make_locator(kProfile, list).locate(key)].endpoint();
  }
  /// start: a line's {"key":K,"server":S part, for a plain ASCII key.
  static auto start(std::string_view key) -> std::string {
    return "{\"key\":\"" + std::string(key) + "\",\"server\":\"" + server(key) + "\"";
  }

  static inline std::unique_ptr<ServerSet> servers_;
};

TEST_F(GetRunTest, PhpMemcachedItemsPrintAsTheirValues) {
  const ValueCase php = golden_case("php_memcached.values", "php-memcached-default");
  const std::vector<std::string> names = {"map",   "float3_25", "float1_3", "float1e21",
                                          "int42", "intm7",     "int2p40",  "true",
                                          "false", "ascii",     "utf8",     "str3000"};
  for (const std::string& name : names) {
    store_golden(php, name, "php:");
  }
  store("php:flags8", "x", 8);  // type 8: no php-memcached type
  std::vector<std::string> keys;
  for (const std::string& name : names) {
    keys.push_back("php:" + name);
  }
  keys.emplace_back("php:absent");
  keys.emplace_back("php:flags8");
  const RunResult run = run_in_process(with(with(fleet(), {"--codec", "php-memcached"}), keys));
  EXPECT_EQ(run.status, tool::kExitKeyErrors) << run;
  EXPECT_EQ(run.err, "");
  std::string str3000;
  for (const char c : golden_text("str3000")) {
    str3000.append(c == '\n' ? "\\n" : std::string(1, c));
  }
  const std::vector<std::string> expected = {
      start("php:map") + ",\"flags\":4,\"type\":\"map\",\"value\":{\"a\":1,\"b\":[2,3]}}",
      start("php:float3_25") + ",\"flags\":2,\"type\":\"float\",\"value\":3.25}",
      start("php:float1_3") + ",\"flags\":2,\"type\":\"float\",\"value\":0.3333333333333333}",
      start("php:float1e21") + ",\"flags\":2,\"type\":\"float\",\"value\":1e+21}",
      start("php:int42") + ",\"flags\":1,\"type\":\"int\",\"value\":42}",
      start("php:intm7") + ",\"flags\":1,\"type\":\"int\",\"value\":-7}",
      start("php:int2p40") + ",\"flags\":1,\"type\":\"int\",\"value\":1099511627776}",
      start("php:true") + ",\"flags\":3,\"type\":\"bool\",\"value\":true}",
      start("php:false") + ",\"flags\":3,\"type\":\"bool\",\"value\":false}",
      start("php:ascii") + ",\"flags\":0,\"type\":\"string\",\"value\":\"hello, memshard\"}",
      start("php:utf8") +
          ",\"flags\":0,\"type\":\"string\",\"value\":\"h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 "
          "\xf0\x9f\x98\x80\"}",
      start("php:str3000") + ",\"flags\":80,\"type\":\"string\",\"value\":\"" + str3000 + "\"}",
      start("php:absent") + ",\"type\":\"miss\"}",
  };
  const std::vector<std::string> lines = memshard::testing::lines_of(run.out);
  ASSERT_EQ(lines.size(), expected.size() + 1) << run;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(lines[i], expected[i]) << "line " << i + 1;
  }
  // The item the codec cannot decode: its flags, and the codec's reason.
  const std::string& error = lines.back();
  EXPECT_TRUE(error.starts_with(start("php:flags8") +
                                ",\"flags\":8,\"error\":\"codec_error: unknown_flags: "
                                "php-memcached"))
      << error;
  EXPECT_TRUE(error.ends_with("\"}")) << error;
  EXPECT_TRUE(run.out.ends_with("\n"));

  // Without the failing key, every key was read: exit 0 (a miss is not an error).
  const RunResult good =
      run_in_process(with(fleet(), {"--codec=php-memcached", "php:map", "php:absent", "php:true"}));
  EXPECT_EQ(good.status, tool::kExitOk) << good;
  EXPECT_EQ(good.out, join_lines({expected[0], expected[12], expected[7]}));
}

// php-memcached stores a double as PHP prints it (flags 2): -0.0 as "-0",
// 1.0 as "1". The tool prints them as floats, which a JSON reader reads back
// as floats, the sign of zero included.
TEST_F(GetRunTest, PhpFloatsThatLookLikeIntegersPrintAsFloats) {
  store("php:minus_zero", "-0", 2);
  store("php:one", "1", 2);
  store("php:half", "0.5", 2);
  store("php:big", "1.0E+300", 2);
  const RunResult run = run_in_process(with(
      fleet(), {"--codec", "php-memcached", "php:minus_zero", "php:one", "php:half", "php:big"}));
  EXPECT_EQ(run.status, tool::kExitOk) << run;
  EXPECT_EQ(run.out,
            join_lines({start("php:minus_zero") + ",\"flags\":2,\"type\":\"float\",\"value\":-0.0}",
                        start("php:one") + ",\"flags\":2,\"type\":\"float\",\"value\":1.0}",
                        start("php:half") + ",\"flags\":2,\"type\":\"float\",\"value\":0.5}",
                        start("php:big") + ",\"flags\":2,\"type\":\"float\",\"value\":1e+300}"}));
}

TEST_F(GetRunTest, PhpObjectsAndOtherSerializersOfPhpMemcached) {
  // An object is recognised, not decoded: its format and bytes.
  store("php:object", "O:8:\"stdClass\":0:{}", 4);
  // The same map under igbinary, JSON and msgpack, each with its own codec settings.
  for (const std::string serializer : {"igbinary", "json", "msgpack"}) {
    store_golden(golden_case("php_memcached.values", "php-memcached-" + serializer), "map",
                 serializer + ":");
  }
  const RunResult object =
      run_in_process(with(fleet(), {"--codec", "php-memcached", "php:object"}));
  EXPECT_EQ(object.status, tool::kExitOk) << object;
  EXPECT_EQ(object.out, start("php:object") +
                            ",\"flags\":4,\"type\":\"serialized\",\"format\":\"php-serialize\","
                            "\"base64\":\"Tzo4OiJzdGRDbGFzcyI6MDp7fQ==\"}\n");
  for (const std::string serializer : {"igbinary", "json", "msgpack"}) {
    const ValueCase golden = golden_case("php_memcached.values", "php-memcached-" + serializer);
    const RunResult run = run_in_process(
        with(fleet(), {"--codec", "php-memcached:serializer=" + serializer, serializer + ":map"}));
    EXPECT_EQ(run.status, tool::kExitOk) << run;
    EXPECT_EQ(run.out, start(serializer + ":map") +
                           ",\"flags\":" + std::to_string(golden.item("map")->flags) +
                           ",\"type\":\"map\",\"value\":{\"a\":1,\"b\":[2,3]}}\n")
        << serializer;
  }
}

TEST_F(GetRunTest, DalliItemsUnderTheDalliCodec) {
  const ValueCase dalli = golden_case("dalli.values", "dalli-default");
  const std::vector<std::string> names = {"map",  "float3_25", "float1_3", "int2p40",
                                          "true", "ascii",     "utf8"};
  for (const std::string& name : names) {
    store_golden(dalli, name, "rb:");
  }
  const RunResult run =
      run_in_process(with(fleet(), {"--codec", "dalli", "rb:map", "rb:float3_25", "rb:float1_3",
                                    "rb:int2p40", "rb:true", "rb:ascii", "rb:utf8"}));
  EXPECT_EQ(run.status, tool::kExitOk) << run;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(
      run.out,
      join_lines({
          start("rb:map") + ",\"flags\":1,\"type\":\"map\",\"value\":{\"a\":1,\"b\":[2,3]}}",
          start("rb:float3_25") + ",\"flags\":1,\"type\":\"float\",\"value\":3.25}",
          start("rb:float1_3") + ",\"flags\":1,\"type\":\"float\",\"value\":0.3333333333333333}",
          start("rb:int2p40") + ",\"flags\":1,\"type\":\"int\",\"value\":1099511627776}",
          start("rb:true") + ",\"flags\":1,\"type\":\"bool\",\"value\":true}",
          start("rb:ascii") + ",\"flags\":1,\"type\":\"string\",\"value\":\"hello, memshard\"}",
          start("rb:utf8") +
              ",\"flags\":1,\"type\":\"string\",\"value\":\"h\xc3\xa9llo w\xc3\xb6rld "
              "\xe2\x9c\x93 \xf0\x9f\x98\x80\"}",
      }));
  // Read by the wrong codec, the Marshal bytes are no php-memcached integer.
  const RunResult wrong = run_in_process(with(fleet(), {"--codec", "php-memcached", "rb:map"}));
  EXPECT_EQ(wrong.status, tool::kExitKeyErrors) << wrong;
  EXPECT_TRUE(wrong.out.starts_with(start("rb:map") + ",\"flags\":1,\"error\":\"codec_error: "))
      << wrong.out;
  // And by the default codec, plain, they are a string of control characters.
  const RunResult plain = run_in_process(with(fleet(), {"rb:true"}));
  EXPECT_EQ(plain.status, tool::kExitOk) << plain;
  EXPECT_EQ(plain.out,
            start("rb:true") + ",\"flags\":1,\"type\":\"string\",\"value\":\"\\u0004\\bT\"}\n");
}

TEST_F(GetRunTest, PlainIsTheDefaultCodec) {
  store("plain:text", "tab\there \"quoted\"", 123);
  store("plain:binary", std::string_view("\xff\x00\x01", 3), 0);
  store("plain:empty", "", 7);
  const RunResult run =
      run_in_process(with(fleet(), {"plain:text", "plain:binary", "plain:empty"}));
  EXPECT_EQ(run.status, tool::kExitOk) << run;
  EXPECT_EQ(run.out,
            join_lines({
                start("plain:text") +
                    ",\"flags\":123,\"type\":\"string\",\"value\":\"tab\\there \\\"quoted\\\"\"}",
                start("plain:binary") +
                    ",\"flags\":0,\"type\":\"bytes\",\"value\":{\"base64\":\"/wAB\"}}",
                start("plain:empty") + ",\"flags\":7,\"type\":\"string\",\"value\":\"\"}",
            }));
}

TEST_F(GetRunTest, InvalidKeysAreErrorLinesAndTheOthersAreStillRead) {
  store("ok", "yes", 0);
  const std::string long_key(251, 'k');
  const RunResult run =
      run_in_process(with(fleet(), {"bad key", "ok", "--", "", long_key, "ctl\x01"}));
  EXPECT_EQ(run.status, tool::kExitKeyErrors) << run;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(
      run.out,
      join_lines({
          start("bad key") + ",\"error\":\"invalid_key: key has a space at offset 3\"}",
          start("ok") + ",\"flags\":0,\"type\":\"string\",\"value\":\"yes\"}",
          start("") + ",\"error\":\"invalid_key: key is empty\"}",
          start(long_key) + ",\"error\":\"invalid_key: key is 251 bytes long, the limit is 250\"}",
          "{\"key\":\"ctl\\u0001\",\"server\":\"" + server("ctl\x01") +
              "\",\"error\":\"invalid_key: key has a control byte 0x01 at offset 3\"}",
      }));
}

TEST_F(GetRunTest, KeysFromStandardInput) {
  store("in:1", "one", 0);
  store("in:2", "two", 0);
  const std::string long_line(2U << 20U, 'x');  // over the 1 MiB read buffer
  const RunResult run =
      run_in_process(fleet(), "in:1\r\nin:absent\n\nin:2\n" + long_line + "\nin:1");
  EXPECT_EQ(run.status, tool::kExitKeyErrors) << run.err;
  const std::vector<std::string> lines = memshard::testing::lines_of(run.out);
  ASSERT_EQ(lines.size(), 6U) << run.err;
  EXPECT_EQ(lines[0], start("in:1") + ",\"flags\":0,\"type\":\"string\",\"value\":\"one\"}");
  EXPECT_EQ(lines[1], start("in:absent") + ",\"type\":\"miss\"}");
  EXPECT_EQ(lines[2], start("") + ",\"error\":\"invalid_key: key is empty\"}");
  EXPECT_EQ(lines[3], start("in:2") + ",\"flags\":0,\"type\":\"string\",\"value\":\"two\"}");
  // The line too long to keep is an invalid key, named by its last bytes.
  ASSERT_TRUE(lines[4].starts_with("{\"key\":\"")) << lines[4].substr(0, 100);
  const std::size_t key_end = lines[4].find('"', 8);
  ASSERT_NE(key_end, std::string::npos);
  EXPECT_EQ(lines[4].substr(8, key_end - 8).find_first_not_of('x'), std::string::npos);
  EXPECT_TRUE(
      lines[4].ends_with(",\"error\":\"invalid_key: key is 2097152 bytes long, the limit "
                         "is 250\"}"))
      << lines[4].substr(lines[4].size() - 200);
  EXPECT_EQ(lines[5], start("in:1") + ",\"flags\":0,\"type\":\"string\",\"value\":\"one\"}");

  // Only valid keys, and no input at all: exit 0.
  EXPECT_EQ(run_in_process(fleet(), "in:1\nin:absent\n").status, tool::kExitOk);
  const RunResult empty = run_in_process(fleet(), "");
  EXPECT_EQ(empty.status, tool::kExitOk) << empty;
  EXPECT_EQ(empty.out, "");
  // KEY arguments win: the input is not read.
  const RunResult args = run_in_process(with(fleet(), {"in:2"}), "in:1\n");
  EXPECT_EQ(args.out, start("in:2") + ",\"flags\":0,\"type\":\"string\",\"value\":\"two\"}\n");
}

TEST_F(GetRunTest, KeyPrefixAndItsHashing) {
  memshard::ClientOptions options;
  options.key_prefix = "app:";
  options.prefix_hashing = memshard::PrefixHashing::kPrefixedKey;
  // Keys whose server differs between the bare and the prefixed key show
  // that the tool places them as the writer did.
  auto writer = client(options);
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) {
    const std::string key = "user:" + std::to_string(i);
    ASSERT_TRUE(writer.set(key, "v" + std::to_string(i)).ok());
    keys.push_back(key);
  }
  const RunResult run = run_in_process(
      with(with(fleet(), {"--prefix", "app:", "--prefix-hashing", "prefixed"}), keys));
  EXPECT_EQ(run.status, tool::kExitOk) << run;
  std::vector<std::string> expected;
  bool some_moved = false;
  for (int i = 0; i < 20; ++i) {
    const std::string& key = keys[static_cast<std::size_t>(i)];
    const std::string endpoint = writer.server_for(key).endpoint();
    some_moved = some_moved || endpoint != server(key);
    expected.push_back("{\"key\":\"" + key + "\",\"server\":\"" + endpoint +
                       "\",\"flags\":0,\"type\":\"string\",\"value\":\"v" + std::to_string(i) +
                       "\"}");
  }
  EXPECT_TRUE(some_moved);
  EXPECT_EQ(run.out, join_lines(expected));
  // Without the prefix, nobody stored these keys.
  const RunResult bare = run_in_process(with(fleet(), {"user:0"}));
  EXPECT_EQ(bare.out, start("user:0") + ",\"type\":\"miss\"}\n");
  // The prefix counts in the key's length.
  const RunResult too_long =
      run_in_process(with(fleet(), {"--prefix=app:", std::string(247, 'k')}));
  EXPECT_EQ(too_long.status, tool::kExitKeyErrors);
  EXPECT_NE(
      too_long.out.find("\"error\":\"invalid_key: key is 251 bytes long, the limit is 250\"}"),
      std::string::npos)
      << too_long.out;
}

TEST_F(GetRunTest, AServerThatIsDownIsAnErrorLine) {
  store("up", "1", 0);
  // The server that does not hold "up" goes down, with a key of its own.
  const std::size_t down = server("up") == (*servers_)[0].spec() ? 1 : 0;
  std::string down_key;
  for (int i = 0; i < 1000 && down_key.empty(); ++i) {
    const std::string key = std::string("k").append(std::to_string(i));
    if (server(key) == (*servers_)[down].spec()) {
      down_key = key;
    }
  }
  ASSERT_FALSE(down_key.empty());
  (*servers_)[down].stop();
  const RunResult run = run_in_process(with(fleet(), {down_key, "up"}));
  EXPECT_EQ(run.status, tool::kExitKeyErrors) << run;
  const std::vector<std::string> lines = memshard::testing::lines_of(run.out);
  ASSERT_EQ(lines.size(), 2U) << run;
  EXPECT_TRUE(lines[0].starts_with(start(down_key) + ",\"error\":\"connection_failure: "))
      << lines[0];
  EXPECT_EQ(lines[1], start("up") + ",\"flags\":0,\"type\":\"string\",\"value\":\"1\"}");
}

TEST_F(GetRunTest, GetKeyGivesEachKindOfLine) {
  store("k:map", golden_case("php_memcached.values", "php-memcached-default").item("map")->bytes,
        4);
  store("k:bad", "12x", 1);  // a php-memcached integer that is not a number
  auto reader = client();
  const memshard::AnyCodec php = memshard::make_codec_from_spec("php-memcached");
  const tool::KeyOutcome hit = tool::get_key(reader, php, "k:map");
  EXPECT_TRUE(hit.ok);
  EXPECT_EQ(hit.line,
            start("k:map") + ",\"flags\":4,\"type\":\"map\",\"value\":{\"a\":1,\"b\":[2,3]}}");
  const tool::KeyOutcome miss = tool::get_key(reader, php, "k:none");
  EXPECT_TRUE(miss.ok);
  EXPECT_EQ(miss.line, start("k:none") + ",\"type\":\"miss\"}");
  const tool::KeyOutcome bad = tool::get_key(reader, php, "k:bad");
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.line, tool::error_line("k:bad", server("k:bad"), 1,
                                       tool::codec_error_message(php.decode("12x", 1).error())));
  const tool::KeyOutcome invalid = tool::get_key(reader, php, "a b");
  EXPECT_FALSE(invalid.ok);
  EXPECT_EQ(invalid.line,
            start("a b") + ",\"error\":\"invalid_key: key has a space at offset 1\"}");
}

TEST_F(GetRunTest, ConfigurationErrorsExitTwoBeforeAnyKey) {
  store("k", "v", 0);
  const RunResult profile =
      run_in_process({"--profile", "no-such-profile", "--server", (*servers_)[0].spec(), "k"});
  EXPECT_EQ(profile.status, tool::kExitError);
  EXPECT_EQ(profile.out, "");
  EXPECT_TRUE(profile.err.starts_with("memshard-get: unknown profile (known: ")) << profile.err;
  const RunResult spec =
      run_in_process({"--profile", std::string(kProfile), "--server", "host:0", "k"});
  EXPECT_EQ(spec.status, tool::kExitError);
  EXPECT_EQ(spec.out, "");
  EXPECT_TRUE(spec.err.starts_with("memshard-get: ")) << spec.err;
  const RunResult codec = run_in_process(with(fleet(), {"--codec", "pickle", "k"}));
  EXPECT_EQ(codec.status, tool::kExitError);
  EXPECT_EQ(codec.out, "");
  EXPECT_TRUE(codec.err.starts_with("memshard-get: --codec: unknown codec (known: ")) << codec.err;
  EXPECT_TRUE(codec.err.ends_with("\nTry 'memshard-get --help' for more information.\n"))
      << codec.err;
  const RunResult list = run_in_process({"--list-codecs"});
  EXPECT_EQ(list.status, tool::kExitOk);
  EXPECT_TRUE(list.out.starts_with("php-memcached\n")) << list.out;
}

}  // namespace
}  // namespace get_run_test
