// SPDX-License-Identifier: MIT
// warmer_progress.hpp: the derived numbers (settled, projection while the
// listing runs, rates, percent, ETA), the JSON summary byte for byte, and the
// progress line at several widths.

#include "memshard/migration/warmer_progress.hpp"

#include <chrono>
#include <string>

#include "gtest/gtest.h"

namespace warmer_progress_test {
namespace {

using memshard::WarmerProgress;
using memshard::WarmerServerProgress;
using std::chrono::milliseconds;
using std::chrono::seconds;

auto listed_server() -> WarmerServerProgress {
  WarmerServerProgress one;
  one.server = "10.0.0.1:11211";
  one.scanned = 1'000;
  one.eligible = 800;
  one.expired = 50;
  one.copied = 501;
  one.already_present = 20;
  one.revoked = 3;
  one.vanished = 7;
  one.bytes = 512'000;
  one.scan_done = true;
  one.elapsed = milliseconds{10'000};
  return one;
}

auto listing_server() -> WarmerServerProgress {
  WarmerServerProgress one;
  one.server = "10.0.0.2:11211";
  one.scanned = 200;
  one.eligible = 150;
  one.expired = 10;
  one.copied = 100;
  one.bytes = 100'000;
  one.expected_items = 1'000;
  one.elapsed = milliseconds{5'000};
  return one;
}

auto two_servers() -> WarmerProgress { return WarmerProgress{{listed_server(), listing_server()}}; }

TEST(WarmerProgressTest, DerivedNumbersOfAListedServer) {
  const WarmerServerProgress one = listed_server();
  EXPECT_EQ(one.settled(), 531U);
  EXPECT_EQ(one.projected_eligible(), 800U);
  EXPECT_EQ(one.pending(), 269U);
  EXPECT_FALSE(one.done());
  EXPECT_DOUBLE_EQ(one.keys_per_second(), 53.1);
  EXPECT_DOUBLE_EQ(one.bytes_per_second(), 51'200);
  EXPECT_DOUBLE_EQ(one.fraction(), 531.0 / 800.0);
  EXPECT_EQ(one.eta(), seconds{6});  // 269 / 53.1 = 5.07, rounded up
}

TEST(WarmerProgressTest, ProjectsTheTotalWhileTheListingRuns) {
  WarmerServerProgress one = listing_server();
  // 150 of 200 scanned are eligible; 1000 items were there: about 750.
  EXPECT_EQ(one.projected_eligible(), 750U);
  EXPECT_EQ(one.pending(), 650U);
  EXPECT_EQ(one.eta(), seconds{33});  // 650 / 20 = 32.5
  // Unknown size, or more scanned than expected: what is known.
  one.expected_items = 0;
  EXPECT_EQ(one.projected_eligible(), 150U);
  one.expected_items = 150;
  EXPECT_EQ(one.projected_eligible(), 150U);
  // Not done until the listing ends, even with everything known settled.
  one.copied = 150;
  EXPECT_FALSE(one.done());
  EXPECT_LT(one.fraction(), 1.0);
  EXPECT_EQ(one.eta(), seconds{0});  // nothing pending at the current guess
  one.scan_done = true;
  EXPECT_TRUE(one.done());
  EXPECT_EQ(one.fraction(), 1.0);
}

TEST(WarmerProgressTest, EtaIsUnknownUntilSomethingSettles) {
  WarmerServerProgress one;
  one.eligible = 10;
  EXPECT_EQ(one.eta(), std::nullopt);  // no time has passed
  one.elapsed = milliseconds{1'000};
  EXPECT_EQ(one.eta(), std::nullopt);  // no item settled yet
  one.failed = 1;
  EXPECT_EQ(one.eta(), seconds{9});
  EXPECT_EQ(one.keys_per_second(), 1.0);
}

TEST(WarmerProgressTest, TotalsPoolTheServers) {
  const WarmerServerProgress total = two_servers().totals();
  EXPECT_EQ(total.server, "total");
  EXPECT_EQ(total.scanned, 1'200U);
  EXPECT_EQ(total.eligible, 950U);
  EXPECT_EQ(total.settled(), 631U);
  EXPECT_EQ(total.expected_items, 2'000U);  // 1000 listed + 1000 expected
  EXPECT_FALSE(total.scan_done);
  EXPECT_EQ(total.elapsed, milliseconds{10'000});
  EXPECT_EQ(total.projected_eligible(), 1'583U);  // 950 x 2000 / 1200
  EXPECT_EQ(total.eta(), seconds{16});            // 952 / 63.1 = 15.09
}

TEST(WarmerProgressTest, JsonIsExact) {
  EXPECT_EQ(listed_server().to_json(),
            "{\"server\":\"10.0.0.1:11211\",\"scan_done\":true,\"done\":false,\"scanned\":1000,"
            "\"eligible\":800,\"expired\":50,\"copied\":501,\"already_present\":20,\"revoked\":3,"
            "\"vanished\":7,\"failed\":0,\"pending\":269,\"bytes\":512000,\"elapsed_ms\":10000,"
            "\"keys_per_second\":53.1,\"bytes_per_second\":51200.0,\"percent\":66.4,\"eta_s\":6}");
  EXPECT_EQ(
      two_servers().to_json(),
      "{\"servers\":["
      "{\"server\":\"10.0.0.1:11211\",\"scan_done\":true,\"done\":false,\"scanned\":1000,"
      "\"eligible\":800,\"expired\":50,\"copied\":501,\"already_present\":20,\"revoked\":3,"
      "\"vanished\":7,\"failed\":0,\"pending\":269,\"bytes\":512000,\"elapsed_ms\":10000,"
      "\"keys_per_second\":53.1,\"bytes_per_second\":51200.0,\"percent\":66.4,\"eta_s\":6},"
      "{\"server\":\"10.0.0.2:11211\",\"scan_done\":false,\"done\":false,\"scanned\":200,"
      "\"eligible\":150,\"expired\":10,\"copied\":100,\"already_present\":0,\"revoked\":0,"
      "\"vanished\":0,\"failed\":0,\"pending\":650,\"bytes\":100000,\"elapsed_ms\":5000,"
      "\"keys_per_second\":20.0,\"bytes_per_second\":20000.0,\"percent\":13.3,\"eta_s\":33}],"
      "\"total\":{\"scan_done\":false,\"done\":false,\"scanned\":1200,\"eligible\":950,"
      "\"expired\":60,\"copied\":601,\"already_present\":20,\"revoked\":3,\"vanished\":7,"
      "\"failed\":0,\"pending\":952,\"bytes\":612000,\"elapsed_ms\":10000,"
      "\"keys_per_second\":63.1,\"bytes_per_second\":61200.0,\"percent\":39.9,\"eta_s\":16}}");
}

TEST(WarmerProgressTest, AnErrorIsInItsServersJsonOnlyAndNotInTheTotals) {
  WarmerProgress progress = two_servers();
  progress.servers[1].error = "10.0.0.2:11211: cannot \"connect\"";
  const std::string json = progress.servers[1].to_json();
  EXPECT_TRUE(json.ends_with(",\"eta_s\":33,\"error\":\"10.0.0.2:11211: cannot \\\"connect\\\"\"}"))
      << json;
  EXPECT_EQ(progress.totals().error, "");
  EXPECT_EQ(progress.totals().to_json().find("error"), std::string::npos);
  EXPECT_EQ(progress.servers[0].to_json().find("error"), std::string::npos);
}

TEST(WarmerProgressTest, JsonOfNothingAndOfUnknowns) {
  EXPECT_EQ(WarmerProgress{}.to_json(),
            "{\"servers\":[],\"total\":{\"scan_done\":true,\"done\":true,\"scanned\":0,"
            "\"eligible\":0,\"expired\":0,\"copied\":0,\"already_present\":0,\"revoked\":0,"
            "\"vanished\":0,\"failed\":0,\"pending\":0,\"bytes\":0,\"elapsed_ms\":0,"
            "\"keys_per_second\":0.0,\"bytes_per_second\":0.0,\"percent\":100.0,\"eta_s\":0}}");
  WarmerServerProgress odd;
  odd.server = "a\"b\\c\x01";
  odd.eligible = 3;
  EXPECT_EQ(odd.to_json(),
            "{\"server\":\"a\\\"b\\\\c\\u0001\",\"scan_done\":false,\"done\":false,\"scanned\":0,"
            "\"eligible\":3,\"expired\":0,\"copied\":0,\"already_present\":0,\"revoked\":0,"
            "\"vanished\":0,\"failed\":0,\"pending\":3,\"bytes\":0,\"elapsed_ms\":0,"
            "\"keys_per_second\":0.0,\"bytes_per_second\":0.0,\"percent\":0.0,\"eta_s\":null}");
}

TEST(WarmerProgressTest, ProgressLineFitsTheWidth) {
  const WarmerProgress progress = two_servers();
  // 631 of about 1583 (39.9%), 63 keys/s, 16 s left.
  // At 80: a bar of 80 - 28 - 3 = 49 cells, 19 of them (39.9%) full.
  EXPECT_EQ(progress.render_progress_line(80),
            "[" + std::string(19, '#') + std::string(30, '.') + "] 39.9% 631/1583 63/s ETA 0:16");
  EXPECT_EQ(progress.render_progress_line(40), "[###......] 39.9% 631/1583 63/s ETA 0:16");
  EXPECT_EQ(progress.render_progress_line(36), "[#....] 39.9% 631/1583 63/s ETA 0:16");
  EXPECT_EQ(progress.render_progress_line(35), "[#####........] 39.9% 63/s ETA 0:16");
  EXPECT_EQ(progress.render_progress_line(32), "[###.......] 39.9% 63/s ETA 0:16");
  EXPECT_EQ(progress.render_progress_line(22), "[#....] 39.9% ETA 0:16");
  EXPECT_EQ(progress.render_progress_line(20), "39.9% ETA 0:16      ");
  EXPECT_EQ(progress.render_progress_line(10), "39.9%     ");
  EXPECT_EQ(progress.render_progress_line(3), "39.");
  EXPECT_EQ(progress.render_progress_line(0), "");
  for (std::size_t width = 0; width <= 120; ++width) {
    EXPECT_EQ(progress.render_progress_line(width).size(), width);
  }
}

TEST(WarmerProgressTest, ProgressLineAtTheStartAndTheEnd) {
  WarmerProgress progress{{listing_server()}};
  progress.servers[0].copied = 0;
  EXPECT_EQ(progress.render_progress_line(80),
            "[" + std::string(53, '.') + "] 0.0% 0/750 0/s ETA --:--");
  progress.servers[0].copied = 150;
  progress.servers[0].scan_done = true;
  progress.servers[0].elapsed = milliseconds{3'725'000};
  EXPECT_TRUE(progress.done());
  EXPECT_EQ(progress.render_progress_line(40), "[##############] 100.0% 150/150 0/s done");
  EXPECT_EQ(progress.render_progress_line(20), "[######] 100.0% done");
  EXPECT_EQ(progress.render_progress_line(12), "100.0% done ");
}

TEST(WarmerProgressTest, EtaFormat) {
  using memshard::detail::format_eta;
  EXPECT_EQ(format_eta(seconds{0}), "0:00");
  EXPECT_EQ(format_eta(seconds{5}), "0:05");
  EXPECT_EQ(format_eta(seconds{754}), "12:34");
  EXPECT_EQ(format_eta(seconds{3'725}), "1:02:05");
  EXPECT_EQ(format_eta(seconds{99 * 3'600 + 3'599}), "99:59:59");
  EXPECT_EQ(format_eta(seconds{100 * 3'600}), ">99h");
  EXPECT_EQ(format_eta(seconds{-3}), "0:00");
  WarmerServerProgress slow;
  slow.eligible = 3'726;
  slow.copied = 1;
  slow.elapsed = milliseconds{1'000};
  EXPECT_EQ(WarmerProgress{{slow}}.render_progress_line(60),
            "[" + std::string(30, '.') + "] 0.0% 1/3726 1/s ETA 1:02:05");
}

}  // namespace
}  // namespace warmer_progress_test
