// SPDX-License-Identifier: MIT
// locate_compare_test.cpp: memshard-locate --compare in process: every report
// checked against the same comparison made with make_locator, the exact report
// layout, --per-key, --sample, B's defaults and the exit statuses.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memshard/placement.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "locate/compare.hpp"
#include "tools/locate_support.hpp"

namespace locate_compare_test {
namespace {

namespace tool = memshard::locate_tool;
using tool::testing::join_lines;
using tool::testing::key_error_line;
using tool::testing::lines_of;
using tool::testing::random_keys;
using tool::testing::RunResult;
using tool::testing::split_fields;

/// Side: one placement of a comparison, fully given.
struct Side {
  std::string profile;
  std::vector<std::string> specs;  ///< --server arguments
  memshard::ProfileOptions options;
  std::string prefix = {};  ///< --prefix (empty: none)
  bool prefixed = false;    ///< --prefix-hashing prefixed (else bare, the default)

  /// placed: what the locator places for `key`: the key as given, or, with
  /// prefixed hashing, the prefix and the key.
  [[nodiscard]] auto placed(const std::string& key) const -> std::string {
    return prefixed ? prefix + key : key;
  }

  [[nodiscard]] auto servers() const -> std::vector<memshard::Server> {
    std::vector<memshard::Server> servers;
    for (const std::string& spec : specs) {
      servers.push_back(memshard::parse_server(spec));
    }
    return servers;
  }
  /// args: the side as the command line gives it.
  [[nodiscard]] auto args() const -> tool::SideArgs {
    tool::SideArgs side = tool::testing::side(profile, specs);
    if (!options.hash.empty()) {
      side.hash = options.hash;
    }
    if (options.points != 0) {
      side.points = options.points;
    }
    side.weighted = options.weighted;
    if (!prefix.empty()) {
      side.prefix = prefix;
      side.prefix_hashing =
          prefixed ? memshard::PrefixHashing::kPrefixedKey : memshard::PrefixHashing::kBareKey;
    }
    return side;
  }
};

/// Flags: the --compare switches.
struct Flags {
  std::optional<std::size_t> sample;
  bool per_key = false;
  bool fail_if_moved = false;
};

/// compare_command: compare_keys as `command` asks, over `input`.
auto compare_command(const tool::CommandLine& command, const std::string& input) -> RunResult {
  const tool::Placement a = tool::make_placement(command.from);
  const tool::Placement b = tool::make_placement_b(command);
  return tool::testing::capture(input, [&](std::istream& in, std::ostream& out, std::ostream& err) {
    return tool::compare_keys(command, a, b, in, out, err);
  });
}

/// compare: compare_keys of `a` against `b` over `input` (or --sample's keys).
auto compare(const Side& a, const Side& b, const std::string& input, Flags flags = {})
    -> RunResult {
  tool::CommandLine command;
  command.action = tool::Action::kCompare;
  command.from = a.args();
  command.to = b.args();
  if (b.prefix.empty() && !a.prefix.empty()) {
    command.to.prefix = "";  // --to-prefix=: B drops A's prefix
  }
  command.sample = flags.sample;
  command.per_key = flags.per_key;
  command.fail_if_moved = flags.fail_if_moved;
  return compare_command(command, input);
}

/// ReportRow: one server's row in a report's table.
struct ReportRow {
  std::string label;
  std::size_t keys = 0;    ///< held (A) or holds (B)
  std::size_t moved = 0;   ///< left (A) or arrived (B)
  bool only_here = false;  ///< marked "not in B" (A) or "not in A" (B)

  auto operator==(const ReportRow&) const -> bool = default;
};

/// Report: the numbers of a --compare report.
struct Report {
  std::string a_description;  ///< the "A: ..." line without "A: "
  std::string b_description;
  std::size_t keys = 0;
  std::size_t moved = 0;
  std::vector<ReportRow> a_rows;
  std::vector<ReportRow> b_rows;
  std::vector<std::string> moved_keys;  ///< --per-key lines: key<TAB>from<TAB>to

