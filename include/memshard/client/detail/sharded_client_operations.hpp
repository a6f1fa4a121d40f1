// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_DETAIL_SHARDED_CLIENT_OPERATIONS_HPP_
#define MEMSHARD_CLIENT_DETAIL_SHARDED_CLIENT_OPERATIONS_HPP_

// client/detail/sharded_client_operations.hpp: the definitions of ShardedClient's public calls
// (single-key and typed operations, multi-gets, batch writes, membership and migration).
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
ShardedClient<L>::ShardedClient(ShardedClient&&) noexcept = default;

template <Locator L>
auto ShardedClient<L>::operator=(ShardedClient&&) noexcept -> ShardedClient& = default;

template <Locator L>
ShardedClient<L>::~ShardedClient() = default;

template <Locator L>
ShardedClient<L>::ShardedClient(std::vector<Server> servers, LocatorFactory factory,
                                ClientOptions options)
    : options_(checked(options)),
      prefix_(options_.key_prefix, options_.prefix_hashing),
      core_(options_) {
  if (!factory) {
    detail::throw_config_error("locator factory is empty", "ShardedClient");
  }
  check_policy();
  validate(servers);
  std::shared_ptr<const L> locator = factory(std::span<const Server>(servers));
  check_locator(locator);
  start(std::move(servers), std::move(locator), std::move(factory));
}

template <Locator L>
ShardedClient<L>::ShardedClient(std::vector<Server> servers, std::shared_ptr<const L> locator,
                                ClientOptions options)
    : options_(checked(options)),
      prefix_(options_.key_prefix, options_.prefix_hashing),
      core_(options_) {
  check_policy();
  validate(servers);
  if (!locator) {
    detail::throw_config_error("locator is null", "ShardedClient");
  }
  check_locator(locator);
  start(std::move(servers), std::move(locator), LocatorFactory());
}

template <Locator L>
auto ShardedClient<L>::get(std::string_view key) -> Result<std::optional<Item>> {
  key = sent(key);
  const detail::CallMark mark = enter();
  core_.start_call();
  if (fenced()) [[unlikely]] {  // a miss
    if (auto refused = core_.check(key)) {
      return Result<std::optional<Item>>(std::move(*refused));
    }
    return Result<std::optional<Item>>(std::optional<Item>(),
                                       Status(Errc::kOk, MEMCACHED_NOTFOUND, Status::kNoServer));
  }
  if (snapshot_->migration &&
      snapshot_->migration->options.consistency == MigrationConsistency::kStrict) [[unlikely]] {
    if (is_valid_key(key)) {
      core_.forget_avoid();
      if (auto leased = window().strict_get(key, route_from(snapshot_->locate(key), key))) {
        return std::move(*leased);
      }
    }
  }
  std::optional<detail::NearCache::Found>
      near;  // the copy of a hot key (ClientOptions::near_cache)
  std::int64_t read_at = 0;
  if (near_ != nullptr && !snapshot_->migration && is_valid_key(key)) [[unlikely]] {
    read_at = detail::coarse_now_ns();
    near = near_->find(key, read_at);
    if (near) {
      if (auto served = near_read(key, *near, read_at)) {
        return std::move(*served);
      }
    }
  }
  std::optional<Item> item;
  Status status = run("get", key, {}, Access::kRead,
                      [&](std::size_t server) { return fetch_one(server, key, item); });
  if (!status.ok()) {
    return Result<std::optional<Item>>(std::move(status));
  }
  if (item && item->value.empty() && item->flags == 0 && !snapshot_->migration) [[unlikely]] {
    // What a get_or_load's lease looks like while its loader runs (hotkeys/detail/lease_load.hpp)
    if (detail::LeaseLoad::placeholder(core_, meta_, status.server(), key)) {
      item.reset();  // a load under way: a miss
    }
  }
  if (near) [[unlikely]] {
    if (status.server() == snapshot_->locate(key)) {  // never a failover server's answer
      near_->store(key, item, near->version, read_at);
    }
  }
  detail::ServerHealth& health = core_.health(status.server());
  (item ? health.hits : health.misses).fetch_add(1, std::memory_order_relaxed);
  if (snapshot_->migration) [[unlikely]] {
    window().after_get(key, status.server(), item);
  }
  return Result<std::optional<Item>>(std::move(item), std::move(status));
}

