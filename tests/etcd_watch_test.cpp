// SPDX-License-Identifier: MIT
// etcd_watch_test.cpp: EtcdWatch against a real etcd: changes in order and only under the
// prefix, from the revision asked for, across a broken stream without a change lost or
// repeated, the whole prefix once after a compaction, and a stop that does not wait for etcd.

#include "memshard/coordination/etcd_watch.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "memshard/coordination/detail/http_post.hpp"
#include "memshard/coordination/etcd_client.hpp"
#include "support/etcd_server.hpp"
#include "support/fault_proxy.hpp"
#include "support/memcached_server.hpp"

namespace etcd_watch_test {
namespace {

using memshard::EtcdClient;
using memshard::EtcdOptions;
using memshard::EtcdWatch;
using memshard::StoreEvent;
using memshard::WatchUpdate;
using memshard::testing::EtcdServer;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Recorder: the updates a watch delivered, and a bounded wait for them.
class Recorder {
 public:
  auto handler() -> EtcdWatch::Handler {
    return [this](WatchUpdate update) {
      const std::lock_guard<std::mutex> lock(mutex_);
      updates_.push_back(std::move(update));
      changed_.notify_all();
    };
  }
  // events: every event delivered so far, in order.
  auto events() -> std::vector<StoreEvent> {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::vector<StoreEvent> all;
    for (const WatchUpdate& update : updates_) {
      all.insert(all.end(), update.events.begin(), update.events.end());
    }
    return all;
  }
  auto updates() -> std::vector<WatchUpdate> {
    const std::lock_guard<std::mutex> lock(mutex_);
    return updates_;
  }
  // wait_for_events: true once `count` events were delivered, false after 10 s.
  auto wait_for_events(std::size_t count) -> bool {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds{10}, [&] {
      std::size_t seen = 0;
      for (const WatchUpdate& update : updates_) {
        seen += update.events.size();
      }
      return seen >= count;
    });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<WatchUpdate> updates_;
};

auto wait_until_streaming(const EtcdWatch& watch) -> bool {
  const auto deadline = Clock::now() + std::chrono::seconds{10};
  while (!watch.streaming() && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds{5});
  }
  return watch.streaming();
}

TEST(EtcdWatchTest, DeliversWritesAndRemovalsUnderThePrefixInOrder) {
  EtcdServer etcd;
  EtcdClient client(etcd.url());
  const auto start = client.list("fleet/");
  ASSERT_TRUE(start.ok()) << start.status();
  Recorder recorder;
  EtcdWatch watch(client.endpoints(), "fleet/", start->revision, recorder.handler());
  ASSERT_TRUE(wait_until_streaming(watch));
  const auto first = client.put("fleet/a", "1");
  ASSERT_TRUE(client.put("other", "x").ok());
  ASSERT_TRUE(client.put("fleet0", "x").ok());
  const auto second = client.put("fleet/b", "2");
  ASSERT_TRUE(client.remove("fleet/a").ok());
  ASSERT_TRUE(recorder.wait_for_events(3));
  const auto events = recorder.events();
  ASSERT_EQ(events.size(), 3U);
  EXPECT_FALSE(events[0].removed);
  EXPECT_EQ(events[0].entry.key, "fleet/a");
  EXPECT_EQ(events[0].entry.value, "1");
  EXPECT_EQ(events[0].entry.mod_revision, first.value());
  EXPECT_EQ(events[1].entry.key, "fleet/b");
  EXPECT_EQ(events[1].entry.mod_revision, second.value());
  EXPECT_TRUE(events[2].removed);
  EXPECT_EQ(events[2].entry.key, "fleet/a");
  EXPECT_GT(events[2].entry.mod_revision, second.value());
  EXPECT_EQ(watch.revision(), events[2].entry.mod_revision);
  EXPECT_EQ(watch.streams(), 1U);
}

TEST(EtcdWatchTest, StartsRightAfterTheRevisionItIsGiven) {
  EtcdServer etcd;
  EtcdClient client(etcd.url());
  const auto one = client.put("w/one", "1");
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(client.put("w/two", "2").ok());
  Recorder recorder;
  EtcdWatch watch(client.endpoints(), "w/", one.value(), recorder.handler());
  ASSERT_TRUE(recorder.wait_for_events(1));
  const auto events = recorder.events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].entry.key, "w/two");
}