  auto operator==(const Report&) const -> bool = default;
};

void PrintTo(const Report& report, std::ostream* out) {
  auto rows = [out](const std::vector<ReportRow>& table) {
    for (const ReportRow& row : table) {
      *out << " [" << row.label << " " << row.keys << " " << row.moved
           << (row.only_here ? " *" : "") << "]";
    }
  };
  *out << "{A: " << report.a_description << "; B: " << report.b_description << "; keys "
       << report.keys << ", moved " << report.moved << "; A rows:";
  rows(report.a_rows);
  *out << "; B rows:";
  rows(report.b_rows);
  *out << "; " << report.moved_keys.size() << " per-key lines}";
}

auto trim_right(std::string text) -> std::string {
  while (!text.empty() && text.back() == ' ') {
    text.pop_back();
  }
  return text;
}

/// parse_row: "label  keys  moved[  not in X]".
auto parse_row(std::string line) -> ReportRow {
  ReportRow row;
  if (const auto note = line.find("  not in "); note != std::string::npos) {
    row.only_here = true;
    line.erase(note);
  }
  auto last_number = [&line]() -> std::size_t {
    line = trim_right(line);
    const auto space = line.rfind(' ');
    const std::size_t value = std::stoul(line.substr(space + 1));
    line.erase(space);
    return value;
  };
  row.moved = last_number();
  row.keys = last_number();
  row.label = trim_right(line);
  return row;
}

/// parse_report: the numbers of the tool's --compare output.
auto parse_report(std::string_view out) -> Report {
  Report report;
  std::vector<ReportRow>* table = nullptr;
  for (const std::string& line : lines_of(out)) {
    if (line.find('\t') != std::string::npos) {
      report.moved_keys.push_back(line);
    } else if (line.empty()) {
      table = nullptr;
    } else if (line.starts_with("A: ")) {
      report.a_description = line.substr(3);
    } else if (line.starts_with("B: ")) {
      report.b_description = line.substr(3);
    } else if (line.starts_with("keys: ")) {
      report.keys = std::stoul(line.substr(6));
    } else if (line.starts_with("moved: ")) {
      report.moved = std::stoul(line.substr(7));
    } else if (line.starts_with("A server")) {
      table = &report.a_rows;
    } else if (line.starts_with("B server")) {
      table = &report.b_rows;
    } else if (table != nullptr) {
      table->push_back(parse_row(line));
    } else {
      throw std::runtime_error("unexpected report line: " + line);
    }
  }
  return report;
}

/// sample_keys: the keys --sample N compares: key:0 to key:<N-1>.
auto sample_keys(std::size_t count) -> std::vector<std::string> {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < count; ++i) {
    keys.push_back("key:" + std::to_string(i));
  }
  return keys;
}

auto label_of(const memshard::Server& s) -> std::string {
  return s.name.empty() ? s.endpoint() : s.endpoint() + " (" + s.name + ")";
}

auto same_server(const memshard::Server& x, const memshard::Server& y) -> bool {
  return x.host == y.host && x.port == y.port && x.name == y.name;
}

auto description_of(const Side& side, const memshard::AnyLocator& locator) -> std::string {
  const std::size_t count = side.specs.size();
  const std::string prefix =
      side.prefix.empty()
          ? ""
          : " prefix=" + side.prefix + " prefix-hashing=" + (side.prefixed ? "prefixed" : "bare");
  return std::string(locator.description()) + prefix + ", " + std::to_string(count) +
         (count == 1 ? " server" : " servers");
}

/// expected_report: the comparison of `a` and `b` over `keys`, made in process.
auto expected_report(const Side& a, const Side& b, const std::vector<std::string>& keys,
                     bool per_key) -> Report {
  const std::vector<memshard::Server> a_servers = a.servers();
  const std::vector<memshard::Server> b_servers = b.servers();
  const memshard::AnyLocator a_locator = memshard::make_locator(a.profile, a_servers, a.options);
  const memshard::AnyLocator b_locator = memshard::make_locator(b.profile, b_servers, b.options);
  Report report;
  report.a_description = description_of(a, a_locator);
  report.b_description = description_of(b, b_locator);
  auto rows = [](const std::vector<memshard::Server>& mine,
                 const std::vector<memshard::Server>& other) {
    std::vector<ReportRow> out;
    for (const memshard::Server& s : mine) {
      const bool shared = std::any_of(other.begin(), other.end(), [&s](const memshard::Server& o) {
        return same_server(s, o);
      });
      out.push_back({label_of(s), 0, 0, !shared});
    }
    return out;
  };
  report.a_rows = rows(a_servers, b_servers);
  report.b_rows = rows(b_servers, a_servers);
  for (const std::string& key : keys) {
    const std::size_t i = a_locator.locate(a.placed(key));
    const std::size_t j = b_locator.locate(b.placed(key));
    ++report.keys;
    ++report.a_rows[i].keys;
    ++report.b_rows[j].keys;
    if (!same_server(a_servers[i], b_servers[j])) {
      ++report.moved;
      ++report.a_rows[i].moved;
      ++report.b_rows[j].moved;
      if (per_key) {
        report.moved_keys.push_back(key + "\t" + label_of(a_servers[i]) + "\t" +
                                    label_of(b_servers[j]));
      }
    }
  }
  return report;
}

/// run_compare: compares `a` with `b` over --sample `count` keys and checks the
/// report against the in-process comparison.
auto run_compare(const Side& a, const Side& b, std::size_t count, bool per_key = false) -> Report {
  const RunResult result = compare(a, b, "", {count, per_key, false});
  EXPECT_EQ(result.status, tool::kExitOk) << result;
  EXPECT_EQ(result.err, "");
  const Report report = parse_report(result.out);
  EXPECT_EQ(report, expected_report(a, b, sample_keys(count), per_key)) << result.out;
  return report;
}

auto four_servers() -> std::vector<std::string> {
  return {"10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211", "10.0.0.4:11211"};
}

auto five_servers() -> std::vector<std::string> {
  std::vector<std::string> specs = four_servers();
  specs.emplace_back("10.0.0.5:11211");
  return specs;
}

TEST(LocateCompareTest, IdenticalConfigurationsMoveNothing) {
  const Side a{"libmemcached-ketama-weighted", {"a:11211", "b:11211:2", "c:11211"}, {}};
  const Report report = run_compare(a, a, 10000);
  EXPECT_EQ(report.keys, 10000U);
  EXPECT_EQ(report.moved, 0U);
  // B defaults to A entirely: --compare without any --to-* option.
  tool::CommandLine command;
  command.from = a.args();
  command.sample = 10000;
  command.per_key = true;
  command.fail_if_moved = true;
  const RunResult result = compare_command(command, "");
  EXPECT_EQ(result.status, tool::kExitOk) << result;
  EXPECT_EQ(parse_report(result.out), report);
  EXPECT_TRUE(result.out.starts_with("A: ")) << result.out;  // no blank line: nothing moved
  EXPECT_NE(result.out.find("moved: 0 (0.00%)\n"), std::string::npos) << result.out;
}

TEST(LocateCompareTest, ModulaFourToFiveServersMovesMostKeys) {
  const Side a{"libmemcached-modula", four_servers(), {}};
  const Side b{"libmemcached-modula", five_servers(), {}};
  const Report report = run_compare(a, b, 10000);
  ASSERT_EQ(report.keys, 10000U);
  // Hash % 4 vs hash % 5: a key stays only when both agree, about 1 in 5.
  EXPECT_GE(report.moved, 7000U);
  EXPECT_LE(report.moved, 9000U);
  EXPECT_TRUE(report.b_rows.back().only_here);
}

TEST(LocateCompareTest, KetamaFourToFiveServersMovesAFifthOntoTheNewServer) {
  const Side a{"libmemcached-ketama-weighted", four_servers(), {}};
  const Side b{"libmemcached-ketama-weighted", five_servers(), {}};
  const Report report = run_compare(a, b, 10000, true);
  ASSERT_EQ(report.keys, 10000U);
  EXPECT_GE(report.moved, 1200U);
  EXPECT_LE(report.moved, 2800U);
  // Consistent hashing: keys move only onto the new server, never between
  // two servers that were already there.
  ASSERT_EQ(report.moved_keys.size(), report.moved);
  for (const std::string& line : report.moved_keys) {
    const std::vector<std::string> fields = split_fields(line);
    ASSERT_EQ(fields.size(), 3U) << line;
    EXPECT_TRUE(fields[0].starts_with("key:")) << line;
    EXPECT_NE(fields[1], "10.0.0.5:11211") << line;
    EXPECT_EQ(fields[2], "10.0.0.5:11211") << line;
  }
  for (std::size_t j = 0; j + 1 < report.b_rows.size(); ++j) {
    EXPECT_EQ(report.b_rows[j].moved, 0U) << report.b_rows[j].label;
  }
  EXPECT_EQ(report.b_rows.back().moved, report.moved);
  EXPECT_EQ(report.b_rows.back().keys, report.moved);
}

TEST(LocateCompareTest, AliasProfilesAgree) {
  const std::vector<std::string> fleet = {"m1:11211", "m2:11211", "m3:11211:4", "m4:11212"};
  const Side php{"php-memcached", fleet, {}};
  const Side libmemcached{"libmemcached-modula", fleet, {}};
  EXPECT_EQ(run_compare(php, libmemcached, 10000).moved, 0U);
  const Side php_libketama{"php-memcached-libketama", fleet, {}};
  const Side ketama_weighted{"libmemcached-ketama-weighted", fleet, {}};
  EXPECT_EQ(run_compare(php_libketama, ketama_weighted, 10000).moved, 0U);
  const Side gomemcache{"gomemcache", fleet, {}};
  const Side modulo_crc32{"modulo-crc32", fleet, {}};
  EXPECT_EQ(run_compare(gomemcache, modulo_crc32, 10000).moved, 0U);
}

TEST(LocateCompareTest, TwemproxyKetamaAgreesWithLibketamaOnUnnamedServers) {
  // Unnamed, twemproxy hashes "host" (port 11211) or "host:port", as
  // libmemcached does, with the same md5 x4 points and weights.
  const std::vector<std::string> fleet = {"10.0.0.1:11211", "10.0.0.2:11212:2", "cache-c:11211:3",
                                          "[fd00::4]:11300"};
  const Side twemproxy{"twemproxy-ketama", fleet, {}};
  const Side libketama{"libmemcached-ketama-weighted", fleet, {}};
  const Report report = run_compare(twemproxy, libketama, 10000);
  EXPECT_EQ(report.moved, 0U);
  for (const ReportRow& row : report.a_rows) {
    EXPECT_GT(row.keys, 0U) << row.label;
  }
}

TEST(LocateCompareTest, ServersAreMatchedByIdentityNotPosition) {
  // A ring places by server: the same servers in another order move nothing.
  const Side ring{"libmemcached-ketama-weighted", {"a:11211", "b:11211", "c:11211"}, {}};
  const Side ring_reversed{"libmemcached-ketama-weighted", {"c:11211", "b:11211", "a:11211"}, {}};
  EXPECT_EQ(run_compare(ring, ring_reversed, 5000).moved, 0U);
  // Modulo places by position: two servers swapped move every key.
  const Side modulo{"modulo-crc32", {"a:11211", "b:11211"}, {}};
  const Side modulo_swapped{"modulo-crc32", {"b:11211", "a:11211"}, {}};
  const Report swapped = run_compare(modulo, modulo_swapped, 5000);
  EXPECT_EQ(swapped.moved, 5000U);
  // A weight is not part of a server's identity: a heavier server is the same server.
  const Side heavier{"libmemcached-ketama-weighted", {"a:11211", "b:11211:3", "c:11211"}, {}};
  const Report reweighted = run_compare(ring, heavier, 5000);
  EXPECT_GT(reweighted.moved, 0U);
  for (const ReportRow& row : reweighted.b_rows) {
    EXPECT_FALSE(row.only_here) << row.label;
  }
  // The heavier server gains keys (the others lose points too: libketama
  // divides 160 x N points by the total weight).
  EXPECT_GT(reweighted.b_rows[1].keys, reweighted.a_rows[1].keys);
  EXPECT_GT(reweighted.b_rows[1].moved, reweighted.moved / 2);
}

TEST(LocateCompareTest, NamesArePartOfAServersIdentity) {
  const Side a{"ring-crc32", {"10.0.0.1:11211:1:cache-x"}, {}};
  const Side b{"ring-crc32", {"10.0.0.1:11211:1:cache-y"}, {}};
  const Report report = run_compare(a, b, 100, true);
  EXPECT_EQ(report.moved, 100U);
  ASSERT_EQ(report.moved_keys.size(), 100U);
  EXPECT_EQ(report.moved_keys.front(), "key:0\t10.0.0.1:11211 (cache-x)\t10.0.0.1:11211 (cache-y)");
  ASSERT_EQ(report.a_rows.size(), 1U);
  EXPECT_EQ(report.a_rows[0], (ReportRow{"10.0.0.1:11211 (cache-x)", 100, 100, true}));
}

TEST(LocateCompareTest, ToOptionsSetSideB) {
  const std::vector<std::string> fleet = {"a:11211", "b:11211", "c:11211"};
  run_compare({"ring-crc32", fleet, {}}, {"ring-crc32", fleet, {"", 16, {}}}, 2000);
  run_compare({"libmemcached-ketama", fleet, {}},
              {"libmemcached-ketama", fleet, {"fnv1a_32", 0, {}}}, 2000);
  run_compare({"spymemcached-ketama", {"a:11211", "b:11211"}, {"", 0, true}},
              {"spymemcached-ketama", {"a:11211", "b:11211"}, {"", 0, false}}, 2000);
  run_compare({"twemproxy-ketama", fleet, {"crc32", 0, {}}},
              {"twemproxy-ketama", fleet, {"crc32a", 0, {}}}, 2000);
}

TEST(LocateCompareTest, SampleKeysAreKeyColonIndex) {
  const Side a{"modulo-crc32", {"a:11211", "b:11211"}, {}};
  const Side b{"modulo-crc32", {"b:11211", "a:11211"}, {}};
  // --sample ignores standard input, even invalid lines there.
  const RunResult result = compare(a, b, "bad key\n\n", {3, true, false});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "");
  const std::vector<std::string> lines = lines_of(result.out);
  ASSERT_GE(lines.size(), 4U) << result.out;
  EXPECT_TRUE(lines[0].starts_with("key:0\t")) << result.out;
  EXPECT_TRUE(lines[1].starts_with("key:1\t")) << result.out;
  EXPECT_TRUE(lines[2].starts_with("key:2\t")) << result.out;
  EXPECT_EQ(lines[3], "");  // a blank line between the moved keys and the report
  EXPECT_NE(result.out.find("\nkeys: 3 (key:0 to key:2)\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\nmoved: 3 (100.00%)\n"), std::string::npos) << result.out;
}

