// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_DEADLINE_SCOPE_HPP_
#define MEMSHARD_CLIENT_DEADLINE_SCOPE_HPP_

// client/deadline_scope.hpp: DeadlineScope, a deadline of the caller's for every
// call a client makes while the scope lives (ShardedClient::deadline_scope):
// a request handler with 50 ms left gives them to its cache calls, however
// many it makes. Each call still ends by its own call_timeout when that comes
// first. A call that the caller's deadline cuts short tells nothing of its
// server: its timeout is never counted toward ejection, a probe it made is
// given back unjudged, and once the deadline has passed nothing is sent.

#include <chrono>
#include <cstdint>

#include "memshard/client/client_core.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// DeadlineScope: while it lives, every call of the client that made it
/// ends by its deadline (steady clock), or by the call's own call_timeout
/// when that comes first; a call begun after the deadline sends nothing and
/// answers Errc::kTimeout (a write is then remembered like any failed write:
/// the key's old value is deleted before it is served again). Scopes nest: an
/// inner one never extends an outer one's deadline, and the outer one's comes
/// back when the inner ends. Made by ShardedClient::deadline_scope; it must
/// not outlive that client, nor be held while the client is moved.
class DeadlineScope {
 public:
  /// The scope of the client whose core is `core` (ShardedClient::deadline_scope).
  DeadlineScope(detail::ClientCore& core, std::chrono::steady_clock::time_point deadline) noexcept
      : core_(core), previous_(core.caller_deadline()) {
    std::int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
    ns = ns < 1 ? 1 : ns;  // 0 stands for no deadline
    core.set_caller_deadline(previous_ != 0 && previous_ < ns ? previous_ : ns);
  }
  DeadlineScope(const DeadlineScope&) = delete;
  auto operator=(const DeadlineScope&) -> DeadlineScope& = delete;
  DeadlineScope(DeadlineScope&&) = delete;
  auto operator=(DeadlineScope&&) -> DeadlineScope& = delete;
  ~DeadlineScope() { core_.set_caller_deadline(previous_); }

  /// deadline: the deadline in force (an outer scope's when that is earlier).
  [[nodiscard]] auto deadline() const noexcept -> std::chrono::steady_clock::time_point {
    return std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::nanoseconds(core_.caller_deadline())));
  }

 private:
  detail::ClientCore& core_;
  std::int64_t previous_;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_DEADLINE_SCOPE_HPP_
