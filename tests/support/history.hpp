// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_HISTORY_HPP_
#define MEMSHARD_TESTS_SUPPORT_HISTORY_HPP_

// support/history.hpp: History, the log of every call a test makes through a
// client (operation, key, value id, result, start and end times, server), for
// values that carry their own identity (encode_value: key, writer, sequence,
// crc32), and History::check(), which reads the log once the calls are over
// and counts wrong values, lost acknowledged writes, stale reads and calls
// past their deadline.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memshard/client/result.hpp"
#include "memshard/placement/hash/crc32.hpp"

namespace memshard::testing {

/// HistoryClock: the clock of every time a History holds.
using HistoryClock = std::chrono::steady_clock;

/// ValueId: who wrote a value: a writer and that writer's sequence number
/// (from 1). A sequence of 0 names no write.
struct ValueId {
  std::uint32_t writer = 0;
  std::uint32_t seq = 0;

  friend auto operator==(const ValueId&, const ValueId&) -> bool = default;
};

/// encode_value: "<key>|<writer>|<seq>|<padding>|<crc32>", the crc32 (8 hex
/// digits) of everything before it; `padding` bytes of 'p' make the value as
/// large as a test wants.
inline auto encode_value(std::string_view key, ValueId id, std::size_t padding = 0) -> std::string {
  std::string out(key);
  out.append("|").append(std::to_string(id.writer));
  out.append("|").append(std::to_string(id.seq)).append("|");
  out.append(padding, 'p').append("|");
  char crc[9];
  std::snprintf(crc, sizeof crc, "%08x", static_cast<unsigned>(Crc32{}(out)));
  out.append(crc, 8);
  return out;
}

/// DecodedValue: what decode_value read back.
struct DecodedValue {
  /// key: the key the value was written for.
  std::string key;
  /// id: the write.
  ValueId id;
  /// crc_ok: whether the crc32 matches the bytes before it.
  bool crc_ok = false;
};

/// decode_value: the fields of a value made by encode_value, read from the
/// right (so the key may hold '|'); nullopt when `value` has not that shape.
inline auto decode_value(std::string_view value) -> std::optional<DecodedValue> {
  const auto last = value.rfind('|');
  if (last == std::string_view::npos || value.size() - last - 1 != 8) {
    return std::nullopt;
  }
  std::uint32_t crc = 0;
  const char* crc_end = value.data() + value.size();
  if (std::from_chars(value.data() + last + 1, crc_end, crc, 16).ptr != crc_end) {
    return std::nullopt;
  }
  const std::string_view body = value.substr(0, last + 1);
  // body: key|writer|seq|padding|
  std::string_view rest = body.substr(0, body.size() - 1);
  std::string_view fields[3];  // padding, seq, writer
  for (auto& field : fields) {
    const auto bar = rest.rfind('|');
    if (bar == std::string_view::npos) {
      return std::nullopt;
    }
    field = rest.substr(bar + 1);
    rest = rest.substr(0, bar);
  }
  DecodedValue out;
  out.key = std::string(rest);
  const auto number = [](std::string_view text, std::uint32_t& into) {
    const char* end = text.data() + text.size();
    return !text.empty() && std::from_chars(text.data(), end, into).ptr == end;
  };
  if (!number(fields[2], out.id.writer) || !number(fields[1], out.id.seq) || out.id.seq == 0) {
    return std::nullopt;
  }
  out.crc_ok = Crc32{}(body) == crc;
  return out;
}

/// Op: the operations a History logs.
enum class Op : std::uint8_t { kGet, kSet, kDelete };

/// Read: what a get that succeeded found.
enum class Read : std::uint8_t {
  kNone,       ///< not a get, or the get failed
  kMiss,       ///< no value
  kHit,        ///< a well-formed value for the key asked (Call::value says whose)
  kMalformed,  ///< a value encode_value did not make
  kBadCrc,     ///< a value whose crc32 does not match
  kOtherKey,   ///< a value written for another key
};

/// Call: one logged call.
struct Call {
  /// kNoServer: Call::server of a call no server answered.
  static constexpr std::uint16_t kNoServer = std::numeric_limits<std::uint16_t>::max();