TEST(LocateCompareTest, ExactReportLayout) {
  // b:11211 is replaced by a named server: its keys (by crc32 % 2, user:4
  // alone) move there.
  const Side a{"modulo-crc32", {"a:11211", "b:11211"}, {}};
  const Side b{"modulo-crc32", {"a:11211", "new:11211:1:n"}, {}};
  const std::vector<std::string> keys = {"user:1", "user:2", "user:3", "user:4"};
  const RunResult result = compare(a, b, join_lines(keys), {{}, true, false});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "user:4\tb:11211\tnew:11211 (n)\n"
            "\n"
            "A: modulo-crc32 hash=crc32, 2 servers\n"
            "B: modulo-crc32 hash=crc32, 2 servers\n"
            "keys: 4 (standard input)\n"
            "moved: 1 (25.00%)\n"
            "\n"
            "A server  held  left\n"
            "a:11211      3     0\n"
            "b:11211      1     1  not in B\n"
            "\n"
            "B server       holds  arrived\n"
            "a:11211            3        0\n"
            "new:11211 (n)      1        1  not in A\n");
  EXPECT_EQ(parse_report(result.out), expected_report(a, b, keys, true));
  // Percentages are rounded to the nearest hundredth: 2 of 3 is 66.67%.
  EXPECT_NE(compare(a, b, "user:1\nuser:4\nuser:5\n").out.find("\nmoved: 2 (66.67%)\n"),
            std::string::npos);
}

