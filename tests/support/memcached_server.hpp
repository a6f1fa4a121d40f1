// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_MEMCACHED_SERVER_HPP_
#define MEMSHARD_TESTS_SUPPORT_MEMCACHED_SERVER_HPP_

// memcached_server.hpp: MemcachedServer, a real memcached process on
// 127.0.0.1 owned by a test or a benchmark, and a raw text-protocol client to
// talk to it directly.
//
// The server listens on a port the kernel picked, is ready when the
// constructor returns (it answered a "stats" request with its own pid), and is
// gone when the object is destroyed. If the owning process dies first (a
// crashed test), the kernel kills the server: it runs with a parent-death
// signal (it is a ChildProcess, support/child_process.hpp). Linux only.
//
// The binary is, in order: $MEMSHARD_MEMCACHED, the path given to the
// constructor, the MEMSHARD_MEMCACHED_BINARY macro, "memcached" from PATH.
// A server with SASL (with_sasl) speaks only the binary protocol.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "support/child_process.hpp"

namespace memshard::testing {
namespace detail {

using Clock = std::chrono::steady_clock;

/// kLoopback: 127.0.0.1 in host byte order.
inline constexpr std::uint32_t kLoopback = 0x7F000001U;

[[noreturn]] inline void throw_error(std::string_view what) {
  std::string message = "memshard::testing: ";
  message.append(what);
  throw std::runtime_error(message);
}

[[nodiscard]] inline auto errno_text(int error) -> std::string {
  return std::generic_category().message(error);
}

/// FileDescriptor: owns one file descriptor.
class FileDescriptor {
 public:
  FileDescriptor() noexcept = default;
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  auto operator=(const FileDescriptor&) -> FileDescriptor& = delete;
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  auto operator=(FileDescriptor&& other) noexcept -> FileDescriptor& {
    if (this != &other) {
      reset(std::exchange(other.fd_, -1));
    }
    return *this;
  }
  ~FileDescriptor() { reset(); }

  [[nodiscard]] auto get() const noexcept -> int { return fd_; }
  [[nodiscard]] auto valid() const noexcept -> bool { return fd_ >= 0; }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

[[nodiscard]] inline auto loopback_address(std::uint16_t port) noexcept -> sockaddr_in {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(kLoopback);
  return address;
}

/// free_port: a TCP port on 127.0.0.1 that the kernel reports free right now.
/// Another process may take it before memcached binds it; the caller retries.
[[nodiscard]] inline auto free_port() -> std::uint16_t {
  const FileDescriptor fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    throw_error("socket() failed: " + errno_text(errno));
  }
  sockaddr_in address = loopback_address(0);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    throw_error("cannot bind 127.0.0.1:0 to find a free port: " + errno_text(errno));
  }
  socklen_t length = sizeof address;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw_error("getsockname() failed: " + errno_text(errno));
  }
  return ntohs(address.sin_port);
}

/// listen_loopback: a socket listening on 127.0.0.1 on a port the kernel picks, which it
/// stores in `port`; throws what failed.
[[nodiscard]] inline auto listen_loopback(std::uint16_t& port, int backlog = 16) -> FileDescriptor {
  FileDescriptor fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = loopback_address(0);
  socklen_t length = sizeof address;
  if (!fd.valid() || ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::listen(fd.get(), backlog) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw_error("cannot listen on 127.0.0.1: " + errno_text(errno));
  }
  port = ntohs(address.sin_port);
  return fd;
}

/// remaining_ms: milliseconds until `deadline`, at least 0, for poll().
[[nodiscard]] inline auto remaining_ms(Clock::time_point deadline) noexcept -> int {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left, 0, 60'000));
}

/// wait_for: polls `fd` for `events` until `deadline`; false on timeout.
[[nodiscard]] inline auto wait_for(int fd, short events, Clock::time_point deadline) -> bool {
  for (;;) {
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, remaining_ms(deadline));
    if (ready > 0) {
      return true;
    }
    if (ready == 0) {
      return false;
    }
    if (errno != EINTR) {
      throw_error("poll() failed: " + errno_text(errno));
    }
  }
}