  Op op = Op::kGet;
  /// code: the outcome the client reported.
  Errc code = Errc::kOk;
  /// read: for a get, what it found.
  Read read = Read::kNone;
  /// writer: the thread that made the call.
  std::uint32_t writer = 0;
  /// key: the index of the key in History::keys().
  std::uint32_t key = 0;
  /// server: the index of the server that answered, or kNoServer.
  std::uint16_t server = kNoServer;
  /// value: for a set or delete, the write's id; for a get that hit, the id read.
  ValueId value;
  /// bound: the longest the call may take (its deadline).
  std::chrono::milliseconds bound{0};
  /// start, end: when the call was made and when it returned.
  HistoryClock::time_point start;
  HistoryClock::time_point end;
  /// expires: for a set, from when the copy it wrote may be gone without a
  /// loss (an expiry, or a failover copy the client deletes on purpose).
  HistoryClock::time_point expires = HistoryClock::time_point::max();

  /// acknowledged: a write the client reported done (a delete of a key that
  /// was absent included).
  [[nodiscard]] auto acknowledged() const noexcept -> bool {
    return op != Op::kGet && (code == Errc::kOk || (op == Op::kDelete && code == Errc::kNotFound));
  }
  /// effective_end: when a write may last take effect: its end when it was
  /// acknowledged; never known otherwise (the request may still be on its
  /// way, or the client may delete the key later for it).
  [[nodiscard]] auto effective_end() const noexcept -> HistoryClock::time_point {
    return acknowledged() ? end : HistoryClock::time_point::max();
  }
};

/// Supersede: which writes make the values before them stale (History::check).
enum class Supersede : std::uint8_t {
  /// Acknowledged writes only: a value older than the last write the client
  /// reported done is stale.
  kAcknowledged,
  /// Every write that returned, failed ones included: the client deletes a
  /// key whose write failed before that server serves again (the recovery
  /// journal), so a value older than any write that returned is stale.
  kAttempted,
};

/// Violation: the kinds of fault History::check() counts.
enum class Violation : std::uint8_t { kWrongValue, kLostWrite, kStaleRead, kLate };

/// to_string: "wrong value", "lost write", "stale read", "late".
inline auto to_string(Violation kind) -> std::string_view {
  switch (kind) {
    case Violation::kWrongValue:
      return "wrong value";
    case Violation::kLostWrite:
      return "lost write";
    case Violation::kStaleRead:
      return "stale read";
    case Violation::kLate:
      return "late";
  }
  return "?";
}

/// HistoryReport: what History::check() found.
struct HistoryReport {
  /// kMaxExamples: the violations described in `examples` at most.
  static constexpr std::size_t kMaxExamples = 20;

  std::size_t calls = 0;
  std::size_t gets = 0;
  std::size_t hits = 0;
  std::size_t writes = 0;
  std::size_t acknowledged_writes = 0;
  std::size_t failed_calls = 0;
  std::size_t wrong_values = 0;
  std::size_t lost_writes = 0;
  std::size_t stale_reads = 0;
  std::size_t late_calls = 0;
  /// longest_over_bound: the most a call took beyond its bound (negative: none did).
  std::chrono::microseconds longest_over_bound{std::numeric_limits<std::int64_t>::min()};
  /// examples: the first violations, each with the calls it involves.
  std::vector<std::string> examples;
  /// example_keys: the key (index) of each of `examples`.
  std::vector<std::uint32_t> example_keys;

