// SPDX-License-Identifier: MIT
// lease_load_test.cpp: get_or_load under a lease (hotkeys/detail/lease_load.hpp) against real
// memcached: one loader run for many callers that miss at once, each a client of its own, in
// threads and in processes; a caller that waits out its deadline without loading; a lease whose
// holder vanished lapses and the next caller loads; a loader that throws or answers nothing gives
// its lease back; a write or a delete during the load wins over the loaded value; a plain get and
// a multi-get read a load under way as a miss; delete_stale's value answered while one caller
// reloads it; the lease on the failover server that answers for a stopped owner; LoadOptions
// refused.

#include "memshard/hotkeys/detail/lease_load.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"
#include "support/server_set.hpp"

namespace lease_load_test {
namespace {

using memshard::ClientOptions;
using memshard::Errc;
using memshard::Expiry;
using memshard::LoadOptions;
using memshard::detail::MetaConnection;
using memshard::detail::MetaDeadline;
using memshard::detail::MetaGetFlags;
using memshard::detail::MetaReplyKind;
using memshard::testing::MemcachedServer;
using memshard::testing::ServerSet;
using Client = memshard::ShardedClient<memshard::KetamaLocator<>>;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::size_t kServers = 2;

auto in(milliseconds timeout) -> MetaDeadline { return Clock::now() + timeout; }

class LeaseLoadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(kServers); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  static auto leased(milliseconds call_timeout = milliseconds{3'000}) -> ClientOptions {
    ClientOptions options;
    options.call_timeout = call_timeout;
    options.load_options.lease_ttl = seconds{5};
    return options;
  }
  static auto client(const ClientOptions& options) -> Client {
    return Client(servers_->list(), options);
  }
  // A raw meta connection to the server that owns `key` for every client of this suite.
  static auto owner_link(const std::string& key) -> MetaConnection {
    const Client probe = client(leased());
    MetaConnection link;
    EXPECT_TRUE(link.connect("127.0.0.1", probe.server_for(key).port, in(milliseconds{5'000})));
    return link;
  }
  // Takes `key`'s lease as a caller that then vanishes would (never filled, lapses in `ttl`).
  static auto take_lease(MetaConnection& link, const std::string& key, std::int32_t ttl) -> bool {
    const auto got = link.get(key, MetaGetFlags{.value = true, .cas = true, .vivify_ttl = ttl},
                              in(milliseconds{5'000}));
    return got.ok() && got.reply.won;
  }

  static inline std::unique_ptr<ServerSet> servers_;
};

TEST_F(LeaseLoadTest, OneCallerOfManyThatMissAtOnceRunsTheLoader) {
  constexpr int kCallers = 16;
  std::atomic<int> loads{0};
  std::atomic<int> ready{0};
  std::atomic<int> answered{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      Client own = client(leased());  // a client of its own, as another process has
      ready.fetch_add(1);
      while (ready.load() < kCallers) {
        std::this_thread::yield();
      }
      auto got = own.get_or_load("hot", [&] {
        loads.fetch_add(1);
        std::this_thread::sleep_for(milliseconds{200});  // the database's query
        return std::string("row");
      });
      if (got.ok() && *got == "row") {
        answered.fetch_add(1);
      } else {
        ADD_FAILURE() << got.status();
      }
    });
  }
  for (auto& caller : callers) {
    caller.join();
  }
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(answered.load(), kCallers);
  auto cached = client(ClientOptions{}).get("hot");
  ASSERT_TRUE(cached.ok()) << cached.status();
  ASSERT_TRUE(cached->has_value());
  EXPECT_EQ((*cached)->value, "row");
}

// Reads `count` bytes from `fd` before `deadline`; whether it did.
auto read_bytes(int fd, std::size_t count, Clock::time_point deadline) -> bool {
  std::size_t got = 0;
  while (got < count) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    pollfd ready{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&ready, 1, static_cast<int>(left)) <= 0) {
      return false;
    }
    char byte = 0;
    const ssize_t n = ::read(fd, &byte, 1);
    if (n <= 0) {
      return false;
    }
    ++got;
  }
  return true;
}

TEST_F(LeaseLoadTest, OneProcessOfManyThatMissAtOnceRunsTheLoader) {
  constexpr int kProcesses = 6;
  int ready[2];  // each child: a byte once its client is built
  int go[2];     // the parent: a byte per child once all are ready
  int loads[2];  // each loader run: a byte
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(loads), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // nothing of the parent's is destroyed here: _exit
      int code = 1;
      try {
        Client own = client(leased());
        char byte = 'r';
        if (::write(ready[1], &byte, 1) == 1 && ::read(go[0], &byte, 1) == 1) {
          auto got = own.get_or_load("hot:processes", [&] {
            const char loaded = 'l';
            (void)!::write(loads[1], &loaded, 1);
            std::this_thread::sleep_for(milliseconds{200});  // the database's query
            return std::string("row");
          });
          code = got.ok() && *got == "row" ? 0 : 2;
        }
      } catch (...) {
        code = 3;
      }
      ::_exit(code);
    }
    children.push_back(child);
  }
  ::close(ready[1]);
  ::close(loads[1]);
  const auto deadline = Clock::now() + seconds{20};
  const bool all_ready = read_bytes(ready[0], kProcesses, deadline);
  const std::string bytes(kProcesses, 'g');
  EXPECT_EQ(::write(go[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  int failed = 0;
  for (const pid_t child : children) {  // bounded: a child still running at the deadline is killed
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(child, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
      pollfd none{-1, 0, 0};
      (void)::poll(&none, 0, 10);
    }
    if (done == 0) {
      ::kill(child, SIGKILL);
      (void)::waitpid(child, &status, 0);
      ++failed;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failed;
    }
  }
  std::size_t runs = 0;
  char byte = 0;
  while (::read(loads[0], &byte, 1) == 1) {  // every writer has exited: ends at EOF
    ++runs;
  }
  for (const int fd : {ready[0], go[0], go[1], loads[0]}) {
    ::close(fd);
  }
  EXPECT_TRUE(all_ready);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(runs, 1U);
}

TEST_F(LeaseLoadTest, ACallerThatWaitsOutItsDeadlineAnswersTimeoutWithoutLoading) {
  MetaConnection holder = owner_link("held");
  ASSERT_TRUE(take_lease(holder, "held", 30));
  Client waiter = client(leased(milliseconds{300}));
  bool loaded = false;
  const auto start = Clock::now();
  auto got = waiter.get_or_load("held", [&] {
    loaded = true;
    return std::string("row");
  });
  const auto took = Clock::now() - start;
  EXPECT_FALSE(got.ok());
  EXPECT_EQ(got.code(), Errc::kTimeout) << got.status();
  EXPECT_FALSE(loaded);
  EXPECT_GE(took, milliseconds{290});
  EXPECT_LT(took, milliseconds{300 + 250});  // its deadline, and a poll's scheduling
  for (const memshard::ServerStats& stats : waiter.stats()) {  // not a server's fault
    EXPECT_EQ(stats.errors, 0U) << stats.server.endpoint();
    EXPECT_FALSE(stats.ejected) << stats.server.endpoint();
  }
}

TEST_F(LeaseLoadTest, ALeaseWhoseHolderVanishedLapsesAndTheNextCallerLoadsOnce) {
  MetaConnection holder = owner_link("orphan");
  ASSERT_TRUE(take_lease(holder, "orphan", 1));
  holder.close();  // the holder is gone; its placeholder lives one second more
  Client waiter = client(leased(milliseconds{5'000}));
  int loads = 0;
  const auto start = Clock::now();
  auto got = waiter.get_or_load("orphan", [&] {
    ++loads;
    return std::string("row");
  });
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "row");
  EXPECT_EQ(loads, 1);
  EXPECT_LT(Clock::now() - start, milliseconds{3'000});  // a one-second lease, memcached's clock
  EXPECT_TRUE(got.status().ok()) << got.status();        // stored
}

TEST_F(LeaseLoadTest, ALoaderThatThrowsGivesItsLeaseBack) {
  Client first = client(leased());
  EXPECT_THROW((void)first.get_or_load(
                   "flaky", []() -> std::string { throw std::runtime_error("db down"); }),
               std::runtime_error);
  MetaConnection link = owner_link("flaky");
  const auto raw = link.get("flaky", MetaGetFlags{.value = true}, in(milliseconds{5'000}));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw.reply.kind, MetaReplyKind::kMiss);  // no placeholder left to wait for
  Client next = client(leased(milliseconds{500}));
  auto got = next.get_or_load("flaky", [] { return std::string("row"); });
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "row");
}

TEST_F(LeaseLoadTest, ALoaderThatAnswersNothingStoresNothingAndGivesItsLeaseBack) {
  Client reader = client(leased());
  auto got = reader.get_or_load("absent", []() -> std::optional<std::string> { return {}; });
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got->has_value());
  MetaConnection link = owner_link("absent");
  const auto raw = link.get("absent", MetaGetFlags{.value = true}, in(milliseconds{5'000}));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw.reply.kind, MetaReplyKind::kMiss);
}

TEST_F(LeaseLoadTest, AWriteOrADeleteWhileTheLoaderRunsWinsOverTheLoadedValue) {
  Client loader_side = client(leased());
  Client writer = client(ClientOptions{});
  auto written = loader_side.get_or_load("row:1", [&] {
    EXPECT_TRUE(writer.set("row:1", "fresh"));  // the row changed while it was read
    return std::string("loaded");
  });
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, "loaded");  // the caller gets what it loaded...
  EXPECT_EQ(written.code(), Errc::kNotStored) << written.status();
  auto cached = writer.get("row:1");  // ...but the cache keeps the write
  ASSERT_TRUE(cached.ok() && cached->has_value());
  EXPECT_EQ((*cached)->value, "fresh");

  auto deleted = loader_side.get_or_load("row:2", [&] {
    (void)writer.remove("row:2");  // deletes the placeholder: an invalidation meanwhile
    return std::string("loaded");
  });
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted.code(), Errc::kNotStored) << deleted.status();
  auto gone = writer.get("row:2");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
}

TEST_F(LeaseLoadTest, APlainGetReadsALoadUnderWayAsAMissAndAnEmptyValueAsAValue) {
  MetaConnection holder = owner_link("loading");
  ASSERT_TRUE(take_lease(holder, "loading", 30));
  Client reader = client(ClientOptions{});
  auto during = reader.get("loading");
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_FALSE(during->has_value());
  ASSERT_TRUE(reader.set("empty", ""));
  auto empty = reader.get("empty");
  ASSERT_TRUE(empty.ok() && empty->has_value());
  EXPECT_EQ((*empty)->value, "");
}

TEST_F(LeaseLoadTest, AMultiGetReadsALoadUnderWayAsAMissAndAnEmptyValueAsAValue) {
  MetaConnection holder = owner_link("loading");
  ASSERT_TRUE(take_lease(holder, "loading", 30));
  Client reader = client(ClientOptions{});
  ASSERT_TRUE(reader.set("empty", ""));
  ASSERT_TRUE(reader.set("full", "v"));
  const std::vector<std::string> keys = {"loading", "empty", "full"};
  const memshard::MultiGetResult got = reader.get_multi(keys);
  ASSERT_EQ(got.items.size(), 3U);
  EXPECT_FALSE(got.items[0].has_value()) << "a load's placeholder";
  ASSERT_TRUE(got.items[1].has_value());
  EXPECT_EQ(got.items[1]->value, "");
  ASSERT_TRUE(got.items[2].has_value());
  EXPECT_EQ(got.items[2]->value, "v");
  std::vector<std::size_t> visited;
  reader.visit_multi(
      keys, [&](std::size_t i, const memshard::ItemView&) { visited.push_back(i); },
      [](std::size_t, const memshard::Status&) {});
  std::sort(visited.begin(), visited.end());
  EXPECT_EQ(visited, (std::vector<std::size_t>{1, 2}));
}

TEST_F(LeaseLoadTest, AStaleValueIsAnsweredWhileOneCallerReloadsIt) {
  ClientOptions options = leased();
  Client writer = client(options);
  ASSERT_TRUE(writer.set("page", "old"));
  ASSERT_TRUE(writer.delete_stale("page"));
  auto plain = writer.get("page");  // a plain get reads the stale value, within stale_ttl
  ASSERT_TRUE(plain.ok() && plain->has_value());
  EXPECT_EQ((*plain)->value, "old");
  constexpr int kCallers = 8;
  std::atomic<int> loads{0};
  std::atomic<int> ready{0};
  std::atomic<int> olds{0};
  std::atomic<int> news{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      Client own = client(options);
      ready.fetch_add(1);
      while (ready.load() < kCallers) {
        std::this_thread::yield();
      }
      auto got = own.get_or_load("page", [&] {
        loads.fetch_add(1);
        std::this_thread::sleep_for(milliseconds{200});
        return std::string("new");
      });
      ASSERT_TRUE(got.ok()) << got.status();
      (*got == "old" ? olds : news).fetch_add(1);
      EXPECT_TRUE(*got == "old" || *got == "new") << *got;
    });
  }
  for (auto& caller : callers) {
    caller.join();
  }
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(olds.load() + news.load(), kCallers);
  EXPECT_GE(news.load(), 1);  // the one that reloaded
  EXPECT_GE(olds.load(), 1);  // the others, during its load, without waiting for it
  auto after = writer.get("page");
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ((*after)->value, "new");
  EXPECT_EQ(writer.delete_stale("never-written").code(), Errc::kNotFound);
}

TEST_F(LeaseLoadTest, WithFailoverTheLeaseIsTakenOnTheServerThatAnswers) {
  MemcachedServer a;
  MemcachedServer b;
  ClientOptions options = leased();
  options.failure_policy = memshard::FailurePolicy::kFailover;
  options.failure_limit = 1;
  options.connect_timeout = milliseconds{200};
  Client reader(memshard::parse_servers(a.spec() + "," + b.spec()), options);
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    const std::string candidate = "k" + std::to_string(i);
    if (reader.server_for(candidate).port == a.port()) {
      key = candidate;
    }
  }
  a.stop();
  (void)reader.get(key);  // ejects the owner
  int loads = 0;
  auto got = reader.get_or_load(key, [&] {
    ++loads;
    return std::string("row");
  });
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(loads, 1);
  EXPECT_TRUE(got.status().ok()) << got.status();
  EXPECT_EQ(got.status().server(), 1U);
  auto again = reader.get_or_load(key, [&] {
    ++loads;
    return std::string("row");
  });
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(loads, 1);  // a hit on the server that answers
}

TEST_F(LeaseLoadTest, InvalidLoadOptionsAreRefusedAndNothingLoads) {
  Client reader = client(ClientOptions{});
  bool loaded = false;
  auto got = reader.get_or_load(
      "k", [&] { return loaded = true, std::string("row"); }, std::nullopt, 0,
      LoadOptions{.lease_ttl = seconds{5}, .first_poll = milliseconds{0}});
  EXPECT_EQ(got.code(), Errc::kInvalidArgument) << got.status();
  EXPECT_FALSE(loaded);
  ClientOptions wrong;
  wrong.load_options.lease_ttl = seconds{-1};
  EXPECT_THROW(client(wrong), memshard::ConfigError);
  wrong.load_options = LoadOptions{.stale_ttl = seconds{0}};
  EXPECT_THROW(client(wrong), memshard::ConfigError);
  wrong.load_options = LoadOptions{.first_poll = milliseconds{10}, .max_poll = milliseconds{5}};
  EXPECT_THROW(client(wrong), memshard::ConfigError);
}

TEST_F(LeaseLoadTest, InAMigrationWindowALoadGoesThePlainWay) {
  MemcachedServer extra;
  Client reader = client(leased());
  auto grown = servers_->list();
  grown.push_back(memshard::parse_servers(extra.spec()).front());
  reader.begin_migration(grown);
  int loads = 0;
  auto got = reader.get_or_load("row", [&] {
    ++loads;
    return std::string("v");
  });
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got.status().ok()) << got.status();  // stored by add, the window's rules
  auto again = reader.get("row");
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->value, "v");
  EXPECT_EQ(loads, 1);
}

}  // namespace
}  // namespace lease_load_test