template <Locator L>
auto ShardedClient<L>::gat(std::string_view key, Expiry expiry) -> Result<std::optional<Item>> {
  key = sent(key);
  std::optional<Item> item;
  Status status = in_window(key, detail::WriteRule::kMoveOnMiss, [&] {
    item.reset();
    return run("gat", key, {}, Access::kTouch, [&](std::size_t server) {
      const auto ttl = static_cast<std::int32_t>(exptime(expiry));
      if (!options_.sasl && meta_.supports_meta(server)) {
        const detail::MetaDeadline until{std::chrono::nanoseconds(core_.call_deadline())};
        detail::MetaStatus connected;
        detail::MetaConnection& link = meta_.connection(server, until, connected);
        detail::MetaOutcome answer =
            connected.ok()
                ? link.get(key,
                           {.value = true, .client_flags = true, .cas = true, .touch_ttl = ttl},
                           until)
                : detail::MetaOutcome{connected, {}};
        if (answer.status.code != detail::MetaErrc::kNoMetaSupport) {
          if (answer.ok() && answer.reply.kind == detail::MetaReplyKind::kValue &&
              answer.reply.win_sent) {
            // Another reader's lease placeholder (a kStrict migration
            // fills it): no value yet, so a miss.
            return MEMCACHED_NOTFOUND;
          }
          if (answer.ok() && answer.reply.kind == detail::MetaReplyKind::kValue) {
            item.emplace(Item{std::move(answer.reply.value), answer.reply.client_flags.value_or(0),
                              answer.reply.cas.value_or(0)});
          }
          return detail::to_memcached_return(answer.status, answer.reply.kind);
        }
        meta_.mark_no_meta(server);  // memcached before 1.6: libmemcached from now on
      }
      memcached_return_t rc =
          memcached_touch(native(server), key.data(), key.size(), static_cast<std::time_t>(ttl));
      return memcached_success(rc) ? fetch_one(server, key, item) : rc;
    });
  });
  if (status.code() == Errc::kNotFound) {  // a miss
    status = Status(Errc::kOk, MEMCACHED_SUCCESS, status.server());
  }
  if (!status.ok()) {
    return Result<std::optional<Item>>(std::move(status));
  }
  detail::ServerHealth& health = core_.health(status.server());
  (item ? health.hits : health.misses).fetch_add(1, std::memory_order_relaxed);
  return Result<std::optional<Item>>(std::move(item), std::move(status));
}

template <Locator L>
auto ShardedClient<L>::cas(std::string_view key, std::string_view value, std::uint64_t cas,
                           std::optional<Expiry> expiry, std::uint32_t flags) -> Status {
  key = sent(key);
  const Expiry expires = options_.expiry_or_default(expiry);
  return in_window(key, detail::WriteRule::kInvalidate, [&] {
    return run("cas", key, value, Access::kWrite, [&](std::size_t server) {
      return memcached_cas(native(server), key.data(), key.size(), value.data(), value.size(),
                           exptime(expires), flags, cas);
    });
  });
}

template <Locator L>
auto ShardedClient<L>::remove(std::string_view key) -> Status {
  key = sent(key);
  const detail::CallMark mark = enter();
  core_.start_call();
  if (fenced()) [[unlikely]] {
    return refuse_fenced(key);
  }
  return remove_sent(key);
}

template <Locator L>
auto ShardedClient<L>::incr_with_initial(std::string_view key, std::uint32_t delta,
                                         std::uint64_t initial, std::optional<Expiry> expiry)
    -> Result<std::uint64_t> {
  Result<std::uint64_t> counted = incr(key, delta);
  if (counted || counted.status().code() != Errc::kNotFound) {
    return counted;
  }
  Status created = add(key, std::to_string(initial), expiry);
  if (created.ok()) {
    return Result<std::uint64_t>(initial, std::move(created));
  }
  if (created.code() == Errc::kNotStored) {  // another client created it meanwhile
    return incr(key, delta);
  }
  return Result<std::uint64_t>(std::move(created));
}

template <Locator L>
template <class Loader>
requires std::invocable<Loader&> && std::convertible_to<std::invoke_result_t<Loader&>, std::string>
auto ShardedClient<L>::get_or_load(std::string_view key, Loader&& loader,
                                   std::optional<Expiry> expiry, std::uint32_t flags,
                                   std::optional<LoadOptions> load) -> Result<std::string> {
  auto as_optional = [&loader] { return std::optional<std::string>(std::in_place, loader()); };
  if (auto leased = load_leased(key, as_optional, expiry, flags, load)) [[unlikely]] {
    if (!*leased) {
      return Result<std::string>(leased->status());
    }
    Status status = leased->status();
    return Result<std::string>(*std::move(*leased).value(), std::move(status));
  }
  Result<std::optional<Item>> cached = get(key);
  if (cached && *cached) {
    return Result<std::string>(std::move((*cached)->value), cached.status());
  }
  std::string loaded = loader();
  if (!cached) {
    return Result<std::string>(std::move(loaded), cached.status());
  }
  Status stored = add(key, loaded, expiry, flags);
  return Result<std::string>(std::move(loaded), std::move(stored));
}

