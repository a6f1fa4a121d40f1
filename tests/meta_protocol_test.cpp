// SPDX-License-Identifier: MIT
// wire/detail/meta_protocol.hpp: the request writers byte for byte, every reply
// kind and flag, every reply fed one byte at a time and cut in two at every
// offset, every malformed case by name, the text-line parser, and a seeded
// fuzz loop (mutations that must not crash or overrun, random replies that
// must round-trip).

#include "memshard/wire/detail/meta_protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace meta_protocol_test {
namespace {

using memshard::KeyErrc;
using memshard::detail::MetaArithmeticFlags;
using memshard::detail::MetaArithmeticMode;
using memshard::detail::MetaDeleteFlags;
using memshard::detail::MetaGetFlags;
using memshard::detail::MetaLimits;
using memshard::detail::MetaParse;
using memshard::detail::MetaParseResult;
using memshard::detail::MetaReply;
using memshard::detail::MetaReplyKind;
using memshard::detail::MetaReplyParser;
using memshard::detail::MetaSetFlags;
using memshard::detail::MetaSetMode;
using memshard::detail::TextLineParser;
using memshard::detail::TextLinesEnd;

// ---------------------------------------------------------------------------
// Writers

TEST(MetaWriterTest, GetWritesTheRequestedFlagsInOrder) {
  std::string out;
  EXPECT_FALSE(memshard::detail::write_meta_get(
      out, "k1", {.value = true, .ttl = true, .client_flags = true, .cas = true}));
  EXPECT_EQ(out, "mg k1 v t f c\r\n");
  out.clear();
  EXPECT_FALSE(memshard::detail::write_meta_get(out, "k", {}));
  EXPECT_EQ(out, "mg k\r\n");
  out.clear();
  const MetaGetFlags every{.value = true,
                           .ttl = true,
                           .client_flags = true,
                           .cas = true,
                           .size = true,
                           .key = true,
                           .hit_before = true,
                           .last_access = true,
                           .no_bump = true,
                           .quiet = true,
                           .vivify_ttl = 30,
                           .recache_ttl = 5,
                           .touch_ttl = -1,
                           .opaque = 4294967295U};
  EXPECT_FALSE(memshard::detail::write_meta_get(out, "key", every));
  EXPECT_EQ(out, "mg key v t f c s k h l u N30 R5 T-1 q O4294967295\r\n");
}

TEST(MetaWriterTest, SetWritesTheDataBlockAndEveryMode) {
  std::string out;
  EXPECT_FALSE(memshard::detail::write_meta_set(out, "k", "abc", {.ttl = 100, .client_flags = 7}));
  EXPECT_EQ(out, "ms k 3 T100 F7\r\nabc\r\n");
  out.clear();
  EXPECT_FALSE(memshard::detail::write_meta_set(out, "k", "", {}));
  EXPECT_EQ(out, "ms k 0\r\n\r\n");
  out.clear();
  const MetaSetFlags every{.ttl = 0,
                           .client_flags = 4294967295U,
                           .cas = 18446744073709551615ULL,
                           .mode = MetaSetMode::kReplace,
                           .invalidate = true,
                           .return_cas = true,
                           .quiet = true,
                           .opaque = 9};
  EXPECT_FALSE(memshard::detail::write_meta_set(out, "k", "a b\r\n", every));
  EXPECT_EQ(out, "ms k 5 T0 F4294967295 C18446744073709551615 MR I c q O9\r\na b\r\n\r\n");
  const std::pair<MetaSetMode, std::string_view> modes[] = {
      {MetaSetMode::kSet, "ms k 1\r\n"},
      {MetaSetMode::kAdd, "ms k 1 ME\r\n"},
      {MetaSetMode::kAppend, "ms k 1 MA\r\n"},
      {MetaSetMode::kPrepend, "ms k 1 MP\r\n"},
      {MetaSetMode::kReplace, "ms k 1 MR\r\n"}};
  for (const auto& [mode, header] : modes) {
    out.clear();
    EXPECT_FALSE(memshard::detail::write_meta_set(out, "k", "v", {.mode = mode}));
    EXPECT_EQ(out, std::string(header) + "v\r\n");
  }
}

TEST(MetaWriterTest, DeleteArithmeticAndNoop) {
  std::string out;
  EXPECT_FALSE(memshard::detail::write_meta_delete(out, "k", {}));
  EXPECT_EQ(out, "md k\r\n");
  out.clear();
  EXPECT_FALSE(memshard::detail::write_meta_delete(
      out, "k", {.cas = 5, .invalidate = true, .stale_ttl = 30, .quiet = true, .opaque = 1}));
  EXPECT_EQ(out, "md k C5 I T30 q O1\r\n");
  out.clear();
  EXPECT_FALSE(memshard::detail::write_meta_arithmetic(out, "n", {}));
  EXPECT_EQ(out, "ma n\r\n");
  out.clear();
  const MetaArithmeticFlags every{.mode = MetaArithmeticMode::kDecrement,
                                  .delta = 5,
                                  .vivify_ttl = 0,
                                  .initial = 10,
                                  .touch_ttl = 60,
                                  .cas = 3,
                                  .value = true,
                                  .ttl = true,
                                  .return_cas = true,
                                  .quiet = true,
                                  .opaque = 2};
  EXPECT_FALSE(memshard::detail::write_meta_arithmetic(out, "n", every));
  EXPECT_EQ(out, "ma n MD D5 N0 J10 T60 C3 v t c q O2\r\n");
  out.clear();
  memshard::detail::write_meta_noop(out);
  EXPECT_EQ(out, "mn\r\n");
}

TEST(MetaWriterTest, RefusesKeysThatWouldBreakTheCommand) {
  const std::string too_long(251, 'k');
  const std::pair<std::string, KeyErrc> bad[] = {{"", KeyErrc::kEmpty},
                                                 {too_long, KeyErrc::kTooLong},
                                                 {"a b", KeyErrc::kSpace},
                                                 {"a\r\nflush_all", KeyErrc::kControl},
                                                 {std::string("a\0b", 3), KeyErrc::kControl},
                                                 {"a\x7f", KeyErrc::kControl}};
  for (const auto& [key, code] : bad) {
    std::string out = "before";
    const auto get = memshard::detail::write_meta_get(out, key, {.value = true});
    const auto set = memshard::detail::write_meta_set(out, key, "v", {});
    const auto remove = memshard::detail::write_meta_delete(out, key, {});
    const auto count = memshard::detail::write_meta_arithmetic(out, key, {});
    for (const auto& problem : {get, set, remove, count}) {
      ASSERT_TRUE(problem.has_value()) << key;
      EXPECT_EQ(problem->code, code) << key;
    }
    EXPECT_EQ(out, "before") << "nothing is written for a bad key";
  }
  std::string out;
  const std::string longest(250, 'k');
  EXPECT_FALSE(memshard::detail::write_meta_get(out, longest, {}));
  EXPECT_EQ(out, "mg " + longest + "\r\n");
  out.clear();
  EXPECT_FALSE(memshard::detail::write_meta_get(out, "\xc3\xa9t\xc3\xa9", {}));  // UTF-8 is fine
}

// ---------------------------------------------------------------------------
// Replies

struct ValidCase {
  std::string bytes;
  MetaReply expected;
};

auto reply(MetaReplyKind kind) -> MetaReply {
  MetaReply out;
  out.kind = kind;
  return out;
}

auto valid_cases() -> std::vector<ValidCase> {
  std::vector<ValidCase> cases;
  MetaReply value = reply(MetaReplyKind::kValue);
  value.ttl = 99;
  value.client_flags = 7;
  value.cas = 1;
  value.value = "abc";
  cases.push_back({"VA 3 t99 f7 c1\r\nabc\r\n", value});
  MetaReply binary = reply(MetaReplyKind::kValue);
  binary.value = std::string("\r\n\0 VA 1\r\n", 10);
  cases.push_back({"VA 10\r\n" + binary.value + "\r\n", binary});
  cases.push_back({"VA 0\r\n\r\n", reply(MetaReplyKind::kValue)});
  MetaReply lease = reply(MetaReplyKind::kHeader);
  lease.cas = 18;
  lease.ttl = 30;
  lease.won = true;
  cases.push_back({"HD c18 t30 W\r\n", lease});
  MetaReply every = reply(MetaReplyKind::kHeader);
  every.ttl = -1;
  every.client_flags = 4294967295U;
  every.cas = 18446744073709551615ULL;
  every.size = 5;
  every.key = "azE=";
  every.hit_before = true;
  every.last_access = 3;
  every.opaque = 99;
  every.base64_key = true;
  every.won = true;
  every.stale = true;
  every.win_sent = true;
  cases.push_back(
      {"HD t-1 f4294967295 c18446744073709551615 s5 kazE= h1 l3 O99 b W X Z\r\n", every});
  MetaReply not_hit = reply(MetaReplyKind::kHeader);
  not_hit.hit_before = false;
  not_hit.ttl = 0;
  cases.push_back({"HD h0 t0\r\n", not_hit});
  cases.push_back({"HD\r\n", reply(MetaReplyKind::kHeader)});
  cases.push_back({"EN\r\n", reply(MetaReplyKind::kMiss)});
  MetaReply miss_with_key = reply(MetaReplyKind::kMiss);
  miss_with_key.key = "zz";
  miss_with_key.opaque = 5;
  cases.push_back({"EN kzz O5\r\n", miss_with_key});
  cases.push_back({"NF\r\n", reply(MetaReplyKind::kNotFound)});
  cases.push_back({"NS\r\n", reply(MetaReplyKind::kNotStored)});
  cases.push_back({"EX\r\n", reply(MetaReplyKind::kExists)});
  cases.push_back({"MN\r\n", reply(MetaReplyKind::kNoop)});
  cases.push_back({"ERROR\r\n", reply(MetaReplyKind::kError)});
  MetaReply client = reply(MetaReplyKind::kClientError);
  client.message = "bad data chunk";
  cases.push_back({"CLIENT_ERROR bad data chunk\r\n", client});
  MetaReply server = reply(MetaReplyKind::kServerError);
  server.message = "out of memory storing object";
  cases.push_back({"SERVER_ERROR out of memory storing object\r\n", server});
  return cases;
}

// Feeds `pieces` in order, each from the start of its unconsumed part; returns
// the last step and the reply, checking that no step consumes more than given.
auto feed_pieces(MetaReplyParser& parser, const std::vector<std::string_view>& pieces)
    -> MetaParseResult {
  MetaParseResult step;
  for (const std::string_view piece : pieces) {
    step = parser.feed(piece);
    EXPECT_LE(step.consumed, piece.size());
    if (step.status != MetaParse::kNeedMore) {
      return step;
    }
    EXPECT_EQ(step.consumed, piece.size()) << "kNeedMore uses every byte";
  }
  return step;
}

TEST(MetaReplyParserTest, ParsesEveryKindAndFlagWhole) {
  for (const ValidCase& c : valid_cases()) {
    MetaReplyParser parser;
    const MetaParseResult step = parser.feed(c.bytes);
    ASSERT_EQ(step.status, MetaParse::kComplete) << c.bytes << ": " << step.reason;
    EXPECT_EQ(step.consumed, c.bytes.size()) << c.bytes;
    EXPECT_EQ(parser.reply(), c.expected) << c.bytes;
    EXPECT_EQ(parser.take(), c.expected) << c.bytes;
  }
}

TEST(MetaReplyParserTest, OneByteAtATime) {
  for (const ValidCase& c : valid_cases()) {
    MetaReplyParser parser;
    for (std::size_t i = 0; i < c.bytes.size(); ++i) {
      const MetaParseResult step = parser.feed(std::string_view(c.bytes).substr(i, 1));
      ASSERT_EQ(step.consumed, 1U) << c.bytes << " at " << i;
      const bool last = i + 1 == c.bytes.size();
      ASSERT_EQ(step.status, last ? MetaParse::kComplete : MetaParse::kNeedMore)
          << c.bytes << " at " << i << ": " << step.reason;
    }
    EXPECT_EQ(parser.take(), c.expected) << c.bytes;
  }
}

TEST(MetaReplyParserTest, TwoPiecesAtEveryCut) {
  for (const ValidCase& c : valid_cases()) {
    const std::string_view bytes = c.bytes;
    for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
      MetaReplyParser parser;
      const MetaParseResult step = feed_pieces(parser, {bytes.substr(0, cut), bytes.substr(cut)});
      ASSERT_EQ(step.status, MetaParse::kComplete) << c.bytes << " cut at " << cut;
      EXPECT_EQ(parser.take(), c.expected) << c.bytes << " cut at " << cut;
    }
  }
}

