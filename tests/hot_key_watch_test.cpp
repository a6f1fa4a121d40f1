// SPDX-License-Identifier: MIT
// hot_key_watch_test.cpp: a client family's hot keys (hotkeys/hot_key_watch.hpp,
// ClientOptions::hot_keys) against real memcached: the seats of a family merged (a key hot
// across two clones, though neither sees it above the share alone); hot_keys() and the
// observer's kHotKey and kHotKeyCooled events as a key heats and cools; multi-gets and batch
// writes counted; the keys as sent, prefix included; nothing counted when off; options refused
// at construction; the Prometheus families.

#include "memshard/hotkeys/hot_key_watch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"

namespace hot_key_watch_test {
namespace {

using memshard::ClientOptions;
using memshard::HotKey;
using memshard::HotKeyOptions;
using memshard::ServerEvent;
using memshard::ServerEventKind;
using memshard::detail::HotKeyWatch;
using memshard::testing::MemcachedServer;
using Client = memshard::ShardedClient<memshard::KetamaLocator<>>;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto kPatience = std::chrono::seconds{10};  // a bound on every wait below

auto has(const std::vector<HotKey>& keys, std::string_view key) -> bool {
  return std::any_of(keys.begin(), keys.end(), [key](const HotKey& k) { return k.key == key; });
}

// Windows of 50 ms; every operation counted; hot from 30% of at least 20 operations.
auto fast_options() -> HotKeyOptions {
  return HotKeyOptions{
      .sample_every = 1, .share = 0.3, .window = milliseconds{50}, .min_operations = 20};
}

TEST(HotKeyWatchTest, TheSeatsOfAFamilyCountTogether) {
  HotKeyWatch watch(fast_options());  // hot from 20 operations in a window
  const auto first = watch.seat();
  const auto second = watch.seat();
  // 12 operations a window on each seat: too few alone, enough together.
  const auto deadline = Clock::now() + kPatience;
  std::vector<HotKey> hot;
  std::int64_t window = -1;
  while (hot.empty() && Clock::now() < deadline) {
    const std::int64_t now = memshard::detail::coarse_now_ns();
    if (now / 50'000'000 != window) {
      window = now / 50'000'000;
      for (int k = 0; k < 12; ++k) {
        (void)first->record(k % 2 == 0 ? "shared" : "first:" + std::to_string(k));
        (void)second->record(k % 2 == 0 ? "shared" : "second:" + std::to_string(k));
      }
    }
    hot = watch.hot(now);
  }
  ASSERT_EQ(hot.size(), 1U);
  EXPECT_EQ(hot.front().key, "shared");
  EXPECT_NEAR(hot.front().share, 0.5, 0.01);
  EXPECT_EQ(hot.front().count, 12U);
  // A seat that went counts no more.
  HotKeyWatch alone(fast_options());
  {
    const auto gone = alone.seat();
    for (int k = 0; k < 100; ++k) {
      (void)gone->record("gone");
    }
  }
  EXPECT_TRUE(alone.hot(memshard::detail::coarse_now_ns() + 50'000'000).empty());
}

class HotKeyClientTest : public ::testing::Test {
 protected:
  MemcachedServer a_;
  MemcachedServer b_;
  std::vector<memshard::Server> servers_ = memshard::parse_servers(a_.spec() + "," + b_.spec());
  std::mutex mutex_;
  std::vector<ServerEvent> events_;

