// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_SHARDED_CLIENT_HPP_
#define MEMSHARD_SHARDED_CLIENT_HPP_

// sharded_client.hpp: ShardedClient, the part of a client that depends on the locator type
// (checks, routing, operations) over its parts: fleet/, wire/, client/client_core.hpp
// (docs/architecture.md). Its members are defined outside the class, in
// client/detail/sharded_client_operations.hpp and sharded_client_internals.hpp, so that the
// compiled mode (client/detail/compiled_clients.hpp) can make a client an extern template.

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
#include "memshard/hotkeys/detail/lease_load.hpp"
#include "memshard/hotkeys/hot_key_sketch.hpp"
#include "memshard/hotkeys/hot_key_watch.hpp"
#include "memshard/hotkeys/load_options.hpp"
#include "memshard/hotkeys/near_cache.hpp"
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
/// ShardedClient: a memcached client for a fleet, placing keys with a Locator.
///
/// Every operation checks its key (check_key) and value size before anything reaches the wire,
/// asks the locator for the key's server, and runs on that server's own libmemcached handle
/// (multi-gets: see MultiGetMode). Outcomes are values (Status, Result): a miss is not an error,
/// and a failure names the server and keeps libmemcached's return code. Configuration mistakes
/// throw ConfigError at construction (and from reconfigure), never from an operation.
///
/// Failure policy: after `failure_limit` consecutive timeouts or connection failures a server
/// is ejected for `retry_interval`, then probed; meanwhile its keys fail at once (kFailFast) or
/// go to the next live server (kFailover). No call blocks past its deadline. Family: clone()
/// makes another client for another thread; a client and its clones share one Fleet (servers,
/// locator, health: one immutable snapshot), and reconfigure() on any of them reaches all from
/// their next call. docs/architecture.md tells both in full.
///
/// Threads: one ShardedClient is used by one thread at a time. Move-only. Operations are noexcept
/// in effect except for allocation failures and exceptions thrown by the caller's multi-get
/// callbacks.
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
  ShardedClient(std::vector<Server> servers, LocatorFactory factory, ClientOptions options = {});

  /// Uses `locator`, which must have been built for `servers` (in the same
  /// order). reconfigure() then needs the new locator too.
  ShardedClient(std::vector<Server> servers, std::shared_ptr<const L> locator,
                ClientOptions options = {});

  /// Uses `locator` (by value), which must have been built for `servers`. reconfigure() then needs
  /// the new locator too: this client cannot know how `locator` was configured.
  ShardedClient(std::vector<Server> servers, L locator, ClientOptions options = {});

  /// Builds `L(servers)`. (A member template: an explicit instantiation never compiles it for a
  /// locator that cannot be built from the servers alone.)
  template <class M = L>
  requires std::constructible_from<M, std::span<const Server>>
  explicit ShardedClient(std::vector<Server> servers, ClientOptions options = {})
      : ShardedClient(std::move(servers), LocatorFactory([](std::span<const Server> list) {
                        return std::make_shared<const L>(list);
                      }),
                      options) {}

  // Defaulted outside the class: not inline, so compiled once in the compiled mode.
  ShardedClient(ShardedClient&&) noexcept;
  auto operator=(ShardedClient&&) noexcept -> ShardedClient&;
  ~ShardedClient();
  ShardedClient(const ShardedClient&) = delete;
  auto operator=(const ShardedClient&) -> ShardedClient& = delete;

  /// clone: another client of this family, for another thread: the same
  /// fleet and options, with its own connections (opened on first use).
  [[nodiscard]] auto clone() const -> ShardedClient;

  /// deadline_scope: until the returned scope ends, every call of this client ends by `deadline`
  /// (or by its own call_timeout when that comes first), as a request handler passes its own
  /// deadline down; a call begun after it sends nothing and answers Errc::kTimeout. A timeout the
  /// caller's deadline caused never counts toward the server's ejection. See DeadlineScope.
  ///
  /// **Example**:
  ///   const auto scope = client.deadline_scope(std::chrono::milliseconds(50));
  ///   auto user = client.get("user:42");       // these two calls share
  ///   auto prefs = client.get("prefs:42");     // the same 50 ms
  [[nodiscard]] auto deadline_scope(std::chrono::steady_clock::time_point deadline) noexcept
      -> DeadlineScope;

  /// deadline_scope: the same for `timeout` from now.
  [[nodiscard]] auto deadline_scope(std::chrono::milliseconds timeout) noexcept -> DeadlineScope;

  // ---- single-key operations ------------------------------------------------

  /// get: the item, an empty optional for a miss, or the failure.
  auto get(std::string_view key) -> Result<std::optional<Item>>;

  /// gat: get-and-touch: the item (an empty optional for a miss) with its expiry set to `expiry` in
  /// the same request (memcached's meta get with a T flag). Without meta commands (memcached before
  /// 1.6) or with SASL credentials, a touch and then a get. In a migration window, a moved key that
  /// misses on its new owner is moved there first, as touch() does.
  auto gat(std::string_view key, Expiry expiry) -> Result<std::optional<Item>>;

  /// set: stores the value whatever is there. Without an expiry, the item
  /// gets ClientOptions::default_expiry (Expiry::never() says never).
  auto set(std::string_view key, std::string_view value, std::optional<Expiry> expiry = {},
           std::uint32_t flags = 0) -> Status;
  /// add: stores only when the key is absent, else Errc::kNotStored.
  auto add(std::string_view key, std::string_view value, std::optional<Expiry> expiry = {},
           std::uint32_t flags = 0) -> Status;
  /// replace: stores only when the key exists, else Errc::kNotStored.
  auto replace(std::string_view key, std::string_view value, std::optional<Expiry> expiry = {},
               std::uint32_t flags = 0) -> Status;
  /// append: adds bytes after the existing value, else Errc::kNotStored.
  auto append(std::string_view key, std::string_view value) -> Status;
  /// prepend: adds bytes before the existing value, else Errc::kNotStored.
  auto prepend(std::string_view key, std::string_view value) -> Status;

  /// cas: stores only if the item still has the cas unique `cas` (from get);
  /// Errc::kExists when it changed, Errc::kNotFound when it is gone.
  auto cas(std::string_view key, std::string_view value, std::uint64_t cas,
           std::optional<Expiry> expiry = {}, std::uint32_t flags = 0) -> Status;

  /// remove: deletes the key; Errc::kNotFound when it was not there. In a
  /// migration window a moved key is deleted on its old owner first, then on
  /// the new one (kNotFound only when neither had it).
  auto remove(std::string_view key) -> Status;

  /// incr: adds `delta` to a decimal value and answers the new value
  /// (wrapping at 2^64, as memcached does); Errc::kNotFound for a missing key,
  /// Errc::kInvalidArgument for a value that is not a number.
  auto incr(std::string_view key, std::uint32_t delta = 1) -> Result<std::uint64_t>;
  /// decr: subtracts `delta`, stopping at 0 (memcached's rule).
  auto decr(std::string_view key, std::uint32_t delta = 1) -> Result<std::uint64_t>;

  /// incr_with_initial: incr, but a missing key is created holding `initial` (with `expiry`, or
  /// ClientOptions::default_expiry), which is the answer (libmemcached's
  /// memcached_increment_with_initial, for both protocols). When another client creates the key
  /// first, `delta` is added to its value instead.
  auto incr_with_initial(std::string_view key, std::uint32_t delta, std::uint64_t initial,
                         std::optional<Expiry> expiry = {}) -> Result<std::uint64_t>;

  /// get_or_load: cache-aside in one call. A hit answers the cached value. A miss calls `loader()`
  /// (whose answer converts to std::string), adds that with `expiry` (or
  /// ClientOptions::default_expiry) and `flags`, and answers it; Errc::kNotStored from the add
  /// (another process filled the key meanwhile) is fine. When the cache cannot be read (a server
  /// failure, an ejected server, an invalid key), the loader's answer comes back without being
  /// stored. An exception from the loader passes through with nothing stored. The answer always
  /// holds the value; its status() says what the cache did: ok for a hit, the add's status after a
  /// miss, or the failed read's status.
  ///
  /// With a lease (`load`, or else ClientOptions::load_options, with a lease_ttl: LoadOptions)
  /// one caller of all that miss the key, in every process, runs the loader; the others wait for
  /// its value, within their deadline: one that waits the deadline out answers Errc::kTimeout and
  /// no value, and never runs the loader. The loader's value is stored only if no write or delete
  /// of the key came meanwhile (else Errc::kNotStored, with the value). A value delete_stale()
  /// marked is reloaded by one caller while the others are answered it. Leases need memcached's
  /// meta commands (1.6); a server without them, SASL, or a migration window load the plain way.
  /// Invalid LoadOptions answer Errc::kInvalidArgument, and the loader does not run.
  ///
  /// **Example**:
  ///   auto user = client.get_or_load("user:42", [&] { return db.load_user(42); },
  ///                                  memshard::Expiry::after(std::chrono::minutes(5)));
  ///   render(*user);
  template <class Loader>
  requires std::invocable<Loader&> &&
      std::convertible_to<std::invoke_result_t<Loader&>, std::string>
  auto get_or_load(std::string_view key, Loader&& loader, std::optional<Expiry> expiry = {},
                   std::uint32_t flags = 0, std::optional<LoadOptions> load = std::nullopt)
      -> Result<std::string>;

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
                   std::uint32_t flags = 0, std::optional<LoadOptions> load = std::nullopt)
      -> Result<std::optional<std::string>>;

  /// delete_stale: invalidates the key by marking its value stale (memcached's `md <key> I`)
  /// for LoadOptions::stale_ttl (ClientOptions::load_options) instead of deleting it: the next
  /// leased get_or_load reloads it while the others are answered the stale value, so a hot key
  /// never misses. A plain get reads the stale value too, for at most stale_ttl. Errc::kNotFound
  /// when the key was not there. In a migration window, on a server without meta commands, or
  /// with SASL, the key is deleted (remove()).
  auto delete_stale(std::string_view key) -> Status;

  /// touch: sets a new expiry; Errc::kNotFound for a missing key.
  auto touch(std::string_view key, Expiry expiry) -> Status;

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
  auto get_value(std::string_view key, const C& codec) -> Result<std::optional<Value>>;

  /// set_value: stores `value` as `codec` encodes it (its flags and bytes);
  /// Errc::kCodecError, with nothing sent, when the codec has no form for it.
  template <Codec C>
  auto set_value(std::string_view key, const Value& value, const C& codec,
                 std::optional<Expiry> expiry = {}) -> Status;

  /// add_value: add() of `value` as `codec` encodes it.
  template <Codec C>
  auto add_value(std::string_view key, const Value& value, const C& codec,
                 std::optional<Expiry> expiry = {}) -> Status;

  /// get_values: get_multi with every hit decoded by `codec`; a key whose
  /// item the codec cannot decode fails alone, with Errc::kCodecError.
  template <KeyRange Keys, Codec C>
  auto get_values(const Keys& keys, const C& codec) -> MultiValueResult;

  /// get_values for a list of keys: `client.get_values({"a", "b"}, codec)`.
  template <Codec C>
  auto get_values(std::initializer_list<std::string_view> keys, const C& codec) -> MultiValueResult;

  // ---- multi-get ------------------------------------------------------------

  /// get_multi: reads many keys at once. Keys are grouped by server; every server is sent its
  /// request before any answer is read, so the call takes about as long as the slowest server, not
  /// the sum. A failing server fails only its own keys; the whole call ends within connect_timeout
  /// + io_timeout (plus scheduling), however many servers hang. A key listed twice is read twice.
  /// ClientOptions::multi_get chooses how the replies are read (MultiGetMode). `keys` is any sized
  /// range of string-like keys (a std::vector<std::string>, a span of string_views, ...).
  template <KeyRange Keys>
  auto get_multi(const Keys& keys) -> MultiGetResult;

  /// get_multi for a list of keys: `client.get_multi({"a", "b"})`.
  auto get_multi(std::initializer_list<std::string_view> keys) -> MultiGetResult;

  /// visit_multi: get_multi without copies. Calls `on_hit(index, item)` for every key found, with
  /// `item` (an ItemView) valid only during the call, and `on_failure(index, status)` for every key
  /// that could not be read; misses get no call. `index` is the key's position in `keys` (any sized
  /// range of string-like keys). A server's hits may be reported before its failure is known, so a
  /// key may get on_hit and then on_failure. A callback that throws ends the call: the exception
  /// passes through, connections that may hold unread replies are closed and probe leases are given
  /// back. A callback may use other clients (a clone's reconfigure() included: this call finishes
  /// on its snapshot), never this one.
  template <KeyRange Keys, class OnHit, class OnFailure>
  void visit_multi(const Keys& keys, OnHit&& on_hit, OnFailure&& on_failure);

  // ---- batch writes -----------------------------------------------------------

  /// set_multi: stores every key and value of `items` (any sized range of pairs whose first and
  /// second convert to std::string_view, such as a std::map<std::string, std::string>), with
  /// `expiry` (or ClientOptions::default_expiry) and `flags`. Keys are grouped by server and each
  /// server's group is sent as one pipeline, all within the call's one deadline (call_timeout, or
  /// the caller's DeadlineScope): a batch costs one round trip per server, not per key. Answers a
  /// Status per item, in order; a failing server fails only its own items, and counts once toward
  /// its ejection. Key and value checks, routing (ejection, failover) and the recovery journal
  /// apply to each item as to set(). Servers without meta commands (memcached before 1.6), clients
  /// with SASL credentials and migration windows write key by key instead.
  template <KeyValueRange Items>
  auto set_multi(const Items& items, std::optional<Expiry> expiry = {}, std::uint32_t flags = 0)
      -> MultiWriteResult;

  /// add_multi: set_multi, storing only the keys that are absent (kNotStored
  /// for the others).
  template <KeyValueRange Items>
  auto add_multi(const Items& items, std::optional<Expiry> expiry = {}, std::uint32_t flags = 0)
      -> MultiWriteResult;

  /// delete_multi: deletes every key of `keys` (any sized range of string-like keys) as set_multi
  /// writes; kNotFound for a key that was not there.
  template <KeyRange Keys>
  auto delete_multi(const Keys& keys) -> MultiWriteResult;

  /// delete_multi for a list of keys: `client.delete_multi({"a", "b"})`.
  auto delete_multi(std::initializer_list<std::string_view> keys) -> MultiWriteResult;

  /// touch_multi: gives every key of `keys` the expiry `expiry`, as
  /// set_multi writes; kNotFound for a key that was not there.
  template <KeyRange Keys>
  auto touch_multi(const Keys& keys, Expiry expiry) -> MultiWriteResult;

  // ---- placement and observability -----------------------------------------

  /// snapshot: the fleet's current state (server list, locator, health), as
  /// one consistent object.
  [[nodiscard]] auto snapshot() const -> std::shared_ptr<const Snapshot>;

  /// server_index_for: the index of the key's server while every server is
  /// healthy (the placement itself).
  [[nodiscard]] auto server_index_for(std::string_view key) const -> std::size_t;
  /// server_for: the key's server while every server is healthy.
  [[nodiscard]] auto server_for(std::string_view key) const -> Server;
  /// servers: the current server list.
  [[nodiscard]] auto servers() const -> std::vector<Server>;
  /// locator: the current locator.
  [[nodiscard]] auto locator() const -> std::shared_ptr<const L>;
  /// options: the options in force.
  [[nodiscard]] auto options() const noexcept -> const ClientOptions&;

  /// stats: every server's counters and state, in server order (in a
  /// migration window: the new servers, then the retiring ones).
  [[nodiscard]] auto stats() const -> std::vector<ServerStats>;

  // ---- membership -----------------------------------------------------------

  /// flush_server: flushes the server at `index` of servers() (flush_all: every item there goes,
  /// whoever wrote it) and forgets the writes its journal remembers, so that a server held out
  /// after its journal overflowed (JournalOverflow::kHold) serves again at once. For operators.
  /// Errc::kInvalidArgument for an index out of range.
  auto flush_server(std::size_t index) -> Status;

  /// reconfigure: moves the whole family to a new server list, building its locator with the
  /// factory. Servers that stay keep their connections, health and counters. Throws ConfigError (no
  /// factory, invalid list) and leaves the fleet as it was.
  void reconfigure(std::vector<Server> servers);

  /// reconfigure: moves the whole family to `servers` with a locator built
  /// for them.
  void reconfigure(std::vector<Server> servers, std::shared_ptr<const L> locator);

  // ---- live migration -------------------------------------------------------

  /// begin_migration: moves the whole family to a new server list (its locator built by the
  /// factory) without a cold cache: until commit_migration() or abort_migration(), a key whose
  /// owner changed (servers compared by host and port) and misses on its new owner is read once on
  /// its old owner and copied forward; every write invalidates the old copy. docs/migration.md has
  /// the rules. Throws ConfigError (no factory, an invalid list or options, a migration already
  /// running) and changes nothing.
  void begin_migration(std::vector<Server> servers, MigrationOptions options = {});

  /// begin_migration: the same to `servers` placed by `locator` (built for
  /// them): any placement, such as modulo to ketama or one client's ring to
  /// another's, with a locator type that can hold both (AnyLocator).
  void begin_migration(std::vector<Server> servers, std::shared_ptr<const L> locator,
                       MigrationOptions options = {});

  /// begin_migration: the same with the new locator by value.
  void begin_migration(std::vector<Server> servers, L locator, MigrationOptions options = {});

  /// begin_migration: the same with a locator of another type that L can
  /// hold (a KetamaLocator for a client over AnyLocator, say).
  template <Locator Other>
  requires(!std::same_as<Other, L> && std::constructible_from<L, Other>) void begin_migration(
      std::vector<Server> servers, Other locator, MigrationOptions options = {}) {
    begin_migration(std::move(servers), std::make_shared<const L>(std::move(locator)), options);
  }

  /// commit_migration: ends the window, dropping the old placement; retiring servers lose their
  /// connections and can go. Answers whether a migration was running.
  auto commit_migration() -> bool;

  /// abort_migration: ends the window by going back to the old placement. Safe: every write in the
  /// window invalidated the old copy, or left the key in the old server's recovery journal when the
  /// invalidation failed. The servers that received the window's copies keep them: a later
  /// begin_migration() placing keys on them throws ConfigError until they are flushed
  /// (MigrationOptions::aborted_copies_flushed). Answers whether a migration was running.
  auto abort_migration() -> bool;

  /// migrate_key: copies one key of the running migration to its new owner (what a read of it would
  /// do, without reading the new owner first): the old owner's copy with its flags and exact
  /// remaining TTL, added, validated and, by the move rule, deleted from the old owner. The
  /// warmer's step; also for keys an application knows are hot.
  auto migrate_key(std::string_view key) -> KeyMigration;

  /// migration_stats: the running migration's counters, summed over the
  /// family; once it ended (commit or abort), the last window's counters
  /// with `active` false; all zero when no migration ever ran.
  [[nodiscard]] auto migration_stats() const -> MigrationStats;

  /// hot_keys: the keys, as sent (with the key prefix), that carried at least
  /// ClientOptions::hot_keys->share of the family's operations in the last complete window
  /// (a client and its clones count together), with their estimated share and rate, highest
  /// first; empty when hot_keys is off. docs/hot-keys.md.
  ///
  /// **Example**:
  ///   for (const memshard::HotKey& hot : client.hot_keys()) log(hot.key, hot.per_second);
  [[nodiscard]] auto hot_keys() const -> std::vector<HotKey>;

  /// near_cache_stats: what the family's near cache did (ClientOptions::near_cache): gets
  /// answered from a copy, copies checked and found unchanged or changed, values kept, copies
  /// dropped by writes, and the keys and bytes it holds; all zero when it is off.
  [[nodiscard]] auto near_cache_stats() const -> NearCacheStats;

  /// wait_for_earlier_calls: waits until every call of the family (this client and its clones)
  /// that began on an earlier placement than the current one has ended, or `timeout` passed;
  /// whether they all ended. A fleet's member acknowledges a phase only then (docs/fleet.md).
  [[nodiscard]] auto wait_for_earlier_calls(std::chrono::milliseconds timeout) const -> bool;

 private:
  template <Locator>
  friend struct detail::FleetOf;  // a fleet's member serves its record's phases (Fleet::serve)

  struct CloneTag {};

  enum class Store : std::uint8_t { kSet, kAdd, kReplace, kAppend, kPrepend };
  // What an operation does to its key: reads it, writes it (a write its
  // server misses is remembered), or only changes its expiry.
  enum class Access : std::uint8_t { kRead, kWrite, kTouch };

  ShardedClient(const ShardedClient& other, CloneTag);

  [[nodiscard]] static auto checked(const ClientOptions& options) -> const ClientOptions&;

  void check_policy() const;

  // What every server list must pass before it is published.
  static void validate(std::span<const Server> servers);

  void check_locator(const std::shared_ptr<const L>& locator) const;

  void start(std::vector<Server> servers, std::shared_ptr<const L> locator, LocatorFactory factory);

  // Moves this client to the fleet's newest snapshot, if another client of the
  // family published one: one atomic load when nothing changed.
  void refresh();
  // enter: refresh() for a call, whose seat is marked until the returned mark goes. The call,
  // and every call nested in it, runs whole on the snapshot it entered on.
  [[nodiscard]] auto enter() -> detail::CallMark;

  // Whether this call must not serve: the family follows a fleet and its gate is closed
  // (fleet/fence_gate.hpp). One branch for a client that follows no fleet.
  [[nodiscard]] auto fenced() const noexcept -> bool {
    return snapshot_->fence != nullptr && !unfenced_ && snapshot_->fence->closed();
  }
  // A write the closed gate refuses (Errc::kFenced); its key is kept, to be deleted later.
  auto refuse_fenced(std::string_view key, std::string_view value = {}) -> Status;

  void adopt(std::shared_ptr<const Snapshot> next);
  // Counts one operation on the sent key `key` in the family's hot keys, when they are on.
  void note_hot(std::string_view key) noexcept {
    if (hot_seat_ != nullptr && hot_seat_->record(key)) [[unlikely]] {
      roll_hot();
    }
  }
  // A counted operation began a window: admits the hot keys to the near cache, and tells the
  // observer which keys became hot or cooled.
  void roll_hot() noexcept;
  // A get of the sent key `key`, a hot key whose copy is `found`, read from `read_at`: the copy
  // when it is young, or old and unchanged on its server (a cas-only meta get); nothing when the
  // get must read the server.
  auto near_read(std::string_view key, const detail::NearCache::Found& found, std::int64_t read_at)
      -> std::optional<Result<std::optional<Item>>>;

  // The fleet's newest snapshot, without moving this client to it. codec_failure: a typed call's
  // Errc::kCodecError, with the server (when the item came from one) and what the codec found.
  [[nodiscard]] auto codec_failure(std::string_view operation, std::size_t server,
                                   const CodecError& error) const -> Status;

  [[nodiscard]] auto view() const noexcept -> std::shared_ptr<const Snapshot>;

  // Where a key goes now: its own server, a probe of it, its failover server,
  // or nowhere.
  auto route_from(std::size_t primary, std::string_view key, std::int64_t deadline = 0)
      -> detail::Route;

  // The skeleton of every single-key operation: check, route, call, finish. `call(server)` sends
  // the request on that server's handle and answers libmemcached's code. A write the key's own
  // server misses is remembered there (fleet/recovery_journal.hpp).
  template <class Call>
  auto run(std::string_view operation, std::string_view key, std::string_view value, Access access,
           Call&& call) -> Status;

  // The exptime a store sends: `expiry`, capped at failover_ttl on a failover
  // server.
  [[nodiscard]] auto exptime(Expiry expiry) const noexcept -> std::time_t;

  void start_migration(std::vector<Server> servers, std::shared_ptr<const L> locator,
                       const MigrationOptions& options);

  auto end_migration(bool commit) -> bool;

  // Runs `change` (which publishes a new snapshot, or throws and changes nothing), moves this
  // client to the new snapshot and tells the observer of every server that `what` added or removed
  // (compared by host and port with the snapshot before it).
  template <class Change>
  void announce(std::string_view what, Change&& change);

  // The migration window of the current snapshot (which has a migration).
  [[nodiscard]] auto window() noexcept -> detail::MigrationWindow<L>;

  // Runs the write `call()` on `key`; in a migration window, applies `rule`
  // to the key's old copy.
  template <class Call>
  auto in_window(std::string_view key, detail::WriteRule rule, Call&& call) -> Status;

  // The key as it goes on the wire (with the key prefix), valid until the
  // next call of sent().
  auto sent(std::string_view key) -> std::string_view;

  auto native(std::size_t server) -> memcached_st*;

  // visit_multi on sent keys.
  template <class OnHit, class OnFailure>
  void visit_sent(std::span<const std::string_view> keys, OnHit& on_hit, OnFailure& on_failure);

  // The keys of a multi-key call as sent keys: `keys` itself when it is a contiguous range of
  // string_views and there is no prefix, else views into key_views_ (and the prefixed keys in
  // sent_keys_), valid until the next call of sent_keys().
  template <KeyRange Keys>
  auto sent_keys(const Keys& keys) -> std::span<const std::string_view>;

  // A batch of key and value pairs: the keys as sent keys, then write_keys.
  template <KeyValueRange Items>
  auto write_pairs(detail::WriteKind kind, const Items& items, Expiry expiry, std::uint32_t flags)
      -> MultiWriteResult;

  // The batch writes: every sent key of `keys` (with `values[i]`, for set and add) routed, grouped
  // by server, and each group written in one pipeline (MultiWriter), or key by key (write_one)
  // where the meta protocol cannot go.
  auto write_keys(detail::WriteKind kind, std::span<const std::string_view> keys,
                  std::span<const std::string_view> values, Expiry expiry, std::uint32_t flags)
      -> MultiWriteResult;

  // remove() of a sent key, in the call already started.
  auto remove_sent(std::string_view key) -> Status;
  // get_or_load under a lease (hotkeys/detail/lease_load.hpp): nothing when the call goes the
  // plain way (no lease asked, a migration window, a fenced member, a server without meta).
  template <class Loader>
  auto load_leased(std::string_view key, Loader& loader, std::optional<Expiry> expiry,
                   std::uint32_t flags, const std::optional<LoadOptions>& load)
      -> std::optional<detail::LeaseLoad::Loaded>;

  // One key of a batch written alone, as the single-key call would.
  auto write_one(detail::WriteKind kind, std::string_view key, std::string_view value,
                 Expiry expiry, std::uint32_t flags) -> Status;

  // The libmemcached call of one batch write.
  static auto write_on(memcached_st* memc, detail::WriteKind kind, std::string_view key,
                       std::string_view value, std::time_t exptime, std::uint32_t flags)
      -> memcached_return_t;

  // The migration rule of a batch write's kind (as its single-key call's).
  static auto write_rule(detail::WriteKind kind) noexcept -> detail::WriteRule;

  // The multi-get of the placement: every key to its own server (or its
  // failover), one fan-out.
  template <class OnHit, class OnFailure>
  void visit_placed(std::span<const std::string_view> keys, OnHit& on_hit, OnFailure& on_failure);

  // A multi-get that threw: close the connections that may hold unread
  // replies or shortened waits, and give this call's probe leases back.
  void abandon(bool polled) noexcept;

  // Reads `key` on `server`'s handle into `item` (left empty for a miss).
  auto fetch_one(std::size_t server, std::string_view key, std::optional<Item>& item)
      -> memcached_return_t;

  // Copies one fetched result into `item`.
  static void fill(std::optional<Item>& item, const memcached_result_st& result);

  auto store(Store kind, std::string_view key, std::string_view value, Expiry expiry,
             std::uint32_t flags) -> Status;

  auto store_once(Store kind, std::string_view name, std::string_view key, std::string_view value,
                  Expiry expiry, std::uint32_t flags) -> Status;

  auto arithmetic(std::string_view key, std::uint32_t delta, bool up) -> Result<std::uint64_t>;

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
  std::shared_ptr<Fleet<L>> fleet_;                  // shared by the family
  std::shared_ptr<detail::CallTracker::Seat> seat_;  // this client's mark in fleet_->calls()
  std::shared_ptr<const Snapshot> snapshot_;         // the one this client's calls run on
  const L* locator_ = nullptr;                       // snapshot_->locator
  std::uint64_t generation_ = 0;                     // snapshot_->generation
  bool redirected_ = false;                          // the current call goes to a failover server
  bool unfenced_ = false;    // the member's replay of kept keys (FleetOf::remove_unfenced) runs
  detail::ClientCore core_;  // connections, health rules, finish
  detail::MetaPool meta_{options_.max_value_size};  // meta connections (migration, batches)
  detail::BatchPlan plan_;                          // the routing of the current multi-get
  detail::PolledMultiGet polled_;
  detail::PerServerMultiGet per_server_;
  detail::MigratedMultiGet migrated_;                    // the second fan-out of a migration window
  std::shared_ptr<detail::HotKeyWatch> hot_watch_;       // shared by the family, or none
  std::shared_ptr<detail::HotKeyWatch::Seat> hot_seat_;  // this client's count in it
  std::shared_ptr<detail::NearCache> near_;              // shared by the family, or none
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#include "memshard/client/detail/sharded_client_internals.hpp"
#include "memshard/client/detail/sharded_client_operations.hpp"
// The compiled mode: the clients memshard::compiled holds are extern there.
#if defined(MEMSHARD_COMPILED_LIB)
#include "memshard/client/detail/compiled_clients.hpp"
#endif

#endif  // MEMSHARD_SHARDED_CLIENT_HPP_
