// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_FAULT_PROXY_HPP_
#define MEMSHARD_TESTS_SUPPORT_FAULT_PROXY_HPP_

// support/fault_proxy.hpp: FaultProxy, a TCP proxy on 127.0.0.1 in front of
// one real server (a memcached the test started with
// support/memcached_server.hpp), whose faults a test switches at run time:
// latency with jitter, trickled bytes, truncation (then close or stall),
// blackholes, resets of live connections, refused connections. The network
// faults that need no root and no network namespace.
//
// It stands in for no server: it only distorts the bytes between a client and
// a real one. Every byte a client reads through it was sent by that server,
// delayed, sliced, cut or dropped, never made up. Linux only.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/memcached_server.hpp"

namespace memshard::testing {

/// Direction: a way through a FaultProxy, for the faults and counters that
/// apply per direction. kBoth means both ways.
enum class Direction : std::uint8_t {
  kUpstream = 1,    ///< client to server: the requests
  kDownstream = 2,  ///< server to client: the replies
  kBoth = 3,        ///< kUpstream and kDownstream
};

/// LimitAction: what a FaultProxy does once a connection has forwarded the
/// limit of bytes set for a direction (FaultProxy::set_limit).
enum class LimitAction : std::uint8_t {
  /// Close both sockets (FIN): the client reads the bytes forwarded, then EOF.
  kClose,
  /// Keep the connection open and forward nothing more that way; the bytes
  /// read after the limit are dropped, so the stream never resumes.
  kStall,
};

/// Refusal: what a FaultProxy does with new connections (FaultProxy::set_refusal).
enum class Refusal : std::uint8_t {
  kNone,   ///< proxy them
  kClose,  ///< accept and close at once: the client connects, then reads EOF
  /// Stop listening: connecting fails with ECONNREFUSED. The proxy listens on
  /// the same port again when refusals end.
  kUnlisten,
};

/// FaultProxyOptions: the bounds and the jitter seed of a FaultProxy.
struct FaultProxyOptions {
  /// max_connections: live connections at most; one more is accepted and
  /// closed at once (counted in FaultProxy::refused()).
  std::size_t max_connections = 64;
  /// max_buffered_bytes: per connection and direction, the bytes the proxy
  /// holds before it stops reading that side until they drain (TCP
  /// back-pressure). It holds at most this plus one read (FaultProxy::kReadSize).
  std::size_t max_buffered_bytes = std::size_t{1} << 20;
  /// seed: seeds the jitter, so a run's delays repeat.
  std::uint64_t seed = 1;
};

/// FaultProxy: listens on 127.0.0.1 (a port from the kernel) and joins each
/// client it accepts to a new connection to the upstream server, copying bytes
/// both ways through the faults currently set. With no fault set it is a
/// plain proxy. The faults, each off until set and all off after heal():
/// - latency (set_latency): each chunk read is forwarded `latency` ± `jitter`
///   later (seeded, FaultProxyOptions::seed), never before an earlier chunk;
/// - trickle (set_trickle): at most `slice_bytes` every `slice_interval`;
/// - limit (set_limit): the first `limit_bytes` of a direction of each
///   connection only, then LimitAction::kClose or kStall;
/// - blackhole (set_blackhole): read and drop, forward nothing, not even EOF;
/// - reset (reset): RST on every live connection now, and optionally on each
///   new one;
/// - refusal (set_refusal): new connections closed at once, or not accepted.
///
/// One thread serves every connection with poll(), waking at least every
/// kPollStep and whenever a setter changes something. Each setter returns
/// once that thread applies it: every byte forwarded afterwards obeys it, and
/// reset() has reset every connection by then. Setters and counters are
/// thread-safe. Nothing the proxy holds is unbounded: FaultProxyOptions caps
/// the connections and the bytes buffered per connection. The destructor
/// stops the thread and closes every socket. Not copyable or movable.
///
/// Exception guarantee: the constructor throws std::runtime_error when it
/// cannot listen or the upstream host is not an IPv4 address; a setter throws
/// std::runtime_error if the proxy thread does not apply it within
/// kApplyTimeout (it has stopped). Counters never throw.
///
/// **Example**:
///   memshard::testing::MemcachedServer server;
///   memshard::testing::FaultProxy proxy(server.port());
///   // clients connect to proxy.port() instead of server.port()
///   proxy.set_trickle(Direction::kDownstream, 100, std::chrono::milliseconds{20});
///   proxy.set_blackhole(Direction::kBoth);
///   proxy.heal();  // a plain proxy again
class FaultProxy {
 public:
  /// kPollStep: the longest the proxy thread waits in poll().
  static constexpr std::chrono::milliseconds kPollStep{20};
  /// kReadSize: the most bytes read from a socket at once.
  static constexpr std::size_t kReadSize = 16384;
  /// kApplyTimeout: how long a setter waits for the proxy thread.
  static constexpr std::chrono::milliseconds kApplyTimeout{5'000};
  /// kNoLimit: the limit_bytes of a direction without a limit.
  static constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();

  /// Proxies to 127.0.0.1:`upstream_port`.
  explicit FaultProxy(std::uint16_t upstream_port, FaultProxyOptions options = {})
      : FaultProxy("127.0.0.1", upstream_port, options) {}

  /// Proxies to `upstream_host` (an IPv4 address, "127.0.0.1") : `upstream_port`.
  FaultProxy(const std::string& upstream_host, std::uint16_t upstream_port,
             FaultProxyOptions options = {})
      : options_(options), rng_(options.seed) {
    upstream_.sin_family = AF_INET;
    upstream_.sin_port = htons(upstream_port);
    if (::inet_pton(AF_INET, upstream_host.c_str(), &upstream_.sin_addr) != 1) {
      detail::throw_error("fault proxy: upstream host is not an IPv4 address: " + upstream_host);
    }
    if (!wake_.valid()) {
      detail::throw_error("fault proxy: eventfd() failed: " + detail::errno_text(errno));
    }
    if (!open_listener()) {
      detail::throw_error("fault proxy: cannot listen on 127.0.0.1: " + detail::errno_text(errno));
    }
    thread_ = std::thread([this] { serve(); });
  }
  FaultProxy(const FaultProxy&) = delete;
  auto operator=(const FaultProxy&) -> FaultProxy& = delete;
  FaultProxy(FaultProxy&&) = delete;
  auto operator=(FaultProxy&&) -> FaultProxy& = delete;
  ~FaultProxy() {
    stop_ = true;
    wake();
    thread_.join();
  }

  /// port: the port the proxy listens on (kept while it does not listen).
  [[nodiscard]] auto port() const noexcept -> std::uint16_t { return port_; }
  /// spec: "127.0.0.1:port", the form memshard::parse_server() reads.
  [[nodiscard]] auto spec() const -> std::string { return "127.0.0.1:" + std::to_string(port_); }

  /// set_latency: forwards each chunk read in `direction` `latency` plus a
  /// uniform -`jitter`..+`jitter` (at least 0) after it was read; chunks keep
  /// their order. Chunks already delayed keep their time. 0, 0: no latency.
  void set_latency(Direction direction, std::chrono::milliseconds latency,
                   std::chrono::milliseconds jitter = std::chrono::milliseconds{0}) {
    change([&](Faults& faults) {
      for_each(faults, direction, [&](FlowFaults& flow) {
        flow.latency = std::max(latency, std::chrono::milliseconds{0});
        flow.jitter = std::max(jitter, std::chrono::milliseconds{0});
      });
    });
  }

  /// set_trickle: forwards at most `slice_bytes` in `direction` every
  /// `slice_interval` per connection (the first slice at once). A
  /// `slice_bytes` of 0 ends the trickle.
  void set_trickle(Direction direction, std::size_t slice_bytes,
                   std::chrono::milliseconds slice_interval) {
    change([&](Faults& faults) {
      for_each(faults, direction, [&](FlowFaults& flow) {
        flow.slice_bytes = slice_bytes;
        flow.slice_interval = std::max(slice_interval, std::chrono::milliseconds{0});
      });
    });
  }

  /// set_limit: forwards only the first `limit_bytes` of `direction` of each
  /// connection (counted from its start, so a connection that already
  /// forwarded that much is cut at once), then does `action`. kNoLimit ends
  /// the limit.
  void set_limit(Direction direction, std::size_t limit_bytes,
                 LimitAction action = LimitAction::kClose) {
    change([&](Faults& faults) {
      for_each(faults, direction, [&](FlowFaults& flow) {
        flow.limit = limit_bytes;
        flow.limit_action = action;
      });
    });
  }

  /// set_blackhole: while `on`, the proxy reads `direction` and drops what it
  /// reads (and what it held for it): nothing is forwarded that way, not even
  /// the end of the stream. Connections stay open.
  void set_blackhole(Direction direction, bool on = true) {
    change([&](Faults& faults) {
      for_each(faults, direction, [&](FlowFaults& flow) { flow.blackhole = on; });
    });
  }

  /// reset: resets every live connection now, both its sockets (SO_LINGER 0,
  /// then close: the peers read ECONNRESET); with `new_connections_too`, also
  /// every connection accepted from now on, until heal().
  void reset(bool new_connections_too = false) {
    change([&](Faults& faults) {
      ++faults.resets;
      faults.reset_new = new_connections_too;
    });
  }

  /// set_refusal: what happens to new connections (Refusal::kNone: proxy
  /// them). Live connections are untouched.
  void set_refusal(Refusal refusal) {
    change([&](Faults& faults) { faults.refusal = refusal; });
  }

  /// heal: turns every fault off (resets of new connections and refusals
  /// included). Bytes already delayed keep their time; what was dropped stays
  /// dropped.
  void heal() {
    change([](Faults& faults) {
      const std::uint64_t resets = faults.resets;
      faults = Faults{};
      faults.resets = resets;
    });
  }

  /// accepted: connections accepted so far, those closed at once included.
  [[nodiscard]] auto accepted() const noexcept -> std::size_t { return accepted_.load(); }
  /// refused: connections accepted and closed (or reset) at once: refusals,
  /// resets of new connections, connections over max_connections, upstream
  /// connections that failed.
  [[nodiscard]] auto refused() const noexcept -> std::size_t { return refused_.load(); }
  /// live: connections being proxied now (a connection leaves the count
  /// before its sockets close).
  [[nodiscard]] auto live() const noexcept -> std::size_t { return live_.load(); }
  /// forwarded: bytes written to the destination in `direction` (kBoth: the sum).
  [[nodiscard]] auto forwarded(Direction direction) const noexcept -> std::size_t {
    return sum(forwarded_, direction);
  }
  /// dropped: bytes read in `direction` and never forwarded (blackhole, stall).
  [[nodiscard]] auto dropped(Direction direction) const noexcept -> std::size_t {
    return sum(dropped_, direction);
  }
  /// peak_buffered: the most bytes one connection held for one direction so far.
  [[nodiscard]] auto peak_buffered() const noexcept -> std::size_t { return peak_buffered_.load(); }

 private:
  using Clock = std::chrono::steady_clock;
  using Counters = std::array<std::atomic<std::size_t>, 2>;

  // The faults of one direction.
  struct FlowFaults {
    std::chrono::milliseconds latency{0};
    std::chrono::milliseconds jitter{0};
    std::size_t slice_bytes = 0;
    std::chrono::milliseconds slice_interval{0};
    std::size_t limit = kNoLimit;
    LimitAction limit_action = LimitAction::kClose;
    bool blackhole = false;
  };

  // Everything a setter changes; the proxy thread works on a copy.
  struct Faults {
    std::array<FlowFaults, 2> flows;  // [0] upstream, [1] downstream
    Refusal refusal = Refusal::kNone;
    bool reset_new = false;
    std::uint64_t resets = 0;  // reset() calls so far
  };

  // Bytes read from one side and not yet written to the other.
  struct Chunk {
    Clock::time_point due;
    std::string bytes;
    std::size_t sent = 0;
  };

  // One direction of a connection.
  struct Flow {
    std::deque<Chunk> queue;
    std::size_t queued = 0;     // bytes in queue, not yet sent
    std::size_t forwarded = 0;  // bytes written to the destination
    Clock::time_point last_due{};
    Clock::time_point next_slice{};
    bool eof = false;      // the source ended its stream
    bool shut = false;     // the destination was shut down for writing
    bool blocked = false;  // the destination's send buffer is full
  };

  enum class Ending : std::uint8_t { kNone, kClose, kReset };

  struct Connection {
    detail::FileDescriptor client;
    detail::FileDescriptor server;
    bool connected = false;
    std::array<Flow, 2> flows;  // [0] client to server, [1] server to client
    Ending ending = Ending::kNone;

    [[nodiscard]] auto source(std::size_t f) const noexcept -> int {
      return f == 0 ? client.get() : server.get();
    }
    [[nodiscard]] auto destination(std::size_t f) const noexcept -> int {
      return f == 0 ? server.get() : client.get();
    }
  };

  template <typename Apply>
  static void for_each(Faults& faults, Direction direction, Apply apply) {
    const auto bits = static_cast<unsigned>(direction);
    for (std::size_t f = 0; f < 2; ++f) {
      if ((bits & (1U << f)) != 0) {
        apply(faults.flows[f]);
      }
    }
  }

  [[nodiscard]] static auto sum(const Counters& counters, Direction direction) noexcept
      -> std::size_t {
    const auto bits = static_cast<unsigned>(direction);
    std::size_t total = 0;
    for (std::size_t f = 0; f < 2; ++f) {
      if ((bits & (1U << f)) != 0) {
        total += counters[f].load();
      }
    }
    return total;
  }

  // Changes the faults and waits until the proxy thread has applied them.
  template <typename Change>
  void change(Change change_faults) {
    std::unique_lock lock(mutex_);
    change_faults(faults_);
    const std::uint64_t version = ++version_;
    wake();
    if (!applied_.wait_for(lock, kApplyTimeout, [&] { return applied_version_ >= version; })) {
      detail::throw_error("fault proxy: the proxy thread did not apply a change within " +
                          std::to_string(kApplyTimeout.count()) + " ms");
    }
  }

  void wake() const noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t wrote = ::write(wake_.get(), &one, sizeof one);
  }

