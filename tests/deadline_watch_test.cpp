// SPDX-License-Identifier: MIT
// Every call ends by its deadline (ClientOptions::call_timeout, or connect +
// I/O timeout) plus a few ms, whatever the server does, against real
// memcached behind a FaultProxy: a reply trickled 100 bytes every 20 ms (which
// keeps libmemcached's per-wait timeout from ever firing), a request trickled
// the same way, a silent server, for every operation and both multi-get
// engines; the handle's timeouts are whole again after such a call; the watch
// thread sleeps when idle and still catches the next call.
#include "memshard/wire/deadline_watch.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/fault_proxy.hpp"
#include "support/memcached_server.hpp"
#include "support/multi_get_modes.hpp"
#include "support/sanitized.hpp"

namespace deadline_watch_test {
namespace {

using memshard::ClientOptions;
using memshard::Errc;
using memshard::Server;
using memshard::testing::Direction;
using memshard::testing::FaultProxy;
using memshard::testing::MemcachedServer;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Client = memshard::ShardedClient<memshard::ModuloLocator<memshard::Crc32>>;

constexpr milliseconds kTimeout{150};  // connect and I/O: a call's budget is 300 ms
constexpr milliseconds kBudget = kTimeout * 2;
// What a call may take past its deadline here. The promise is 20 ms on a
// machine with a core to spare (the watch thread must run when a deadline
// comes: measured 0.5-5 ms over); these tests run two at a time on a shared
// 2-core machine, so they allow 40 ms, and sanitized builds, several times
// slower, 100 ms.
constexpr milliseconds kOver = memshard::testing::kSanitized ? milliseconds(100) : milliseconds(40);

auto options() -> ClientOptions {
  ClientOptions out;
  out.connect_timeout = kTimeout;
  out.io_timeout = kTimeout;
  out.failure_limit = 100;  // these tests look at calls, not ejection
  return out;
}

// Runs `call` and answers how long it took, also recorded in the test's XML
// output (--gtest_output=xml) as a property "ms", then "ms1", ...: the
// reliability table of docs/reliability.md quotes them.
template <class F>
auto timed(F&& call) -> milliseconds {
  static int count = 0;
  const auto start = Clock::now();
  call();
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  ::testing::Test::RecordProperty("ms" + (count == 0 ? std::string() : std::to_string(count)),
                                  std::to_string(static_cast<double>(took.count()) / 1000.0));
  ++count;
  return std::chrono::duration_cast<milliseconds>(took);
}

// One memcached reached through a FaultProxy, and a client of it.
class DeadlineTest : public ::testing::Test {
 protected:
  DeadlineTest() : proxy_(server_.port()) {}

  auto client(ClientOptions with = options()) const -> Client {
    return Client({memshard::parse_server(proxy_.spec())}, with);
  }

  // Stores `bytes` bytes under `key` on the server itself (not through the
  // proxy).
  void store(std::string_view key, std::size_t bytes) {
    const std::string reply =
        server_.command("set " + std::string(key) + " 0 0 " + std::to_string(bytes) + "\r\n" +
                        std::string(bytes, 'v') + "\r\n");
    ASSERT_EQ(reply, "STORED\r\n");
  }

