// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_DETAIL_SHARDED_CLIENT_INTERNALS_HPP_
#define MEMSHARD_CLIENT_DETAIL_SHARDED_CLIENT_INTERNALS_HPP_

// client/detail/sharded_client_internals.hpp: the definitions of ShardedClient's private helpers
// (routing, run(), the migration window, batch writes' groups, multi-gets' sent keys).
// Included at the end of sharded_client.hpp, which declares them.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/client/client_core.hpp"
#include "memshard/client/client_options.hpp"
#include "memshard/client/deadline_scope.hpp"
#include "memshard/client/multi_get.hpp"
#include "memshard/client/result.hpp"
#include "memshard/codecs/codec.hpp"
#include "memshard/detail/clock.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/fleet/fleet.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/migration/migration.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/migration/migration_window.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/sharded_client.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/meta_pool.hpp"
#include "memshard/wire/multi_write.hpp"
#include "memshard/wire/per_server_multi_get.hpp"
#include "memshard/wire/polled_multi_get.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

template <Locator L>
void ShardedClient<L>::check_policy() const {
  if constexpr (!FailoverLocator<L>) {
    if (options_.failure_policy == FailurePolicy::kFailover) {
      detail::throw_config_error("failover needs a locator with locate_avoiding()",
                                 "FailurePolicy::kFailover");
    }
  }
}

template <Locator L>
void ShardedClient<L>::check_locator(const std::shared_ptr<const L>& locator) const {
  if (!locator) {
    detail::throw_config_error("locator factory returned no locator", "ShardedClient");
  }
  if (options_.failure_policy == FailurePolicy::kFailover && !can_fail_over(*locator)) {
    detail::throw_config_error(
        "failover needs a locator that can place keys around ejected "
        "servers (this one wraps a locator without locate_avoiding())",
        "FailurePolicy::kFailover");
  }
}

template <Locator L>
void ShardedClient<L>::start(std::vector<Server> servers, std::shared_ptr<const L> locator,
                             LocatorFactory factory) {
  fleet_ = std::make_shared<Fleet<L>>(std::move(servers), std::move(locator), std::move(factory),
                                      prefix_.placement_skip());
  seat_ = fleet_->calls().seat();
  if (options_.hot_keys) {
    hot_watch_ = std::make_shared<detail::HotKeyWatch>(*options_.hot_keys);
    hot_seat_ = hot_watch_->seat();
  }
  if (options_.near_cache) {
    near_ = std::make_shared<detail::NearCache>(*options_.near_cache);
  }
  adopt(fleet_->current());
}

template <Locator L>
void ShardedClient<L>::refresh() {
  if (fleet_->generation() != generation_) [[unlikely]] {
    adopt(fleet_->current());
  }
}

template <Locator L>
auto ShardedClient<L>::enter() -> detail::CallMark {
  if (seat_->depth() == 0) [[likely]] {
    refresh();  // a call made inside a call (from a callback) stays on the outer call's snapshot
  }
  if (seat_->enter(generation_) && fleet_->settled_generation() != generation_) [[unlikely]] {
    refresh();  // published meanwhile: the call runs on the new one, and says so
    seat_->remark(generation_);
  }
  return detail::CallMark(*seat_);
}

template <Locator L>
[[gnu::cold]] [[gnu::noinline]] auto ShardedClient<L>::refuse_fenced(std::string_view key,
                                                                     std::string_view value)
    -> Status {
  if (auto refused = core_.check(key, value)) {
    return std::move(*refused);
  }
  snapshot_->fence->keep(key);
  return Status(Errc::kFenced, MEMCACHED_FAILURE, Status::kNoServer,
                "fenced: this member of a fleet cannot be sure it serves the fleet's phase; the "
                "key is deleted once it serves again");
}

template <Locator L>
auto ShardedClient<L>::wait_for_earlier_calls(std::chrono::milliseconds timeout) const -> bool {
  return fleet_->calls().wait_before(fleet_->settled_generation(),
                                     std::chrono::steady_clock::now() + timeout);
}

