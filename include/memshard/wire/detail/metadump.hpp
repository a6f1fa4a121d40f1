// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_DETAIL_METADUMP_HPP_
#define MEMSHARD_WIRE_DETAIL_METADUMP_HPP_

// wire/detail/metadump.hpp: the lines memcached's `lru_crawler metadump` sends, parsed
// strictly; the remaining TTL of a listed item on the server's own clock; the
// hotness order the warmer copies in (a sort, and a bounded "hottest N" of a
// stream); and ListingConnection, which reads a listing from its server in
// pieces, each bound by the caller's time.
//
// memcached 1.6.18 (crawler.c, crawler_metadump_eval) writes one line per live
// item, ending in a bare "\n", and "END\r\n" after the last one:
//
//   key=<URI-encoded key> exp=<-1 | absolute unix time> la=<absolute unix time>
//   cas=<u64> fetch=<yes|no> cls=<slab class> size=<item size>
//
// The times are absolute on the server's clock (its relative time plus
// process_started), so a TTL is worked out against that server's `stats time`,
// never the client's clock. `size` is the whole item (header, key, value,
// suffix: ITEM_ntotal), not the value length. Expired and flushed items are
// never listed. The same seven fields, in this order, are still what
// memcached's newest crawler.c writes: no version adds a field, so an unknown
// field is an error here, as are a missing or repeated one.

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
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/detail/clock.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/placement/key.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/meta_protocol.hpp"
#include "memshard/wire/meta_connection.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// MetadumpEntry: one item as `lru_crawler metadump` lists it.
struct MetadumpEntry {
  /// key: the key, URI-decoded; it passed check_key.
  std::string key;
  /// exp: when the item expires, in unix seconds on the server's clock;
  /// nothing when it never expires ("exp=-1").
  std::optional<std::int64_t> exp;
  /// last_access: the item's last access, in unix seconds on the server's clock.
  std::int64_t last_access = 0;
  /// cas: the item's CAS value.
  std::uint64_t cas = 0;
  /// fetched: whether the item was read since it was stored ("fetch=yes").
  bool fetched = false;
  /// slab_class: the slab class holding the item.
  std::uint32_t slab_class = 0;
  /// size: the whole item's size in memory, in bytes (header and key
  /// included), an upper bound on its value's length.
  std::uint64_t size = 0;

  friend auto operator==(const MetadumpEntry&, const MetadumpEntry&) -> bool = default;
};

/// MetadumpParse: the outcome of parse_metadump_line: an entry, or an error
/// naming the part of the line that is wrong.
struct MetadumpParse {
  /// entry: the parsed entry, when the line is valid.
  std::optional<MetadumpEntry> entry;
  /// error: why the line was rejected ("" when it was not), e.g.
  /// "metadump: field 'exp': not a number: '12x'".
  std::string error;

  /// ok: whether the line was parsed.
  [[nodiscard]] auto ok() const noexcept -> bool { return entry.has_value(); }
};

/// MetadumpLineKind: what a line of a metadump reply is.
enum class MetadumpLineKind : std::uint8_t {
  kEntry,  ///< an item line ("key=...")
  kEnd,    ///< "END": the listing is complete
  kBusy,   ///< "BUSY ...": another crawl runs; ask again later
  kError,  ///< "ERROR ...", "CLIENT_ERROR ...", "SERVER_ERROR ..." or anything else
};

/// strip_line_end: `line` without one final "\n" or "\r\n".
[[nodiscard]] constexpr auto strip_line_end(std::string_view line) noexcept -> std::string_view {
  if (line.ends_with('\n')) {
    line.remove_suffix(1);
    if (line.ends_with('\r')) {
      line.remove_suffix(1);
    }
  }
  return line;
}

/// classify_metadump_line: the kind of one reply line (with or without its
/// line end). O(1), never allocates.
[[nodiscard]] constexpr auto classify_metadump_line(std::string_view line) noexcept
    -> MetadumpLineKind {
  line = strip_line_end(line);
  if (line.starts_with("key=")) {
    return MetadumpLineKind::kEntry;
  }
  if (line == "END") {
    return MetadumpLineKind::kEnd;
  }
  if (line.starts_with("BUSY")) {
    return MetadumpLineKind::kBusy;
  }
  return MetadumpLineKind::kError;
}