template <Locator L>
template <class Loader>
requires std::invocable<Loader&> && detail::kOptionalText<std::invoke_result_t<Loader&>>
auto ShardedClient<L>::get_or_load(std::string_view key, Loader&& loader,
                                   std::optional<Expiry> expiry, std::uint32_t flags,
                                   std::optional<LoadOptions> load)
    -> Result<std::optional<std::string>> {
  using Answer = Result<std::optional<std::string>>;
  auto as_optional = [&loader]() -> std::optional<std::string> {
    auto loaded = loader();
    if (!loaded) {
      return std::nullopt;
    }
    return std::optional<std::string>(std::in_place, std::move(*loaded));
  };
  if (auto leased = load_leased(key, as_optional, expiry, flags, load)) [[unlikely]] {
    return std::move(*leased);
  }
  Result<std::optional<Item>> cached = get(key);
  if (cached && *cached) {
    return Answer(std::optional<std::string>(std::move((*cached)->value)), cached.status());
  }
  auto loaded = loader();
  if (!loaded) {
    return Answer(std::optional<std::string>(), cached.status());
  }
  std::optional<std::string> value(std::in_place, std::move(*loaded));
  if (!cached) {
    return Answer(std::move(value), cached.status());
  }
  Status stored = add(key, *value, expiry, flags);
  return Answer(std::move(value), std::move(stored));
}

template <Locator L>
template <class Loader>
auto ShardedClient<L>::load_leased(std::string_view key, Loader& loader,
                                   std::optional<Expiry> expiry, std::uint32_t flags,
                                   const std::optional<LoadOptions>& load)
    -> std::optional<detail::LeaseLoad::Loaded> {
  const LoadOptions& chosen = load ? *load : options_.load_options;
  if (chosen.lease_ttl.count() == 0) [[likely]] {
    return std::nullopt;
  }
  if (load) {
    if (auto wrong = load_options_error(*load)) {
      return detail::LeaseLoad::Loaded(Status(Errc::kInvalidArgument, MEMCACHED_INVALID_ARGUMENTS,
                                              Status::kNoServer, "get_or_load: " + *wrong));
    }
  }
  // Owned: the loader may call this client, which reuses the buffer a prefixed key is made in.
  const std::string sent_key(sent(key));
  const detail::CallMark mark = enter();
  core_.start_call();
  if (snapshot_->migration || fenced() || !is_valid_key(sent_key)) {
    return std::nullopt;  // the window's rules, the fence, the key's refusal: the plain way
  }
  const Expiry chosen_expiry = options_.expiry_or_default(expiry);
  detail::LeaseLoad lease(core_, meta_, chosen);
  std::size_t primary = 0;
  return lease.load(
      sent_key,
      [&] {
        core_.forget_avoid();
        primary = snapshot_->locate(sent_key);
        return route_from(primary, sent_key);
      },
      [&](const detail::Route& route) {
        redirected_ = route.server != primary;
        return exptime(chosen_expiry);
      },
      flags, loader);
}

template <Locator L>
auto ShardedClient<L>::delete_stale(std::string_view key) -> Status {
  key = sent(key);
  const detail::CallMark mark = enter();
  core_.start_call();
  if (fenced()) [[unlikely]] {
    return refuse_fenced(key);
  }
  if (snapshot_->migration) [[unlikely]] {
    return remove_sent(key);  // a window deletes both copies
  }
  return run("delete_stale", key, {}, Access::kWrite, [&](std::size_t server) {
    if (auto marked = detail::LeaseLoad::mark_stale(core_, meta_, server, key,
                                                    options_.load_options.stale_ttl)) {
      return *marked;
    }
    return detail::delete_key(native(server), key);
  });
}

template <Locator L>
auto ShardedClient<L>::touch(std::string_view key, Expiry expiry) -> Status {
  key = sent(key);
  return in_window(key, detail::WriteRule::kMoveOnMiss, [&] {
    return run("touch", key, {}, Access::kTouch, [&](std::size_t server) {
      return memcached_touch(native(server), key.data(), key.size(), exptime(expiry));
    });
  });
}