template <Locator L>
void ShardedClient<L>::adopt(std::shared_ptr<const Snapshot> next) {
  core_.bind(next->members);  // the old snapshot stays alive until this returns
  meta_.bind(next->members);
  snapshot_ = std::move(next);
  locator_ = snapshot_->locator.get();
  generation_ = snapshot_->generation;
}

template <Locator L>
[[gnu::cold]] void ShardedClient<L>::roll_hot() noexcept {
  try {
    auto rolled = hot_watch_->roll(detail::coarse_now_ns());
    if (!rolled) {
      return;
    }
    const auto& [change, hot] = *rolled;
    if (near_ != nullptr) {
      std::vector<std::string> keys;
      keys.reserve(hot.size());
      for (const HotKey& key : hot) {
        keys.push_back(key.key);
      }
      near_->admit(keys);
    }
    if (!options_.on_server_event) {
      return;
    }
    const auto owner = [this](const std::string& key) -> const Server& {
      return snapshot_->members.servers[snapshot_->locate(key)];
    };
    for (const std::string& key : change.became_hot) {
      const auto found =
          std::find_if(hot.begin(), hot.end(), [&key](const HotKey& h) { return h.key == key; });
      const auto rate = found == hot.end() ? 0.0 : found->per_second;
      core_.notify(ServerEventKind::kHotKey, owner(key), key,
                   static_cast<std::uint64_t>(rate + 0.5));
    }
    for (const std::string& key : change.cooled) {
      core_.notify(ServerEventKind::kHotKeyCooled, owner(key), key);
    }
  } catch (...) {  // no memory for the report: the next window tries again
  }
}

template <Locator L>
auto ShardedClient<L>::near_read(std::string_view key, const detail::NearCache::Found& found,
                                 std::int64_t read_at)
    -> std::optional<Result<std::optional<Item>>> {
  if (!found.item) {
    return std::nullopt;  // hot, not kept yet: the get reads the server and keeps its answer
  }
  const std::size_t primary = snapshot_->locate(key);
  if (found.fresh) {
    note_hot(key);  // counted as run() counts the gets it makes
    near_->count_hit();
    return Result<std::optional<Item>>(found.item, Status(Errc::kOk, MEMCACHED_SUCCESS, primary));
  }
  core_.forget_avoid();
  const detail::Route route = route_from(primary, key);
  if (!route.status.ok() || route.probe || route.server != primary) {
    if (route.probe) {
      detail::HealthPolicy::release_probe(core_.health(route.server));
    }
    return std::nullopt;  // the server stands in for another, or cannot be asked: the get decides
  }
  const std::optional<std::uint64_t> cas = detail::cas_now(core_, meta_, route, key);
  if (!cas || *cas != found.item->cas) {
    near_->count_changed();
    return std::nullopt;
  }
  note_hot(key);
  near_->renew(key, found.version, read_at);
  near_->count_revalidated();
  return Result<std::optional<Item>>(found.item, Status(Errc::kOk, MEMCACHED_SUCCESS, primary));
}

template <Locator L>
auto ShardedClient<L>::codec_failure(std::string_view operation, std::size_t server,
                                     const CodecError& error) const -> Status {
  std::string text(operation);
  const std::shared_ptr<const Snapshot> now = view();
  if (server < now->members.servers.size()) {
    text.append(" on ").append(now->members.servers[server].endpoint());
  }
  text.append(": ").append(to_string(error.code())).append(": ").append(error.message());
  return Status(Errc::kCodecError, MEMCACHED_SUCCESS, server, std::move(text));
}

template <Locator L>
auto ShardedClient<L>::view() const noexcept -> std::shared_ptr<const Snapshot> {
  if (fleet_->generation() == generation_) {
    return snapshot_;
  }
  return fleet_->current();
}

template <Locator L>
auto ShardedClient<L>::route_from(std::size_t primary, std::string_view key, std::int64_t deadline)
    -> detail::Route {
  return core_.route(
      primary, FailoverLocator<L>,
      [this, key, primary](std::span<const std::uint8_t> avoid) -> std::size_t {
        if constexpr (FailoverLocator<L>) {
          (void)primary;
          return locator_->locate_avoiding(snapshot_->placement_key(key),
                                           avoid.first(snapshot_->placed));
        } else {
          (void)avoid;
          return primary;
        }
      },
      deadline);
}

