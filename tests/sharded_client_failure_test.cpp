// SPDX-License-Identifier: MIT
// ShardedClient when servers die, hang and come back, against real memcached
// processes: bounded blocking, ejection after the failure limit, probing after
// the retry interval, fail-fast and failover policies, multi-get with a server
// down, and clones hammering one locator from several threads.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/fault_proxy.hpp"
#include "support/memcached_server.hpp"
#include "support/multi_get_modes.hpp"
#include "support/scripted_server.hpp"
#include "support/stopped_process.hpp"

namespace sharded_client_failure_test {
namespace {

using memshard::ClientOptions;
using memshard::Errc;
using memshard::FailurePolicy;
using memshard::MultiGetMode;
using memshard::Server;
using memshard::testing::all_threads_stopped;
using memshard::testing::FaultProxy;
using memshard::testing::MemcachedServer;
using memshard::testing::StoppedProcess;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kConnectTimeout{300};
constexpr milliseconds kIoTimeout{300};
constexpr milliseconds kRetryInterval{400};
// What a call may take beyond its timeouts: scheduling on a loaded (or
// sanitized) test machine.
constexpr milliseconds kSlack{700};

auto options(FailurePolicy policy) -> ClientOptions {
  ClientOptions out;
  out.connect_timeout = kConnectTimeout;
  out.io_timeout = kIoTimeout;
  out.retry_interval = kRetryInterval;
  out.failure_limit = 2;
  out.failure_policy = policy;
  return out;
}

using memshard::testing::kMultiGetModes;
using memshard::testing::mode_name;
using memshard::testing::with_mode;

// Four servers of its own for each test: the tests kill and stop them.
class FailureTest : public ::testing::Test {
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

  auto holds(std::size_t server, std::string_view key) const -> bool {
    return servers_[server].command("get " + std::string(key)).starts_with("VALUE ");
  }

  // `count` keys whose server is `server`.
  template <class Client>
  static auto keys_on(const Client& client, std::size_t server, int count)
      -> std::vector<std::string> {
    std::vector<std::string> keys;
    for (int i = 0; static_cast<int>(keys.size()) < count; ++i) {
      std::string key = "key:" + std::to_string(i);
      if (client.server_index_for(key) == server) {
        keys.push_back(std::move(key));
      }
    }
    return keys;
  }

  // `count` keys of each server in turn: server 0's first, then server 1's...
  template <class Client>
  static auto keys_on_each(const Client& client, int count) -> std::vector<std::string> {
    std::vector<std::string> keys;
    for (std::size_t s = 0; s < client.servers().size(); ++s) {
      for (auto& key : keys_on(client, s, count)) {
        keys.push_back(std::move(key));
      }
    }
    return keys;
  }

