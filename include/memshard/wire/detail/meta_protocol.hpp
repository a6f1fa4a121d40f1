// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_DETAIL_META_PROTOCOL_HPP_
#define MEMSHARD_WIRE_DETAIL_META_PROTOCOL_HPP_

// wire/detail/meta_protocol.hpp: memcached's meta protocol (memcached >= 1.6) as
// bytes, with no socket: request writers for mg, ms, md, ma and mn; a strict,
// incremental parser for their replies (MetaReplyParser); and a parser for
// the line-oriented replies of text commands such as `stats` and
// `lru_crawler metadump` (TextLineParser).
//
// The parsers are fed whatever bytes arrived, in pieces of any size, and say
// whether they need more, where the reply ended, or why it is malformed. They
// never read past what they are given and hold at most one line plus one
// value (both bounded by MetaLimits) in memory, so a broken or hostile peer
// cannot make them allocate without bound.

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "memshard/placement/key.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

// ---------------------------------------------------------------------------
// Requests

/// MetaGetFlags: what `mg` returns and how it treats the item. The return
/// flags appear in the reply in the order written here.
struct MetaGetFlags {
  bool value = false;         ///< v: return the value (the reply is VA)
  bool ttl = false;           ///< t: return the remaining TTL in seconds (-1: unlimited)
  bool client_flags = false;  ///< f: return the client flags
  bool cas = false;           ///< c: return the cas unique
  bool size = false;          ///< s: return the value's size
  bool key = false;           ///< k: return the key
  bool hit_before = false;    ///< h: return whether the item was read before
  bool last_access = false;   ///< l: return the seconds since the last access
  bool no_bump = false;       ///< u: do not bump the item in the LRU
  bool quiet = false;         ///< q: no reply on a miss (EN)
  std::optional<std::int32_t> vivify_ttl =
      std::nullopt;  ///< N: on a miss, create a stub with this TTL (W)
  std::optional<std::int32_t> recache_ttl =
      std::nullopt;  ///< R: win a recache when the TTL is below this
  std::optional<std::int32_t> touch_ttl = std::nullopt;  ///< T: update the TTL
  std::optional<std::uint32_t> opaque = std::nullopt;    ///< O: echoed back in the reply
};

/// MetaSetMode: the M token of `ms`.
enum class MetaSetMode : char {
  kSet = 'S',      ///< store unconditionally (the default; no M token is written)
  kAdd = 'E',      ///< store only if the key is absent (NS otherwise)
  kAppend = 'A',   ///< append to an existing value
  kPrepend = 'P',  ///< prepend to an existing value
  kReplace = 'R',  ///< store only if the key exists (NS otherwise)
};

/// MetaSetFlags: how `ms` stores.
struct MetaSetFlags {
  std::optional<std::int32_t> ttl = std::nullopt;            ///< T: expiry (0 or none: never)
  std::optional<std::uint32_t> client_flags = std::nullopt;  ///< F: the client flags
  std::optional<std::uint64_t> cas = std::nullopt;  ///< C: store only if the cas unique matches
  MetaSetMode mode = MetaSetMode::kSet;             ///< M: set, add, append, prepend, replace
  bool invalidate = false;                          ///< I: with C, a stale cas marks the item stale
  bool return_cas = false;                          ///< c: return the new cas unique
  bool quiet = false;                               ///< q: no reply on success (HD)
  std::optional<std::uint32_t> opaque = std::nullopt;  ///< O: echoed back in the reply
};

/// MetaDeleteFlags: how `md` deletes.
struct MetaDeleteFlags {
  std::optional<std::uint64_t> cas = std::nullopt;  ///< C: delete only if the cas unique matches
  bool invalidate = false;                          ///< I: mark stale instead of deleting
  std::optional<std::int32_t> stale_ttl = std::nullopt;  ///< T: with I, the stale item's new TTL
  bool quiet = false;                                    ///< q: no reply on success (HD)
  std::optional<std::uint32_t> opaque = std::nullopt;    ///< O: echoed back in the reply
};

