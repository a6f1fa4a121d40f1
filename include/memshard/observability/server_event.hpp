// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_OBSERVABILITY_SERVER_EVENT_HPP_
#define MEMSHARD_OBSERVABILITY_SERVER_EVENT_HPP_

// observability/server_event.hpp: ServerEvent, what a client tells the application about a
// server's health as it happens (ClientOptions::on_server_event), for logs
// and metrics: ejections, failed probes, returns, servers kept in by the
// fail-open rule, the cleaning of a returning server, the servers a
// reconfiguration or migration adds or removes, and the keys that make a server hot.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// ServerEventKind: what happened to a server.
enum class ServerEventKind : std::uint8_t {
  kEjected,      ///< it reached the failure limit: its keys fail fast or fail over
  kKeptIn,       ///< it reached the limit, but too many servers are out (fail-open)
  kProbeFailed,  ///< a probe of the ejected server failed: out for longer
  kRestored,     ///< a probe succeeded: it serves again
  kHeld,         ///< its journal overflowed: it stays out (JournalOverflow::kHold)
  kCleaned,      ///< the writes it missed were deleted on it (count: how many)
  kFlushed,      ///< it was flushed after its journal overflowed
  /// a reconfiguration or migration made it a member (detail: what did it)
  kAdded,
  /// a reconfiguration or the end of a migration removed it (detail: what did it)
  kRemoved,
  /// a key it owns became hot (ClientOptions::hot_keys; detail: the key as sent, count: its
  /// estimated operations per second)
  kHotKey,
  /// a key it owns that was hot is no more (detail: the key as sent)
  kHotKeyCooled,
};

/// to_string: "ejected", "kept_in", "probe_failed", "restored", "held",
/// "cleaned", "flushed", "added", "removed", "hot_key", "hot_key_cooled".
[[nodiscard]] constexpr auto to_string(ServerEventKind kind) noexcept -> std::string_view {
  switch (kind) {
    case ServerEventKind::kEjected:
      return "ejected";
    case ServerEventKind::kKeptIn:
      return "kept_in";
    case ServerEventKind::kProbeFailed:
      return "probe_failed";
    case ServerEventKind::kRestored:
      return "restored";
    case ServerEventKind::kHeld:
      return "held";
    case ServerEventKind::kCleaned:
      return "cleaned";
    case ServerEventKind::kFlushed:
      return "flushed";
    case ServerEventKind::kAdded:
      return "added";
    case ServerEventKind::kRemoved:
      return "removed";
    case ServerEventKind::kHotKey:
      return "hot_key";
    case ServerEventKind::kHotKeyCooled:
      return "hot_key_cooled";
  }
  return "unknown";
}

/// ServerEvent: one event, with the server it happened to, its failure
/// detail (the Status text of the request that caused it, when one did) and
/// a count where the kind has one (kCleaned: keys deleted).
struct ServerEvent {
  ServerEventKind kind = ServerEventKind::kEjected;
  Server server;
  std::string detail;
  std::uint64_t count = 0;
};

/// ServerObserver: called on the thread of the client whose call caused the
/// event, after the change; clones share it, so it must be thread-safe. An
/// observer that throws is ignored (the exception does not reach the call).
using ServerObserver = std::function<void(const ServerEvent&)>;

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_OBSERVABILITY_SERVER_EVENT_HPP_