TEST(LocateCompareTest, StandardInputKeysWithInvalidLines) {
  const Side a{"libmemcached-modula", four_servers(), {}};
  const Side b{"libmemcached-modula", five_servers(), {}};
  const std::vector<std::string> valid = random_keys(500, 14);
  std::vector<std::string> lines = valid;
  lines.insert(lines.begin() + 10, "has space");
  lines.insert(lines.begin() + 20, "");
  const RunResult result = compare(a, b, join_lines(lines), {{}, true, false});
  EXPECT_EQ(result.status, 1) << result;
  EXPECT_EQ(result.err, key_error_line(11, "has space") + key_error_line(21, ""));
  EXPECT_EQ(parse_report(result.out), expected_report(a, b, valid, true));
  EXPECT_NE(result.out.find("\nkeys: 500 (standard input; 2 invalid lines skipped)\n"),
            std::string::npos)
      << result.out;
}

TEST(LocateCompareTest, EmptyInputComparesNothing) {
  const Side a{"libmemcached-modula", four_servers(), {}};
  const Side b{"libmemcached-modula", five_servers(), {}};
  const RunResult result = compare(a, b, "", {{}, false, true});
  EXPECT_EQ(result.status, 0) << result;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(parse_report(result.out), expected_report(a, b, {}, false));
  EXPECT_NE(result.out.find("\nmoved: 0 (0.00%)\n"), std::string::npos) << result.out;
}

