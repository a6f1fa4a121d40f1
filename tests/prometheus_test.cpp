// SPDX-License-Identifier: MIT
// prometheus.hpp: the text exposition of a client's statistics. Against real
// memcached servers (the samples are the client's stats(), a killed server
// shows its errors and ejection, a migration its counters), and on hand-made
// stats: every line parses, each family is announced once before its samples,
// each family reads its own field, label values are escaped, constant labels
// and the prefix apply everywhere, and bad options throw before writing.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/server_set.hpp"

namespace prometheus_test {
namespace {

using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::MigrationStats;
using memshard::PrometheusOptions;
using memshard::Server;
using memshard::ServerStats;
using memshard::testing::ServerSet;
using Client = memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>>;

// ---- a parser of the text format, strict about what the writer promises ----

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // unescaped values
  std::string series;                                       // the text before the value
  std::string value;
};

struct Exposition {
  std::vector<Sample> samples;
  std::vector<std::string> families;  // in the order of their TYPE lines
  std::map<std::string, std::string> types;
  std::vector<std::string> errors;  // empty when every rule holds
};

auto is_name(std::string_view text, bool colons) -> bool {
  if (text.empty()) {
    return false;
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (colons && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) {
      return false;
    }
  }
  return true;
}

// Parses `{name="value",...}` at text[pos] (pos at '{'); false when malformed.
auto parse_labels(std::string_view text, std::size_t& pos,
                  std::vector<std::pair<std::string, std::string>>& labels) -> bool {
  ++pos;  // '{'
  while (pos < text.size() && text[pos] != '}') {
    const std::size_t eq = text.find('=', pos);
    if (eq == std::string_view::npos || !is_name(text.substr(pos, eq - pos), false)) {
      return false;
    }
    std::string name(text.substr(pos, eq - pos));
    pos = eq + 1;
    if (pos >= text.size() || text[pos] != '"') {
      return false;
    }
    ++pos;
    std::string value;
    for (;;) {
      if (pos >= text.size()) {
        return false;
      }
      const char c = text[pos++];
      if (c == '"') {
        break;
      }
      if (c == '\n') {
        return false;  // a raw newline can never be inside a value
      }
      if (c == '\\') {
        if (pos >= text.size()) {
          return false;
        }
        const char e = text[pos++];
        if (e == 'n') {
          value.push_back('\n');
        } else if (e == '\\' || e == '"') {
          value.push_back(e);
        } else {
          return false;
        }
      } else {
        value.push_back(c);
      }
    }
    labels.emplace_back(std::move(name), std::move(value));
    if (pos < text.size() && text[pos] == ',') {
      ++pos;
    } else if (pos >= text.size() || text[pos] != '}') {
      return false;
    }
  }
  if (pos >= text.size()) {
    return false;
  }
  ++pos;  // '}'
  return true;
}

auto parse(std::string_view text) -> Exposition {
  Exposition out;
  std::map<std::string, int> helps;
  std::map<std::string, int> types;
  std::string current;  // the family whose samples may follow
  if (!text.empty() && !text.ends_with('\n')) {
    out.errors.push_back("the text does not end with a newline");
  }
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::string where = "line '" + std::string(line) + "': ";
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
      const std::string_view rest = line.substr(7);
      const std::size_t space = rest.find(' ');
      const std::string name(rest.substr(0, space));
      if (!is_name(name, true) || space == std::string_view::npos) {
        out.errors.push_back(where + "bad comment");
        continue;
      }
      if (line.starts_with("# HELP ")) {
        if (++helps[name] != 1) {
          out.errors.push_back(where + "second HELP");
        }
        if (types.contains(name)) {
          out.errors.push_back(where + "HELP after TYPE");
        }
        current.clear();
      } else {
        const std::string_view type = rest.substr(space + 1);
        if (++types[name] != 1) {
          out.errors.push_back(where + "second TYPE");
        }
        if (type != "counter" && type != "gauge") {
          out.errors.push_back(where + "type neither counter nor gauge");
        }
        if (helps[name] != 1) {
          out.errors.push_back(where + "TYPE without a HELP before it");
        }
        out.types[name] = std::string(type);
        out.families.push_back(name);
        current = name;
      }
      continue;
    }
    if (line.empty() || line.starts_with('#')) {
      out.errors.push_back(where + "empty line or unknown comment");
      continue;
    }
    Sample sample;
    std::size_t pos = 0;
    while (pos < line.size() && line[pos] != '{' && line[pos] != ' ') {
      ++pos;
    }
    sample.name = std::string(line.substr(0, pos));
    if (!is_name(sample.name, true)) {
      out.errors.push_back(where + "bad metric name");
      continue;
    }
    if (pos < line.size() && line[pos] == '{' && !parse_labels(line, pos, sample.labels)) {
      out.errors.push_back(where + "bad labels");
      continue;
    }
    if (pos >= line.size() || line[pos] != ' ') {
      out.errors.push_back(where + "no space before the value");
      continue;
    }
    sample.series = std::string(line.substr(0, pos));
    sample.value = std::string(line.substr(pos + 1));
    if (sample.value.empty() || sample.value.find_first_not_of("0123456789") != std::string::npos) {
      out.errors.push_back(where + "value is not a whole number");
    }
    if (sample.name != current) {
      out.errors.push_back(where + "sample outside its family's block (after '" + current + "')");
    }
    std::set<std::string> names;
    for (const auto& label : sample.labels) {
      if (!names.insert(label.first).second) {
        out.errors.push_back(where + "label " + label.first + " twice");
      }
    }
    out.samples.push_back(std::move(sample));
  }
  for (const auto& [name, count] : helps) {
    if (!types.contains(name)) {
      out.errors.push_back("family " + name + " has a HELP and no TYPE");
    }
  }
  return out;
}