template <Locator L>
template <class Call>
auto ShardedClient<L>::run(std::string_view operation, std::string_view key, std::string_view value,
                           Access access, Call&& call) -> Status {
  if (auto refused = core_.check(key, value)) {
    return std::move(*refused);
  }
  note_hot(key);
  // No refresh() here: run() is always a step of a call that entered (get, in_window, remove),
  // and a call runs whole on the snapshot it entered on. A window step and the migration's
  // rules hold pointers into that snapshot; moving to a newer one between steps would free it.
  // A read checked the gate already (get answers a miss while fenced): one check a call.
  if (access != Access::kRead && fenced()) [[unlikely]] {
    return refuse_fenced(key, value);
  }
  core_.forget_avoid();
  const std::size_t primary = snapshot_->locate(key);
  if (core_.expired()) [[unlikely]] {
    return core_.unsent(primary);  // an earlier step of the call took its budget
  }
  detail::Route route = route_from(primary, key);
  if (!route.status.ok()) {
    if (access == Access::kWrite) {
      core_.remember(primary, key);
    }
    return std::move(route.status);
  }
  redirected_ = route.server != primary;
  // Held to the call's deadline whatever the server does (a reply that
  // trickles in included): wire/deadline_watch.hpp.
  memcached_return_t rc = MEMCACHED_SUCCESS;
  bool late = false;
  {
    detail::WatchedCall watched = core_.watch_call(native(route.server));
    rc = call(route.server);
    watched.end();
    late = rc == MEMCACHED_TIMEOUT && watched.passed();
  }
  Status status = late ? core_.finish(route, rc, operation, core_.deadline_cause())
                       : core_.finish(route, rc, operation);
  if (access != Access::kRead && near_ != nullptr) [[unlikely]] {
    near_->drop(key);  // a read begun before stores nothing; the next one reads the server
  }
  if (access == Access::kWrite) {
    if (redirected_) {
      core_.remember(primary, key, route.server);
    }
    if (is_server_failure(status.code())) {
      core_.remember(route.server, key);
    }
  }
  return status;
}

template <Locator L>
auto ShardedClient<L>::exptime(Expiry expiry) const noexcept -> std::time_t {
  if (!redirected_) [[likely]] {
    return expiry.wire_value();
  }
  return detail::capped_exptime(expiry.wire_value(), options_.failover_ttl.count(),
                                static_cast<std::int64_t>(std::time(nullptr)));
}

template <Locator L>
auto ShardedClient<L>::end_migration(bool commit) -> bool {
  bool ended = false;
  announce(commit ? "commit_migration" : "abort_migration",
           [&] { ended = fleet_->end_migration(commit); });
  return ended;
}

template <Locator L>
template <class Change>
void ShardedClient<L>::announce(std::string_view what, Change&& change) {
  if (!options_.on_server_event) {
    change();
    refresh();
    return;
  }
  const std::shared_ptr<const Snapshot> before = fleet_->current();
  change();
  refresh();
  const auto missing = [](const std::vector<Server>& from, const std::vector<Server>& in,
                          auto&& report) {
    for (const Server& server : from) {
      if (std::none_of(in.begin(), in.end(), [&](const Server& other) {
            return other.host == server.host && other.port == server.port;
          })) {
        report(server);
      }
    }
  };
  const std::vector<Server>& old_members = before->members.servers;
  const std::vector<Server>& new_members = snapshot_->members.servers;
  missing(new_members, old_members,
          [&](const Server& server) { core_.notify(ServerEventKind::kAdded, server, what); });
  missing(old_members, new_members,
          [&](const Server& server) { core_.notify(ServerEventKind::kRemoved, server, what); });
}

