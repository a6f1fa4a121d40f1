// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_RESULT_HPP_
#define MEMSHARD_CLIENT_RESULT_HPP_

// client/result.hpp: per-operation outcomes as values: Errc, Status, Result<T>, Item.
//
// A cache miss is not an error: `get` answers an empty optional, and `remove`,
// `touch`, `incr` on a missing key answer Errc::kNotFound, which callers test
// like any other code. Failures say which server and why, and keep
// libmemcached's own return code.

#include <libmemcached-1.0/memcached.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Errc: what happened to one operation.
enum class Errc : std::uint8_t {
  kOk,                 ///< done (for get: hit or miss, see the optional)
  kNotFound,           ///< the key does not exist (remove, touch, incr, decr, cas)
  kNotStored,          ///< add on an existing key, replace/append/prepend on a missing one
  kExists,             ///< cas: the item changed since it was read
  kInvalidKey,         ///< rejected before the wire: see check_key()
  kValueTooLarge,      ///< larger than ClientOptions::max_value_size, or refused by the server
  kInvalidArgument,    ///< refused by the server as malformed (incr on a non-number, ...)
  kServerEjected,      ///< the server is ejected after repeated failures; nothing was sent
  kTimeout,            ///< the server did not answer within the configured timeout
  kConnectionFailure,  ///< the connection could not be made or broke
  kServerError,        ///< the server answered with an error (out of memory, ...)
  kProtocolError,      ///< any other failure reported by libmemcached
  /// SASL authentication failed (wrong or missing credentials, see
  /// ClientOptions::sasl); never counts against the server's health
  kAuthFailure,
  /// the codec of a typed call (get_value, set_value, ...) could not decode
  /// the item it read or encode the value it was given; nothing is wrong
  /// with the server (a value it could not encode was never sent)
  kCodecError,
  /// the client follows a fleet (coordination/fleet_member.hpp) and cannot be sure it serves the
  /// fleet's phase (its lease may have lapsed): the write was not made, and its key is deleted
  /// once the member serves again; nothing is wrong with any server
  kFenced,
};

/// to_string: a short name for an Errc ("ok", "not_found", ...).
[[nodiscard]] constexpr auto to_string(Errc code) noexcept -> std::string_view {
  switch (code) {
    case Errc::kOk:
      return "ok";
    case Errc::kNotFound:
      return "not_found";
    case Errc::kNotStored:
      return "not_stored";
    case Errc::kExists:
      return "exists";
    case Errc::kInvalidKey:
      return "invalid_key";
    case Errc::kValueTooLarge:
      return "value_too_large";
    case Errc::kInvalidArgument:
      return "invalid_argument";
    case Errc::kServerEjected:
      return "server_ejected";
    case Errc::kTimeout:
      return "timeout";
    case Errc::kConnectionFailure:
      return "connection_failure";
    case Errc::kServerError:
      return "server_error";
    case Errc::kProtocolError:
      return "protocol_error";
    case Errc::kAuthFailure:
      return "auth_failure";
    case Errc::kCodecError:
      return "codec_error";
    case Errc::kFenced:
      return "fenced";
  }
  return "unknown";
}

inline auto operator<<(std::ostream& out, Errc code) -> std::ostream& {
  return out << to_string(code);
}

/// is_server_failure: true for the codes that count against a server's health
/// (timeouts and connection failures), false for answers such as not_found
/// and for kAuthFailure (a server that refuses the credentials is up: ejecting
/// it would move its keys and hide a configuration error).
[[nodiscard]] constexpr auto is_server_failure(Errc code) noexcept -> bool {
  return code == Errc::kTimeout || code == Errc::kConnectionFailure;
}

/// Status: the outcome of one operation on one server.
class [[nodiscard]] Status {
 public:
  static constexpr std::size_t kNoServer = static_cast<std::size_t>(-1);

  Status() = default;
  Status(Errc code, memcached_return_t rc, std::size_t server) noexcept
      : code_(code), rc_(rc), server_(server) {}
  Status(Errc code, memcached_return_t rc, std::size_t server, std::string detail)
      : code_(code), rc_(rc), server_(server), detail_(std::move(detail)) {}

