// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_SHARDED_CLIENT_HPP_
#define MEMSHARD_SHARDED_CLIENT_HPP_

// sharded_client.hpp: ShardedClient, which sends every operation to the
// server its Locator picks. This is the part of a client that depends on the
// locator type: key and value checks, routing and the operations. The rest is
// in its parts: the shared fleet (fleet/fleet.hpp), server health and
// ejection (fleet/server_health.hpp), connections (wire/connection_pool.hpp),
// the skeleton every operation ends in (client/client_core.hpp) and the two
// multi-get engines (wire/polled_multi_get.hpp,
// wire/per_server_multi_get.hpp). docs/architecture.md has the picture.

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
#include "memshard/version.hpp"
#include "memshard/wire/meta_pool.hpp"
#include "memshard/wire/multi_write.hpp"
#include "memshard/wire/per_server_multi_get.hpp"
#include "memshard/wire/polled_multi_get.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// OptionalText: whether T is std::optional<U> with U convertible to
/// std::string (a get_or_load loader that may decline to cache).
template <class T>
inline constexpr bool kOptionalText = false;
template <class U>
inline constexpr bool kOptionalText<std::optional<U>> = std::convertible_to<U, std::string>;

}  // namespace detail

/// ShardedClient: a memcached client for a fleet, placing keys with a Locator.
///
/// Every operation checks its key (check_key) and value size before anything
/// reaches the wire, asks the locator for the key's server, and runs on that
/// server's own libmemcached handle (multi-gets: see MultiGetMode). Outcomes
/// are values (Status, Result): a miss is not an error, and a failure names
/// the server and keeps libmemcached's return code. Configuration mistakes
/// throw ConfigError at construction (and from reconfigure), never from an
/// operation.
///
/// Failure policy: after `failure_limit` consecutive timeouts or connection
/// failures a server is ejected for `retry_interval`; then one request probes
/// it, which either restores it or ejects it again. While a server is ejected,
/// its keys fail at once (FailurePolicy::kFailFast) or go to the next live
/// server of the placement (kFailover, for a locator that can fail over);
/// keys of healthy servers never move. No call blocks longer than the connect
/// timeout plus the I/O timeout, plus scheduling noise.
///
/// Family and fleet: clone() makes another client for another thread. A client
/// and its clones are one family: they share one Fleet (the server list, its
/// locator and the servers' health and counters, as one immutable snapshot)
/// and nothing else; each has its own connections. reconfigure() on any of
/// them publishes a new snapshot, which every client of the family uses from
/// the start of its next operation or accessor call. A call already running
/// when another thread reconfigures finishes on the snapshot it started with:
/// its keys go where that snapshot placed them, and its outcome is recorded in
/// the health of those servers (kept for the servers that stay). Connections
/// to servers that stay (same host and port) are kept. Reading the fleet's
/// generation is one atomic load per operation: no lock on the hot path.
///
/// Threads: one ShardedClient is used by one thread at a time. Move-only.
/// Operations are noexcept in effect except for allocation failures and
/// exceptions thrown by the caller's multi-get callbacks.
///
/// **Example**:
///   auto servers = memshard::parse_servers("10.0.0.1:11211,10.0.0.2:11211");
///   memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>> client(servers);
///   if (auto st = client.set("user:42", "Ada"); !st) std::cerr << st << '\n';
///   auto hit = client.get("user:42");   // Result<std::optional<Item>>
template <Locator L>
class ShardedClient {
 public:
  using locator_type = L;
  /// LocatorFactory: builds the locator for a server list (used by reconfigure).
  using LocatorFactory = typename Fleet<L>::LocatorFactory;
  /// Snapshot: one published state of the client's fleet.
  using Snapshot = FleetSnapshot<L>;

  /// Builds the locator with `factory`; reconfigure(servers) uses it again.
  ShardedClient(std::vector<Server> servers, LocatorFactory factory, ClientOptions options = {})
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

  /// Uses `locator`, which must have been built for `servers` (in the same
  /// order). reconfigure() then needs the new locator too.
  ShardedClient(std::vector<Server> servers, std::shared_ptr<const L> locator,
                ClientOptions options = {})
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

  /// Uses `locator` (by value), which must have been built for `servers`.
  /// reconfigure() then needs the new locator too: this client cannot know
  /// how `locator` was configured.
  ShardedClient(std::vector<Server> servers, L locator, ClientOptions options = {})
      : ShardedClient(std::move(servers), std::make_shared<const L>(std::move(locator)), options) {}

  /// Builds `L(servers)`.
  explicit ShardedClient(std::vector<Server> servers, ClientOptions options = {}) requires
      std::constructible_from<L, std::span<const Server>>
      : ShardedClient(std::move(servers), LocatorFactory([](std::span<const Server> list) {
                        return std::make_shared<const L>(list);
                      }),
                      options) {}

  ShardedClient(ShardedClient&&) noexcept = default;
  auto operator=(ShardedClient&&) noexcept -> ShardedClient& = default;
  ShardedClient(const ShardedClient&) = delete;
  auto operator=(const ShardedClient&) -> ShardedClient& = delete;
  ~ShardedClient() = default;

