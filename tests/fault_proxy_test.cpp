// SPDX-License-Identifier: MIT
// fault_proxy_test.cpp: the fault proxy of the test suite
// (support/fault_proxy.hpp) in front of a real memcached, through raw
// sockets: a plain get, then each fault (latency, trickle, limit with close
// and with stall, blackhole, reset, refusal), the bounds, and clean-up.

#include "support/fault_proxy.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "support/memcached_server.hpp"

namespace fault_proxy_test {
namespace {

using memshard::testing::Direction;
using memshard::testing::FaultProxy;
using memshard::testing::FaultProxyOptions;
using memshard::testing::LimitAction;
using memshard::testing::MemcachedServer;
using memshard::testing::Refusal;
using memshard::testing::detail::FileDescriptor;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// kQuiet: how long a test waits for bytes that must not come.
constexpr milliseconds kQuiet{300};
// kPatience: the bound on waiting for bytes (or an end) that must come.
constexpr milliseconds kPatience{3'000};

// Received: what a client read, and how the reading ended.
struct Received {
  std::string bytes;
  bool eof = false;  // the peer closed (recv returned 0)
  int error = 0;     // recv failed with this errno (ECONNRESET, ...)
};

// connect_to: a client socket connected to 127.0.0.1:`port`; invalid, with
// `error` set, when connecting fails.
auto connect_to(std::uint16_t port, int& error) -> FileDescriptor {
  return memshard::testing::detail::connect_loopback(port, Clock::now() + kPatience, error);
}

auto connect_to(std::uint16_t port) -> FileDescriptor {
  int error = 0;
  FileDescriptor fd = connect_to(port, error);
  EXPECT_TRUE(fd.valid()) << "connect: " << memshard::testing::detail::errno_text(error);
  return fd;
}

auto send_all(const FileDescriptor& fd, std::string_view text) -> bool {
  const auto deadline = Clock::now() + kPatience;
  while (!text.empty()) {
    const ssize_t sent = ::send(fd.get(), text.data(), text.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      text.remove_prefix(static_cast<std::size_t>(sent));
    } else if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!memshard::testing::detail::wait_for(fd.get(), POLLOUT, deadline)) {
        return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

// read_until: reads until `done(bytes)`, the end of the stream, an error or
// `timeout`, whichever comes first.
auto read_until(const FileDescriptor& fd, milliseconds timeout,
                const std::function<bool(const std::string&)>& done) -> Received {
  Received received;
  const auto deadline = Clock::now() + timeout;
  char buffer[16384];
  while (!done(received.bytes)) {
    if (!memshard::testing::detail::wait_for(fd.get(), POLLIN, deadline)) {
      break;
    }
    const ssize_t got = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (got > 0) {
      received.bytes.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0) {
      received.eof = true;
      break;
    } else if (errno != EAGAIN && errno != EINTR) {
      received.error = errno;
      break;
    }
  }
  return received;
}

// read_reply: reads the whole reply to `request` (or what comes before an
// end, an error or `timeout`).
auto read_reply(const FileDescriptor& fd, std::string_view request,
                milliseconds timeout = kPatience) -> Received {
  return read_until(fd, timeout, [request](const std::string& bytes) {
    return memshard::testing::detail::reply_complete(request, bytes);
  });
}

// read_to_end: reads until the stream ends, an error or `timeout`.
auto read_to_end(const FileDescriptor& fd, milliseconds timeout = kPatience) -> Received {
  return read_until(fd, timeout, [](const std::string&) { return false; });
}

// wait_until: polls `condition` with a short back-off until it holds or
// `timeout` passes.
auto wait_until(const std::function<bool()>& condition, milliseconds timeout = kPatience) -> bool {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::microseconds{200};
  while (!condition()) {
    if (Clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds{20'000});
  }
  return true;
}

// open_descriptors: the file descriptors this process has open.
auto open_descriptors() -> std::size_t {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}

// A memcached with a few values, and a proxy in front of it.
class FaultProxyTest : public ::testing::Test {
 protected:
  static constexpr std::string_view kGet = "get k\r\n";
  static constexpr std::string_view kReply = "VALUE k 0 10\r\n0123456789\r\nEND\r\n";

  void SetUp() override {
    ASSERT_EQ(server_.command("set k 0 0 10\r\n0123456789\r\n"), "STORED\r\n");
  }

  // get_through: a get of `key` on a new connection through `proxy`.
  auto get_through(const FaultProxy& proxy, std::string_view request = kGet) -> Received {
    const FileDescriptor client = connect_to(proxy.port());
    EXPECT_TRUE(send_all(client, request));
    return read_reply(client, request);
  }

  MemcachedServer server_;
};

TEST_F(FaultProxyTest, PlainProxyPassesRequestsAndRepliesUnchanged) {
  FaultProxy proxy(server_.port());
  {
    const FileDescriptor client = connect_to(proxy.port());
    for (int round = 0; round < 2; ++round) {
      ASSERT_TRUE(send_all(client, kGet));
      const Received reply = read_reply(client, kGet);
      EXPECT_EQ(reply.bytes, kReply);
      EXPECT_FALSE(reply.eof);
    }
    EXPECT_EQ(proxy.accepted(), 1U);
    EXPECT_EQ(proxy.live(), 1U);
    // The proxy counts a write once it returns, maybe after the client read it.
    EXPECT_TRUE(wait_until(
        [&] { return proxy.forwarded(Direction::kBoth) == 2 * (kGet.size() + kReply.size()); }));
    EXPECT_EQ(proxy.forwarded(Direction::kUpstream), 2 * kGet.size());
    EXPECT_EQ(proxy.forwarded(Direction::kDownstream), 2 * kReply.size());
  }
  // The client closed: the proxy closes its side and the server's.
  EXPECT_TRUE(wait_until([&] { return proxy.live() == 0; }));
  EXPECT_EQ(proxy.refused(), 0U);
  EXPECT_EQ(proxy.dropped(Direction::kBoth), 0U);
  EXPECT_EQ(proxy.spec(), "127.0.0.1:" + std::to_string(proxy.port()));
}

TEST_F(FaultProxyTest, LatencyDelaysEachDirection) {
  FaultProxy proxy(server_.port());
  proxy.set_latency(Direction::kBoth, milliseconds{60});
  auto start = Clock::now();
  EXPECT_EQ(get_through(proxy).bytes, kReply);
  EXPECT_GE(Clock::now() - start, milliseconds{120});  // 60 ms each way, at least

  // Jitter stays within latency ± jitter: at least 30 ms here.
  proxy.set_latency(Direction::kDownstream, milliseconds{60}, milliseconds{30});
  proxy.set_latency(Direction::kUpstream, milliseconds{0});
  start = Clock::now();
  EXPECT_EQ(get_through(proxy).bytes, kReply);
  EXPECT_GE(Clock::now() - start, milliseconds{30});
}

TEST_F(FaultProxyTest, JitterIsSeeded) {
  // The first delay of a proxy seeded `seed`: latency + a draw in -jitter..+jitter.
  constexpr std::int64_t kLatency = 100;
  constexpr std::int64_t kJitter = 80;
  const auto first_delay = [](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    return milliseconds{kLatency + static_cast<std::int64_t>(rng() % (2 * kJitter + 1)) - kJitter};
  };
  // Two seeds whose first delay is well over the latency: without jitter, the
  // replies would come sooner than these bounds.
  int checked = 0;
  for (std::uint64_t seed = 1; checked < 2; ++seed) {
    const milliseconds delay = first_delay(seed);
    if (delay < milliseconds{kLatency + kJitter / 2}) {
      continue;
    }
    FaultProxyOptions options;
    options.seed = seed;
    FaultProxy proxy(server_.port(), options);
    proxy.set_latency(Direction::kDownstream, milliseconds{kLatency}, milliseconds{kJitter});
    const auto start = Clock::now();
    EXPECT_EQ(get_through(proxy).bytes, kReply);
    EXPECT_GE(Clock::now() - start, delay) << "seed " << seed;
    ++checked;
  }
}

TEST_F(FaultProxyTest, TrickleSlicesALargeValue) {
  const std::string value(20'000, 'v');
  ASSERT_EQ(server_.command("set big 0 0 20000\r\n" + value + "\r\n"), "STORED\r\n");
  FaultProxy proxy(server_.port());
  proxy.set_trickle(Direction::kDownstream, 100, milliseconds{20});
  const auto start = Clock::now();
  const FileDescriptor client = connect_to(proxy.port());
  ASSERT_TRUE(send_all(client, "get big\r\n"));
  const Received reply = read_reply(client, "get big\r\n", milliseconds{10'000});
  const auto elapsed = Clock::now() - start;
  EXPECT_EQ(reply.bytes, "VALUE big 0 20000\r\n" + value + "\r\nEND\r\n");
  // 200 slices of 100 bytes, 20 ms apart; a lower bound only.
  EXPECT_GE(elapsed, milliseconds{20'000 / 100 * 20 * 8 / 10});
}

TEST_F(FaultProxyTest, LimitWithCloseTruncatesTheReplyAtTheOffset) {
  FaultProxy proxy(server_.port());
  for (const std::size_t offset :
       {std::size_t{1}, std::size_t{5}, std::size_t{14}, std::size_t{26}, kReply.size() - 1}) {
    proxy.set_limit(Direction::kDownstream, offset, LimitAction::kClose);
    const FileDescriptor client = connect_to(proxy.port());
    ASSERT_TRUE(send_all(client, kGet));
    const Received received = read_to_end(client);
    EXPECT_EQ(received.bytes, kReply.substr(0, offset)) << "offset " << offset;
    EXPECT_TRUE(received.eof) << "offset " << offset << ", errno " << received.error;
  }
  // Upstream: the request is cut, so no reply comes, and the connection ends.
  proxy.set_limit(Direction::kUpstream, 3, LimitAction::kClose);
  proxy.set_limit(Direction::kDownstream, FaultProxy::kNoLimit);
  const Received cut = get_through(proxy);
  EXPECT_EQ(cut.bytes, "");
  EXPECT_TRUE(cut.eof);
  EXPECT_TRUE(wait_until([&] { return proxy.live() == 0; }));
  proxy.heal();
  EXPECT_EQ(get_through(proxy).bytes, kReply);
}

TEST_F(FaultProxyTest, LimitWithStallHoldsTheConnectionAndForwardsNothingMore) {
  FaultProxy proxy(server_.port());
  proxy.set_limit(Direction::kDownstream, 5, LimitAction::kStall);
  const FileDescriptor client = connect_to(proxy.port());
  ASSERT_TRUE(send_all(client, kGet));
  const Received received = read_to_end(client, kQuiet);
  EXPECT_EQ(received.bytes, kReply.substr(0, 5));
  EXPECT_FALSE(received.eof);
  EXPECT_EQ(received.error, 0);
  EXPECT_EQ(proxy.live(), 1U);
  EXPECT_TRUE(
      wait_until([&] { return proxy.dropped(Direction::kDownstream) == kReply.size() - 5; }));
  // Healed, the connection forwards again; the dropped bytes stay dropped.
  proxy.heal();
  ASSERT_TRUE(send_all(client, kGet));
  EXPECT_EQ(read_reply(client, kGet).bytes, kReply);
}

TEST_F(FaultProxyTest, BlackholeForwardsNothing) {
  FaultProxy proxy(server_.port());
  proxy.set_blackhole(Direction::kBoth);
  {
    const FileDescriptor client = connect_to(proxy.port());
    ASSERT_TRUE(send_all(client, kGet));
    const Received received = read_reply(client, kGet, kQuiet);
    EXPECT_EQ(received.bytes, "");
    EXPECT_FALSE(received.eof);
    EXPECT_EQ(received.error, 0);
    EXPECT_EQ(proxy.forwarded(Direction::kBoth), 0U);
    EXPECT_TRUE(wait_until([&] { return proxy.dropped(Direction::kUpstream) == kGet.size(); }));
  }
  // Downstream only: the request reaches the server, the reply is dropped.
  proxy.set_blackhole(Direction::kUpstream, false);
  {
    const FileDescriptor client = connect_to(proxy.port());
    const std::string_view set = "set b 0 0 1\r\nx\r\n";
    ASSERT_TRUE(send_all(client, set));
    EXPECT_EQ(read_reply(client, set, kQuiet).bytes, "");
    EXPECT_EQ(server_.command("get b"), "VALUE b 0 1\r\nx\r\nEND\r\n");
    EXPECT_TRUE(wait_until([&] { return proxy.dropped(Direction::kDownstream) > 0; }));
  }
  proxy.heal();
  EXPECT_EQ(get_through(proxy).bytes, kReply);
}

TEST_F(FaultProxyTest, ResetSendsRstOnLiveConnectionsAndOptionallyNewOnes) {
  FaultProxy proxy(server_.port());
  const FileDescriptor client = connect_to(proxy.port());
  ASSERT_TRUE(send_all(client, kGet));
  ASSERT_EQ(read_reply(client, kGet).bytes, kReply);
  proxy.reset();
  EXPECT_EQ(proxy.live(), 0U);
  const Received after = read_to_end(client);
  EXPECT_EQ(after.bytes, "");
  EXPECT_EQ(after.error, ECONNRESET) << "eof " << after.eof;
  // Live connections only: a new one is proxied.
  EXPECT_EQ(get_through(proxy).bytes, kReply);

  // New connections too: the RST comes right after the accept, so the client
  // sees it either as it connects or on its first read.
  proxy.reset(true);
  int error = 0;
  const FileDescriptor late = connect_to(proxy.port(), error);
  if (late.valid()) {
    const Received reset = read_to_end(late);
    EXPECT_EQ(reset.bytes, "");
    EXPECT_EQ(reset.error, ECONNRESET) << "eof " << reset.eof;
  } else {
    EXPECT_EQ(error, ECONNRESET);
  }
  EXPECT_EQ(proxy.refused(), 1U);
  proxy.heal();
  EXPECT_EQ(get_through(proxy).bytes, kReply);
}

TEST_F(FaultProxyTest, RefusalClosesOrRefusesNewConnectionsOnly) {
  FaultProxy proxy(server_.port());
  const FileDescriptor before = connect_to(proxy.port());
  ASSERT_TRUE(send_all(before, kGet));
  ASSERT_EQ(read_reply(before, kGet).bytes, kReply);

  proxy.set_refusal(Refusal::kClose);
  const FileDescriptor closed = connect_to(proxy.port());
  const Received end = read_to_end(closed);
  EXPECT_EQ(end.bytes, "");
  EXPECT_TRUE(end.eof) << "errno " << end.error;

  proxy.set_refusal(Refusal::kUnlisten);
  int error = 0;
  EXPECT_FALSE(connect_to(proxy.port(), error).valid());
  EXPECT_EQ(error, ECONNREFUSED);

  // The connection made before the refusals still works.
  ASSERT_TRUE(send_all(before, kGet));
  EXPECT_EQ(read_reply(before, kGet).bytes, kReply);
  proxy.heal();
  EXPECT_EQ(get_through(proxy).bytes, kReply);
  EXPECT_EQ(proxy.refused(), 1U);
}

TEST_F(FaultProxyTest, MaxConnectionsClosesTheOneTooMany) {
  FaultProxyOptions options;
  options.max_connections = 2;
  FaultProxy proxy(server_.port(), options);
  const FileDescriptor first = connect_to(proxy.port());
  const FileDescriptor second = connect_to(proxy.port());
  ASSERT_TRUE(wait_until([&] { return proxy.live() == 2; }));
  const FileDescriptor third = connect_to(proxy.port());
  EXPECT_TRUE(read_to_end(third).eof);
  EXPECT_EQ(proxy.refused(), 1U);
  for (const FileDescriptor* client : {&first, &second}) {
    ASSERT_TRUE(send_all(*client, kGet));
    EXPECT_EQ(read_reply(*client, kGet).bytes, kReply);
  }
}

TEST_F(FaultProxyTest, BufferedBytesStayUnderTheCap) {
  const std::string value(100'000, 'w');
  ASSERT_EQ(server_.command("set big 0 0 100000\r\n" + value + "\r\n"), "STORED\r\n");
  FaultProxyOptions options;
  options.max_buffered_bytes = 16'384;
  FaultProxy proxy(server_.port(), options);
  proxy.set_latency(Direction::kDownstream, milliseconds{50});
  EXPECT_EQ(get_through(proxy, "get big\r\n").bytes,
            "VALUE big 0 100000\r\n" + value + "\r\nEND\r\n");
  EXPECT_LE(proxy.peak_buffered(), options.max_buffered_bytes + FaultProxy::kReadSize);
}

TEST_F(FaultProxyTest, UpstreamDownEndsTheClientConnection) {
  FaultProxy proxy(server_.port());
  server_.stop();
  const Received received = get_through(proxy);
  EXPECT_EQ(received.bytes, "");
  EXPECT_TRUE(received.eof) << "errno " << received.error;
  EXPECT_EQ(proxy.refused(), 1U);
  EXPECT_EQ(proxy.live(), 0U);
}

TEST_F(FaultProxyTest, DestructorClosesEverySocket) {
  const std::size_t fds_before = open_descriptors();
  std::uint16_t port = 0;
  {
    FileDescriptor client;
    {
      FaultProxy proxy(server_.port());
      port = proxy.port();
      client = connect_to(port);
      ASSERT_TRUE(send_all(client, kGet));
      ASSERT_EQ(read_reply(client, kGet).bytes, kReply);
      // One connection refused, one closed by its client: neither keeps a descriptor.
      proxy.set_refusal(Refusal::kClose);
      EXPECT_TRUE(read_to_end(connect_to(port)).eof);
      proxy.heal();
      EXPECT_EQ(get_through(proxy).bytes, kReply);
    }
    const Received end = read_to_end(client);
    EXPECT_TRUE(end.eof || end.error != 0);
  }
  int error = 0;
  EXPECT_FALSE(connect_to(port, error).valid());
  EXPECT_EQ(error, ECONNREFUSED);
  EXPECT_EQ(open_descriptors(), fds_before);
}

}  // namespace
}  // namespace fault_proxy_test
