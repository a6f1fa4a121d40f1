// SPDX-License-Identifier: MIT
// RecoveryJournal on its own, then stale-free recovery on real memcached
// processes: a server hung (SIGSTOP, so it keeps its data) while its keys are
// deleted or rewritten never serves the old values when it returns, under
// fail-fast and failover; failover writes expire within failover_ttl and
// their copies go when the server returns; a journal that overflows holds
// its server out until it is flushed or max_item_ttl has passed.
#include "memshard/fleet/recovery_journal.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/fault_proxy.hpp"
#include "support/memcached_server.hpp"
#include "support/stopped_process.hpp"

namespace recovery_journal_test {
namespace {

using memshard::ClientOptions;
using memshard::Errc;
using memshard::FailurePolicy;
using memshard::JournalOverflow;
using memshard::Server;
using memshard::detail::JournalEntry;
using memshard::detail::RecoveryJournal;
using memshard::testing::Direction;
using memshard::testing::FaultProxy;
using memshard::testing::MemcachedServer;
using memshard::testing::StoppedProcess;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Client = memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>>;

// ---- the journal on its own ---------------------------------------------------

TEST(RecoveryJournalTest, RemembersEachKeyOnceWithItsLatestCopy) {
  RecoveryJournal journal;
  EXPECT_FALSE(journal.pending());
  journal.remember("a", "", 10, 1);
  EXPECT_EQ(journal.remember("a", "10.0.0.2:11211", 10, 2).replaced_copy, "");
  journal.remember("b", "", 10, 3);
  journal.remember("a", "", 10, 4);  // no copy named: the earlier copy stays
  // A copy elsewhere replaces it: the server of the older copy is named.
  EXPECT_EQ(journal.remember("a", "10.0.0.3:11211", 10, 5).replaced_copy, "10.0.0.2:11211");
  EXPECT_EQ(journal.remember("a", "10.0.0.3:11211", 10, 6).replaced_copy, "");
  EXPECT_TRUE(journal.pending());
  EXPECT_EQ(journal.size(), 2U);
  std::vector<JournalEntry> taken;
  ASSERT_TRUE(journal.take(taken, 100));
  ASSERT_EQ(taken.size(), 2U);
  for (const JournalEntry& entry : taken) {
    EXPECT_EQ(entry.copy_at, entry.key == "a" ? "10.0.0.3:11211" : "") << entry.key;
  }
  std::vector<JournalEntry> none;
  journal.give_back(none);
  EXPECT_FALSE(journal.pending());
  EXPECT_EQ(journal.size(), 0U);
}

TEST(RecoveryJournalTest, PastItsCapacityAKeyIsLostAndTheJournalOverflows) {
  RecoveryJournal journal;
  journal.remember("a", "", 2, 1);
  journal.remember("b", "", 2, 2);
  journal.remember("a", "", 2, 3);  // known already: not lost
  EXPECT_FALSE(journal.overflow().first);
  EXPECT_TRUE(journal.remember("c", "", 2, 7).began_overflow);
  EXPECT_FALSE(journal.remember("d", "", 2, 9).began_overflow);
  EXPECT_EQ(journal.size(), 2U);
  EXPECT_EQ(journal.lost(), 2U);
  EXPECT_EQ(journal.overflow(), std::make_pair(true, std::int64_t{9}));
  // Deleting what it holds does not settle the overflow.
  std::vector<JournalEntry> taken;
  ASSERT_TRUE(journal.take(taken, 100));
  taken.clear();
  journal.give_back(taken);
  EXPECT_TRUE(journal.pending());
  journal.settle(false);
  EXPECT_FALSE(journal.pending());
  EXPECT_EQ(journal.lost(), 0U);
}

TEST(RecoveryJournalTest, OneReplayAtATimeAndUnfinishedEntriesComeBack) {
  RecoveryJournal journal;
  for (int i = 0; i < 5; ++i) {
    journal.remember("k" + std::to_string(i), "", 10, i);
  }
  std::vector<JournalEntry> first;
  ASSERT_TRUE(journal.take(first, 3));
  EXPECT_EQ(first.size(), 3U);
  EXPECT_EQ(journal.size(), 2U);
  std::vector<JournalEntry> second;
  EXPECT_FALSE(journal.take(second, 3)) << "a second replay while one runs";
  EXPECT_TRUE(journal.pending());
  journal.remember(first[0].key, "10.0.0.9:1", 10, 6);  // written again meanwhile
  first.erase(first.begin() + 1);                       // one was deleted
  journal.give_back(first);
  EXPECT_TRUE(first.empty());
  EXPECT_EQ(journal.size(), 4U);
  ASSERT_TRUE(journal.take(second, 10));
  std::size_t with_copy = 0;
  for (const JournalEntry& entry : second) {
    with_copy += entry.copy_at.empty() ? 0U : 1U;
  }
  EXPECT_EQ(with_copy, 1U) << "the newer entry wins over the one given back";
  second.clear();
  journal.give_back(second);
  EXPECT_FALSE(journal.pending());
}

// A key written again while its entry was out for a replay that did not
// finish: the newer entry stays, with its copy; one that names no copy takes
// the copy of the entry given back. (The servers of the copies a replay takes
// remember their keys when it takes them: RecoveryTest below.)
TEST(RecoveryJournalTest, AnUnfinishedReplayMergesWithEntriesWrittenMeanwhile) {
  RecoveryJournal journal;
  journal.remember("moved", "10.0.0.2:1", 10, 1);
  journal.remember("same", "10.0.0.2:1", 10, 2);
  journal.remember("gained", "", 10, 3);
  journal.remember("kept", "10.0.0.2:1", 10, 4);
  std::vector<JournalEntry> taken;
  ASSERT_TRUE(journal.take(taken, 10));
  ASSERT_EQ(taken.size(), 4U);
  // Meanwhile: written again with copies elsewhere, at the same server, or
  // (for "kept") without a copy.
  journal.remember("moved", "10.0.0.3:1", 10, 5);
  journal.remember("same", "10.0.0.2:1", 10, 6);
  journal.remember("gained", "10.0.0.3:1", 10, 7);
  journal.remember("kept", "", 10, 8);
  journal.give_back(taken);
  EXPECT_TRUE(taken.empty());
  std::vector<JournalEntry> all;
  ASSERT_TRUE(journal.take(all, 10));
  ASSERT_EQ(all.size(), 4U);
  for (const JournalEntry& entry : all) {
    const std::string expected =
        entry.key == "same" || entry.key == "kept" ? "10.0.0.2:1" : "10.0.0.3:1";
    EXPECT_EQ(entry.copy_at, expected) << entry.key;
  }
  all.clear();
  journal.give_back(all);
  EXPECT_FALSE(journal.pending());
}

TEST(RecoveryJournalTest, SettlingAfterAFlushForgetsEveryKey) {
  RecoveryJournal journal;
  journal.remember("a", "", 1, 1);
  journal.remember("b", "", 1, 2);
  journal.settle(true);
  EXPECT_FALSE(journal.pending());
  EXPECT_EQ(journal.size(), 0U);
}

// ---- stale-free recovery on real servers ----------------------------------------

constexpr milliseconds kTimeout{150};
constexpr milliseconds kRetryInterval{200};
constexpr milliseconds kBackWithin{10'000};

auto options(FailurePolicy policy) -> ClientOptions {
  ClientOptions out;
  out.connect_timeout = kTimeout;
  out.io_timeout = kTimeout;
  out.retry_interval = kRetryInterval;
  out.failure_limit = 2;
  out.failure_policy = policy;
  return out;
}

template <class F>
auto eventually(F&& condition, milliseconds limit) -> bool {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (condition()) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return condition();
}

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) {
      servers_.emplace_back();
    }
  }