  auto options() -> ClientOptions {
    ClientOptions options;
    options.hot_keys = fast_options();
    options.on_server_event = [this](const ServerEvent& event) {
      const std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(event);
    };
    return options;
  }
  auto event(ServerEventKind kind, std::string_view key) -> std::optional<ServerEvent> {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const ServerEvent& e : events_) {
      if (e.kind == kind && e.detail == key) {
        return e;
      }
    }
    return std::nullopt;
  }
  // Calls `step` until `done()` or the patience runs out; whether it is done.
  template <class Step, class Done>
  static auto drive(Step&& step, Done&& done) -> bool {
    const auto deadline = Clock::now() + kPatience;
    while (Clock::now() < deadline) {
      step();
      if (done()) {
        return true;
      }
    }
    return false;
  }
};

TEST_F(HotKeyClientTest, AKeyThatHeatsAndCoolsIsReportedAndObserved) {
  Client client(servers_, options());
  std::atomic<bool> stop{false};
  std::thread writer([&stop, clone = client.clone()]() mutable {  // the family's other thread
    for (int n = 0; !stop && n < 1'000'000; ++n) {
      (void)clone.set("page:home", "v");
      (void)clone.set("cold:w" + std::to_string(n % 50), "v");
    }
  });
  int i = 0;
  const auto heat = [&] {
    (void)client.get("page:home");
    (void)client.get("cold:" + std::to_string(i++ % 50));
  };
  const bool heated = drive(heat, [&] {
    return has(client.hot_keys(), "page:home") && event(ServerEventKind::kHotKey, "page:home");
  });
  stop = true;
  writer.join();
  ASSERT_TRUE(heated);
  const std::vector<HotKey> hot = client.hot_keys();
  EXPECT_EQ(hot.front().key, "page:home");
  EXPECT_NEAR(hot.front().share, 0.5, 0.1);
  EXPECT_GT(hot.front().per_second, 0.0);
  const ServerEvent became = *event(ServerEventKind::kHotKey, "page:home");
  EXPECT_EQ(became.server.port, client.server_for("page:home").port);
  EXPECT_GT(became.count, 0U);
  EXPECT_FALSE(event(ServerEventKind::kHotKey, "cold:1")) << "1 in 50 of a third";

  const auto cool = [&] { (void)client.get("cold:" + std::to_string(i++ % 50)); };
  ASSERT_TRUE(drive(cool, [&] { return event(ServerEventKind::kHotKeyCooled, "page:home"); }));
  EXPECT_FALSE(has(client.hot_keys(), "page:home"));
}

TEST_F(HotKeyClientTest, MultiGetsAndBatchWritesCountAndKeysAreReportedAsSent) {
  ClientOptions with_prefix = options();
  with_prefix.key_prefix = "app:";
  Client reader(servers_, with_prefix);
  const std::vector<std::string> keys = {"hot", "a", "hot", "b"};
  ASSERT_TRUE(drive([&] { (void)reader.get_multi(keys); },
                    [&] { return has(reader.hot_keys(), "app:hot"); }));
  EXPECT_FALSE(has(reader.hot_keys(), "app:a"));
  Client writer(servers_, with_prefix);
  const std::vector<std::pair<std::string, std::string>> items = {
      {"row", "v"}, {"c", "v"}, {"d", "v"}};
  ASSERT_TRUE(drive([&] { (void)writer.set_multi(items); },
                    [&] { return has(writer.hot_keys(), "app:row"); }));
}

TEST_F(HotKeyClientTest, NothingIsCountedWhenOff) {
  ClientOptions off = options();
  off.hot_keys.reset();
  Client client(servers_, off);
  const auto end = Clock::now() + milliseconds{150};  // three windows of calls
  while (Clock::now() < end) {
    (void)client.get("page:home");
  }
  EXPECT_TRUE(client.hot_keys().empty());
  const std::lock_guard<std::mutex> lock(mutex_);
  EXPECT_TRUE(events_.empty());
}

TEST(HotKeyOptionsTest, InvalidOptionsAreRefusedAtConstruction) {
  const auto servers = memshard::parse_servers("127.0.0.1:11211");
  for (const HotKeyOptions& wrong :
       {HotKeyOptions{.capacity = 0}, HotKeyOptions{.sample_every = 0}, HotKeyOptions{.share = 0.0},
        HotKeyOptions{.window = milliseconds{0}}}) {
    ClientOptions options;
    options.hot_keys = wrong;
    EXPECT_THROW(Client(servers, options), memshard::ConfigError);
  }
}

TEST(HotKeyPrometheusTest, EachHotKeyIsASampleOfBothFamilies) {
  const std::vector<HotKey> keys = {
      HotKey{.key = "page:\"home\"", .share = 0.5, .per_second = 1250, .count = 1250}};
  memshard::PrometheusOptions options;
  options.labels = {{"pool", "web"}};
  const std::string text = memshard::hot_keys_to_prometheus(keys, options);
  EXPECT_NE(text.find("# TYPE memshard_hot_key_operations_per_second gauge\n"), std::string::npos);
  EXPECT_NE(text.find("memshard_hot_key_operations_per_second{key=\"page:\\\"home\\\"\","
                      "pool=\"web\"} 1250\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("memshard_hot_key_share{key=\"page:\\\"home\\\"\",pool=\"web\"} 0.5\n"),
            std::string::npos)
      << text;
  options.labels = {{"key", "x"}};
  EXPECT_THROW((void)memshard::hot_keys_to_prometheus(keys, options), memshard::ConfigError);
  EXPECT_EQ(memshard::hot_keys_to_prometheus({}).find("memshard_hot_key_share{"),
            std::string::npos);
}

}  // namespace
}  // namespace hot_key_watch_test
