// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CLIENT_CLIENT_OPTIONS_HPP_
#define MEMSHARD_CLIENT_CLIENT_OPTIONS_HPP_

// client/client_options.hpp: ShardedClient's options (timeouts, protocol, failure
// policy, key prefix, default expiry) and Expiry, a memcached expiration
// time that cannot be misread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <ostream>
#include <string>

#include "memshard/detail/throw.hpp"
#include "memshard/hotkeys/hot_key_sketch.hpp"
#include "memshard/hotkeys/load_options.hpp"
#include "memshard/hotkeys/near_cache_options.hpp"
#include "memshard/observability/server_event.hpp"
#include "memshard/placement/key_prefix.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Protocol: memcached's wire protocol.
enum class Protocol : std::uint8_t { kText, kBinary };

/// FailurePolicy: what happens to the keys of an ejected server.
enum class FailurePolicy : std::uint8_t {
  /// Operations on its keys fail at once with Errc::kServerEjected; no key moves.
  kFailFast,
  /// Its keys go to the next live server of the placement (the next distinct
  /// server clockwise on a ring; for modulo, hash % live servers) until it
  /// returns. Keys of healthy servers never move.
  kFailover,
};

/// JournalOverflow: what happens to a server whose journal of missed writes
/// overflowed (ClientOptions::journal_capacity), so that some of its old
/// values can no longer be deleted one by one.
enum class JournalOverflow : std::uint8_t {
  /// It stays out (as if ejected) until max_item_ttl has passed since the
  /// last write it missed, when every value it could not clean has expired;
  /// with max_item_ttl 0, until ShardedClient::flush_server(). The default:
  /// nothing else on a shared server is touched.
  kHold,
  /// The first request that would use it flushes it (flush_all), then it
  /// serves: every client sharing the server loses its items there.
  kFlush,
};

/// MultiGetMode: how get_multi and visit_multi read a request's replies.
enum class MultiGetMode : std::uint8_t {
  /// One more connection per server, opened by the first multi-get, through
  /// which every server is sent its keys and the replies are read as they
  /// arrive, whichever server answers first. The fastest.
  kPolled,
  /// The servers' own connections, read one server after another: no extra
  /// connection, but the call waits for each server in turn while later
  /// replies are already there. For fleets near memcached's connection limit.
  kPerServer,
};

/// SaslCredentials: the SASL user name and password a client authenticates
/// every connection with (ClientOptions::sasl; binary protocol only). The
/// password never prints: operator<< shows the user name alone, and no
/// Status or stats() of the client holds either.
struct SaslCredentials {
  std::string username;
  std::string password;

  /// operator<<: `SaslCredentials{username: "<name>", password: <hidden>}`.
  friend auto operator<<(std::ostream& out, const SaslCredentials& credentials) -> std::ostream& {
    return out << "SaslCredentials{username: \"" << credentials.username
               << "\", password: <hidden>}";
  }
};

/// Expiry: when a stored item expires.
///
/// memcached reads an expiration up to 30 days as relative seconds and anything
/// larger as a Unix time, so "90 days from now" sent as seconds would mean 1970.
/// Expiry::after() turns long durations into absolute times, so both forms say
/// what they mean.
class Expiry {
 public:
  /// The default: never expires.
  constexpr Expiry() = default;

  /// never: the item stays until evicted.
  [[nodiscard]] static constexpr auto never() noexcept -> Expiry { return Expiry{}; }

  /// after: `duration` from now; must be positive and end by 2038-01-19
  /// (see at).
  [[nodiscard]] static auto after(std::chrono::seconds duration) -> Expiry {
    if (duration.count() <= 0) {
      detail::throw_config_error("expiry duration must be positive",
                                 std::to_string(duration.count()) + " s");
    }
    if (duration <= kRelativeLimit) {
      return Expiry(static_cast<std::time_t>(duration.count()));
    }
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    if (duration.count() > kLatest - now) {  // also keeps the sum from overflowing
      detail::throw_config_error("expiry is later than memcached can store (2038-01-19)",
                                 std::to_string(duration.count()) + " s from now");
    }
    return Expiry(static_cast<std::time_t>(now + duration.count()));
  }