TEST(LocateCompareTest, FailIfMovedExitStatus) {
  const Side four{"libmemcached-ketama-weighted", four_servers(), {}};
  const Side five{"libmemcached-ketama-weighted", five_servers(), {}};
  struct Case {
    const Side* b;
    std::string input;
    bool fail_if_moved;
    int status;
  };
  const std::string valid = "user:1\nuser:2\nuser:3\nuser:4\nuser:5\nuser:6\nuser:7\nuser:8\n";
  const std::string some_invalid = valid + "bad key\n";
  // user:1 .. user:8 include a key that moves onto the fifth server.
  ASSERT_GT(expected_report(four, five, lines_of(valid), false).moved, 0U);
  const std::vector<Case> cases = {
      {&four, valid, true, 0},         // agree
      {&five, valid, true, 3},         // disagree
      {&five, valid, false, 0},        // disagree, but not asked to fail
      {&four, some_invalid, true, 1},  // agree, some lines invalid
      {&five, some_invalid, true, 3},  // disagree wins over invalid lines
      {&five, some_invalid, false, 1},
  };
  for (const Case& c : cases) {
    const RunResult result = compare(four, *c.b, c.input, {{}, false, c.fail_if_moved});
    EXPECT_EQ(result.status, c.status) << result;
    // The report is printed whatever the status.
    EXPECT_NE(result.out.find("\nmoved: "), std::string::npos) << result;
  }
  // With --sample too.
  const RunResult sampled = compare(four, five, "", {1000, false, true});
  EXPECT_EQ(sampled.status, 3) << sampled;
}