TEST(MetaReplyParserTest, StopsAtTheEndOfEachReplyInAStream) {
  std::string stream;
  std::vector<MetaReply> expected;
  for (const ValidCase& c : valid_cases()) {
    stream += c.bytes;
    expected.push_back(c.expected);
  }
  MetaReplyParser parser;
  std::string_view rest = stream;
  std::vector<MetaReply> got;
  while (!rest.empty()) {
    const MetaParseResult step = parser.feed(rest);
    ASSERT_EQ(step.status, MetaParse::kComplete) << step.reason;
    got.push_back(parser.take());
    rest.remove_prefix(step.consumed);
  }
  EXPECT_EQ(got, expected);
}

TEST(MetaReplyParserTest, AFeedAfterCompleteStartsTheNextReply) {
  MetaReplyParser parser;
  ASSERT_EQ(parser.feed("HD c1\r\n").status, MetaParse::kComplete);
  ASSERT_EQ(parser.feed("EN\r\n").status, MetaParse::kComplete);
  EXPECT_EQ(parser.reply(), reply(MetaReplyKind::kMiss)) << "nothing of the first reply is left";
}

struct MalformedCase {
  std::string bytes;
  std::string_view reason;
};

auto malformed_cases() -> std::vector<MalformedCase> {
  return {
      {"HD c12x\r\n", "bad number"},
      {"HD c+1\r\n", "bad number"},
      {"HD c-1\r\n", "bad number"},
      {"HD c\r\n", "missing number"},
      {"HD t-2\r\n", "bad number"},
      {"HD c18446744073709551616\r\n", "number overflow"},
      {"HD f4294967296\r\n", "number overflow"},
      {"HD t4294967296\r\n", "number overflow"},
      {"VA 18446744073709551616\r\n", "number overflow"},
      {"VA 3\r\nabcd\r\n", "value not followed by \\r\\n"},
      {"VA 3\r\nab\r\n\r\n", "value not followed by \\r\\n"},
      {"VA 1\r\na\n", "value not followed by \\r\\n"},
      {"VA 1\r\na\r\r", "value not followed by \\r\\n"},
      {"HD\n", "line not ended by \\r\\n"},
      {"\n", "line not ended by \\r\\n"},
      {"HD c1\rt2\r\n", "control byte in reply line"},
      {std::string("HD\0\r\n", 5), "control byte in reply line"},
      {"XX\r\n", "unknown return code"},
      {"OK\r\n", "unknown return code"},
      {"HDX\r\n", "unknown return code"},
      {"\r\n", "unknown return code"},
      {"END\r\n", "unknown return code"},
      {"HD c1 c2\r\n", "duplicate flag"},
      {"VA 2 t1 t1\r\nab\r\n", "duplicate flag"},
      {"VA 1048577\r\n", "value larger than the maximum"},
      {"VA\r\n", "VA without a length"},
      {"VA x\r\n", "bad number"},
      {"HD  c1\r\n", "empty token"},
      {"HD \r\n", "empty token"},
      {"HD c1 \r\n", "empty token"},
      {"VA 1 \r\na\r\n", "empty token"},
      {"HD q\r\n", "unknown flag"},
      {"HD 1\r\n", "unknown flag"},
      {"HD W1\r\n", "token on a flag that takes none"},
      {"HD b0\r\n", "token on a flag that takes none"},
      {"HD h2\r\n", "bad h flag"},
      {"HD k\r\n", "bad key"},
      {"HD k" + std::string(251, 'k') + "\r\n", "bad key"},
      {"HD " + std::string(5000, 'c') + "\r\n", "line too long"},
  };
}