// The value of the sample written exactly as `series` (name and labels), or
// "absent".
auto value_of(std::string_view text, const std::string& series) -> std::string {
  std::string found = "absent";
  for (const Sample& sample : parse(text).samples) {
    if (sample.series == series) {
      if (found != "absent") {
        return "duplicate";
      }
      found = sample.value;
    }
  }
  return found;
}

auto count_lines_starting(std::string_view text, std::string_view prefix) -> std::size_t {
  std::size_t count = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    count += text.substr(start, end - start).starts_with(prefix) ? 1U : 0U;
    start = end + 1;
  }
  return count;
}

// The per-server families, in the documented order (outside tests rely on
// these names).
const std::vector<std::string> kServerFamilies = {
    "memshard_requests_total",   "memshard_hits_total",      "memshard_misses_total",
    "memshard_errors_total",     "memshard_ejections_total", "memshard_refused_total",
    "memshard_redirected_total", "memshard_kept_in_total",   "memshard_cleaned_total",
    "memshard_flushes_total",    "memshard_server_ejected",  "memshard_consecutive_failures",
    "memshard_probe_failures",   "memshard_journal_keys",    "memshard_journal_lost"};

// ---- against real memcached --------------------------------------------

// Two servers of its own for each test: the tests kill one.
class PrometheusLiveTest : public ::testing::Test {
 protected:
  auto list() const -> std::vector<Server> { return servers_.list(); }

  // The labels of server `i`, as the exposition writes them.
  auto labels(std::size_t i) const -> std::string {
    return "{server=\"127.0.0.1:" + std::to_string(servers_[i].port()) + "\"}";
  }

  // `count` keys whose server is `server`.
  static auto keys_on(const Client& client, std::size_t server, int count)
      -> std::vector<std::string> {
    std::vector<std::string> keys;
    for (int i = 0; static_cast<int>(keys.size()) < count; ++i) {
      std::string key = "prom:" + std::to_string(i);
      if (client.server_index_for(key) == server) {
        keys.push_back(std::move(key));
      }
    }
    return keys;
  }

  ServerSet servers_{2};
};

