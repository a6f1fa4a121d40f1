// SPDX-License-Identifier: MIT
// wire/detail/metadump.hpp: metadump lines parsed strictly (every field, the
// %-decoding, each error naming its part), lines captured from a real
// memcached through a plain socket, the remaining TTL on the server's clock
// and the min_ttl rule, the exptime a copy is sent with, and the hotness order
// (a sort and the bounded hottest N of a stream).

#include "memshard/wire/detail/metadump.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "support/memcached_server.hpp"

namespace metadump_test {
namespace {

using memshard::detail::classify_metadump_line;
using memshard::detail::copy_ttl;
using memshard::detail::CopyTtl;
using memshard::detail::exptime_for_copy;
using memshard::detail::hotter;
using memshard::detail::HottestN;
using memshard::detail::MetadumpEntry;
using memshard::detail::MetadumpLineKind;
using memshard::detail::parse_metadump_line;
using memshard::detail::remaining_ttl;
using memshard::detail::sort_hottest_first;
using memshard::detail::TtlVerdict;
using memshard::detail::uri_decode;
using memshard::testing::MemcachedServer;
using std::chrono::seconds;

// A line as memcached 1.6.18 writes it (crawler.c), with its bare "\n".
constexpr std::string_view kLine =
    "key=a%2Fb%3Fc exp=1796123253 la=1796123153 cas=1 fetch=no cls=1 size=65\n";

auto parsed(std::string_view line) -> MetadumpEntry {
  auto result = parse_metadump_line(line);
  EXPECT_TRUE(result.ok()) << result.error;
  return result.entry.value_or(MetadumpEntry{});
}

auto error_of(std::string_view line) -> std::string {
  auto result = parse_metadump_line(line);
  EXPECT_FALSE(result.ok()) << line;
  return result.error;
}

TEST(MetadumpTest, ParsesEveryField) {
  const MetadumpEntry entry = parsed(kLine);
  EXPECT_EQ(entry.key, "a/b?c");
  EXPECT_EQ(entry.exp, std::optional<std::int64_t>{1796123253});
  EXPECT_EQ(entry.last_access, 1796123153);
  EXPECT_EQ(entry.cas, 1U);
  EXPECT_FALSE(entry.fetched);
  EXPECT_EQ(entry.slab_class, 1U);
  EXPECT_EQ(entry.size, 65U);
}

TEST(MetadumpTest, NeverExpiringFetchedItemAndLargeNumbers) {
  const MetadumpEntry entry = parsed(
      "key=plain exp=-1 la=1796123153 cas=18446744073709551615 fetch=yes cls=63 "
      "size=1048576");
  EXPECT_EQ(entry.key, "plain");
  EXPECT_EQ(entry.exp, std::nullopt);
  EXPECT_EQ(entry.cas, 18446744073709551615ULL);
  EXPECT_TRUE(entry.fetched);
  EXPECT_EQ(entry.slab_class, 63U);
  EXPECT_EQ(entry.size, 1048576U);
}

TEST(MetadumpTest, LineEndsAndFieldOrder) {
  const MetadumpEntry bare = parsed(kLine.substr(0, kLine.size() - 1));
  EXPECT_EQ(parsed(std::string(kLine.substr(0, kLine.size() - 1)) + "\r\n"), bare);
  EXPECT_EQ(parsed("size=65 cls=1 fetch=no cas=1 la=1796123153 exp=1796123253 key=a%2Fb%3Fc"),
            bare);
}

TEST(MetadumpTest, DecodesEscapes) {
  std::string out;
  EXPECT_EQ(uri_decode("a%2Fb%3Fc", out), "");
  EXPECT_EQ(out, "a/b?c");
  EXPECT_EQ(uri_decode("%25ff%2520", out), "");
  EXPECT_EQ(out, "%ff%20");
  EXPECT_EQ(uri_decode("caf%C3%A9", out), "");
  EXPECT_EQ(out, "caf\xc3\xa9");
  EXPECT_EQ(uri_decode("%e2%82%ac", out), "");  // lower case is accepted too
  EXPECT_EQ(out, "\xe2\x82\xac");
  EXPECT_EQ(uri_decode("-._~AZaz09", out), "");
  EXPECT_EQ(out, "-._~AZaz09");
  EXPECT_EQ(parsed("key=%7B42%7D%3Auser exp=-1 la=1 cas=2 fetch=no cls=1 size=60").key,
            "{42}:user");
}

TEST(MetadumpTest, RejectsBadEscapes) {
  std::string out;
  EXPECT_EQ(uri_decode("ab%", out), "bad %-escape '%' at offset 2");
  EXPECT_EQ(uri_decode("ab%4", out), "bad %-escape '%4' at offset 2");
  EXPECT_EQ(uri_decode("%4g", out), "bad %-escape '%4g' at offset 0");
  EXPECT_EQ(uri_decode("%%41", out), "bad %-escape '%%4' at offset 0");
  EXPECT_EQ(error_of("key=a%zz exp=-1 la=1 cas=2 fetch=no cls=1 size=60"),
            "metadump: field 'key': bad %-escape '%zz' at offset 1 in 'a%zz'");
}

TEST(MetadumpTest, RejectsKeysMemcachedWouldRefuse) {
  EXPECT_EQ(error_of("key=a%20b exp=-1 la=1 cas=2 fetch=no cls=1 size=60"),
            "metadump: field 'key': decoded key has a space at offset 1: 'a%20b'");
  EXPECT_EQ(error_of("key=a%0D%0Aflush_all exp=-1 la=1 cas=2 fetch=no cls=1 size=60"),
            "metadump: field 'key': decoded key has a control byte 0x0d at offset 1: "
            "'a%0D%0Aflush_all'");
  EXPECT_EQ(error_of("key= exp=-1 la=1 cas=2 fetch=no cls=1 size=60"),
            "metadump: field 'key': decoded key is empty: ''");
  const std::string long_key(251, 'k');
  EXPECT_EQ(
      error_of("key=" + long_key + " exp=-1 la=1 cas=2 fetch=no cls=1 size=60"),
      "metadump: field 'key': decoded key is 251 bytes long, the limit is 250: '" + long_key + "'");
  EXPECT_EQ(parsed("key=" + std::string(250, 'k') + " exp=-1 la=1 cas=2 fetch=no cls=1 size=60")
                .key.size(),
            250U);
}

TEST(MetadumpTest, RejectsMissingUnknownAndRepeatedFields) {
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=2 fetch=no cls=1"), "metadump: missing field 'size'");
  EXPECT_EQ(error_of("exp=-1 la=1 cas=2 fetch=no cls=1 size=60"), "metadump: missing field 'key'");
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=2 fetch=no cls=1 size=60 flags=0"),
            "metadump: unknown field 'flags'");
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=2 cas=3 fetch=no cls=1 size=60"),
            "metadump: repeated field 'cas'");
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=2 fetch=no cls=1 size"),
            "metadump: field without '=': 'size'");
  EXPECT_EQ(error_of("key=a  exp=-1 la=1 cas=2 fetch=no cls=1 size=60"),
            "metadump: empty field at offset 6");
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=2 fetch=no cls=1 size=60 "),
            "metadump: empty field at offset 47");
  EXPECT_EQ(error_of(""), "metadump: empty line");
  EXPECT_EQ(error_of("\n"), "metadump: empty line");
  EXPECT_EQ(error_of("END\r\n"), "metadump: field without '=': 'END'");
}

