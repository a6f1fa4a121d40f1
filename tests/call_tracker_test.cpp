// SPDX-License-Identifier: MIT
// call_tracker_test.cpp: CallTracker's seats (nesting, counting, seats that go), and
// ShardedClient::wait_for_earlier_calls over them on real memcached: a clone's call begun
// before a reconfigure holds the wait until it ends; a call begun after it does not.

#include "memshard/fleet/call_tracker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"

namespace call_tracker_test {
namespace {

using memshard::detail::CallMark;
using memshard::detail::CallTracker;
using memshard::testing::MemcachedServer;
using std::chrono::milliseconds;

TEST(CallTrackerTest, OnlyTheOutermostCallMarksItsSeat) {
  CallTracker tracker;
  const auto seat = tracker.seat();
  EXPECT_EQ(tracker.calls_before(5), 0U);
  {
    const CallMark outer = (seat->enter(3), CallMark(*seat));
    EXPECT_EQ(seat->calling(), 3U);
    EXPECT_EQ(tracker.calls_before(4), 1U);
    EXPECT_EQ(tracker.calls_before(3), 0U);  // on 3: not earlier than 3
    {
      EXPECT_FALSE(seat->enter(4));  // nested: the outer call counts whole
      const CallMark inner(*seat);
      EXPECT_EQ(seat->calling(), 3U);
    }
    EXPECT_EQ(seat->calling(), 3U);
    EXPECT_EQ(seat->depth(), 1);
  }
  EXPECT_EQ(seat->calling(), 0U);
  EXPECT_EQ(tracker.calls_before(100), 0U);
}

TEST(CallTrackerTest, ASeatThatWentCountsNoMore) {
  CallTracker tracker;
  auto gone = tracker.seat();
  const auto kept = tracker.seat();
  gone->enter(1);
  kept->enter(2);
  EXPECT_EQ(tracker.calls_before(3), 2U);
  gone.reset();
  EXPECT_EQ(tracker.calls_before(3), 1U);
  kept->leave();
  EXPECT_TRUE(tracker.wait_before(3, std::chrono::steady_clock::now()));
}

TEST(CallTrackerTest, WaitBeforeGivesUpAtItsDeadline) {
  CallTracker tracker;
  const auto seat = tracker.seat();
  seat->enter(1);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(tracker.wait_before(2, start + milliseconds{20}));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds{20});
  seat->leave();
  EXPECT_TRUE(tracker.wait_before(2, std::chrono::steady_clock::now() + milliseconds{20}));
}

// A clone on another thread holds a call open inside visit_multi's callback until released.
class HeldCall {
 public:
  HeldCall(memshard::ShardedClient<memshard::KetamaLocator<>>& client, std::string key)
      : thread_([this, clone = client.clone(), key = std::move(key)]() mutable {
          const std::string_view view = key;
          clone.visit_multi(
              std::span<const std::string_view>(&view, 1),
              [this](std::size_t, const memshard::ItemView&) {
                inside_.set_value();
                release_future_.wait();
              },
              [](std::size_t, const memshard::Status&) {});
          done_ = true;
        }) {
    inside_future_.wait();  // the call is under way
  }
  HeldCall(const HeldCall&) = delete;
  auto operator=(const HeldCall&) -> HeldCall& = delete;
  HeldCall(HeldCall&&) = delete;
  auto operator=(HeldCall&&) -> HeldCall& = delete;
  ~HeldCall() {
    release();
    thread_.join();
  }
  void release() {
    if (!released_) {
      released_ = true;
      release_.set_value();
    }
  }

 private:
  std::promise<void> inside_;
  std::future<void> inside_future_ = inside_.get_future();
  std::promise<void> release_;
  std::shared_future<void> release_future_ = release_.get_future().share();
  bool released_ = false;
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: started once the rest is built
};

TEST(CallTrackerTest, AWaitHoldsForACallBegunBeforeTheChangeAndOnlyForIt) {
  MemcachedServer a;
  MemcachedServer b;
  const auto one = memshard::parse_servers(a.spec());
  const auto two = memshard::parse_servers(a.spec() + "," + b.spec());
  memshard::ShardedClient<memshard::KetamaLocator<>> client(one);
  ASSERT_TRUE(client.set("held", "v"));
  EXPECT_TRUE(client.wait_for_earlier_calls(milliseconds{0}));  // nothing under way
  {
    HeldCall before(client, "held");  // begun on the first placement
    client.reconfigure(two);
    EXPECT_FALSE(client.wait_for_earlier_calls(milliseconds{50}));
    before.release();
    EXPECT_TRUE(client.wait_for_earlier_calls(milliseconds{10'000}));
  }
  // A call begun after the change does not hold a wait for it; the next change waits for it.
  ASSERT_TRUE(client.set("held", "v"));  // on the placement of two servers now
  HeldCall after(client, "held");
  EXPECT_TRUE(client.wait_for_earlier_calls(milliseconds{0}));
  client.reconfigure(one);
  EXPECT_FALSE(client.wait_for_earlier_calls(milliseconds{20}));
  after.release();
  EXPECT_TRUE(client.wait_for_earlier_calls(milliseconds{10'000}));
}

// A call runs whole on the snapshot it entered on, however often another clone publishes a new
// one meanwhile: a step of a call that moved to a newer snapshot would free the one the window
// it runs in points into (found by AddressSanitizer in a fleet member). Bounded in rounds.
TEST(CallTrackerTest, ACallRunsWholeOnTheSnapshotItEnteredOn) {
  MemcachedServer a;
  MemcachedServer b;
  MemcachedServer c;
  const auto two = memshard::parse_servers(a.spec() + "," + b.spec());
  const auto three = memshard::parse_servers(a.spec() + "," + b.spec() + "," + c.spec());
  memshard::ShardedClient<memshard::KetamaLocator<>> client(two);
  std::atomic<bool> done{false};
  std::thread publisher([&done, clone = client.clone(), &three, &two]() mutable {
    for (int round = 0; round < 2000; ++round) {
      clone.begin_migration(three);  // (an abort would leave copies that a next window refuses)
      clone.commit_migration();
      clone.reconfigure(two);
    }
    done = true;
  });
  std::size_t calls = 0;
  std::size_t failed = 0;
  while (!done || calls < 200) {
    const std::string key = "k" + std::to_string(calls % 64);
    failed += client.set(key, "v").ok() ? 0U : 1U;
    failed += client.get(key).ok() ? 0U : 1U;
    const memshard::Status removed = client.remove(key);
    failed += removed.ok() || removed.code() == memshard::Errc::kNotFound ? 0U : 1U;
    ++calls;
  }
  publisher.join();
  EXPECT_EQ(failed, 0U) << "of " << calls << " rounds";
}

}  // namespace
}  // namespace call_tracker_test