template <Locator L>
template <Codec C>
auto ShardedClient<L>::get_value(std::string_view key, const C& codec)
    -> Result<std::optional<Value>> {
  Result<std::optional<Item>> read = get(key);
  if (!read.ok()) {
    return Result<std::optional<Value>>(read.status());
  }
  if (!read.value()) {
    return Result<std::optional<Value>>(std::nullopt, read.status());
  }
  const Item& item = *read.value();
  CodecResult<Value> decoded = codec.decode(item.value, item.flags);
  if (!decoded.ok()) {
    return Result<std::optional<Value>>(
        codec_failure("get_value", read.status().server(), decoded.error()));
  }
  return Result<std::optional<Value>>(std::move(decoded).value(), read.status());
}

template <Locator L>
template <Codec C>
auto ShardedClient<L>::set_value(std::string_view key, const Value& value, const C& codec,
                                 std::optional<Expiry> expiry) -> Status {
  CodecResult<Encoded> encoded = codec.encode(value);
  if (!encoded.ok()) {
    return codec_failure("set_value", Status::kNoServer, encoded.error());
  }
  return set(key, encoded->bytes, expiry, encoded->flags);
}

template <Locator L>
template <Codec C>
auto ShardedClient<L>::add_value(std::string_view key, const Value& value, const C& codec,
                                 std::optional<Expiry> expiry) -> Status {
  CodecResult<Encoded> encoded = codec.encode(value);
  if (!encoded.ok()) {
    return codec_failure("add_value", Status::kNoServer, encoded.error());
  }
  return add(key, encoded->bytes, expiry, encoded->flags);
}

template <Locator L>
template <KeyRange Keys, Codec C>
auto ShardedClient<L>::get_values(const Keys& keys, const C& codec) -> MultiValueResult {
  MultiValueResult out;
  out.values.resize(std::ranges::size(keys));
  out.statuses.resize(std::ranges::size(keys));
  visit_multi(
      keys,
      [&](std::size_t index, const ItemView& item) {
        CodecResult<Value> decoded = codec.decode(item.value, item.flags);
        if (decoded.ok()) {
          out.values[index].emplace(std::move(decoded).value());
        } else {
          out.values[index].reset();
          out.statuses[index] = codec_failure("get_values", Status::kNoServer, decoded.error());
        }
      },
      [&out](std::size_t index, const Status& status) {
        out.statuses[index] = status;
        out.values[index].reset();
      });
  return out;
}

template <Locator L>
template <KeyRange Keys>
auto ShardedClient<L>::get_multi(const Keys& keys) -> MultiGetResult {
  MultiGetResult out;
  out.items.resize(std::ranges::size(keys));
  out.statuses.resize(std::ranges::size(keys));
  visit_multi(
      keys,
      [&out](std::size_t index, const ItemView& item) {
        std::optional<Item>& slot = out.items[index];
        if (!slot) {
          slot.emplace();
        }
        slot->value.assign(item.value);
        slot->flags = item.flags;
        slot->cas = item.cas;
      },
      [&out](std::size_t index, const Status& status) {
        out.statuses[index] = status;
        out.items[index].reset();
      });
  return out;
}

template <Locator L>
auto ShardedClient<L>::server_for(std::string_view key) const -> Server {
  const std::shared_ptr<const Snapshot> now = view();
  std::string buffer;
  return now->members.servers[now->locate(prefix_.sent_key(key, buffer))];
}

template <Locator L>
auto ShardedClient<L>::stats() const -> std::vector<ServerStats> {
  const std::shared_ptr<const Snapshot> now = view();
  std::vector<ServerStats> out;
  out.reserve(now->members.size());
  for (std::size_t s = 0; s < now->members.size(); ++s) {
    out.push_back(now->members.health[s]->stats(now->members.servers[s]));
  }
  return out;
}

template <Locator L>
auto ShardedClient<L>::flush_server(std::size_t index) -> Status {
  const detail::CallMark mark = enter();
  if (index >= snapshot_->placed) {
    return Status(Errc::kInvalidArgument, MEMCACHED_INVALID_ARGUMENTS, Status::kNoServer,
                  "flush_server: no server " + std::to_string(index) + " (" +
                      std::to_string(snapshot_->placed) + " servers)");
  }
  core_.start_call();
  memcached_return_t rc = MEMCACHED_SUCCESS;
  {
    memcached_st* memc = native(index);
    const detail::WatchedCall watched =
        core_.watch(memc, detail::steady_now_ns(), core_.call_deadline());
    rc = memcached_flush(memc, 0);
  }
  Status status = core_.finish(detail::Route{index, false, Status()}, rc, "flush");
  if (status.ok()) {
    core_.health(index).journal.settle(true);
  }
  return status;
}