/// connect_loopback: a connected TCP socket to 127.0.0.1:`port`, or an invalid
/// descriptor with `error` set (ECONNREFUSED, ETIMEDOUT, ...).
[[nodiscard]] inline auto connect_loopback(std::uint16_t port, Clock::time_point deadline,
                                           int& error) -> FileDescriptor {
  FileDescriptor fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) {
    error = errno;
    return {};
  }
  const sockaddr_in address = loopback_address(port);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
    return fd;
  }
  if (errno != EINPROGRESS) {
    error = errno;
    return {};
  }
  if (!wait_for(fd.get(), POLLOUT, deadline)) {
    error = ETIMEDOUT;
    return {};
  }
  int status = 0;
  socklen_t length = sizeof status;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &status, &length) != 0) {
    error = errno;
    return {};
  }
  if (status != 0) {
    error = status;
    return {};
  }
  return fd;
}

[[nodiscard]] inline auto parse_size(std::string_view text, std::size_t& value) noexcept -> bool {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

/// nth_token: the `n`th space-separated token of `line` (0-based), or "".
[[nodiscard]] inline auto nth_token(std::string_view line, std::size_t n) noexcept
    -> std::string_view {
  std::size_t pos = 0;
  for (std::size_t i = 0;; ++i) {
    while (pos < line.size() && line[pos] == ' ') {
      ++pos;
    }
    const std::size_t end = std::min(line.find(' ', pos), line.size());
    if (pos >= line.size()) {
      return {};
    }
    if (i == n) {
      return line.substr(pos, end - pos);
    }
    pos = end;
  }
}

/// reply_complete: whether `reply` holds the whole answer to `request`, a single
/// text-protocol command.
///
/// Storage, delete, arithmetic, touch, flush_all, version and the other
/// one-line answers end at the first "\r\n". get/gets/gat/gats and stats answer
/// a list of VALUE (with data blocks), STAT, ITEM or PREFIX lines closed by
/// "END"; their one-line answers (a miss: "END", "stats reset": "RESET", an
/// error) end at once. A meta command ("mg", ...) that returns a value ("VA")
/// ends after its data block.
[[nodiscard]] inline auto reply_complete(std::string_view request, std::string_view reply) noexcept
    -> bool {
  const std::string_view verb = nth_token(request.substr(0, request.find('\r')), 0);
  const bool listing =
      verb == "get" || verb == "gets" || verb == "gat" || verb == "gats" || verb == "stats";
  std::size_t pos = 0;
  for (bool first = true;; first = false) {
    const std::size_t eol = reply.find("\r\n", pos);
    if (eol == std::string_view::npos) {
      return false;
    }
    const std::string_view line = reply.substr(pos, eol - pos);
    pos = eol + 2;
    if (line.starts_with("VA ") && first && !listing) {
      std::size_t bytes = 0;
      return parse_size(nth_token(line, 1), bytes) && reply.size() >= pos + bytes + 2;
    }
    if (!listing) {
      return true;
    }
    if (line.starts_with("VALUE ")) {
      std::size_t bytes = 0;
      if (!parse_size(nth_token(line, 3), bytes)) {
        return true;  // not a value line memcached would send; stop reading
      }
      pos += bytes + 2;
      if (pos > reply.size()) {
        return false;
      }
      continue;
    }
    const bool item_line =
        line.starts_with("STAT ") || line.starts_with("ITEM ") || line.starts_with("PREFIX ");
    if (line == "END" || (first && !item_line) || line.starts_with("ERROR") ||
        line.starts_with("CLIENT_ERROR") || line.starts_with("SERVER_ERROR")) {
      return true;
    }
  }
}

/// exchange: sends `request` to 127.0.0.1:`port` on a new connection and reads
/// until reply_complete() or `deadline`. Throws std::runtime_error when it
/// cannot connect, the peer closes early, or the deadline passes.
[[nodiscard]] inline auto exchange(std::uint16_t port, std::string_view request,
                                   Clock::time_point deadline, std::string_view label)
    -> std::string {
  int error = 0;
  const FileDescriptor fd = connect_loopback(port, deadline, error);
  if (!fd.valid()) {
    throw_error("cannot connect to " + std::string(label) + ": " + errno_text(error));
  }
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!wait_for(fd.get(), POLLOUT, deadline)) {
        throw_error("timed out sending to " + std::string(label));
      }
    } else {
      throw_error("send to " + std::string(label) + " failed: " + errno_text(errno));
    }
  }
  std::string reply;
  char buffer[16384];
  while (!reply_complete(request, reply)) {
    if (!wait_for(fd.get(), POLLIN, deadline)) {
      throw_error("no complete reply from " + std::string(label) + " in time to '" +
                  std::string(request.substr(0, 60)) + "'; got " + std::to_string(reply.size()) +
                  " bytes: '" + reply.substr(0, 200) + "'");
    }
    const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n > 0) {
      reply.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      if (reply.empty() && nth_token(request, 0) != "quit") {
        throw_error(std::string(label) + " closed the connection without a reply");
      }
      break;  // the peer closed: whatever arrived is the reply ("quit" gets none)
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      throw_error("recv from " + std::string(label) + " failed: " + errno_text(errno));
    }
  }
  return reply;
}