/// MetaArithmeticMode: the M token of `ma`.
enum class MetaArithmeticMode : char {
  kIncrement = 'I',  ///< add the delta (the default; no M token is written)
  kDecrement = 'D',  ///< subtract the delta, stopping at 0
};

/// MetaArithmeticFlags: how `ma` counts.
struct MetaArithmeticFlags {
  MetaArithmeticMode mode = MetaArithmeticMode::kIncrement;  ///< M: increment or decrement
  std::optional<std::uint64_t> delta = std::nullopt;         ///< D: the delta (1 when none)
  std::optional<std::int32_t> vivify_ttl = std::nullopt;     ///< N: on a miss, create it
  std::optional<std::uint64_t> initial = std::nullopt;       ///< J: the value N creates
  std::optional<std::int32_t> touch_ttl = std::nullopt;      ///< T: update the TTL
  std::optional<std::uint64_t> cas = std::nullopt;           ///< C: count only if it matches
  bool value = false;                                        ///< v: return the new value
  bool ttl = false;                                          ///< t: return the remaining TTL
  bool return_cas = false;                                   ///< c: return the cas unique
  bool quiet = false;                                        ///< q: no reply on success
  std::optional<std::uint32_t> opaque = std::nullopt;        ///< O: echoed back in the reply
};

namespace meta_write {

/// number: appends `value` in decimal.
template <class Number>
inline void number(std::string& out, Number value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  static_cast<void>(ec);  // 24 digits hold every 64-bit number
  out.append(digits, end);
}

/// flag: appends " <letter>" when `on`.
inline void flag(std::string& out, char letter, bool on) {
  if (on) {
    out.push_back(' ');
    out.push_back(letter);
  }
}

/// token: appends " <letter><value>" when `value` holds one.
template <class Number>
inline void token(std::string& out, char letter, const std::optional<Number>& value) {
  if (value) {
    out.push_back(' ');
    out.push_back(letter);
    number(out, *value);
  }
}

}  // namespace meta_write

/// write_meta_get: appends `mg <key> <flags>\r\n` to `out`. Returns the key's
/// problem, and appends nothing, when memcached would not accept `key` (see
/// check_key()): a key with a space or a control byte would break the command.
[[nodiscard]] inline auto write_meta_get(std::string& out, std::string_view key,
                                         const MetaGetFlags& flags) -> std::optional<KeyError> {
  if (auto problem = check_key(key)) {
    return problem;
  }
  out.append("mg ").append(key);
  meta_write::flag(out, 'v', flags.value);
  meta_write::flag(out, 't', flags.ttl);
  meta_write::flag(out, 'f', flags.client_flags);
  meta_write::flag(out, 'c', flags.cas);
  meta_write::flag(out, 's', flags.size);
  meta_write::flag(out, 'k', flags.key);
  meta_write::flag(out, 'h', flags.hit_before);
  meta_write::flag(out, 'l', flags.last_access);
  meta_write::flag(out, 'u', flags.no_bump);
  meta_write::token(out, 'N', flags.vivify_ttl);
  meta_write::token(out, 'R', flags.recache_ttl);
  meta_write::token(out, 'T', flags.touch_ttl);
  meta_write::flag(out, 'q', flags.quiet);
  meta_write::token(out, 'O', flags.opaque);
  out.append("\r\n");
  return std::nullopt;
}

/// write_meta_set: appends `ms <key> <length> <flags>\r\n<value>\r\n` to `out`,
/// or returns the key's problem and appends nothing (see write_meta_get()).
[[nodiscard]] inline auto write_meta_set(std::string& out, std::string_view key,
                                         std::string_view value, const MetaSetFlags& flags)
    -> std::optional<KeyError> {
  if (auto problem = check_key(key)) {
    return problem;
  }
  out.append("ms ").append(key).push_back(' ');
  meta_write::number(out, value.size());
  meta_write::token(out, 'T', flags.ttl);
  meta_write::token(out, 'F', flags.client_flags);
  meta_write::token(out, 'C', flags.cas);
  if (flags.mode != MetaSetMode::kSet) {
    out.append(" M").push_back(static_cast<char>(flags.mode));
  }
  meta_write::flag(out, 'I', flags.invalidate);
  meta_write::flag(out, 'c', flags.return_cas);
  meta_write::flag(out, 'q', flags.quiet);
  meta_write::token(out, 'O', flags.opaque);
  out.append("\r\n").append(value).append("\r\n");
  return std::nullopt;
}