TEST(MetadumpTest, RejectsBadNumbers) {
  EXPECT_EQ(error_of("key=a exp=12x la=1 cas=2 fetch=no cls=1 size=60"),
            "metadump: field 'exp': not a number: '12x'");
  EXPECT_EQ(error_of("key=a exp=-2 la=1 cas=2 fetch=no cls=1 size=60"),
            "metadump: field 'exp': not a number: '-2'");
  EXPECT_EQ(error_of("key=a exp=+5 la=1 cas=2 fetch=no cls=1 size=60"),
            "metadump: field 'exp': not a number: '+5'");
  EXPECT_EQ(error_of("key=a exp=-1 la= cas=2 fetch=no cls=1 size=60"),
            "metadump: field 'la': not a number: ''");
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=18446744073709551616 fetch=no cls=1 size=60"),
            "metadump: field 'cas': not a number: '18446744073709551616'");
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=2 fetch=maybe cls=1 size=60"),
            "metadump: field 'fetch': neither yes nor no: 'maybe'");
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=2 fetch=no cls=4294967296 size=60"),
            "metadump: field 'cls': not a number: '4294967296'");
  EXPECT_EQ(error_of("key=a exp=-1 la=1 cas=2 fetch=no cls=1 size=-60"),
            "metadump: field 'size': not a number: '-60'");
}