TEST(LocateCompareTest, BareAgainstPrefixedHashingMovesKeys) {
  // What moves if PHP turns on OPT_HASH_WITH_PREFIX_KEY: the same prefix, placed
  // by the bare key (A) and by the sent key (B).
  const std::vector<std::string> fleet = {"10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"};
  const Side bare{"php-memcached-libketama", fleet, {}, "app:", false};
  const Side hashed{"php-memcached-libketama", fleet, {}, "app:", true};
  const Report report = run_compare(bare, hashed, 10000, true);
  // Three servers: a key stays when both keys fall on its server, about 1 in 3.
  EXPECT_GE(report.moved, 5500U);
  EXPECT_LE(report.moved, 7500U);
  ASSERT_EQ(report.moved_keys.size(), report.moved);
  ASSERT_FALSE(report.moved_keys.empty());
  EXPECT_TRUE(report.moved_keys.front().starts_with("key:")) << report.moved_keys.front();
  EXPECT_EQ(report.a_description,
            "php-memcached-libketama hash=md5 prefix=app: prefix-hashing=bare, 3 servers");
  EXPECT_EQ(report.b_description,
            "php-memcached-libketama hash=md5 prefix=app: prefix-hashing=prefixed, 3 servers");
  // The same from the command line: B takes A's prefix and changes its hashing.
  const tool::ParsedCommandLine parsed = tool::testing::parse(
      {"--compare", "--per-key", "--sample", "10000", "--profile", "php-memcached-libketama",
       "--server", fleet[0], "--server", fleet[1], "--server", fleet[2], "--prefix",
       "app:", "--to-prefix-hashing", "prefixed"});
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  const RunResult result = compare_command(parsed.command, "");
  EXPECT_EQ(result.status, tool::kExitOk) << result;
  EXPECT_EQ(parse_report(result.out), report);
}