  std::vector<MemcachedServer> servers_;
};

template <class F>
auto timed(F&& call) -> milliseconds {
  const auto start = Clock::now();
  call();
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

// Polls `condition` until it holds or `limit` passes.
template <class F>
auto eventually(F&& condition, milliseconds limit) -> bool {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (condition()) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return condition();
}

template <class L>
class FailurePolicyTest : public FailureTest {};

using Locators = ::testing::Types<memshard::KetamaLocator<memshard::Md5>,
                                  memshard::ModuloLocator<memshard::Crc32>>;
TYPED_TEST_SUITE(FailurePolicyTest, Locators);

TYPED_TEST(FailurePolicyTest, FailFastEjectsADeadServerAndMovesNothing) {
  memshard::ShardedClient<TypeParam> client(this->list(), options(FailurePolicy::kFailFast));
  std::vector<std::string> all;
  for (std::size_t s = 0; s < 4; ++s) {
    for (const auto& key : this->keys_on(client, s, 10)) {
      ASSERT_TRUE(client.set(key, "v:" + key).ok());
      all.push_back(key);
    }
  }
  const auto dead_keys = this->keys_on(client, 1, 10);
  const std::uint64_t operations_before = client.stats()[1].operations;
  this->servers_[1].stop();

  // Failures up to the limit reach the wire and fail; then the server is
  // ejected and its keys fail at once. No call blocks past its timeouts.
  // The first failure says which server and why, in plain words.
  const auto first = client.set(dead_keys[0], "x");
  EXPECT_EQ(first.code(), Errc::kConnectionFailure);
  EXPECT_EQ(first.server(), 1U);
  // (the broken open connection; a new one would add "(Connection refused)")
  EXPECT_TRUE(
      first.detail().starts_with("set on " + this->servers_[1].spec() + ": CONNECTION FAILURE"))
      << first.detail();
  EXPECT_EQ(first.detail().find(".cc:"), std::string::npos) << first.detail();
  EXPECT_EQ(client.stats()[1].consecutive_failures, 1U);
  EXPECT_FALSE(client.stats()[1].ejected);
  std::vector<Errc> codes;
  for (const auto& key : dead_keys) {
    const auto elapsed = timed([&] { codes.push_back(client.get(key).code()); });
    EXPECT_LE(elapsed, kConnectTimeout + kIoTimeout + kSlack) << key;
  }
  ASSERT_EQ(codes.size(), 10U);
  EXPECT_EQ(codes[0], Errc::kConnectionFailure);  // the second failure: the limit
  for (std::size_t i = 1; i < codes.size(); ++i) {
    EXPECT_EQ(codes[i], Errc::kServerEjected) << i;
  }
  EXPECT_EQ(client.set(dead_keys[0], "x").code(), Errc::kServerEjected);
  const auto stats = client.stats();
  EXPECT_TRUE(stats[1].ejected);
  EXPECT_EQ(stats[1].ejections, 1U);
  EXPECT_EQ(stats[1].errors, 2U);
  EXPECT_EQ(stats[1].operations - operations_before, 2U);  // ejected calls send nothing
  EXPECT_EQ(stats[1].refused, 10U);                        // 9 gets and the set

  // Keys of the other servers are where they were, with their values.
  for (const auto& key : all) {
    if (client.server_index_for(key) == 1) {
      continue;
    }
    const auto got = client.get(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status();
    ASSERT_TRUE(got.value().has_value()) << key;
    EXPECT_EQ(got.value()->value, "v:" + key);
  }
}

TYPED_TEST(FailurePolicyTest, AProbeAfterTheRetryIntervalBringsTheServerBack) {
  memshard::ShardedClient<TypeParam> client(this->list(), options(FailurePolicy::kFailFast));
  const auto keys = this->keys_on(client, 2, 3);
  this->servers_[2].stop();
  while (client.get(keys[0]).code() != Errc::kServerEjected) {
  }
  // Still dead after the interval: one probe fails and ejects it again.
  ASSERT_TRUE(eventually([&] { return client.get(keys[0]).code() == Errc::kConnectionFailure; },
                         kRetryInterval * 10));
  EXPECT_EQ(client.get(keys[0]).code(), Errc::kServerEjected);
  EXPECT_EQ(client.stats()[2].ejections, 1U);  // one ejection that lasted

  this->servers_[2].restart();
  ASSERT_TRUE(eventually([&] { return client.set(keys[1], "back").ok(); }, kRetryInterval * 10));
  EXPECT_TRUE(this->holds(2, keys[1]));
  EXPECT_FALSE(client.stats()[2].ejected);
  EXPECT_EQ(client.get(keys[1]).value()->value, "back");
}

TYPED_TEST(FailurePolicyTest, FailoverSendsOnlyTheDeadServersKeysElsewhereAndBack) {
  memshard::ShardedClient<TypeParam> client(this->list(), options(FailurePolicy::kFailover));
  const auto dead_keys = this->keys_on(client, 3, 20);
  std::vector<std::string> healthy_keys;
  for (std::size_t s = 0; s < 3; ++s) {
    for (const auto& key : this->keys_on(client, s, 10)) {
      ASSERT_TRUE(client.set(key, "stays").ok());
      healthy_keys.push_back(key);
    }
  }
  this->servers_[3].stop();
  // The first calls find the server dead; after the limit, its keys fail over.
  EXPECT_EQ(client.set(dead_keys[0], "x").code(), Errc::kConnectionFailure);
  EXPECT_EQ(client.set(dead_keys[0], "x").code(), Errc::kConnectionFailure);
  const std::vector<std::uint8_t> avoid = {0, 0, 0, 1};
  const std::uint64_t redirected_before = client.stats()[3].redirected;
  for (const auto& key : dead_keys) {
    ASSERT_TRUE(client.set(key, "moved").ok()) << key;
    const std::size_t next = client.locator()->locate_avoiding(key, avoid);
    ASSERT_NE(next, 3U);
    EXPECT_TRUE(this->holds(next, key)) << key << " not on server " << next;
    EXPECT_EQ(client.get(key).value()->value, "moved");
  }
  EXPECT_EQ(client.stats()[3].redirected - redirected_before, 2 * dead_keys.size());
  EXPECT_EQ(client.stats()[3].refused, 0U);
  // Ejection never moves a key of a healthy server.
  for (const auto& key : healthy_keys) {
    const std::size_t owner = client.server_index_for(key);
    EXPECT_TRUE(this->holds(owner, key)) << key;
    EXPECT_EQ(client.get(key).value()->value, "stays");
  }
  // When it returns, its keys come back to it.
  this->servers_[3].restart();
  ASSERT_TRUE(eventually(
      [&] { return client.set(dead_keys[0], "home").ok() && this->holds(3, dead_keys[0]); },
      kRetryInterval * 10));
  for (const auto& key : dead_keys) {
    ASSERT_TRUE(client.set(key, "home").ok());
    EXPECT_TRUE(this->holds(3, key)) << key;
  }
}

TYPED_TEST(FailurePolicyTest, MultiGetWithAServerDownReturnsTheRestAndPerKeyErrors) {
  std::vector<std::string> keys;
  {
    memshard::ShardedClient<TypeParam> writer(this->list(), options(FailurePolicy::kFailFast));
    for (int i = 0; i < 200; ++i) {
      keys.push_back("m:" + std::to_string(i));
      ASSERT_TRUE(writer.set(keys.back(), "v" + std::to_string(i)).ok());
    }
  }
  std::vector<std::string_view> views(keys.begin(), keys.end());
  this->servers_[0].stop();
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    // A new client for each mode: its own health, so it fails twice first.
    memshard::ShardedClient<TypeParam> client(this->list(),
                                              with_mode(options(FailurePolicy::kFailFast), mode));
    for (int round = 0; round < 3; ++round) {  // failing, failing, ejected
      memshard::MultiGetResult result;
      const auto elapsed = timed([&] { result = client.get_multi(views); });
      EXPECT_LE(elapsed, kConnectTimeout + kIoTimeout + kSlack);
      std::size_t failed = 0;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (client.server_index_for(keys[i]) == 0) {
          EXPECT_FALSE(result.statuses[i].ok()) << keys[i];
          EXPECT_EQ(result.statuses[i].code(),
                    round < 2 ? Errc::kConnectionFailure : Errc::kServerEjected)
              << result.statuses[i];
          EXPECT_EQ(result.statuses[i].server(), 0U);
          EXPECT_FALSE(result.items[i].has_value());
          ++failed;
        } else {
          ASSERT_TRUE(result.statuses[i].ok()) << keys[i] << ": " << result.statuses[i];
          ASSERT_TRUE(result.items[i].has_value()) << keys[i];
          EXPECT_EQ(result.items[i]->value, "v" + std::to_string(i));
        }
      }
      EXPECT_GT(failed, 0U);
      EXPECT_EQ(result.failures(), failed);
      EXPECT_EQ(result.hits(), keys.size() - failed);
    }
    EXPECT_EQ(client.stats()[0].errors, 2U);
    EXPECT_TRUE(client.stats()[0].ejected);
  }
}

TEST_F(FailureTest, AHungServerTimesOutWithinTheBound) {
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
      list(), options(FailurePolicy::kFailFast));
  const auto keys = keys_on(client, 0, 4);
  ASSERT_TRUE(client.set(keys[0], "warm").ok());  // an open connection
  const StoppedProcess stopped(servers_[0].pid());
  ASSERT_TRUE(all_threads_stopped(servers_[0].pid()));
  for (int i = 0; i < 2; ++i) {
    Errc code = Errc::kOk;
    const auto elapsed =
        timed([&] { code = client.get(keys[static_cast<std::size_t>(i)]).code(); });
    EXPECT_EQ(code, Errc::kTimeout) << i;
    EXPECT_GE(elapsed, kIoTimeout - milliseconds(50)) << "it did not wait for the server";
    EXPECT_LE(elapsed, kConnectTimeout + kIoTimeout + kSlack);
  }
  const auto elapsed = timed([&] { EXPECT_EQ(client.get(keys[2]).code(), Errc::kServerEjected); });
  EXPECT_LE(elapsed, milliseconds(50));
  // The other servers answer as usual meanwhile.
  const auto other = keys_on(client, 1, 1)[0];
  EXPECT_TRUE(client.set(other, "fine").ok());
}

TEST_F(FailureTest, SeveralHungServersCostOneTimeoutInAMultiGet) {
  // Three hung servers must cost one I/O timeout, not three (1.5 s here).
  ClientOptions longer = options(FailurePolicy::kFailFast);
  longer.io_timeout = milliseconds(500);
  std::vector<std::string> keys;
  {
    memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> writer(list(), longer);
    for (int i = 0; i < 200; ++i) {
      keys.push_back("hung:" + std::to_string(i));
      ASSERT_TRUE(writer.set(keys.back(), "v").ok());
    }
  }
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(list(),
                                                                           with_mode(longer, mode));
    ASSERT_EQ(client.get_multi(views).hits(), keys.size());  // connections open
    const StoppedProcess first(servers_[0].pid());
    const StoppedProcess second(servers_[1].pid());
    const StoppedProcess third(servers_[2].pid());
    for (std::size_t s = 0; s < 3; ++s) {
      ASSERT_TRUE(all_threads_stopped(servers_[s].pid()));
    }
    memshard::MultiGetResult result;
    const auto elapsed = timed([&] { result = client.get_multi(views); });
    EXPECT_GE(elapsed, longer.io_timeout - milliseconds(50));
    EXPECT_LE(elapsed, longer.connect_timeout + longer.io_timeout + milliseconds(400));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (client.server_index_for(keys[i]) == 3) {
        EXPECT_TRUE(result.items[i].has_value()) << keys[i] << ": " << result.statuses[i];
      } else {
        EXPECT_EQ(result.statuses[i].code(), Errc::kTimeout)
            << keys[i] << ": " << result.statuses[i];
      }
    }
  }
}