/// write_meta_delete: appends `md <key> <flags>\r\n` to `out`, or returns the
/// key's problem and appends nothing (see write_meta_get()).
[[nodiscard]] inline auto write_meta_delete(std::string& out, std::string_view key,
                                            const MetaDeleteFlags& flags)
    -> std::optional<KeyError> {
  if (auto problem = check_key(key)) {
    return problem;
  }
  out.append("md ").append(key);
  meta_write::token(out, 'C', flags.cas);
  meta_write::flag(out, 'I', flags.invalidate);
  meta_write::token(out, 'T', flags.stale_ttl);
  meta_write::flag(out, 'q', flags.quiet);
  meta_write::token(out, 'O', flags.opaque);
  out.append("\r\n");
  return std::nullopt;
}

/// write_meta_arithmetic: appends `ma <key> <flags>\r\n` to `out`, or returns
/// the key's problem and appends nothing (see write_meta_get()).
[[nodiscard]] inline auto write_meta_arithmetic(std::string& out, std::string_view key,
                                                const MetaArithmeticFlags& flags)
    -> std::optional<KeyError> {
  if (auto problem = check_key(key)) {
    return problem;
  }
  out.append("ma ").append(key);
  if (flags.mode != MetaArithmeticMode::kIncrement) {
    out.append(" M").push_back(static_cast<char>(flags.mode));
  }
  meta_write::token(out, 'D', flags.delta);
  meta_write::token(out, 'N', flags.vivify_ttl);
  meta_write::token(out, 'J', flags.initial);
  meta_write::token(out, 'T', flags.touch_ttl);
  meta_write::token(out, 'C', flags.cas);
  meta_write::flag(out, 'v', flags.value);
  meta_write::flag(out, 't', flags.ttl);
  meta_write::flag(out, 'c', flags.return_cas);
  meta_write::flag(out, 'q', flags.quiet);
  meta_write::token(out, 'O', flags.opaque);
  out.append("\r\n");
  return std::nullopt;
}

/// write_meta_noop: appends `mn\r\n` to `out` (answered by MN once every
/// request before it is answered).
inline void write_meta_noop(std::string& out) { out.append("mn\r\n"); }

// ---------------------------------------------------------------------------
// Replies

/// MetaLimits: the bounds the parsers enforce.
struct MetaLimits {
  /// kDefaultMaxLine: the longest reply line accepted by default, without its
  /// "\r\n" (a meta header with every flag is well under 400 bytes).
  static constexpr std::size_t kDefaultMaxLine = 4096;
  /// kDefaultMaxValue: the largest value accepted by default: memcached's own
  /// default item size limit (-I 1m). Raise it for servers started with more.
  static constexpr std::size_t kDefaultMaxValue = std::size_t{1} << 20U;

  std::size_t max_line = kDefaultMaxLine;    ///< longest line, without its terminator
  std::size_t max_value = kDefaultMaxValue;  ///< largest VA data block
};

/// MetaReplyKind: the return code of a meta reply.
enum class MetaReplyKind : std::uint8_t {
  kValue,        ///< VA: flags and a data block
  kHeader,       ///< HD: success, flags only
  kMiss,         ///< EN: mg found no item
  kNotFound,     ///< NF: md, ma or ms with C found no item
  kNotStored,    ///< NS: ms did not store (add on an existing key, ...)
  kExists,       ///< EX: the cas unique did not match
  kNoop,         ///< MN: the answer to mn
  kError,        ///< ERROR: the server does not know the command (no meta protocol)
  kClientError,  ///< CLIENT_ERROR <message>: the server refused the request
  kServerError,  ///< SERVER_ERROR <message>: the server failed (out of memory, ...)
};