TEST(MetaReplyParserTest, NamesEveryMalformedCaseWholeAndByteByByte) {
  for (const MalformedCase& c : malformed_cases()) {
    {
      MetaReplyParser parser;
      const MetaParseResult step = parser.feed(c.bytes);
      ASSERT_EQ(step.status, MetaParse::kMalformed) << c.bytes.substr(0, 40);
      EXPECT_EQ(step.reason, c.reason) << c.bytes.substr(0, 40);
      EXPECT_LE(step.consumed, c.bytes.size());
      // Sticky until reset().
      EXPECT_EQ(parser.feed("HD\r\n").status, MetaParse::kMalformed);
      parser.reset();
      EXPECT_EQ(parser.feed("HD\r\n").status, MetaParse::kComplete);
    }
    MetaReplyParser parser;
    MetaParseResult step;
    // One byte at a time, each a view into c.bytes (a view of a lone char makes g++ 12 at -O2
    // warn falsely, -Warray-bounds, in the parser's append).
    for (std::size_t at = 0; at < c.bytes.size(); ++at) {
      step = parser.feed(std::string_view(c.bytes).substr(at, 1));
      if (step.status != MetaParse::kNeedMore) {
        break;
      }
    }
    EXPECT_EQ(step.status, MetaParse::kMalformed) << c.bytes.substr(0, 40);
    EXPECT_EQ(step.reason, c.reason) << c.bytes.substr(0, 40);
  }
}