  /// clone: another client of this family, for another thread: the same
  /// fleet and options, with its own connections (opened on first use).
  [[nodiscard]] auto clone() const -> ShardedClient { return ShardedClient(*this, CloneTag{}); }

  /// deadline_scope: until the returned scope ends, every call of this
  /// client ends by `deadline` (or by its own call_timeout when that comes
  /// first), as a request handler passes its own deadline down; a call begun
  /// after it sends nothing and answers Errc::kTimeout. A timeout the
  /// caller's deadline caused never counts toward the server's ejection.
  /// See DeadlineScope.
  ///
  /// **Example**:
  ///   const auto scope = client.deadline_scope(std::chrono::milliseconds(50));
  ///   auto user = client.get("user:42");       // these two calls share
  ///   auto prefs = client.get("prefs:42");     // the same 50 ms
  [[nodiscard]] auto deadline_scope(std::chrono::steady_clock::time_point deadline) noexcept
      -> DeadlineScope {
    return DeadlineScope(core_, deadline);
  }

  /// deadline_scope: the same for `timeout` from now.
  [[nodiscard]] auto deadline_scope(std::chrono::milliseconds timeout) noexcept -> DeadlineScope {
    return DeadlineScope(core_, std::chrono::steady_clock::now() + timeout);
  }

  // ---- single-key operations ------------------------------------------------

  /// get: the item, an empty optional for a miss, or the failure.
  auto get(std::string_view key) -> Result<std::optional<Item>> {
    key = sent(key);
    refresh();
    core_.start_call();
    if (snapshot_->migration &&
        snapshot_->migration->options.consistency == MigrationConsistency::kStrict) [[unlikely]] {
      if (is_valid_key(key)) {
        core_.forget_avoid();
        if (auto leased = window().strict_get(key, route_from(snapshot_->locate(key), key))) {
          return std::move(*leased);
        }
      }
    }
    std::optional<Item> item;
    Status status = run("get", key, {}, Access::kRead,
                        [&](std::size_t server) { return fetch_one(server, key, item); });
    if (!status.ok()) {
      return Result<std::optional<Item>>(std::move(status));
    }
    detail::ServerHealth& health = core_.health(status.server());
    (item ? health.hits : health.misses).fetch_add(1, std::memory_order_relaxed);
    if (snapshot_->migration) [[unlikely]] {
      window().after_get(key, status.server(), item);
    }
    return Result<std::optional<Item>>(std::move(item), std::move(status));
  }

