// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_META_POOL_HPP_
#define MEMSHARD_WIRE_META_POOL_HPP_

// wire/meta_pool.hpp: MetaPool, a client's meta-protocol connections (one
// per server, opened on first use), for what libmemcached cannot send: a
// read that answers the remaining TTL, an add that answers its cas, a delete
// only if the cas still matches. A server that answers ERROR to a meta
// command (memcached before 1.6) is remembered, and asked no more.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "memshard/detail/compiled.hpp"
#include "memshard/fleet/fleet.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/meta_connection.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// to_memcached_return: a meta call's outcome as the libmemcached code that
/// means the same, so that it counts in the server's health like any other.
[[nodiscard]] inline auto to_memcached_return(const MetaStatus& status, MetaReplyKind kind) noexcept
    -> memcached_return_t {
  switch (status.code) {
    case MetaErrc::kOk:
      break;
    case MetaErrc::kTimeout:
      return MEMCACHED_TIMEOUT;
    case MetaErrc::kResolve:
      return MEMCACHED_HOST_LOOKUP_FAILURE;
    case MetaErrc::kConnect:
    case MetaErrc::kNotConnected:
    case MetaErrc::kDisconnected:
    case MetaErrc::kIo:
      return MEMCACHED_CONNECTION_FAILURE;
    case MetaErrc::kMalformed:
      return MEMCACHED_PROTOCOL_ERROR;
    case MetaErrc::kInvalidRequest:
      return MEMCACHED_BAD_KEY_PROVIDED;
    case MetaErrc::kNoMetaSupport:
    case MetaErrc::kRefused:
      return MEMCACHED_CLIENT_ERROR;
  }
  switch (kind) {
    case MetaReplyKind::kValue:
    case MetaReplyKind::kHeader:
    case MetaReplyKind::kNoop:
      return MEMCACHED_SUCCESS;
    case MetaReplyKind::kMiss:
    case MetaReplyKind::kNotFound:
      return MEMCACHED_NOTFOUND;
    case MetaReplyKind::kNotStored:
      return MEMCACHED_NOTSTORED;
    case MetaReplyKind::kExists:
      return MEMCACHED_DATA_EXISTS;
    case MetaReplyKind::kServerError:
      return MEMCACHED_SERVER_ERROR;
    case MetaReplyKind::kError:
    case MetaReplyKind::kClientError:
      return MEMCACHED_CLIENT_ERROR;
  }
  return MEMCACHED_PROTOCOL_ERROR;
}

/// MetaPool: see the file comment. Not thread-safe: one client, one thread.
class MetaPool {
 public:
  /// MetaPool: connections that accept values of `max_value_size` bytes
  /// (ClientOptions::max_value_size, for servers started with a larger -I),
  /// and at least MetaLimits::kDefaultMaxValue.
  explicit MetaPool(std::size_t max_value_size = MetaLimits::kDefaultMaxValue) {
    options_.limits.max_value = std::max(max_value_size, MetaLimits::kDefaultMaxValue);
  }

  /// max_value: the largest value a connection of the pool reads.
  [[nodiscard]] auto max_value() const noexcept -> std::size_t { return options_.limits.max_value; }

  /// bind: moves to `members`; connections to servers that stay (same host
  /// and port) are kept, with what is known of their meta support.
  void bind(const Membership& members);

  /// supports_meta: false once server `s` answered ERROR to a meta command.
  [[nodiscard]] auto supports_meta(std::size_t s) const noexcept -> bool {
    return !slots_[s].no_meta;
  }
  /// mark_no_meta: server `s` has no meta commands.
  void mark_no_meta(std::size_t s) noexcept;

  /// connection: server `s`'s connection, connected within `deadline` when it
  /// never was; a failure to connect is the status.
  auto connection(std::size_t s, MetaDeadline deadline, MetaStatus& status) -> MetaConnection&;

 private:
  struct Slot {
    MetaConnection connection;
    bool started = false;
    bool no_meta = false;
  };
  MetaConnectionOptions options_;
  std::vector<Slot> slots_;
  std::vector<std::pair<std::string, std::uint16_t>> hosts_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE void MetaPool::bind(const Membership& members) {
  std::map<std::pair<std::string, std::uint16_t>, Slot> open;
  for (Slot& slot : slots_) {
    if (slot.started) {
      open.emplace(std::pair(slot.connection.host(), slot.connection.port()), std::move(slot));
    }
  }
  slots_.clear();
  slots_.resize(members.size());
  hosts_.clear();
  for (std::size_t s = 0; s < members.size(); ++s) {
    const Server& server = members.servers[s];
    hosts_.emplace_back(server.host, server.port);
    const auto found = open.find(hosts_.back());
    if (found != open.end()) {
      slots_[s] = std::move(found->second);
    } else {
      slots_[s].connection = MetaConnection(options_);
    }
  }
}

MEMSHARD_DETAIL_INLINE void MetaPool::mark_no_meta(std::size_t s) noexcept {
  slots_[s].no_meta = true;
  slots_[s].connection.close();
}

MEMSHARD_DETAIL_INLINE auto MetaPool::connection(std::size_t s, MetaDeadline deadline,
                                                 MetaStatus& status) -> MetaConnection& {
  Slot& slot = slots_[s];
  status = MetaStatus{};
  if (!slot.started) {
    std::string host = hosts_[s].first;
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    status = slot.connection.connect(host, hosts_[s].second, deadline);
    slot.started = true;  // later calls reconnect by themselves
  }
  return slot.connection;
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_META_POOL_HPP_
