// SPDX-License-Identifier: MIT
// locate_locate_test.cpp: memshard-locate's placements and its key -> server
// lines in process, checked against make_locator over servers written out by
// hand, for every kind of profile and server spec, and its invalid lines.

#include "locate/locate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <memshard/placement.hpp>
#include <memshard/placement/key_prefix.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tools/locate_support.hpp"

namespace locate_locate_test {
namespace {

namespace tool = memshard::locate_tool;
using tool::testing::expected_lines;
using tool::testing::join_lines;
using tool::testing::key_error_line;
using tool::testing::lines_of;
using tool::testing::locate_in_process;
using tool::testing::random_keys;
using tool::testing::RunResult;
using tool::testing::same_lines;
using tool::testing::server;
using tool::testing::split_fields;

/// ServerCase: a --server argument and the Server it must mean, written out
/// by hand so that the expected placement does not depend on the parser.
struct ServerCase {
  std::string spec;
  memshard::Server server;
};

/// LocateCase: one configuration to place keys with.
struct LocateCase {
  std::string label;
  std::string profile;
  std::string hash;        // empty: no --hash
  std::size_t points = 0;  // 0: no --points
  std::vector<ServerCase> servers;
  std::optional<bool> weighted = {};  // unset: no --weighted
  std::string hash_tag = {};          // empty: no --hash-tag