TEST(EtcdWatchTest, AfterItsStreamBrokeItResumesWithNothingLostOrRepeated) {
  EtcdServer etcd;
  EtcdClient client(etcd.url());  // writes go straight to etcd
  // The watch goes through a proxy that resets its connections while the writes go on.
  memshard::testing::FaultProxy proxy(etcd.client_port());
  Recorder recorder;
  EtcdWatch watch({{"127.0.0.1", proxy.port()}}, "w/", client.get("w/")->revision,
                  recorder.handler());
  ASSERT_TRUE(wait_until_streaming(watch));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client.put("w/k" + std::to_string(i), "v").ok());
  }
  ASSERT_TRUE(recorder.wait_for_events(5));
  proxy.reset(true);  // the stream, and every new connection until healed
  const auto broken_by = Clock::now() + std::chrono::seconds{10};
  while (watch.streaming() && Clock::now() < broken_by) {
    std::this_thread::sleep_for(milliseconds{5});
  }
  ASSERT_FALSE(watch.streaming());
  for (int i = 5; i < 10; ++i) {
    ASSERT_TRUE(client.put("w/k" + std::to_string(i), "v").ok());
  }
  EXPECT_EQ(recorder.events().size(), 5U);  // nothing came while the stream was down
  proxy.heal();
  ASSERT_TRUE(recorder.wait_for_events(10));
  const auto events = recorder.events();
  std::set<std::int64_t> revisions;
  for (std::size_t i = 0; i < events.size(); ++i) {
    revisions.insert(events[i].entry.mod_revision);
    if (i < 10) {
      EXPECT_EQ(events[i].entry.key, "w/k" + std::to_string(i));
    }
  }
  EXPECT_EQ(events.size(), 10U);
  EXPECT_EQ(revisions.size(), events.size());
  EXPECT_GE(watch.streams(), 2U);
}

TEST(EtcdWatchTest, AfterACompactionItDeliversThePrefixOnceAndWatchesOn) {
  EtcdServer etcd;
  EtcdClient client(etcd.url());
  const auto base = client.get("w/");
  ASSERT_TRUE(client.put("w/a", "1").ok());
  ASSERT_TRUE(client.put("w/a", "2").ok());
  const auto last = client.put("w/b", "3");
  ASSERT_TRUE(last.ok());
  // Compact the history up to now, so a watch from `base` cannot replay it.
  memshard::detail::HttpPost http;
  const auto compacted =
      http.post("http://" + etcd.endpoint() + "/v3/kv/compaction",
                "{\"revision\":\"" + std::to_string(last.value()) + "\",\"physical\":true}",
                milliseconds{5'000}, milliseconds{1'000}, 1U << 20U);
  ASSERT_EQ(compacted.status, 200) << compacted.body;
  Recorder recorder;
  EtcdWatch watch(client.endpoints(), "w/", base->revision, recorder.handler());
  ASSERT_TRUE(recorder.wait_for_events(2));
  ASSERT_TRUE(wait_until_streaming(watch));
  ASSERT_TRUE(client.put("w/c", "4").ok());
  ASSERT_TRUE(recorder.wait_for_events(3));
  const auto updates = recorder.updates();
  ASSERT_GE(updates.size(), 2U);
  EXPECT_TRUE(updates[0].resync);
  ASSERT_EQ(updates[0].events.size(), 2U);
  EXPECT_EQ(updates[0].events[0].entry.value, "2");  // the state, not the history
  EXPECT_EQ(updates[0].events[1].entry.key, "w/b");
  EXPECT_FALSE(updates[1].resync);
  EXPECT_EQ(updates[1].events.at(0).entry.key, "w/c");
  EXPECT_EQ(watch.resyncs(), 1U);
}

TEST(EtcdWatchTest, AnEndpointThatNeverConfirmsTheWatchIsLeftForTheNext) {
  EtcdServer etcd;
  std::uint16_t port = 0;
  const auto hung = memshard::testing::detail::listen_loopback(port);
  EtcdOptions options;
  options.request_timeout = milliseconds{500};
  options.connect_timeout = milliseconds{200};
  EtcdClient client(etcd.url());
  Recorder recorder;
  EtcdWatch watch({{"127.0.0.1", port}, {"127.0.0.1", etcd.client_port()}}, "w/",
                  client.get("w/")->revision, recorder.handler(), options);
  ASSERT_TRUE(wait_until_streaming(watch));
  ASSERT_TRUE(client.put("w/a", "1").ok());
  EXPECT_TRUE(recorder.wait_for_events(1));
}

TEST(EtcdWatchTest, DestroyingItDoesNotWaitForAHungEtcd) {
  EtcdServer etcd;
  EtcdClient client(etcd.url());
  Recorder recorder;
  auto watch = std::make_unique<EtcdWatch>(client.endpoints(), "w/", client.get("w/")->revision,
                                           recorder.handler());
  ASSERT_TRUE(wait_until_streaming(*watch));
  etcd.pause();
  const auto start = Clock::now();
  watch.reset();
  // At once: without the wake-up, the watch thread would sleep out its poll (libcurl wakes it
  // every 200 ms or so when idle).
  EXPECT_LT(Clock::now() - start, milliseconds{100});
  etcd.resume();
}

}  // namespace
}  // namespace etcd_watch_test
