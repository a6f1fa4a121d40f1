// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_STORE_STATUS_HPP_
#define MEMSHARD_COORDINATION_STORE_STATUS_HPP_

// coordination/store_status.hpp: the outcome of one request to the coordination store (etcd):
// StoreErrc, StoreStatus, and StoreResult<T>, a value or the status saying why there is none.
// Like the client's Status, a failure is a value, never an exception: etcd is a server that can
// be slow, down or partitioned away, and every caller must decide what that means for it.

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

/// StoreErrc: why a request to the store failed.
enum class StoreErrc : std::uint8_t {
  kOk,           ///< done
  kUnreachable,  ///< no endpoint could be connected to before the deadline
  kTimeout,      ///< an endpoint took the request but did not answer before the deadline: the
                 ///< request may or may not have been carried out
  kRejected,     ///< the store answered with an error (an unknown lease, a request it refused)
  kBadReply,     ///< the reply was not what the store's API documents
};

/// to_string: a short name for a StoreErrc ("ok", "unreachable", ...).
[[nodiscard]] constexpr auto to_string(StoreErrc code) noexcept -> std::string_view {
  switch (code) {
    case StoreErrc::kOk:
      return "ok";
    case StoreErrc::kUnreachable:
      return "unreachable";
    case StoreErrc::kTimeout:
      return "timeout";
    case StoreErrc::kRejected:
      return "rejected";
    case StoreErrc::kBadReply:
      return "bad_reply";
  }
  return "unknown";
}

/// StoreStatus: the outcome of one request to the store, with the endpoint and the reason when
/// it failed.
class [[nodiscard]] StoreStatus {
 public:
  StoreStatus() = default;
  StoreStatus(StoreErrc code, std::string detail) : code_(code), detail_(std::move(detail)) {}

  [[nodiscard]] auto ok() const noexcept -> bool { return code_ == StoreErrc::kOk; }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] auto code() const noexcept -> StoreErrc { return code_; }
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
  StoreErrc code_ = StoreErrc::kOk;
  std::string detail_;
};

inline auto operator<<(std::ostream& out, const StoreStatus& status) -> std::ostream& {
  return out << status.message();
}

/// StoreResult: a value, or the StoreStatus saying why there is none. value() on a failure
/// throws std::logic_error (a programming error: check ok() first).
template <class T>
class [[nodiscard]] StoreResult {
 public:
  StoreResult(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  StoreResult(StoreStatus failure) : status_(std::move(failure)) {}  // NOLINT

  [[nodiscard]] auto ok() const noexcept -> bool { return value_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] auto value() const& -> const T& {
    check();
    return *value_;
  }
  [[nodiscard]] auto value() && -> T {
    check();
    return std::move(*value_);
  }
  [[nodiscard]] auto operator*() const& -> const T& { return value(); }
  [[nodiscard]] auto operator*() && -> T { return std::move(*this).value(); }
  [[nodiscard]] auto operator->() const -> const T* {
    check();
    return &*value_;
  }
  [[nodiscard]] auto status() const noexcept -> const StoreStatus& { return status_; }
  [[nodiscard]] auto code() const noexcept -> StoreErrc { return status_.code(); }

 private:
  void check() const {
    if (!value_.has_value()) {
      throw std::logic_error("memshard: value() of a failed store request: " + status_.message());
    }
  }

  std::optional<T> value_;
  StoreStatus status_;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_STORE_STATUS_HPP_