  auto list() const -> std::vector<Server> {
    std::vector<Server> out;
    for (const auto& server : servers_) {
      out.push_back(memshard::parse_server(server.spec()));
    }
    return out;
  }

  static auto keys_on(const Client& client, std::size_t server, int count)
      -> std::vector<std::string> {
    std::vector<std::string> keys;
    for (int i = 0; static_cast<int>(keys.size()) < count; ++i) {
      std::string key = "rk:" + std::to_string(i);
      if (client.server_index_for(key) == server) {
        keys.push_back(std::move(key));
      }
    }
    return keys;
  }

  // The value server `s` holds for `key` (empty when none), read directly.
  auto raw(std::size_t s, std::string_view key) const -> std::string {
    const std::string reply = servers_[s].command("get " + std::string(key));
    const auto first = reply.find("\r\n");
    if (!reply.starts_with("VALUE ") || first == std::string::npos) {
      return {};
    }
    const auto end = reply.find("\r\n", first + 2);
    return reply.substr(first + 2, end - first - 2);
  }

  // Waits until server `s` serves `client` again (a get of `key` answers).
  static auto back(Client& client, std::string_view key) -> bool {
    return eventually([&] { return client.get(key).ok(); }, kBackWithin);
  }

  std::vector<MemcachedServer> servers_;
};