/// to_string: the return code as sent ("VA", "HD", ..., "SERVER_ERROR").
[[nodiscard]] constexpr auto to_string(MetaReplyKind kind) noexcept -> std::string_view {
  switch (kind) {
    case MetaReplyKind::kValue:
      return "VA";
    case MetaReplyKind::kHeader:
      return "HD";
    case MetaReplyKind::kMiss:
      return "EN";
    case MetaReplyKind::kNotFound:
      return "NF";
    case MetaReplyKind::kNotStored:
      return "NS";
    case MetaReplyKind::kExists:
      return "EX";
    case MetaReplyKind::kNoop:
      return "MN";
    case MetaReplyKind::kError:
      return "ERROR";
    case MetaReplyKind::kClientError:
      return "CLIENT_ERROR";
    case MetaReplyKind::kServerError:
      return "SERVER_ERROR";
  }
  return "unknown";
}

inline auto operator<<(std::ostream& out, MetaReplyKind kind) -> std::ostream& {
  return out << to_string(kind);
}

/// MetaReply: one meta reply, its flags parsed into typed fields (empty when
/// the server did not send them).
struct MetaReply {
  MetaReplyKind kind = MetaReplyKind::kError;
  std::optional<std::int64_t> ttl = std::nullopt;            ///< t: seconds left, -1 for unlimited
  std::optional<std::uint32_t> client_flags = std::nullopt;  ///< f
  std::optional<std::uint64_t> cas = std::nullopt;           ///< c
  std::optional<std::uint64_t> size = std::nullopt;          ///< s
  std::optional<std::string> key;                            ///< k (base64 when base64_key)
  std::optional<bool> hit_before;                            ///< h
  std::optional<std::uint32_t> last_access = std::nullopt;   ///< l: seconds since the last access
  std::optional<std::uint32_t> opaque = std::nullopt;        ///< O
  bool won = false;         ///< W: this client won the right to recache
  bool stale = false;       ///< X: the item is stale
  bool win_sent = false;    ///< Z: another client already won
  bool base64_key = false;  ///< b: the returned key is base64
  std::string value;        ///< VA's data block
  std::string message;      ///< the text after ERROR, CLIENT_ERROR, ...

  friend auto operator==(const MetaReply&, const MetaReply&) -> bool = default;
};

/// MetaParse: where a parser stands after a feed.
enum class MetaParse : std::uint8_t {
  kNeedMore,   ///< every byte was used and the reply is not complete yet
  kComplete,   ///< the reply is complete; `consumed` bytes of this feed belong to it
  kMalformed,  ///< the bytes are not a valid reply; `reason` says why
};

/// MetaParseResult: the answer of one feed().
struct MetaParseResult {
  MetaParse status = MetaParse::kNeedMore;
  /// Bytes of this feed's input that were used, never more than its size.
  std::size_t consumed = 0;
  /// For kMalformed: a short static description ("line too long", ...).
  std::string_view reason;
};

namespace meta_parse {

/// decimal: `text` as an unsigned number of type T: digits only, at least one.
template <class T>
[[nodiscard]] inline auto decimal(std::string_view text, T& value, std::string_view& reason)
    -> bool {
  if (text.empty()) {
    reason = "missing number";
    return false;
  }
  for (const char c : text) {
    if (c < '0' || c > '9') {
      reason = "bad number";
      return false;
    }
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    reason = "number overflow";
    return false;
  }
  if (ec != std::errc{} || end != text.data() + text.size()) {
    reason = "bad number";
    return false;
  }
  return true;
}

/// is_line_byte: what a reply line may hold: printable ASCII and bytes >= 0x80.
[[nodiscard]] constexpr auto is_line_byte(char c) noexcept -> bool {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= 0x20 && byte != 0x7f;
}

}  // namespace meta_parse