  MemcachedServer server_;
  FaultProxy proxy_;
};

TEST_F(DeadlineTest, ATrickledReplyEndsAtTheDeadline) {
  store("big", 20'000);
  Client c = client();
  ASSERT_TRUE(c.get("big").ok());  // connected, and the value is there
  proxy_.set_trickle(Direction::kDownstream, 100, milliseconds(20));
  // libmemcached alone: 200 slices of 20 ms, each within its poll timeout,
  // so about 4 s of SUCCESS.
  memshard::Status status;
  const auto took = timed([&] { status = c.get("big").status(); });
  EXPECT_EQ(status.code(), Errc::kTimeout) << status;
  EXPECT_NE(status.detail().find("deadline"), std::string::npos) << status;
  EXPECT_GE(took, kBudget - milliseconds(5));
  EXPECT_LE(took, kBudget + kOver);
  // The handle's own timeouts are back: a slow but timely reply is read.
  proxy_.heal();
  proxy_.set_latency(Direction::kDownstream, kTimeout / 2);
  const auto again = c.get("big");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again.value()->value.size(), 20'000U);
}

TEST_F(DeadlineTest, ACallTimeoutShorterThanTheTimeoutsIsKept) {
  store("big", 20'000);
  ClientOptions with = options();
  with.io_timeout = milliseconds(2000);
  with.connect_timeout = milliseconds(2000);
  with.call_timeout = milliseconds(120);
  Client c = client(with);
  ASSERT_TRUE(c.get("big").ok());
  proxy_.set_trickle(Direction::kDownstream, 100, milliseconds(20));
  const auto trickled = timed([&] { EXPECT_EQ(c.get("big").code(), Errc::kTimeout); });
  EXPECT_LE(trickled, with.call_timeout + kOver);
  proxy_.heal();
  proxy_.set_blackhole(Direction::kBoth);
  const auto silent = timed([&] { EXPECT_EQ(c.get("big").code(), Errc::kTimeout); });
  EXPECT_LE(silent, with.call_timeout + kOver);
}

TEST_F(DeadlineTest, ATrickledRequestEndsAtTheDeadline) {
  Client c = client();
  ASSERT_TRUE(c.set("warm", "x").ok());
  proxy_.set_trickle(Direction::kUpstream, 100, milliseconds(20));
  const std::string value(200'000, 'w');
  memshard::Status status;
  const auto took = timed([&] { status = c.set("large", value); });
  EXPECT_EQ(status.code(), Errc::kTimeout) << status;
  EXPECT_LE(took, kBudget + kOver);
}

TEST_F(DeadlineTest, EveryOperationEndsByItsDeadlineWhenTheServerIsSilent) {
  Client c = client();
  ASSERT_TRUE(c.set("counter", "1").ok());
  const auto got = c.get("counter");
  ASSERT_TRUE(got.ok() && got.value());
  const std::uint64_t cas = got.value()->cas;
  proxy_.set_blackhole(Direction::kBoth);
  const auto ttl = memshard::Expiry::after(std::chrono::seconds(60));
  const std::vector<std::pair<std::string, std::function<memshard::Status()>>> calls = {
      {"get", [&] { return c.get("counter").status(); }},
      {"set", [&] { return c.set("counter", "2"); }},
      {"add", [&] { return c.add("other", "2"); }},
      {"replace", [&] { return c.replace("counter", "2"); }},
      {"append", [&] { return c.append("counter", "2"); }},
      {"prepend", [&] { return c.prepend("counter", "2"); }},
      {"cas", [&] { return c.cas("counter", "2", cas); }},
      {"remove", [&] { return c.remove("counter"); }},
      {"incr", [&] { return c.incr("counter").status(); }},
      {"decr", [&] { return c.decr("counter").status(); }},
      {"touch", [&] { return c.touch("counter", ttl); }},
      {"get_multi",
       [&] {
         const auto result = c.get_multi({"counter", "other"});
         return result.statuses[0];
       }},
  };
  for (const auto& entry : calls) {
    const std::string& name = entry.first;
    const auto& call = entry.second;  // (clang 14 captures no structured binding)
    memshard::Status status;
    const auto took = timed([&] { status = call(); });
    EXPECT_FALSE(status.ok()) << name;
    EXPECT_LE(took, kBudget + kOver) << name << ": " << status;
  }
}

class DeadlineMultiGetTest : public DeadlineTest,
                             public ::testing::WithParamInterface<memshard::MultiGetMode> {};

TEST_P(DeadlineMultiGetTest, ATrickledServerFailsOnlyItsKeysByTheDeadline) {
  MemcachedServer healthy;
  ClientOptions with = memshard::testing::with_mode(options(), GetParam());
  Client c({memshard::parse_server(proxy_.spec()), memshard::parse_server(healthy.spec())}, with);
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 5; ++i) {
    std::string key = "h" + std::to_string(i);
    if (c.server_index_for(key) == 1) {
      ASSERT_TRUE(c.set(key, "fine"));
      keys.push_back(std::move(key));
    }
  }
  std::string big = "big";
  for (int i = 0; c.server_index_for(big) != 0; ++i) {
    big = "big" + std::to_string(i);
  }
  store(big, 20'000);
  keys.push_back(big);
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  ASSERT_EQ(c.get_multi(views).hits(), keys.size());  // every connection is open
  proxy_.set_trickle(Direction::kDownstream, 100, milliseconds(20));
  memshard::MultiGetResult result;
  const auto took = timed([&] { result = c.get_multi(views); });
  EXPECT_LE(took, kBudget + kOver);
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    ASSERT_TRUE(result.items[i].has_value()) << keys[i] << ": " << result.statuses[i];
    EXPECT_EQ(result.items[i]->value, "fine");
  }
  EXPECT_FALSE(result.items.back().has_value());
  EXPECT_EQ(result.statuses.back().code(), Errc::kTimeout) << result.statuses.back();
}

INSTANTIATE_TEST_SUITE_P(Modes, DeadlineMultiGetTest,
                         ::testing::ValuesIn(memshard::testing::kMultiGetModes),
                         [](const auto& mode) {
                           return mode.param == memshard::MultiGetMode::kPolled ? "Polled"
                                                                                : "PerServer";
                         });

TEST_F(DeadlineTest, TheWatchSleepsWhenIdleAndStillCatchesTheNextCall) {
  store("big", 20'000);
  Client c = client();
  ASSERT_TRUE(c.get("big").ok());
  const auto watch = memshard::detail::DeadlineWatch::shared();
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (!watch->asleep() && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_TRUE(watch->asleep()) << "no call for over a second, yet the watch thread is awake";
  proxy_.set_trickle(Direction::kDownstream, 100, milliseconds(20));
  const std::uint64_t lowered = watch->lowered();
  const auto took = timed([&] { EXPECT_EQ(c.get("big").code(), Errc::kTimeout); });
  EXPECT_LE(took, kBudget + kOver);
  EXPECT_GT(watch->lowered(), lowered);
}

}  // namespace
}  // namespace deadline_watch_test
