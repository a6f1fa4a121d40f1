// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_MIGRATION_WARMER_PROGRESS_HPP_
#define MEMSHARD_MIGRATION_WARMER_PROGRESS_HPP_

// migration/warmer_progress.hpp: how far a warmer has got: WarmerServerProgress for each
// old server whose keys it lists and copies, WarmerProgress for all of them,
// with rates, a percentage and an ETA, a JSON summary (to_json) and a one-line
// terminal progress bar (render_progress_line).
//
// The counts, for one old server:
//   scanned          items its metadump listed (a live walk of the LRUs, which may
//                    list an item twice: one moved to another LRU meanwhile)
//   expired          of those, skipped for their TTL (expired, or under the
//                    warmer's minimum TTL, on that server's clock)
//   eligible         of those, items whose owner changes: the ones to copy (each
//                    key once, however often it was listed)
// and each eligible item ends, when its turn comes, in exactly one of:
//   copied           stored on its new owner
//   already_present  its new owner had it already (nothing written)
//   revoked          stored, then deleted again because the old copy changed
//   vanished         the old owner no longer had it (or its TTL ran out)
//   failed           an error on either server
// Items listed but neither expired nor eligible stay where they are.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

namespace detail {

/// append_fixed1: `value` with one decimal ("12.5"); non-finite or negative
/// values as "0.0".
inline void append_fixed1(std::string& out, double value) {
  if (!(value >= 0) || !std::isfinite(value)) {
    value = 0;
  }
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 1);
  out.append(buffer, result.ptr);
}