/// hex_digit_value: the value of one hex digit (either case), or -1.
[[nodiscard]] constexpr auto hex_digit_value(char c) noexcept -> int {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

/// uri_decode: `text` with every "%XX" (two hex digits, either case) replaced
/// by its byte, into `out`; other bytes are kept. Returns "" on success, else
/// what is wrong with which escape. memcached's uriencode escapes every byte
/// but letters, digits and "-._~", in upper case.
[[nodiscard]] inline auto uri_decode(std::string_view text, std::string& out) -> std::string {
  out.clear();
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    const std::string_view escape = text.substr(i, 3);
    const int high = escape.size() == 3 ? hex_digit_value(escape[1]) : -1;
    const int low = escape.size() == 3 ? hex_digit_value(escape[2]) : -1;
    if (high < 0 || low < 0) {
      return "bad %-escape '" + std::string(escape) + "' at offset " + std::to_string(i);
    }
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return {};
}

/// parse_metadump_number: `text` as a decimal T (no sign, no spaces, no
/// leading '+', in range), or nothing.
template <typename T>
[[nodiscard]] constexpr auto parse_metadump_number(std::string_view text) noexcept
    -> std::optional<T> {
  if (text.empty() || text.front() < '0' || text.front() > '9') {
    return std::nullopt;
  }
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

/// parse_metadump_line: one metadump item line (a final "\n" or "\r\n" is
/// allowed) as a MetadumpEntry. Strict: fields are separated by one space;
/// each of key, exp, la, cas, fetch, cls and size must appear exactly once, in
/// any order, and nothing else; numbers are plain decimals in range; exp is -1
/// or a non-negative time; fetch is yes or no; the key must URI-decode and then
/// pass check_key. The error names the field and the offending text. O(length).
[[nodiscard]] inline auto parse_metadump_line(std::string_view line) -> MetadumpParse {
  const auto fail = [](std::string what) {
    MetadumpParse result;
    result.error = "metadump: " + std::move(what);
    return result;
  };
  line = strip_line_end(line);
  if (line.empty()) {
    return fail("empty line");
  }
  static constexpr std::string_view kNames[] = {"key", "exp", "la", "cas", "fetch", "cls", "size"};
  constexpr std::size_t kFields = std::size(kNames);
  std::string_view values[kFields] = {};
  bool seen[kFields] = {};
  std::size_t pos = 0;
  while (pos <= line.size()) {
    std::size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) {
      end = line.size();
    }
    const std::string_view token = line.substr(pos, end - pos);
    if (token.empty()) {
      return fail("empty field at offset " + std::to_string(pos));
    }
    const std::size_t equals = token.find('=');
    if (equals == std::string_view::npos) {
      return fail("field without '=': '" + std::string(token) + "'");
    }
    const std::string_view name = token.substr(0, equals);
    const auto* found = std::find(std::begin(kNames), std::end(kNames), name);
    if (found == std::end(kNames)) {
      return fail("unknown field '" + std::string(name) + "'");
    }
    const auto index = static_cast<std::size_t>(found - std::begin(kNames));
    if (seen[index]) {
      return fail("repeated field '" + std::string(name) + "'");
    }
    seen[index] = true;
    values[index] = token.substr(equals + 1);
    pos = end + 1;
  }
  for (std::size_t i = 0; i < kFields; ++i) {
    if (!seen[i]) {
      return fail("missing field '" + std::string(kNames[i]) + "'");
    }
  }
  const auto bad_number = [&](std::size_t field) {
    return fail("field '" + std::string(kNames[field]) + "': not a number: '" +
                std::string(values[field]) + "'");
  };

  MetadumpEntry entry;
  if (std::string problem = uri_decode(values[0], entry.key); !problem.empty()) {
    return fail("field 'key': " + problem + " in '" + std::string(values[0]) + "'");
  }
  if (const std::optional<KeyError> problem = check_key(entry.key)) {
    return fail("field 'key': decoded " + problem->message() + ": '" + std::string(values[0]) +
                "'");
  }
  if (values[1] != "-1") {
    const auto exp = parse_metadump_number<std::int64_t>(values[1]);
    if (!exp) {
      return bad_number(1);
    }
    entry.exp = *exp;
  }
  const auto last_access = parse_metadump_number<std::int64_t>(values[2]);
  if (!last_access) {
    return bad_number(2);
  }
  entry.last_access = *last_access;
  const auto cas = parse_metadump_number<std::uint64_t>(values[3]);
  if (!cas) {
    return bad_number(3);
  }
  entry.cas = *cas;
  if (values[4] == "yes") {
    entry.fetched = true;
  } else if (values[4] != "no") {
    return fail("field 'fetch': neither yes nor no: '" + std::string(values[4]) + "'");
  }
  const auto slab_class = parse_metadump_number<std::uint32_t>(values[5]);
  if (!slab_class) {
    return bad_number(5);
  }
  entry.slab_class = *slab_class;
  const auto size = parse_metadump_number<std::uint64_t>(values[6]);
  if (!size) {
    return bad_number(6);
  }
  entry.size = *size;

  MetadumpParse result;
  result.entry = std::move(entry);
  return result;
}

/// kRelativeExptimeLimit: memcached reads an exptime above this (30 days, in
/// seconds) as an absolute unix time, not a TTL (memcached.c realtime()).
inline constexpr std::int64_t kRelativeExptimeLimit = 60 * 60 * 24 * 30;

/// remaining_ttl: how long `entry` still lives, at `server_now` (the unix time
/// of the server that listed it: its `stats time`, never the client's clock);
/// nothing when it never expires. Zero or less means expired: skip it. memcached
/// keeps an item through the second its exp names, and a TTL of 0 would mean
/// "never", so 0 is reported as expired too.
[[nodiscard]] constexpr auto remaining_ttl(const MetadumpEntry& entry,
                                           std::int64_t server_now) noexcept
    -> std::optional<std::chrono::seconds> {
  if (!entry.exp) {
    return std::nullopt;
  }
  return std::chrono::seconds{*entry.exp - server_now};
}

/// TtlVerdict: what the warmer does with a listed item, by its TTL.
enum class TtlVerdict : std::uint8_t {
  kUnlimited,  ///< copy it with no expiry
  kRemaining,  ///< copy it with CopyTtl::remaining
  kSkip,       ///< expired, or lives less than the minimum: do not copy
};

/// CopyTtl: a TtlVerdict, and the TTL to copy with for kRemaining (else 0).
struct CopyTtl {
  TtlVerdict verdict = TtlVerdict::kSkip;
  std::chrono::seconds remaining{0};

  friend constexpr auto operator==(const CopyTtl&, const CopyTtl&) -> bool = default;
};

/// copy_ttl: the min_ttl skip rule: an item that expires in less than
/// `min_ttl` (at least 1 s) at `server_now`, on the listing server's clock, is
/// skipped; one that never expires is copied without expiry; any other is
/// copied with its exact remaining TTL.
[[nodiscard]] constexpr auto copy_ttl(const MetadumpEntry& entry, std::int64_t server_now,
                                      std::chrono::seconds min_ttl) noexcept -> CopyTtl {
  const std::optional<std::chrono::seconds> left = remaining_ttl(entry, server_now);
  if (!left) {
    return {TtlVerdict::kUnlimited, std::chrono::seconds{0}};
  }
  if (*left < std::max(min_ttl, std::chrono::seconds{1})) {
    return {TtlVerdict::kSkip, std::chrono::seconds{0}};
  }
  return {TtlVerdict::kRemaining, *left};
}

/// exptime_for_copy: the exptime argument that gives an item `ttl` seconds
/// (at least 1) on a target server whose clock reads `target_now`: the TTL
/// itself up to 30 days, else the absolute time on the target's clock, since
/// memcached reads a larger exptime as a unix time.
[[nodiscard]] constexpr auto exptime_for_copy(std::chrono::seconds ttl,
                                              std::int64_t target_now) noexcept -> std::int64_t {
  const std::int64_t seconds = std::max<std::int64_t>(ttl.count(), 1);
  return seconds <= kRelativeExptimeLimit ? seconds : target_now + seconds;
}

/// hotter: the hotness order: fetched items first, then the most recently
/// accessed, then by key (so the order is total). A strict weak order.
[[nodiscard]] inline auto hotter(const MetadumpEntry& a, const MetadumpEntry& b) noexcept -> bool {
  if (a.fetched != b.fetched) {
    return a.fetched;
  }
  if (a.last_access != b.last_access) {
    return a.last_access > b.last_access;
  }
  return a.key < b.key;
}

/// sort_hottest_first: sorts `entries` by hotter. O(n log n).
inline void sort_hottest_first(std::span<MetadumpEntry> entries) noexcept {
  std::sort(entries.begin(), entries.end(), hotter);
}

/// HottestN: keeps the `capacity` hottest entries of a stream, in bounded
/// memory (a heap whose top is the coldest kept entry).
///
/// offer() is O(log capacity); take() is O(capacity log capacity). Not
/// thread-safe. offer() and take() give the basic exception guarantee (they
/// may throw std::bad_alloc).
///
/// **Example**:
///   HottestN hottest(10'000);
///   for (MetadumpEntry& entry : chunk) hottest.offer(std::move(entry));
///   std::vector<MetadumpEntry> batch = hottest.take();   // hottest first
class HottestN {
 public:
  /// HottestN: keeps at most `capacity` entries (0 keeps none).
  explicit HottestN(std::size_t capacity) noexcept : capacity_(capacity) {}

  /// offer: keeps `entry` if fewer than capacity entries are kept or it is
  /// hotter than the coldest kept one (which is then dropped). Returns
  /// whether it was kept.
  auto offer(MetadumpEntry entry) -> bool;

  /// take: the kept entries, hottest first; leaves this empty.
  [[nodiscard]] auto take() -> std::vector<MetadumpEntry>;

  /// size: how many entries are kept.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return heap_.size(); }

  /// capacity: the most entries kept.
  [[nodiscard]] auto capacity() const noexcept -> std::size_t { return capacity_; }

 private:
  std::size_t capacity_;
  std::vector<MetadumpEntry> heap_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto HottestN::offer(MetadumpEntry entry) -> bool {
  if (capacity_ == 0) {
    return false;
  }
  if (heap_.size() < capacity_) {
    heap_.push_back(std::move(entry));
    std::push_heap(heap_.begin(), heap_.end(), hotter);
    return true;
  }
  if (!hotter(entry, heap_.front())) {
    return false;
  }
  std::pop_heap(heap_.begin(), heap_.end(), hotter);
  heap_.back() = std::move(entry);
  std::push_heap(heap_.begin(), heap_.end(), hotter);
  return true;
}

MEMSHARD_DETAIL_INLINE auto HottestN::take() -> std::vector<MetadumpEntry> {
  std::vector<MetadumpEntry> out = std::exchange(heap_, {});
  sort_hottest_first(out);
  return out;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

/// ListingConnection: one TCP connection to a memcached server for the text
/// commands of a listing (`stats`, then `lru_crawler metadump all`), whose
/// replies are read in pieces: MetaConnection::lines() reads a reply whole,
/// and a listing of millions of items takes minutes.
///
/// Each call takes a `pause` and a `deadline`. When the pause comes first the
/// call answers nothing (std::nullopt) and keeps the connection, the request's
/// unsent bytes, the line being read and the parser's state: the next call
/// resumes there. When the deadline passes, the call fails with kTimeout and
/// the connection closes. Every call first tries once without waiting (the
/// connect's outcome, a send, a read), so calls whose pause has already come
/// still get what the server has sent; a call then waits only until its pause
/// or deadline, in poll()s on the time left, and checks them again after each
/// piece it reads (at most kReadChunk bytes, each line handed to `on_line`).
/// memcached's crawler waits for a reader that pauses (it polls its client
/// for as long as it takes).
///
/// Name resolution (getaddrinfo) is not bound by the times: pass a numeric
/// address where that matters. A reply that ends in an error line (BUSY,
/// ERROR, ...) is kRefused with that line in its message, and keeps the
/// connection for another command; every other failure, or an exception from
/// `on_line`, closes it. Move-only; the destructor closes the socket. Not
/// thread-safe. Calls allocate (std::bad_alloc may escape) but never throw for
/// I/O.
///
/// **Example**:
///   ListingConnection link("127.0.0.1", 11211);
///   const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
///   std::optional<MetaStatus> done = link.connect(pause, deadline);   // nothing: call again
///   link.start("lru_crawler metadump all");
///   done = link.read(pause, deadline, [](std::string_view line) { use(line); });
class ListingConnection {
 public:
  /// kReadChunk: the most bytes read (and parsed) between two checks of the
  /// times.
  static constexpr std::size_t kReadChunk = 16384;

  /// ListingConnection: not connected yet, to `host` (a numeric IPv4 or IPv6
  /// address, bracketed or not, or a name) on `port`.
  ListingConnection(std::string_view host, std::uint16_t port);

  ListingConnection(const ListingConnection&) = delete;
  auto operator=(const ListingConnection&) -> ListingConnection& = delete;
  ListingConnection(ListingConnection&& other) noexcept
      : host_(std::move(other.host_)),
        port_(other.port_),
        fd_(std::exchange(other.fd_, -1)),
        state_(std::exchange(other.state_, State::kClosed)),
        addresses_(std::move(other.addresses_)),
        next_address_(other.next_address_),
        last_error_(other.last_error_),
        request_(std::move(other.request_)),
        sent_(other.sent_),
        parser_(std::move(other.parser_)) {}
  auto operator=(ListingConnection&& other) noexcept -> ListingConnection&;
  ~ListingConnection() { close(); }

  /// connect: connects, trying each address of the host in turn. Ok at once
  /// when connected already.
  [[nodiscard]] auto connect(MetaDeadline pause, MetaDeadline deadline)
      -> std::optional<MetaStatus>;

  /// start: sets up `command` (without "\r\n", for example "stats"), which
  /// read() sends and whose reply it reads. Needs a connection with no
  /// command under way (connect() answered ok, and any earlier reply was read
  /// to its end); otherwise it closes the connection, and read() fails with
  /// kNotConnected.
  void start(std::string_view command);

  /// read: sends the started command and reads its reply, calling
  /// `on_line(std::string_view)` for each line up to END (views valid during
  /// the call only). Ok at END; kRefused for an error line.
  template <class OnLine>
  [[nodiscard]] auto read(MetaDeadline pause, MetaDeadline deadline, OnLine&& on_line)
      -> std::optional<MetaStatus> {
    if (state_ == State::kSending) {
      if (sent_ == 0 && now_ns() >= ns(deadline)) {
        // Nothing is in flight: the connection stays as it is.
        state_ = State::kIdle;
        return failure(MetaErrc::kTimeout, 0, endpoint() + ": deadline passed before the request");
      }
      MetaStatus failed;
      const Sent sent = send(pause, deadline, failed);
      if (sent == Sent::kPaused) {
        return std::nullopt;
      }
      if (sent == Sent::kFailed) {
        return failed;
      }
      state_ = State::kReading;
    }
    if (state_ != State::kReading) {
      return failure(MetaErrc::kNotConnected, 0,
                     endpoint() + ": not connected, or no command was started");
    }
    std::array<char, kReadChunk> chunk{};
    for (;;) {
      const ssize_t got = ::recv(fd_, chunk.data(), chunk.size(), 0);
      if (got == 0) {
        return closing(MetaErrc::kDisconnected, 0, "the server closed the connection");
      }
      if (got < 0) {
        if (errno == EINTR) {
          continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          return lost(errno, "recv()");
        }
        const Wait ready = wait(POLLIN, pause, deadline);
        if (ready == Wait::kReady) {
          continue;
        }
        if (ready == Wait::kPaused) {
          return std::nullopt;
        }
        return ready == Wait::kTimedOut ? timed_out() : closing(MetaErrc::kIo, errno, "poll()");
      }
      const std::string_view bytes(chunk.data(), static_cast<std::size_t>(got));
      const MetaParseResult step = feed(bytes, on_line);
      if (step.status == MetaParse::kMalformed) {
        return closing(MetaErrc::kMalformed, 0, "malformed reply: " + std::string(step.reason));
      }
      if (step.status == MetaParse::kComplete) {
        if (step.consumed != bytes.size()) {
          return closing(MetaErrc::kMalformed, 0, "malformed reply: bytes after the reply");
        }
        state_ = State::kIdle;
        if (parser_.end() != TextLinesEnd::kEnd) {
          return failure(MetaErrc::kRefused, 0,
                         endpoint() + " answered '" + parser_.message() + "'");
        }
        return MetaStatus{};
      }
      const std::int64_t at = now_ns();
      if (at >= ns(deadline)) {
        return timed_out();
      }
      if (at >= ns(pause)) {
        return std::nullopt;
      }
    }
  }

  /// is_open: whether a socket is open (connecting, idle or busy).
  [[nodiscard]] auto is_open() const noexcept -> bool { return fd_ >= 0; }

  /// close: closes the socket; a later connect() starts again.
  void close() noexcept;

 private:
  enum class State : std::uint8_t { kClosed, kConnecting, kIdle, kSending, kReading };
  enum class Wait : std::uint8_t { kReady, kPaused, kTimedOut, kFailed };
  enum class Sent : std::uint8_t { kAll, kPaused, kFailed };

  struct Address {
    int family = 0;
    int type = 0;
    int protocol = 0;
    sockaddr_storage address{};
    socklen_t length = 0;
  };

  [[nodiscard]] static auto now_ns() noexcept -> std::int64_t { return steady_now_ns(); }

  [[nodiscard]] static auto ns(MetaDeadline at) noexcept -> std::int64_t {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
  }

  [[nodiscard]] auto endpoint() const -> std::string;

  [[nodiscard]] static auto failure(MetaErrc code, int error_number, std::string message)
      -> MetaStatus {
    return MetaStatus{code, error_number, std::move(message)};
  }

  // A failure that closes the connection.
  auto closing(MetaErrc code, int error_number, std::string_view what) -> MetaStatus;

  auto timed_out() -> MetaStatus { return closing(MetaErrc::kTimeout, 0, "deadline passed"); }

  auto lost(int error, std::string_view call) -> MetaStatus;

  // Waits until fd_ reports one of `events`, or the pause or the deadline
  // comes; polls once without waiting even when both have come.
  [[nodiscard]] auto wait(short events, MetaDeadline pause, MetaDeadline deadline) const noexcept
      -> Wait;

  // Resolves host_ into addresses_ (not bound by any time).
  auto resolve() -> MetaStatus;

  // Starts connecting to the next address: nothing while one is under way
  // (or connected), the failure when none is left.
  auto next_address() -> std::optional<MetaStatus>;

  // Feeds `bytes` to the parser; closes the connection if on_line throws (the
  // rest of the reply is unread).
  template <class OnLine>
  auto feed(std::string_view bytes, OnLine& on_line) -> MetaParseResult {
    struct CloseUnlessDone {
      ListingConnection* connection;
      ~CloseUnlessDone() {
        if (connection != nullptr) {
          connection->close();
        }
      }
    } guard{this};
    MetaParseResult step = parser_.feed(bytes, on_line);
    guard.connection = nullptr;
    return step;
  }

  // Sends what is left of request_ (`failed` says why on kFailed).
  auto send(MetaDeadline pause, MetaDeadline deadline, MetaStatus& failed) -> Sent;

  std::string host_;
  std::uint16_t port_ = 0;
  int fd_ = -1;
  State state_ = State::kClosed;
  std::vector<Address> addresses_;
  std::size_t next_address_ = 0;
  int last_error_ = 0;
  std::string request_;
  std::size_t sent_ = 0;
  TextLineParser parser_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE ListingConnection::ListingConnection(std::string_view host,
                                                            std::uint16_t port)
    : port_(port) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  host_.assign(host);
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::operator=(ListingConnection&& other) noexcept
    -> ListingConnection& {
  if (this != &other) {
    close();
    host_ = std::move(other.host_);
    port_ = other.port_;
    fd_ = std::exchange(other.fd_, -1);
    state_ = std::exchange(other.state_, State::kClosed);
    addresses_ = std::move(other.addresses_);
    next_address_ = other.next_address_;
    last_error_ = other.last_error_;
    request_ = std::move(other.request_);
    sent_ = other.sent_;
    parser_ = std::move(other.parser_);
  }
  return *this;
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::connect(MetaDeadline pause, MetaDeadline deadline)
    -> std::optional<MetaStatus> {
  if (state_ == State::kClosed) {
    if (MetaStatus status = resolve(); !status) {
      return status;
    }
    if (std::optional<MetaStatus> failed = next_address()) {
      return failed;
    }
  }
  while (state_ == State::kConnecting) {
    const Wait ready = wait(POLLOUT, pause, deadline);
    if (ready == Wait::kPaused) {
      return std::nullopt;
    }
    if (ready == Wait::kTimedOut) {
      return timed_out();
    }
    if (ready == Wait::kFailed) {
      return closing(MetaErrc::kIo, errno, "poll()");
    }
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
      error = errno;
    }
    if (error == 0) {
      state_ = State::kIdle;
      break;
    }
    last_error_ = error;
    if (std::optional<MetaStatus> failed = next_address()) {
      return failed;
    }
  }
  if (state_ != State::kIdle) {
    return failure(MetaErrc::kNotConnected, 0, endpoint() + ": a command is under way");
  }
  return MetaStatus{};
}

MEMSHARD_DETAIL_INLINE void ListingConnection::start(std::string_view command) {
  if (state_ != State::kIdle) {
    close();
    return;
  }
  request_.assign(command).append("\r\n");
  sent_ = 0;
  parser_.reset();
  state_ = State::kSending;
}

MEMSHARD_DETAIL_INLINE void ListingConnection::close() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  state_ = State::kClosed;
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::endpoint() const -> std::string {
  if (host_.find(':') != std::string::npos) {
    return "[" + host_ + "]:" + std::to_string(port_);
  }
  return host_ + ":" + std::to_string(port_);
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::closing(MetaErrc code, int error_number,
                                                       std::string_view what) -> MetaStatus {
  close();
  std::string message = endpoint() + ": " + std::string(what);
  if (error_number != 0) {
    message.append(": ").append(std::generic_category().message(error_number));
  }
  return failure(code, error_number, std::move(message));
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::lost(int error, std::string_view call)
    -> MetaStatus {
  const bool peer = error == ECONNRESET || error == EPIPE || error == ECONNABORTED;
  return closing(peer ? MetaErrc::kDisconnected : MetaErrc::kIo, error, call);
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::wait(short events, MetaDeadline pause,
                                                    MetaDeadline deadline) const noexcept -> Wait {
  const std::int64_t end = std::min(ns(pause), ns(deadline));
  for (;;) {
    const std::int64_t left = std::max<std::int64_t>(end - now_ns(), 0);
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
      return Wait::kReady;
    }
    if (ready < 0 && errno != EINTR) {
      return Wait::kFailed;
    }
    const std::int64_t at = now_ns();
    if (at >= ns(deadline)) {
      return Wait::kTimedOut;
    }
    if (at >= ns(pause)) {
      return Wait::kPaused;
    }
  }
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::resolve() -> MetaStatus {
  addresses_.clear();
  next_address_ = 0;
  last_error_ = 0;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port_);
  if (const int rc = ::getaddrinfo(host_.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return failure(MetaErrc::kResolve, 0, "cannot resolve " + host_ + ": " + ::gai_strerror(rc));
  }
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, &::freeaddrinfo);
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_addrlen > sizeof(sockaddr_storage)) {
      continue;
    }
    Address address;
    address.family = entry->ai_family;
    address.type = entry->ai_socktype;
    address.protocol = entry->ai_protocol;
    std::memcpy(&address.address, entry->ai_addr, entry->ai_addrlen);
    address.length = entry->ai_addrlen;
    addresses_.push_back(address);
  }
  return {};
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::next_address() -> std::optional<MetaStatus> {
  while (next_address_ < addresses_.size()) {
    close();
    const Address& address = addresses_[next_address_++];
    fd_ = ::socket(address.family, address.type | SOCK_NONBLOCK | SOCK_CLOEXEC, address.protocol);
    if (fd_ < 0) {
      return closing(MetaErrc::kIo, errno, "socket()");
    }
    const int one = 1;
    static_cast<void>(::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one));
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address.address), address.length) == 0) {
      state_ = State::kIdle;
      return std::nullopt;
    }
    if (errno == EINPROGRESS) {
      state_ = State::kConnecting;
      return std::nullopt;
    }
    last_error_ = errno;
  }
  if (addresses_.empty()) {
    return closing(MetaErrc::kConnect, 0, "no address");
  }
  return closing(MetaErrc::kConnect, last_error_, "connect()");
}

MEMSHARD_DETAIL_INLINE auto ListingConnection::send(MetaDeadline pause, MetaDeadline deadline,
                                                    MetaStatus& failed) -> Sent {
  while (sent_ < request_.size()) {
    const ssize_t n = ::send(fd_, request_.data() + sent_, request_.size() - sent_, MSG_NOSIGNAL);
    if (n > 0) {
      sent_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      failed = lost(errno, "send()");
      return Sent::kFailed;
    }
    const Wait ready = wait(POLLOUT, pause, deadline);
    if (ready == Wait::kPaused) {
      return Sent::kPaused;
    }
    if (ready != Wait::kReady) {
      failed = ready == Wait::kTimedOut ? timed_out() : closing(MetaErrc::kIo, errno, "poll()");
      return Sent::kFailed;
    }
  }
  return Sent::kAll;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_DETAIL_METADUMP_HPP_