/// MetaReplyParser: reads one meta reply at a time from bytes fed in pieces of
/// any size (down to one byte).
///
/// Strict: the header line must end in "\r\n" and hold only printable bytes,
/// single spaces between tokens, a known return code, and flags memcached
/// returns (t f c s k h l O b W X Z), each at most once, with well-formed
/// numbers that fit their type; a VA's data block must be exactly its length
/// and be followed by "\r\n". The header line is at most
/// MetaLimits::max_line bytes and the value at most MetaLimits::max_value.
///
/// Use: feed() until kComplete, then take() (or reply()); the next feed()
/// starts a new reply with the bytes the previous one did not consume. After
/// kMalformed every feed() answers the same until reset(). Memory: one line
/// and one value at most. Not thread-safe; feed() may throw std::bad_alloc.
///
/// **Example**:
///   MetaReplyParser parser;
///   auto step = parser.feed("VA 2 f7\r\nhi\r\n");   // kComplete, consumed 13
///   MetaReply reply = parser.take();                // kind kValue, value "hi", client_flags 7
class MetaReplyParser {
 public:
  /// MetaReplyParser: a parser with the given bounds.
  explicit MetaReplyParser(MetaLimits limits = {}) noexcept : limits_(limits) {}

  /// feed: reads `bytes`, the next bytes from the peer, up to the end of the
  /// current reply.
  [[nodiscard]] auto feed(std::string_view bytes) -> MetaParseResult {
    if (state_ == State::kFailed) {
      return {MetaParse::kMalformed, 0, reason_};
    }
    if (state_ == State::kDone) {
      reset();
    }
    std::size_t used = 0;
    while (used < bytes.size()) {
      switch (state_) {
        case State::kLine: {
          const std::string_view rest = bytes.substr(used);
          const std::size_t eol = rest.find('\n');
          const std::size_t piece = eol == std::string_view::npos ? rest.size() : eol;
          // The line without its final '\r' may be max_line long.
          if (line_.size() + piece > limits_.max_line + 1) {
            return fail("line too long");
          }
          line_.append(rest.data(), piece);
          used += piece;
          if (eol == std::string_view::npos) {
            break;
          }
          ++used;  // the '\n'
          if (line_.empty() || line_.back() != '\r') {
            return fail("line not ended by \\r\\n");
          }
          line_.pop_back();
          if (line_.size() > limits_.max_line) {
            return fail("line too long");
          }
          if (!parse_line()) {
            return {MetaParse::kMalformed, used, reason_};
          }
          if (state_ == State::kDone) {
            return {MetaParse::kComplete, used, {}};
          }
          break;
        }
        case State::kValue: {
          const std::size_t take = std::min(value_left_, bytes.size() - used);
          reply_.value.append(bytes.data() + used, take);
          used += take;
          value_left_ -= take;
          if (value_left_ == 0) {
            state_ = State::kValueEnd;
          }
          break;
        }
        case State::kValueEnd: {
          const char expected = end_seen_ == 0 ? '\r' : '\n';
          if (bytes[used] != expected) {
            return fail("value not followed by \\r\\n");
          }
          ++used;
          if (++end_seen_ == 2) {
            state_ = State::kDone;
            return {MetaParse::kComplete, used, {}};
          }
          break;
        }
        case State::kDone:
        case State::kFailed:
          break;  // not reached: both return above
      }
    }
    return {MetaParse::kNeedMore, used, {}};
  }

  /// reply: the reply parsed so far (complete after kComplete).
  [[nodiscard]] auto reply() const noexcept -> const MetaReply& { return reply_; }

  /// take: moves the reply out and readies the parser for the next one.
  [[nodiscard]] auto take() -> MetaReply {
    MetaReply out = std::move(reply_);
    reset();
    return out;
  }

  /// reset: forgets everything, including a malformed state.
  void reset() noexcept {
    state_ = State::kLine;
    line_.clear();
    reply_ = MetaReply{};
    value_left_ = 0;
    end_seen_ = 0;
    reason_ = {};
  }

  /// limits: the bounds this parser enforces.
  [[nodiscard]] auto limits() const noexcept -> const MetaLimits& { return limits_; }

 private:
  enum class State : std::uint8_t { kLine, kValue, kValueEnd, kDone, kFailed };

  auto fail(std::string_view reason) -> MetaParseResult {
    state_ = State::kFailed;
    reason_ = reason;
    return {MetaParse::kMalformed, 0, reason_};
  }