/// binary_version_answers: whether 127.0.0.1:`port` answers a binary-protocol
/// version request (magic 0x80, opcode 0x0b) with a response header (magic
/// 0x81) before `deadline`.
[[nodiscard]] inline auto binary_version_answers(std::uint16_t port, Clock::time_point deadline)
    -> bool {
  int error = 0;
  const FileDescriptor fd = connect_loopback(port, deadline, error);
  if (!fd.valid()) {
    return false;
  }
  unsigned char request[24] = {0x80, 0x0b};
  if (::send(fd.get(), request, sizeof request, MSG_NOSIGNAL) !=
      static_cast<ssize_t>(sizeof request)) {
    return false;
  }
  unsigned char reply[24];
  std::size_t got = 0;
  while (got < sizeof reply) {
    if (!wait_for(fd.get(), POLLIN, deadline)) {
      return false;
    }
    const ssize_t n = ::recv(fd.get(), reply + got, sizeof reply - got, 0);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        continue;
      }
      return false;
    }
    got += static_cast<std::size_t>(n);
  }
  return reply[0] == 0x81 && reply[1] == 0x0b;
}

/// find_in_path: the first executable `name` in $PATH, or "" (a name with a
/// '/' is returned as is).
[[nodiscard]] inline auto find_in_path(const std::string& name) -> std::string {
  if (name.find('/') != std::string::npos) {
    return name;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    std::string candidate(dir.empty() ? std::string_view(".") : dir);
    candidate.append("/").append(name);
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) {
      return {};
    }
    dirs.remove_prefix(colon + 1);
  }
}

/// nobody_credentials: the user the child switches to before exec when we are root.
[[nodiscard]] inline auto nobody_credentials() -> std::optional<UserIds> {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r("nobody", &entry, buffer.data(), buffer.size(), &found) != 0 ||
      found == nullptr) {
    return std::nullopt;
  }
  return UserIds{entry.pw_uid, entry.pw_gid};
}

}  // namespace detail