/// append_json_string: `text` as a JSON string, quotes included.
inline void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20 || byte == 0x7f) {
      out.append("\\u00");
      out.push_back(kHex[byte >> 4U]);
      out.push_back(kHex[byte & 0xfU]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

/// format_eta: "m:ss" under an hour, "h:mm:ss" up to 99 hours, ">99h" beyond.
[[nodiscard]] inline auto format_eta(std::chrono::seconds eta) -> std::string {
  const std::int64_t total = std::max<std::int64_t>(eta.count(), 0);
  if (total >= 100 * 3600) {
    return ">99h";
  }
  const std::int64_t hours = total / 3600;
  const std::int64_t minutes = total / 60 % 60;
  const std::int64_t seconds = total % 60;
  const auto two = [](std::int64_t value) {
    return (value < 10 ? "0" : "") + std::to_string(value);
  };
  if (hours > 0) {
    return std::to_string(hours) + ":" + two(minutes) + ":" + two(seconds);
  }
  return std::to_string(minutes) + ":" + two(seconds);
}

}  // namespace detail

/// WarmerServerProgress: the warmer's counts for one old server (see the top
/// of this header for what each counts), and what follows from them. A plain
/// value: the warmer fills one in per server and copies it out.
struct WarmerServerProgress {
  /// server: the old server, as "host:port".
  std::string server;
  /// scanned: items the server's metadump listed so far (an item moved to another LRU while
  /// the listing walks them may be listed, and counted, twice).
  std::uint64_t scanned = 0;
  /// eligible: listed items whose owner changes and whose TTL is long enough, each key once.
  std::uint64_t eligible = 0;
  /// expired: listed items skipped for their TTL.
  std::uint64_t expired = 0;
  /// copied: eligible items stored on their new owner.
  std::uint64_t copied = 0;
  /// already_present: eligible items their new owner already held.
  std::uint64_t already_present = 0;
  /// revoked: copies deleted again because the old item changed meanwhile.
  std::uint64_t revoked = 0;
  /// vanished: eligible items gone from the old server when their turn came.
  std::uint64_t vanished = 0;
  /// failed: eligible items that hit an error.
  std::uint64_t failed = 0;
  /// bytes: value bytes written to new owners.
  std::uint64_t bytes = 0;
  /// expected_items: how many items the server held when the pass began (its
  /// curr_items), for estimating the total while the listing runs; 0 if unknown.
  std::uint64_t expected_items = 0;
  /// scan_done: whether the server's metadump has ended.
  bool scan_done = false;
  /// elapsed: time since the pass over this server began.
  std::chrono::milliseconds elapsed{0};
  /// error: why the server could not be listed, or not to the end ("" when
  /// it was); such a server's listing counts as ended.
  std::string error;

  /// settled: eligible items whose turn has come (copied, already_present,
  /// revoked, vanished or failed).
  [[nodiscard]] auto settled() const noexcept -> std::uint64_t {
    return copied + already_present + revoked + vanished + failed;
  }

  /// projected_eligible: the eligible items expected once the listing ends:
  /// `eligible` when it has ended or nothing better is known, else `eligible`
  /// scaled by expected_items / scanned.
  [[nodiscard]] auto projected_eligible() const noexcept -> std::uint64_t {
    if (scan_done || scanned == 0 || expected_items <= scanned) {
      return eligible;
    }
    const double scale = static_cast<double>(expected_items) / static_cast<double>(scanned);
    const auto projected =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(eligible) * scale));
    return std::max(projected, eligible);
  }

  /// pending: projected eligible items not settled yet.
  [[nodiscard]] auto pending() const noexcept -> std::uint64_t {
    const std::uint64_t total = projected_eligible();
    const std::uint64_t done = settled();
    return total > done ? total - done : 0;
  }

  /// done: the listing has ended and every eligible item is settled.
  [[nodiscard]] auto done() const noexcept -> bool { return scan_done && settled() >= eligible; }

  /// keys_per_second: settled items per second of elapsed time (0 at first).
  [[nodiscard]] auto keys_per_second() const noexcept -> double { return per_second(settled()); }

  /// bytes_per_second: bytes written per second of elapsed time.
  [[nodiscard]] auto bytes_per_second() const noexcept -> double { return per_second(bytes); }

  /// fraction: how much is done, in [0, 1]: 1 only when done(), else below 1.
  [[nodiscard]] auto fraction() const noexcept -> double {
    if (done()) {
      return 1;
    }
    const std::uint64_t total = projected_eligible();
    if (total == 0) {
      return 0;
    }
    return std::min(static_cast<double>(settled()) / static_cast<double>(total), 0.999);
  }

  /// eta: the time left at the current rate: 0 when done(), nothing while no
  /// item has settled yet (or no time has passed). Rounded up to whole seconds.
  [[nodiscard]] auto eta() const noexcept -> std::optional<std::chrono::seconds> {
    if (done()) {
      return std::chrono::seconds{0};
    }
    const double rate = keys_per_second();
    if (rate <= 0) {
      return std::nullopt;
    }
    const double seconds = std::ceil(static_cast<double>(pending()) / rate);
    return std::chrono::seconds{static_cast<std::int64_t>(std::min(seconds, 1e15))};
  }

  /// to_json: this server's progress as one JSON object, fields in this order:
  /// "server" (string), "scan_done", "done" (booleans), "scanned", "eligible",
  /// "expired", "copied", "already_present", "revoked", "vanished", "failed",
  /// "pending", "bytes", "elapsed_ms" (integers), "keys_per_second",
  /// "bytes_per_second", "percent" (one decimal), "eta_s" (integer, or null
  /// while unknown), then "error" (string) only when there is one. No spaces.
  [[nodiscard]] auto to_json() const -> std::string { return json(true); }

  /// json: to_json, with or without the "server" field.
  [[nodiscard]] auto json(bool with_server) const -> std::string {
    std::string out = "{";
    if (with_server) {
      out.append("\"server\":");
      detail::append_json_string(out, server);
      out.push_back(',');
    }
    out.append("\"scan_done\":").append(scan_done ? "true" : "false");
    out.append(",\"done\":").append(done() ? "true" : "false");
    const auto field = [&out](std::string_view name, std::uint64_t value) {
      out.append(",\"").append(name).append("\":").append(std::to_string(value));
    };
    field("scanned", scanned);
    field("eligible", eligible);
    field("expired", expired);
    field("copied", copied);
    field("already_present", already_present);
    field("revoked", revoked);
    field("vanished", vanished);
    field("failed", failed);
    field("pending", pending());
    field("bytes", bytes);
    out.append(",\"elapsed_ms\":")
        .append(std::to_string(std::max<std::int64_t>(elapsed.count(), 0)));
    out.append(",\"keys_per_second\":");
    detail::append_fixed1(out, keys_per_second());
    out.append(",\"bytes_per_second\":");
    detail::append_fixed1(out, bytes_per_second());
    out.append(",\"percent\":");
    detail::append_fixed1(out, fraction() * 100);
    out.append(",\"eta_s\":");
    const std::optional<std::chrono::seconds> left = eta();
    out.append(left ? std::to_string(left->count()) : "null");
    if (!error.empty()) {
      out.append(",\"error\":");
      detail::append_json_string(out, error);
    }
    out.push_back('}');
    return out;
  }

  friend auto operator==(const WarmerServerProgress&, const WarmerServerProgress&)
      -> bool = default;

 private:
  [[nodiscard]] auto per_second(std::uint64_t count) const noexcept -> double {
    if (elapsed.count() <= 0) {
      return 0;
    }
    return static_cast<double>(count) * 1000.0 / static_cast<double>(elapsed.count());
  }
};