  auto set_failed(std::string_view reason) -> bool {
    state_ = State::kFailed;
    reason_ = reason;
    return false;
  }

  // Parses line_ (without "\r\n") into reply_; sets state_ to kValue or kDone.
  auto parse_line() -> bool {
    const std::string_view line = line_;
    has_more_ = false;
    for (const char c : line) {
      if (!meta_parse::is_line_byte(c)) {
        return set_failed("control byte in reply line");
      }
    }
    const std::size_t space = line.find(' ');
    const std::string_view code = line.substr(0, space);
    const std::string_view rest =
        space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
    if (code == "ERROR" || code == "CLIENT_ERROR" || code == "SERVER_ERROR") {
      reply_.kind = code == "ERROR"          ? MetaReplyKind::kError
                    : code == "CLIENT_ERROR" ? MetaReplyKind::kClientError
                                             : MetaReplyKind::kServerError;
      reply_.message.assign(rest);
      state_ = State::kDone;
      return true;
    }
    struct Code {
      std::string_view text;
      MetaReplyKind kind;
    };
    static constexpr Code kCodes[] = {
        {"VA", MetaReplyKind::kValue},     {"HD", MetaReplyKind::kHeader},
        {"EN", MetaReplyKind::kMiss},      {"NF", MetaReplyKind::kNotFound},
        {"NS", MetaReplyKind::kNotStored}, {"EX", MetaReplyKind::kExists},
        {"MN", MetaReplyKind::kNoop},
    };
    const Code* found = nullptr;
    for (const Code& candidate : kCodes) {
      if (candidate.text == code) {
        found = &candidate;
      }
    }
    if (found == nullptr) {
      return set_failed("unknown return code");
    }
    reply_.kind = found->kind;
    if (space != std::string_view::npos && rest.empty()) {
      return set_failed("empty token");
    }
    std::string_view tokens = rest;
    std::uint64_t length = 0;
    if (reply_.kind == MetaReplyKind::kValue) {
      const std::string_view text = next_token(tokens);
      if (text.empty()) {
        return set_failed("VA without a length");
      }
      std::string_view why;
      if (!meta_parse::decimal(text, length, why)) {
        return set_failed(why);
      }
      if (length > limits_.max_value) {
        return set_failed("value larger than the maximum");
      }
    }
    std::uint64_t seen = 0;
    while (!tokens.empty() || has_more_) {
      const std::string_view flag = next_token(tokens);
      if (flag.empty()) {
        return set_failed("empty token");
      }
      if (!parse_flag(flag, seen)) {
        return false;
      }
    }
    if (reply_.kind == MetaReplyKind::kValue) {
      value_left_ = static_cast<std::size_t>(length);
      reply_.value.reserve(std::min<std::size_t>(value_left_, 64 * 1024));
      state_ = value_left_ == 0 ? State::kValueEnd : State::kValue;
    } else {
      state_ = State::kDone;
    }
    return true;
  }

  // The next space-separated token of `tokens`, removed from it; has_more_
  // says whether a space followed (so that a trailing space is an empty token).
  auto next_token(std::string_view& tokens) noexcept -> std::string_view {
    const std::size_t space = tokens.find(' ');
    const std::string_view token = tokens.substr(0, space);
    has_more_ = space != std::string_view::npos;
    tokens = has_more_ ? tokens.substr(space + 1) : std::string_view{};
    return token;
  }

  [[nodiscard]] static auto flag_bit(char letter) noexcept -> std::uint64_t {
    if (letter >= 'a' && letter <= 'z') {
      return std::uint64_t{1} << static_cast<unsigned>(letter - 'a');
    }
    if (letter >= 'A' && letter <= 'Z') {
      return std::uint64_t{1} << (26U + static_cast<unsigned>(letter - 'A'));
    }
    return 0;
  }