TEST(MetaReplyParserTest, ALongLineFailsBeforeItsEndArrives) {
  MetaReplyParser parser(MetaLimits{.max_line = 16, .max_value = 8});
  EXPECT_EQ(parser.feed("HD c1 t2 f3 s4 k").status, MetaParse::kNeedMore);  // 16 bytes
  EXPECT_EQ(parser.feed("\r").status, MetaParse::kNeedMore);                // its '\r' may follow
  EXPECT_EQ(parser.feed("\n").status, MetaParse::kMalformed) << "k has no key: bad key";
  parser.reset();
  const MetaParseResult step = parser.feed(std::string(17, 'H') + "\r");
  EXPECT_EQ(step.status, MetaParse::kMalformed);
  EXPECT_EQ(step.reason, "line too long");
  parser.reset();
  EXPECT_EQ(parser.feed("VA 8\r\n12345678\r\n").status, MetaParse::kComplete);
  EXPECT_EQ(parser.feed("VA 9\r\n").reason, "value larger than the maximum");
}

TEST(MetaReplyParserTest, AnIncompleteReplyNeedsMore) {
  for (const ValidCase& c : valid_cases()) {
    MetaReplyParser parser;
    const MetaParseResult step =
        parser.feed(std::string_view(c.bytes).substr(0, c.bytes.size() - 1));
    EXPECT_EQ(step.status, MetaParse::kNeedMore) << c.bytes;
    EXPECT_EQ(step.consumed, c.bytes.size() - 1);
  }
}