  /// ok: kOk (a get miss is ok).
  [[nodiscard]] auto ok() const noexcept -> bool { return code_ == Errc::kOk; }
  explicit operator bool() const noexcept { return ok(); }

  [[nodiscard]] auto code() const noexcept -> Errc { return code_; }
  /// rc: libmemcached's return code (MEMCACHED_SUCCESS when nothing was sent).
  [[nodiscard]] auto rc() const noexcept -> memcached_return_t { return rc_; }
  /// server: the index of the server in the client's list, or kNoServer.
  [[nodiscard]] auto server() const noexcept -> std::size_t { return server_; }
  /// detail: for failures, the server's endpoint and the reason.
  [[nodiscard]] auto detail() const noexcept -> const std::string& { return detail_; }

  /// message: "<code>: <detail>", or "ok".
  [[nodiscard]] auto message() const -> std::string {
    std::string out(to_string(code_));
    if (!detail_.empty()) {
      out.append(": ").append(detail_);
    }
    return out;
  }

 private:
  Errc code_ = Errc::kOk;
  memcached_return_t rc_ = MEMCACHED_SUCCESS;
  std::size_t server_ = kNoServer;
  std::string detail_;
};

inline auto operator<<(std::ostream& out, const Status& status) -> std::ostream& {
  return out << status.message();
}

/// BadResultAccess: Result::value() on a failed result.
class BadResultAccess : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Result: a value, or the Status saying why there is none.
///
/// **Example**:
///   auto hit = client.get("user:42");
///   if (!hit) log(hit.status().message());
///   else if (hit.value()) use(hit.value()->value);
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value, Status status) : value_(std::move(value)), status_(std::move(status)) {}
  explicit Result(Status failure) : status_(std::move(failure)) {}

  [[nodiscard]] auto ok() const noexcept -> bool { return value_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }

  /// value: the value; throws BadResultAccess when the operation failed.
  [[nodiscard]] auto value() const& -> const T& {
    check();
    return *value_;
  }
  [[nodiscard]] auto value() && -> T {
    check();
    return std::move(*value_);
  }
  /// operator*, operator->: the value, checked as value() is (BadResultAccess
  /// when the operation failed), so that a failure is never read as a value.
  [[nodiscard]] auto operator*() const& -> const T& { return value(); }
  [[nodiscard]] auto operator*() && -> T { return std::move(*this).value(); }
  [[nodiscard]] auto operator->() const -> const T* {
    check();
    return &*value_;
  }

  /// value_or: the value, or `fallback` when the operation failed. (A miss of
  /// get() is not a failure: its value is an empty optional.)
  template <class U>
  [[nodiscard]] auto value_or(U&& fallback) const& -> T {
    return value_.has_value() ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <class U>
  [[nodiscard]] auto value_or(U&& fallback) && -> T {
    return value_.has_value() ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
  }

  [[nodiscard]] auto status() const noexcept -> const Status& { return status_; }
  [[nodiscard]] auto code() const noexcept -> Errc { return status_.code(); }

 private:
  void check() const {
    if (!value_.has_value()) {
      throw BadResultAccess("memshard: value() of a failed result: " + status_.message());
    }
  }

  std::optional<T> value_;
  Status status_;
};

/// Item: a value read from memcached.
struct Item {
  std::string value;
  std::uint32_t flags = 0;
  /// The item's cas unique, for ShardedClient::cas().
  std::uint64_t cas = 0;

  friend auto operator==(const Item&, const Item&) -> bool = default;
};

/// ItemView: an item as ShardedClient::visit_multi hands it out; the value
/// points into the client's buffer and is valid only during the callback.
struct ItemView {
  std::string_view value;
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;
};

namespace detail {

/// OptionalText: whether T is std::optional<U> with U convertible to
/// std::string (a get_or_load loader that may decline to cache).
template <class T>
inline constexpr bool kOptionalText = false;
template <class U>
inline constexpr bool kOptionalText<std::optional<U>> = std::convertible_to<U, std::string>;

}  // namespace detail

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_RESULT_HPP_
