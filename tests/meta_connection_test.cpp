// SPDX-License-Identifier: MIT
// wire/meta_connection.hpp against a real memcached (mg/ms/md/ma round
// trips, exact TTL, flags and cas, add and cas outcomes, leases, pipelines,
// metadump, stats, reconnection), and against scripted peers for what real
// servers do not send on demand: garbage, a wrong VA length, an ERROR to mn,
// silence, a reply trickled past the deadline, a reset.

#include "memshard/wire/meta_connection.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "support/memcached_server.hpp"
#include "support/scripted_server.hpp"

namespace meta_connection_test {
namespace {

using memshard::detail::MetaConnection;
using memshard::detail::MetaDeadline;
using memshard::detail::MetaErrc;
using memshard::detail::MetaReplyKind;
using memshard::detail::MetaSetMode;
using memshard::testing::MemcachedServer;
using memshard::testing::ScriptedServer;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

auto in(milliseconds timeout) -> MetaDeadline { return Clock::now() + timeout; }

constexpr milliseconds kGenerous{5'000};
// How far past its deadline a call may return (scheduling, sanitizers).
constexpr milliseconds kSlack{20};

// How long after `deadline` the call returned, in microseconds (negative: before it).
auto late_us(MetaDeadline deadline, Clock::time_point returned) -> long long {
  return std::chrono::duration_cast<std::chrono::microseconds>(returned - deadline).count();
}

// Bounded polling: waits until `done()` or 5 s.
auto eventually(const std::function<bool()>& done) -> bool {
  const auto until = Clock::now() + milliseconds{5'000};
  while (!done()) {
    if (Clock::now() > until) {
      return false;
    }
    pollfd none{-1, 0, 0};
    static_cast<void>(::poll(&none, 0, 1));
  }
  return true;
}

class MetaConnectionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<MemcachedServer>(); }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    ASSERT_TRUE(connection_.connect("127.0.0.1", server_->port(), in(kGenerous)));
  }

  // A key of its own for each test.
  [[nodiscard]] static auto key(std::string_view name) -> std::string {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string(test->name()) + ":" + std::string(name);
  }

