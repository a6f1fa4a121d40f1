// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_SHARDED_CLIENT_HPP_
#define MEMSHARD_SHARDED_CLIENT_HPP_

// sharded_client.hpp: ShardedClient, which sends every operation to the
// server its Locator picks, through one libmemcached handle per server (and,
// for multi-gets, one handle holding them all: detail/fan_handle.hpp), and
// owns the failure policy (ejection, probing, fail-fast or failover).

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/client_options.hpp"
#include "memshard/detail/clock.hpp"
#include "memshard/detail/fan_handle.hpp"
#include "memshard/detail/key_table.hpp"
#include "memshard/detail/memcached_handle.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/key.hpp"
#include "memshard/locator.hpp"
#include "memshard/profiles.hpp"
#include "memshard/result.hpp"
#include "memshard/server.hpp"

namespace memshard {

/// ServerStats: one server's counters, as ShardedClient::stats() reads them.
/// Counters are shared by a client and all its clones.
struct ServerStats {
  Server server;
  std::uint64_t operations = 0;  ///< requests sent to the server
  std::uint64_t hits = 0;        ///< keys found by get / get_multi
  std::uint64_t misses = 0;      ///< keys not found by get / get_multi
  std::uint64_t errors = 0;      ///< failed requests (timeouts, connection and server errors)
  std::uint64_t ejections = 0;   ///< times the server was ejected
  /// Requests for its keys refused without reaching the wire while it was
  /// ejected (FailurePolicy::kFailFast).
  std::uint64_t refused = 0;
  /// Requests for its keys sent to another server while it was ejected
  /// (FailurePolicy::kFailover).
  std::uint64_t redirected = 0;
  std::uint32_t consecutive_failures = 0;
  bool ejected = false;  ///< ejected now (a probe may be due)
};

/// MultiGetResult: get_multi's answer, one entry per requested key, in order.
struct MultiGetResult {
  /// The item for each key found; empty for a miss or a failure.
  std::vector<std::optional<Item>> items;
  /// ok for a hit or a miss; otherwise why the key could not be read.
  std::vector<Status> statuses;

  /// hits: how many keys were found.
  [[nodiscard]] auto hits() const noexcept -> std::size_t {
    return static_cast<std::size_t>(std::count_if(
        items.begin(), items.end(), [](const auto& item) { return item.has_value(); }));
  }
  /// failures: how many keys could not be read.
  [[nodiscard]] auto failures() const noexcept -> std::size_t {
    return static_cast<std::size_t>(std::count_if(
        statuses.begin(), statuses.end(), [](const Status& status) { return !status.ok(); }));
  }
};

namespace detail {

/// ServerState: health and counters of one server, shared by a client and its
/// clones (all atomics: clones run on other threads).
struct ServerState {
  std::atomic<std::uint64_t> operations{0};
  std::atomic<std::uint64_t> hits{0};
  std::atomic<std::uint64_t> misses{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> ejections{0};
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> redirected{0};
  std::atomic<std::uint32_t> consecutive_failures{0};
  /// steady_clock time (ns since its epoch) until which the server is ejected;
  /// 0 when healthy.
  std::atomic<std::int64_t> ejected_until{0};
  /// While one request probes an ejected server: the steady_clock time (ns)
  /// at which its lease ends; 0 when none. A lease that was never released
  /// (the prober's thread died in an exception) simply runs out.
  std::atomic<std::int64_t> probe_until{0};
};

/// StateRegistry: one ServerState per endpoint, so that a reconfiguration
/// keeps the health and counters of the servers that stay.
class StateRegistry {
 public:
  auto get(const Server& server) -> std::shared_ptr<ServerState> {
    const std::lock_guard<std::mutex> lock(mutex_);
    // Forget servers no client uses any more (fleets whose addresses churn).
    std::erase_if(states_, [](const auto& entry) { return entry.second.expired(); });
    auto& slot = states_[server.endpoint()];
    std::shared_ptr<ServerState> state = slot.lock();
    if (!state) {
      state = std::make_shared<ServerState>();
      slot = state;
    }
    return state;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<ServerState>> states_;
};

/// keep_fetch_code: call before memcached_fetch_result. When a reply breaks
/// off (an ERROR or SERVER_ERROR line, a malformed value) before the fetch has
/// returned any result since its last end, libmemcached 1.1 reports
/// MEMCACHED_NOTFOUND, as if every key were a miss; it keeps the real code when
/// the result's count of returned values is not 0, and the count means nothing
/// else to the fetch.
inline void keep_fetch_code(memcached_result_st& result) noexcept {
  if (result.count == 0) {
    result.count = 1;
  }
}

/// to_errc: libmemcached's return code as an Errc.
[[nodiscard]] inline auto to_errc(memcached_return_t rc) noexcept -> Errc {
  switch (rc) {
    case MEMCACHED_SUCCESS:
    case MEMCACHED_STORED:
    case MEMCACHED_DELETED:
    case MEMCACHED_END:
    case MEMCACHED_BUFFERED:
      return Errc::kOk;
    case MEMCACHED_NOTFOUND:
      return Errc::kNotFound;
    case MEMCACHED_NOTSTORED:
      return Errc::kNotStored;
    case MEMCACHED_DATA_EXISTS:
      return Errc::kExists;
    case MEMCACHED_E2BIG:
      return Errc::kValueTooLarge;
    case MEMCACHED_TIMEOUT:
      return Errc::kTimeout;
    case MEMCACHED_CONNECTION_FAILURE:
    case MEMCACHED_CONNECTION_BIND_FAILURE:
    case MEMCACHED_CONNECTION_SOCKET_CREATE_FAILURE:
    case MEMCACHED_HOST_LOOKUP_FAILURE:
    case MEMCACHED_READ_FAILURE:
    case MEMCACHED_WRITE_FAILURE:
    case MEMCACHED_ERRNO:
    case MEMCACHED_PARTIAL_READ:
    case MEMCACHED_SERVER_MARKED_DEAD:
    case MEMCACHED_SERVER_TEMPORARILY_DISABLED:
    case MEMCACHED_NO_SERVERS:
      return Errc::kConnectionFailure;
    case MEMCACHED_CLIENT_ERROR:
    case MEMCACHED_BAD_KEY_PROVIDED:
    case MEMCACHED_KEY_TOO_BIG:
    case MEMCACHED_INVALID_ARGUMENTS:
      return Errc::kInvalidArgument;
    case MEMCACHED_SERVER_ERROR:
    case MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE:
    case MEMCACHED_MEMORY_ALLOCATION_FAILURE:
      return Errc::kServerError;
    case MEMCACHED_UNKNOWN_READ_FAILURE:
      // A reply libmemcached could not interpret, such as a binary-protocol
      // error status it does not know; socket failures have their own codes.
    default:
      return Errc::kProtocolError;
  }
}

}  // namespace detail

/// ShardedClient: a memcached client for a fleet, placing keys with a Locator.
///
/// Every operation checks its key (check_key) and value size before anything
/// reaches the wire, asks the locator for the key's server, and runs on that
/// server's own libmemcached handle (multi-gets: see MultiGetMode). Outcomes
/// are values (Status, Result): a
/// miss is not an error, and a failure names the server and keeps libmemcached's
/// return code. Configuration mistakes throw ConfigError at construction.
///
/// Failure policy: after `failure_limit` consecutive timeouts or connection
/// failures a server is ejected for `retry_interval`; then one request probes
/// it, which either restores it or ejects it again. While a server is ejected,
/// its keys fail at once (FailurePolicy::kFailFast) or go to the next live
/// server of the placement (kFailover, for a FailoverLocator); keys of healthy
/// servers never move. No call blocks longer than the connect timeout plus the
/// I/O timeout, plus scheduling noise.
///
/// Threads: one ShardedClient is used by one thread at a time; clone() makes
/// another for another thread, sharing the immutable locator and the servers'
/// health and counters. Move-only.
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
  using LocatorFactory = std::function<std::shared_ptr<const L>(std::span<const Server>)>;