TEST_F(PrometheusLiveTest, SamplesAreTheClientsStats) {
  Client client(list());
  // Server 0: 3 hits and 2 misses; server 1: 1 hit and 4 misses, so that a
  // swapped family or server shows.
  const std::vector<int> stored = {3, 1};
  for (std::size_t s = 0; s < 2; ++s) {
    const auto keys = keys_on(client, s, 5);
    for (int k = 0; k < stored[s]; ++k) {
      ASSERT_TRUE(client.set(keys[static_cast<std::size_t>(k)], "v").ok());
    }
    for (const auto& key : keys) {
      ASSERT_TRUE(client.get(key).ok()) << key;
    }
  }
  const std::vector<ServerStats> stats = client.stats();
  ASSERT_EQ(stats.size(), 2U);
  std::ostringstream body;
  memshard::write_prometheus(body, client.stats());
  const std::string text = body.str();
  EXPECT_EQ(text, memshard::to_prometheus(stats));
  const Exposition parsed = parse(text);
  EXPECT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors) << "\n" << text;
  for (std::size_t s = 0; s < 2; ++s) {
    SCOPED_TRACE("server " + std::to_string(s));
    EXPECT_GT(stats[s].operations, 0U);
    EXPECT_EQ(value_of(text, "memshard_requests_total" + labels(s)),
              std::to_string(stats[s].operations))
        << text;
    EXPECT_EQ(stats[s].hits, static_cast<std::uint64_t>(stored[s]));
    EXPECT_EQ(value_of(text, "memshard_hits_total" + labels(s)), std::to_string(stored[s]));
    EXPECT_EQ(value_of(text, "memshard_misses_total" + labels(s)), std::to_string(5 - stored[s]));
    EXPECT_EQ(value_of(text, "memshard_errors_total" + labels(s)), "0");
    EXPECT_EQ(value_of(text, "memshard_server_ejected" + labels(s)), "0");
  }
  // The line an outside test greps for, byte for byte.
  EXPECT_NE(text.find("\nmemshard_requests_total" + labels(0) + " " +
                      std::to_string(stats[0].operations) + "\n"),
            std::string::npos)
      << text;
}

TEST_F(PrometheusLiveTest, KilledServerShowsErrorsAndEjection) {
  ClientOptions options;
  options.failure_limit = 1;
  options.connect_timeout = std::chrono::milliseconds(200);
  options.io_timeout = std::chrono::milliseconds(200);
  options.retry_interval = std::chrono::milliseconds(60'000);  // stays out for the test
  Client client(list(), options);
  const auto dead = keys_on(client, 1, 3);
  const auto alive = keys_on(client, 0, 3);
  for (const auto& key : dead) {
    ASSERT_TRUE(client.set(key, "v").ok());
  }
  servers_[1].stop();
  for (const auto& key : dead) {
    EXPECT_FALSE(client.get(key).ok()) << key;  // the first fails and ejects, the rest refused
  }
  for (const auto& key : alive) {
    EXPECT_TRUE(client.get(key).ok()) << key;
  }
  const std::vector<ServerStats> stats = client.stats();
  ASSERT_TRUE(stats[1].ejected);
  ASSERT_GE(stats[1].errors, 1U);
  const std::string text = memshard::to_prometheus(stats);
  EXPECT_TRUE(parse(text).errors.empty()) << text;
  EXPECT_EQ(value_of(text, "memshard_errors_total" + labels(1)), std::to_string(stats[1].errors));
  EXPECT_EQ(value_of(text, "memshard_server_ejected" + labels(1)), "1") << text;
  EXPECT_EQ(value_of(text, "memshard_ejections_total" + labels(1)), "1");
  EXPECT_EQ(value_of(text, "memshard_refused_total" + labels(1)), std::to_string(stats[1].refused));
  EXPECT_GE(stats[1].refused, 2U);
  EXPECT_EQ(value_of(text, "memshard_errors_total" + labels(0)), "0");
  EXPECT_EQ(value_of(text, "memshard_server_ejected" + labels(0)), "0");
  EXPECT_EQ(value_of(text, "memshard_ejections_total" + labels(0)), "0");
}

TEST_F(PrometheusLiveTest, MigrationCountersWhileOneRuns) {
  const std::vector<Server> all = list();
  Client client(std::vector<Server>{all[0]});
  std::vector<std::string> keys;
  for (int i = 0; i < 60; ++i) {
    keys.push_back("mig:" + std::to_string(i));
    ASSERT_TRUE(client.set(keys.back(), "v").ok());
  }
  const std::string before = memshard::to_prometheus(client.stats(), client.migration_stats());
  EXPECT_EQ(value_of(before, "memshard_migration_active"), "0");
  EXPECT_EQ(before.find("memshard_migration_fallback_hits_total"), std::string::npos);

  client.begin_migration(all);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.get(key).ok()) << key;
  }
  const MigrationStats migration = client.migration_stats();
  ASSERT_TRUE(migration.active);
  ASSERT_GT(migration.fallback_hits, 0U);
  const std::string text = memshard::to_prometheus(client.stats(), migration);
  const Exposition parsed = parse(text);
  EXPECT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors) << "\n" << text;
  EXPECT_EQ(value_of(text, "memshard_migration_active"), "1");
  EXPECT_EQ(value_of(text, "memshard_migration_fallback_hits_total"),
            std::to_string(migration.fallback_hits));
  EXPECT_EQ(value_of(text, "memshard_migration_copies_stored_total"),
            std::to_string(migration.copies_stored));
  EXPECT_EQ(value_of(text, "memshard_migration_same_owner_misses_total"),
            std::to_string(migration.same_owner_misses));
  // Both servers have their samples in the window.
  EXPECT_NE(value_of(text, "memshard_requests_total" + labels(1)), "absent");

  ASSERT_TRUE(client.commit_migration());
  const std::string after = memshard::to_prometheus(client.stats(), client.migration_stats());
  EXPECT_EQ(value_of(after, "memshard_migration_active"), "0");
  EXPECT_EQ(after.find("memshard_migration_fallback_hits_total"), std::string::npos) << after;
}