  /// gat: get-and-touch: the item (an empty optional for a miss) with its
  /// expiry set to `expiry` in the same request (memcached's meta get with a
  /// T flag). Without meta commands (memcached before 1.6) or with SASL
  /// credentials, a touch and then a get. In a migration window, a moved key
  /// that misses on its new owner is moved there first, as touch() does.
  auto gat(std::string_view key, Expiry expiry) -> Result<std::optional<Item>> {
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
              item.emplace(Item{std::move(answer.reply.value),
                                answer.reply.client_flags.value_or(0),
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

  /// set: stores the value whatever is there. Without an expiry, the item
  /// gets ClientOptions::default_expiry (Expiry::never() says never).
  auto set(std::string_view key, std::string_view value, std::optional<Expiry> expiry = {},
           std::uint32_t flags = 0) -> Status {
    return store(Store::kSet, key, value, options_.expiry_or_default(expiry), flags);
  }
  /// add: stores only when the key is absent, else Errc::kNotStored.
  auto add(std::string_view key, std::string_view value, std::optional<Expiry> expiry = {},
           std::uint32_t flags = 0) -> Status {
    return store(Store::kAdd, key, value, options_.expiry_or_default(expiry), flags);
  }
  /// replace: stores only when the key exists, else Errc::kNotStored.
  auto replace(std::string_view key, std::string_view value, std::optional<Expiry> expiry = {},
               std::uint32_t flags = 0) -> Status {
    return store(Store::kReplace, key, value, options_.expiry_or_default(expiry), flags);
  }
  /// append: adds bytes after the existing value, else Errc::kNotStored.
  auto append(std::string_view key, std::string_view value) -> Status {
    return store(Store::kAppend, key, value, Expiry{}, 0);
  }
  /// prepend: adds bytes before the existing value, else Errc::kNotStored.
  auto prepend(std::string_view key, std::string_view value) -> Status {
    return store(Store::kPrepend, key, value, Expiry{}, 0);
  }

  /// cas: stores only if the item still has the cas unique `cas` (from get);
  /// Errc::kExists when it changed, Errc::kNotFound when it is gone.
  auto cas(std::string_view key, std::string_view value, std::uint64_t cas,
           std::optional<Expiry> expiry = {}, std::uint32_t flags = 0) -> Status {
    key = sent(key);
    const Expiry expires = options_.expiry_or_default(expiry);
    return in_window(key, detail::WriteRule::kInvalidate, [&] {
      return run("cas", key, value, Access::kWrite, [&](std::size_t server) {
        return memcached_cas(native(server), key.data(), key.size(), value.data(), value.size(),
                             exptime(expires), flags, cas);
      });
    });
  }

  /// remove: deletes the key; Errc::kNotFound when it was not there. In a
  /// migration window a moved key is deleted on its old owner first, then on
  /// the new one (kNotFound only when neither had it).
  auto remove(std::string_view key) -> Status {
    key = sent(key);
    refresh();
    core_.start_call();
    return remove_sent(key);
  }

  /// incr: adds `delta` to a decimal value and answers the new value
  /// (wrapping at 2^64, as memcached does); Errc::kNotFound for a missing key,
  /// Errc::kInvalidArgument for a value that is not a number.
  auto incr(std::string_view key, std::uint32_t delta = 1) -> Result<std::uint64_t> {
    return arithmetic(key, delta, true);
  }
  /// decr: subtracts `delta`, stopping at 0 (memcached's rule).
  auto decr(std::string_view key, std::uint32_t delta = 1) -> Result<std::uint64_t> {
    return arithmetic(key, delta, false);
  }

  /// incr_with_initial: incr, but a missing key is created holding `initial`
  /// (with `expiry`, or ClientOptions::default_expiry), which is the answer
  /// (libmemcached's memcached_increment_with_initial, for both protocols).
  /// When another client creates the key first, `delta` is added to its
  /// value instead.
  auto incr_with_initial(std::string_view key, std::uint32_t delta, std::uint64_t initial,
                         std::optional<Expiry> expiry = {}) -> Result<std::uint64_t> {
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

  /// get_or_load: cache-aside in one call. A hit answers the cached value.
  /// A miss calls `loader()` (whose answer converts to std::string), adds
  /// that with `expiry` (or ClientOptions::default_expiry) and `flags`, and
  /// answers it; Errc::kNotStored from the add (another process filled the
  /// key meanwhile) is fine. When the cache cannot be read (a server
  /// failure, an ejected server, an invalid key), the loader's answer comes
  /// back without being stored. An exception from the loader passes through
  /// with nothing stored. The answer always holds the value; its status()
  /// says what the cache did: ok for a hit, the add's status after a miss, or
  /// the failed read's status.
  ///
  /// **Example**:
  ///   auto user = client.get_or_load("user:42", [&] { return db.load_user(42); },
  ///                                  memshard::Expiry::after(std::chrono::minutes(5)));
  ///   render(*user);
  template <class Loader>
  requires std::invocable<Loader&> &&
      std::convertible_to<std::invoke_result_t<Loader&>, std::string>
  auto get_or_load(std::string_view key, Loader&& loader, std::optional<Expiry> expiry = {},
                   std::uint32_t flags = 0) -> Result<std::string> {
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

  /// get_or_load: the same with a loader that may say "do not cache this"
  /// (a row that does not exist, a value too volatile to cache): it answers
  /// a std::optional, and std::nullopt stores nothing and answers an empty
  /// optional (with the read's status), as Dalli's and Rails' fetch do.
  ///
  /// **Example**:
  ///   auto user = client.get_or_load("user:42", [&]() -> std::optional<std::string> {
  ///     return db.find_user(42);  // nullopt: no such user, nothing cached
  ///   });
  ///   if (*user) render(**user);
  template <class Loader>
  requires std::invocable<Loader&> && detail::kOptionalText<std::invoke_result_t<Loader&>>
  auto get_or_load(std::string_view key, Loader&& loader, std::optional<Expiry> expiry = {},
                   std::uint32_t flags = 0) -> Result<std::optional<std::string>> {
    using Answer = Result<std::optional<std::string>>;
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

  /// touch: sets a new expiry; Errc::kNotFound for a missing key.
  auto touch(std::string_view key, Expiry expiry) -> Status {
    key = sent(key);
    return in_window(key, detail::WriteRule::kMoveOnMiss, [&] {
      return run("touch", key, {}, Access::kTouch, [&](std::size_t server) {
        return memcached_touch(native(server), key.data(), key.size(), exptime(expiry));
      });
    });
  }

  // ---- typed calls (a codec: codecs/) -------------------------------------

  /// get_value: the item decoded by `codec` (the peer client's codec, such
  /// as PhpMemcachedCodec: see codecs/make_codec.hpp), an empty optional for a
  /// miss, or the failure: the read's, or Errc::kCodecError when the codec
  /// cannot decode what the server holds (the server is not blamed).
  ///
  /// **Example**:
  ///   const memshard::PhpMemcachedCodec php;  // what the PHP side stores
  ///   auto rows = client.get_value(md5_of_sql, php);
  ///   if (rows.ok() && *rows) render((*rows)->as_list());
  template <Codec C>
  auto get_value(std::string_view key, const C& codec) -> Result<std::optional<Value>> {
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

  /// set_value: stores `value` as `codec` encodes it (its flags and bytes);
  /// Errc::kCodecError, with nothing sent, when the codec has no form for it.
  template <Codec C>
  auto set_value(std::string_view key, const Value& value, const C& codec,
                 std::optional<Expiry> expiry = {}) -> Status {
    CodecResult<Encoded> encoded = codec.encode(value);
    if (!encoded.ok()) {
      return codec_failure("set_value", Status::kNoServer, encoded.error());
    }
    return set(key, encoded->bytes, expiry, encoded->flags);
  }

  /// add_value: add() of `value` as `codec` encodes it.
  template <Codec C>
  auto add_value(std::string_view key, const Value& value, const C& codec,
                 std::optional<Expiry> expiry = {}) -> Status {
    CodecResult<Encoded> encoded = codec.encode(value);
    if (!encoded.ok()) {
      return codec_failure("add_value", Status::kNoServer, encoded.error());
    }
    return add(key, encoded->bytes, expiry, encoded->flags);
  }

  /// get_values: get_multi with every hit decoded by `codec`; a key whose
  /// item the codec cannot decode fails alone, with Errc::kCodecError.
  template <KeyRange Keys, Codec C>
  auto get_values(const Keys& keys, const C& codec) -> MultiValueResult {
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

  /// get_values for a list of keys: `client.get_values({"a", "b"}, codec)`.
  template <Codec C>
  auto get_values(std::initializer_list<std::string_view> keys, const C& codec)
      -> MultiValueResult {
    return get_values(std::span<const std::string_view>(keys.begin(), keys.size()), codec);
  }

  // ---- multi-get ------------------------------------------------------------

  /// get_multi: reads many keys at once. Keys are grouped by server; every
  /// server is sent its request before any answer is read, so the call takes
  /// about as long as the slowest server, not the sum. A failing server fails
  /// only its own keys; the whole call ends within connect_timeout +
  /// io_timeout (plus scheduling), however many servers hang. A key listed
  /// twice is read twice. ClientOptions::multi_get chooses how the replies
  /// are read (MultiGetMode). `keys` is any sized range of string-like keys
  /// (a std::vector<std::string>, a span of string_views, ...).
  template <KeyRange Keys>
  auto get_multi(const Keys& keys) -> MultiGetResult {
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

  /// get_multi for a list of keys: `client.get_multi({"a", "b"})`.
  auto get_multi(std::initializer_list<std::string_view> keys) -> MultiGetResult {
    return get_multi(std::span<const std::string_view>(keys.begin(), keys.size()));
  }

  /// visit_multi: get_multi without copies. Calls `on_hit(index, item)` for
  /// every key found, with `item` (an ItemView) valid only during the call,
  /// and `on_failure(index, status)` for every key that could not be read;
  /// misses get no call. `index` is the key's position in `keys` (any sized
  /// range of string-like keys). A server's hits may be reported before its
  /// failure is known, so a key may get on_hit and then on_failure. A
  /// callback that throws ends the call: the exception passes through,
  /// connections that may hold unread replies are closed and probe leases
  /// are given back. A callback may use other clients (a clone's
  /// reconfigure() included: this call finishes on its snapshot), never this
  /// one.
  template <KeyRange Keys, class OnHit, class OnFailure>
  void visit_multi(const Keys& keys, OnHit&& on_hit, OnFailure&& on_failure) {
    visit_sent(sent_keys(keys), on_hit, on_failure);
  }

  // ---- batch writes -----------------------------------------------------------

  /// set_multi: stores every key and value of `items` (any sized range of
  /// pairs whose first and second convert to std::string_view, such as a
  /// std::map<std::string, std::string>), with `expiry` (or
  /// ClientOptions::default_expiry) and `flags`. Keys are grouped by server
  /// and each server's group is sent as one pipeline, all within the call's
  /// one deadline (call_timeout, or the caller's DeadlineScope): a batch
  /// costs one round trip per server, not per key. Answers a Status per item,
  /// in order; a failing server fails only its own items, and counts once
  /// toward its ejection. Key and value checks, routing (ejection, failover)
  /// and the recovery journal apply to each item as to set(). Servers without
  /// meta commands (memcached before 1.6), clients with SASL credentials and
  /// migration windows write key by key instead.
  template <KeyValueRange Items>
  auto set_multi(const Items& items, std::optional<Expiry> expiry = {}, std::uint32_t flags = 0)
      -> MultiWriteResult {
    return write_pairs(detail::WriteKind::kSet, items, options_.expiry_or_default(expiry), flags);
  }

  /// add_multi: set_multi, storing only the keys that are absent (kNotStored
  /// for the others).
  template <KeyValueRange Items>
  auto add_multi(const Items& items, std::optional<Expiry> expiry = {}, std::uint32_t flags = 0)
      -> MultiWriteResult {
    return write_pairs(detail::WriteKind::kAdd, items, options_.expiry_or_default(expiry), flags);
  }

  /// delete_multi: deletes every key of `keys` (any sized range of
  /// string-like keys) as set_multi writes; kNotFound for a key that was not
  /// there.
  template <KeyRange Keys>
  auto delete_multi(const Keys& keys) -> MultiWriteResult {
    return write_keys(detail::WriteKind::kDelete, sent_keys(keys), {}, Expiry::never(), 0);
  }

  /// delete_multi for a list of keys: `client.delete_multi({"a", "b"})`.
  auto delete_multi(std::initializer_list<std::string_view> keys) -> MultiWriteResult {
    return delete_multi(std::span<const std::string_view>(keys.begin(), keys.size()));
  }

  /// touch_multi: gives every key of `keys` the expiry `expiry`, as
  /// set_multi writes; kNotFound for a key that was not there.
  template <KeyRange Keys>
  auto touch_multi(const Keys& keys, Expiry expiry) -> MultiWriteResult {
    return write_keys(detail::WriteKind::kTouch, sent_keys(keys), {}, expiry, 0);
  }

  // ---- placement and observability -----------------------------------------

  /// snapshot: the fleet's current state (server list, locator, health), as
  /// one consistent object.
  [[nodiscard]] auto snapshot() const -> std::shared_ptr<const Snapshot> { return view(); }

  /// server_index_for: the index of the key's server while every server is
  /// healthy (the placement itself).
  [[nodiscard]] auto server_index_for(std::string_view key) const -> std::size_t {
    std::string buffer;
    return view()->locate(prefix_.sent_key(key, buffer));
  }
  /// server_for: the key's server while every server is healthy.
  [[nodiscard]] auto server_for(std::string_view key) const -> Server {
    const std::shared_ptr<const Snapshot> now = view();
    std::string buffer;
    return now->members.servers[now->locate(prefix_.sent_key(key, buffer))];
  }
  /// servers: the current server list.
  [[nodiscard]] auto servers() const -> std::vector<Server> { return view()->servers(); }
  /// locator: the current locator.
  [[nodiscard]] auto locator() const -> std::shared_ptr<const L> { return view()->locator; }
  /// options: the options in force.
  [[nodiscard]] auto options() const noexcept -> const ClientOptions& { return options_; }

  /// stats: every server's counters and state, in server order (in a
  /// migration window: the new servers, then the retiring ones).
  [[nodiscard]] auto stats() const -> std::vector<ServerStats> {
    const std::shared_ptr<const Snapshot> now = view();
    std::vector<ServerStats> out;
    out.reserve(now->members.size());
    for (std::size_t s = 0; s < now->members.size(); ++s) {
      out.push_back(now->members.health[s]->stats(now->members.servers[s]));
    }
    return out;
  }

  // ---- membership -----------------------------------------------------------

  /// flush_server: flushes the server at `index` of servers() (flush_all:
  /// every item there goes, whoever wrote it) and forgets the writes its
  /// journal remembers, so that a server held out after its journal
  /// overflowed (JournalOverflow::kHold) serves again at once. For operators.
  /// Errc::kInvalidArgument for an index out of range.
  auto flush_server(std::size_t index) -> Status {
    refresh();
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

  /// reconfigure: moves the whole family to a new server list, building its
  /// locator with the factory. Servers that stay keep their connections,
  /// health and counters. Throws ConfigError (no factory, invalid list) and
  /// leaves the fleet as it was.
  void reconfigure(std::vector<Server> servers) {
    if (!fleet_->has_factory()) {
      detail::throw_config_error("reconfigure needs a locator factory",
                                 "construct the client with one, or pass the new locator");
    }
    validate(servers);
    std::shared_ptr<const L> locator = fleet_->build(servers);
    check_locator(locator);
    announce("reconfigure", [&] { fleet_->publish(std::move(servers), std::move(locator)); });
  }

  /// reconfigure: moves the whole family to `servers` with a locator built
  /// for them.
  void reconfigure(std::vector<Server> servers, std::shared_ptr<const L> locator) {
    validate(servers);
    if (!locator) {
      detail::throw_config_error("locator is null", "reconfigure");
    }
    check_locator(locator);
    announce("reconfigure", [&] { fleet_->publish(std::move(servers), std::move(locator)); });
  }

  // ---- live migration -------------------------------------------------------

  /// begin_migration: moves the whole family to a new server list (its
  /// locator built by the factory) without a cold cache: until
  /// commit_migration() or abort_migration(), a key whose owner changed
  /// (servers compared by host and port) and misses on its new owner is read
  /// once on its old owner and copied forward; every write invalidates the
  /// old copy. docs/migration.md has the rules. Throws ConfigError (no
  /// factory, an invalid list or options, a migration already running) and
  /// changes nothing.
  void begin_migration(std::vector<Server> servers, MigrationOptions options = {}) {
    if (!fleet_->has_factory()) {
      detail::throw_config_error("begin_migration needs a locator factory",
                                 "construct the client with one, or pass the new locator");
    }
    validate(servers);
    std::shared_ptr<const L> locator = fleet_->build(servers);
    check_locator(locator);
    start_migration(std::move(servers), std::move(locator), options);
  }

  /// begin_migration: the same to `servers` placed by `locator` (built for
  /// them): any placement, such as modulo to ketama or one client's ring to
  /// another's, with a locator type that can hold both (AnyLocator).
  void begin_migration(std::vector<Server> servers, std::shared_ptr<const L> locator,
                       MigrationOptions options = {}) {
    validate(servers);
    if (!locator) {
      detail::throw_config_error("locator is null", "begin_migration");
    }
    check_locator(locator);
    start_migration(std::move(servers), std::move(locator), options);
  }

  /// begin_migration: the same with the new locator by value.
  void begin_migration(std::vector<Server> servers, L locator, MigrationOptions options = {}) {
    begin_migration(std::move(servers), std::make_shared<const L>(std::move(locator)), options);
  }

  /// begin_migration: the same with a locator of another type that L can
  /// hold (a KetamaLocator for a client over AnyLocator, say).
  template <Locator Other>
  requires(!std::same_as<Other, L> && std::constructible_from<L, Other>) void begin_migration(
      std::vector<Server> servers, Other locator, MigrationOptions options = {}) {
    begin_migration(std::move(servers), std::make_shared<const L>(std::move(locator)), options);
  }

  /// commit_migration: ends the window, dropping the old placement; retiring
  /// servers lose their connections and can go. Answers whether a migration
  /// was running.
  auto commit_migration() -> bool { return end_migration(true); }

  /// abort_migration: ends the window by going back to the old placement.
  /// Safe: every write in the window invalidated the old copy, or left the
  /// key in the old server's recovery journal when the invalidation failed.
  /// The servers that received the window's copies keep them: a later
  /// begin_migration() placing keys on them throws ConfigError until they
  /// are flushed (MigrationOptions::aborted_copies_flushed). Answers whether
  /// a migration was running.
  auto abort_migration() -> bool { return end_migration(false); }

  /// migrate_key: copies one key of the running migration to its new owner
  /// (what a read of it would do, without reading the new owner first):
  /// the old owner's copy with its flags and exact remaining TTL, added,
  /// validated and, by the move rule, deleted from the old owner. The
  /// warmer's step; also for keys an application knows are hot.
  auto migrate_key(std::string_view key) -> KeyMigration {
    key = sent(key);
    refresh();
    core_.start_call();
    if (!snapshot_->migration) {
      return KeyMigration::kNoMigration;
    }
    if (!is_valid_key(key)) {
      return KeyMigration::kInvalidKey;
    }
    core_.forget_avoid();
    return window().migrate_key(key, route_from(snapshot_->locate(key), key));
  }

  /// migration_stats: the running migration's counters, summed over the
  /// family; once it ended (commit or abort), the last window's counters
  /// with `active` false; all zero when no migration ever ran.
  [[nodiscard]] auto migration_stats() const -> MigrationStats {
    const std::shared_ptr<const Snapshot> now = view();
    return now->migration ? now->migration->state->stats() : fleet_->last_migration_stats();
  }

 private:
  struct CloneTag {};

  enum class Store : std::uint8_t { kSet, kAdd, kReplace, kAppend, kPrepend };
  // What an operation does to its key: reads it, writes it (a write its
  // server misses is remembered), or only changes its expiry.
  enum class Access : std::uint8_t { kRead, kWrite, kTouch };

  ShardedClient(const ShardedClient& other, CloneTag)
      : options_(other.options_), prefix_(other.prefix_), fleet_(other.fleet_), core_(options_) {
    adopt(fleet_->current());
  }

  [[nodiscard]] static auto checked(const ClientOptions& options) -> const ClientOptions& {
    validate_options(options);
    return options;
  }

  void check_policy() const {
    if constexpr (!FailoverLocator<L>) {
      if (options_.failure_policy == FailurePolicy::kFailover) {
        detail::throw_config_error("failover needs a locator with locate_avoiding()",
                                   "FailurePolicy::kFailover");
      }
    }
  }

  // What every server list must pass before it is published.
  static void validate(std::span<const Server> servers) {
    validate_servers(servers);
    detail::validate_wire_servers(servers);
  }

  void check_locator(const std::shared_ptr<const L>& locator) const {
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

  void start(std::vector<Server> servers, std::shared_ptr<const L> locator,
             LocatorFactory factory) {
    fleet_ = std::make_shared<Fleet<L>>(std::move(servers), std::move(locator), std::move(factory),
                                        prefix_.placement_skip());
    adopt(fleet_->current());
  }

  // Moves this client to the fleet's newest snapshot, if another client of the
  // family published one: one atomic load when nothing changed.
  void refresh() {
    if (fleet_->generation() != generation_) [[unlikely]] {
      adopt(fleet_->current());
    }
  }

  void adopt(std::shared_ptr<const Snapshot> next) {
    core_.bind(next->members);  // the old snapshot stays alive until this returns
    meta_.bind(next->members);
    snapshot_ = std::move(next);
    locator_ = snapshot_->locator.get();
    generation_ = snapshot_->generation;
  }

  // The fleet's newest snapshot, without moving this client to it.
  // codec_failure: a typed call's Errc::kCodecError, with the server (when
  // the item came from one) and what the codec found.
  [[nodiscard]] auto codec_failure(std::string_view operation, std::size_t server,
                                   const CodecError& error) const -> Status {
    std::string text(operation);
    const std::shared_ptr<const Snapshot> now = view();
    if (server < now->members.servers.size()) {
      text.append(" on ").append(now->members.servers[server].endpoint());
    }
    text.append(": ").append(to_string(error.code())).append(": ").append(error.message());
    return Status(Errc::kCodecError, MEMCACHED_SUCCESS, server, std::move(text));
  }

  [[nodiscard]] auto view() const noexcept -> std::shared_ptr<const Snapshot> {
    if (fleet_->generation() == generation_) {
      return snapshot_;
    }
    return fleet_->current();
  }

  // Where a key goes now: its own server, a probe of it, its failover server,
  // or nowhere.
  auto route_from(std::size_t primary, std::string_view key, std::int64_t deadline = 0)
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

  // The skeleton of every single-key operation: check, route, call, finish.
  // `call(server)` sends the request on that server's handle and answers
  // libmemcached's code. A write the key's own server misses is remembered
  // there (fleet/recovery_journal.hpp).
  template <class Call>
  auto run(std::string_view operation, std::string_view key, std::string_view value, Access access,
           Call&& call) -> Status {
    if (auto refused = core_.check(key, value)) {
      return std::move(*refused);
    }
    refresh();
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

  // The exptime a store sends: `expiry`, capped at failover_ttl on a failover
  // server.
  [[nodiscard]] auto exptime(Expiry expiry) const noexcept -> std::time_t {
    if (!redirected_) [[likely]] {
      return expiry.wire_value();
    }
    return detail::capped_exptime(expiry.wire_value(), options_.failover_ttl.count(),
                                  static_cast<std::int64_t>(std::time(nullptr)));
  }

  void start_migration(std::vector<Server> servers, std::shared_ptr<const L> locator,
                       const MigrationOptions& options) {
    announce("begin_migration",
             [&] { fleet_->begin_migration(std::move(servers), std::move(locator), options); });
  }

  auto end_migration(bool commit) -> bool {
    bool ended = false;
    announce(commit ? "commit_migration" : "abort_migration",
             [&] { ended = fleet_->end_migration(commit); });
    return ended;
  }

  // Runs `change` (which publishes a new snapshot, or throws and changes
  // nothing), moves this client to the new snapshot and tells the observer
  // of every server that `what` added or removed (compared by host and port
  // with the snapshot before it).
  template <class Change>
  void announce(std::string_view what, Change&& change) {
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

  // The migration window of the current snapshot (which has a migration).
  [[nodiscard]] auto window() noexcept -> detail::MigrationWindow<L> {
    return detail::MigrationWindow<L>(core_, meta_, *snapshot_);
  }

  // Runs the write `call()` on `key`; in a migration window, applies `rule`
  // to the key's old copy.
  template <class Call>
  auto in_window(std::string_view key, detail::WriteRule rule, Call&& call) -> Status {
    refresh();
    core_.start_call();
    if (!snapshot_->migration) [[likely]] {
      return call();
    }
    return window().write(key, rule, call);
  }

  // The key as it goes on the wire (with the key prefix), valid until the
  // next call of sent().
  auto sent(std::string_view key) -> std::string_view { return prefix_.sent_key(key, sent_); }

  auto native(std::size_t server) -> memcached_st* {
    return core_.pool().handle(server).native_handle();
  }

  // visit_multi on sent keys.
  template <class OnHit, class OnFailure>
  void visit_sent(std::span<const std::string_view> keys, OnHit& on_hit, OnFailure& on_failure) {
    refresh();
    core_.start_call();
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
    visit_placed(keys, on_hit, on_failure);
  }

  // The keys of a multi-key call as sent keys: `keys` itself when it is a
  // contiguous range of string_views and there is no prefix, else views
  // into key_views_ (and the prefixed keys in sent_keys_), valid until the
  // next call of sent_keys().
  template <KeyRange Keys>
  auto sent_keys(const Keys& keys) -> std::span<const std::string_view> {
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

  // A batch of key and value pairs: the keys as sent keys, then write_keys.
  template <KeyValueRange Items>
  auto write_pairs(detail::WriteKind kind, const Items& items, Expiry expiry, std::uint32_t flags)
      -> MultiWriteResult {
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

  // The batch writes: every sent key of `keys` (with `values[i]`, for set
  // and add) routed, grouped by server, and each group written in one
  // pipeline (MultiWriter), or key by key (write_one) where the meta
  // protocol cannot go.
  auto write_keys(detail::WriteKind kind, std::span<const std::string_view> keys,
                  std::span<const std::string_view> values, Expiry expiry, std::uint32_t flags)
      -> MultiWriteResult {
    MultiWriteResult out;
    out.statuses.resize(keys.size());
    const auto value_at = [&](std::size_t i) {
      return values.empty() ? std::string_view() : values[i];
    };
    refresh();
    core_.start_call();
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
    const bool keyed =
        kind != detail::WriteKind::kTouch;  // a write its server misses is remembered
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
          route.server == primary ? expiry.wire_value()
                                  : detail::capped_exptime(expiry.wire_value(),
                                                           options_.failover_ttl.count(), unix_now);
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

  // remove() of a sent key, in the call already started.
  auto remove_sent(std::string_view key) -> Status {
    const auto call = [&] {
      return run("delete", key, {}, Access::kWrite,
                 [&](std::size_t server) { return detail::delete_key(native(server), key); });
    };
    if (snapshot_->migration) [[unlikely]] {
      return window().remove(key, call);
    }
    return call();
  }

  // One key of a batch written alone, as the single-key call would.
  auto write_one(detail::WriteKind kind, std::string_view key, std::string_view value,
                 Expiry expiry, std::uint32_t flags) -> Status {
    const Access access = kind == detail::WriteKind::kTouch ? Access::kTouch : Access::kWrite;
    return run(detail::operation_name(kind), key, value, access, [&](std::size_t server) {
      return write_on(native(server), kind, key, value, exptime(expiry), flags);
    });
  }

  // The libmemcached call of one batch write.
  static auto write_on(memcached_st* memc, detail::WriteKind kind, std::string_view key,
                       std::string_view value, std::time_t exptime, std::uint32_t flags)
      -> memcached_return_t {
    switch (kind) {
      case detail::WriteKind::kSet:
        return memcached_set(memc, key.data(), key.size(), value.data(), value.size(), exptime,
                             flags);
      case detail::WriteKind::kAdd: {
        const memcached_return_t rc =
            memcached_add(memc, key.data(), key.size(), value.data(), value.size(), exptime, flags);
        return rc == MEMCACHED_DATA_EXISTS ? MEMCACHED_NOTSTORED
                                           : rc;  // the binary protocol's word
      }
      case detail::WriteKind::kDelete:
        return detail::delete_key(memc, key);
      case detail::WriteKind::kTouch:
        return memcached_touch(memc, key.data(), key.size(), exptime);
    }
    return MEMCACHED_INVALID_ARGUMENTS;
  }

  // The migration rule of a batch write's kind (as its single-key call's).
  static auto write_rule(detail::WriteKind kind) noexcept -> detail::WriteRule {
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

  // The multi-get of the placement: every key to its own server (or its
  // failover), one fan-out.
  template <class OnHit, class OnFailure>
  void visit_placed(std::span<const std::string_view> keys, OnHit& on_hit, OnFailure& on_failure) {
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

  // A multi-get that threw: close the connections that may hold unread
  // replies or shortened waits, and give this call's probe leases back.
  void abandon(bool polled) noexcept {
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

  // Reads `key` on `server`'s handle into `item` (left empty for a miss).
  auto fetch_one(std::size_t server, std::string_view key, std::optional<Item>& item)
      -> memcached_return_t {
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

  // Copies one fetched result into `item`.
  static void fill(std::optional<Item>& item, const memcached_result_st& result) {
    if (!item) {
      item.emplace();
    }
    item->value.assign(memcached_result_value(&result), memcached_result_length(&result));
    item->flags = memcached_result_flags(&result);
    item->cas = memcached_result_cas(&result);
  }

  auto store(Store kind, std::string_view key, std::string_view value, Expiry expiry,
             std::uint32_t flags) -> Status {
    key = sent(key);
    static constexpr std::string_view kNames[] = {"set", "add", "replace", "append", "prepend"};
    const detail::WriteRule rule = kind == Store::kSet   ? detail::WriteRule::kInvalidate
                                   : kind == Store::kAdd ? detail::WriteRule::kMoveFirst
                                                         : detail::WriteRule::kMoveOnMiss;
    return in_window(key, rule, [&] {
      return store_once(kind, kNames[static_cast<std::size_t>(kind)], key, value, expiry, flags);
    });
  }

  auto store_once(Store kind, std::string_view name, std::string_view key, std::string_view value,
                  Expiry expiry, std::uint32_t flags) -> Status {
    return run(name, key, value, Access::kWrite, [&](std::size_t server) {
      memcached_st* memc = native(server);
      const std::time_t exptime = this->exptime(expiry);
      memcached_return_t rc = MEMCACHED_SUCCESS;
      switch (kind) {
        case Store::kSet:
          rc = memcached_set(memc, key.data(), key.size(), value.data(), value.size(), exptime,
                             flags);
          break;
        case Store::kAdd:
          rc = memcached_add(memc, key.data(), key.size(), value.data(), value.size(), exptime,
                             flags);
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

  auto arithmetic(std::string_view key, std::uint32_t delta, bool up) -> Result<std::uint64_t> {
    key = sent(key);
    std::uint64_t value = 0;
    Status status = in_window(key, detail::WriteRule::kMoveOnMiss, [&] {
      return run(up ? "incr" : "decr", key, {}, Access::kWrite, [&](std::size_t server) {
        memcached_st* memc = native(server);
        memcached_return_t rc =
            up ? memcached_increment(memc, key.data(), key.size(), delta, &value)
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

  ClientOptions options_;
  KeyPrefix prefix_;                         // options_.key_prefix
  std::string sent_;                         // the current call's sent key (sent())
  std::string sent_keys_;                    // a multi-get's sent keys, one after another
  std::vector<std::string_view> key_views_;  // a multi-get's keys, as views
  std::vector<std::string_view> pair_keys_;  // a batch write's keys and values
  std::vector<std::string_view> pair_values_;
  std::vector<std::vector<detail::WriteItem>> groups_;  // a batch write's keys by server
  std::vector<detail::Route> group_routes_;             // the route of each group
  std::vector<std::size_t> primaries_;                  // each key's own server
  std::vector<memcached_return_t> codes_;               // a group's answers
  std::string cause_;                                   // why a group failed
  detail::MultiWriter writer_;
  std::shared_ptr<Fleet<L>> fleet_;                 // shared by the family
  std::shared_ptr<const Snapshot> snapshot_;        // the one this client's calls run on
  const L* locator_ = nullptr;                      // snapshot_->locator
  std::uint64_t generation_ = 0;                    // snapshot_->generation
  bool redirected_ = false;                         // the current call goes to a failover server
  detail::ClientCore core_;                         // connections, health rules, finish
  detail::MetaPool meta_{options_.max_value_size};  // meta connections (migration, batches)
  detail::BatchPlan plan_;                          // the routing of the current multi-get
  detail::PolledMultiGet polled_;
  detail::PerServerMultiGet per_server_;
  detail::MigratedMultiGet migrated_;  // the second fan-out of a migration window
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_SHARDED_CLIENT_HPP_
