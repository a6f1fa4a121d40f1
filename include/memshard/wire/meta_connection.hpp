// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_META_CONNECTION_HPP_
#define MEMSHARD_WIRE_META_CONNECTION_HPP_

// wire/meta_connection.hpp: MetaConnection, one TCP connection to one
// memcached server speaking the meta protocol (mg, ms, md, ma, mn) and the
// line-oriented text commands (stats, lru_crawler metadump), every call bound
// by a wall-clock deadline. libmemcached 1.1 sends no meta commands, so live
// migration and the warmer use this connection beside it.
//
// Failures are values (MetaStatus), never exceptions: a timeout, a reset, a
// malformed reply or a passed deadline closes the connection, which may hold
// unread bytes, and the next call opens a new one.

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/detail/clock.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/meta_protocol.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// MetaDeadline: an absolute time point on the steady clock by which a call
/// returns.
using MetaDeadline = std::chrono::steady_clock::time_point;

/// MetaErrc: why a MetaConnection call failed.
enum class MetaErrc : std::uint8_t {
  kOk,              ///< a reply was read (of any kind: see MetaReply::kind)
  kInvalidRequest,  ///< refused before the wire (bad key or command, quiet flag)
  kNotConnected,    ///< connect() was never called
  kResolve,         ///< the host name did not resolve
  kConnect,         ///< no address of the host accepted the connection
  kTimeout,         ///< the deadline passed
  kDisconnected,    ///< the server closed or reset the connection
  kIo,              ///< another socket error
  kMalformed,       ///< the reply broke the protocol
  kNoMetaSupport,   ///< the server answered ERROR to a meta command (memcached < 1.6)
  kRefused,         ///< a text command was answered by an error line
};

/// to_string: a short name for a MetaErrc ("ok", "timeout", ...).
[[nodiscard]] constexpr auto to_string(MetaErrc code) noexcept -> std::string_view {
  switch (code) {
    case MetaErrc::kOk:
      return "ok";
    case MetaErrc::kInvalidRequest:
      return "invalid_request";
    case MetaErrc::kNotConnected:
      return "not_connected";
    case MetaErrc::kResolve:
      return "resolve";
    case MetaErrc::kConnect:
      return "connect";
    case MetaErrc::kTimeout:
      return "timeout";
    case MetaErrc::kDisconnected:
      return "disconnected";
    case MetaErrc::kIo:
      return "io";
    case MetaErrc::kMalformed:
      return "malformed";
    case MetaErrc::kNoMetaSupport:
      return "no_meta_support";
    case MetaErrc::kRefused:
      return "refused";
  }
  return "unknown";
}

inline auto operator<<(std::ostream& out, MetaErrc code) -> std::ostream& {
  return out << to_string(code);
}

/// MetaStatus: the outcome of one call: kOk, or a code, the errno (0 when
/// there is none) and a message naming the server and the cause.
struct [[nodiscard]] MetaStatus {
  MetaErrc code = MetaErrc::kOk;
  int error_number = 0;
  std::string message;

  /// ok: whether the call got its reply.
  [[nodiscard]] auto ok() const noexcept -> bool { return code == MetaErrc::kOk; }
  explicit operator bool() const noexcept { return ok(); }
};

inline auto operator<<(std::ostream& out, const MetaStatus& status) -> std::ostream& {
  out << status.code;
  if (!status.message.empty()) {
    out << ": " << status.message;
  }
  return out;
}

/// MetaOutcome: a meta reply, or why there is none.
struct [[nodiscard]] MetaOutcome {
  MetaStatus status;
  /// The reply when status is ok, and for kNoMetaSupport the ERROR reply.
  MetaReply reply;

  /// ok: whether a reply was read.
  [[nodiscard]] auto ok() const noexcept -> bool { return status.ok(); }
};