  auto parse_flag(std::string_view flag, std::uint64_t& seen) -> bool {
    const char letter = flag.front();
    const std::string_view token = flag.substr(1);
    const std::uint64_t bit = flag_bit(letter);
    if (bit == 0) {
      return set_failed("unknown flag");
    }
    if ((seen & bit) != 0) {
      return set_failed("duplicate flag");
    }
    seen |= bit;
    std::string_view why;
    switch (letter) {
      case 't': {
        if (token == "-1") {
          reply_.ttl = -1;
          return true;
        }
        std::uint32_t ttl = 0;
        if (!meta_parse::decimal(token, ttl, why)) {
          return set_failed(why);
        }
        reply_.ttl = ttl;
        return true;
      }
      case 'f':
        return number_flag(token, reply_.client_flags);
      case 'c':
        return number_flag(token, reply_.cas);
      case 's':
        return number_flag(token, reply_.size);
      case 'l':
        return number_flag(token, reply_.last_access);
      case 'O':
        return number_flag(token, reply_.opaque);
      case 'h':
        if (token != "0" && token != "1") {
          return set_failed("bad h flag");
        }
        reply_.hit_before = token == "1";
        return true;
      case 'k':
        if (token.empty() || token.size() > kMaxKeyLength) {
          return set_failed("bad key");
        }
        reply_.key.emplace(token);
        return true;
      case 'b':
      case 'W':
      case 'X':
      case 'Z':
        if (!token.empty()) {
          return set_failed("token on a flag that takes none");
        }
        (letter == 'b'   ? reply_.base64_key
         : letter == 'W' ? reply_.won
         : letter == 'X' ? reply_.stale
                         : reply_.win_sent) = true;
        return true;
      default:
        return set_failed("unknown flag");
    }
  }

  template <class T>
  auto number_flag(std::string_view token, std::optional<T>& field) -> bool {
    T value{};
    std::string_view why;
    if (!meta_parse::decimal(token, value, why)) {
      return set_failed(why);
    }
    field = value;
    return true;
  }

  MetaLimits limits_;
  State state_ = State::kLine;
  std::string line_;
  MetaReply reply_;
  std::size_t value_left_ = 0;
  int end_seen_ = 0;
  bool has_more_ = false;
  std::string_view reason_;
};

/// TextLinesEnd: how a line-oriented reply ended.
enum class TextLinesEnd : std::uint8_t {
  kEnd,          ///< END: every line was delivered
  kError,        ///< ERROR [<message>]: unknown command, or refused (metadump not allowed)
  kClientError,  ///< CLIENT_ERROR <message>
  kServerError,  ///< SERVER_ERROR <message>
  kRefused,      ///< BUSY, BADCLASS or NOTSTARTED <message> (the LRU crawler's answers)
};

/// to_string: a short name for a TextLinesEnd ("end", "error", ...).
[[nodiscard]] constexpr auto to_string(TextLinesEnd end) noexcept -> std::string_view {
  switch (end) {
    case TextLinesEnd::kEnd:
      return "end";
    case TextLinesEnd::kError:
      return "error";
    case TextLinesEnd::kClientError:
      return "client_error";
    case TextLinesEnd::kServerError:
      return "server_error";
    case TextLinesEnd::kRefused:
      return "refused";
  }
  return "unknown";
}

/// TextLineParser: reads a text command's reply made of lines closed by
/// "END" (`stats`, `lru_crawler metadump`), handing each line to a callback
/// as it completes, so that a long listing is never held whole.
///
/// A line ends in "\n" or "\r\n" (memcached 1.6 ends metadump's item lines
/// with a bare "\n"); a '\r' anywhere else, a control byte, or a line longer
/// than the bound is malformed. The reply ends at "END" or at an error line
/// (ERROR, CLIENT_ERROR, SERVER_ERROR, BUSY, BADCLASS, NOTSTARTED), which is
/// not handed to the callback: see end() and message(). Memory: one line at
/// most. Not thread-safe.
///
/// **Example**:
///   TextLineParser parser;
///   auto step = parser.feed("STAT pid 7\r\nEND\r\n", [](std::string_view line) {});
///   // kComplete after one line, "STAT pid 7"; parser.end() == TextLinesEnd::kEnd
class TextLineParser {
 public:
  /// TextLineParser: a parser for lines of at most `max_line` bytes.
  explicit TextLineParser(std::size_t max_line = MetaLimits::kDefaultMaxLine) noexcept
      : max_line_(max_line) {}

