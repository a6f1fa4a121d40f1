// SPDX-License-Identifier: MIT
// The history checker (support/history.hpp) on hand-made histories: each
// rule fires on a bad history and stays quiet on the good one next to it.
#include "support/history.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace history_test {
namespace {

using memshard::Errc;
using memshard::testing::decode_value;
using memshard::testing::encode_value;
using memshard::testing::History;
using memshard::testing::HistoryClock;
using memshard::testing::HistoryReport;
using memshard::testing::Op;
using memshard::testing::Supersede;
using memshard::testing::ValueId;
using std::chrono::milliseconds;

constexpr milliseconds kBound{300};
constexpr milliseconds kSlack{20};
constexpr std::uint32_t kA = 0;  // key "a"
constexpr std::uint32_t kB = 1;  // key "b"
constexpr std::uint32_t kC = 2;  // key "c"
constexpr std::uint32_t kD = 3;  // key "d"

// A history over keys "a" to "d" whose times are milliseconds from t0.
class Log {
 public:
  auto at(int ms) const -> HistoryClock::time_point { return t0_ + milliseconds(ms); }

  auto set(std::uint32_t writer, std::uint32_t key, int from, int to, Errc code = Errc::kOk,
           std::size_t server = 0) -> ValueId {
    const ValueId id = history.next_id(writer);
    history.record_write(Op::kSet, writer, key, id, code, server, at(from), at(to), kBound);
    return id;
  }
  auto remove(std::uint32_t writer, std::uint32_t key, int from, int to, Errc code = Errc::kOk,
              std::size_t server = 0) -> ValueId {
    const ValueId id = history.next_id(writer);
    history.record_write(Op::kDelete, writer, key, id, code, server, at(from), at(to), kBound);
    return id;
  }
  void get(std::uint32_t key, int from, int to, const std::optional<std::string>& value,
           std::size_t server = 0, Errc code = Errc::kOk) {
    std::optional<std::string_view> view;
    if (value) {
      view = *value;
    }
    history.record_get(2, key, code, server, view, at(from), at(to), kBound);
  }
  auto value(std::uint32_t key, ValueId id) const -> std::string {
    return encode_value(history.keys().at(key), id, 5);
  }
  auto check() const -> HistoryReport { return history.check(kSlack); }

  History history{{"a", "b", "c", "d"}, 3};

 private:
  HistoryClock::time_point t0_ = HistoryClock::now();
};

TEST(HistoryValueTest, EncodesAndDecodesItsFields) {
  const std::string value = encode_value("k|with|bars", ValueId{3, 41}, 10);
  const auto decoded = decode_value(value);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->key, "k|with|bars");
  EXPECT_EQ(decoded->id, (ValueId{3, 41}));
  EXPECT_TRUE(decoded->crc_ok);
  std::string flipped = value;
  flipped[0] = 'j';
  ASSERT_TRUE(decode_value(flipped));
  EXPECT_FALSE(decode_value(flipped)->crc_ok);
  EXPECT_FALSE(decode_value(value.substr(0, value.size() - 1)));
  EXPECT_FALSE(decode_value("plain"));
}

TEST(HistoryTest, AGoodHistoryIsClean) {
  Log log;
  const ValueId v1 = log.set(0, kA, 0, 1);
  log.get(kA, 2, 3, log.value(kA, v1));
  const ValueId v2 = log.set(1, kA, 4, 5);
  log.get(kA, 6, 7, log.value(kA, v2));
  log.remove(0, kA, 8, 9);
  log.get(kA, 10, 11, std::nullopt);
  log.get(kB, 10, 11, std::nullopt);  // never written: a miss is right
  const HistoryReport report = log.check();
  EXPECT_TRUE(report.clean()) << report.summary();
  EXPECT_EQ(report.calls, 7U);
  EXPECT_EQ(report.hits, 2U);
  EXPECT_EQ(report.acknowledged_writes, 3U);
}

