// SPDX-License-Identifier: MIT
// ClientPool against real memcached servers started by the tests: its clients
// are one family (writes and reconfigures through one lease are seen through
// the others), the bound holds (try_acquire and acquire fail with kTimeout,
// in bounded time), a lease that ends wakes a blocked acquire, idle clients
// are reused last-returned-first, many threads never share a client, bad
// options throw, and a lease may outlive its pool.
#include "memshard/client/client_pool.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/client/result.hpp"
#include "memshard/errors.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/sharded_client.hpp"
#include "support/server_set.hpp"

namespace client_pool_test {
namespace {

using memshard::ClientPool;
using memshard::ClientPoolOptions;
using memshard::ConfigError;
using memshard::Errc;
using memshard::Server;
using memshard::testing::ServerSet;
using Locator = memshard::KetamaLocator<memshard::Md5>;
using Client = memshard::ShardedClient<Locator>;
using Pool = ClientPool<Locator>;
using Lease = memshard::ClientLease<Locator>;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

static_assert(std::is_same_v<Pool::Lease, Lease>);
static_assert(!std::is_copy_constructible_v<Lease>);
static_assert(!std::is_copy_assignable_v<Lease>);
static_assert(std::is_nothrow_move_constructible_v<Lease>);
static_assert(std::is_nothrow_move_assignable_v<Lease>);
static_assert(!std::is_copy_constructible_v<Pool>);
static_assert(std::is_nothrow_move_constructible_v<Pool>);

// A bound on every wait of these tests: far longer than anything should take.
constexpr milliseconds kPatience{10'000};

// The servers shared by the suite: three, ready and empty before every test.
class ClientPoolTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(3); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  static auto list() -> std::vector<Server> { return servers_->list(); }
  // Whether server `i` holds `key`, asked directly over the text protocol.
  static auto holds(std::size_t i, const std::string& key) -> bool {
    return (*servers_)[i].command("get " + key).starts_with("VALUE ");
  }

  static auto make_pool(std::size_t max_clients, milliseconds acquire_timeout = kPatience) -> Pool {
    ClientPoolOptions options;
    options.max_clients = max_clients;
    options.acquire_timeout = acquire_timeout;
    return Pool(Client(list()), options);
  }

  // A lease that must be granted at once.
  static auto lease_now(Pool& pool) -> Lease {
    auto leased = pool.try_acquire();
    EXPECT_TRUE(leased.ok()) << leased.status();
    return leased ? std::move(leased).value() : Lease();
  }

 private:
  static inline std::unique_ptr<ServerSet> servers_;
};

TEST_F(ClientPoolTest, LeasedClientsAreOneFamily) {
  Pool pool = make_pool(3);
  Lease a = lease_now(pool);
  Lease b = lease_now(pool);
  ASSERT_TRUE(a && b);
  ASSERT_NE(a.get(), b.get());
  EXPECT_EQ(a->locator().get(), b->locator().get());

  // A write through one lease is read through another.
  ASSERT_TRUE(a->set("family", "one").ok());
  const auto got = b->get("family");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got.value().has_value());
  EXPECT_EQ(got.value()->value, "one");

  // b goes back idle with the old placement; a reconfigure through a moves
  // it, and a client made afterwards, to the new one.
  Client* made_before = b.get();
  b.reset();
  const std::vector<Server> all = list();
  const std::vector<Server> first_only = {all[0]};
  a->reconfigure(first_only);
  Lease reused = lease_now(pool);
  Lease fresh = lease_now(pool);
  ASSERT_TRUE(reused && fresh);
  EXPECT_EQ(reused.get(), made_before);
  EXPECT_EQ(pool.size(), 3U);
  for (Lease* lease : {&reused, &fresh}) {
    ASSERT_EQ((*lease)->servers().size(), 1U);
    EXPECT_EQ((*lease)->servers()[0].port, all[0].port);
    for (int i = 0; i < 20; ++i) {
      const std::string key =
          "moved:" + std::to_string(i) + ":" + std::to_string(lease == &reused ? 0 : 1);
      ASSERT_TRUE((*lease)->set(key, "v").ok());
      EXPECT_TRUE(holds(0, key)) << key;
      EXPECT_FALSE(holds(1, key) || holds(2, key)) << key;
    }
  }
  EXPECT_EQ(a->snapshot()->generation, fresh->snapshot()->generation);
}

TEST_F(ClientPoolTest, TheBoundHoldsAndAFullPoolTimesOut) {
  Pool pool = make_pool(2, milliseconds(30));
  EXPECT_EQ(pool.max_clients(), 2U);
  Lease a = lease_now(pool);
  Lease b = lease_now(pool);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(pool.size(), 2U);
  EXPECT_EQ(pool.idle(), 0U);

  const auto refused = pool.try_acquire();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Errc::kTimeout);
  EXPECT_EQ(refused.status().server(), memshard::Status::kNoServer);
  EXPECT_NE(refused.status().detail().find("client pool"), std::string::npos) << refused.status();