  /// at: an absolute time; must be after 30 days past the Unix epoch and no
  /// later than memcached's last expiration time (2^31 - 1, 2038-01-19:
  /// memcached reads exptime as a signed 32-bit number).
  [[nodiscard]] static auto at(std::chrono::system_clock::time_point when) -> Expiry {
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(when.time_since_epoch()).count();
    if (seconds <= kRelativeLimit.count()) {
      detail::throw_config_error("expiry time is not a plausible date", std::to_string(seconds));
    }
    if (seconds > kLatest) {
      detail::throw_config_error("expiry is later than memcached can store (2038-01-19)",
                                 std::to_string(seconds));
    }
    return Expiry(static_cast<std::time_t>(seconds));
  }

  /// wire_value: the exptime field memcached receives.
  [[nodiscard]] constexpr auto wire_value() const noexcept -> std::time_t { return value_; }

 private:
  static constexpr std::chrono::seconds kRelativeLimit{60 * 60 * 24 * 30};
  static constexpr std::int64_t kLatest = 2'147'483'647;  // memcached's int32 exptime

  constexpr explicit Expiry(std::time_t value) noexcept : value_(value) {}

  std::time_t value_ = 0;
};

/// ClientOptions: how a ShardedClient talks to its servers.
struct ClientOptions {
  /// Time to establish a TCP connection.
  std::chrono::milliseconds connect_timeout{1000};
  /// Time to wait for a server to accept a request or answer it.
  std::chrono::milliseconds io_timeout{1000};
  /// The longest one call takes, whatever its servers do (silent, hung,
  /// trickling a reply byte by byte): past it the call fails with
  /// Errc::kTimeout. Zero, the default, means connect_timeout + io_timeout.
  std::chrono::milliseconds call_timeout{0};
  Protocol protocol = Protocol::kText;
  bool tcp_nodelay = true;
  bool tcp_keepalive = false;
  /// Consecutive timeouts or connection failures that eject a server.
  std::uint32_t failure_limit = 2;
  /// How long an ejected server is left alone before one request probes it.
  /// Each failed probe keeps it out 1.5 times longer (plus up to a fifth at
  /// random), up to retry_interval_max.
  std::chrono::milliseconds retry_interval{2000};
  /// The longest a server stays out between probes; 0: 30 * retry_interval.
  std::chrono::milliseconds retry_interval_max{0};
  /// Fail-open: at most this fraction of the servers (at least one) is
  /// ejected at a time; a server that fails beyond it stays in and its calls
  /// fail on their own, so that an outage of the client's own network does
  /// not eject every server, and failover cannot pile every key on a few
  /// survivors. 1 ejects without limit.
  double max_ejected_fraction = 0.5;
  /// With FailurePolicy::kFailover, the most requests that fail over, as a
  /// fraction of all requests of a client (a token bucket of 100 requests'
  /// burst): past it, keys of ejected servers fail fast, so that the
  /// survivors are not flooded. 1 fails over without limit.
  double failover_rate = 0.5;
  /// What happens to the keys of an ejected server.
  FailurePolicy failure_policy = FailurePolicy::kFailFast;
  /// Writes a server misses (failed, refused while it was ejected, or sent to
  /// a failover server) are remembered, up to this many keys per server, and
  /// deleted on it before it serves again, so that it never serves a value
  /// older than the last one written. 0 turns this off (libmemcached's and
  /// twemproxy's behaviour: a returning server serves what it had).
  std::size_t journal_capacity = 10'000;
  /// What happens to a server whose journal overflowed.
  JournalOverflow journal_overflow = JournalOverflow::kHold;
  /// The longest expiry the application gives its items (0: some never
  /// expire). With JournalOverflow::kHold a server whose journal overflowed
  /// is back this long after the last write it could not remember.
  std::chrono::seconds max_item_ttl{0};
  /// Writes sent to a failover server expire after at most this long, so
  /// that a copy there outlives its server's outage only briefly.
  std::chrono::seconds failover_ttl{60};
  /// Values above this size are refused before they reach the wire. Keep it at
  /// or below the servers' item size limit (memcached -I, 1 MiB by default,
  /// which includes the key and ~50 bytes of item header): a server that
  /// refuses a too-large value also drops the key's old value.
  std::size_t max_value_size = 1000 * 1000;
  /// How multi-gets read their replies (MultiGetMode): kPolled, through one
  /// more connection per server, reads whichever server answers first.
  MultiGetMode multi_get = MultiGetMode::kPolled;
  /// Told of every server event (ejections, probes, returns, ...) as it
  /// happens; empty: nobody is.
  ServerObserver on_server_event;
  /// SASL credentials for every connection (memcached -S), or none. Needs
  /// Protocol::kBinary; a server that refuses them answers Errc::kAuthFailure,
  /// which never ejects it.
  std::optional<SaslCredentials> sasl;
  /// Put in front of every key sent (a namespace shared by the application's
  /// keys); empty: none. The key rules apply to the key sent. KeyPrefix has
  /// the rules; ConfigError at construction for a space, a control character
  /// or 250 bytes or more.
  std::string key_prefix;
  /// Whether keys are placed by the bare key (kBareKey: libmemcached's and
  /// php-memcached's OPT_PREFIX_KEY) or by the prefixed key (kPrefixedKey:
  /// Dalli's and Cache::Memcached::Fast's namespaces).
  PrefixHashing prefix_hashing = PrefixHashing::kBareKey;
  /// The expiry of every store that is given none (set, add, replace, cas,
  /// the batch writes, get_or_load); 0, the default: never. Must not be
  /// negative, nor end after 2038-01-19 (see Expiry::after).
  std::chrono::seconds default_expiry{0};
  /// How get_or_load keeps a key's loader from running once per caller (a lease on the key's
  /// server: hotkeys/load_options.hpp), for every call given no LoadOptions of its own; the
  /// default takes no lease. ConfigError at construction for invalid ones.
  LoadOptions load_options;
  /// Find the keys that carry a large share of the family's operations (hotkeys/: a sketch
  /// per client over sampled operations, merged per window): ShardedClient::hot_keys(), the
  /// observer's kHotKey and kHotKeyCooled events. Empty, the default: nothing is counted.
  /// ConfigError at construction for options hot_key_options_error() refuses.
  std::optional<HotKeyOptions> hot_keys;
  /// Answer gets of the family's hot keys from an in-process copy, for at most `ttl` after a
  /// write made elsewhere (hotkeys/near_cache.hpp); needs hot_keys. Empty, the default: none.
  /// ConfigError at construction without hot_keys, or for options near_cache_options_error()
  /// refuses.
  std::optional<NearCacheOptions> near_cache;