// ---- on hand-made stats ---------------------------------------------------

// A server's stats with every field distinct: field k holds base + k.
auto make_stats(Server server, std::uint64_t base, bool ejected) -> ServerStats {
  ServerStats s;
  s.server = std::move(server);
  s.operations = base + 1;
  s.hits = base + 2;
  s.misses = base + 3;
  s.errors = base + 4;
  s.ejections = base + 5;
  s.refused = base + 6;
  s.redirected = base + 7;
  s.kept_in = base + 8;
  s.cleaned = base + 9;
  s.flushes = base + 10;
  s.ejected = ejected;
  s.consecutive_failures = static_cast<std::uint32_t>(base + 12);
  s.probe_failures = static_cast<std::uint32_t>(base + 13);
  s.journaled = base + 14;
  s.journal_lost = base + 15;
  return s;
}

auto two_servers() -> std::vector<ServerStats> {
  return {make_stats(Server{"10.0.0.1", 11211, 1, ""}, 100, false),
          make_stats(Server{"::1", 11212, 1, "cache-b"}, 200, true)};
}

TEST(PrometheusFormatTest, EveryLineParsesAndEachFamilyIsAnnouncedOnceBeforeItsSamples) {
  const auto stats = two_servers();
  const std::string text = memshard::to_prometheus(stats);
  const Exposition parsed = parse(text);
  EXPECT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors) << "\n" << text;
  EXPECT_EQ(parsed.families, kServerFamilies);
  EXPECT_EQ(parsed.samples.size(), kServerFamilies.size() * 2);
  for (const auto& family : kServerFamilies) {
    EXPECT_EQ(count_lines_starting(text, "# HELP " + family + " "), 1U) << family;
    EXPECT_EQ(count_lines_starting(text, "# TYPE " + family + " "), 1U) << family;
    EXPECT_EQ(parsed.types.at(family), family.ends_with("_total") ? "counter" : "gauge") << family;
  }
  // The first family, byte for byte.
  EXPECT_TRUE(
      text.starts_with("# HELP memshard_requests_total Requests sent to the server.\n"
                       "# TYPE memshard_requests_total counter\n"
                       "memshard_requests_total{server=\"10.0.0.1:11211\"} 101\n"
                       "memshard_requests_total{server=\"[::1]:11212\",name=\"cache-b\"} "
                       "201\n"
                       "# HELP memshard_hits_total "))
      << text;
}

TEST(PrometheusFormatTest, EachFamilyReadsItsOwnField) {
  const auto stats = two_servers();
  const std::string text = memshard::to_prometheus(stats);
  const std::vector<std::string> labels = {"{server=\"10.0.0.1:11211\"}",
                                           "{server=\"[::1]:11212\",name=\"cache-b\"}"};
  for (std::size_t s = 0; s < 2; ++s) {
    const std::uint64_t base = s == 0 ? 100 : 200;
    for (std::size_t f = 0; f < kServerFamilies.size(); ++f) {
      // Field f holds base + f + 1, except the 0/1 gauge of ejection.
      const std::string expected = kServerFamilies[f] == "memshard_server_ejected"
                                       ? (s == 0 ? "0" : "1")
                                       : std::to_string(base + f + 1);
      EXPECT_EQ(value_of(text, kServerFamilies[f] + labels[s]), expected)
          << kServerFamilies[f] << " of server " << s << "\n"
          << text;
    }
  }
}