  static void set_no_delay(int fd) noexcept {
    const int on = 1;
    static_cast<void>(::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on));
  }

  // Closes with RST: SO_LINGER 0, then close.
  static void reset_socket(detail::FileDescriptor& fd) noexcept {
    if (!fd.valid()) {
      return;
    }
    const linger hard{1, 0};
    static_cast<void>(::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard));
    fd.reset();
  }

  // Closes with FIN after what was written: reads what the peer sent first,
  // as closing a socket with unread bytes sends RST instead.
  static void close_socket(detail::FileDescriptor& fd) noexcept {
    if (!fd.valid()) {
      return;
    }
    char buffer[4096];
    for (int i = 0; i < 64 && ::recv(fd.get(), buffer, sizeof buffer, MSG_DONTWAIT) > 0; ++i) {
    }
    fd.reset();
  }

  // Listens on port_ (0 the first time: the kernel picks it).
  auto open_listener() -> bool {
    detail::FileDescriptor fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) {
      return false;
    }
    const int on = 1;
    static_cast<void>(::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on));
    sockaddr_in address = detail::loopback_address(port_);
    socklen_t length = sizeof address;
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
        ::listen(fd.get(), 64) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return false;
    }
    if (port_ == 0) {
      port_ = ntohs(address.sin_port);  // before the thread starts; the same port afterwards
    }
    listener_ = std::move(fd);
    return true;
  }

  void serve() noexcept {
    std::vector<std::unique_ptr<Connection>> connections;
    std::uint64_t resets_done = 0;
    try {
      while (!stop_) {
        Faults faults;
        std::uint64_t version = 0;
        {
          const std::lock_guard lock(mutex_);
          faults = faults_;
          version = version_;
        }
        if (faults.resets != resets_done) {
          resets_done = faults.resets;
          for (const auto& connection : connections) {
            connection->ending = Ending::kReset;
          }
          end_connections(connections);
        }
        if (faults.refusal == Refusal::kUnlisten) {
          listener_.reset();
        } else if (!listener_.valid()) {
          static_cast<void>(open_listener());  // retried every step until it listens
        }
        {
          const std::lock_guard lock(mutex_);
          applied_version_ = version;
        }
        applied_.notify_all();
        step(connections, faults);
      }
    } catch (...) {
      // Out of memory: stop serving; setters report it (kApplyTimeout).
    }
    live_ = 0;
  }

  // One poll() and what follows it.
  void step(std::vector<std::unique_ptr<Connection>>& connections, const Faults& faults) {
    std::vector<pollfd> fds;
    fds.reserve(2 + 2 * connections.size());
    fds.push_back(pollfd{wake_.get(), POLLIN, 0});
    fds.push_back(pollfd{listener_.valid() ? listener_.get() : -1, POLLIN, 0});
    std::chrono::milliseconds timeout = kPollStep;
    const Clock::time_point before = Clock::now();
    for (const auto& connection : connections) {
      short client_events = 0;
      short server_events = 0;
      for (std::size_t f = 0; f < 2; ++f) {
        const Flow& flow = connection->flows[f];
        const FlowFaults& flow_faults = faults.flows[f];
        short& source_events = f == 0 ? client_events : server_events;
        short& destination_events = f == 0 ? server_events : client_events;
        if (!flow.eof && (f == 0 || connection->connected) &&
            (flow.queued < options_.max_buffered_bytes || flow_faults.blackhole)) {
          source_events |= POLLIN;
        }
        if (flow.blocked) {
          destination_events |= POLLOUT;
        } else if (connection->connected && !flow.queue.empty() && !flow_faults.blackhole) {
          Clock::time_point ready = flow.queue.front().due;
          if (flow_faults.slice_bytes > 0) {
            ready = std::max(ready, flow.next_slice);
          }
          timeout = std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(
                                          std::max(ready - before, Clock::duration::zero())));
        }
      }
      if (!connection->connected) {
        server_events = POLLOUT;
      }
      // A socket with nothing to wait for is left out: poll() would report
      // its hang-up every time.
      fds.push_back(pollfd{client_events != 0 ? connection->client.get() : -1, client_events, 0});
      fds.push_back(pollfd{server_events != 0 ? connection->server.get() : -1, server_events, 0});
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) < 0 && errno != EINTR) {
      return;
    }
    if ((fds[0].revents & POLLIN) != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t got = ::read(wake_.get(), &count, sizeof count);
    }
    for (std::size_t c = 0; c < connections.size(); ++c) {
      serve_connection(*connections[c], faults, fds[2 + 2 * c].revents, fds[3 + 2 * c].revents);
    }
    end_connections(connections);
    if ((fds[1].revents & POLLIN) != 0) {
      accept_connections(connections, faults);
    }
    live_ = connections.size();
  }

  // Removes the connections whose ending is set, then closes them: live()
  // already excludes a connection when its peers see it end.
  void end_connections(std::vector<std::unique_ptr<Connection>>& connections) {
    const auto ending = std::stable_partition(connections.begin(), connections.end(),
                                              [](const std::unique_ptr<Connection>& connection) {
                                                return connection->ending == Ending::kNone;
                                              });
    std::vector<std::unique_ptr<Connection>> ended(std::make_move_iterator(ending),
                                                   std::make_move_iterator(connections.end()));
    connections.erase(ending, connections.end());
    live_ = connections.size();
    for (const auto& connection : ended) {
      if (connection->ending == Ending::kReset) {
        reset_socket(connection->client);
        reset_socket(connection->server);
      } else {
        close_socket(connection->client);
        close_socket(connection->server);
      }
    }
  }

  void accept_connections(std::vector<std::unique_ptr<Connection>>& connections,
                          const Faults& faults) {
    for (int i = 0; i < 64; ++i) {
      detail::FileDescriptor client(
          ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!client.valid()) {
        return;
      }
      ++accepted_;
      if (faults.reset_new) {
        ++refused_;
        reset_socket(client);
        continue;
      }
      if (faults.refusal != Refusal::kNone || connections.size() >= options_.max_connections) {
        ++refused_;
        close_socket(client);
        continue;
      }
      auto connection = std::make_unique<Connection>();
      connection->client = std::move(client);
      connection->server.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
      if (!connection->server.valid()) {
        ++refused_;
        close_socket(connection->client);
        continue;
      }
      set_no_delay(connection->client.get());
      set_no_delay(connection->server.get());
      if (::connect(connection->server.get(), reinterpret_cast<const sockaddr*>(&upstream_),
                    sizeof upstream_) == 0) {
        connection->connected = true;
      } else if (errno != EINPROGRESS) {
        ++refused_;
        close_socket(connection->client);
        continue;
      }
      connections.push_back(std::move(connection));
      live_ = connections.size();
    }
  }

  void serve_connection(Connection& connection, const Faults& faults, short client_revents,
                        short server_revents) {
    const Clock::time_point now = Clock::now();
    if (!connection.connected && server_revents != 0) {
      int status = 0;
      socklen_t length = sizeof status;
      if (::getsockopt(connection.server.get(), SOL_SOCKET, SO_ERROR, &status, &length) != 0 ||
          status != 0) {
        ++refused_;
        connection.ending = Ending::kClose;
        return;
      }
      connection.connected = true;
      server_revents = 0;
    }
    for (std::size_t f = 0; f < 2; ++f) {
      const short revents = f == 0 ? client_revents : server_revents;
      if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        read_flow(connection, f, faults.flows[f], now);
      }
      if (connection.ending != Ending::kNone) {
        return;
      }
    }
    if (!connection.connected) {
      if (connection.flows[0].eof) {
        connection.ending = Ending::kClose;  // the client left before the server answered
      }
      return;
    }
    for (std::size_t f = 0; f < 2 && connection.ending == Ending::kNone; ++f) {
      pump(connection, f, faults.flows[f], now);
    }
    if (connection.ending == Ending::kNone && connection.flows[0].shut &&
        connection.flows[1].shut) {
      connection.ending = Ending::kClose;
    }
  }

  // Reads once from the source of flow `f`.
  void read_flow(Connection& connection, std::size_t f, const FlowFaults& flow_faults,
                 Clock::time_point now) {
    Flow& flow = connection.flows[f];
    if (flow.eof) {
      return;
    }
    std::string bytes(kReadSize, '\0');
    const ssize_t got = ::recv(connection.source(f), bytes.data(), bytes.size(), 0);
    if (got < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        connection.ending = Ending::kReset;  // pass the reset on
      }
      return;
    }
    if (got == 0) {
      flow.eof = true;
      return;
    }
    const auto size = static_cast<std::size_t>(got);
    if (flow_faults.blackhole || stalled(flow, flow_faults)) {
      dropped_[f] += size;
      return;
    }
    bytes.resize(size);
    auto delay = flow_faults.latency;
    if (flow_faults.jitter.count() > 0) {
      const auto span = static_cast<std::uint64_t>(2 * flow_faults.jitter.count() + 1);
      delay += std::chrono::milliseconds{static_cast<std::int64_t>(rng_() % span) -
                                         flow_faults.jitter.count()};
      delay = std::max(delay, std::chrono::milliseconds{0});
    }
    const Clock::time_point due = std::max(now + delay, flow.last_due);
    flow.last_due = due;
    flow.queue.push_back(Chunk{due, std::move(bytes), 0});
    flow.queued += size;
    std::size_t peak = peak_buffered_.load();
    while (flow.queued > peak && !peak_buffered_.compare_exchange_weak(peak, flow.queued)) {
    }
  }

  [[nodiscard]] static auto stalled(const Flow& flow, const FlowFaults& flow_faults) noexcept
      -> bool {
    return flow_faults.limit_action == LimitAction::kStall && flow.forwarded >= flow_faults.limit;
  }

  void drop_queue(Flow& flow, std::size_t f) noexcept {
    dropped_[f] += flow.queued;
    flow.queue.clear();
    flow.queued = 0;
  }

  // Writes what flow `f` may forward now.
  void pump(Connection& connection, std::size_t f, const FlowFaults& flow_faults,
            Clock::time_point now) {
    Flow& flow = connection.flows[f];
    flow.blocked = false;
    if (!connection.connected) {
      return;
    }
    if (flow_faults.blackhole) {
      drop_queue(flow, f);
      return;
    }
    if (flow.forwarded >= flow_faults.limit) {
      if (flow_faults.limit_action == LimitAction::kClose) {
        connection.ending = Ending::kClose;
      } else {
        drop_queue(flow, f);
      }
      return;
    }
    std::size_t allowance = flow_faults.limit - flow.forwarded;
    if (flow_faults.slice_bytes > 0) {
      if (now < flow.next_slice) {
        return;
      }
      allowance = std::min(allowance, flow_faults.slice_bytes);
    }
    std::size_t sent_now = 0;
    while (!flow.queue.empty() && allowance > 0 && flow.queue.front().due <= now) {
      Chunk& chunk = flow.queue.front();
      const std::size_t want = std::min(chunk.bytes.size() - chunk.sent, allowance);
      const ssize_t wrote =
          ::send(connection.destination(f), chunk.bytes.data() + chunk.sent, want, MSG_NOSIGNAL);
      if (wrote < 0) {
        if (errno == EINTR) {
          continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          flow.blocked = true;
          break;
        }
        connection.ending = Ending::kReset;  // pass the reset on
        return;
      }
      const auto size = static_cast<std::size_t>(wrote);
      chunk.sent += size;
      flow.queued -= size;
      flow.forwarded += size;
      forwarded_[f] += size;
      allowance -= size;
      sent_now += size;
      if (chunk.sent == chunk.bytes.size()) {
        flow.queue.pop_front();
      } else if (size < want) {
        flow.blocked = true;
        break;
      }
    }
    if (flow_faults.slice_bytes > 0 && sent_now > 0) {
      flow.next_slice = now + flow_faults.slice_interval;
    }
    if (flow.forwarded >= flow_faults.limit) {
      if (flow_faults.limit_action == LimitAction::kClose) {
        connection.ending = Ending::kClose;
      } else {
        drop_queue(flow, f);
      }
      return;
    }
    if (flow.eof && flow.queue.empty() && !flow.shut) {
      static_cast<void>(::shutdown(connection.destination(f), SHUT_WR));
      flow.shut = true;
    }
  }

  FaultProxyOptions options_;
  sockaddr_in upstream_{};
  detail::FileDescriptor listener_;  // the proxy thread's once it runs
  detail::FileDescriptor wake_{::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};
  std::uint16_t port_ = 0;
  std::mt19937_64 rng_;  // the proxy thread's

  std::mutex mutex_;
  std::condition_variable applied_;
  Faults faults_;                      // guarded by mutex_
  std::uint64_t version_ = 0;          // guarded by mutex_: changes made
  std::uint64_t applied_version_ = 0;  // guarded by mutex_: changes the thread applied

  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> accepted_{0};
  std::atomic<std::size_t> refused_{0};
  std::atomic<std::size_t> live_{0};
  Counters forwarded_{};
  Counters dropped_{};
  std::atomic<std::size_t> peak_buffered_{0};
  std::thread thread_;
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_FAULT_PROXY_HPP_