  /// retry_cap: retry_interval_max, or 30 * retry_interval when it is 0.
  [[nodiscard]] auto retry_cap() const noexcept -> std::chrono::milliseconds {
    return retry_interval_max.count() > 0 ? retry_interval_max : retry_interval * 30;
  }

  /// expiry_or_default: `expiry`, or default_expiry when there is none.
  [[nodiscard]] auto expiry_or_default(const std::optional<Expiry>& expiry) const -> Expiry {
    if (expiry) {
      return *expiry;
    }
    return default_expiry.count() > 0 ? Expiry::after(default_expiry) : Expiry::never();
  }
  /// call_budget: call_timeout, or connect_timeout + io_timeout when it is 0.
  [[nodiscard]] auto call_budget() const noexcept -> std::chrono::milliseconds {
    return call_timeout.count() > 0 ? call_timeout : connect_timeout + io_timeout;
  }
};

/// validate_options: throws ConfigError for a timeout or interval that is not
/// positive (call_timeout, max_item_ttl: negative), a retry_interval_max
/// below retry_interval, a fraction outside (0, 1], a failover_ttl over 30
/// days, a zero failure limit, a zero max_value_size, a key prefix that
/// KeyPrefix refuses, a negative default_expiry or one past 2038-01-19, or
/// SASL credentials with the text protocol, an empty user name or a NUL byte, or
/// load_options that load_options_error() refuses, hot_keys that
/// hot_key_options_error() refuses, or a near_cache without hot_keys or that
/// near_cache_options_error() refuses.
inline void validate_options(const ClientOptions& options) {
  if (options.connect_timeout.count() <= 0) {
    detail::throw_config_error("connect_timeout must be positive",
                               std::to_string(options.connect_timeout.count()) + " ms");
  }
  if (options.io_timeout.count() <= 0) {
    detail::throw_config_error("io_timeout must be positive",
                               std::to_string(options.io_timeout.count()) + " ms");
  }
  if (options.call_timeout.count() < 0) {
    detail::throw_config_error("call_timeout must not be negative",
                               std::to_string(options.call_timeout.count()) + " ms");
  }
  if (options.failure_limit == 0) {
    detail::throw_config_error("failure_limit must be at least 1", "0");
  }
  if (options.retry_interval.count() <= 0) {
    detail::throw_config_error("retry_interval must be positive",
                               std::to_string(options.retry_interval.count()) + " ms");
  }
  if (options.retry_interval_max.count() < 0 ||
      (options.retry_interval_max.count() > 0 &&
       options.retry_interval_max < options.retry_interval)) {
    detail::throw_config_error("retry_interval_max must be 0 or at least retry_interval",
                               std::to_string(options.retry_interval_max.count()) + " ms");
  }
  // (written so that NaN fails too)
  if (!(options.max_ejected_fraction > 0 && options.max_ejected_fraction <= 1)) {
    detail::throw_config_error("max_ejected_fraction must be in (0, 1]",
                               std::to_string(options.max_ejected_fraction));
  }
  if (!(options.failover_rate > 0 && options.failover_rate <= 1)) {
    detail::throw_config_error("failover_rate must be in (0, 1]",
                               std::to_string(options.failover_rate));
  }
  if (options.max_item_ttl.count() < 0) {
    detail::throw_config_error("max_item_ttl must not be negative",
                               std::to_string(options.max_item_ttl.count()) + " s");
  }
  if (options.failover_ttl.count() <= 0 || options.failover_ttl > std::chrono::hours(24 * 30)) {
    detail::throw_config_error("failover_ttl must be positive and at most 30 days",
                               std::to_string(options.failover_ttl.count()) + " s");
  }
  if (options.max_value_size == 0) {
    detail::throw_config_error("max_value_size must be positive", "0");
  }
  KeyPrefix::validate(options.key_prefix);
  if (options.default_expiry.count() < 0) {
    detail::throw_config_error("default_expiry must not be negative",
                               std::to_string(options.default_expiry.count()) + " s");
  }
  if (options.default_expiry.count() > 0) {
    (void)Expiry::after(options.default_expiry);  // throws past 2038-01-19
  }
  if (auto wrong = load_options_error(options.load_options)) {
    detail::throw_config_error(*wrong, "load_options");
  }
  if (options.hot_keys) {
    if (auto wrong = hot_key_options_error(*options.hot_keys)) {
      detail::throw_config_error(*wrong, "hot_keys");
    }
  }
  if (options.near_cache) {
    if (!options.hot_keys) {
      detail::throw_config_error("near_cache keeps the hot keys: it needs hot_keys", "near_cache");
    }
    if (auto wrong = near_cache_options_error(*options.near_cache)) {
      detail::throw_config_error(*wrong, "near_cache");
    }
  }
  if (options.sasl) {
    // The messages never quote the credentials.
    if (options.protocol != Protocol::kBinary) {
      detail::throw_config_error("SASL authentication needs the binary protocol",
                                 "set protocol = Protocol::kBinary");
    }
    if (options.sasl->username.empty()) {
      detail::throw_config_error("SASL user name must not be empty", "sasl.username");
    }
    if (options.sasl->username.find('\0') != std::string::npos ||
        options.sasl->password.find('\0') != std::string::npos) {
      detail::throw_config_error("SASL user name and password must not hold a NUL byte", "sasl");
    }
  }
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CLIENT_CLIENT_OPTIONS_HPP_