// A port that never answers. kNeverAccepts: a listening socket whose accept
// queue is full, so the kernel drops every new SYN and a connection attempt
// hangs until the client's connect timeout (as with a host that went away
// without a word). kNeverReplies: connections complete (the kernel queues
// them) but nothing is ever read or written (a host that froze).
class DeadPort {
 public:
  enum class Kind : std::uint8_t { kNeverAccepts, kNeverReplies };

  explicit DeadPort(Kind kind = Kind::kNeverAccepts)
      : listener_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    const int backlog = kind == Kind::kNeverAccepts ? 0 : 64;
    if (!listener_.valid() ||
        ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener_.get(), backlog) != 0 ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::system_error(errno, std::generic_category(), "dead port listener");
    }
    port_ = ntohs(address.sin_port);
    if (kind == Kind::kNeverAccepts) {
      // One connection fills a queue of length 0; on loopback it completes at once.
      filler_ = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (!filler_.valid() ||
          ::connect(filler_.get(), reinterpret_cast<sockaddr*>(&address), length) != 0) {
        throw std::system_error(errno, std::generic_category(), "dead port filler");
      }
    }
  }
  [[nodiscard]] auto server() const -> Server {
    return memshard::parse_server("127.0.0.1:" + std::to_string(port_));
  }

 private:
  using Fd = memshard::testing::detail::FileDescriptor;
  Fd listener_;  // closed with the object, also when the constructor throws
  Fd filler_;
  std::uint16_t port_ = 0;
};