  /// clean: no violation of any kind.
  [[nodiscard]] auto clean() const noexcept -> bool {
    return wrong_values + lost_writes + stale_reads + late_calls == 0;
  }
  /// summary: the counts on one line.
  [[nodiscard]] auto summary() const -> std::string {
    return std::to_string(calls) + " calls (" + std::to_string(gets) + " gets, " +
           std::to_string(hits) + " hits, " + std::to_string(writes) + " writes, " +
           std::to_string(acknowledged_writes) + " acknowledged, " + std::to_string(failed_calls) +
           " failed); " + std::to_string(wrong_values) + " wrong values, " +
           std::to_string(lost_writes) + " lost writes, " + std::to_string(stale_reads) +
           " stale reads, " + std::to_string(late_calls) + " late calls; longest over bound " +
           std::to_string(longest_over_bound.count() / 1000) + " ms";
  }
};

/// History: the log of the calls of a fixed set of writers (threads) on a
/// fixed set of keys, and the offline checks of that log.
///
/// The checks (History::check), per key, with writes ordered by real time (a
/// write that was not acknowledged may take effect at any time after it
/// started, see Call::effective_end):
/// - wrong value: a get returns a value that is malformed, fails its crc,
///   was written for another key, was never written for this key, or was
///   written only after the get returned;
/// - lost acknowledged write: a set S was acknowledged by server s before a
///   get G on s started, no other write of the key may have taken effect
///   after S started and before G ended, s did not restart in between
///   (note_restart), s is not excluded (exclude_server: its evictions grew)
///   and S's copy had not expired; yet G returns a miss or an older value;
/// - stale read: a get returns a value whose write was acknowledged before
///   another write (set or delete) of the key started, and that write was
///   acknowledged before the get started (on whichever server: this is the
///   never-an-older-value rule the recovery journal gives across outages;
///   with Supersede::kAttempted, a write that failed counts too);
/// - late: a call took longer than its bound plus the slack given, not
///   counting the time the whole process was stalled (note_stall).
/// A get counts once, as the first of these it breaks.
///
/// Thread safety: each writer records only its own calls (record(),
/// next_id() with its own index), with no lock; note_restart() and
/// exclude_server() and note_stall() may be called from any thread; check() once every
/// writer is done.
class History {
 public:
  /// A log of the calls of `writers` writers on `keys`.
  History(std::vector<std::string> keys, std::size_t writers)
      : keys_(std::move(keys)), calls_(writers), next_seq_(writers, 0) {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      index_.emplace(keys_[i], static_cast<std::uint32_t>(i));
    }
  }

  /// keys: the keys, in index order.
  [[nodiscard]] auto keys() const noexcept -> const std::vector<std::string>& { return keys_; }
  /// key_index: the index of `key`, which must be one of keys().
  [[nodiscard]] auto key_index(std::string_view key) const -> std::uint32_t {
    return index_.at(std::string(key));
  }
  /// size: the calls logged so far (once the writers are done).
  [[nodiscard]] auto size() const noexcept -> std::size_t {
    std::size_t out = 0;
    for (const auto& calls : calls_) {
      out += calls.size();
    }
    return out;
  }

  /// next_id: a fresh id for the next write of `writer`.
  [[nodiscard]] auto next_id(std::uint32_t writer) -> ValueId {
    return ValueId{writer, ++next_seq_.at(writer)};
  }

  /// record: logs `call` (made by call.writer).
  void record(const Call& call) { calls_.at(call.writer).push_back(call); }

  /// calls: the calls `writer` logged (for a log kept in another process and merged here with
  /// record()).
  [[nodiscard]] auto calls(std::uint32_t writer) const -> const std::vector<Call>& {
    return calls_.at(writer);
  }

  /// record_get: logs a get of `key` by `writer`: `value` is what it
  /// returned (nullopt: a miss), decoded here.
  void record_get(std::uint32_t writer, std::uint32_t key, Errc code, std::size_t server,
                  const std::optional<std::string_view>& value, HistoryClock::time_point start,
                  HistoryClock::time_point end, std::chrono::milliseconds bound) {
    Call call = base(Op::kGet, writer, key, code, server, start, end, bound);
    if (code == Errc::kOk) {
      call.read = classify(key, value, call.value);
    }
    record(call);
  }

  /// record_write: logs a set or delete `id` of `key` by `writer`; for a set,
  /// `expires` is when its copy may go without a loss.
  void record_write(Op op, std::uint32_t writer, std::uint32_t key, ValueId id, Errc code,
                    std::size_t server, HistoryClock::time_point start,
                    HistoryClock::time_point end, std::chrono::milliseconds bound,
                    HistoryClock::time_point expires = HistoryClock::time_point::max()) {
    Call call = base(op, writer, key, code, server, start, end, bound);
    call.value = id;
    call.expires = expires;
    record(call);
  }

  /// note_restart: server `server` lost its data at `when` (it was killed;
  /// the next incarnation starts empty).
  void note_restart(std::size_t server, HistoryClock::time_point when) {
    const std::scoped_lock lock(mutex_);
    restarts_.emplace_back(server, when);
  }

  /// note_stall: the process could not run from `from` to `to` (a thread
  /// that sleeps briefly in a loop woke that late: the machine, not the
  /// client, held every call up). The late check does not count it.
  void note_stall(HistoryClock::time_point from, HistoryClock::time_point to) {
    const std::scoped_lock lock(mutex_);
    stalls_.emplace_back(from, to);
  }