template <Locator L>
template <class Call>
auto ShardedClient<L>::in_window(std::string_view key, detail::WriteRule rule, Call&& call)
    -> Status {
  const detail::CallMark mark = enter();
  core_.start_call();
  if (!snapshot_->migration) [[likely]] {
    return call();  // run() checks the fence
  }
  if (fenced()) [[unlikely]] {
    return refuse_fenced(key);
  }
  return window().write(key, rule, call);
}

template <Locator L>
template <class OnHit, class OnFailure>
void ShardedClient<L>::visit_sent(std::span<const std::string_view> keys, OnHit& on_hit,
                                  OnFailure& on_failure) {
  const detail::CallMark mark = enter();
  core_.start_call();
  if (hot_seat_ != nullptr) [[unlikely]] {
    for (const std::string_view key : keys) {
      note_hot(key);
    }
  }
  if (fenced()) [[unlikely]] {
    for (std::size_t i = 0; i < keys.size(); ++i) {  // every valid key a miss
      if (auto refused = core_.check(keys[i])) {
        on_failure(i, *refused);
      }
    }
    return;
  }
  if (snapshot_->migration) [[unlikely]] {
    const std::shared_ptr<const Snapshot> pinned = snapshot_;  // callbacks may not change it
    migrated_.run(
        keys, *pinned, core_, meta_, plan_, per_server_,
        [this](std::span<const std::string_view> all, auto& hit, auto& failure) {
          this->visit_placed(all, hit, failure);
        },
        [this] { abandon(false); }, on_hit, on_failure);
    return;
  }
  // What a get_or_load's lease looks like while its loader runs (hotkeys/detail/lease_load.hpp):
  // read again by meta, and a miss when it is one.
  auto unless_placeholder = [&](std::size_t i, const ItemView& item) {
    if (item.value.empty() && item.flags == 0) [[unlikely]] {
      if (detail::LeaseLoad::placeholder(core_, meta_, snapshot_->locate(keys[i]), keys[i])) {
        return;
      }
    }
    on_hit(i, item);
  };
  visit_placed(keys, unless_placeholder, on_failure);
}

template <Locator L>
template <KeyRange Keys>
auto ShardedClient<L>::sent_keys(const Keys& keys) -> std::span<const std::string_view> {
  if constexpr (std::ranges::contiguous_range<Keys> &&
                std::same_as<std::ranges::range_value_t<Keys>, std::string_view>) {
    if (prefix_.empty()) {
      return std::span<const std::string_view>(std::ranges::data(keys), std::ranges::size(keys));
    }
  }
  key_views_.clear();
  key_views_.reserve(std::ranges::size(keys));
  if (prefix_.empty()) {
    for (auto&& key : keys) {
      key_views_.emplace_back(std::string_view(key));
    }
    return key_views_;
  }
  // The prefixed keys one after another, in a buffer reserved first so
  // that the views stay valid.
  std::size_t total = 0;
  for (auto&& key : keys) {
    total += prefix_.text().size() + std::string_view(key).size();
  }
  sent_keys_.clear();
  sent_keys_.reserve(total);
  for (auto&& key : keys) {
    const std::size_t at = sent_keys_.size();
    sent_keys_.append(prefix_.text());
    sent_keys_.append(std::string_view(key));
    key_views_.emplace_back(sent_keys_.data() + at, sent_keys_.size() - at);
  }
  return key_views_;
}

template <Locator L>
template <KeyValueRange Items>
auto ShardedClient<L>::write_pairs(detail::WriteKind kind, const Items& items, Expiry expiry,
                                   std::uint32_t flags) -> MultiWriteResult {
  pair_keys_.clear();
  pair_values_.clear();
  pair_keys_.reserve(std::ranges::size(items));
  pair_values_.reserve(std::ranges::size(items));
  for (auto&& item : items) {
    pair_keys_.emplace_back(std::string_view(item.first));
    pair_values_.emplace_back(std::string_view(item.second));
  }
  return write_keys(kind, sent_keys(pair_keys_), pair_values_, expiry, flags);
}