TEST(PrometheusFormatTest, LabelValuesAreEscaped) {
  const std::string nasty = "a\"b\\c\nd";
  const std::vector<ServerStats> stats = {make_stats(Server{"host", 1, 1, nasty}, 0, false)};
  PrometheusOptions options;
  options.labels = {{"pool", "x\\y\"z\nw"}};
  const std::string text = memshard::to_prometheus(stats, options);
  EXPECT_NE(text.find("memshard_hits_total{server=\"host:1\",name=\"a\\\"b\\\\c\\nd\","
                      "pool=\"x\\\\y\\\"z\\nw\"} 2\n"),
            std::string::npos)
      << text;
  const Exposition parsed = parse(text);
  ASSERT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors) << "\n" << text;
  ASSERT_FALSE(parsed.samples.empty());
  for (const Sample& sample : parsed.samples) {
    ASSERT_EQ(sample.labels.size(), 3U) << sample.series;
    EXPECT_EQ(sample.labels[1], std::make_pair(std::string("name"), nasty));
    EXPECT_EQ(sample.labels[2], std::make_pair(std::string("pool"), std::string("x\\y\"z\nw")));
  }
}

TEST(PrometheusFormatTest, NameLabelOnlyForNamedServersAndIpv6InBrackets) {
  const std::string text = memshard::to_prometheus(two_servers());
  EXPECT_EQ(value_of(text, "memshard_misses_total{server=\"10.0.0.1:11211\"}"), "103");
  EXPECT_EQ(value_of(text, "memshard_misses_total{server=\"[::1]:11212\",name=\"cache-b\"}"),
            "203");
  EXPECT_EQ(text.find("name=\"\""), std::string::npos);
}

TEST(PrometheusFormatTest, ConstantLabelsAndPrefixApplyToEverySample) {
  PrometheusOptions options;
  options.prefix = "cache";
  options.labels = {{"pool", "sessions"}, {"dc", "eu-1"}};
  const std::string text =
      memshard::to_prometheus(two_servers(), MigrationStats{.active = true}, options);
  const Exposition parsed = parse(text);
  ASSERT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors) << "\n" << text;
  EXPECT_EQ(text.find("memshard"), std::string::npos) << text;
  ASSERT_FALSE(parsed.samples.empty());
  for (const Sample& sample : parsed.samples) {
    EXPECT_TRUE(sample.name.starts_with("cache_")) << sample.series;
    ASSERT_GE(sample.labels.size(), 2U) << sample.series;
    const auto n = sample.labels.size();
    EXPECT_EQ(sample.labels[n - 2], std::make_pair(std::string("pool"), std::string("sessions")))
        << sample.series;
    EXPECT_EQ(sample.labels[n - 1], std::make_pair(std::string("dc"), std::string("eu-1")))
        << sample.series;
  }
  EXPECT_EQ(value_of(text,
                     "cache_requests_total{server=\"10.0.0.1:11211\",pool=\"sessions\","
                     "dc=\"eu-1\"}"),
            "101");
  EXPECT_EQ(value_of(text, "cache_migration_active{pool=\"sessions\",dc=\"eu-1\"}"), "1");
}

TEST(PrometheusFormatTest, BadOptionsThrowConfigErrorBeforeWriting) {
  const auto stats = two_servers();
  const auto rejects = [&](const PrometheusOptions& options) {
    std::ostringstream out;
    bool threw = false;
    try {
      memshard::write_prometheus(out, stats, options);
    } catch (const ConfigError& error) {
      threw = std::string_view(error.what()).starts_with("memshard: prometheus ");
    }
    EXPECT_THROW(static_cast<void>(memshard::to_prometheus(stats, options)), ConfigError);
    EXPECT_THROW(memshard::validate_prometheus_options(options), ConfigError);
    return threw && out.str().empty();
  };
  const auto with_label = [](std::string name) {
    PrometheusOptions options;
    options.labels = {{std::move(name), "v"}};
    return options;
  };
  for (const char* bad :
       {"", "1pool", "po-ol", "pool name", "pöol", "po:ol", "__pool", "server", "name"}) {
    EXPECT_TRUE(rejects(with_label(bad))) << "label name '" << bad << "'";
  }
  PrometheusOptions twice;
  twice.labels = {{"pool", "a"}, {"pool", "b"}};
  EXPECT_TRUE(rejects(twice));
  for (const char* bad : {"", "9cache", "cache-x", "cache x"}) {
    PrometheusOptions options;
    options.prefix = bad;
    EXPECT_TRUE(rejects(options)) << "prefix '" << bad << "'";
  }
  // And the good ones pass.
  for (const char* good : {"pool", "_p", "Pool_2", "p0"}) {
    EXPECT_NO_THROW(memshard::validate_prometheus_options(with_label(good))) << good;
  }
  PrometheusOptions colon;
  colon.prefix = "app:cache";
  EXPECT_NO_THROW(memshard::validate_prometheus_options(colon));
}