/// MetaPipelineOutcome: the replies to a pipeline, in request order.
struct [[nodiscard]] MetaPipelineOutcome {
  MetaStatus status;
  /// Every reply read; complete when status is ok.
  std::vector<MetaReply> replies;

  /// ok: whether every reply was read.
  [[nodiscard]] auto ok() const noexcept -> bool { return status.ok(); }
};

/// MetaStatsOutcome: the "STAT name value" lines of a stats command.
struct [[nodiscard]] MetaStatsOutcome {
  MetaStatus status;
  std::vector<std::pair<std::string, std::string>> stats;

  /// ok: whether every line was read.
  [[nodiscard]] auto ok() const noexcept -> bool { return status.ok(); }
  /// find: the value of stat `name`, or nothing.
  [[nodiscard]] auto find(std::string_view name) const noexcept -> std::optional<std::string_view> {
    for (const auto& [stat, value] : stats) {
      if (stat == name) {
        return value;
      }
    }
    return std::nullopt;
  }
};

/// MetaConnectionOptions: the bounds a MetaConnection enforces.
struct MetaConnectionOptions {
  /// Longest reply line and largest value (see MetaLimits).
  MetaLimits limits;
  /// Most replies a pipeline reads, and most lines stats() keeps.
  std::size_t max_replies = 65536;
};

/// MetaConnection: one non-blocking TCP connection to a memcached server for
/// meta and text commands, each call bound by an absolute deadline.
///
/// Every call returns by its deadline (plus scheduling delay): waits are
/// poll()s on the time left, never longer; whatever the server does (silent,
/// trickling a byte at a time, resetting), the call then reports kTimeout.
/// Name resolution (getaddrinfo) is the exception: it is not bounded by the
/// deadline, so pass a numeric address where that matters.
///
/// A timeout, a reset, a malformed reply, an ERROR reply, a CLIENT_ERROR
/// reply (after which memcached may send more) or an exception from a line
/// callback closes the connection; the next call reconnects to the same
/// host and port (within its own deadline). Before sending, a connection the
/// server closed while idle is noticed and reopened. Move-only; the
/// destructor closes the socket. Not thread-safe: one connection per thread.
/// Calls allocate (std::bad_alloc may escape) but never throw for I/O.
///
/// **Example**:
///   MetaConnection connection;
///   const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
///   if (auto status = connection.connect("127.0.0.1", 11211, deadline); !status) return;
///   MetaOutcome item = connection.get("k", {.value = true, .ttl = true, .cas = true}, deadline);
///   if (item.ok() && item.reply.kind == MetaReplyKind::kValue) use(item.reply.value);
class MetaConnection {
 public:
  /// MetaConnection: not connected; call connect().
  MetaConnection() = default;
  /// MetaConnection: not connected, with the given bounds.
  explicit MetaConnection(MetaConnectionOptions options) : options_(options) {}

  MetaConnection(const MetaConnection&) = delete;
  auto operator=(const MetaConnection&) -> MetaConnection& = delete;
  MetaConnection(MetaConnection&& other) noexcept
      : options_(other.options_),
        fd_(std::exchange(other.fd_, -1)),
        host_(std::move(other.host_)),
        port_(other.port_),
        unparsed_(std::move(other.unparsed_)) {}
  auto operator=(MetaConnection&& other) noexcept -> MetaConnection&;
  ~MetaConnection() { close(); }

  /// connect: closes any open connection and connects to `host` (a numeric
  /// IPv4 or IPv6 address, bracketed or not, or a name) on `port`, trying
  /// each address in turn until one accepts or `deadline` passes. Later calls
  /// reconnect to the same host and port after a failure.
  [[nodiscard]] auto connect(std::string_view host, std::uint16_t port, MetaDeadline deadline)
      -> MetaStatus;

  /// is_open: whether a socket is connected (it may still fail on next use).
  [[nodiscard]] auto is_open() const noexcept -> bool { return fd_ >= 0; }