/// MemcachedServer: one memcached child process listening on 127.0.0.1, for
/// tests and benchmarks. Runs `memcached -l 127.0.0.1 -p PORT -U 0 -t 1 -m 64`
/// (plus `-u nobody` when run as root), with stdout and stderr going to a
/// private log (see log()).
///
/// Lifetime: the constructor returns once the server answers requests; the
/// destructor stops it (SIGTERM, SIGKILL after kStopTimeout) and reaps it. The
/// server also gets SIGKILL if the thread that started it exits, so a crashed
/// test leaves nothing behind. (As root, the child becomes "nobody" before
/// exec: memcached's own `-u` would clear that parent-death signal.) Move-only.
///
/// Exception guarantee: the constructor and restart() throw std::runtime_error
/// with a message naming the binary, port and cause (binary missing, the
/// process exited, no answer within the start timeout), and leave no process.
/// stop(), the accessors and the destructor never throw.
///
/// **Example**:
///   memshard::testing::MemcachedServer server;
///   server.command("set k 0 0 1\r\nv\r\n");   // "STORED\r\n"
///   server.command("get k\r\n");              // "VALUE k 0 1\r\nv\r\nEND\r\n"
///   server.stop();                            // now nothing listens on server.port()
///   server.restart();                         // a fresh, empty server, same port
class MemcachedServer {
 public:
  /// kStartTimeout: how long start-up may take before it counts as failed.
  static constexpr std::chrono::milliseconds kStartTimeout{10'000};
  /// kStopTimeout: how long stop() waits after SIGTERM before SIGKILL.
  static constexpr std::chrono::milliseconds kStopTimeout{5'000};
  /// kStartAttempts: fresh ports tried when memcached exits during start-up
  /// (another process took the port between the probe and memcached's bind).
  static constexpr int kStartAttempts = 5;
  /// kCommandTimeout: the default bound for command().
  static constexpr std::chrono::milliseconds kCommandTimeout{5'000};

  /// Starts a server on a free port. `binary` is used when $MEMSHARD_MEMCACHED
  /// is unset or empty; an empty `binary` means MEMSHARD_MEMCACHED_BINARY, or
  /// "memcached" in PATH. `start_timeout` bounds each start attempt.
  explicit MemcachedServer(std::string binary = {},
                           std::chrono::milliseconds start_timeout = kStartTimeout,
                           std::vector<std::string> extra_args = {},
                           std::vector<std::string> env = {})
      : binary_(choose_binary(std::move(binary))),
        start_timeout_(start_timeout),
        extra_args_(std::move(extra_args)),
        env_(std::move(env)),
        binary_only_(std::find(extra_args_.begin(), extra_args_.end(), "-S") != extra_args_.end()) {
    open_log();
    std::string last_failure;
    for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
      port_ = detail::free_port();
      std::optional<std::string> failure = launch();
      if (!failure) {
        return;
      }
      last_failure = std::move(*failure);
    }
    port_ = 0;
    detail::throw_error("memcached ('" + binary_ + "') did not start after " +
                        std::to_string(kStartAttempts) +
                        " attempts on fresh ports; last: " + last_failure);
  }

  /// with_args: a server started with `extra_args` after the usual ones (for
  /// example {"-c", "30"}, a limit of 30 connections).
  [[nodiscard]] static auto with_args(std::vector<std::string> extra_args) -> MemcachedServer {
    return MemcachedServer({}, kStartTimeout, std::move(extra_args));
  }

  /// with_sasl: a server started with -S (SASL authentication, binary
  /// protocol only) and `extra_args`, reading its SASL configuration
  /// (memcached.conf) from the directory `sasl_conf_path` (SASL_CONF_PATH in
  /// its environment). It is ready once it answers a binary version request;
  /// command() cannot talk to it (it refuses text commands).
  [[nodiscard]] static auto with_sasl(const std::string& sasl_conf_path,
                                      std::vector<std::string> extra_args = {}) -> MemcachedServer {
    extra_args.insert(extra_args.begin(), "-S");
    return MemcachedServer({}, kStartTimeout, std::move(extra_args),
                           {"SASL_CONF_PATH=" + sasl_conf_path});
  }

  MemcachedServer(const MemcachedServer&) = delete;
  auto operator=(const MemcachedServer&) -> MemcachedServer& = delete;

  MemcachedServer(MemcachedServer&& other) noexcept
      : binary_(std::move(other.binary_)),
        start_timeout_(other.start_timeout_),
        extra_args_(std::move(other.extra_args_)),
        env_(std::move(other.env_)),
        binary_only_(other.binary_only_),
        port_(std::exchange(other.port_, 0)),
        child_(std::move(other.child_)),
        log_(std::move(other.log_)) {}

  /// Move assignment stops this server first.
  auto operator=(MemcachedServer&& other) noexcept -> MemcachedServer& {
    if (this != &other) {
      stop();
      binary_ = std::move(other.binary_);
      start_timeout_ = other.start_timeout_;
      extra_args_ = std::move(other.extra_args_);
      env_ = std::move(other.env_);
      binary_only_ = other.binary_only_;
      port_ = std::exchange(other.port_, 0);
      child_ = std::move(other.child_);
      log_ = std::move(other.log_);
    }
    return *this;
  }

  ~MemcachedServer() { stop(); }

  /// port: the TCP port (kept across stop() and restart(); 0 when moved from).
  [[nodiscard]] auto port() const noexcept -> std::uint16_t { return port_; }

  /// host: "127.0.0.1".
  [[nodiscard]] static auto host() -> std::string { return "127.0.0.1"; }

  /// spec: "127.0.0.1:port", the form memshard::parse_server() reads.
  [[nodiscard]] auto spec() const -> std::string { return host() + ":" + std::to_string(port_); }

  /// pid: the process id, or -1 once stopped.
  [[nodiscard]] auto pid() const noexcept -> pid_t { return child_ ? child_->pid() : -1; }

  /// binary: the memcached executable this server runs.
  [[nodiscard]] auto binary() const noexcept -> const std::string& { return binary_; }

  /// running: whether the process is alive (it has not exited, even if it was
  /// killed from outside). Does not reap it.
  [[nodiscard]] auto running() const noexcept -> bool { return child_ && child_->running(); }

  /// stop: kills the server now (SIGTERM, then SIGKILL after kStopTimeout) and
  /// reaps it. Does nothing when already stopped.
  void stop() noexcept {
    if (!child_) {
      return;
    }
    child_->terminate();
    wake_event_loop();
    child_->stop(kStopTimeout);
    child_.reset();
  }

  /// restart: stops the server if it runs, then starts a fresh (empty) one on
  /// the same port. Throws std::runtime_error if it cannot (the port was taken
  /// meanwhile, the process exits, or it does not answer in time).
  void restart() {
    if (port_ == 0) {
      detail::throw_error("restart() on a moved-from MemcachedServer");
    }
    stop();
    if (std::optional<std::string> failure = launch()) {
      detail::throw_error("cannot restart memcached ('" + binary_ + "') on " + spec() + ": " +
                          *failure);
    }
  }

  /// command: sends one text-protocol command (for example "get k\r\n" or
  /// "stats\r\n"; a missing final "\r\n" is added) on a new connection and
  /// returns the server's whole reply, "\r\n" included. Throws
  /// std::runtime_error when the server cannot be reached or the reply is not
  /// complete within `timeout`. A command sent with "noreply" gets no reply and
  /// so times out: do not use it here.
  [[nodiscard]] auto command(std::string_view request,
                             std::chrono::milliseconds timeout = kCommandTimeout) const
      -> std::string {
    std::string text(request);
    if (!text.ends_with('\n')) {
      text.append("\r\n");
    }
    return detail::exchange(port_, text, detail::Clock::now() + timeout, spec());
  }

  /// gets_and_sets: the gets and sets the server answered so far (its stats cmd_get plus
  /// cmd_set).
  [[nodiscard]] auto gets_and_sets() const -> std::uint64_t {
    const std::string stats = command("stats");
    std::uint64_t sum = 0;
    for (const std::string_view name : {"STAT cmd_get ", "STAT cmd_set "}) {
      const auto at = stats.find(name);
      if (at != std::string::npos) {
        sum += std::stoull(stats.substr(at + name.size()));
      }
    }
    return sum;
  }

  /// accepts_connections: whether a TCP connection to the port succeeds within
  /// `timeout`.
  [[nodiscard]] auto accepts_connections(
      std::chrono::milliseconds timeout = std::chrono::milliseconds{1'000}) const -> bool {
    int error = 0;
    return detail::connect_loopback(port_, detail::Clock::now() + timeout, error).valid();
  }

  /// log: what memcached wrote to stdout and stderr since it was last started
  /// (the last 4 KiB).
  [[nodiscard]] auto log() const -> std::string {
    if (!log_.valid()) {
      return {};
    }
    struct stat info {};
    if (::fstat(log_.get(), &info) != 0) {
      return {};
    }
    const auto size = static_cast<std::size_t>(info.st_size);
    const std::size_t take = std::min<std::size_t>(size, 4096);
    std::string text(take, '\0');
    const ssize_t n = ::pread(log_.get(), text.data(), take, static_cast<off_t>(size - take));
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
      text.pop_back();
    }
    return text;
  }

 private:
  [[nodiscard]] static auto choose_binary(std::string given) -> std::string {
    if (const char* env = std::getenv("MEMSHARD_MEMCACHED"); env != nullptr && *env != '\0') {
      return env;
    }
    if (!given.empty()) {
      return given;
    }
#ifdef MEMSHARD_MEMCACHED_BINARY
    if (std::string_view(MEMSHARD_MEMCACHED_BINARY).size() > 0) {
      return MEMSHARD_MEMCACHED_BINARY;
    }
#endif
    return "memcached";
  }

  // A private log: an unlinked temporary file, appended to by every start.
  void open_log() {
    std::string path = (std::filesystem::temp_directory_path() / "memshard-memcached-XXXXXX");
    log_.reset(::mkostemp(path.data(), O_CLOEXEC));
    if (!log_.valid()) {
      detail::throw_error("cannot create a log file in " + path + ": " + detail::errno_text(errno));
    }
    ::unlink(path.c_str());
    ::fcntl(log_.get(), F_SETFL, O_APPEND);
  }

  // memcached notices SIGTERM only when its event loop wakes up, which an idle
  // server does once a second; a connection attempt wakes it at once.
  void wake_event_loop() const noexcept {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      return;
    }
    const sockaddr_in address = detail::loopback_address(port_);
    static_cast<void>(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address));
    ::close(fd);
  }