template <Locator L>
void ShardedClient<L>::reconfigure(std::vector<Server> servers) {
  if (!fleet_->has_factory()) {
    detail::throw_config_error("reconfigure needs a locator factory",
                               "construct the client with one, or pass the new locator");
  }
  validate(servers);
  std::shared_ptr<const L> locator = fleet_->build(servers);
  check_locator(locator);
  announce("reconfigure", [&] { fleet_->publish(std::move(servers), std::move(locator)); });
}

template <Locator L>
void ShardedClient<L>::reconfigure(std::vector<Server> servers, std::shared_ptr<const L> locator) {
  validate(servers);
  if (!locator) {
    detail::throw_config_error("locator is null", "reconfigure");
  }
  check_locator(locator);
  announce("reconfigure", [&] { fleet_->publish(std::move(servers), std::move(locator)); });
}

template <Locator L>
void ShardedClient<L>::begin_migration(std::vector<Server> servers, MigrationOptions options) {
  if (!fleet_->has_factory()) {
    detail::throw_config_error("begin_migration needs a locator factory",
                               "construct the client with one, or pass the new locator");
  }
  validate(servers);
  std::shared_ptr<const L> locator = fleet_->build(servers);
  check_locator(locator);
  start_migration(std::move(servers), std::move(locator), options);
}

template <Locator L>
void ShardedClient<L>::begin_migration(std::vector<Server> servers,
                                       std::shared_ptr<const L> locator, MigrationOptions options) {
  validate(servers);
  if (!locator) {
    detail::throw_config_error("locator is null", "begin_migration");
  }
  check_locator(locator);
  start_migration(std::move(servers), std::move(locator), options);
}

template <Locator L>
auto ShardedClient<L>::migrate_key(std::string_view key) -> KeyMigration {
  key = sent(key);
  const detail::CallMark mark = enter();
  core_.start_call();
  if (!snapshot_->migration) {
    return KeyMigration::kNoMigration;
  }
  if (!is_valid_key(key)) {
    return KeyMigration::kInvalidKey;
  }
  if (fenced()) [[unlikely]] {
    return KeyMigration::kNewOwnerFailed;  // a fenced member copies nothing
  }
  core_.forget_avoid();
  return window().migrate_key(key, route_from(snapshot_->locate(key), key));
}

template <Locator L>
ShardedClient<L>::ShardedClient(std::vector<Server> servers, L locator, ClientOptions options)
    : ShardedClient(std::move(servers), std::make_shared<const L>(std::move(locator)), options) {}

template <Locator L>
auto ShardedClient<L>::clone() const -> ShardedClient {
  return ShardedClient(*this, CloneTag{});
}

template <Locator L>
auto ShardedClient<L>::deadline_scope(std::chrono::steady_clock::time_point deadline) noexcept
    -> DeadlineScope {
  return DeadlineScope(core_, deadline);
}

template <Locator L>
auto ShardedClient<L>::deadline_scope(std::chrono::milliseconds timeout) noexcept -> DeadlineScope {
  return DeadlineScope(core_, std::chrono::steady_clock::now() + timeout);
}

template <Locator L>
auto ShardedClient<L>::set(std::string_view key, std::string_view value,
                           std::optional<Expiry> expiry, std::uint32_t flags) -> Status {
  return store(Store::kSet, key, value, options_.expiry_or_default(expiry), flags);
}

template <Locator L>
auto ShardedClient<L>::add(std::string_view key, std::string_view value,
                           std::optional<Expiry> expiry, std::uint32_t flags) -> Status {
  return store(Store::kAdd, key, value, options_.expiry_or_default(expiry), flags);
}

template <Locator L>
auto ShardedClient<L>::replace(std::string_view key, std::string_view value,
                               std::optional<Expiry> expiry, std::uint32_t flags) -> Status {
  return store(Store::kReplace, key, value, options_.expiry_or_default(expiry), flags);
}

template <Locator L>
auto ShardedClient<L>::append(std::string_view key, std::string_view value) -> Status {
  return store(Store::kAppend, key, value, Expiry{}, 0);
}

template <Locator L>
auto ShardedClient<L>::prepend(std::string_view key, std::string_view value) -> Status {
  return store(Store::kPrepend, key, value, Expiry{}, 0);
}