  /// Builds the locator with `factory`; reconfigure(servers) uses it again.
  ShardedClient(std::vector<Server> servers, LocatorFactory factory, ClientOptions options = {})
      : options_(options),
        factory_(std::move(factory)),
        registry_(std::make_shared<detail::StateRegistry>()) {
    validate_options(options_);
    if (!factory_) {
      detail::throw_config_error("locator factory is empty", "ShardedClient");
    }
    check_policy();
    validate_servers(servers);
    install(std::move(servers), factory_);
  }

  /// Uses `locator`, which must have been built for `servers` (in the same
  /// order). reconfigure() then needs the new locator too.
  ShardedClient(std::vector<Server> servers, std::shared_ptr<const L> locator,
                ClientOptions options = {})
      : options_(options), registry_(std::make_shared<detail::StateRegistry>()) {
    validate_options(options_);
    check_policy();
    validate_servers(servers);
    if (!locator) {
      detail::throw_config_error("locator is null", "ShardedClient");
    }
    install(std::move(servers), [&locator](std::span<const Server>) { return locator; });
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

  /// clone: a client for another thread: the same servers, options, locator
  /// and shared health, with its own connections (opened on first use).
  [[nodiscard]] auto clone() const -> ShardedClient { return ShardedClient(*this, CloneTag{}); }

  // ---- single-key operations ------------------------------------------------

  /// get: the item, an empty optional for a miss, or the failure.
  auto get(std::string_view key) -> Result<std::optional<Item>> {
    if (auto refused = check(key)) {
      return Result<std::optional<Item>>(std::move(*refused));
    }
    Route route = this->route(key);
    if (!route.status.ok()) {
      return Result<std::optional<Item>>(std::move(route.status));
    }
    memcached_st* memc = handle(route.server);
    const char* keys[] = {key.data()};
    const std::size_t lengths[] = {key.size()};
    memcached_return_t rc = memcached_mget(memc, keys, lengths, 1);
    std::optional<Item> item;
    if (memcached_success(rc)) {
      rc = fetch_all(route.server, [&item](std::string_view, const memcached_result_st& found) {
        fill(item, found);
      });
    }
    Status status = finish(route, rc, "get");
    if (!status.ok()) {
      return Result<std::optional<Item>>(std::move(status));
    }
    auto& state = *states_[route.server];
    (item ? state.hits : state.misses).fetch_add(1, std::memory_order_relaxed);
    return Result<std::optional<Item>>(std::move(item), std::move(status));
  }

  /// set: stores the value whatever is there.
  auto set(std::string_view key, std::string_view value, Expiry expiry = {},
           std::uint32_t flags = 0) -> Status {
    return store(Store::kSet, key, value, expiry, flags);
  }
  /// add: stores only when the key is absent, else Errc::kNotStored.
  auto add(std::string_view key, std::string_view value, Expiry expiry = {},
           std::uint32_t flags = 0) -> Status {
    return store(Store::kAdd, key, value, expiry, flags);
  }
  /// replace: stores only when the key exists, else Errc::kNotStored.
  auto replace(std::string_view key, std::string_view value, Expiry expiry = {},
               std::uint32_t flags = 0) -> Status {
    return store(Store::kReplace, key, value, expiry, flags);
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
  auto cas(std::string_view key, std::string_view value, std::uint64_t cas, Expiry expiry = {},
           std::uint32_t flags = 0) -> Status {
    if (auto refused = check(key, value)) {
      return std::move(*refused);
    }
    Route route = this->route(key);
    if (!route.status.ok()) {
      return std::move(route.status);
    }
    const memcached_return_t rc =
        memcached_cas(handle(route.server), key.data(), key.size(), value.data(), value.size(),
                      expiry.wire_value(), flags, cas);
    return finish(route, rc, "cas");
  }

  /// remove: deletes the key; Errc::kNotFound when it was not there.
  auto remove(std::string_view key) -> Status {
    if (auto refused = check(key)) {
      return std::move(*refused);
    }
    Route route = this->route(key);
    if (!route.status.ok()) {
      return std::move(route.status);
    }
    const memcached_return_t rc = memcached_delete(handle(route.server), key.data(), key.size(), 0);
    return finish(route, rc, "delete");
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

  /// touch: sets a new expiry; Errc::kNotFound for a missing key.
  auto touch(std::string_view key, Expiry expiry) -> Status {
    if (auto refused = check(key)) {
      return std::move(*refused);
    }
    Route route = this->route(key);
    if (!route.status.ok()) {
      return std::move(route.status);
    }
    const memcached_return_t rc =
        memcached_touch(handle(route.server), key.data(), key.size(), expiry.wire_value());
    return finish(route, rc, "touch");
  }

  // ---- multi-get ------------------------------------------------------------

  /// get_multi: reads many keys at once. Keys are grouped by server; every
  /// server is sent its request before any answer is read, so the call takes
  /// about as long as the slowest server, not the sum. A failing server fails
  /// only its own keys; the whole call ends within connect_timeout +
  /// io_timeout (plus scheduling), however many servers hang. A key listed
  /// twice is read twice. ClientOptions::multi_get chooses how the replies
  /// are read (MultiGetMode).
  auto get_multi(std::span<const std::string_view> keys) -> MultiGetResult {
    MultiGetResult out;
    out.items.resize(keys.size());
    out.statuses.resize(keys.size());
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

  /// visit_multi: get_multi without copies. Calls `on_hit(index, item)` for
  /// every key found, with `item` (an ItemView) valid only during the call,
  /// and `on_failure(index, status)` for every key that could not be read;
  /// misses get no call. `index` is the key's position in `keys`. A server's
  /// hits may be reported before its failure is known, so a key may get
  /// on_hit and then on_failure.
  template <class OnHit, class OnFailure>
  void visit_multi(std::span<const std::string_view> keys, OnHit&& on_hit, OnFailure&& on_failure) {
    const std::size_t n = keys.size();
    const std::size_t count = servers_.size();
    Batch& batch = batch_;
    batch.routes.assign(count, Route{});
    batch.routed.assign(count, 0);
    batch.server_of.assign(n, kNoServer);
    batch.counts.assign(count, 0);
    batch.used.clear();
    // Every valid key's own server, all at once where the locator can.
    batch.valid_keys.clear();
    batch.valid_index.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (auto refused = check(keys[i])) {
        on_failure(i, *refused);
        continue;
      }
      batch.valid_keys.push_back(keys[i]);
      batch.valid_index.push_back(i);
    }
    batch.primaries.resize(batch.valid_keys.size());
    if constexpr (BatchLocator<L>) {
      locator_->locate_many(batch.valid_keys, batch.primaries);
    } else {
      for (std::size_t v = 0; v < batch.valid_keys.size(); ++v) {
        batch.primaries[v] = locator_->locate(batch.valid_keys[v]);
      }
    }
    for (std::size_t v = 0; v < batch.valid_keys.size(); ++v) {
      const std::size_t i = batch.valid_index[v];
      Route route = route_for_batch(keys[i], batch.primaries[v], batch.routes, batch.routed);
      if (!route.status.ok()) {
        on_failure(i, route.status);
        continue;
      }
      batch.server_of[i] = route.server;
      if (batch.counts[route.server]++ == 0) {
        batch.used.push_back(route.server);
      }
    }
    if (batch.used.empty()) {
      return;
    }
    // Send every server its request, then read the answers, all within one
    // deadline: hung servers cost one timeout in all, not one each.
    const std::int64_t deadline =
        detail::steady_now_ns() + to_ns(options_.connect_timeout) + to_ns(options_.io_timeout);
    batch.done.assign(count, 0);
    const bool polled =
        options_.multi_get == MultiGetMode::kPolled && batch.used.size() <= kMaxPolledServers;
    try {
      if (polled) {
        multi_polled(keys, deadline, on_hit, on_failure);
      } else {
        multi_per_server(keys, deadline, on_hit, on_failure);
      }
    } catch (...) {
      // A callback or an allocation threw: drop the connections that may hold
      // unread replies, and give up this batch's probes at once.
      if (polled) {
        fan_.reset();
      }
      for (std::size_t s = 0; s < count; ++s) {
        if (batch.routed[s] != 0 && batch.done[s] == 0) {
          if (!polled) {
            handles_[s].reset();
          }
          if (batch.routes[s].probe) {
            states_[s]->probe_until.store(0, std::memory_order_release);
          }
        }
      }
      throw;
    }
  }

  /// get_multi for a list of keys: `client.get_multi({"a", "b"})`.
  auto get_multi(std::initializer_list<std::string_view> keys) -> MultiGetResult {
    return get_multi(std::span<const std::string_view>(keys.begin(), keys.size()));
  }

  // ---- placement and observability -----------------------------------------

  /// server_index_for: the index of the key's server while every server is
  /// healthy (the placement itself).
  [[nodiscard]] auto server_index_for(std::string_view key) const noexcept -> std::size_t {
    return locator_->locate(key);
  }
  /// server_for: the key's server while every server is healthy.
  [[nodiscard]] auto server_for(std::string_view key) const noexcept -> const Server& {
    return servers_[locator_->locate(key)];
  }
  /// servers: the current server list.
  [[nodiscard]] auto servers() const noexcept -> const std::vector<Server>& { return servers_; }
  /// locator: the current locator.
  [[nodiscard]] auto locator() const noexcept -> const std::shared_ptr<const L>& {
    return locator_;
  }
  /// options: the options in force.
  [[nodiscard]] auto options() const noexcept -> const ClientOptions& { return options_; }

  /// stats: every server's counters and state, in server order.
  [[nodiscard]] auto stats() const -> std::vector<ServerStats> {
    std::vector<ServerStats> out;
    out.reserve(servers_.size());
    for (std::size_t s = 0; s < servers_.size(); ++s) {
      const detail::ServerState& state = *states_[s];
      ServerStats entry;
      entry.server = servers_[s];
      entry.operations = state.operations.load(std::memory_order_relaxed);
      entry.hits = state.hits.load(std::memory_order_relaxed);
      entry.misses = state.misses.load(std::memory_order_relaxed);
      entry.errors = state.errors.load(std::memory_order_relaxed);
      entry.ejections = state.ejections.load(std::memory_order_relaxed);
      entry.refused = state.refused.load(std::memory_order_relaxed);
      entry.redirected = state.redirected.load(std::memory_order_relaxed);
      entry.consecutive_failures = state.consecutive_failures.load(std::memory_order_relaxed);
      entry.ejected = state.ejected_until.load(std::memory_order_relaxed) != 0;
      out.push_back(std::move(entry));
    }
    return out;
  }

  // ---- membership -----------------------------------------------------------

  /// reconfigure: moves to a new server list, building its locator with the
  /// factory. Servers that stay keep their connections, health and counters.
  /// Throws ConfigError (no factory, invalid list) and leaves the client as it
  /// was.
  void reconfigure(std::vector<Server> servers) {
    if (!factory_) {
      detail::throw_config_error("reconfigure needs a locator factory",
                                 "construct the client with one, or pass the new locator");
    }
    validate_servers(servers);
    install(std::move(servers), factory_);
  }

  /// reconfigure: moves to `servers` with a locator built for them.
  void reconfigure(std::vector<Server> servers, std::shared_ptr<const L> locator) {
    validate_servers(servers);
    if (!locator) {
      detail::throw_config_error("locator is null", "reconfigure");
    }
    install(std::move(servers), [&locator](std::span<const Server>) { return locator; });
  }

 private:
  struct CloneTag {};

  enum class Store : std::uint8_t { kSet, kAdd, kReplace, kAppend, kPrepend };

  struct Route {
    std::size_t server = 0;
    bool probe = false;
    Status status;
  };

  ShardedClient(const ShardedClient& other, CloneTag)
      : options_(other.options_),
        factory_(other.factory_),
        registry_(other.registry_),
        servers_(other.servers_),
        locator_(other.locator_),
        states_(other.states_),
        handles_(other.servers_.size()),
        avoid_(other.servers_.size(), 0) {}

  void check_policy() const {
    if constexpr (!FailoverLocator<L>) {
      if (options_.policy == FailurePolicy::kFailover) {
        detail::throw_config_error("failover needs a locator with locate_avoiding()",
                                   "FailurePolicy::kFailover");
      }
    }
  }

  // Builds everything that can throw first, then commits with noexcept moves.
  template <class Factory>
  void install(std::vector<Server> servers, const Factory& factory) {
    std::shared_ptr<const L> locator = factory(std::span<const Server>(servers));
    if (!locator || locator->size() != servers.size()) {
      detail::throw_config_error("locator does not match the server list",
                                 std::to_string(servers.size()) + " servers");
    }
    std::vector<std::shared_ptr<detail::ServerState>> states;
    states.reserve(servers.size());
    std::vector<detail::MemcachedHandle> handles(servers.size());
    for (std::size_t s = 0; s < servers.size(); ++s) {
      states.push_back(registry_->get(servers[s]));
      for (std::size_t old = 0; old < servers_.size(); ++old) {
        if (servers_[old].host == servers[s].host && servers_[old].port == servers[s].port &&
            handles_[old]) {
          handles[s] = std::move(handles_[old]);
          break;
        }
      }
    }
    servers_ = std::move(servers);
    locator_ = std::move(locator);
    states_ = std::move(states);
    handles_ = std::move(handles);
    avoid_.assign(servers_.size(), 0);
    fan_.reset();  // it holds the old list
  }

  // Key rules and value size, checked before anything reaches the wire.
  [[nodiscard]] auto check(std::string_view key, std::string_view value = {}) const
      -> std::optional<Status> {
    if (value.size() <= options_.max_value_size && is_valid_key(key)) {
      return std::nullopt;  // the common case, in one cheap pass
    }
    if (const auto problem = check_key(key)) {
      return Status(Errc::kInvalidKey, MEMCACHED_BAD_KEY_PROVIDED, Status::kNoServer,
                    problem->message());
    }
    if (value.size() > options_.max_value_size) {
      return Status(Errc::kValueTooLarge, MEMCACHED_E2BIG, Status::kNoServer,
                    "value is " + std::to_string(value.size()) + " bytes, max_value_size is " +
                        std::to_string(options_.max_value_size));
    }
    return std::nullopt;
  }

  [[nodiscard]] auto is_ejected(std::size_t server) const noexcept -> bool {
    return states_[server]->ejected_until.load(std::memory_order_relaxed) != 0;
  }

  // Whether this request may probe the ejected `server`: its retry interval
  // has passed and no other request holds a live probe lease on it.
  [[nodiscard]] auto try_probe(std::size_t server) noexcept -> bool {
    detail::ServerState& state = *states_[server];
    const std::int64_t until = state.ejected_until.load(std::memory_order_acquire);
    if (until == 0) {
      return false;
    }
    const std::int64_t now = detail::steady_now_ns();
    if (now < until) {
      return false;
    }
    std::int64_t lease = state.probe_until.load(std::memory_order_acquire);
    if (lease != 0 && now < lease) {
      return false;
    }
    const std::int64_t new_lease =
        now + std::chrono::duration_cast<std::chrono::nanoseconds>(
                  options_.connect_timeout + options_.io_timeout + options_.retry_interval)
                  .count();
    return state.probe_until.compare_exchange_strong(lease, new_lease, std::memory_order_acq_rel);
  }

  [[nodiscard]] auto ejected_status(std::size_t server) const -> Status {
    return Status(Errc::kServerEjected, MEMCACHED_SUCCESS, server,
                  servers_[server].endpoint() + " is ejected after " +
                      std::to_string(options_.failure_limit) + " consecutive failures");
  }

  // Where a key goes now: its own server, a probe of it, its failover server,
  // or nowhere.
  auto route(std::string_view key) -> Route { return route_from(locator_->locate(key), key); }

  auto route_from(std::size_t primary, std::string_view key) -> Route {
    if (!is_ejected(primary)) {
      return Route{primary, false, Status()};
    }
    if (try_probe(primary)) {
      return Route{primary, true, Status()};
    }
    if constexpr (FailoverLocator<L>) {
      if (options_.policy == FailurePolicy::kFailover) {
        for (std::size_t s = 0; s < servers_.size(); ++s) {
          avoid_[s] = is_ejected(s) ? 1 : 0;
        }
        const std::size_t next = locator_->locate_avoiding(key, avoid_);
        if (!is_ejected(next)) {
          states_[primary]->redirected.fetch_add(1, std::memory_order_relaxed);
          return Route{next, false, Status()};
        }
      }
    }
    states_[primary]->refused.fetch_add(1, std::memory_order_relaxed);
    return Route{primary, false, ejected_status(primary)};
  }

  // route() for get_multi: a server probed in this call takes all its keys.
  auto route_for_batch(std::string_view key, std::size_t primary, std::vector<Route>& routes,
                       std::vector<std::uint8_t>& routed) -> Route {
    if (routed[primary] != 0 && routes[primary].probe) {
      return Route{primary, false, Status()};
    }
    Route route = this->route_from(primary, key);
    if (route.status.ok()) {
      if (routed[route.server] == 0) {
        routes[route.server] = Route{route.server, route.probe, Status()};
        routed[route.server] = 1;
      } else if (route.probe) {
        routes[route.server].probe = true;  // this batch's request is the probe
      }
    }
    return route;
  }

  static constexpr std::size_t kNoServer = static_cast<std::size_t>(-1);
  // libmemcached polls at most 100 sockets at once: a multi-get that reaches
  // more servers reads them one after another.
  static constexpr std::size_t kMaxPolledServers = 100;

  // Multi-get through the fan handle: one request to every server, replies
  // read as they arrive. A server's outcome is read from its connection
  // afterwards; after any failure the fan handle is dropped, so every
  // multi-get starts on connections without old errors or unread replies.
  template <class OnHit, class OnFailure>
  void multi_polled(std::span<const std::string_view> keys, std::int64_t deadline, OnHit& on_hit,
                    OnFailure& on_failure) {
    Batch& batch = batch_;
    const std::size_t count = servers_.size();
    batch.key_ptrs.clear();
    batch.key_lengths.clear();
    batch.fan_servers.clear();
    batch.positions.clear();
    batch.hits.assign(count, 0);
    batch.sent.assign(count, MEMCACHED_SUCCESS);
    // Each server's keys, chained in request order: memcached answers a
    // server's keys in that order, skipping misses.
    batch.cursor.assign(count, kNoServer);
    batch.tail.assign(count, kNoServer);
    batch.chain.clear();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::size_t server = batch.server_of[i];
      if (server == kNoServer) {
        continue;
      }
      auto route = static_cast<std::uint32_t>(server);
      const std::size_t position = batch.positions.size();
      if (batch.tail[server] == kNoServer) {
        batch.cursor[server] = position;
        route |= detail::FanRoutes::kFirst;
      } else {
        batch.chain[batch.tail[server]] = position;
      }
      batch.tail[server] = position;
      batch.chain.push_back(kNoServer);
      batch.key_ptrs.push_back(keys[i].data());
      batch.key_lengths.push_back(keys[i].size());
      batch.fan_servers.push_back(route);
      batch.positions.push_back(i);
    }
    const std::size_t m = batch.positions.size();
    batch.answered.assign(m, 0);
    if (fan_stale_) {
      fan_.reset();  // a server failed elsewhere: its connection here may be dead too
      fan_stale_ = false;
    }
    if (!fan_) {
      fan_ = detail::FanHandle(servers_, options_);
    }
    detail::FanRoutes& routes = fan_.routes();
    routes.keys = batch.key_ptrs.data();
    routes.lengths = batch.key_lengths.data();
    routes.servers = batch.fan_servers.data();
    routes.count = m;
    routes.next = 0;
    routes.deadline_ns = deadline;
    memcached_st* memc = fan_.native_handle();
    limit_wait(memc, deadline);
    routes.poll_ms = static_cast<std::uint64_t>(options_.io_timeout.count());
    const memcached_return_t sent =
        memcached_mget(memc, batch.key_ptrs.data(), batch.key_lengths.data(), m);
    routes.count = 0;
    bool broken = false;  // the fan handle must be dropped
    // The servers still owing a reply. A server sent its keys has one pending;
    // one without failed to connect or to write.
    batch.live.clear();
    batch.instances.resize(count);
    for (const std::size_t s : batch.used) {
      const memcached_instance_st* instance = fan_.instance(s);
      batch.instances[s] = instance;
      if (memcached_server_response_count(instance) != 0) {
        batch.live.push_back(s);
        continue;
      }
      // Its own error, else the request's (when nothing could be sent at
      // all, such as memory), else a write that failed.
      const memcached_return_t own = memcached_server_error_return(instance);
      const bool general =
          memcached_failed(sent) && sent != MEMCACHED_SOME_ERRORS && sent != MEMCACHED_FAILURE;
      batch.sent[s] = memcached_failed(own) ? own : general ? sent : MEMCACHED_WRITE_FAILURE;
      broken = true;
    }
    // A reply that breaks off (an error line, a malformed value) ends
    // libmemcached's fetch, and some such errors are not recorded on the
    // connection: they are pinned on the servers whose replies ended during
    // the fetch call that failed. To know which, the servers still owing a
    // reply are checked after every result while they are few.
    constexpr std::size_t kTrackedServers = 16;
    auto prune = [&] {
      std::erase_if(batch.live, [&](std::size_t s) {
        return memcached_server_response_count(batch.instances[s]) == 0;
      });
    };
    memcached_result_st* result = fan_.result();
    std::size_t last = kNoServer;  // the server of the previous reply
    bool tabled = false;
    // The request position a reply answers: a few keys on from the cursor of
    // the previous reply's server (libmemcached reads a server's buffered
    // replies in a row), then of the others; else by a table of all keys.
    auto answered_position = [&](std::string_view key) -> std::size_t {
      auto walk = [&](std::size_t server, std::size_t steps) -> std::size_t {
        std::size_t position = batch.cursor[server];
        for (; position != kNoServer && steps > 0; position = batch.chain[position], --steps) {
          if (batch.answered[position] == 0 && keys[batch.positions[position]] == key) {
            batch.cursor[server] = batch.chain[position];  // the keys passed were misses
            last = server;
            return position;
          }
        }
        return kNoServer;
      };
      if (last != kNoServer) {
        if (const std::size_t position = walk(last, 8); position != kNoServer) {
          return position;
        }
      }
      for (const std::size_t s : batch.used) {
        if (s != last && batch.cursor[s] != kNoServer) {
          if (const std::size_t position = walk(s, 4); position != kNoServer) {
            return position;
          }
        }
      }
      if (!tabled) {
        batch.table.reset(m);
        for (std::size_t position = 0; position < m; ++position) {
          batch.table.insert(keys[batch.positions[position]], static_cast<std::uint32_t>(position));
        }
        tabled = true;
      }
      const std::size_t position = batch.table.find(key, [&](std::size_t at) {
        return batch.answered[at] == 0 && keys[batch.positions[at]] == key;
      });
      return position == detail::KeyTable::kNone ? kNoServer : position;
    };
    batch.recheck.assign(count, 0);
    // Every wait ends by the deadline. Inside one fetch call libmemcached may
    // wait once per server that ends without a hit, so while several servers
    // owe replies each wait gets a share of what is left. libmemcached sends
    // the requests only once it has connected to every server, so connections
    // that hang can use the deadline up before a live server was even asked:
    // past the deadline, replies are still read while each comes within
    // kLateWait, for at most kGrace.
    constexpr std::uint64_t kLateWait = 10;      // ms
    constexpr std::int64_t kGrace = 50'000'000;  // ns
    const auto io_ms = static_cast<std::uint64_t>(options_.io_timeout.count());
    while (result != nullptr && !batch.live.empty()) {
      const std::uint64_t left = routes.left_ms();
      if (left == 0 && detail::coarse_now_ns() >= deadline + kGrace) {
        break;
      }
      routes.set_poll(left == 0 ? kLateWait
                                : std::clamp<std::uint64_t>(left / batch.live.size(), 1, io_ms));
      memcached_return_t rc = MEMCACHED_SUCCESS;
      detail::keep_fetch_code(*result);
      if (memcached_fetch_result(memc, result, &rc) == nullptr) {
        if (rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND && rc != MEMCACHED_SUCCESS) {
          // A reply broke off somewhere. libmemcached neither records every
          // such error on its connection nor says whose it was, and other
          // servers may have ended normally in the same call: every server
          // whose reply ended unrecorded is read again on its own.
          for (const std::size_t s : batch.live) {
            const memcached_instance_st* instance = batch.instances[s];
            if (memcached_server_response_count(instance) == 0 &&
                !memcached_failed(memcached_server_error_return(instance))) {
              batch.recheck[s] = 1;
            }
          }
        }
        // libmemcached also stops when a poll of several servers times out:
        // read on while replies are owed and time is left.
        prune();
        if (left == 0) {
          break;
        }
        continue;
      }
      if (batch.live.size() <= kTrackedServers) {
        prune();
      }
      const std::string_view key(memcached_result_key_value(result),
                                 memcached_result_key_length(result));
      const std::size_t at = answered_position(key);
      if (at == kNoServer) {
        continue;  // not asked for (a server's confusion): ignored
      }
      batch.answered[at] = 1;
      const std::size_t index = batch.positions[at];
      ++batch.hits[batch.server_of[index]];
      on_hit(index, ItemView{std::string_view(memcached_result_value(result),
                                              memcached_result_length(result)),
                             memcached_result_flags(result), memcached_result_cas(result)});
    }
    for (const std::size_t s : batch.used) {
      if (batch.recheck[s] != 0) {
        broken = true;
        continue;
      }
      memcached_return_t rc = batch.sent[s];
      std::string_view cause;
      if (memcached_success(rc)) {
        const memcached_instance_st* instance = batch.instances[s];
        const memcached_return_t own = memcached_server_error_return(instance);
        if (result == nullptr) {
          rc = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        } else if (detail::to_errc(own) != Errc::kOk) {
          rc = own;
        } else if (memcached_server_response_count(instance) != 0) {
          rc = MEMCACHED_TIMEOUT;
          cause = "no complete reply by the call's deadline";
        }
      }
      broken = broken || !memcached_success(rc);
      batch.done[s] = 1;
      const Status status = finish(batch.routes[s], rc, "get_multi", cause, false);
      if (status.ok()) {
        auto& state = *states_[s];
        state.hits.fetch_add(batch.hits[s], std::memory_order_relaxed);
        state.misses.fetch_add(batch.counts[s] - batch.hits[s], std::memory_order_relaxed);
      } else {
        for (std::size_t i = 0; i < keys.size(); ++i) {
          if (batch.server_of[i] == s) {
            on_failure(i, status);
          }
        }
      }
    }
    if (broken) {
      fan_.reset();
      fan_stale_ = false;
    }
    reread(keys, deadline, on_hit, on_failure);
  }

  // Reads the keys not yet answered of the servers marked in batch.recheck
  // again, each server on its own handle (its hits so far are counted here).
  template <class OnHit, class OnFailure>
  void reread(std::span<const std::string_view> keys, std::int64_t deadline, OnHit& on_hit,
              OnFailure& on_failure) {
    Batch& batch = batch_;
    const std::size_t count = servers_.size();
    bool any = false;
    for (const std::size_t s : batch.used) {
      if (batch.recheck[s] != 0) {
        states_[s]->hits.fetch_add(batch.hits[s], std::memory_order_relaxed);
        any = true;
      }
    }
    if (!any) {
      return;
    }
    // The answered keys and the other servers' keys leave the batch.
    for (std::size_t position = 0; position < batch.positions.size(); ++position) {
      const std::size_t i = batch.positions[position];
      const std::size_t s = batch.server_of[i];
      if (batch.recheck[s] == 0 || batch.answered[position] != 0) {
        batch.server_of[i] = kNoServer;
      }
    }
    std::fill(batch.counts.begin(), batch.counts.end(), 0);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (batch.server_of[i] != kNoServer) {
        ++batch.counts[batch.server_of[i]];
      }
    }
    for (std::size_t s = 0; s < count; ++s) {
      if (batch.recheck[s] != 0 && batch.counts[s] == 0) {
        // Every key answered: only its health is left to settle.
        batch.done[s] = 1;
        (void)finish(batch.routes[s], MEMCACHED_SUCCESS, "get_multi");
      }
    }
    multi_per_server(keys, deadline, on_hit, on_failure);
  }

  // Multi-get through the servers' own handles: every server is sent its keys,
  // then the servers are read one after another.
  template <class OnHit, class OnFailure>
  void multi_per_server(std::span<const std::string_view> keys, std::int64_t deadline,
                        OnHit& on_hit, OnFailure& on_failure) {
    Batch& batch = batch_;
    const std::size_t count = servers_.size();
    // The keys grouped by server with a counting sort that keeps request order
    // inside each group.
    batch.bounds.assign(count + 1, 0);
    for (std::size_t s = 0; s < count; ++s) {
      batch.bounds[s + 1] = batch.bounds[s] + batch.counts[s];
    }
    batch.order.resize(batch.bounds[count]);
    batch.answered.assign(batch.bounds[count], 0);
    batch.fill.assign(batch.bounds.begin(), batch.bounds.end() - 1);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (batch.server_of[i] != kNoServer) {
        batch.order[batch.fill[batch.server_of[i]]++] = i;
      }
    }
    batch.sent.assign(count, MEMCACHED_SUCCESS);
    for (std::size_t s = 0; s < count; ++s) {
      if (batch.bounds[s] == batch.bounds[s + 1]) {
        continue;
      }
      batch.key_ptrs.clear();
      batch.key_lengths.clear();
      for (std::size_t k = batch.bounds[s]; k < batch.bounds[s + 1]; ++k) {
        batch.key_ptrs.push_back(keys[batch.order[k]].data());
        batch.key_lengths.push_back(keys[batch.order[k]].size());
      }
      memcached_st* memc = handle(s);
      limit_wait(memc, deadline);
      batch.sent[s] = memcached_mget(memc, batch.key_ptrs.data(), batch.key_lengths.data(),
                                     batch.key_ptrs.size());
    }
    for (std::size_t s = 0; s < count; ++s) {
      const std::size_t first = batch.bounds[s];
      const std::size_t last = batch.bounds[s + 1];
      if (last == first) {
        continue;
      }
      memcached_return_t rc = batch.sent[s];
      std::uint64_t hits = 0;
      if (memcached_success(rc)) {
        limit_wait(handle(s), deadline);
        // memcached answers in request order, once per requested key (so also
        // once per duplicate), and skips misses: match by walking forward;
        // anything unexpected falls back to a scan for an unanswered key.
        std::size_t next = first;
        rc = fetch_all(s, [&](std::string_view key, const memcached_result_st& result) {
          std::size_t k = next;
          while (k < last && keys[batch.order[k]] != key) {
            ++k;
          }
          if (k == last) {
            for (k = first; k < last; ++k) {
              if (keys[batch.order[k]] == key && batch.answered[k] == 0) {
                break;
              }
            }
            if (k == last) {
              return;
            }
          } else {
            next = k + 1;
          }
          batch.answered[k] = 1;
          ++hits;
          on_hit(batch.order[k],
                 ItemView{std::string_view(memcached_result_value(&result),
                                           memcached_result_length(&result)),
                          memcached_result_flags(&result), memcached_result_cas(&result)});
        });
      }
      if (handles_[s]) {
        restore_wait(handles_[s].native_handle());
      }
      batch.done[s] = 1;
      const Status status = finish(batch.routes[s], rc, "get_multi");
      if (status.ok()) {
        auto& state = *states_[s];
        state.hits.fetch_add(hits, std::memory_order_relaxed);
        state.misses.fetch_add((last - first) - hits, std::memory_order_relaxed);
      } else {
        for (std::size_t k = first; k < last; ++k) {
          on_failure(batch.order[k], status);
        }
      }
    }
  }