  /// exclude_server: leaves `server` out of the lost-write check (its
  /// evictions grew: memcached may drop what it acknowledged).
  void exclude_server(std::size_t server) {
    const std::scoped_lock lock(mutex_);
    excluded_.push_back(server);
  }

  /// describe: one call on one line, times relative to the first call.
  [[nodiscard]] auto describe(const Call& call) const -> std::string {
    const auto ms = [&](HistoryClock::time_point t) {
      const double value = std::chrono::duration<double, std::milli>(t - origin()).count();
      char text[32];
      std::snprintf(text, sizeof text, "%.3f", value);
      return std::string(text);
    };
    static constexpr std::string_view kOps[] = {"get", "set", "delete"};
    static constexpr std::string_view kReads[] = {"",          "miss",    "hit",
                                                  "malformed", "bad crc", "other key"};
    // Appended, not "[" + ...: g++ 12 at -O2 warns falsely (-Wstringop-overflow) on that operator+.
    std::string out = "[";
    out.append(ms(call.start)).append(" .. ").append(ms(call.end)).append(" ms] writer ");
    out.append(std::to_string(call.writer)).append(" ").append(kOps[static_cast<int>(call.op)]);
    out.append(" ").append(keys_.at(call.key));
    if (call.op != Op::kGet || call.read == Read::kHit) {
      out += " value " + std::to_string(call.value.writer) + ":" + std::to_string(call.value.seq);
    }
    out += " -> " + std::string(memshard::to_string(call.code));
    if (call.read != Read::kNone) {
      out.append(" ").append(kReads[static_cast<int>(call.read)]);
    }
    out += call.server == Call::kNoServer ? " (no server)"
                                          : " on server " + std::to_string(call.server);
    return out;
  }

  /// key_log: every call on `key` (an index), ordered by start, described.
  [[nodiscard]] auto key_log(std::uint32_t key) const -> std::vector<std::string> {
    std::vector<const Call*> calls;
    for (const auto& writer_calls : calls_) {
      for (const Call& call : writer_calls) {
        if (call.key == key) {
          calls.push_back(&call);
        }
      }
    }
    std::sort(calls.begin(), calls.end(),
              [](const Call* a, const Call* b) { return a->start < b->start; });
    std::vector<std::string> out;
    for (const Call* call : calls) {
      out.push_back(describe(*call));
    }
    return out;
  }

  /// check: the violations in the log (see the class comment); a call may
  /// take `slack` beyond its bound.
  /// `in_flight`: how long after it returned a failed write may still land
  /// on its server (a request held in a stopped server's socket or a slow
  /// link); by the end of the first call that server answers after that,
  /// the write has landed or the client has deleted its key there.
  /// milliseconds::max(): a failed write may land at any time.
  [[nodiscard]] auto check(
      std::chrono::milliseconds slack, Supersede supersede = Supersede::kAcknowledged,
      std::chrono::milliseconds in_flight = std::chrono::milliseconds::max()) const
      -> HistoryReport {
    HistoryReport report;
    std::vector<std::vector<const Call*>> by_key(keys_.size());
    served_.clear();
    for (const auto& calls : calls_) {
      for (const Call& call : calls) {
        by_key.at(call.key).push_back(&call);
        if (call.server != Call::kNoServer && (call.code == Errc::kOk || call.acknowledged())) {
          if (served_.size() <= call.server) {
            served_.resize(call.server + 1U);
          }
          served_[call.server].push_back(&call);
        }
        count(report, call, slack);
      }
    }
    for (auto& served : served_) {
      std::sort(served.begin(), served.end(),
                [](const Call* a, const Call* b) { return a->start < b->start; });
    }
    for (auto& calls : by_key) {
      check_key(report, calls, supersede, in_flight);
    }
    return report;
  }

 private:
  static auto base(Op op, std::uint32_t writer, std::uint32_t key, Errc code, std::size_t server,
                   HistoryClock::time_point start, HistoryClock::time_point end,
                   std::chrono::milliseconds bound) -> Call {
    Call call;
    call.op = op;
    call.writer = writer;
    call.key = key;
    call.code = code;
    call.server = server >= Call::kNoServer ? Call::kNoServer : static_cast<std::uint16_t>(server);
    call.start = start;
    call.end = end;
    call.bound = bound;
    return call;
  }