  [[nodiscard]] static auto describe_status(int status) -> std::string {
    if (WIFEXITED(status)) {
      return "exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
      return "was killed by signal " + std::to_string(WTERMSIG(status));
    }
    return "stopped (status " + std::to_string(status) + ")";
  }

  // Starts memcached on port_ and waits until it answers. Returns nothing on
  // success, or why this attempt failed in a way a new port may fix (the
  // process exited, another server holds the port). Throws for failures a new
  // port cannot fix (no binary, no answer in time).
  auto launch() -> std::optional<std::string> {
    const std::string path = detail::find_in_path(binary_);
    if (path.empty()) {
      detail::throw_error("memcached binary '" + binary_ +
                          "' not found in PATH (install memcached, or set MEMSHARD_MEMCACHED to "
                          "its path)");
    }
    const bool root = ::geteuid() == 0;
    const std::optional<UserIds> run_as = root ? detail::nobody_credentials() : std::nullopt;
    std::vector<std::string> args = {"-l", host(), "-p", std::to_string(port_), "-U", "0", "-t",
                                     "1",  "-m",   "64"};
    if (root) {
      args.insert(args.end(), {"-u", "nobody"});
    }
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    if (::ftruncate(log_.get(), 0) != 0) {
      detail::throw_error("cannot truncate the memcached log: " + detail::errno_text(errno));
    }
    // As root, the child becomes "nobody" before exec, keeping its
    // parent-death signal (memcached's own -u would clear it); if that fails,
    // memcached's -u still drops privileges.
    try {
      child_ = std::make_unique<ChildProcess>(path, std::move(args), -1, log_.get(), log_.get(),
                                              run_as, env_);
    } catch (const std::system_error& error) {
      detail::throw_error("cannot execute memcached binary '" + path +
                          "': " + detail::errno_text(error.code().value()) +
                          " (set MEMSHARD_MEMCACHED to a memcached executable)");
    }
    return wait_until_ready();
  }