  const auto start = Clock::now();
  const auto late = pool.acquire(milliseconds(50));
  const auto waited = Clock::now() - start;
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.code(), Errc::kTimeout);
  EXPECT_GE(waited, milliseconds(50));
  EXPECT_LT(waited, kPatience);

  // acquire() waits for ClientPoolOptions::acquire_timeout.
  const auto default_start = Clock::now();
  EXPECT_EQ(pool.acquire().code(), Errc::kTimeout);
  const auto default_waited = Clock::now() - default_start;
  EXPECT_GE(default_waited, milliseconds(30));
  EXPECT_LT(default_waited, kPatience);

  EXPECT_EQ(pool.size(), 2U);
  EXPECT_EQ(pool.waiting(), 0U);
  b.reset();
  EXPECT_EQ(pool.idle(), 1U);
  Lease again = lease_now(pool);
  EXPECT_TRUE(again);
  EXPECT_EQ(pool.size(), 2U);
}

TEST_F(ClientPoolTest, AnEndingLeaseWakesABlockedAcquire) {
  Pool pool = make_pool(1);
  Lease held = lease_now(pool);
  ASSERT_TRUE(held);
  Client* const client = held.get();

  std::atomic<bool> got{false};
  Client* seen = nullptr;
  Clock::time_point granted{};
  std::thread waiter([&] {
    auto leased = pool.acquire(kPatience);
    granted = Clock::now();
    if (leased) {
      Lease lease = std::move(leased).value();
      seen = lease.get();
      got = lease->set("woken", "yes").ok();
    }
  });
  // Bounded polling until the waiter is blocked in acquire().
  const auto give_up = Clock::now() + kPatience;
  while (pool.waiting() == 0 && Clock::now() < give_up) {
    std::this_thread::yield();
  }
  // (No fatal assertion before the join: the thread must be joined.)
  EXPECT_EQ(pool.waiting(), 1U) << "the waiter never blocked";
  EXPECT_FALSE(got);
  const auto released = Clock::now();
  held.reset();
  waiter.join();
  EXPECT_TRUE(got);
  EXPECT_EQ(seen, client);
  // Woken by the release, not by the end of its own wait.
  EXPECT_LT(granted - released, kPatience / 2);
  EXPECT_EQ(pool.waiting(), 0U);
  EXPECT_EQ(pool.idle(), 1U);
}

TEST_F(ClientPoolTest, IdleClientsAreReusedLastReturnedFirst) {
  Pool pool = make_pool(4);
  EXPECT_EQ(pool.size(), 1U);  // the prototype
  EXPECT_EQ(pool.idle(), 1U);
  Lease first = lease_now(pool);
  Client* const client = first.get();
  ASSERT_TRUE(first->set("warm", "v").ok());
  first.reset();
  for (int i = 0; i < 5; ++i) {
    Lease again = lease_now(pool);
    EXPECT_EQ(again.get(), client);
    EXPECT_EQ(again->get("warm").value()->value, "v");
  }
  EXPECT_EQ(pool.size(), 1U);
  EXPECT_EQ(pool.idle(), 1U);

  Lease x = lease_now(pool);
  Lease y = lease_now(pool);
  Client* const last = y.get();
  EXPECT_EQ(pool.size(), 2U);
  x.reset();
  y.reset();
  EXPECT_EQ(pool.idle(), 2U);
  EXPECT_EQ(lease_now(pool).get(), last);
}