/// WarmerProgress: the progress of every old server of a warmer pass, their
/// totals, a JSON summary and a terminal progress line.
///
/// **Example**:
///   std::fprintf(stderr, "\r%s", warmer.progress().render_progress_line(80).c_str());
///   std::puts(warmer.progress().to_json().c_str());   // at the end
struct WarmerProgress {
  /// servers: one entry per old server, in the warmer's order.
  std::vector<WarmerServerProgress> servers;

  /// totals: the counts summed over servers, as server "total"; elapsed is
  /// the longest; scan_done when every listing has ended; expected_items is
  /// the sum of each server's best guess (its count once listed, else the
  /// larger of expected_items and scanned), so the projection pools them.
  [[nodiscard]] auto totals() const -> WarmerServerProgress {
    WarmerServerProgress total;
    total.server = "total";
    total.scan_done = true;
    for (const WarmerServerProgress& one : servers) {
      total.scanned += one.scanned;
      total.eligible += one.eligible;
      total.expired += one.expired;
      total.copied += one.copied;
      total.already_present += one.already_present;
      total.revoked += one.revoked;
      total.vanished += one.vanished;
      total.failed += one.failed;
      total.bytes += one.bytes;
      total.expected_items +=
          one.scan_done ? one.scanned : std::max(one.expected_items, one.scanned);
      total.scan_done = total.scan_done && one.scan_done;
      total.elapsed = std::max(total.elapsed, one.elapsed);
    }
    return total;
  }

  /// done: every server is done (true when there are none).
  [[nodiscard]] auto done() const noexcept -> bool {
    return std::all_of(servers.begin(), servers.end(),
                       [](const WarmerServerProgress& one) { return one.done(); });
  }

  /// to_json: one JSON object, {"servers":[<server>...],"total":<totals>},
  /// each <server> as WarmerServerProgress::to_json and the totals without
  /// their "server" field. No spaces, no final newline.
  [[nodiscard]] auto to_json() const -> std::string {
    std::string out = "{\"servers\":[";
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (i > 0) {
        out.push_back(',');
      }
      out.append(servers[i].to_json());
    }
    out.append("],\"total\":").append(totals().json(false)).append("}");
    return out;
  }

  /// render_progress_line: the totals as one terminal line of exactly `width`
  /// characters (padded with spaces, so that "\r" overwrites the previous
  /// one), no newline. The richest form that fits is used:
  ///   "[####......] 42.5% 1234/2900 812/s ETA 2:05"   (bar at least 5 wide)
  ///   "[####......] 42.5% 812/s ETA 2:05"
  ///   "[####......] 42.5% ETA 2:05"
  ///   "42.5% ETA 2:05"
  ///   "42.5%"
  /// cut to `width` as a last resort. The counts are settled / projected
  /// eligible items; the ETA reads "ETA --:--" while unknown and "done" at the
  /// end.
  [[nodiscard]] auto render_progress_line(std::size_t width) const -> std::string {
    static constexpr std::size_t kMinBar = 5;
    const WarmerServerProgress total = totals();
    std::string percent;
    detail::append_fixed1(percent, total.fraction() * 100);
    percent.push_back('%');
    const std::string counts =
        std::to_string(total.settled()) + "/" + std::to_string(total.projected_eligible());
    const std::string rate = std::to_string(std::llround(total.keys_per_second())) + "/s";
    const std::optional<std::chrono::seconds> left = total.eta();
    const std::string eta = total.done() ? std::string("done")
                            : left       ? "ETA " + detail::format_eta(*left)
                                         : std::string("ETA --:--");
    const std::string tails[] = {percent + " " + counts + " " + rate + " " + eta,
                                 percent + " " + rate + " " + eta, percent + " " + eta};
    std::string line;
    for (const std::string& tail : tails) {
      // "[" bar "] " tail
      if (tail.size() + 3 + kMinBar <= width) {
        const std::size_t cells = width - tail.size() - 3;
        const auto filled = std::min(
            cells,
            static_cast<std::size_t>(std::floor(total.fraction() * static_cast<double>(cells))));
        line = "[" + std::string(filled, '#') + std::string(cells - filled, '.') + "] " + tail;
        break;
      }
    }
    if (line.empty()) {
      line = tails[2].size() <= width ? tails[2] : percent.substr(0, width);
    }
    line.resize(width, ' ');
    return line;
  }

  friend auto operator==(const WarmerProgress&, const WarmerProgress&) -> bool = default;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_MIGRATION_WARMER_PROGRESS_HPP_