  auto classify(std::uint32_t key, const std::optional<std::string_view>& value, ValueId& id) const
      -> Read {
    if (!value) {
      return Read::kMiss;
    }
    const auto decoded = decode_value(*value);
    if (!decoded) {
      return Read::kMalformed;
    }
    if (!decoded->crc_ok) {
      return Read::kBadCrc;
    }
    if (decoded->key != keys_.at(key)) {
      return Read::kOtherKey;
    }
    id = decoded->id;
    return Read::kHit;
  }

  auto origin() const -> HistoryClock::time_point {
    auto out = HistoryClock::time_point::max();
    for (const auto& calls : calls_) {
      if (!calls.empty()) {
        out = std::min(out, calls.front().start);
      }
    }
    return out == HistoryClock::time_point::max() ? HistoryClock::time_point{} : out;
  }

  void count(HistoryReport& report, const Call& call, std::chrono::milliseconds slack) const {
    ++report.calls;
    if (call.op == Op::kGet) {
      ++report.gets;
      report.hits += call.read == Read::kHit ? 1U : 0U;
    } else {
      ++report.writes;
      report.acknowledged_writes += call.acknowledged() ? 1U : 0U;
    }
    report.failed_calls += call.code == Errc::kOk || call.acknowledged() ? 0U : 1U;
    const auto over = std::chrono::duration_cast<std::chrono::microseconds>(
        call.end - call.start - call.bound - stalled(call.start, call.end));
    report.longest_over_bound = std::max(report.longest_over_bound, over);
    if (over > slack) {
      ++report.late_calls;
      add_example(report, Violation::kLate, call, nullptr);
    }
  }

  void add_example(HistoryReport& report, Violation kind, const Call& call, const Call* because,
                   std::string_view why = {}) const {
    if (report.examples.size() >= HistoryReport::kMaxExamples) {
      return;
    }
    std::string text = std::string(to_string(kind)) + ": " + describe(call);
    if (!why.empty()) {
      text.append("; ").append(why);
    }
    if (because != nullptr) {
      text += "; after " + describe(*because);
    }
    report.examples.push_back(std::move(text));
    report.example_keys.push_back(call.key);
  }

  auto restarted(std::size_t server, HistoryClock::time_point from,
                 HistoryClock::time_point to) const -> bool {
    return std::any_of(restarts_.begin(), restarts_.end(), [&](const auto& restart) {
      return restart.first == server && restart.second > from && restart.second < to;
    });
  }

  // How long the process was stalled between `from` and `to`.
  auto stalled(HistoryClock::time_point from, HistoryClock::time_point to) const
      -> HistoryClock::duration {
    const std::scoped_lock lock(mutex_);
    HistoryClock::duration out{0};
    for (const auto& [begin, end] : stalls_) {
      if (begin < to && end > from) {
        out += std::min(end, to) - std::max(begin, from);
      }
    }
    return out;
  }

  auto excluded(std::size_t server) const -> bool {
    return std::find(excluded_.begin(), excluded_.end(), server) != excluded_.end();
  }

  // The checks of one key's calls (see the class comment).
  // When `write` has taken effect at the latest (see check(): `in_flight`).
  auto landed_by(const Call& write, std::chrono::milliseconds in_flight) const
      -> HistoryClock::time_point {
    constexpr auto kNever = HistoryClock::time_point::max();
    if (write.acknowledged()) {
      return write.end;
    }
    if (in_flight == std::chrono::milliseconds::max() || write.server >= served_.size()) {
      return kNever;
    }
    const auto& served = served_[write.server];
    const auto next = std::upper_bound(
        served.begin(), served.end(), write.end,
        [](HistoryClock::time_point t, const Call* call) { return t < call->start; });
    if (next == served.end()) {
      return kNever;
    }
    return std::max(write.end + in_flight, (*next)->end);
  }