TEST(PrometheusFormatTest, EmptyStatsGiveHelpAndTypeLinesOnly) {
  const std::string text = memshard::to_prometheus({});
  const Exposition parsed = parse(text);
  EXPECT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors) << "\n" << text;
  EXPECT_TRUE(parsed.samples.empty()) << text;
  EXPECT_EQ(parsed.families, kServerFamilies);
  EXPECT_EQ(count_lines_starting(text, "# "), 2 * kServerFamilies.size());
}

TEST(PrometheusFormatTest, MigrationFamiliesOnlyWhileActive) {
  const auto stats = two_servers();
  const std::string idle = memshard::to_prometheus(stats, MigrationStats{});
  EXPECT_TRUE(idle.starts_with(memshard::to_prometheus(stats)));
  EXPECT_TRUE(
      idle.ends_with("# HELP memshard_migration_active 1 while a live migration runs, "
                     "else 0.\n# TYPE memshard_migration_active gauge\n"
                     "memshard_migration_active 0\n"))
      << idle;

  MigrationStats m;
  m.active = true;
  m.new_hits = 1;
  m.same_owner_misses = 2;
  m.fallback_hits = 3;
  m.fallback_misses = 4;
  m.fallback_skipped = 5;
  m.copies_stored = 6;
  m.copies_present = 7;
  m.copies_revoked = 8;
  m.copies_failed = 9;
  m.copies_ttl_exact = 10;
  m.copies_ttl_capped = 11;
  m.copies_skipped = 12;
  m.old_copies_moved = 13;
  m.invalidations = 14;
  m.invalidations_failed = 15;
  m.tainted_servers = 16;
  m.counters_moved = 17;
  m.leases_won = 18;
  m.leases_busy = 19;
  std::ostringstream out;
  memshard::write_prometheus(out, stats, m);
  const std::string text = out.str();
  EXPECT_EQ(text, memshard::to_prometheus(stats, m));
  const Exposition parsed = parse(text);
  EXPECT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors) << "\n" << text;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"memshard_migration_active", "1"},
      {"memshard_migration_new_hits_total", "1"},
      {"memshard_migration_same_owner_misses_total", "2"},
      {"memshard_migration_fallback_hits_total", "3"},
      {"memshard_migration_fallback_misses_total", "4"},
      {"memshard_migration_fallback_skipped_total", "5"},
      {"memshard_migration_copies_stored_total", "6"},
      {"memshard_migration_copies_present_total", "7"},
      {"memshard_migration_copies_revoked_total", "8"},
      {"memshard_migration_copies_failed_total", "9"},
      {"memshard_migration_copies_ttl_exact_total", "10"},
      {"memshard_migration_copies_ttl_capped_total", "11"},
      {"memshard_migration_copies_skipped_total", "12"},
      {"memshard_migration_old_copies_moved_total", "13"},
      {"memshard_migration_invalidations_total", "14"},
      {"memshard_migration_invalidations_failed_total", "15"},
      {"memshard_migration_tainted_servers", "16"},
      {"memshard_migration_counters_moved_total", "17"},
      {"memshard_migration_leases_won_total", "18"},
      {"memshard_migration_leases_busy_total", "19"}};
  std::vector<std::string> migration_families;
  for (const auto& family : parsed.families) {
    if (family.starts_with("memshard_migration_")) {
      migration_families.push_back(family);
    }
  }
  ASSERT_EQ(migration_families.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(migration_families[i], expected[i].first);
    EXPECT_EQ(value_of(text, expected[i].first), expected[i].second) << expected[i].first;
    EXPECT_EQ(parsed.types.at(expected[i].first),
              expected[i].first.ends_with("_total") ? "counter" : "gauge");
  }
}

TEST(PrometheusFormatTest, ContentTypeNamesVersion004) {
  EXPECT_EQ(memshard::kPrometheusContentType, "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace
}  // namespace prometheus_test