TEST(MetadumpTest, ClassifiesReplyLines) {
  EXPECT_EQ(classify_metadump_line(kLine), MetadumpLineKind::kEntry);
  EXPECT_EQ(classify_metadump_line("END\r\n"), MetadumpLineKind::kEnd);
  EXPECT_EQ(classify_metadump_line("END"), MetadumpLineKind::kEnd);
  EXPECT_EQ(classify_metadump_line("BUSY currently processing crawler request\r\n"),
            MetadumpLineKind::kBusy);
  EXPECT_EQ(classify_metadump_line("ERROR metadump not allowed\r\n"), MetadumpLineKind::kError);
  EXPECT_EQ(classify_metadump_line("CLIENT_ERROR bad command line format\r\n"),
            MetadumpLineKind::kError);
}

TEST(MetadumpTest, RemainingTtlReadsTheServersClock) {
  MetadumpEntry entry;
  // Far from the client's clock on purpose: only the server's time counts.
  entry.exp = 1'000;
  EXPECT_EQ(remaining_ttl(entry, 900), seconds{100});
  EXPECT_EQ(remaining_ttl(entry, 1'000), seconds{0});
  EXPECT_EQ(remaining_ttl(entry, 1'005), seconds{-5});
  entry.exp = std::nullopt;
  EXPECT_EQ(remaining_ttl(entry, 900), std::nullopt);
}

TEST(MetadumpTest, MinTtlRule) {
  MetadumpEntry entry;
  entry.exp = 1'000;
  EXPECT_EQ(copy_ttl(entry, 900, seconds{5}), (CopyTtl{TtlVerdict::kRemaining, seconds{100}}));
  EXPECT_EQ(copy_ttl(entry, 995, seconds{5}), (CopyTtl{TtlVerdict::kRemaining, seconds{5}}));
  EXPECT_EQ(copy_ttl(entry, 996, seconds{5}), (CopyTtl{TtlVerdict::kSkip, seconds{0}}));
  EXPECT_EQ(copy_ttl(entry, 1'001, seconds{5}), (CopyTtl{TtlVerdict::kSkip, seconds{0}}));
  // A zero TTL would mean "never expires" to memcached: skipped even with no minimum.
  EXPECT_EQ(copy_ttl(entry, 1'000, seconds{0}), (CopyTtl{TtlVerdict::kSkip, seconds{0}}));
  EXPECT_EQ(copy_ttl(entry, 999, seconds{0}), (CopyTtl{TtlVerdict::kRemaining, seconds{1}}));
  entry.exp = std::nullopt;
  EXPECT_EQ(copy_ttl(entry, 999, seconds{3600}), (CopyTtl{TtlVerdict::kUnlimited, seconds{0}}));
}

TEST(MetadumpTest, ExptimeForCopyTurnsAbsoluteBeyondThirtyDays) {
  constexpr std::int64_t kThirtyDays = 2'592'000;
  EXPECT_EQ(exptime_for_copy(seconds{100}, 1'700'000'000), 100);
  EXPECT_EQ(exptime_for_copy(seconds{kThirtyDays}, 1'700'000'000), kThirtyDays);
  EXPECT_EQ(exptime_for_copy(seconds{kThirtyDays + 1}, 1'700'000'000),
            1'700'000'000 + kThirtyDays + 1);
  EXPECT_EQ(exptime_for_copy(seconds{0}, 1'700'000'000), 1);
}

auto entry_of(std::string key, bool fetched, std::int64_t last_access) -> MetadumpEntry {
  MetadumpEntry entry;
  entry.key = std::move(key);
  entry.fetched = fetched;
  entry.last_access = last_access;
  return entry;
}

auto keys_of(const std::vector<MetadumpEntry>& entries) -> std::vector<std::string> {
  std::vector<std::string> keys;
  for (const MetadumpEntry& entry : entries) {
    keys.push_back(entry.key);
  }
  return keys;
}

TEST(MetadumpTest, HottestFirstIsFetchedThenRecent) {
  std::vector<MetadumpEntry> entries = {
      entry_of("cold-old", false, 10), entry_of("hot-old", true, 10),
      entry_of("cold-new", false, 30), entry_of("hot-new", true, 20),
      entry_of("hot-new-b", true, 20)};
  sort_hottest_first(entries);
  EXPECT_EQ(keys_of(entries),
            (std::vector<std::string>{"hot-new", "hot-new-b", "hot-old", "cold-new", "cold-old"}));
  EXPECT_FALSE(hotter(entries[0], entries[0]));
}

TEST(MetadumpTest, HottestNKeepsTheHottestOfAStream) {
  HottestN hottest(3);
  EXPECT_EQ(hottest.capacity(), 3U);
  std::vector<MetadumpEntry> stream;
  for (int i = 0; i < 100; ++i) {
    // Fetched on every seventh; last access scrambled.
    stream.push_back(
        entry_of(std::string("k").append(std::to_string(i)), i % 7 == 0, (i * 37) % 101));
  }
  std::vector<MetadumpEntry> expected = stream;
  sort_hottest_first(expected);
  expected.resize(3);
  for (const MetadumpEntry& entry : stream) {
    (void)hottest.offer(entry);
    EXPECT_LE(hottest.size(), 3U);
  }
  EXPECT_EQ(keys_of(hottest.take()), keys_of(expected));
  EXPECT_EQ(hottest.size(), 0U);
  EXPECT_TRUE(hottest.take().empty());

  // A colder entry than every kept one is refused once full.
  HottestN two(2);
  EXPECT_TRUE(two.offer(entry_of("a", true, 5)));
  EXPECT_TRUE(two.offer(entry_of("b", true, 6)));
  EXPECT_FALSE(two.offer(entry_of("c", false, 100)));
  EXPECT_TRUE(two.offer(entry_of("d", true, 7)));
  EXPECT_EQ(keys_of(two.take()), (std::vector<std::string>{"d", "b"}));

  HottestN none(0);
  EXPECT_FALSE(none.offer(entry_of("a", true, 5)));
  EXPECT_EQ(none.size(), 0U);
}

// The live part: a plain socket to a real memcached.
namespace live {

namespace td = memshard::testing::detail;

/// send_all, then read until the reply ends with `terminator` (bounded).
auto converse(std::uint16_t port, std::string_view request, std::string_view terminator)
    -> std::string {
  const auto deadline = td::Clock::now() + std::chrono::seconds{10};
  int error = 0;
  const td::FileDescriptor fd = td::connect_loopback(port, deadline, error);
  if (!fd.valid()) {
    ADD_FAILURE() << "cannot connect: " << td::errno_text(error);
    return {};
  }
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (!td::wait_for(fd.get(), POLLOUT, deadline)) {
      ADD_FAILURE() << "send timed out";
      return {};
    }
  }
  std::string reply;
  char buffer[4096];
  while (!reply.ends_with(terminator)) {
    if (!td::wait_for(fd.get(), POLLIN, deadline)) {
      ADD_FAILURE() << "no complete reply; got '" << reply << "'";
      return reply;
    }
    const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n == 0) {
      break;
    }
    if (n > 0) {
      reply.append(buffer, static_cast<std::size_t>(n));
    }
  }
  return reply;
}

auto split_lines(std::string_view text) -> std::vector<std::string> {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    const std::size_t end = eol == std::string_view::npos ? text.size() : eol + 1;
    lines.emplace_back(text.substr(0, end));
    text.remove_prefix(end);
  }
  return lines;
}

}  // namespace live

TEST(MetadumpTest, ParsesEveryLineOfARealMetadump) {
  const MemcachedServer server;
  // Keys without spaces but with bytes that need %-escapes, TTL 0 and TTL 100.
  const std::map<std::string, int> ttls = {
      {"a/b?c", 100},     {"plain", 0},  {"100%", 100},    {"x=y&z", 0},
      {"caf\xc3\xa9", 0}, {"~._-", 100}, {"{tag}:k#1", 0}, {std::string(250, 'L'), 100}};
  std::string stores;
  for (const auto& [key, ttl] : ttls) {
    stores += "set " + key + " 0 " + std::to_string(ttl) + " 1\r\nv\r\n";
  }
  stores += "get plain\r\nmn\r\n";
  const std::string stored = live::converse(server.port(), stores, "MN\r\n");
  ASSERT_EQ(std::count(stored.begin(), stored.end(), '\n'), 8 + 3 + 1) << stored;

  const std::string stats = live::converse(server.port(), "stats\r\n", "END\r\n");
  const std::size_t at = stats.find("STAT time ");
  ASSERT_NE(at, std::string::npos) << stats;
  const std::int64_t server_now = std::stoll(stats.substr(at + 10));

  // The crawler answers BUSY while a crawl of its own runs: ask again, bounded.
  std::string dump;
  for (int attempt = 0; attempt < 200; ++attempt) {
    dump = live::converse(server.port(), "lru_crawler metadump all\r\n", "\r\n");
    if (!dump.starts_with("BUSY")) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  ASSERT_TRUE(dump.ends_with("END\r\n")) << dump;

  std::map<std::string, MetadumpEntry> seen;
  for (const std::string& line : live::split_lines(dump)) {
    if (classify_metadump_line(line) == MetadumpLineKind::kEnd) {
      continue;
    }
    ASSERT_EQ(classify_metadump_line(line), MetadumpLineKind::kEntry) << line;
    EXPECT_TRUE(line.ends_with("\n") && !line.ends_with("\r\n")) << line;
    const auto result = parse_metadump_line(line);
    ASSERT_TRUE(result.ok()) << result.error;
    seen[result.entry->key] = *result.entry;
  }
  ASSERT_EQ(seen.size(), ttls.size()) << dump;
  EXPECT_NE(dump.find("key=a%2Fb%3Fc "), std::string::npos) << dump;
  for (const auto& [key, ttl] : ttls) {
    ASSERT_EQ(seen.count(key), 1U) << key;
    const MetadumpEntry& entry = seen[key];
    EXPECT_EQ(entry.fetched, key == "plain") << key;
    EXPECT_GE(entry.slab_class, 1U);
    EXPECT_GT(entry.size, key.size() + 1);
    EXPECT_LE(std::abs(entry.last_access - server_now), 2) << key;
    const auto left = remaining_ttl(entry, server_now);
    if (ttl == 0) {
      EXPECT_EQ(left, std::nullopt) << key;
      EXPECT_EQ(copy_ttl(entry, server_now, seconds{1}).verdict, TtlVerdict::kUnlimited);
    } else {
      ASSERT_TRUE(left.has_value()) << key;
      EXPECT_GE(left->count(), ttl - 2) << key;
      EXPECT_LE(left->count(), ttl + 1) << key;
      EXPECT_EQ(copy_ttl(entry, server_now, seconds{1}).verdict, TtlVerdict::kRemaining);
      EXPECT_EQ(copy_ttl(entry, server_now, seconds{ttl + 10}).verdict, TtlVerdict::kSkip);
    }
  }
}

}  // namespace
}  // namespace metadump_test