TEST_F(RecoveryTest, DeletesAServerMissedAreMadeBeforeItServesAgain) {
  Client client(list(), options(FailurePolicy::kFailFast));
  const auto keys = keys_on(client, 1, 40);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "old"));
  }
  {
    const StoppedProcess hung(servers_[1].pid());
    for (const auto& key : keys) {
      const auto status = client.remove(key);  // cache-aside invalidations
      EXPECT_TRUE(status.code() == Errc::kTimeout || status.code() == Errc::kServerEjected)
          << status;
    }
    EXPECT_EQ(client.stats()[1].journaled, keys.size());
  }
  ASSERT_TRUE(back(client, keys[0]));
  EXPECT_EQ(client.stats()[1].cleaned, keys.size());
  EXPECT_EQ(client.stats()[1].journaled, 0U);
  for (const auto& key : keys) {
    const auto got = client.get(key);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_FALSE(got.value().has_value()) << key << " served its deleted value";
    EXPECT_EQ(raw(1, key), "") << key;
  }
}

TEST_F(RecoveryTest, WithTheJournalOffAReturningServerServesDeletedValues) {
  // What libmemcached and twemproxy do: the flaw the journal exists for.
  ClientOptions off = options(FailurePolicy::kFailFast);
  off.journal_capacity = 0;
  Client client(list(), off);
  const auto keys = keys_on(client, 1, 10);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "old"));
  }
  {
    const StoppedProcess hung(servers_[1].pid());
    for (const auto& key : keys) {
      EXPECT_FALSE(client.remove(key).ok());
    }
    EXPECT_EQ(client.stats()[1].journaled, 0U);
  }
  ASSERT_TRUE(back(client, keys[0]));
  std::size_t stale = 0;
  for (const auto& key : keys) {
    const auto got = client.get(key);
    stale += got.ok() && got.value() && got.value()->value == "old" ? 1U : 0U;
  }
  // The deletes that timed out (the failure limit's two) were in the hung
  // server's socket and ran when it resumed; the refused ones never did.
  EXPECT_GE(stale, keys.size() - 2);
}

TEST_F(RecoveryTest, SetsThatFailedOrWereRefusedLeaveNoOldValue) {
  Client client(list(), options(FailurePolicy::kFailFast));
  const auto keys = keys_on(client, 2, 20);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "v1"));
  }
  {
    const StoppedProcess hung(servers_[2].pid());
    for (const auto& key : keys) {
      EXPECT_FALSE(client.set(key, "v2").ok());
    }
    EXPECT_FALSE(client.incr(keys[0]).ok());
  }
  ASSERT_TRUE(back(client, keys[1]));
  for (const auto& key : keys) {
    const auto got = client.get(key);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_FALSE(got.value().has_value()) << key << " kept v1 although v2 was written";
  }
}

TEST_F(RecoveryTest, FailoverWritesExpireSoonAndTheirCopiesGoWhenTheServerReturns) {
  ClientOptions failover = options(FailurePolicy::kFailover);
  failover.failover_ttl = std::chrono::seconds(30);
  Client client(list(), failover);
  const auto keys = keys_on(client, 0, 10);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "v1"));
  }
  std::vector<std::size_t> copy_at(keys.size(), 4);
  {
    const StoppedProcess hung(servers_[0].pid());
    ASSERT_TRUE(eventually(
        [&] {
          (void)client.get(keys[0]);
          return client.stats()[0].ejected;
        },
        kBackWithin));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(client.set(keys[i], "v2", memshard::Expiry::after(std::chrono::hours(2))));
      for (std::size_t s = 1; s < 4; ++s) {
        if (raw(s, keys[i]) == "v2") {
          copy_at[i] = s;
        }
      }
      ASSERT_LT(copy_at[i], 4U) << keys[i] << " is on no failover server";
      // The copy's TTL is capped at failover_ttl (memcached's meta "t" flag).
      const std::string meta = servers_[copy_at[i]].command("mg " + keys[i] + " t");
      ASSERT_TRUE(meta.starts_with("HD t")) << meta;
      const int ttl = std::stoi(meta.substr(4));
      EXPECT_GT(ttl, 0);
      EXPECT_LE(ttl, 30) << keys[i];
    }
    EXPECT_EQ(client.get(keys[0]).value()->value, "v2");
  }
  ASSERT_TRUE(eventually(
      [&] {
        (void)client.get(keys[0]);
        return !client.stats()[0].ejected && client.stats()[0].journaled == 0;
      },
      kBackWithin));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto got = client.get(keys[i]);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_FALSE(got.value().has_value()) << keys[i] << " served v1 after its server returned";
    EXPECT_EQ(raw(copy_at[i], keys[i]), "") << "the failover copy of " << keys[i] << " stayed";
  }
}