TEST_F(FailureTest, ServersThatNeverAcceptCostOneDeadlineInAMultiGet) {
  // Four servers whose connections hang: the whole call ends by one deadline
  // (connect + I/O timeout, 0.5 s), not after a connect timeout each (1.6 s).
  // The live server's keys come first, so it is connected and has answered
  // before the hanging connections use the deadline up.
  const DeadPort holes[4];
  std::vector<Server> list = {memshard::parse_server(servers_[0].spec()), holes[0].server(),
                              holes[1].server(), holes[2].server(), holes[3].server()};
  ClientOptions base = options(FailurePolicy::kFailFast);
  base.connect_timeout = milliseconds(400);
  base.io_timeout = milliseconds(100);
  constexpr int kEach = 5;
  constexpr auto kLiveKeys = static_cast<std::size_t>(kEach);
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(list,
                                                                           with_mode(base, mode));
    const std::vector<std::string> keys = keys_on_each(client, kEach);
    for (std::size_t i = 0; i < kLiveKeys; ++i) {
      ASSERT_TRUE(client.set(keys[i], "here").ok());
    }
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    memshard::MultiGetResult result;
    const auto elapsed = timed([&] { result = client.get_multi(views); });
    EXPECT_GE(elapsed, base.connect_timeout - milliseconds(50)) << "it did not wait to connect";
    EXPECT_LE(elapsed, base.connect_timeout + base.io_timeout + kSlack);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (i < kLiveKeys) {
        ASSERT_TRUE(result.items[i].has_value()) << keys[i] << ": " << result.statuses[i];
        EXPECT_EQ(result.items[i]->value, "here");
      } else {
        EXPECT_TRUE(is_server_failure(result.statuses[i].code()))
            << keys[i] << ": " << result.statuses[i];
        EXPECT_EQ(result.statuses[i].server(), i / kLiveKeys);
      }
    }
    // A single get waits one connect timeout.
    const auto single =
        timed([&] { EXPECT_TRUE(is_server_failure(client.get(keys[kLiveKeys]).code())); });
    EXPECT_LE(single, base.connect_timeout + kSlack);
  }
}

TEST_F(FailureTest, AMultiGetReportsTheFirstRealCauseOfAServersFailure) {
  // A server with several keys in one multi-get: its first key's connect
  // fails (refused, or timed out); the later keys must not report
  // libmemcached's own "disabled until timed retry" instead.
  const DeadPort hole;
  const std::uint16_t refused_port = memshard::testing::detail::free_port();
  const std::vector<Server> list = {
      memshard::parse_server(servers_[0].spec()),
      memshard::parse_server("127.0.0.1:" + std::to_string(refused_port)), hole.server()};
  ClientOptions base = options(FailurePolicy::kFailFast);
  base.connect_timeout = milliseconds(200);
  base.io_timeout = milliseconds(100);
  // (MultiGetMode::kPerServer still reports the retry clock: a per-server
  // handle gives no hook between its keys.)
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
      list, with_mode(base, MultiGetMode::kPolled));
  const std::vector<std::string> keys = keys_on_each(client, 3);
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  const memshard::MultiGetResult result = client.get_multi(views);
  for (std::size_t i = 3; i < keys.size(); ++i) {
    const memshard::Status& status = result.statuses[i];
    EXPECT_EQ(status.message().find("TIMED RETRY"), std::string::npos) << status;
    if (i < 6) {
      EXPECT_EQ(status.rc(), MEMCACHED_CONNECTION_FAILURE) << status;
    } else {
      EXPECT_EQ(status.code(), Errc::kTimeout) << status;
    }
  }
}

TEST_F(FailureTest, AMultiGetEndsByItsDeadlineWhateverHangs) {
  // Connections that hang use up part of the deadline, a server that never
  // replies the rest: the call still ends by connect + I/O timeout (1.5 s),
  // not by the connect timeouts plus a whole I/O timeout (2 s).
  const DeadPort holes[2];
  const DeadPort frozen(DeadPort::Kind::kNeverReplies);
  const std::vector<Server> list = {holes[0].server(), holes[1].server(), frozen.server(),
                                    memshard::parse_server(servers_[0].spec())};
  ClientOptions base = options(FailurePolicy::kFailFast);
  base.connect_timeout = milliseconds(500);
  base.io_timeout = milliseconds(1000);
  constexpr milliseconds kTight{300};  // sleeping, not computing: little slack is needed
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(mode_name(mode));
    memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(list,
                                                                           with_mode(base, mode));
    const std::vector<std::string> keys = keys_on_each(client, 1);
    ASSERT_TRUE(client.set(keys[3], "here").ok());
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    memshard::MultiGetResult result;
    const auto elapsed = timed([&] { result = client.get_multi(views); });
    // While two servers owe replies, a polled read waits half of what is left
    // (inside one fetch libmemcached may wait once per server): it gives up on
    // the frozen server between half the remaining time and the deadline.
    EXPECT_GE(elapsed, base.connect_timeout + base.io_timeout / 2 - milliseconds(50));
    EXPECT_LE(elapsed, base.connect_timeout + base.io_timeout + kTight);
    for (std::size_t s = 0; s < 3; ++s) {
      EXPECT_TRUE(is_server_failure(result.statuses[s].code())) << s << ": " << result.statuses[s];
    }
    ASSERT_TRUE(result.items[3].has_value()) << result.statuses[3];
  }
}