  static std::unique_ptr<MemcachedServer> server_;
  MetaConnection connection_;
};

std::unique_ptr<MemcachedServer> MetaConnectionTest::server_;

TEST_F(MetaConnectionTest, SetThenGetReadsValueFlagsCasAndTheExactTtl) {
  const std::string k = key("k");
  const auto stored = connection_.set(k, "abc", {.ttl = 100, .client_flags = 7}, in(kGenerous));
  ASSERT_TRUE(stored.ok()) << stored.status;
  EXPECT_EQ(stored.reply.kind, MetaReplyKind::kHeader);
  const auto got = connection_.get(
      k, {.value = true, .ttl = true, .client_flags = true, .cas = true}, in(kGenerous));
  ASSERT_TRUE(got.ok()) << got.status;
  EXPECT_EQ(got.reply.kind, MetaReplyKind::kValue);
  EXPECT_EQ(got.reply.value, "abc");
  EXPECT_EQ(got.reply.client_flags, 7U);
  ASSERT_TRUE(got.reply.ttl);
  EXPECT_GE(*got.reply.ttl, 99);
  EXPECT_LE(*got.reply.ttl, 100);
  ASSERT_TRUE(got.reply.cas);
  EXPECT_GT(*got.reply.cas, 0U);
  EXPECT_TRUE(connection_.is_open()) << "the connection is reused";

  ASSERT_TRUE(connection_.set(k, "", {}, in(kGenerous)).ok());
  const auto forever = connection_.get(k, {.value = true, .ttl = true}, in(kGenerous));
  ASSERT_TRUE(forever.ok());
  EXPECT_EQ(forever.reply.value, "");
  EXPECT_EQ(forever.reply.ttl, -1) << "no TTL reads as -1";
  const auto miss = connection_.get(key("absent"), {.value = true}, in(kGenerous));
  ASSERT_TRUE(miss.ok());
  EXPECT_EQ(miss.reply.kind, MetaReplyKind::kMiss);
}

TEST_F(MetaConnectionTest, AddModeAndCasOutcomes) {
  const std::string k = key("k");
  EXPECT_EQ(connection_.set(k, "1", {.mode = MetaSetMode::kAdd}, in(kGenerous)).reply.kind,
            MetaReplyKind::kHeader);
  EXPECT_EQ(connection_.set(k, "2", {.mode = MetaSetMode::kAdd}, in(kGenerous)).reply.kind,
            MetaReplyKind::kNotStored);
  const auto read = connection_.get(k, {.value = true, .cas = true}, in(kGenerous));
  ASSERT_TRUE(read.ok() && read.reply.cas);
  EXPECT_EQ(read.reply.value, "1") << "add did not overwrite";
  const std::uint64_t cas = *read.reply.cas;
  EXPECT_EQ(connection_.set(k, "3", {.cas = cas + 1}, in(kGenerous)).reply.kind,
            MetaReplyKind::kExists);
  const auto swapped = connection_.set(k, "4", {.cas = cas, .return_cas = true}, in(kGenerous));
  EXPECT_EQ(swapped.reply.kind, MetaReplyKind::kHeader);
  ASSERT_TRUE(swapped.reply.cas);
  EXPECT_NE(*swapped.reply.cas, cas);
  EXPECT_EQ(connection_.remove(k, {.cas = cas}, in(kGenerous)).reply.kind, MetaReplyKind::kExists);
  EXPECT_EQ(connection_.remove(k, {}, in(kGenerous)).reply.kind, MetaReplyKind::kHeader);
  EXPECT_EQ(connection_.remove(k, {}, in(kGenerous)).reply.kind, MetaReplyKind::kNotFound);
  EXPECT_EQ(connection_.set(k, "5", {.cas = cas}, in(kGenerous)).reply.kind,
            MetaReplyKind::kNotFound);
}

TEST_F(MetaConnectionTest, LeasesAndArithmetic) {
  const std::string k = key("lease");
  const auto first = connection_.get(k, {.ttl = true, .vivify_ttl = 30}, in(kGenerous));
  ASSERT_TRUE(first.ok()) << first.status;
  EXPECT_TRUE(first.reply.won);
  EXPECT_FALSE(first.reply.win_sent);
  const auto second = connection_.get(k, {.ttl = true, .vivify_ttl = 30}, in(kGenerous));
  EXPECT_FALSE(second.reply.won);
  EXPECT_TRUE(second.reply.win_sent);

  const std::string n = key("n");
  const auto created =
      connection_.arithmetic(n, {.vivify_ttl = 0, .initial = 5, .value = true}, in(kGenerous));
  ASSERT_TRUE(created.ok()) << created.status;
  EXPECT_EQ(created.reply.value, "5");
  const auto added = connection_.arithmetic(n, {.delta = 10, .value = true}, in(kGenerous));
  EXPECT_EQ(added.reply.value, "15");
}

TEST_F(MetaConnectionTest, PipelineSendsSetAndGetTogether) {
  const std::string k = key("k");
  std::string requests;
  ASSERT_FALSE(memshard::detail::write_meta_set(requests, k, "v1", {.ttl = 50, .client_flags = 3}));
  ASSERT_FALSE(
      memshard::detail::write_meta_get(requests, k, {.value = true, .client_flags = true}));
  ASSERT_FALSE(memshard::detail::write_meta_get(requests, key("absent"), {.value = true}));
  const auto out = connection_.pipeline(requests, in(kGenerous));
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_EQ(out.replies.size(), 3U);
  EXPECT_EQ(out.replies[0].kind, MetaReplyKind::kHeader);
  EXPECT_EQ(out.replies[1].kind, MetaReplyKind::kValue);
  EXPECT_EQ(out.replies[1].value, "v1");
  EXPECT_EQ(out.replies[1].client_flags, 3U);
  EXPECT_EQ(out.replies[2].kind, MetaReplyKind::kMiss);

  // Quiet requests answer only what differs from success; opaque tokens match them.
  requests.clear();
  ASSERT_FALSE(memshard::detail::write_meta_get(requests, key("absent"),
                                                {.value = true, .quiet = true, .opaque = 1}));
  ASSERT_FALSE(
      memshard::detail::write_meta_get(requests, k, {.value = true, .quiet = true, .opaque = 2}));
  const auto quiet = connection_.pipeline(requests, in(kGenerous));
  ASSERT_TRUE(quiet.ok()) << quiet.status;
  ASSERT_EQ(quiet.replies.size(), 1U);
  EXPECT_EQ(quiet.replies[0].opaque, 2U);
  EXPECT_EQ(quiet.replies[0].value, "v1");
}

TEST_F(MetaConnectionTest, ALongPipelineDoesNotDeadlock) {
  // Requests and replies of about 10 MB each: far more than the socket
  // buffers hold, so memcached stops reading while its replies wait to be
  // read, long before the last request is sent.
  const std::string value(32 * 1024, 'x');
  std::string requests;
  for (int i = 0; i < 300; ++i) {
    const std::string k = key(std::to_string(i));
    ASSERT_FALSE(memshard::detail::write_meta_set(requests, k, value, {}));
    ASSERT_FALSE(memshard::detail::write_meta_get(requests, k, {.value = true}));
  }
  const auto out = connection_.pipeline(requests, in(kGenerous));
  ASSERT_TRUE(out.ok()) << out.status;
  ASSERT_EQ(out.replies.size(), 600U);
  EXPECT_EQ(out.replies[1].value, value);
  EXPECT_EQ(out.replies.back().value, value);
}

TEST_F(MetaConnectionTest, MetadumpStreamsALineForEveryKey) {
  const std::vector<std::string> keys = {key("a"), key("b"), key("c")};
  for (const std::string& k : keys) {
    ASSERT_TRUE(connection_.set(k, "v", {.ttl = 300}, in(kGenerous)).ok());
  }
  std::vector<std::string> lines;
  // The LRU crawler may still be busy with another crawl (BUSY): ask again.
  auto dump = [&](std::string_view command) {
    memshard::detail::MetaStatus status;
    EXPECT_TRUE(eventually([&] {
      lines.clear();
      status = connection_.lines(command, in(kGenerous),
                                 [&](std::string_view line) { lines.emplace_back(line); });
      return status.code != MetaErrc::kRefused || status.message.find("BUSY") == std::string::npos;
    }));
    return status;
  };
  const auto status = dump("lru_crawler metadump all");
  ASSERT_TRUE(status) << status;
  for (const std::string& k : keys) {
    // Keys are URI-encoded: ':' becomes %3A.
    std::string encoded = "key=";
    for (const char c : k) {
      encoded += c == ':' ? std::string("%3A") : std::string(1, c);
    }
    bool found = false;
    for (const std::string& line : lines) {
      found = found || line.starts_with(encoded + " exp=");
    }
    EXPECT_TRUE(found) << encoded;
  }
  EXPECT_TRUE(connection_.noop(in(kGenerous))) << "the connection is in step after END";
  const auto refused = dump("lru_crawler metadump 99");
  EXPECT_EQ(refused.code, MetaErrc::kRefused);
  EXPECT_NE(refused.message.find("BADCLASS"), std::string::npos) << refused;
  EXPECT_EQ(connection_.lines("a\r\nflush_all", in(kGenerous), [](auto) {}).code,
            MetaErrc::kInvalidRequest);
}

TEST_F(MetaConnectionTest, StatsHaveTimeAndSettings) {
  const auto stats = connection_.stats(in(kGenerous));
  ASSERT_TRUE(stats.ok()) << stats.status;
  ASSERT_TRUE(stats.find("time"));
  EXPECT_GT(std::stoll(std::string(*stats.find("time"))), 1'600'000'000);
  EXPECT_EQ(stats.find("pid"), std::to_string(server_->pid()));
  const auto settings = connection_.stats(in(kGenerous), "settings");
  ASSERT_TRUE(settings.ok()) << settings.status;
  EXPECT_TRUE(settings.find("item_size_max"));
  EXPECT_EQ(connection_.stats(in(kGenerous), "nonsense").status.code, MetaErrc::kRefused);
  EXPECT_TRUE(connection_.noop(in(kGenerous)));
}

TEST_F(MetaConnectionTest, ReconnectsAfterCloseAndAfterAServerRestart) {
  connection_.close();
  EXPECT_FALSE(connection_.is_open());
  EXPECT_TRUE(connection_.noop(in(kGenerous)));
  EXPECT_TRUE(connection_.is_open());
  server_->restart();  // the idle connection is closed by the server
  const auto status = connection_.noop(in(kGenerous));
  EXPECT_TRUE(status) << status;
}

TEST_F(MetaConnectionTest, RefusesBadRequestsBeforeTheWire) {
  EXPECT_EQ(connection_.get("a b", {}, in(kGenerous)).status.code, MetaErrc::kInvalidRequest);
  EXPECT_EQ(connection_.set(std::string(251, 'k'), "v", {}, in(kGenerous)).status.code,
            MetaErrc::kInvalidRequest);
  EXPECT_EQ(connection_.get("k", {.quiet = true}, in(kGenerous)).status.code,
            MetaErrc::kInvalidRequest);
  EXPECT_TRUE(connection_.is_open());
  EXPECT_EQ(connection_.noop(Clock::now() - milliseconds{1}).code, MetaErrc::kTimeout);
  EXPECT_TRUE(connection_.is_open()) << "nothing was in flight";
  MetaConnection never;
  EXPECT_EQ(never.noop(in(kGenerous)).code, MetaErrc::kNotConnected);
}

TEST(MetaConnectionConnectTest, NamesIpv6AndRefusals) {
  const MemcachedServer server;
  MetaConnection connection;
  // "localhost" may resolve to ::1 first, where nothing listens: the next address is tried.
  const auto named = connection.connect("localhost", server.port(), in(kGenerous));
  ASSERT_TRUE(named) << named;
  EXPECT_TRUE(connection.noop(in(kGenerous)));

  const std::uint16_t closed_port = memshard::testing::detail::free_port();
  const auto refused = connection.connect("127.0.0.1", closed_port, in(kGenerous));
  EXPECT_EQ(refused.code, MetaErrc::kConnect) << refused;
  EXPECT_NE(refused.message.find("refused"), std::string::npos) << refused;
  EXPECT_FALSE(connection.is_open());

  // An IPv6 listener on ::1, when the host has IPv6 loopback.
  memshard::testing::detail::FileDescriptor listener(
      ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  socklen_t length = sizeof address;
  if (!listener.valid() ||
      ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(listener.get(), 4) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    GTEST_SKIP() << "no IPv6 loopback";
  }
  const std::uint16_t port = ntohs(address.sin6_port);
  EXPECT_TRUE(connection.connect("::1", port, in(kGenerous)));
  EXPECT_TRUE(connection.connect("[::1]", port, in(kGenerous)));
  EXPECT_EQ(connection.host(), "::1");
}

// ---------------------------------------------------------------------------
// Scripted peers

TEST(MetaConnectionFaultTest, GarbageAndAWrongLengthAreMalformedAndClose) {
  const ScriptedServer server([](std::string_view line, std::size_t) -> std::string {
    if (line.starts_with("mg short")) {
      return "VA 2\r\nabc\r\n";  // one byte more than announced
    }
    return "HELLO WORLD\r\n";
  });
  MetaConnection connection;
  ASSERT_TRUE(connection.connect("127.0.0.1", server.port(), in(kGenerous)));
  const auto garbage = connection.get("k", {.value = true}, in(kGenerous));
  EXPECT_EQ(garbage.status.code, MetaErrc::kMalformed) << garbage.status;
  EXPECT_NE(garbage.status.message.find("unknown return code"), std::string::npos);
  EXPECT_FALSE(connection.is_open());
  const auto wrong = connection.get("short", {.value = true}, in(kGenerous));
  EXPECT_EQ(wrong.status.code, MetaErrc::kMalformed) << wrong.status;
  EXPECT_NE(wrong.status.message.find("value not followed"), std::string::npos);
  EXPECT_FALSE(connection.is_open());
  EXPECT_EQ(server.accepted(), 2U) << "the second call reconnected";
}

TEST(MetaConnectionFaultTest, AnErrorToMnMeansNoMetaSupport) {
  const ScriptedServer server([](std::string_view, std::size_t) { return "ERROR\r\n"; });
  MetaConnection connection;
  ASSERT_TRUE(connection.connect("127.0.0.1", server.port(), in(kGenerous)));
  const auto noop = connection.noop(in(kGenerous));
  EXPECT_EQ(noop.code, MetaErrc::kNoMetaSupport) << noop;
  EXPECT_EQ(connection.get("k", {.value = true}, in(kGenerous)).status.code,
            MetaErrc::kNoMetaSupport);
}

TEST(MetaConnectionFaultTest, ASilentServerTimesOutAtTheDeadlineAndIsClosed) {
  const ScriptedServer server([](std::string_view, std::size_t) { return std::string(); });
  MetaConnection connection;
  ASSERT_TRUE(connection.connect("127.0.0.1", server.port(), in(kGenerous)));
  const MetaDeadline deadline = in(milliseconds{50});
  const auto got = connection.get("k", {.value = true}, deadline);
  const auto returned = Clock::now();
  EXPECT_EQ(got.status.code, MetaErrc::kTimeout) << got.status;
  EXPECT_GE(late_us(deadline, returned), 0);
  EXPECT_LE(late_us(deadline, returned),
            std::chrono::duration_cast<std::chrono::microseconds>(kSlack).count());
  EXPECT_FALSE(connection.is_open());
  EXPECT_TRUE(eventually([&] { return server.closed() == 1; })) << "the socket was closed";
}

// RawPeer: a listener on 127.0.0.1 whose one accepted connection is handed to
// `behaviour` on a thread of its own.
class RawPeer {
 public:
  explicit RawPeer(std::function<void(int)> behaviour)
      : listener_(memshard::testing::detail::listen_loopback(port_, 4)) {
    thread_ = std::thread([this, behaviour = std::move(behaviour)] {
      pollfd entry{listener_.get(), POLLIN, 0};
      if (::poll(&entry, 1, 5'000) == 1) {
        memshard::testing::detail::FileDescriptor peer(
            ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (peer.valid()) {
          behaviour(peer.get());
        }
      }
    });
  }
  RawPeer(const RawPeer&) = delete;
  auto operator=(const RawPeer&) -> RawPeer& = delete;
  ~RawPeer() { thread_.join(); }

  [[nodiscard]] auto port() const noexcept -> std::uint16_t { return port_; }

  // Reads until a "\r\n" arrives or 5 s pass.
  static void read_request(int fd) {
    std::string got;
    while (got.find("\r\n") == std::string::npos) {
      pollfd entry{fd, POLLIN, 0};
      char buffer[512];
      if (::poll(&entry, 1, 5'000) != 1) {
        return;
      }
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) {
        return;
      }
      got.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  std::uint16_t port_ = 0;  // set by the listener's initializer, so declared before it
  memshard::testing::detail::FileDescriptor listener_;
  std::thread thread_;
};

TEST(MetaConnectionFaultTest, ATrickledReplyIsCutAtTheDeadline) {
  std::atomic<bool> client_closed{false};
  std::atomic<std::size_t> bytes_sent{0};
  const RawPeer peer([&](int fd) {
    RawPeer::read_request(fd);
    // A valid reply, one byte every 5 ms: each byte alone would satisfy a
    // per-read timeout; only the absolute deadline stops it.
    const std::string reply = "VA 200 f1\r\n" + std::string(200, 'x') + "\r\n";
    for (const char byte : reply) {
      if (::send(fd, &byte, 1, MSG_NOSIGNAL) != 1) {
        break;
      }
      ++bytes_sent;
      pollfd entry{fd, POLLIN, 0};
      if (::poll(&entry, 1, 5) == 1) {  // the client hung up
        char sink = 0;
        if (::recv(fd, &sink, 1, 0) <= 0) {
          client_closed = true;
          return;
        }
      }
    }
  });
  MetaConnection connection;
  ASSERT_TRUE(connection.connect("127.0.0.1", peer.port(), in(kGenerous)));
  const MetaDeadline deadline = in(milliseconds{60});
  const auto got = connection.get("k", {.value = true}, deadline);
  const auto returned = Clock::now();
  EXPECT_EQ(got.status.code, MetaErrc::kTimeout) << got.status;
  EXPECT_GE(late_us(deadline, returned), 0);
  EXPECT_LE(late_us(deadline, returned),
            std::chrono::duration_cast<std::chrono::microseconds>(kSlack).count());
  EXPECT_FALSE(connection.is_open());
  EXPECT_TRUE(eventually([&] { return client_closed.load(); })) << "the client closed the socket";
  EXPECT_GT(bytes_sent.load(), 1U);
}

TEST(MetaConnectionFaultTest, AResetIsReportedWithTheErrnoText) {
  const RawPeer peer([](int fd) {
    RawPeer::read_request(fd);
    const linger abort_on_close{1, 0};
    static_cast<void>(
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close));
    // The FileDescriptor's close now sends RST.
  });
  MetaConnection connection;
  ASSERT_TRUE(connection.connect("127.0.0.1", peer.port(), in(kGenerous)));
  const auto got = connection.get("k", {.value = true}, in(kGenerous));
  EXPECT_EQ(got.status.code, MetaErrc::kDisconnected) << got.status;
  EXPECT_EQ(got.status.error_number, ECONNRESET) << got.status;
  EXPECT_NE(got.status.message.find("reset"), std::string::npos) << got.status;
  EXPECT_FALSE(connection.is_open());
}

TEST(MetaConnectionFaultTest, MoveKeepsTheSocket) {
  const ScriptedServer server([](std::string_view, std::size_t) { return "MN\r\n"; });
  MetaConnection first;
  ASSERT_TRUE(first.connect("127.0.0.1", server.port(), in(kGenerous)));
  MetaConnection second = std::move(first);
  EXPECT_TRUE(second.is_open());
  EXPECT_TRUE(second.noop(in(kGenerous)));
  MetaConnection third;
  third = std::move(second);
  EXPECT_TRUE(third.noop(in(kGenerous)));
  EXPECT_EQ(server.accepted(), 1U);
  third.close();
  EXPECT_TRUE(eventually([&] { return server.closed() == 1; }));
}

}  // namespace
}  // namespace meta_connection_test