template <Locator L>
auto ShardedClient<L>::write_keys(detail::WriteKind kind, std::span<const std::string_view> keys,
                                  std::span<const std::string_view> values, Expiry expiry,
                                  std::uint32_t flags) -> MultiWriteResult {
  MultiWriteResult out;
  out.statuses.resize(keys.size());
  const auto value_at = [&](std::size_t i) {
    return values.empty() ? std::string_view() : values[i];
  };
  const detail::CallMark mark = enter();
  core_.start_call();
  if (fenced()) [[unlikely]] {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      out.statuses[i] = refuse_fenced(keys[i], value_at(i));
    }
    return out;
  }
  if (snapshot_->migration) [[unlikely]] {
    // Each key by the window's rules (docs/migration.md), all by the
    // batch's one deadline: a key not sent by then times out unsent.
    (void)core_.call_deadline();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      out.statuses[i] = kind == detail::WriteKind::kDelete
                            ? remove_sent(keys[i])
                            : window().write(keys[i], write_rule(kind), [&] {
                                return write_one(kind, keys[i], value_at(i), expiry, flags);
                              });
    }
    return out;
  }
  const bool keyed = kind != detail::WriteKind::kTouch;  // a write its server misses is remembered
  const std::size_t members = snapshot_->members.size();
  groups_.resize(members);
  for (std::vector<detail::WriteItem>& group : groups_) {
    group.clear();
  }
  group_routes_.assign(members, detail::Route{});
  primaries_.resize(keys.size());
  core_.forget_avoid();
  const auto unix_now = static_cast<std::int64_t>(std::time(nullptr));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string_view value = value_at(i);
    if (auto refused = core_.check(keys[i], value)) {
      out.statuses[i] = std::move(*refused);
      continue;
    }
    note_hot(keys[i]);  // (in a window, run() counts each key)
    if (near_ != nullptr && kind != detail::WriteKind::kTouch) [[unlikely]] {
      near_->drop(keys[i]);
    }
    const std::size_t primary = snapshot_->locate(keys[i]);
    primaries_[i] = primary;
    detail::Route route;
    if (!groups_[primary].empty() && group_routes_[primary].server == primary) {
      route = detail::Route{primary, false, Status()};  // a server probed here takes all its keys
    } else {
      route = route_from(primary, keys[i]);
    }
    if (!route.status.ok()) {
      if (keyed) {
        core_.remember(primary, keys[i]);
      }
      out.statuses[i] = std::move(route.status);
      continue;
    }
    std::vector<detail::WriteItem>& group = groups_[route.server];
    if (group.empty()) {
      group_routes_[route.server] = route;
    }
    const std::time_t wire =
        route.server == primary
            ? expiry.wire_value()
            : detail::capped_exptime(expiry.wire_value(), options_.failover_ttl.count(), unix_now);
    group.push_back(detail::WriteItem{keys[i], value, static_cast<std::int32_t>(wire), flags, i});
  }
  const std::string_view name = detail::operation_name(kind);
  for (std::size_t s = 0; s < members; ++s) {
    const std::vector<detail::WriteItem>& group = groups_[s];
    if (group.empty()) {
      continue;
    }
    detail::Route route = group_routes_[s];
    auto outcome = detail::MultiWriter::Outcome::kNoMeta;
    if (!options_.sasl && meta_.supports_meta(s)) {
      const detail::MetaDeadline until{std::chrono::nanoseconds(core_.call_deadline())};
      outcome = writer_.write(meta_, s, kind, group, until, codes_, cause_);
    }
    const bool written = outcome != detail::MultiWriter::Outcome::kNoMeta;
    if (outcome == detail::MultiWriter::Outcome::kFailed) {
      // The server or its connection failed: once in its health, for every key.
      const Status failed = core_.finish(route, codes_.front(), name, cause_, false);
      for (const detail::WriteItem& item : group) {
        out.statuses[item.index] = failed;
      }
    } else {
      for (std::size_t j = 0; j < group.size(); ++j) {
        const detail::WriteItem& item = group[j];
        if (written) {
          out.statuses[item.index] = core_.finish(route, codes_[j], name, {}, false);
        } else {
          memcached_st* memc = native(s);
          memcached_return_t rc = MEMCACHED_SUCCESS;
          {
            const detail::WatchedCall watched =
                core_.watch(memc, detail::steady_now_ns(), core_.call_deadline());
            rc = write_on(memc, kind, item.key, item.value, item.exptime, item.flags);
          }
          out.statuses[item.index] = core_.finish(route, rc, name);
        }
        route.probe = false;  // a probe is settled by the server's first answer
      }
    }
    if (keyed) {
      for (const detail::WriteItem& item : group) {
        if (s != primaries_[item.index]) {
          core_.remember(primaries_[item.index], item.key, s);
        }
        if (is_server_failure(out.statuses[item.index].code())) {
          core_.remember(s, item.key);
        }
      }
    }
  }
  return out;
}

