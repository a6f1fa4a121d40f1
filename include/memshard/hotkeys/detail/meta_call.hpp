// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_HOTKEYS_DETAIL_META_CALL_HPP_
#define MEMSHARD_HOTKEYS_DETAIL_META_CALL_HPP_

// hotkeys/detail/meta_call.hpp: meta_call, one meta request on a member's meta connection by
// the call's deadline, for the hot-key parts (leases, stale marks, placeholders, the near
// cache's cas checks), which each need a meta command and have nothing to do without one.

#include <chrono>
#include <cstddef>
#include <optional>

#include "memshard/client/client_core.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/meta_protocol.hpp"
#include "memshard/wire/meta_connection.hpp"
#include "memshard/wire/meta_pool.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// meta_call: `request(link, deadline)` (a MetaConnection call that answers a MetaOutcome) on
/// member `s`'s meta connection, by the call's deadline; a connection that cannot be made is
/// the outcome's failure. Nothing when `s` takes no meta commands: with SASL, or memcached before
/// 1.6, which this call may find out (it is then marked, and served by libmemcached from now on).
template <class Request>
auto meta_call(ClientCore& core, MetaPool& meta, std::size_t s, Request&& request)
    -> std::optional<MetaOutcome> {
  if (core.options().sasl || !meta.supports_meta(s)) {
    return std::nullopt;
  }
  const MetaDeadline until{std::chrono::nanoseconds(core.call_deadline())};
  MetaStatus connected;
  MetaConnection& link = meta.connection(s, until, connected);
  MetaOutcome answer = connected.ok() ? request(link, until) : MetaOutcome{connected, {}};
  if (answer.status.code == MetaErrc::kNoMetaSupport ||
      (answer.ok() && answer.reply.kind == MetaReplyKind::kError)) {
    meta.mark_no_meta(s);
    return std::nullopt;
  }
  return answer;
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_HOTKEYS_DETAIL_META_CALL_HPP_