  void check_key(HistoryReport& report, std::vector<const Call*>& calls, Supersede supersede,
                 std::chrono::milliseconds in_flight) const {
    const std::scoped_lock lock(mutex_);
    const auto by_start = [](const Call* a, const Call* b) { return a->start < b->start; };
    std::vector<const Call*> writes;
    for (const Call* call : calls) {
      if (call->op != Op::kGet) {
        writes.push_back(call);
      }
    }
    std::sort(writes.begin(), writes.end(), by_start);
    // latest_before[i]: the latest effective end of the writes before writes[i].
    std::vector<HistoryClock::time_point> latest_before(writes.size() + 1,
                                                        HistoryClock::time_point::min());
    std::unordered_map<std::uint64_t, const Call*> sets;
    for (std::size_t i = 0; i < writes.size(); ++i) {
      latest_before[i + 1] = std::max(latest_before[i], landed_by(*writes[i], in_flight));
      if (writes[i]->op == Op::kSet) {
        sets.emplace(id_key(writes[i]->value), writes[i]);
      }
    }
    // The acknowledged writes by end, with the one that started last so far.
    std::vector<const Call*> acknowledged;
    for (const Call* write : writes) {
      if (write->acknowledged() || supersede == Supersede::kAttempted) {
        acknowledged.push_back(write);
      }
    }
    std::sort(acknowledged.begin(), acknowledged.end(),
              [](const Call* a, const Call* b) { return a->end < b->end; });
    std::vector<const Call*> newest_started(acknowledged.size());
    for (std::size_t i = 0; i < acknowledged.size(); ++i) {
      newest_started[i] = i > 0 && newest_started[i - 1]->start > acknowledged[i]->start
                              ? newest_started[i - 1]
                              : acknowledged[i];
    }

    for (const Call* get : calls) {
      if (get->op != Op::kGet || get->code != Errc::kOk) {
        continue;
      }
      const Call* written = nullptr;
      if (get->read == Read::kHit) {
        const auto found = sets.find(id_key(get->value));
        written = found == sets.end() ? nullptr : found->second;
      }
      if (get->read != Read::kMiss && get->read != Read::kHit) {
        ++report.wrong_values;
        add_example(report, Violation::kWrongValue, *get, nullptr);
        continue;
      }
      if (get->read == Read::kHit && (written == nullptr || written->start > get->end)) {
        ++report.wrong_values;
        add_example(report, Violation::kWrongValue, *get, written,
                    written == nullptr ? "never written" : "written after the get returned");
        continue;
      }
      // Lost: the last write that started before the get ended.
      const auto last = std::lower_bound(
          writes.begin(), writes.end(), get->end,
          [](const Call* write, HistoryClock::time_point t) { return write->start < t; });
      if (last != writes.begin()) {
        const Call* set = *(last - 1);
        const auto index = static_cast<std::size_t>(last - 1 - writes.begin());
        const bool candidate = set->op == Op::kSet && set->acknowledged() &&
                               set->end < get->start && set->server == get->server &&
                               latest_before[index] < set->start && set->expires > get->end &&
                               !excluded(set->server) &&
                               !restarted(set->server, set->start, get->end);
        if (candidate && written != set) {
          ++report.lost_writes;
          add_example(report, Violation::kLostWrite, *get, set,
                      get->read == Read::kMiss ? "a miss" : "an older value");
          continue;
        }
      }
      // Stale: a write acknowledged before the get started began after the
      // value read was acknowledged.
      if (written != nullptr && written->acknowledged()) {
        const auto ended = std::lower_bound(
            acknowledged.begin(), acknowledged.end(), get->start,
            [](const Call* write, HistoryClock::time_point t) { return write->end < t; });
        if (ended != acknowledged.begin()) {
          const Call* newer =
              newest_started[static_cast<std::size_t>(ended - acknowledged.begin()) - 1];
          if (newer->start > written->end) {
            ++report.stale_reads;
            add_example(report, Violation::kStaleRead, *get, newer,
                        "the value read was written before that");
          }
        }
      }
    }
  }

  static auto id_key(ValueId id) noexcept -> std::uint64_t {
    return (std::uint64_t{id.writer} << 32U) | id.seq;
  }

  std::vector<std::string> keys_;
  std::unordered_map<std::string, std::uint32_t> index_;
  std::vector<std::vector<Call>> calls_;
  std::vector<std::uint32_t> next_seq_;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::size_t, HistoryClock::time_point>> restarts_;
  std::vector<std::size_t> excluded_;
  std::vector<std::pair<HistoryClock::time_point, HistoryClock::time_point>> stalls_;
  mutable std::vector<std::vector<const Call*>> served_;  // check(): calls each server answered
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_HISTORY_HPP_