TEST_F(RecoveryTest, AFlappingServerNeverServesAnOlderValue) {
  // twemproxy #604: set on A, A out, set lands elsewhere, A back, set on A,
  // A out again: the copy elsewhere must not be read. Ten flaps.
  Client client(list(), options(FailurePolicy::kFailover));
  const std::string key = keys_on(client, 3, 1)[0];
  int newest = 0;
  ASSERT_TRUE(client.set(key, "0"));
  for (int flap = 1; flap <= 10; ++flap) {
    {
      const StoppedProcess hung(servers_[3].pid());
      ASSERT_TRUE(eventually(
          [&] {
            const auto status = client.set(key, std::to_string(newest + 1));
            if (status.ok()) {
              ++newest;
            }
            return client.stats()[3].ejected && status.ok();
          },
          kBackWithin));
      const auto during = client.get(key);
      ASSERT_TRUE(during.ok()) << during.status();
      if (during.value()) {
        EXPECT_EQ(during.value()->value, std::to_string(newest)) << "flap " << flap;
      }
    }
    ASSERT_TRUE(eventually(
        [&] {
          (void)client.get(key);
          return !client.stats()[3].ejected;
        },
        kBackWithin));
    const auto after = client.get(key);
    ASSERT_TRUE(after.ok()) << after.status();
    if (after.value()) {
      EXPECT_EQ(after.value()->value, std::to_string(newest)) << "flap " << flap;
    }
    ASSERT_TRUE(client.set(key, std::to_string(++newest)));
  }
}

TEST_F(RecoveryTest, AnOverflowingJournalHoldsItsServerOutUntilFlushed) {
  ClientOptions small = options(FailurePolicy::kFailFast);
  small.journal_capacity = 3;
  Client client(list(), small);
  const auto keys = keys_on(client, 1, 6);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "old"));
  }
  {
    const StoppedProcess hung(servers_[1].pid());
    for (const auto& key : keys) {
      EXPECT_FALSE(client.remove(key).ok());
    }
  }
  EXPECT_EQ(client.stats()[1].journaled, 3U);
  EXPECT_EQ(client.stats()[1].journal_lost, 3U);
  // Past its retry interval it is still out: three deletes are unknown.
  const auto until = Clock::now() + kRetryInterval * 3;
  while (Clock::now() < until) {
    const auto got = client.get(keys[5]);
    ASSERT_EQ(got.code(), Errc::kServerEjected) << got.status();
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_NE(client.get(keys[5]).status().detail().find("held out"), std::string::npos)
      << client.get(keys[5]).status();
  EXPECT_EQ(raw(1, keys[5]), "old");
  ASSERT_TRUE(client.flush_server(1));
  EXPECT_EQ(client.flush_server(9).code(), Errc::kInvalidArgument);
  ASSERT_TRUE(back(client, keys[5]));
  for (const auto& key : keys) {
    EXPECT_FALSE(client.get(key).value().has_value()) << key;
  }
  EXPECT_EQ(client.stats()[1].journal_lost, 0U);
}

TEST_F(RecoveryTest, WithFlushOnOverflowTheReturningServerIsFlushedFirst) {
  ClientOptions flush = options(FailurePolicy::kFailFast);
  flush.journal_capacity = 2;
  flush.journal_overflow = JournalOverflow::kFlush;
  Client client(list(), flush);
  const auto keys = keys_on(client, 2, 5);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "old"));
  }
  {
    const StoppedProcess hung(servers_[2].pid());
    for (const auto& key : keys) {
      EXPECT_FALSE(client.remove(key).ok());
    }
  }
  ASSERT_TRUE(back(client, keys[0]));
  EXPECT_EQ(client.stats()[2].flushes, 1U);
  for (const auto& key : keys) {
    EXPECT_EQ(raw(2, key), "") << key;
  }
}

TEST_F(RecoveryTest, AHoldEndsOnceMaxItemTtlHasPassed) {
  ClientOptions hold = options(FailurePolicy::kFailFast);
  hold.journal_capacity = 1;
  hold.max_item_ttl = std::chrono::seconds(1);
  Client client(list(), hold);
  const auto keys = keys_on(client, 0, 3);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "old", memshard::Expiry::after(std::chrono::seconds(1))));
  }
  const auto lost_from = Clock::now();
  {
    const StoppedProcess hung(servers_[0].pid());
    for (const auto& key : keys) {
      EXPECT_FALSE(client.remove(key).ok());
    }
  }
  ASSERT_TRUE(back(client, keys[0]));
  EXPECT_GE(Clock::now() - lost_from, std::chrono::seconds(1));
  for (const auto& key : keys) {
    EXPECT_FALSE(client.get(key).value().has_value()) << key;
  }
}