TEST(HistoryTest, WrongValues) {
  Log log;
  const ValueId v1 = log.set(0, kA, 0, 1);
  log.get(kA, 2, 3, log.value(kA, v1));
  EXPECT_EQ(log.check().wrong_values, 0U);
  log.get(kA, 4, 5, log.value(kB, v1));  // another key's value
  EXPECT_EQ(log.check().wrong_values, 1U);
  std::string bad = log.value(kA, v1);
  bad[bad.size() - 12] = 'q';  // a padding byte: the crc fails
  log.get(kA, 6, 7, bad);
  EXPECT_EQ(log.check().wrong_values, 2U);
  log.get(kA, 8, 9, log.value(kA, ValueId{1, 99}));  // never written
  EXPECT_EQ(log.check().wrong_values, 3U);
  log.get(kA, 10, 11, std::string("garbage"));
  EXPECT_EQ(log.check().wrong_values, 4U);
  // Written only after the get returned.
  const ValueId later = log.set(1, kB, 50, 51);
  log.get(kB, 20, 21, log.value(kB, later));
  const HistoryReport report = log.check();
  EXPECT_EQ(report.wrong_values, 5U) << report.summary();
  EXPECT_EQ(report.examples.size(), 5U);
  EXPECT_EQ(report.lost_writes + report.stale_reads, 0U) << report.summary();
}

TEST(HistoryTest, LostAcknowledgedWrites) {
  Log log;
  const ValueId v1 = log.set(0, kA, 0, 1);
  log.get(kA, 2, 3, std::nullopt);  // acknowledged, then a miss
  HistoryReport report = log.check();
  EXPECT_EQ(report.lost_writes, 1U) << report.summary();
  ASSERT_EQ(report.examples.size(), 1U);
  EXPECT_NE(report.examples[0].find("lost write"), std::string::npos) << report.examples[0];
  const ValueId v2 = log.set(1, kA, 4, 5);
  log.get(kA, 6, 7, log.value(kA, v1));  // an older value than the last acknowledged
  report = log.check();
  EXPECT_EQ(report.lost_writes, 2U) << report.summary();
  log.get(kA, 8, 9, log.value(kA, v2));
  EXPECT_EQ(log.check().lost_writes, 2U);
}

TEST(HistoryTest, NoLossWhenTheKeyMayHaveChangedOrTheServerRestarted) {
  Log log;
  // A later write that failed may have taken effect (or been deleted for).
  log.set(0, kA, 0, 1);
  log.set(1, kA, 2, 300, Errc::kTimeout);
  log.get(kA, 400, 401, std::nullopt);
  // An earlier write that failed may take effect after a later one (a late
  // request, or the client deleting the key for it).
  log.set(1, kD, 0, 5, Errc::kTimeout);
  log.get(kC, 6, 7, std::nullopt);  // its server answers again
  log.set(0, kD, 10, 11);
  log.get(kD, 400, 401, std::nullopt);
  EXPECT_TRUE(log.history.check(kSlack, Supersede::kAcknowledged, milliseconds(100)).clean());
  // Only so long: past its in-flight time and once its server answered
  // again, a failed write has landed (or its key was deleted there).
  EXPECT_EQ(log.history.check(kSlack, Supersede::kAcknowledged, milliseconds(2)).lost_writes, 1U);
  // A write overlapping the get.
  log.set(0, kB, 0, 1);
  log.remove(1, kB, 5, 8);
  log.get(kB, 4, 6, std::nullopt);
  // Another server answered (a failover copy elsewhere, or the owner back).
  log.set(0, kB, 10, 11, Errc::kOk, 0);
  log.get(kB, 12, 13, std::nullopt, 1);
  HistoryReport report = log.check();
  EXPECT_TRUE(report.clean()) << report.summary() << "\n" << report.examples.at(0);
  // A miss after the server restarted empty: excused only by the restart.
  log.set(0, kB, 20, 21, Errc::kOk, 2);
  log.get(kB, 30, 31, std::nullopt, 2);
  EXPECT_EQ(log.check().lost_writes, 1U);
  log.history.note_restart(2, log.at(25));
  EXPECT_EQ(log.check().lost_writes, 0U);
  // Evictions on a server: nothing it acknowledged counts as lost.
  log.set(0, kC, 500, 501, Errc::kOk, 3);
  log.get(kC, 502, 503, std::nullopt, 3);
  EXPECT_EQ(log.check().lost_writes, 1U);
  log.history.exclude_server(3);
  EXPECT_EQ(log.check().lost_writes, 0U);
}