  // Polls until the child answers "stats" with its own pid, with a short
  // back-off, until start_timeout_. See launch() for the result.
  auto wait_until_ready() -> std::optional<std::string> {
    const auto deadline = detail::Clock::now() + start_timeout_;
    const std::string own_pid = "STAT pid " + std::to_string(pid()) + "\r\n";
    auto pause = std::chrono::microseconds{500};
    std::string last_error = "no connection attempt yet";
    for (;;) {
      if (child_->wait_for(std::chrono::milliseconds{0})) {
        std::string why = "memcached on port " + std::to_string(port_) + " " +
                          describe_status(child_->status().value_or(0));
        child_.reset();
        if (const std::string text = log(); !text.empty()) {
          why += "; its output: " + text;
        }
        return why;
      }
      const auto now = detail::Clock::now();
      if (now >= deadline) {
        break;
      }
      try {
        const auto probe_deadline = std::min(deadline, now + std::chrono::milliseconds{500});
        if (binary_only_) {
          // A SASL server answers nothing but a few binary requests before
          // authentication: version is one. (Its pid cannot be asked; a
          // foreign server on the port makes ours exit, seen above.)
          if (detail::binary_version_answers(port_, probe_deadline)) {
            return std::nullopt;
          }
          throw std::runtime_error("no binary version reply on " + spec());
        }
        const std::string reply = detail::exchange(port_, "stats\r\n", probe_deadline, spec());
        if (reply.find(own_pid) != std::string::npos) {
          return std::nullopt;
        }
        // Someone else answers on this port: ours will fail to bind and exit.
        stop();
        return "another process answers on port " + std::to_string(port_);
      } catch (const std::runtime_error& error) {
        last_error = error.what();
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds{50'000});
    }
    const pid_t stuck = pid();
    stop();
    detail::throw_error("memcached ('" + binary_ + "', pid " + std::to_string(stuck) +
                        ") did not answer on " + spec() + " within " +
                        std::to_string(start_timeout_.count()) + " ms; last error: " + last_error +
                        "; its output: '" + log() + "'");
  }

  std::string binary_;
  std::chrono::milliseconds start_timeout_;
  std::vector<std::string> extra_args_;
  std::vector<std::string> env_;  // "NAME=value" added to its environment
  bool binary_only_ = false;      // started with -S: no text commands
  std::uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> child_;  // none while stopped
  detail::FileDescriptor log_;
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_MEMCACHED_SERVER_HPP_