TEST_F(RecoveryTest, AMultiGetReadsAReturningServerOnlyAfterItIsCleaned) {
  Client client(list(), options(FailurePolicy::kFailFast));
  const auto keys = keys_on(client, 1, 8);
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "old"));
  }
  {
    const StoppedProcess hung(servers_[1].pid());
    for (const auto& key : keys) {
      EXPECT_FALSE(client.remove(key).ok());
    }
  }
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  bool served = false;
  ASSERT_TRUE(eventually(
      [&] {
        const auto result = client.get_multi(views);
        for (std::size_t i = 0; i < keys.size(); ++i) {
          EXPECT_FALSE(result.items[i].has_value()) << keys[i] << " read before cleaning";
        }
        served = result.statuses[0].ok();
        return served;
      },
      kBackWithin));
  EXPECT_EQ(client.stats()[1].cleaned, keys.size());
}

// A replay of a key's own server H that its deadline cuts short hands its
// entries back; a write of the key made meanwhile went to a second fallback
// F2 (H and its first fallback F1 out). The entry given back names F1's copy,
// the newer one F2's: F1 must still be cleaned of the key before it serves,
// or it serves its copy from before the write.
TEST_F(RecoveryTest, AReplayCutShortStillCleansAnOlderCopyOfAKeyWrittenMeanwhile) {
  FaultProxy proxy(servers_[0].port());
  std::vector<Server> servers = list();
  servers[0] = memshard::parse_server(proxy.spec());
  ClientOptions failover = options(FailurePolicy::kFailover);
  failover.failover_rate = 1;
  // The replay's delete hangs this long: time for the other clone's write.
  failover.io_timeout = milliseconds(600);
  Client a(servers, failover);
  Client b = a.clone();
  const std::string key = keys_on(a, 0, 1)[0];
  const std::string of_h = keys_on(a, 0, 2)[1];
  const auto ejected = [&](std::size_t s, std::string_view probe) {
    return eventually(
        [&] {
          (void)a.get(probe);
          return a.stats()[s].ejected;
        },
        kBackWithin);
  };
  proxy.set_blackhole(Direction::kBoth);  // H takes requests and answers none
  ASSERT_TRUE(ejected(0, of_h));
  const auto first = a.set(key, "v1");
  ASSERT_TRUE(first.ok()) << first;
  const std::size_t f1 = first.server();
  ASSERT_NE(f1, 0U);
  const std::string of_f1 = keys_on(a, f1, 1)[0];
  {
    const StoppedProcess f1_out(servers_[f1].pid());
    ASSERT_TRUE(ejected(f1, of_f1));
    // One clone probes H until its replay has taken the key and hangs in the
    // delete (its connection reaches the proxy); the other writes the key then.
    const std::size_t connections = proxy.accepted();
    std::atomic<bool> replay_over{false};
    std::thread replay([&] {
      (void)eventually(
          [&] {
            (void)a.get(of_h);
            return proxy.accepted() > connections;
          },
          kBackWithin);
      replay_over = true;
    });
    const bool replaying = eventually([&] { return proxy.accepted() > connections; }, kBackWithin);
    const auto second = b.set(key, "v2");
    const bool overlapped = !replay_over.load();
    replay.join();
    ASSERT_TRUE(replaying) << "no probe of H reached the wire";
    ASSERT_TRUE(second.ok()) << second;
    ASSERT_NE(second.server(), 0U);
    ASSERT_NE(second.server(), f1);
    ASSERT_TRUE(overlapped) << "the write came after the replay had ended";
  }
  // F1 returns (H stays out): it is cleaned of the key before it serves.
  ASSERT_TRUE(eventually(
      [&] {
        (void)a.get(of_f1);
        return !a.stats()[f1].ejected;
      },
      kBackWithin));
  for (int i = 0; i < 5; ++i) {
    const auto got = a.get(key);
    if (got.ok() && got.value()) {
      EXPECT_NE(got.value()->value, "v1") << "served by server " << got.status().server();
    }
  }
  EXPECT_EQ(raw(f1, key), "") << "server " << f1 << " kept its copy from before the write";
}

}  // namespace
}  // namespace recovery_journal_test