  [[nodiscard]] static auto to_ns(std::chrono::milliseconds duration) noexcept -> std::int64_t {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
  }

  // Shortens a handle's waits so that they end by `deadline` (steady_clock
  // ns); at least 1 ms, so an answer that has already arrived is still read.
  void limit_wait(memcached_st* memc, std::int64_t deadline) const noexcept {
    const std::int64_t left_ms = (deadline - detail::steady_now_ns()) / 1'000'000;
    const auto wait = static_cast<std::uint64_t>(std::max<std::int64_t>(left_ms, 1));
    (void)memcached_behavior_set(
        memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT,
        std::min(wait, static_cast<std::uint64_t>(options_.io_timeout.count())));
    (void)memcached_behavior_set(
        memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
        std::min(wait, static_cast<std::uint64_t>(options_.connect_timeout.count())));
  }

  void restore_wait(memcached_st* memc) const noexcept {
    (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT,
                                 static_cast<std::uint64_t>(options_.io_timeout.count()));
    (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
                                 static_cast<std::uint64_t>(options_.connect_timeout.count()));
  }

  auto handle(std::size_t server) -> memcached_st* {
    if (!handles_[server]) {
      handles_[server] = detail::MemcachedHandle(servers_[server], options_);
    }
    return handles_[server].native_handle();
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

  // Hands every result of an mget to `sink(key, result)`; answers the final
  // code (MEMCACHED_SUCCESS when the reply ended normally).
  template <class Sink>
  auto fetch_all(std::size_t server, Sink&& sink) -> memcached_return_t {
    memcached_st* memc = handle(server);
    memcached_result_st* result = handles_[server].result();
    if (result == nullptr) {
      return MEMCACHED_MEMORY_ALLOCATION_FAILURE;
    }
    memcached_return_t rc = MEMCACHED_SUCCESS;
    while ((detail::keep_fetch_code(*result), memcached_fetch_result(memc, result, &rc)) !=
           nullptr) {
      sink(
          std::string_view(memcached_result_key_value(result), memcached_result_key_length(result)),
          *result);
    }
    if (rc == MEMCACHED_END || rc == MEMCACHED_NOTFOUND) {
      return MEMCACHED_SUCCESS;
    }
    return rc;
  }

  // Turns libmemcached's answer into a Status and updates the server's health.
  // `cause`, when given, explains the failure; `own_handle`: the request ran
  // on the server's own handle, whose errno then explains it.
  auto finish(const Route& route, memcached_return_t rc, std::string_view operation,
              std::string_view cause = {}, bool own_handle = true) -> Status {
    const std::size_t server = route.server;
    detail::ServerState& state = *states_[server];
    state.operations.fetch_add(1, std::memory_order_relaxed);
    const Errc code = detail::to_errc(rc);
    Status status;
    if (code != Errc::kOk) {
      std::string detail(operation);
      detail.append(" on ").append(servers_[server].endpoint()).append(": ");
      detail.append(memcached_strerror(nullptr, rc));
      const int error = cause.empty() && own_handle
                            ? memcached_last_error_errno(handles_[server].native_handle())
                            : 0;
      if (!cause.empty()) {
        detail.append(" (").append(cause).append(")");
      } else if (error != 0) {
        detail.append(" (").append(std::generic_category().message(error)).append(")");
      }
      status = Status(code, rc, server, std::move(detail));
    } else {
      status = Status(Errc::kOk, rc, server);
    }
    if (is_server_failure(code)) {
      state.errors.fetch_add(1, std::memory_order_relaxed);
      fan_stale_ = true;
      // A fresh handle next time: libmemcached's own dead-server clock must not
      // refuse the request that memshard decides to send.
      handles_[server].reset();
      const std::uint32_t failures =
          state.consecutive_failures.fetch_add(1, std::memory_order_relaxed) + 1;
      if (route.probe || failures >= options_.failure_limit) {
        const std::int64_t until = detail::steady_now_ns() + to_ns(options_.retry_interval);
        const std::int64_t before = state.ejected_until.exchange(until, std::memory_order_acq_rel);
        if (before == 0) {
          state.ejections.fetch_add(1, std::memory_order_relaxed);
        }
      }
    } else {
      if (code == Errc::kServerError || code == Errc::kProtocolError) {
        state.errors.fetch_add(1, std::memory_order_relaxed);
      }
      state.consecutive_failures.store(0, std::memory_order_relaxed);
      if (route.probe) {
        state.ejected_until.store(0, std::memory_order_release);
      }
    }
    if (route.probe) {
      state.probe_until.store(0, std::memory_order_release);
    }
    return status;
  }

  auto store(Store kind, std::string_view key, std::string_view value, Expiry expiry,
             std::uint32_t flags) -> Status {
    if (auto refused = check(key, value)) {
      return std::move(*refused);
    }
    Route route = this->route(key);
    if (!route.status.ok()) {
      return std::move(route.status);
    }
    memcached_st* memc = handle(route.server);
    const std::time_t exptime = expiry.wire_value();
    memcached_return_t rc = MEMCACHED_SUCCESS;
    std::string_view operation;
    switch (kind) {
      case Store::kSet:
        operation = "set";
        rc =
            memcached_set(memc, key.data(), key.size(), value.data(), value.size(), exptime, flags);
        break;
      case Store::kAdd:
        operation = "add";
        rc =
            memcached_add(memc, key.data(), key.size(), value.data(), value.size(), exptime, flags);
        // The binary protocol answers "exists" where the text protocol says "not stored".
        if (rc == MEMCACHED_DATA_EXISTS) {
          rc = MEMCACHED_NOTSTORED;
        }
        break;
      case Store::kReplace:
        operation = "replace";
        rc = memcached_replace(memc, key.data(), key.size(), value.data(), value.size(), exptime,
                               flags);
        break;
      case Store::kAppend:
        operation = "append";
        rc = memcached_append(memc, key.data(), key.size(), value.data(), value.size(), 0, 0);
        break;
      case Store::kPrepend:
        operation = "prepend";
        rc = memcached_prepend(memc, key.data(), key.size(), value.data(), value.size(), 0, 0);
        break;
    }
    if (kind != Store::kSet && kind != Store::kAdd && rc == MEMCACHED_NOTFOUND) {
      rc = MEMCACHED_NOTSTORED;  // binary protocol: the key to modify is missing
    }
    return finish(route, rc, operation);
  }

  auto arithmetic(std::string_view key, std::uint32_t delta, bool up) -> Result<std::uint64_t> {
    if (auto refused = check(key)) {
      return Result<std::uint64_t>(std::move(*refused));
    }
    Route route = this->route(key);
    if (!route.status.ok()) {
      return Result<std::uint64_t>(std::move(route.status));
    }
    std::uint64_t value = 0;
    memcached_st* memc = handle(route.server);
    memcached_return_t rc = up ? memcached_increment(memc, key.data(), key.size(), delta, &value)
                               : memcached_decrement(memc, key.data(), key.size(), delta, &value);
    if (rc == MEMCACHED_UNKNOWN_READ_FAILURE && options_.protocol == Protocol::kBinary) {
      // libmemcached reports the binary "non-numeric value" status this way.
      rc = MEMCACHED_CLIENT_ERROR;
    }
    Status status = finish(route, rc, up ? "incr" : "decr");
    if (!status.ok()) {
      return Result<std::uint64_t>(std::move(status));
    }
    return Result<std::uint64_t>(value, std::move(status));
  }

  ClientOptions options_;
  LocatorFactory factory_;
  std::shared_ptr<detail::StateRegistry> registry_;
  std::vector<Server> servers_;
  std::shared_ptr<const L> locator_;
  std::vector<std::shared_ptr<detail::ServerState>> states_;
  std::vector<detail::MemcachedHandle> handles_;
  std::vector<std::uint8_t> avoid_;  // scratch for failover routing
  detail::FanHandle fan_;            // multi-gets (MultiGetMode::kPolled)
  bool fan_stale_ = false;           // a server failed since fan_ was made
  // Scratch for get_multi, kept between calls to save allocations.
  struct Batch {
    std::vector<Route> routes;
    std::vector<std::uint8_t> routed;
    std::vector<std::size_t> server_of;
    std::vector<std::string_view> valid_keys;
    std::vector<std::size_t> valid_index;  // valid key -> index in keys
    std::vector<std::size_t> primaries;    // valid key -> its own server
    std::vector<std::size_t> counts;       // keys per server
    std::vector<std::size_t> used;         // the servers with keys, in first-key order
    std::vector<std::uint64_t> hits;       // found per server (polled)
    std::vector<std::uint32_t> fan_servers;
    std::vector<std::size_t> positions;                   // request position -> index in keys
    std::vector<const memcached_instance_st*> instances;  // the fan's, per server
    std::vector<std::size_t> live;                        // servers owing a reply (polled)
    std::vector<std::uint8_t> recheck;  // per server: read again on its own handle
    std::vector<std::size_t> cursor;    // per server: its first unanswered key
    std::vector<std::size_t> tail;
    std::vector<std::size_t> chain;  // per request position: the server's next
    detail::KeyTable table;
    std::vector<std::size_t> bounds;
    std::vector<std::size_t> fill;
    std::vector<std::size_t> order;
    std::vector<std::uint8_t> answered;
    std::vector<std::uint8_t> done;
    std::vector<memcached_return_t> sent;
    std::vector<const char*> key_ptrs;
    std::vector<std::size_t> key_lengths;
  };
  Batch batch_;
};

/// make_client: a client whose placement is profile `profile` (see
/// profiles.hpp); reconfigure(servers) rebuilds the same profile for the new
/// list. Throws ConfigError for an unknown profile or hash, an invalid list or
/// invalid options.
///
/// **Example**:
///   auto client = memshard::make_client("libmemcached-ketama-weighted",
///                                       memshard::parse_servers("10.0.0.1,10.0.0.2"));
[[nodiscard]] inline auto make_client(std::string_view profile, std::vector<Server> servers,
                                      ProfileOptions profile_options = {},
                                      ClientOptions options = {}) -> ShardedClient<AnyLocator> {
  return ShardedClient<AnyLocator>(
      std::move(servers),
      ShardedClient<AnyLocator>::LocatorFactory(
          [name = std::string(profile), profile_options](std::span<const Server> list) {
            return std::make_shared<const AnyLocator>(make_locator(name, list, profile_options));
          }),
      options);
}

}  // namespace memshard

#endif  // MEMSHARD_SHARDED_CLIENT_HPP_