TEST_F(FailureTest, AServerThatRefusesWithAnErrorLineFailsItsKeys) {
  // memcached at its connection limit answers a new connection with "ERROR
  // Too many open connections" and closes it: a failure, not misses.
  MemcachedServer limited = MemcachedServer::with_args({"-c", "30"});
  const std::vector<Server> list = {memshard::parse_server(limited.spec()),
                                    memshard::parse_server(servers_[0].spec())};
  std::vector<std::string> keys;
  {
    memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> writer(
        list, options(FailurePolicy::kFailFast));
    keys = keys_on_each(writer, 5);
    for (const auto& key : keys) {
      ASSERT_TRUE(writer.set(key, "v").ok());
    }
  }
  // Fill the limited server's connections (it allows fewer than 30): each
  // held connection asks for the version; the first one refused means every
  // slot is held by the others, which stay open.
  std::vector<memshard::testing::detail::FileDescriptor> held;
  bool full = false;
  for (int i = 0; i < 40 && !full; ++i) {
    int error = 0;
    auto connection = memshard::testing::detail::connect_loopback(
        limited.port(), memshard::testing::detail::Clock::now() + milliseconds(1000), error);
    ASSERT_TRUE(connection.valid());
    const std::string_view request = "version\r\n";
    ASSERT_EQ(::send(connection.get(), request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    pollfd wait{connection.get(), POLLIN, 0};
    ASSERT_EQ(::poll(&wait, 1, 2000), 1) << "no reply to version";
    std::array<char, 128> reply{};
    const ssize_t got = ::recv(connection.get(), reply.data(), reply.size(), 0);
    full = got <= 0 ||
           !std::string_view(reply.data(), static_cast<std::size_t>(got)).starts_with("VERSION");
    if (!full) {
      held.push_back(std::move(connection));
    }
  }
  ASSERT_TRUE(full) << "the connection limit was never reached";
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  // The limited server first and last in the list: libmemcached reads the
  // servers in list order, and the healthy one must not take the blame.
  const std::vector<Server> reversed = {list[1], list[0]};
  for (const bool limited_first : {true, false}) {
    for (const MultiGetMode mode : kMultiGetModes) {
      SCOPED_TRACE(std::string(mode_name(mode)) + (limited_first ? ", limited first" : ""));
      memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
          limited_first ? list : reversed, with_mode(options(FailurePolicy::kFailFast), mode));
      const std::size_t limited_index = limited_first ? 0 : 1;
      for (int round = 0; round < 3; ++round) {  // fails, fails, ejected
        const auto result = client.get_multi(views);
        for (std::size_t i = 0; i < keys.size(); ++i) {
          if (i < 5) {
            EXPECT_FALSE(result.statuses[i].ok()) << keys[i] << " was read as a miss";
            EXPECT_EQ(result.statuses[i].server(), limited_index);
          } else {
            ASSERT_TRUE(result.items[i].has_value()) << keys[i] << ": " << result.statuses[i];
          }
        }
      }
      const auto stats = client.stats();
      EXPECT_EQ(stats[limited_index].misses, 0U);
      EXPECT_FALSE(stats[1 - limited_index].ejected) << "the healthy server took the blame";
      EXPECT_EQ(stats[1 - limited_index].errors, 0U);
      EXPECT_EQ(stats[1 - limited_index].hits, 15U);
    }
  }
  // The refusal read in the same fetch as the healthy server's end of reply:
  // the refusing server is stopped until the healthy one's last value is in.
  for (const MultiGetMode mode : kMultiGetModes) {
    SCOPED_TRACE(std::string(mode_name(mode)) + ", refusal after the healthy reply");
    memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
        reversed, with_mode(options(FailurePolicy::kFailFast), mode));
    auto stopped = std::make_unique<StoppedProcess>(limited.pid());
    ASSERT_TRUE(all_threads_stopped(limited.pid()));
    std::size_t hits = 0;
    std::vector<Errc> codes(keys.size(), Errc::kOk);
    client.visit_multi(
        views,
        [&](std::size_t, const memshard::ItemView&) {
          if (++hits == 5) {
            stopped.reset();  // the healthy server's five values are in
          }
        },
        [&](std::size_t index, const memshard::Status& status) { codes[index] = status.code(); });
    stopped.reset();
    EXPECT_EQ(hits, 5U);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(codes[i] == Errc::kOk, i >= 5) << keys[i] << ": " << static_cast<int>(codes[i]);
    }
    EXPECT_EQ(client.stats()[0].errors, 0U) << "the healthy server took the blame";
  }
  // A single get, on a connection of its own, too.
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> single(
      list, options(FailurePolicy::kFailFast));
  const auto got = single.get(keys[0]);
  EXPECT_FALSE(got.ok()) << keys[0] << " was read as a miss";
}

TEST_F(FailureTest, AMultiGetAfterARestartUsesFreshConnections) {
  // A restart breaks every open connection; the first request that meets a
  // broken one fails. The multi-get after it must not fail again on its own
  // old connection, which would eject a healthy server (failure limit 2).
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
      list(), options(FailurePolicy::kFailFast));
  const auto keys = keys_on(client, 1, 5);
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  ASSERT_TRUE(client.set(keys[0], "v").ok());
  ASSERT_EQ(client.get_multi(views).failures(), 0U);  // every connection open
  servers_[1].restart();
  const auto failed = client.get(keys[0]);
  ASSERT_TRUE(is_server_failure(failed.code())) << failed.status();
  for (const auto& key : keys) {
    ASSERT_TRUE(client.set(key, "back").ok());
  }
  const auto result = client.get_multi(views);
  EXPECT_EQ(result.hits(), keys.size()) << result.statuses[0];
  EXPECT_FALSE(client.stats()[1].ejected);
}