template <Locator L>
auto ShardedClient<L>::remove_sent(std::string_view key) -> Status {
  const auto call = [&] {
    return run("delete", key, {}, Access::kWrite,
               [&](std::size_t server) { return detail::delete_key(native(server), key); });
  };
  if (snapshot_->migration) [[unlikely]] {
    return window().remove(key, call);
  }
  return call();
}

template <Locator L>
auto ShardedClient<L>::write_one(detail::WriteKind kind, std::string_view key,
                                 std::string_view value, Expiry expiry, std::uint32_t flags)
    -> Status {
  const Access access = kind == detail::WriteKind::kTouch ? Access::kTouch : Access::kWrite;
  return run(detail::operation_name(kind), key, value, access, [&](std::size_t server) {
    return write_on(native(server), kind, key, value, exptime(expiry), flags);
  });
}

template <Locator L>
auto ShardedClient<L>::write_on(memcached_st* memc, detail::WriteKind kind, std::string_view key,
                                std::string_view value, std::time_t exptime, std::uint32_t flags)
    -> memcached_return_t {
  switch (kind) {
    case detail::WriteKind::kSet:
      return memcached_set(memc, key.data(), key.size(), value.data(), value.size(), exptime,
                           flags);
    case detail::WriteKind::kAdd: {
      const memcached_return_t rc =
          memcached_add(memc, key.data(), key.size(), value.data(), value.size(), exptime, flags);
      return rc == MEMCACHED_DATA_EXISTS ? MEMCACHED_NOTSTORED : rc;  // the binary protocol's word
    }
    case detail::WriteKind::kDelete:
      return detail::delete_key(memc, key);
    case detail::WriteKind::kTouch:
      return memcached_touch(memc, key.data(), key.size(), exptime);
  }
  return MEMCACHED_INVALID_ARGUMENTS;
}

template <Locator L>
auto ShardedClient<L>::write_rule(detail::WriteKind kind) noexcept -> detail::WriteRule {
  switch (kind) {
    case detail::WriteKind::kSet:
    case detail::WriteKind::kDelete:
      return detail::WriteRule::kInvalidate;
    case detail::WriteKind::kAdd:
      return detail::WriteRule::kMoveFirst;
    case detail::WriteKind::kTouch:
      return detail::WriteRule::kMoveOnMiss;
  }
  return detail::WriteRule::kInvalidate;
}