  /// close: closes the socket and drops unread bytes; host and port are kept.
  void close() noexcept;

  /// host: the host given to connect().
  [[nodiscard]] auto host() const noexcept -> const std::string& { return host_; }
  /// port: the port given to connect().
  [[nodiscard]] auto port() const noexcept -> std::uint16_t { return port_; }

  /// get: `mg key <flags>`. A miss is a reply of kind kMiss. flags.quiet is
  /// refused (a hit would be the only answer): use pipeline().
  [[nodiscard]] auto get(std::string_view key, const MetaGetFlags& flags, MetaDeadline deadline)
      -> MetaOutcome;

  /// set: `ms key <length> <flags>` with `value`. flags.quiet is refused.
  [[nodiscard]] auto set(std::string_view key, std::string_view value, const MetaSetFlags& flags,
                         MetaDeadline deadline) -> MetaOutcome;

  /// remove: `md key <flags>`. flags.quiet is refused.
  [[nodiscard]] auto remove(std::string_view key, const MetaDeleteFlags& flags,
                            MetaDeadline deadline) -> MetaOutcome;

  /// arithmetic: `ma key <flags>`. flags.quiet is refused.
  [[nodiscard]] auto arithmetic(std::string_view key, const MetaArithmeticFlags& flags,
                                MetaDeadline deadline) -> MetaOutcome;

  /// noop: `mn`, which also detects meta support: kOk when the server answers
  /// MN, kNoMetaSupport when it answers ERROR (memcached before 1.6).
  [[nodiscard]] auto noop(MetaDeadline deadline) -> MetaStatus;

  /// pipeline: sends `requests` (meta requests made by the write_meta_*
  /// functions, quiet ones included, but no `mn`) followed by `mn` in one
  /// write, and reads every reply up to the MN, which is not returned.
  /// Replies come in request order; a quiet request that succeeded has none
  /// (match them with opaque tokens).
  [[nodiscard]] auto pipeline(std::string_view requests, MetaDeadline deadline)
      -> MetaPipelineOutcome;

  /// lines: sends the text command `command` (without "\r\n"; for example
  /// "lru_crawler metadump all") and calls `on_line(std::string_view)` for
  /// each line of the reply up to END, as lines arrive: nothing is buffered
  /// beyond one line. kRefused when the server answers an error line (its
  /// text is the message). The views are valid during the call only.
  template <class OnLine>
  [[nodiscard]] auto lines(std::string_view command, MetaDeadline deadline, OnLine&& on_line)
      -> MetaStatus {
    if (command.empty() || command.size() > options_.limits.max_line) {
      return invalid("a text command must be 1 to " + std::to_string(options_.limits.max_line) +
                     " bytes");
    }
    for (const char c : command) {
      if (!meta_parse::is_line_byte(c)) {
        return invalid("a text command must not hold control bytes");
      }
    }
    std::string request(command);
    request.append("\r\n");
    if (MetaStatus status = begin(request, deadline); !status) {
      return status;
    }
    // Closes the connection if on_line throws: the rest of the reply is unread.
    struct CloseUnlessDone {
      MetaConnection* connection;
      ~CloseUnlessDone() {
        if (connection != nullptr) {
          connection->close();
        }
      }
    } guard{this};
    TextLineParser parser(options_.limits.max_line);
    std::array<char, kReadChunk> chunk{};
    std::string pending = std::exchange(unparsed_, {});
    for (;;) {
      std::string_view bytes = pending;
      std::size_t got = 0;
      if (bytes.empty()) {
        if (MetaStatus status = receive(chunk.data(), chunk.size(), deadline, got); !status) {
          return status;
        }
        bytes = std::string_view(chunk.data(), got);
      }
      const MetaParseResult step = parser.feed(bytes, on_line);
      if (step.status == MetaParse::kMalformed) {
        return malformed(step.reason);
      }
      if (step.status == MetaParse::kComplete) {
        if (step.consumed != bytes.size()) {
          return malformed("bytes after the reply");
        }
        guard.connection = nullptr;
        if (parser.end() != TextLinesEnd::kEnd) {
          return failure(MetaErrc::kRefused, 0,
                         endpoint() + " answered '" + parser.message() + "'");
        }
        return {};
      }
      pending.clear();
    }
  }