TEST_F(FailureTest, AMultiGetOverMoreThanAHundredServers) {
  // libmemcached polls at most 100 sockets at once: a multi-get that reaches
  // more servers is read server by server; one that reaches fewer is polled.
  // 100 servers that never reply come first and the live one last, where a
  // poll of the first 100 sockets would never look.
  std::vector<std::unique_ptr<DeadPort>> frozen;
  std::vector<Server> list;
  while (list.size() < 100) {
    frozen.push_back(std::make_unique<DeadPort>(DeadPort::Kind::kNeverReplies));
    list.push_back(frozen.back()->server());
  }
  list.push_back(memshard::parse_server(servers_[0].spec()));
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
      list, options(FailurePolicy::kFailFast));
  const std::vector<std::string> keys = keys_on_each(client, 1);
  ASSERT_TRUE(client.set(keys.back(), "live").ok());
  // All 101 servers, then the live one and 59 frozen ones.
  for (const std::size_t first : {std::size_t{0}, std::size_t{41}}) {
    SCOPED_TRACE(first);
    const std::vector<std::string_view> views(keys.begin() + static_cast<std::ptrdiff_t>(first),
                                              keys.end());
    memshard::MultiGetResult result;
    const auto elapsed = timed([&] { result = client.get_multi(views); });
    EXPECT_LE(elapsed, kConnectTimeout + kIoTimeout + kSlack);
    for (std::size_t i = 0; i < views.size(); ++i) {
      const std::size_t server = first + i;
      if (server >= frozen.size()) {
        ASSERT_TRUE(result.items[i].has_value()) << server << ": " << result.statuses[i];
        EXPECT_EQ(result.items[i]->value, "live");
      } else {
        EXPECT_EQ(result.statuses[i].code(), Errc::kTimeout)
            << server << ": " << result.statuses[i];
        EXPECT_EQ(result.statuses[i].server(), server);
      }
    }
  }
}

// Waits until `interval` has passed since `since`, by bounded polling.
void let_pass(Clock::time_point since, milliseconds interval) {
  ASSERT_TRUE(eventually([&] { return Clock::now() >= since + interval; }, interval * 2));
}

TEST_F(FailureTest, AThrowingCallbackDoesNotStrandTheProbe) {
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
      list(), options(FailurePolicy::kFailFast));
  const auto keys = keys_on(client, 1, 1);
  ASSERT_TRUE(client.set(keys[0], "v").ok());
  servers_[1].stop();
  while (client.get(keys[0]).code() != Errc::kServerEjected) {
  }
  const auto ejected_at = Clock::now();
  servers_[1].restart();
  ASSERT_TRUE(client.set(keys_on(client, 0, 1)[0], "unrelated").ok());
  let_pass(ejected_at, kRetryInterval);
  ASSERT_TRUE(this->servers_[1].command("set " + keys[0] + " 0 0 1\r\nx").starts_with("STORED"));
  // The multi-get probes server 1 and its callback throws mid-reply.
  const std::vector<std::string_view> views = {keys[0]};
  EXPECT_THROW(
      client.visit_multi(
          views,
          [](std::size_t, const memshard::ItemView&) { throw std::runtime_error("caller failed"); },
          [](std::size_t, const memshard::Status&) {}),
      std::runtime_error);
  // The server is probed again and comes back.
  EXPECT_TRUE(eventually([&] { return client.get(keys[0]).ok(); }, kRetryInterval * 10));
  EXPECT_FALSE(client.stats()[1].ejected);
}

TEST_F(FailureTest, AFailureCallbackThatThrowsWhileRoutingGivesTheProbeBack) {
  // Server 1 is due a probe and server 2 is freshly ejected. A multi-get
  // routes server 1's key first (winning its probe lease), then reports
  // server 2's key as refused, and that callback throws: the lease must not
  // stay with the abandoned call.
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
      list(), options(FailurePolicy::kFailFast));
  const auto on_1 = keys_on(client, 1, 1);
  const auto on_2 = keys_on(client, 2, 1);
  ASSERT_TRUE(client.set(on_1[0], "v").ok());
  {
    const StoppedProcess stopped(servers_[1].pid());
    while (client.get(on_1[0]).code() != Errc::kServerEjected) {
    }
  }
  let_pass(Clock::now(), kRetryInterval);
  servers_[2].stop();
  while (client.get(on_2[0]).code() != Errc::kServerEjected) {
  }
  const std::vector<std::string_view> views = {on_1[0], on_2[0]};
  EXPECT_THROW(
      client.visit_multi(
          views, [](std::size_t, const memshard::ItemView&) {},
          [](std::size_t, const memshard::Status&) { throw std::runtime_error("caller failed"); }),
      std::runtime_error);
  // At once, not after the lease runs out: the next request probes and wins.
  const auto hit = client.get(on_1[0]);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_FALSE(client.stats()[1].ejected);
}

// A scripted server for the polled engine's re-read path: to a request for
// three keys (the whole multi-get) it answers a value for the first, then an
// ERROR line, which ends libmemcached's fetch without a code recorded on the
// connection, so the keys left are read again on the server's own
// connection; any smaller request gets a value ("again") for every key.
auto value_then_error(std::string_view line, std::size_t) -> std::string {
  if (line.starts_with("version")) {
    return "VERSION 1.6.18\r\n";
  }
  if (!line.starts_with("get")) {
    return "ERROR\r\n";
  }
  std::vector<std::string> keys;
  for (std::size_t at = line.find(' '); at != std::string_view::npos;) {
    const std::size_t end = line.find(' ', at + 1);
    keys.emplace_back(line.substr(at + 1, end == std::string_view::npos ? end : end - at - 1));
    at = end;
  }
  if (keys.size() == 3) {
    return "VALUE " + keys[0] + " 0 5\r\nfirst\r\nERROR\r\n";
  }
  std::string reply;
  for (const std::string& key : keys) {
    reply += "VALUE " + key + " 0 5\r\nagain\r\n";
  }
  return reply + "END\r\n";
}

