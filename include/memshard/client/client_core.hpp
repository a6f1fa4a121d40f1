// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_CLIENT_CORE_HPP_
#define MEMSHARD_CLIENT_CLIENT_CORE_HPP_

// client/client_core.hpp: ClientCore, everything of a client that does not
// depend on its locator type: the checks before the wire (key rules, value
// size), the route of a key whose server is ejected (probe, failover or
// refusal), and finish(), which turns libmemcached's answer into a Status and
// records it in the server's health. Every operation goes through it.

#include <libmemcached-1.0/memcached.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/client/connection_pool.hpp"
#include "memshard/client/fleet.hpp"
#include "memshard/client/return_codes.hpp"
#include "memshard/client/server_health.hpp"
#include "memshard/client_options.hpp"
#include "memshard/key.hpp"
#include "memshard/result.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// Route: where one request goes: `server`, whether it holds that server's
/// probe lease, and a failure when it goes nowhere.
struct Route {
  std::size_t server = 0;
  bool probe = false;
  Status status;
};

/// ClientCore: the locator-independent part of a client (see the file
/// comment). Not thread-safe: one client, one thread.
class ClientCore {
 public:
  explicit ClientCore(const ClientOptions& options)
      : pool_(options),
        policy_(options.failure_limit, options.retry_interval,
                options.connect_timeout + options.io_timeout + options.retry_interval) {}

  /// bind: moves to `members` (kept alive by the caller's snapshot).
  void bind(const Membership& members) {
    members_ = &members;
    pool_.bind(members);
    avoid_.assign(members.size(), 0);
    avoid_ready_ = false;
  }

  [[nodiscard]] auto options() const noexcept -> const ClientOptions& { return pool_.options(); }
  [[nodiscard]] auto pool() noexcept -> ConnectionPool& { return pool_; }
  [[nodiscard]] auto policy() const noexcept -> const HealthPolicy& { return policy_; }
  [[nodiscard]] auto members() const noexcept -> const Membership& { return *members_; }
  [[nodiscard]] auto health(std::size_t s) const noexcept -> ServerHealth& {
    return *members_->health[s];
  }

  /// check: the key rules and the value size, before anything reaches the
  /// wire; a failure Status, or nothing when both are fine.
  [[nodiscard]] auto check(std::string_view key, std::string_view value = {}) const
      -> std::optional<Status> {
    const std::size_t max_value = options().max_value_size;
    if (value.size() <= max_value && is_valid_key(key)) {
      return std::nullopt;  // the common case, in one cheap pass
    }
    if (const auto problem = check_key(key)) {
      return Status(Errc::kInvalidKey, MEMCACHED_BAD_KEY_PROVIDED, Status::kNoServer,
                    problem->message());
    }
    if (value.size() > max_value) {
      return Status(Errc::kValueTooLarge, MEMCACHED_E2BIG, Status::kNoServer,
                    "value is " + std::to_string(value.size()) + " bytes, max_value_size is " +
                        std::to_string(max_value));
    }
    return std::nullopt;
  }

  /// forget_avoid: the next failover route rebuilds its list of ejected
  /// servers (once per single operation; a multi-get builds it once).
  void forget_avoid() noexcept { avoid_ready_ = false; }

  /// route: where a key whose own server is `primary` goes now: there, a
  /// probe of it, `locate_avoiding(avoid)` (FailurePolicy::kFailover, when
  /// `failover` is true), or nowhere.
  template <class LocateAvoiding>
  auto route(std::size_t primary, bool failover, LocateAvoiding&& locate_avoiding) -> Route {
    ServerHealth& own = health(primary);
    if (!HealthPolicy::is_ejected(own)) {
      return Route{primary, false, Status()};
    }
    if (policy_.try_probe(own)) {
      return Route{primary, true, Status()};
    }
    if (failover && options().failure_policy == FailurePolicy::kFailover) {
      if (!avoid_ready_) {
        for (std::size_t s = 0; s < avoid_.size(); ++s) {
          avoid_[s] = HealthPolicy::is_ejected(health(s)) ? 1 : 0;
        }
        avoid_ready_ = true;
      }
      const std::size_t next = locate_avoiding(std::span<const std::uint8_t>(avoid_));
      if (!HealthPolicy::is_ejected(health(next))) {
        own.redirected.fetch_add(1, std::memory_order_relaxed);
        return Route{next, false, Status()};
      }
    }
    own.refused.fetch_add(1, std::memory_order_relaxed);
    return Route{primary, false, ejected_status(primary)};
  }

  /// finish: libmemcached's answer `rc` to `operation` as a Status, recorded
  /// in the server's health. `cause`, when given, explains a failure;
  /// `own_handle`: the request ran on the server's own handle, whose errno
  /// then explains it.
  auto finish(const Route& route, memcached_return_t rc, std::string_view operation,
              std::string_view cause = {}, bool own_handle = true) -> Status {
    const std::size_t server = route.server;
    ServerHealth& state = health(server);
    state.operations.fetch_add(1, std::memory_order_relaxed);
    const Errc code = to_errc(rc);
    Status status;
    if (code != Errc::kOk) {
      std::string text(operation);
      text.append(" on ").append(members_->servers[server].endpoint()).append(": ");
      text.append(memcached_strerror(nullptr, rc));
      const int error = cause.empty() && own_handle ? pool_.last_errno(server) : 0;
      if (!cause.empty()) {
        text.append(" (").append(cause).append(")");
      } else if (error != 0) {
        text.append(" (").append(std::generic_category().message(error)).append(")");
      }
      status = Status(code, rc, server, std::move(text));
    } else {
      status = Status(Errc::kOk, rc, server);
    }
    const bool server_failure = is_server_failure(code);
    if (server_failure) {
      state.errors.fetch_add(1, std::memory_order_relaxed);
      pool_.server_failed();
      pool_.drop(server);
    } else if (code == Errc::kServerError || code == Errc::kProtocolError) {
      state.errors.fetch_add(1, std::memory_order_relaxed);
    }
    (void)policy_.record(state, server_failure, route.probe);
    return status;
  }

  /// ejected_status: the failure of a request refused because its server is
  /// ejected.
  [[nodiscard]] auto ejected_status(std::size_t server) const -> Status {
    return Status(Errc::kServerEjected, MEMCACHED_SUCCESS, server,
                  members_->servers[server].endpoint() + " is ejected after " +
                      std::to_string(options().failure_limit) + " consecutive failures");
  }

 private:
  ConnectionPool pool_;
  HealthPolicy policy_;
  const Membership* members_ = nullptr;
  std::vector<std::uint8_t> avoid_;  // per server: ejected (failover routing)
  bool avoid_ready_ = false;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_CLIENT_CORE_HPP_