  /// stats: `stats` (or `stats <group>`, for example "settings"): every
  /// "STAT name value" line, in order.
  [[nodiscard]] auto stats(MetaDeadline deadline, std::string_view group = {}) -> MetaStatsOutcome;

 private:
  static constexpr std::size_t kReadChunk = 16384;

  [[nodiscard]] auto endpoint() const -> std::string;

  [[nodiscard]] static auto failure(MetaErrc code, int error_number, std::string message)
      -> MetaStatus {
    return MetaStatus{code, error_number, std::move(message)};
  }

  [[nodiscard]] static auto invalid(std::string why) -> MetaStatus {
    return failure(MetaErrc::kInvalidRequest, 0, std::move(why));
  }

  [[nodiscard]] static auto quiet_refused() -> MetaStatus {
    return invalid("a quiet request has no reply on success: send it through pipeline()");
  }

  // A failure that closes the connection (it may hold unread bytes).
  auto closing(MetaErrc code, int error_number, std::string what) -> MetaStatus;

  auto malformed(std::string_view reason) -> MetaStatus {
    return closing(MetaErrc::kMalformed, 0, "malformed reply: " + std::string(reason));
  }

  auto timed_out() -> MetaStatus { return closing(MetaErrc::kTimeout, 0, "deadline passed"); }

  // Nanoseconds left until `deadline` (<= 0 once it has passed).
  [[nodiscard]] static auto left_ns(MetaDeadline deadline) noexcept -> std::int64_t;

  // Waits until `fd_` reports one of `events` (1), the deadline passes (0) or
  // poll fails (-1, errno set). Never waits past the deadline.
  [[nodiscard]] auto wait(short events, MetaDeadline deadline, short& revents) const noexcept
      -> int;

  // Resolves host_ and connects to the first address that accepts.
  auto open(MetaDeadline deadline) -> MetaStatus;

  auto connect_one(const addrinfo& address, MetaDeadline deadline) -> MetaStatus;

  // Opens the connection if needed (reopening one the server closed while
  // idle) and sends `request` whole, reading meanwhile what the server
  // answers into unparsed_ (so that a long pipeline cannot deadlock).
  auto begin(std::string_view request, MetaDeadline deadline) -> MetaStatus;

  // Whether an open, idle connection is still usable: nothing to read (no
  // close by the server, no stray bytes).
  [[nodiscard]] auto idle_and_sound() const noexcept -> bool;

  // A socket error: the peer's close or reset, or another failure.
  auto lost(int error, std::string_view call) -> MetaStatus;

  // Receives at least one byte into `buffer`, waiting until the deadline.
  auto receive(char* buffer, std::size_t size, MetaDeadline deadline, std::size_t& got)
      -> MetaStatus;

  // Reads one meta reply with `parser`, starting with unparsed_; bytes after
  // it stay in unparsed_.
  auto read_meta(MetaReplyParser& parser, MetaDeadline deadline) -> MetaOutcome;

  // Sends one request and reads its one reply; stray bytes after it are a
  // protocol error.
  auto exchange(std::string_view request, MetaDeadline deadline) -> MetaOutcome;