template <Locator L>
template <class OnHit, class OnFailure>
void ShardedClient<L>::visit_placed(std::span<const std::string_view> keys, OnHit& on_hit,
                                    OnFailure& on_failure) {
  detail::BatchPlan& plan = plan_;
  plan.reset(keys.size(), snapshot_->members.size());
  core_.forget_avoid();
  bool polled = false;
  try {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (auto refused = core_.check(keys[i])) {
        on_failure(i, *refused);
        continue;
      }
      plan.valid_keys.push_back(snapshot_->placement_key(keys[i]));
      plan.valid_index.push_back(i);
    }
    // Every valid key's own server, all at once where the locator can.
    plan.primaries.resize(plan.valid_keys.size());
    if constexpr (BatchLocator<L>) {
      locator_->locate_many(plan.valid_keys, plan.primaries);
    } else {
      for (std::size_t v = 0; v < plan.valid_keys.size(); ++v) {
        plan.primaries[v] = locator_->locate(plan.valid_keys[v]);
      }
    }
    for (std::size_t v = 0; v < plan.valid_keys.size(); ++v) {
      const std::size_t primary = plan.primaries[v];
      const std::size_t i = plan.valid_index[v];
      if (plan.probing(primary)) {  // a server probed in this call takes all its keys
        plan.assign(i, detail::Route{primary, false, Status()});
        continue;
      }
      detail::Route route = route_from(primary, keys[i]);
      if (!route.status.ok()) {
        on_failure(i, route.status);
        continue;
      }
      plan.assign(i, route);
    }
    if (plan.used.empty()) {
      return;
    }
    // Send every server its request, then read the answers, all within one
    // deadline: hung servers cost one timeout in all, not one each.
    // (The deadline started already if routing had to clean a server.)
    const std::int64_t deadline = core_.call_deadline();
    polled = options_.multi_get == MultiGetMode::kPolled &&
             plan.used.size() <= detail::kMaxPolledServers;
    if (polled) {
      polled_.run(keys, plan, deadline, core_, per_server_, on_hit, on_failure);
    } else {
      per_server_.run(keys, plan, deadline, core_, on_hit, on_failure);
    }
  } catch (...) {
    abandon(polled);
    throw;
  }
}

template <Locator L>
void ShardedClient<L>::abandon(bool polled) noexcept {
  detail::BatchPlan& plan = plan_;
  if (polled) {
    core_.pool().drop_fan();
  }
  for (std::size_t s = 0; s < plan.routed.size(); ++s) {
    if (plan.wired[s] != 0) {
      core_.pool().drop(s);
    }
    if (plan.routed[s] != 0 && plan.settled[s] == 0 && plan.routes[s].probe) {
      detail::HealthPolicy::release_probe(core_.health(s));
    }
  }
}

template <Locator L>
auto ShardedClient<L>::fetch_one(std::size_t server, std::string_view key,
                                 std::optional<Item>& item) -> memcached_return_t {
  detail::MemcachedHandle& connection = core_.pool().handle(server);
  const char* keys[] = {key.data()};
  const std::size_t lengths[] = {key.size()};
  memcached_return_t rc = memcached_mget(connection.native_handle(), keys, lengths, 1);
  if (memcached_success(rc)) {
    // One value at most, for this key: anything else (a key not asked
    // for, a second value read past END) is a reply to some other
    // request, and none of it is returned.
    bool stray = false;
    rc = detail::ConnectionPool::fetch_all(
        connection, [&](std::string_view found_key, const memcached_result_st& found) {
          if (found_key != key || item) {
            stray = true;
            return;
          }
          fill(item, found);
        });
    if (stray) {
      rc = detail::kStrayReply;
    }
  }
  return rc;
}

template <Locator L>
void ShardedClient<L>::fill(std::optional<Item>& item, const memcached_result_st& result) {
  if (!item) {
    item.emplace();
  }
  item->value.assign(memcached_result_value(&result), memcached_result_length(&result));
  item->flags = memcached_result_flags(&result);
  item->cas = memcached_result_cas(&result);
}

template <Locator L>
auto ShardedClient<L>::store(Store kind, std::string_view key, std::string_view value,
                             Expiry expiry, std::uint32_t flags) -> Status {
  key = sent(key);
  static constexpr std::string_view kNames[] = {"set", "add", "replace", "append", "prepend"};
  const detail::WriteRule rule = kind == Store::kSet   ? detail::WriteRule::kInvalidate
                                 : kind == Store::kAdd ? detail::WriteRule::kMoveFirst
                                                       : detail::WriteRule::kMoveOnMiss;
  return in_window(key, rule, [&] {
    return store_once(kind, kNames[static_cast<std::size_t>(kind)], key, value, expiry, flags);
  });
}