// ---------------------------------------------------------------------------
// Text lines

struct LinesResult {
  MetaParse status = MetaParse::kNeedMore;
  std::vector<std::string> lines;
  TextLinesEnd end = TextLinesEnd::kEnd;
  std::string message;
  std::size_t consumed = 0;
  std::string_view reason;
};

auto feed_lines(const std::vector<std::string_view>& pieces, std::size_t max_line = 4096)
    -> LinesResult {
  TextLineParser parser(max_line);
  LinesResult out;
  for (const std::string_view piece : pieces) {
    const MetaParseResult step =
        parser.feed(piece, [&](std::string_view line) { out.lines.emplace_back(line); });
    EXPECT_LE(step.consumed, piece.size());
    out.status = step.status;
    out.consumed += step.consumed;
    out.reason = step.reason;
    if (step.status != MetaParse::kNeedMore) {
      break;
    }
  }
  out.end = parser.end();
  out.message = parser.message();
  return out;
}

TEST(TextLineParserTest, StatsAndMetadumpLines) {
  const std::string stats = "STAT pid 7\r\nSTAT version 1.6.18\r\nEND\r\n";
  LinesResult got = feed_lines({stats});
  EXPECT_EQ(got.status, MetaParse::kComplete);
  EXPECT_EQ(got.consumed, stats.size());
  EXPECT_EQ(got.lines, (std::vector<std::string>{"STAT pid 7", "STAT version 1.6.18"}));
  EXPECT_EQ(got.end, TextLinesEnd::kEnd);
  // memcached 1.6.18 ends metadump's item lines with a bare "\n".
  const std::string dump =
      "key=a exp=-1 la=1 cas=2 fetch=no cls=1 size=60\nkey=b%20c exp=5\nEND\r\n";
  got = feed_lines({dump + "HD\r\n"});
  EXPECT_EQ(got.status, MetaParse::kComplete);
  EXPECT_EQ(got.consumed, dump.size()) << "stops after END";
  EXPECT_EQ(got.lines, (std::vector<std::string>{"key=a exp=-1 la=1 cas=2 fetch=no cls=1 size=60",
                                                 "key=b%20c exp=5"}));
  got = feed_lines({"END\r\n"});
  EXPECT_EQ(got.status, MetaParse::kComplete);
  EXPECT_TRUE(got.lines.empty());
}