TEST_F(ClientPoolTest, ALeaseIsMoveOnlyAndEndsOnce) {
  Pool pool = make_pool(2);
  Lease a = lease_now(pool);
  Client* const client = a.get();
  Lease b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from leases are empty
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.get(), client);
  EXPECT_EQ(pool.idle(), 0U);
  a.reset();  // an empty lease gives nothing back
  EXPECT_EQ(pool.idle(), 0U);
  Lease c = lease_now(pool);
  EXPECT_EQ(pool.idle(), 0U);
  b = std::move(c);  // b's client goes back; b now holds c's
  EXPECT_EQ(pool.idle(), 1U);
  EXPECT_NE(b.get(), client);
  b = Lease();
  EXPECT_EQ(pool.idle(), 2U);
  EXPECT_EQ(pool.size(), 2U);
}

TEST_F(ClientPoolTest, ManyThreadsNeverShareAClient) {
  constexpr std::size_t kMaxClients = 3;
  constexpr int kThreads = 8;
  constexpr int kOperations = 200;
  Pool pool = make_pool(kMaxClients);

  // Make every client first, to know their addresses.
  std::map<const Client*, std::size_t> index;
  {
    std::vector<Lease> all;
    for (std::size_t i = 0; i < kMaxClients; ++i) {
      all.push_back(lease_now(pool));
      index.emplace(all.back().get(), i);
    }
    ASSERT_EQ(index.size(), kMaxClients);
    EXPECT_FALSE(pool.try_acquire().ok());
  }
  ASSERT_EQ(pool.idle(), kMaxClients);

  std::array<std::atomic<bool>, kMaxClients> in_use{};
  std::atomic<int> shared{0};     // a lease on a client another thread held
  std::atomic<int> strangers{0};  // a lease on a client the pool should not have
  std::atomic<int> failures{0};   // a refused lease or a failed operation
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int op = 0; op < kOperations; ++op) {
        auto leased = pool.acquire(kPatience);
        if (!leased) {
          ++failures;
          continue;
        }
        Lease lease = std::move(leased).value();
        const auto found = index.find(lease.get());
        if (found == index.end()) {
          ++strangers;
          continue;
        }
        std::atomic<bool>& flag = in_use[found->second];
        if (flag.exchange(true)) {
          ++shared;  // its holder still uses it: leave it (and its flag) alone
          continue;
        }
        const std::string key = "t" + std::to_string(t) + ":" + std::to_string(op);
        const std::string value = std::to_string(op * 31 + t);
        if (!lease->set(key, value).ok()) {
          ++failures;
        }
        const auto got = lease->get(key);
        if (!got.ok() || !got.value() || got.value()->value != value) {
          ++failures;
        }
        flag.store(false);
        ++done;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(shared.load(), 0);
  EXPECT_EQ(strangers.load(), 0);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(done.load(), kThreads * kOperations);
  EXPECT_EQ(pool.size(), kMaxClients);
  EXPECT_EQ(pool.idle(), kMaxClients);
  EXPECT_EQ(pool.waiting(), 0U);
}

TEST_F(ClientPoolTest, InvalidOptionsAreConfigErrors) {
  ClientPoolOptions zero;
  zero.max_clients = 0;
  try {
    Pool pool(Client(list()), zero);
    ADD_FAILURE() << "a pool of 0 clients was made";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "memshard: max_clients must be at least 1: 0");
  }
  ClientPoolOptions negative;
  negative.acquire_timeout = milliseconds(-1);
  EXPECT_THROW(Pool(Client(list()), negative), ConfigError);
  ClientPoolOptions one;
  one.max_clients = 1;
  EXPECT_NO_THROW(Pool(Client(list()), one));
}

TEST_F(ClientPoolTest, ALeaseMayOutliveItsPool) {
  auto pool = std::make_unique<Pool>(make_pool(2));
  Lease first = lease_now(*pool);
  Lease second = lease_now(*pool);
  ASSERT_TRUE(first && second);
  pool.reset();
  // Both clients still work, and still share their fleet.
  ASSERT_TRUE(first->set("orphan", "v").ok());
  const auto got = second->get("orphan");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got.value().has_value());
  EXPECT_EQ(got.value()->value, "v");
  // Ending them, the last on another thread, destroys the pool's state.
  first.reset();
  std::thread other([lease = std::move(second)]() mutable {
    EXPECT_TRUE(lease->get("orphan").ok());
    lease.reset();
  });
  other.join();
}

}  // namespace
}  // namespace client_pool_test