TEST(HistoryTest, ACopyPastItsExpiryIsNotLost) {
  Log log;
  const ValueId id = log.history.next_id(0);
  log.history.record_write(Op::kSet, 0, kA, id, Errc::kOk, 1, log.at(0), log.at(1), kBound,
                           log.at(5));
  log.get(kA, 10, 11, std::nullopt, 1);
  EXPECT_TRUE(log.check().clean()) << log.check().summary();
  log.get(kA, 2, 3, std::nullopt, 1);  // before it could expire
  EXPECT_EQ(log.check().lost_writes, 1U);
}

TEST(HistoryTest, StaleReads) {
  Log log;
  // v1 on server 0; server 0 out; v2 acknowledged by a failover server; server 0
  // back and still serving v1: stale.
  const ValueId v1 = log.set(0, kA, 0, 1, Errc::kOk, 0);
  log.set(1, kA, 10, 11, Errc::kOk, 1);
  log.get(kA, 20, 21, log.value(kA, v1), 0);
  HistoryReport report = log.check();
  EXPECT_EQ(report.stale_reads, 1U) << report.summary();
  EXPECT_EQ(report.lost_writes, 0U) << report.summary();
  // A delete acknowledged elsewhere, then the old value: stale too.
  const ValueId b1 = log.set(0, kB, 0, 1, Errc::kOk, 2);
  log.remove(1, kB, 10, 11, Errc::kNotFound, 3);
  log.get(kB, 20, 21, log.value(kB, b1), 2);
  EXPECT_EQ(log.check().stale_reads, 2U);
}

TEST(HistoryTest, NoStaleReadForConcurrentOrUnacknowledgedWrites) {
  Log log;
  // v1 failed (it may land at any time), v2 acknowledged: v1 may be read.
  const ValueId v1 = log.set(0, kA, 0, 300, Errc::kTimeout, 0);
  log.set(1, kA, 400, 401, Errc::kOk, 1);
  log.get(kA, 500, 501, log.value(kA, v1), 0);
  // Two overlapping writes: either may win.
  const ValueId b1 = log.set(0, kB, 0, 10, Errc::kOk, 1);
  log.set(1, kB, 5, 6, Errc::kOk, 2);
  log.get(kB, 20, 21, log.value(kB, b1), 1);
  // A newer write still running when the get started.
  const ValueId b3 = log.set(0, kB, 30, 31, Errc::kOk, 1);
  log.set(1, kB, 40, 60, Errc::kOk, 2);
  log.get(kB, 50, 51, log.value(kB, b3), 1);
  const HistoryReport report = log.check();
  EXPECT_TRUE(report.clean()) << report.summary() << "\n"
                              << (report.examples.empty() ? "" : report.examples[0]);
}

TEST(HistoryTest, WithAttemptedWritesAFailedWriteMakesOlderValuesStale) {
  Log log;
  // v1; a set that timed out (the client deletes the key for it before the
  // server serves again); v1 read afterwards.
  const ValueId v1 = log.set(0, kA, 0, 1);
  log.set(1, kA, 10, 310, Errc::kTimeout);
  log.get(kA, 400, 401, log.value(kA, v1));
  EXPECT_TRUE(log.check().clean());
  const HistoryReport report = log.history.check(kSlack, Supersede::kAttempted);
  EXPECT_EQ(report.stale_reads, 1U) << report.summary();
  // A value that was read while that write ran is not stale.
  log.get(kA, 100, 101, log.value(kA, v1));
  EXPECT_EQ(log.history.check(kSlack, Supersede::kAttempted).stale_reads, 1U);
}

TEST(HistoryTest, LateCalls) {
  Log log;
  log.get(kA, 0, 300 + 20, std::nullopt, 0, Errc::kTimeout);  // the bound plus the slack: ok
  EXPECT_TRUE(log.check().clean());
  log.get(kA, 0, 300 + 25, std::nullopt, 0, Errc::kTimeout);
  const HistoryReport report = log.check();
  EXPECT_EQ(report.late_calls, 1U);
  EXPECT_EQ(report.failed_calls, 2U);
  EXPECT_EQ(report.longest_over_bound, std::chrono::milliseconds(25));
  // The process could not run for 10 ms of that call: not the client's delay.
  log.history.note_stall(log.at(100), log.at(110));
  EXPECT_TRUE(log.check().clean()) << log.check().summary();
}

}  // namespace
}  // namespace history_test