TEST(TextLineParserTest, SplitAtEveryOffsetGivesTheSameLines) {
  const std::string dump = "key=a exp=-1\nkey=b exp=3\r\nSTAT x y z\r\nEND\r\n";
  const LinesResult whole = feed_lines({dump});
  for (std::size_t cut = 0; cut <= dump.size(); ++cut) {
    const std::string_view bytes = dump;
    const LinesResult split = feed_lines({bytes.substr(0, cut), bytes.substr(cut)});
    EXPECT_EQ(split.status, MetaParse::kComplete) << cut;
    EXPECT_EQ(split.lines, whole.lines) << cut;
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < dump.size(); ++i) {
    bytes.push_back(std::string_view(dump).substr(i, 1));
  }
  const LinesResult one_by_one = feed_lines(bytes);
  EXPECT_EQ(one_by_one.status, MetaParse::kComplete);
  EXPECT_EQ(one_by_one.lines, whole.lines);
}

TEST(TextLineParserTest, ErrorLinesEndTheReply) {
  const std::pair<std::string_view, TextLinesEnd> ends[] = {
      {"ERROR", TextLinesEnd::kError},
      {"ERROR metadump not allowed", TextLinesEnd::kError},
      {"CLIENT_ERROR lru crawler disabled", TextLinesEnd::kClientError},
      {"SERVER_ERROR out of memory", TextLinesEnd::kServerError},
      {"BUSY currently processing crawler request", TextLinesEnd::kRefused},
      {"BADCLASS invalid class id", TextLinesEnd::kRefused},
      {"NOTSTARTED no items to crawl", TextLinesEnd::kRefused},
  };
  for (const auto& [line, end] : ends) {
    const std::string bytes = "key=a\n" + std::string(line) + "\r\n";
    const LinesResult got = feed_lines({bytes});
    EXPECT_EQ(got.status, MetaParse::kComplete) << line;
    EXPECT_EQ(got.end, end) << line;
    EXPECT_EQ(got.message, line);
    EXPECT_EQ(got.lines, std::vector<std::string>{"key=a"});
  }
}