TEST_F(FailureTest, ACallbackThatThrowsOnAReReadClosesTheConnectionItLeavesUnread) {
  const memshard::testing::ScriptedServer scripted(&value_then_error);
  const std::vector<Server> list = {memshard::parse_server(servers_[0].spec()),
                                    memshard::parse_server(scripted.spec())};
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
      list, with_mode(options(FailurePolicy::kFailFast), MultiGetMode::kPolled));
  const auto keys = keys_on(client, 1, 3);
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  // Without a throw: the first key from the fan, the others re-read.
  std::size_t again = 0;
  client.visit_multi(
      views, [&](std::size_t, const memshard::ItemView& item) { again += item.value == "again"; },
      [&](std::size_t index, const memshard::Status& status) {
        ADD_FAILURE() << keys[index] << ": " << status;
      });
  ASSERT_EQ(again, 2U) << "the re-read path was not taken";
  ASSERT_EQ(scripted.accepted(), 2U);  // the fan's connection, then the server's own
  // Now the callback throws at the first re-read value: the server's own
  // connection still holds the rest of that reply (and shortened waits), so
  // it must be closed.
  EXPECT_THROW(client.visit_multi(
                   views,
                   [](std::size_t, const memshard::ItemView& item) {
                     if (item.value == "again") {
                       throw std::runtime_error("caller failed");
                     }
                   },
                   [](std::size_t, const memshard::Status&) {}),
               std::runtime_error);
  const std::size_t fan_connections = 2;  // one dropped after each broken reply
  EXPECT_TRUE(
      eventually([&] { return scripted.closed() >= fan_connections + 1; }, milliseconds(2000)))
      << scripted.closed() << " of " << scripted.accepted() << " connections closed";
  EXPECT_FALSE(client.stats()[1].ejected);
}

TEST_F(FailureTest, AProbeWonInTheMiddleOfAMultiGetIsKept) {
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(
      list(), options(FailurePolicy::kFailFast));
  auto other = client.clone();
  const auto keys = keys_on(client, 1, 2);
  // While this multi-get routes its keys, another client ejects server 1 and
  // its retry interval passes: the second key of server 1 wins the probe.
  const std::vector<std::string_view> views = {keys[0], "bad key", keys[1]};
  client.visit_multi(
      views, [](std::size_t, const memshard::ItemView&) {},
      [&](std::size_t index, const memshard::Status&) {
        if (index != 1) {
          return;
        }
        {
          const StoppedProcess stopped(servers_[1].pid());
          while (other.get(keys[0]).code() != Errc::kServerEjected) {
          }
        }
        let_pass(Clock::now(), kRetryInterval);
      });
  EXPECT_FALSE(client.stats()[1].ejected);
  EXPECT_TRUE(client.get(keys[0]).ok());
}

// Collects a client's server events (ClientOptions::on_server_event) from
// any thread.
class EventLog {
 public:
  auto observer() -> memshard::ServerObserver {
    return [this](const memshard::ServerEvent& event) {
      const std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(event);
    };
  }
  auto kinds() const -> std::vector<memshard::ServerEventKind> {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::vector<memshard::ServerEventKind> out;
    for (const auto& event : events_) {
      out.push_back(event.kind);
    }
    return out;
  }
  auto count(memshard::ServerEventKind kind) const -> std::size_t {
    const auto all = kinds();
    return static_cast<std::size_t>(std::count(all.begin(), all.end(), kind));
  }
  auto events() const -> std::vector<memshard::ServerEvent> {
    const std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<memshard::ServerEvent> events_;
};

TEST_F(FailureTest, EventsTellOfEjectionFailedProbesAndTheReturn) {
  EventLog log;
  ClientOptions with = options(FailurePolicy::kFailFast);
  with.on_server_event = log.observer();
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(list(), with);
  const auto keys = keys_on(client, 2, 2);
  servers_[2].stop();
  while (client.get(keys[0]).code() != Errc::kServerEjected) {
  }
  ASSERT_EQ(log.kinds(), std::vector{memshard::ServerEventKind::kEjected});
  const auto ejected = log.events()[0];
  EXPECT_EQ(ejected.server.endpoint(), servers_[2].spec());
  EXPECT_NE(ejected.detail.find(servers_[2].spec()), std::string::npos) << ejected.detail;
  ASSERT_TRUE(eventually([&] { return client.get(keys[0]).code() == Errc::kConnectionFailure; },
                         kRetryInterval * 10));
  EXPECT_EQ(log.count(memshard::ServerEventKind::kProbeFailed), 1U);
  servers_[2].restart();
  ASSERT_TRUE(eventually([&] { return client.get(keys[1]).ok(); }, kRetryInterval * 20));
  EXPECT_EQ(log.kinds().back(), memshard::ServerEventKind::kRestored);
  EXPECT_EQ(client.stats()[2].probe_failures, 0U);
  // An observer that throws changes nothing for the call.
  ClientOptions throwing = options(FailurePolicy::kFailFast);
  throwing.on_server_event = [](const memshard::ServerEvent&) { throw std::runtime_error("x"); };
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> other(list(), throwing);
  servers_[1].stop();
  const auto dead = keys_on(other, 1, 1)[0];
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(other.get(dead).ok());
  }
  EXPECT_TRUE(other.stats()[1].ejected);
}