template <Locator L>
auto ShardedClient<L>::store_once(Store kind, std::string_view name, std::string_view key,
                                  std::string_view value, Expiry expiry, std::uint32_t flags)
    -> Status {
  return run(name, key, value, Access::kWrite, [&](std::size_t server) {
    memcached_st* memc = native(server);
    const std::time_t exptime = this->exptime(expiry);
    memcached_return_t rc = MEMCACHED_SUCCESS;
    switch (kind) {
      case Store::kSet:
        rc =
            memcached_set(memc, key.data(), key.size(), value.data(), value.size(), exptime, flags);
        break;
      case Store::kAdd:
        rc =
            memcached_add(memc, key.data(), key.size(), value.data(), value.size(), exptime, flags);
        // The binary protocol answers "exists" where the text protocol says
        // "not stored".
        if (rc == MEMCACHED_DATA_EXISTS) {
          rc = MEMCACHED_NOTSTORED;
        }
        break;
      case Store::kReplace:
        rc = memcached_replace(memc, key.data(), key.size(), value.data(), value.size(), exptime,
                               flags);
        break;
      case Store::kAppend:
        rc = memcached_append(memc, key.data(), key.size(), value.data(), value.size(), 0, 0);
        break;
      case Store::kPrepend:
        rc = memcached_prepend(memc, key.data(), key.size(), value.data(), value.size(), 0, 0);
        break;
    }
    if (kind != Store::kSet && kind != Store::kAdd && rc == MEMCACHED_NOTFOUND) {
      rc = MEMCACHED_NOTSTORED;  // binary protocol: the key to modify is missing
    }
    return rc;
  });
}

template <Locator L>
auto ShardedClient<L>::arithmetic(std::string_view key, std::uint32_t delta, bool up)
    -> Result<std::uint64_t> {
  key = sent(key);
  std::uint64_t value = 0;
  Status status = in_window(key, detail::WriteRule::kMoveOnMiss, [&] {
    return run(up ? "incr" : "decr", key, {}, Access::kWrite, [&](std::size_t server) {
      memcached_st* memc = native(server);
      memcached_return_t rc = up ? memcached_increment(memc, key.data(), key.size(), delta, &value)
                                 : memcached_decrement(memc, key.data(), key.size(), delta, &value);
      if (rc == MEMCACHED_UNKNOWN_READ_FAILURE && options_.protocol == Protocol::kBinary) {
        // libmemcached reports the binary "non-numeric value" status this way.
        rc = MEMCACHED_CLIENT_ERROR;
      }
      return detail::numeric_reply(rc);
    });
  });
  if (!status.ok()) {
    return Result<std::uint64_t>(std::move(status));
  }
  return Result<std::uint64_t>(value, std::move(status));
}

template <Locator L>
ShardedClient<L>::ShardedClient(const ShardedClient& other, CloneTag)
    : options_(other.options_),
      prefix_(other.prefix_),
      fleet_(other.fleet_),
      seat_(fleet_->calls().seat()),
      core_(options_),
      hot_watch_(other.hot_watch_),
      hot_seat_(hot_watch_ != nullptr ? hot_watch_->seat() : nullptr),
      near_(other.near_) {
  adopt(fleet_->current());
}

template <Locator L>
auto ShardedClient<L>::checked(const ClientOptions& options) -> const ClientOptions& {
  validate_options(options);
  return options;
}

template <Locator L>
void ShardedClient<L>::validate(std::span<const Server> servers) {
  validate_servers(servers);
  detail::validate_wire_servers(servers);
}

template <Locator L>
void ShardedClient<L>::start_migration(std::vector<Server> servers,
                                       std::shared_ptr<const L> locator,
                                       const MigrationOptions& options) {
  announce("begin_migration",
           [&] { fleet_->begin_migration(std::move(servers), std::move(locator), options); });
}

template <Locator L>
auto ShardedClient<L>::window() noexcept -> detail::MigrationWindow<L> {
  return detail::MigrationWindow<L>(core_, meta_, *snapshot_);
}

template <Locator L>
auto ShardedClient<L>::sent(std::string_view key) -> std::string_view {
  return prefix_.sent_key(key, sent_);
}

template <Locator L>
auto ShardedClient<L>::native(std::size_t server) -> memcached_st* {
  return core_.pool().handle(server).native_handle();
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_DETAIL_SHARDED_CLIENT_INTERNALS_HPP_