TEST(TextLineParserTest, MalformedLines) {
  const std::pair<std::string, std::string_view> bad[] = {
      {"key=a\rb\nEND\r\n", "stray \\r in line"},
      {"key=a\r\r\nEND\r\n", "stray \\r in line"},
      {std::string("key=\0\nEND\r\n", 11), "control byte in line"},
      {std::string(65, 'k') + "\nEND\r\n", "line too long"},
      {std::string(70, 'k'), "line too long"},  // before its end arrives
  };
  for (const auto& [bytes, reason] : bad) {
    const LinesResult got = feed_lines({bytes}, 64);
    EXPECT_EQ(got.status, MetaParse::kMalformed) << bytes.substr(0, 20);
    EXPECT_EQ(got.reason, reason) << bytes.substr(0, 20);
  }
  EXPECT_EQ(feed_lines({std::string(64, 'k') + "\r\nEND\r\n"}, 64).status, MetaParse::kComplete);
}

TEST(TextLineParserTest, SplitStatLine) {
  using memshard::detail::split_stat_line;
  const auto version = split_stat_line("STAT version 1.6.18");
  ASSERT_TRUE(version);
  EXPECT_EQ(version->first, "version");
  EXPECT_EQ(version->second, "1.6.18");
  const auto spaced = split_stat_line("STAT libevent 2.1 stable");
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->second, "2.1 stable");
  const auto empty = split_stat_line("STAT name ");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->second, "");
  EXPECT_FALSE(split_stat_line("STAT name"));
  EXPECT_FALSE(split_stat_line("STAT  value"));
  EXPECT_FALSE(split_stat_line("ITEM x y"));
  EXPECT_FALSE(split_stat_line("STAT"));
}

// ---------------------------------------------------------------------------
// Fuzz: deterministic, bounded.

// Serialises `reply` as memcached would send it.
auto serialise(const MetaReply& r) -> std::string {
  std::string out(memshard::detail::to_string(r.kind));
  if (r.kind == MetaReplyKind::kError || r.kind == MetaReplyKind::kClientError ||
      r.kind == MetaReplyKind::kServerError) {
    if (!r.message.empty()) {
      out += " " + r.message;
    }
    return out + "\r\n";
  }
  if (r.kind == MetaReplyKind::kValue) {
    out += " " + std::to_string(r.value.size());
  }
  auto number = [&](char letter, const auto& field) {
    if (field) {
      out += ' ';
      out += letter;
      out += std::to_string(*field);
    }
  };
  number('t', r.ttl);
  number('f', r.client_flags);
  number('c', r.cas);
  number('s', r.size);
  if (r.key) {
    out += " k" + *r.key;
  }
  if (r.hit_before) {
    out += *r.hit_before ? " h1" : " h0";
  }
  number('l', r.last_access);
  number('O', r.opaque);
  out += r.base64_key ? " b" : "";
  out += r.won ? " W" : "";
  out += r.stale ? " X" : "";
  out += r.win_sent ? " Z" : "";
  out += "\r\n";
  if (r.kind == MetaReplyKind::kValue) {
    out += r.value + "\r\n";
  }
  return out;
}

auto random_reply(std::mt19937_64& rng) -> MetaReply {
  auto coin = [&] { return (rng() & 1U) != 0; };
  MetaReply r;
  r.kind = static_cast<MetaReplyKind>(rng() % 10);
  if (r.kind == MetaReplyKind::kError || r.kind == MetaReplyKind::kClientError ||
      r.kind == MetaReplyKind::kServerError) {
    if (coin()) {
      r.message = "some message " + std::to_string(rng() % 1000);
    }
    return r;
  }
  if (coin()) {
    r.ttl = coin() ? -1 : static_cast<std::int64_t>(rng() % 4294967296ULL);
  }
  if (coin()) r.client_flags = static_cast<std::uint32_t>(rng());
  if (coin()) r.cas = rng();
  if (coin()) r.size = rng() % 2000;
  if (coin()) r.key = "key" + std::to_string(rng() % 100000);
  if (coin()) r.hit_before = coin();
  if (coin()) r.last_access = static_cast<std::uint32_t>(rng());
  if (coin()) r.opaque = static_cast<std::uint32_t>(rng());
  r.base64_key = coin();
  r.won = coin();
  r.stale = coin();
  r.win_sent = coin();
  if (r.kind == MetaReplyKind::kValue) {
    r.value.resize(rng() % 64);
    for (char& c : r.value) {
      c = static_cast<char>(rng());
    }
  }
  return r;
}