TEST(LocateCompareTest, PrefixPlacedByTheBareKeyMovesNothing) {
  // OPT_PREFIX_KEY only changes what is sent: against no prefix, nothing moves.
  const std::vector<std::string> fleet = {"a:11211", "b:11211", "c:11211:2"};
  const Side none{"libmemcached-ketama-weighted", fleet, {}};
  const Side bare{"libmemcached-ketama-weighted", fleet, {}, "app:", false};
  EXPECT_EQ(run_compare(bare, none, 5000).moved, 0U);
  // Placed by the sent key, most keys move; --to-prefix= drops A's prefix.
  const Side hashed{"libmemcached-ketama-weighted", fleet, {}, "app:", true};
  EXPECT_GT(run_compare(hashed, none, 5000).moved, 2500U);
  tool::CommandLine command;
  command.from = hashed.args();
  command.to.prefix = "";
  command.sample = 5000;
  const RunResult dropped = compare_command(command, "");
  EXPECT_EQ(dropped.status, tool::kExitOk) << dropped;
  EXPECT_EQ(parse_report(dropped.out), expected_report(hashed, none, sample_keys(5000), false));
}

TEST(LocateCompareTest, KeysMustBeValidWithBothPrefixes) {
  // 247 bytes: a key without a prefix, too long with "app:" (251 bytes sent).
  const std::vector<std::string> fleet = {"a:11211", "b:11211"};
  const Side none{"modulo-crc32", fleet, {}};
  const Side prefixed{"modulo-crc32", fleet, {}, "app:", true};
  const std::string too_long(247, 'k');
  const std::vector<std::string> valid = {"user:1", "user:2", std::string(246, 'l'), "user:3"};
  const std::string input = "user:1\nuser:2\n" + too_long + "\n" + valid[2] + "\nuser:3\n";
  for (const auto& [a, b] : {std::pair{&none, &prefixed}, std::pair{&prefixed, &none}}) {
    const RunResult result = compare(*a, *b, input, {{}, true, false});
    EXPECT_EQ(result.status, tool::kExitInvalidKeys) << result;
    EXPECT_EQ(result.err, key_error_line(3, "app:" + too_long));
    EXPECT_EQ(parse_report(result.out), expected_report(*a, *b, valid, true));
    EXPECT_NE(result.out.find("\nkeys: 4 (standard input; 1 invalid line skipped)\n"),
              std::string::npos)
        << result.out;
  }
  // --sample's keys too: refused before anything is printed.
  const Side widest{"modulo-crc32", fleet, {}, std::string(241, 'p'), false};
  EXPECT_EQ(compare(none, widest, "", {100000, false, false}).status, tool::kExitOk);  // key:99999
  try {
    (void)compare(none, widest, "", {100001, false, false});  // key:100000: 251 bytes
    ADD_FAILURE() << "a --sample key too long for B's prefix was compared";
  } catch (const memshard::ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "memshard: --sample's keys are too long for B's key prefix: key:100000 is sent as "
              "251 bytes, the limit is 250");
  }
}

}  // namespace
}  // namespace locate_compare_test