template <Locator L>
auto ShardedClient<L>::incr(std::string_view key, std::uint32_t delta) -> Result<std::uint64_t> {
  return arithmetic(key, delta, true);
}

template <Locator L>
auto ShardedClient<L>::decr(std::string_view key, std::uint32_t delta) -> Result<std::uint64_t> {
  return arithmetic(key, delta, false);
}

template <Locator L>
template <Codec C>
auto ShardedClient<L>::get_values(std::initializer_list<std::string_view> keys, const C& codec)
    -> MultiValueResult {
  return get_values(std::span<const std::string_view>(keys.begin(), keys.size()), codec);
}

template <Locator L>
auto ShardedClient<L>::get_multi(std::initializer_list<std::string_view> keys) -> MultiGetResult {
  return get_multi(std::span<const std::string_view>(keys.begin(), keys.size()));
}

template <Locator L>
template <KeyRange Keys, class OnHit, class OnFailure>
void ShardedClient<L>::visit_multi(const Keys& keys, OnHit&& on_hit, OnFailure&& on_failure) {
  visit_sent(sent_keys(keys), on_hit, on_failure);
}

template <Locator L>
template <KeyValueRange Items>
auto ShardedClient<L>::set_multi(const Items& items, std::optional<Expiry> expiry,
                                 std::uint32_t flags) -> MultiWriteResult {
  return write_pairs(detail::WriteKind::kSet, items, options_.expiry_or_default(expiry), flags);
}

template <Locator L>
template <KeyValueRange Items>
auto ShardedClient<L>::add_multi(const Items& items, std::optional<Expiry> expiry,
                                 std::uint32_t flags) -> MultiWriteResult {
  return write_pairs(detail::WriteKind::kAdd, items, options_.expiry_or_default(expiry), flags);
}

template <Locator L>
template <KeyRange Keys>
auto ShardedClient<L>::delete_multi(const Keys& keys) -> MultiWriteResult {
  return write_keys(detail::WriteKind::kDelete, sent_keys(keys), {}, Expiry::never(), 0);
}

template <Locator L>
auto ShardedClient<L>::delete_multi(std::initializer_list<std::string_view> keys)
    -> MultiWriteResult {
  return delete_multi(std::span<const std::string_view>(keys.begin(), keys.size()));
}

template <Locator L>
template <KeyRange Keys>
auto ShardedClient<L>::touch_multi(const Keys& keys, Expiry expiry) -> MultiWriteResult {
  return write_keys(detail::WriteKind::kTouch, sent_keys(keys), {}, expiry, 0);
}

template <Locator L>
auto ShardedClient<L>::snapshot() const -> std::shared_ptr<const Snapshot> {
  return view();
}

template <Locator L>
auto ShardedClient<L>::server_index_for(std::string_view key) const -> std::size_t {
  std::string buffer;
  return view()->locate(prefix_.sent_key(key, buffer));
}

template <Locator L>
auto ShardedClient<L>::servers() const -> std::vector<Server> {
  return view()->servers();
}

template <Locator L>
auto ShardedClient<L>::locator() const -> std::shared_ptr<const L> {
  return view()->locator;
}

template <Locator L>
auto ShardedClient<L>::options() const noexcept -> const ClientOptions& {
  return options_;
}

template <Locator L>
void ShardedClient<L>::begin_migration(std::vector<Server> servers, L locator,
                                       MigrationOptions options) {
  begin_migration(std::move(servers), std::make_shared<const L>(std::move(locator)), options);
}

template <Locator L>
auto ShardedClient<L>::commit_migration() -> bool {
  return end_migration(true);
}

template <Locator L>
auto ShardedClient<L>::abort_migration() -> bool {
  return end_migration(false);
}

template <Locator L>
auto ShardedClient<L>::migration_stats() const -> MigrationStats {
  const std::shared_ptr<const Snapshot> now = view();
  return now->migration ? now->migration->state->stats() : fleet_->last_migration_stats();
}

template <Locator L>
auto ShardedClient<L>::near_cache_stats() const -> NearCacheStats {
  return near_ != nullptr ? near_->stats() : NearCacheStats();
}

template <Locator L>
auto ShardedClient<L>::hot_keys() const -> std::vector<HotKey> {
  return hot_watch_ != nullptr ? hot_watch_->hot(detail::coarse_now_ns()) : std::vector<HotKey>();
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_DETAIL_SHARDED_CLIENT_OPERATIONS_HPP_