// Feeds `bytes` in random pieces; checks that no step overruns; returns the
// first non-kNeedMore step (with `consumed` counted from the start).
auto feed_randomly(std::string_view bytes, std::mt19937_64& rng, MetaReply* out)
    -> MetaParseResult {
  MetaReplyParser parser(MetaLimits{.max_line = 512, .max_value = 4096});
  std::size_t at = 0;
  MetaParseResult step;
  while (at < bytes.size()) {
    const std::size_t piece = std::min<std::size_t>(1 + rng() % 8, bytes.size() - at);
    step = parser.feed(bytes.substr(at, piece));
    EXPECT_LE(step.consumed, piece);
    if (step.status != MetaParse::kNeedMore) {
      step.consumed += at;
      if (out != nullptr && step.status == MetaParse::kComplete) {
        *out = parser.take();
      }
      return step;
    }
    at += piece;
  }
  step.consumed = at;
  return step;
}

TEST(MetaProtocolFuzzTest, RandomRepliesRoundTrip) {
  std::mt19937_64 rng(20260101);
  for (int i = 0; i < 5000; ++i) {
    const MetaReply expected = random_reply(rng);
    const std::string bytes = serialise(expected);
    MetaReply got;
    const MetaParseResult step = feed_randomly(bytes, rng, &got);
    ASSERT_EQ(step.status, MetaParse::kComplete) << bytes << ": " << step.reason;
    ASSERT_EQ(step.consumed, bytes.size()) << bytes;
    ASSERT_EQ(got, expected) << bytes;
  }
}

TEST(MetaProtocolFuzzTest, MutationsNeverOverrunAndAgreeWithOneShotParsing) {
  std::mt19937_64 rng(42);
  std::vector<std::string> seeds;
  for (const ValidCase& c : valid_cases()) {
    seeds.push_back(c.bytes);
  }
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = seeds[rng() % seeds.size()];
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations && !bytes.empty(); ++m) {
      const std::size_t at = rng() % bytes.size();
      switch (rng() % 5) {
        case 0:
          bytes[at] = static_cast<char>(rng());
          break;
        case 1:
          bytes.insert(at, 1, "\r\n 0123456789VAHDtfcskhlObWXZ-"[rng() % 30]);
          break;
        case 2:
          bytes.erase(at, 1);
          break;
        case 3:
          bytes.resize(at);
          break;
        default:
          bytes.insert(at, bytes.substr(rng() % bytes.size(), 1 + rng() % 6));
          break;
      }
    }
    MetaReply piecewise;
    const MetaParseResult split = feed_randomly(bytes, rng, &piecewise);
    MetaReplyParser whole(MetaLimits{.max_line = 512, .max_value = 4096});
    const MetaParseResult once = whole.feed(bytes);
    ASSERT_LE(once.consumed, bytes.size());
    ASSERT_EQ(split.status, once.status) << bytes;
    if (once.status == MetaParse::kComplete) {
      ASSERT_EQ(split.consumed, once.consumed) << bytes;
      ASSERT_EQ(piecewise, whole.reply()) << bytes;
      // What was parsed, written back, parses to the same reply.
      MetaReplyParser again(MetaLimits{.max_line = 512, .max_value = 4096});
      ASSERT_EQ(again.feed(serialise(piecewise)).status, MetaParse::kComplete) << bytes;
      ASSERT_EQ(again.reply(), piecewise) << bytes;
    } else if (once.status == MetaParse::kMalformed) {
      ASSERT_EQ(split.reason, once.reason) << bytes;
    }
  }
}

}  // namespace
}  // namespace meta_protocol_test