  /// feed: reads `bytes`, calling `on_line(std::string_view)` for each data
  /// line (without its terminator), up to the end of the reply.
  template <class OnLine>
  [[nodiscard]] auto feed(std::string_view bytes, OnLine&& on_line) -> MetaParseResult {
    if (failed_) {
      return {MetaParse::kMalformed, 0, reason_};
    }
    if (done_) {
      reset();
    }
    std::size_t used = 0;
    while (used < bytes.size()) {
      const std::string_view rest = bytes.substr(used);
      const std::size_t eol = rest.find('\n');
      const std::size_t piece = eol == std::string_view::npos ? rest.size() : eol;
      if (line_.size() + piece > max_line_ + 1) {
        return fail("line too long");
      }
      if (eol == std::string_view::npos) {
        line_.append(rest);
        return {MetaParse::kNeedMore, bytes.size(), {}};
      }
      used += piece + 1;
      // A line that arrived whole is read in place.
      std::string_view line = rest.substr(0, piece);
      if (!line_.empty()) {
        line_.append(line);
        line = line_;
      }
      if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
      }
      if (line.size() > max_line_) {
        return fail("line too long");
      }
      for (const char c : line) {
        if (!meta_parse::is_line_byte(c)) {
          return fail(c == '\r' ? "stray \\r in line" : "control byte in line");
        }
      }
      if (finish_line(line)) {
        line_.clear();
        done_ = true;
        return {MetaParse::kComplete, used, {}};
      }
      on_line(line);
      line_.clear();
    }
    return {MetaParse::kNeedMore, used, {}};
  }

  /// end: how the reply ended (after kComplete).
  [[nodiscard]] auto end() const noexcept -> TextLinesEnd { return end_; }
  /// message: the whole error line when end() is not kEnd.
  [[nodiscard]] auto message() const noexcept -> const std::string& { return message_; }

  /// reset: forgets everything, including a malformed state.
  void reset() noexcept {
    line_.clear();
    message_.clear();
    end_ = TextLinesEnd::kEnd;
    done_ = false;
    failed_ = false;
    reason_ = {};
  }

 private:
  auto fail(std::string_view reason) -> MetaParseResult {
    failed_ = true;
    reason_ = reason;
    return {MetaParse::kMalformed, 0, reason_};
  }

  // Whether `line` ends the reply; sets end_ and message_ if so.
  auto finish_line(std::string_view line) -> bool {
    if (line == "END") {
      end_ = TextLinesEnd::kEnd;
      return true;
    }
    const std::string_view word = line.substr(0, line.find(' '));
    if (word == "ERROR") {
      end_ = TextLinesEnd::kError;
    } else if (word == "CLIENT_ERROR") {
      end_ = TextLinesEnd::kClientError;
    } else if (word == "SERVER_ERROR") {
      end_ = TextLinesEnd::kServerError;
    } else if (word == "BUSY" || word == "BADCLASS" || word == "NOTSTARTED") {
      end_ = TextLinesEnd::kRefused;
    } else {
      return false;
    }
    message_.assign(line);
    return true;
  }

  std::size_t max_line_;
  std::string line_;
  std::string message_;
  TextLinesEnd end_ = TextLinesEnd::kEnd;
  bool done_ = false;
  bool failed_ = false;
  std::string_view reason_;
};

/// split_stat_line: the name and value of a `stats` line "STAT <name> <value>"
/// (the value may hold spaces), or nothing when `line` is not one.
[[nodiscard]] constexpr auto split_stat_line(std::string_view line) noexcept
    -> std::optional<std::pair<std::string_view, std::string_view>> {
  constexpr std::string_view kPrefix = "STAT ";
  if (!line.starts_with(kPrefix)) {
    return std::nullopt;
  }
  line.remove_prefix(kPrefix.size());
  const std::size_t space = line.find(' ');
  if (space == 0 || space == std::string_view::npos) {
    return std::nullopt;
  }
  return std::pair{line.substr(0, space), line.substr(space + 1)};
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_DETAIL_META_PROTOCOL_HPP_