  [[nodiscard]] auto args() const -> tool::SideArgs {
    tool::SideArgs side;
    side.profile = profile;
    if (!hash.empty()) {
      side.hash = hash;
    }
    if (points != 0) {
      side.points = points;
    }
    side.weighted = weighted;
    if (!hash_tag.empty()) {
      side.hash_tag = hash_tag;
    }
    for (const ServerCase& entry : servers) {
      side.server_specs.push_back(entry.spec);
    }
    return side;
  }
  [[nodiscard]] auto fleet() const -> std::vector<memshard::Server> {
    std::vector<memshard::Server> out;
    for (const ServerCase& entry : servers) {
      out.push_back(entry.server);
    }
    return out;
  }
  /// expected: the lines for `keys`, computed with the library alone.
  [[nodiscard]] auto expected(const std::vector<std::string>& keys) const -> std::string {
    const std::vector<memshard::Server> list = fleet();
    return expected_lines(memshard::make_locator(profile, list, {hash, points, weighted, hash_tag}),
                          list, keys);
  }
  /// run: the tool's lines for `input`.
  [[nodiscard]] auto run(const std::string& input) const -> RunResult {
    return locate_in_process(tool::make_placement(args()), input);
  }
};

/// PrintTo: names a case in test output.
void PrintTo(const LocateCase& config, std::ostream* out) { *out << config.label; }

// A fleet with weights, a name, a non-default port and an IPv6 host.
auto mixed_fleet() -> std::vector<ServerCase> {
  return {{"10.0.0.1:11211", server("10.0.0.1", 11211)},
          {"10.0.0.2:11212:2", server("10.0.0.2", 11212, 2)},
          {"cache-c.example:11211:3:cache-c", server("cache-c.example", 11211, 3, "cache-c")},
          {"[2001:db8::7]:11300", server("2001:db8::7", 11300)}};
}

auto equal_fleet() -> std::vector<ServerCase> {
  return {{"10.2.0.1:11211", server("10.2.0.1", 11211)},
          {"10.2.0.2:11211", server("10.2.0.2", 11211)},
          {"10.3.0.3:22122", server("10.3.0.3", 22122)}};
}

auto locate_cases() -> std::vector<LocateCase> {
  const std::string kKetama = "libmemcached-ketama-weighted";
  // clang-format off
  return {
      {"KetamaWeightedMixedFleet", kKetama, "", 0, mixed_fleet()},
      {"KetamaWeightedFnv1Points80", kKetama, "fnv1_32", 80, mixed_fleet()},
      {"KetamaUnweighted", "libmemcached-ketama", "", 0,
       {{"cache-a:11211", server("cache-a", 11211)}, {"cache-b:11211", server("cache-b", 11211)},
        {"cache-c:11213", server("cache-c", 11213)}, {"[::1]:11211", server("::1", 11211)},
        {"192.168.1.5:11211:1:east", server("192.168.1.5", 11211, 1, "east")}}},
      {"KetamaWeightedBranchFnv1a", "libmemcached-ketama", "fnv1a_32", 0, mixed_fleet()},
      {"KetamaSpyMurmurPoints50", "libmemcached-ketama-spy", "murmur", 50,
       {{"10.1.0.1:11211", server("10.1.0.1", 11211)},
        {"10.1.0.2:11211", server("10.1.0.2", 11211)},
        {"10.1.0.3:22122", server("10.1.0.3", 22122)}}},
      {"Modula", "libmemcached-modula", "", 0,
       {{"m1:11211", server("m1", 11211)}, {"m2:11211:4", server("m2", 11211, 4)},
        {"m3:11211", server("m3", 11211)}, {"m4:11211", server("m4", 11211)},
        {"[fd00::5]:11211", server("fd00::5", 11211)}, {"m6:11211", server("m6", 11211)},
        {"m7:11211", server("m7", 11211)}}},
      {"ModuloCrc32Fnv1_64", "modulo-crc32", "fnv1_64", 0,
       {{"a.example:11211:0.5", server("a.example", 11211, 0.5)},
        {"b.example:11211", server("b.example", 11211)},
        {"c.example:11211", server("c.example", 11211)}}},
      {"RingCrc32NamesWithColons", "ring-crc32", "", 0,
       {{"10.0.0.1:11211:1:cache:a", server("10.0.0.1", 11211, 1, "cache:a")},
        {"10.0.0.2:11211:1:cache:b", server("10.0.0.2", 11211, 1, "cache:b")},
        {"[fd00::2]:11211:1:cache:c:2", server("fd00::2", 11211, 1, "cache:c:2")}}},
      {"RingCrc32Points7", "ring-crc32", "", 7,
       {{"r1:11211", server("r1", 11211)}, {"r2:11211", server("r2", 11211)},
        {"r3:11211", server("r3", 11211)}}},
      {"OneServer", kKetama, "", 0, {{"[::1]:11311:1:only", server("::1", 11311, 1, "only")}}},
      // --weighted is the library's option, and --hash-tag.
      {"SpymemcachedWeighted", "spymemcached-ketama", "", 0,
       {{"10.2.0.1:11211", server("10.2.0.1", 11211)},
        {"10.2.0.2:11211:2", server("10.2.0.2", 11211, 2)},
        {"10.2.0.3:11211:3", server("10.2.0.3", 11211, 3)}}, true},
      {"SpymemcachedUnweighted", "spymemcached-ketama", "", 0, equal_fleet(), false},
      {"SpymemcachedLibmemcachedWeighted", "spymemcached-ketama-libmemcached", "", 0,
       equal_fleet(), true},
      {"TwemproxyKetamaHashTag", "twemproxy-ketama", "", 0, equal_fleet(), {}, "{}"},
      {"TwemproxyModulaHashTag", "twemproxy-modula", "", 0, equal_fleet(), {}, "{}"},
  };
  // clang-format on
}

class LocateMatchesLibraryTest : public testing::TestWithParam<LocateCase> {};

TEST_P(LocateMatchesLibraryTest, ThousandRandomKeys) {
  const LocateCase& config = GetParam();
  const tool::Placement placement = tool::make_placement(config.args());
  EXPECT_EQ(placement.servers, config.fleet());
  std::vector<std::string> keys = random_keys(1000, 20240611);
  for (std::size_t i = 0; i < keys.size(); i += 3) {
    keys[i] = "user:{" + std::to_string(i % 7) + "}:" + keys[i].substr(0, 200);  // hash-tagged
  }
  const std::string expected = config.expected(keys);

  // Every server gets keys, so a tool that ignored part of the list would fail.
  std::set<std::string> indexes;
  for (const std::string& line : lines_of(expected)) {
    indexes.insert(split_fields(line).at(1));
  }
  ASSERT_EQ(indexes.size(), config.servers.size());

  const RunResult result = locate_in_process(placement, join_lines(keys));
  EXPECT_EQ(result.status, tool::kExitOk) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_TRUE(same_lines(result.out, expected));
}

INSTANTIATE_TEST_SUITE_P(Profiles, LocateMatchesLibraryTest, testing::ValuesIn(locate_cases()),
                         [](const testing::TestParamInfo<LocateCase>& param_info) {
                           return param_info.param.label;
                         });

const LocateCase kSmallFleet{"",
                             "libmemcached-ketama-weighted",
                             "",
                             0,
                             {{"a:11211", server("a", 11211)},
                              {"b:11211", server("b", 11211)},
                              {"c:11211", server("c", 11211)}}};

TEST(LocateKeysTest, ExactLineFormat) {
  const LocateCase config{"",
                          "libmemcached-ketama-weighted",
                          "",
                          0,
                          {{"[::1]:11211:1:a:b", server("::1", 11211, 1, "a:b")},
                           {"10.0.0.9:11299:3", server("10.0.0.9", 11299, 3)}}};
  const RunResult result = config.run("user:42\n");
  ASSERT_EQ(result.status, tool::kExitOk) << result.err;
  const std::size_t index =
      memshard::profiles::libmemcached_ketama_weighted(config.fleet()).locate("user:42");
  const std::array<std::string_view, 2> endpoints = {"[::1]:11211", "10.0.0.9:11299"};
  EXPECT_EQ(result.out,
            "user:42\t" + std::to_string(index) + "\t" + std::string(endpoints.at(index)) + "\n");
}

/// placed: the fields of each line the tool prints for `keys` under `profile` over `specs`.
auto placed(const std::string& profile, const std::vector<std::string>& specs,
            const std::vector<std::string>& keys) -> std::vector<std::vector<std::string>> {
  const RunResult result = locate_in_process(
      tool::make_placement(tool::testing::side(profile, specs)), join_lines(keys));
  EXPECT_EQ(result.status, tool::kExitOk) << result.err;
  std::vector<std::vector<std::string>> fields;
  for (const std::string& line : lines_of(result.out)) {
    fields.push_back(split_fields(line));
    EXPECT_EQ(fields.back().size(), 3U) << line;
  }
  EXPECT_EQ(fields.size(), keys.size());
  return fields;
}

TEST(LocateKeysTest, IndexFollowsServerOrderOnARing) {
  const std::vector<std::string> specs = {"a.example:11211", "b.example:11211:2",
                                          "c.example:11211"};
  const std::vector<std::string> keys = random_keys(1000, 7);
  const auto forward = placed("libmemcached-ketama-weighted", specs, keys);
  const auto reversed =
      placed("libmemcached-ketama-weighted", {specs[2], specs[1], specs[0]}, keys);
  ASSERT_EQ(forward.size(), reversed.size());
  std::set<std::string> used;
  for (std::size_t i = 0; i < forward.size(); ++i) {
    const std::vector<std::string>& f = forward[i];
    const std::vector<std::string>& r = reversed[i];
    // A ring places by server, not by position: the same server either way,
    // numbered by its position in each list.
    ASSERT_EQ(f.at(2), r.at(2)) << keys[i];
    ASSERT_EQ(std::stoul(f.at(1)) + std::stoul(r.at(1)), 2U) << keys[i];
    ASSERT_EQ(specs.at(std::stoul(f[1])).substr(0, f[2].size()), f[2]) << keys[i];
    used.insert(f[2]);
  }
  EXPECT_EQ(used.size(), 3U);
}

TEST(LocateKeysTest, IndexFollowsServerOrderOnModulo) {
  const std::vector<std::string> keys = random_keys(1000, 8);
  const auto forward = placed("modulo-crc32", {"a:11211", "b:11211"}, keys);
  const auto reversed = placed("modulo-crc32", {"b:11211", "a:11211"}, keys);
  ASSERT_EQ(forward.size(), reversed.size());
  const memshard::Crc32 crc32;
  for (std::size_t i = 0; i < forward.size(); ++i) {
    // Modulo places by position: the same index, so the other server.
    const std::string index = std::to_string(crc32(keys[i]) % 2);
    ASSERT_EQ(forward[i].at(1), index) << keys[i];
    ASSERT_EQ(reversed[i].at(1), index) << keys[i];
    ASSERT_EQ(forward[i].at(2), index == "0" ? "a:11211" : "b:11211") << keys[i];
    ASSERT_EQ(reversed[i].at(2), index == "0" ? "b:11211" : "a:11211") << keys[i];
  }
}

TEST(LocateKeysTest, LargeInputMatchesLibrary) {
  // Several megabytes in and out: the buffers fill and refill many times.
  const LocateCase config{"", "libmemcached-ketama", "", 0, mixed_fleet()};
  const std::vector<std::string> keys = random_keys(100000, 11);
  const RunResult result = config.run(join_lines(keys));
  EXPECT_EQ(result.status, tool::kExitOk) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_TRUE(same_lines(result.out, config.expected(keys)));
}

/// LinesCase: an input, the keys of it that are placed, and its invalid lines.
struct LinesCase {
  std::string input;
  std::vector<std::string> keys;
  std::vector<std::pair<std::size_t, std::string>> invalid;  ///< line number, line
};

TEST(LocateKeysTest, InvalidLinesAreReportedAndSkipped) {
  // How lines are read and checked is in locate_io_test.cpp; here, that the
  // valid keys around invalid lines are still placed, in order.
  const std::string longest(250, 'l');
  const std::string huge(3 * 1048576 + 5, 'x');
  const std::vector<LinesCase> cases = {
      {"", {}, {}},
      {"first\nsecond", {"first", "second"}, {}},  // the last line without a newline
      {"\n\nbad key\n", {}, {{1, ""}, {2, ""}, {3, "bad key"}}},
      {"alpha\r\n\r\ngamma\r\r\ndelta\r", {"alpha", "delta"}, {{2, ""}, {3, "gamma\r"}}},
      {"good:1\n" + longest + "\nhas space\n" + std::string(251, 'k') + "\nutf8:\xc3\xa9\n" + huge +
           "\r\nctl\x01x\nlast",
       {"good:1", longest, "utf8:\xc3\xa9", "last"},
       {{3, "has space"}, {4, std::string(251, 'k')}, {6, huge}, {7, "ctl\x01x"}}},
  };
  for (const LinesCase& c : cases) {
    const RunResult result = kSmallFleet.run(c.input);
    EXPECT_EQ(result.status, c.invalid.empty() ? tool::kExitOk : tool::kExitInvalidKeys);
    EXPECT_TRUE(same_lines(result.out, kSmallFleet.expected(c.keys))) << c.input.substr(0, 40);
    std::string errors;
    for (const auto& [line, text] : c.invalid) {
      errors += key_error_line(line, text);
    }
    EXPECT_EQ(result.err, errors);
  }
}

TEST(LocateKeysTest, CrlfInputGivesTheSameAnswers) {
  const std::vector<std::string> keys = random_keys(1000, 12);
  const RunResult lf = kSmallFleet.run(join_lines(keys));
  const RunResult crlf = kSmallFleet.run(join_lines(keys, "\r\n"));
  EXPECT_EQ(crlf.status, tool::kExitOk) << crlf.err;
  EXPECT_EQ(crlf.err, "");
  EXPECT_EQ(crlf.out.find('\r'), std::string::npos);
  EXPECT_TRUE(same_lines(crlf.out, lf.out));
  EXPECT_TRUE(same_lines(crlf.out, kSmallFleet.expected(keys)));
}

/// prefixed: `config`'s arguments with key prefix `prefix` and, when set, `hashing`.
auto prefixed(const LocateCase& config, const std::string& prefix,
              std::optional<memshard::PrefixHashing> hashing) -> tool::SideArgs {
  tool::SideArgs side = config.args();
  side.prefix = prefix;
  side.prefix_hashing = hashing;
  return side;
}

/// expected_placing: the locate output for `keys` (printed as given) when
/// `config`'s locator, made with make_locator, places `placed(key)`.
template <class Placed>
auto expected_placing(const LocateCase& config, const std::vector<std::string>& keys, Placed placed)
    -> std::string {
  const std::vector<memshard::Server> list = config.fleet();
  const memshard::AnyLocator locator = memshard::make_locator(
      config.profile, list, {config.hash, config.points, config.weighted, config.hash_tag});
  std::string out;
  for (const std::string& key : keys) {
    const std::size_t index = locator.locate(placed(key));
    out.append(key)
        .append("\t")
        .append(std::to_string(index))
        .append("\t")
        .append(list[index].endpoint())
        .append("\n");
  }
  return out;
}

TEST(LocatePrefixTest, BareHashingPlacesTheBareKeyPrefixedHashingTheSentKey) {
  using memshard::PrefixHashing;
  // Keys short enough for the prefix (at most 250 bytes sent).
  std::vector<std::string> keys = random_keys(1000, 20240612);
  for (std::string& key : keys) {
    key.resize(std::min<std::size_t>(key.size(), 240));
  }
  const std::vector<LocateCase> configs = {
      kSmallFleet,
      {"", "php-memcached", "", 0, mixed_fleet()},
      {"", "dalli", "", 0, equal_fleet()},
      {"", "twemproxy-ketama", "", 0, equal_fleet(), {}, "{}"},
  };
  for (const LocateCase& config : configs) {
    for (const std::string prefix : {"app:", "ns:"}) {
      SCOPED_TRACE(config.profile + " " + prefix);
      // bare (the default, and given): the locator places the key as given;
      // prefixed: it places prefix + key. Either way the key is printed as given.
      const std::string bare =
          expected_placing(config, keys, [](const std::string& key) { return key; });
      const std::string sent = expected_placing(
          config, keys, [&prefix](const std::string& key) { return prefix + key; });
      for (const std::optional<PrefixHashing> hashing :
           {std::optional<PrefixHashing>(), std::optional(PrefixHashing::kBareKey)}) {
        const RunResult result = locate_in_process(
            tool::make_placement(prefixed(config, prefix, hashing)), join_lines(keys));
        EXPECT_EQ(result.status, tool::kExitOk) << result.err;
        EXPECT_EQ(result.err, "");
        EXPECT_TRUE(same_lines(result.out, bare));
      }
      const RunResult result = locate_in_process(
          tool::make_placement(prefixed(config, prefix, PrefixHashing::kPrefixedKey)),
          join_lines(keys));
      EXPECT_EQ(result.status, tool::kExitOk) << result.err;
      EXPECT_EQ(result.err, "");
      EXPECT_TRUE(same_lines(result.out, sent));
      // The two hashings disagree on most keys, so neither check passes for the other.
      const std::vector<std::string> bare_lines = lines_of(bare);
      const std::vector<std::string> sent_lines = lines_of(sent);
      ASSERT_EQ(bare_lines.size(), sent_lines.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < bare_lines.size(); ++i) {
        if (bare_lines[i] != sent_lines[i]) {
          ++differ;
        }
      }
      EXPECT_GT(differ, keys.size() / 3);
    }
  }
}

TEST(LocatePrefixTest, KeyRulesApplyToTheSentKey) {
  // With "app:", 246 bytes is the longest key; a longer one is an invalid line,
  // reported with the length sent, and the keys around it are still placed.
  const std::string prefix = "app:";
  const std::string longest(246, 'l');
  const std::string too_long(247, 'k');
  const std::string input = "user:1\n" + longest + "\n" + too_long + "\nhas space\n\nuser:2\n";
  for (const auto hashing :
       {memshard::PrefixHashing::kBareKey, memshard::PrefixHashing::kPrefixedKey}) {
    const RunResult result =
        locate_in_process(tool::make_placement(prefixed(kSmallFleet, prefix, hashing)), input);
    EXPECT_EQ(result.status, tool::kExitInvalidKeys);
    // The empty line is a key: "app:" is sent.
    const std::vector<std::string> keys = {"user:1", longest, "", "user:2"};
    EXPECT_TRUE(
        same_lines(result.out, expected_placing(kSmallFleet, keys, [&](const std::string& key) {
                     return hashing == memshard::PrefixHashing::kBareKey ? key : prefix + key;
                   })));
    EXPECT_EQ(result.err, key_error_line(3, prefix + too_long) + key_error_line(4, "has space"));
    EXPECT_NE(result.err.find("line 3: key is 251 bytes long, the limit is 250\n"),
              std::string::npos)
        << result.err;
  }
  // Without the prefix, the same 247 bytes are a key.
  const RunResult bare = kSmallFleet.run(too_long + "\n");
  EXPECT_EQ(bare.status, tool::kExitOk) << bare.err;
  // The longest prefix leaves one byte.
  const std::string widest(249, 'p');
  const RunResult one_byte = locate_in_process(
      tool::make_placement(prefixed(kSmallFleet, widest, memshard::PrefixHashing::kPrefixedKey)),
      "x\nxy\n");
  EXPECT_EQ(one_byte.status, tool::kExitInvalidKeys);
  EXPECT_EQ(one_byte.err, key_error_line(2, widest + "xy"));
  EXPECT_TRUE(same_lines(
      one_byte.out,
      expected_placing(kSmallFleet, {"x"}, [&](const std::string& key) { return widest + key; })));
}

TEST(LocatePlacementTest, ConfigurationErrorsThrow) {
  EXPECT_THROW((void)tool::make_placement(tool::testing::side("nope", {"a:11211"})),
               memshard::ConfigError);
  EXPECT_THROW((void)tool::make_placement(tool::testing::side("ring-crc32", {"a:0"})),
               memshard::ConfigError);
  // A prefix that only a hand-made SideArgs can hold.
  tool::SideArgs spaced = tool::testing::side("ring-crc32", {"a:1"});
  spaced.prefix = "a b";
  EXPECT_THROW((void)tool::make_placement(spaced), memshard::ConfigError);
  EXPECT_EQ(tool::without_library_prefix("memshard: unknown profile: x"), "unknown profile: x");
  EXPECT_EQ(tool::without_library_prefix("other: memshard: x"), "other: memshard: x");
}

}  // namespace
}  // namespace locate_locate_test