TEST_F(FailureTest, FailOpenEjectsAtMostMaxEjectedFractionOfTheServers) {
  EventLog log;
  ClientOptions with = options(FailurePolicy::kFailFast);
  with.on_server_event = log.observer();
  with.max_ejected_fraction = 0.5;  // of 4 servers: 2
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(list(), with);
  std::vector<std::vector<std::string>> keys;
  for (std::size_t s = 0; s < 4; ++s) {
    keys.push_back(keys_on(client, s, 3));
    ASSERT_TRUE(client.set(keys[s][0], "v"));
  }
  for (std::size_t s = 0; s < 3; ++s) {
    servers_[s].stop();
  }
  for (int round = 0; round < 5; ++round) {
    for (std::size_t s = 0; s < 3; ++s) {
      EXPECT_FALSE(client.get(keys[s][0]).ok());
    }
  }
  const auto stats = client.stats();
  std::size_t ejected = 0;
  std::uint64_t kept_in = 0;
  for (std::size_t s = 0; s < 3; ++s) {
    ejected += stats[s].ejected ? 1U : 0U;
    kept_in += stats[s].kept_in;
  }
  EXPECT_EQ(ejected, 2U);
  EXPECT_GT(kept_in, 0U);
  EXPECT_EQ(log.count(memshard::ServerEventKind::kEjected), 2U);
  EXPECT_GT(log.count(memshard::ServerEventKind::kKeptIn), 0U);
  EXPECT_TRUE(client.get(keys[3][0]).ok()) << "the survivor serves its keys";
  // Without the rule, all three go.
  ClientOptions unlimited = options(FailurePolicy::kFailFast);
  unlimited.max_ejected_fraction = 1;
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> all(list(), unlimited);
  for (int round = 0; round < 3; ++round) {
    for (std::size_t s = 0; s < 3; ++s) {
      (void)all.get(keys[s][0]);
    }
  }
  std::size_t all_ejected = 0;
  for (const auto& stat : all.stats()) {
    all_ejected += stat.ejected ? 1U : 0U;
  }
  EXPECT_EQ(all_ejected, 3U);
}

TEST_F(FailureTest, TheFailoverRateLimitsHowManyRequestsFailOver) {
  ClientOptions with = options(FailurePolicy::kFailover);
  with.failover_rate = 0.1;
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(list(), with);
  const auto keys = keys_on(client, 1, 1);
  servers_[1].stop();
  while (!client.stats()[1].ejected) {
    (void)client.get(keys[0]);
  }
  constexpr int kRequests = 1000;
  int failed_over = 0;
  for (int i = 0; i < kRequests; ++i) {
    const auto status = client.set(keys[0], "v");
    failed_over += status.ok() ? 1 : 0;
    if (!status.ok()) {
      EXPECT_EQ(status.code(), Errc::kServerEjected) << status;
    }
  }
  // A burst of 100, then a tenth of the requests.
  EXPECT_LE(failed_over, 100 + kRequests / 10 + 5);
  EXPECT_GE(failed_over, kRequests / 10);
  EXPECT_EQ(client.stats()[1].redirected, static_cast<std::uint64_t>(failed_over));
}

TEST_F(FailureTest, EveryProbeReachesTheWireAndProbesBackOff) {
  // libmemcached's own retry clock answers "disabled" without connecting; a
  // memshard probe opens a connection, counted here by a proxy that accepts
  // and closes at once.
  FaultProxy proxy(servers_[0].port());
  ClientOptions with = options(FailurePolicy::kFailFast);
  with.retry_interval = milliseconds(100);
  with.retry_interval_max = milliseconds(400);
  memshard::ShardedClient<memshard::ModuloLocator<memshard::Crc32>> client(
      {memshard::parse_server(proxy.spec())}, with);
  ASSERT_TRUE(client.set("k", "v"));
  proxy.set_refusal(memshard::testing::Refusal::kClose);
  proxy.reset();
  while (!client.stats()[0].ejected) {
    (void)client.get("k");
  }
  const std::size_t before = proxy.accepted();
  const auto start = Clock::now();
  std::uint32_t probes = 0;
  while (Clock::now() - start < milliseconds(1500)) {
    if (client.get("k").code() != Errc::kServerEjected) {
      ++probes;  // it reached the wire: a connection failure
    }
  }
  const std::size_t connections = proxy.accepted() - before;
  EXPECT_EQ(connections, probes) << "every probe connected, nothing else did";
  // 100, 150, 225, 337, then 400 ms (+ up to 20 %): 5 to 7 in 1.5 s.
  EXPECT_GE(probes, 4U);
  EXPECT_LE(probes, 8U);
  EXPECT_GE(client.stats()[0].probe_failures, 4U);
  proxy.heal();
  ASSERT_TRUE(eventually([&] { return client.get("k").ok(); }, milliseconds(2000)));
}

TEST_F(FailureTest, ClonesOnManyThreadsShareOneLocator) {
  memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(list());
  constexpr int kThreads = 4;
  constexpr int kKeys = 300;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&failures, t, worker = client.clone()]() mutable {
      for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < kKeys; ++i) {
          const std::string key =
              std::string("t").append(std::to_string(t)).append(":").append(std::to_string(i));
          const std::string value = key + "#" + std::to_string(round);
          if (!worker.set(key, value).ok()) {
            ++failures;
          }
          const auto got = worker.get(key);
          if (!got.ok() || !got.value() || got.value()->value != value) {
            ++failures;
          }
        }
        std::vector<std::string> keys;
        for (int i = 0; i < 50; ++i) {
          keys.push_back(
              std::string("t").append(std::to_string(t)).append(":").append(std::to_string(i)));
        }
        const std::vector<std::string_view> views(keys.begin(), keys.end());
        if (worker.get_multi(views).hits() != keys.size()) {
          ++failures;
        }
      }
    });
  }
  // Counters are readable while the clones work.
  std::uint64_t seen = 0;
  for (int i = 0; i < 50; ++i) {
    std::uint64_t operations = 0;
    for (const auto& entry : client.stats()) {
      operations += entry.operations;
    }
    EXPECT_GE(operations, seen);
    seen = operations;
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(failures.load(), 0);
  std::uint64_t operations = 0;
  for (const auto& entry : client.stats()) {
    operations += entry.operations;
  }
  // set + get per key and round, and one request per server per multi-get.
  EXPECT_GE(operations, static_cast<std::uint64_t>(kThreads * 3 * kKeys * 2));
}

}  // namespace
}  // namespace sharded_client_failure_test