  MetaConnectionOptions options_;
  int fd_ = -1;
  std::string host_;
  std::uint16_t port_ = 0;
  std::string unparsed_;  // received, not yet parsed
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto MetaConnection::operator=(MetaConnection&& other) noexcept
    -> MetaConnection& {
  if (this != &other) {
    close();
    options_ = other.options_;
    fd_ = std::exchange(other.fd_, -1);
    host_ = std::move(other.host_);
    port_ = other.port_;
    unparsed_ = std::move(other.unparsed_);
  }
  return *this;
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::connect(std::string_view host, std::uint16_t port,
                                                    MetaDeadline deadline) -> MetaStatus {
  close();
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  host_.assign(host);
  port_ = port;
  return open(deadline);
}

MEMSHARD_DETAIL_INLINE void MetaConnection::close() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  unparsed_.clear();
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::get(std::string_view key, const MetaGetFlags& flags,
                                                MetaDeadline deadline) -> MetaOutcome {
  if (flags.quiet) {
    return {quiet_refused(), {}};
  }
  std::string request;
  if (auto problem = write_meta_get(request, key, flags)) {
    return {invalid(problem->message()), {}};
  }
  return exchange(request, deadline);
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::set(std::string_view key, std::string_view value,
                                                const MetaSetFlags& flags, MetaDeadline deadline)
    -> MetaOutcome {
  if (flags.quiet) {
    return {quiet_refused(), {}};
  }
  std::string request;
  if (auto problem = write_meta_set(request, key, value, flags)) {
    return {invalid(problem->message()), {}};
  }
  return exchange(request, deadline);
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::remove(std::string_view key,
                                                   const MetaDeleteFlags& flags,
                                                   MetaDeadline deadline) -> MetaOutcome {
  if (flags.quiet) {
    return {quiet_refused(), {}};
  }
  std::string request;
  if (auto problem = write_meta_delete(request, key, flags)) {
    return {invalid(problem->message()), {}};
  }
  return exchange(request, deadline);
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::arithmetic(std::string_view key,
                                                       const MetaArithmeticFlags& flags,
                                                       MetaDeadline deadline) -> MetaOutcome {
  if (flags.quiet) {
    return {quiet_refused(), {}};
  }
  std::string request;
  if (auto problem = write_meta_arithmetic(request, key, flags)) {
    return {invalid(problem->message()), {}};
  }
  return exchange(request, deadline);
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::noop(MetaDeadline deadline) -> MetaStatus {
  std::string request;
  write_meta_noop(request);
  MetaOutcome outcome = exchange(request, deadline);
  if (outcome.ok() && outcome.reply.kind != MetaReplyKind::kNoop) {
    close();
    return failure(MetaErrc::kMalformed, 0,
                   "mn answered by " + std::string(to_string(outcome.reply.kind)));
  }
  return std::move(outcome.status);
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::pipeline(std::string_view requests,
                                                     MetaDeadline deadline) -> MetaPipelineOutcome {
  MetaPipelineOutcome out;
  std::string request(requests);
  write_meta_noop(request);
  if (out.status = begin(request, deadline); !out.status) {
    return out;
  }
  MetaReplyParser parser(options_.limits);
  for (;;) {
    MetaOutcome one = read_meta(parser, deadline);
    if (!one.ok()) {
      out.status = std::move(one.status);
      return out;
    }
    if (one.reply.kind == MetaReplyKind::kNoop) {
      return out;
    }
    if (out.replies.size() >= options_.max_replies) {
      out.status = malformed("more replies than the maximum");
      return out;
    }
    out.replies.push_back(std::move(one.reply));
  }
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::stats(MetaDeadline deadline, std::string_view group)
    -> MetaStatsOutcome {
  MetaStatsOutcome out;
  std::string command = "stats";
  if (!group.empty()) {
    command.append(" ").append(group);
  }
  bool bad = false;
  out.status = lines(command, deadline, [&](std::string_view line) {
    const auto stat = split_stat_line(line);
    if (!stat || out.stats.size() >= options_.max_replies) {
      bad = true;
      return;
    }
    out.stats.emplace_back(stat->first, stat->second);
  });
  if (out.status && bad) {
    close();
    out.status = failure(MetaErrc::kMalformed, 0,
                         endpoint() + ": a stats line is not 'STAT name value', or too many");
  }
  return out;
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::endpoint() const -> std::string {
  if (host_.find(':') != std::string::npos) {
    return "[" + host_ + "]:" + std::to_string(port_);
  }
  return host_ + ":" + std::to_string(port_);
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::closing(MetaErrc code, int error_number,
                                                    std::string what) -> MetaStatus {
  close();
  std::string message = endpoint() + ": " + what;
  if (error_number != 0) {
    message.append(": ").append(std::generic_category().message(error_number));
  }
  return failure(code, error_number, std::move(message));
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::left_ns(MetaDeadline deadline) noexcept
    -> std::int64_t {
  const std::int64_t end =
      std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  return end - steady_now_ns();
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::wait(short events, MetaDeadline deadline,
                                                 short& revents) const noexcept -> int {
  for (;;) {
    const std::int64_t left = left_ns(deadline);
    if (left <= 0) {
      return 0;
    }
    pollfd entry{fd_, events, 0};
#if defined(__linux__)
    const timespec timeout{static_cast<time_t>(left / 1'000'000'000),
                           static_cast<long>(left % 1'000'000'000)};
    const int ready = ::ppoll(&entry, 1, &timeout, nullptr);
#else
    // poll() counts milliseconds: round down and loop, so as not to overrun.
    const int ready =
        ::poll(&entry, 1, static_cast<int>(std::min<std::int64_t>(left / 1'000'000, 60'000)));
#endif
    if (ready > 0) {
      revents = entry.revents;
      return 1;
    }
    if (ready < 0 && errno != EINTR) {
      return -1;
    }
  }
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::open(MetaDeadline deadline) -> MetaStatus {
  close();
  if (host_.empty()) {
    return failure(MetaErrc::kNotConnected, 0, "connect() was not called");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  // Not bounded by the deadline: getaddrinfo() blocks for as long as the
  // resolver takes (numeric addresses return at once).
  const std::string service = std::to_string(port_);
  if (const int rc = ::getaddrinfo(host_.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return failure(MetaErrc::kResolve, 0, "cannot resolve " + host_ + ": " + ::gai_strerror(rc));
  }
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
  MetaStatus last = failure(MetaErrc::kConnect, 0, endpoint() + ": no address");
  for (const addrinfo* address = found; address != nullptr; address = address->ai_next) {
    last = connect_one(*address, deadline);
    if (last || last.code == MetaErrc::kTimeout) {
      return last;
    }
  }
  return last;
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::connect_one(const addrinfo& address,
                                                        MetaDeadline deadline) -> MetaStatus {
  if (left_ns(deadline) <= 0) {
    return timed_out();
  }
  fd_ = ::socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                 address.ai_protocol);
  if (fd_ < 0) {
    return closing(MetaErrc::kIo, errno, "socket()");
  }
  const int one = 1;
  static_cast<void>(::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one));
  if (::connect(fd_, address.ai_addr, address.ai_addrlen) == 0) {
    return {};
  }
  if (errno != EINPROGRESS) {
    return closing(MetaErrc::kConnect, errno, "connect()");
  }
  short revents = 0;
  const int ready = wait(POLLOUT, deadline, revents);
  if (ready == 0) {
    return timed_out();
  }
  if (ready < 0) {
    return closing(MetaErrc::kIo, errno, "poll()");
  }
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
    return closing(MetaErrc::kIo, errno, "getsockopt()");
  }
  if (error != 0) {
    return closing(MetaErrc::kConnect, error, "connect()");
  }
  return {};
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::begin(std::string_view request, MetaDeadline deadline)
    -> MetaStatus {
  if (left_ns(deadline) <= 0) {
    // Nothing is in flight: the connection stays as it is.
    return failure(MetaErrc::kTimeout, 0, endpoint() + ": deadline passed before the request");
  }
  if (fd_ >= 0 && !idle_and_sound()) {
    close();
  }
  if (fd_ < 0) {
    if (MetaStatus status = open(deadline); !status) {
      return status;
    }
  }
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return lost(errno, "send()");
    }
    short revents = 0;
    const int ready = wait(POLLOUT | POLLIN, deadline, revents);
    if (ready == 0) {
      return timed_out();
    }
    if (ready < 0) {
      return closing(MetaErrc::kIo, errno, "poll()");
    }
    if ((revents & POLLIN) != 0) {
      std::array<char, kReadChunk> chunk{};
      const ssize_t got = ::recv(fd_, chunk.data(), chunk.size(), 0);
      if (got == 0) {
        return closing(MetaErrc::kDisconnected, 0, "the server closed the connection");
      }
      if (got > 0) {
        unparsed_.append(chunk.data(), static_cast<std::size_t>(got));
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return lost(errno, "recv()");
      }
    }
  }
  return {};
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::idle_and_sound() const noexcept -> bool {
  if (!unparsed_.empty()) {
    return false;
  }
  pollfd entry{fd_, POLLIN, 0};
  return ::poll(&entry, 1, 0) == 0;
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::lost(int error, std::string_view call) -> MetaStatus {
  const bool peer = error == ECONNRESET || error == EPIPE || error == ECONNABORTED;
  return closing(peer ? MetaErrc::kDisconnected : MetaErrc::kIo, error, std::string(call));
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::receive(char* buffer, std::size_t size,
                                                    MetaDeadline deadline, std::size_t& got)
    -> MetaStatus {
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer, size, 0);
    if (n > 0) {
      got = static_cast<std::size_t>(n);
      return {};
    }
    if (n == 0) {
      return closing(MetaErrc::kDisconnected, 0, "the server closed the connection");
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return lost(errno, "recv()");
    }
    short revents = 0;
    const int ready = wait(POLLIN, deadline, revents);
    if (ready == 0) {
      return timed_out();
    }
    if (ready < 0) {
      return closing(MetaErrc::kIo, errno, "poll()");
    }
  }
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::read_meta(MetaReplyParser& parser,
                                                      MetaDeadline deadline) -> MetaOutcome {
  std::array<char, kReadChunk> chunk{};
  for (;;) {
    std::string_view bytes = unparsed_;
    if (bytes.empty()) {
      std::size_t got = 0;
      if (MetaStatus status = receive(chunk.data(), chunk.size(), deadline, got); !status) {
        return {std::move(status), {}};
      }
      bytes = std::string_view(chunk.data(), got);
    }
    const MetaParseResult step = parser.feed(bytes);
    if (step.status == MetaParse::kMalformed) {
      return {malformed(step.reason), {}};
    }
    if (step.status == MetaParse::kNeedMore) {
      unparsed_.clear();
      continue;
    }
    const std::string rest(bytes.substr(step.consumed));
    unparsed_ = rest;
    MetaOutcome out{{}, parser.take()};
    switch (out.reply.kind) {
      case MetaReplyKind::kError:
        out.status = closing(MetaErrc::kNoMetaSupport, 0,
                             "answered ERROR: it does not know the command (no meta protocol "
                             "before memcached 1.6)");
        break;
      case MetaReplyKind::kClientError:
        close();  // memcached may send more after it (bad data chunk: ERROR)
        break;
      default:
        break;
    }
    return out;
  }
}

MEMSHARD_DETAIL_INLINE auto MetaConnection::exchange(std::string_view request,
                                                     MetaDeadline deadline) -> MetaOutcome {
  if (MetaStatus status = begin(request, deadline); !status) {
    return {std::move(status), {}};
  }
  MetaReplyParser parser(options_.limits);
  MetaOutcome out = read_meta(parser, deadline);
  if (out.ok() && !unparsed_.empty()) {
    return {malformed("bytes after the reply"), std::move(out.reply)};
  }
  return out;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_META_CONNECTION_HPP_
