// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_OBSERVABILITY_PROMETHEUS_HPP_
#define MEMSHARD_OBSERVABILITY_PROMETHEUS_HPP_

// observability/prometheus.hpp: a client's statistics in the Prometheus text exposition
// format, version 0.0.4, for a /metrics endpoint. write_prometheus() writes
// ShardedClient::stats() (one sample per server in each family) and, given
// ShardedClient::migration_stats(), the running migration's counters;
// to_prometheus() answers the same text as a string. PrometheusOptions sets
// the metric name prefix and constant labels; kPrometheusContentType is the
// Content-Type header to serve the text with.
//
// Families, each written once (`# HELP`, `# TYPE`, then its samples), in this
// order, with the default prefix "memshard":
//   per server, labels server="host:port" (an IPv6 host in brackets, as
//   Server::endpoint() prints it), name="..." when Server::name is set, then
//   the constant labels:
//     memshard_requests_total         counter  ServerStats::operations
//     memshard_hits_total             counter  ServerStats::hits
//     memshard_misses_total           counter  ServerStats::misses
//     memshard_errors_total           counter  ServerStats::errors
//     memshard_ejections_total        counter  ServerStats::ejections
//     memshard_refused_total          counter  ServerStats::refused
//     memshard_redirected_total       counter  ServerStats::redirected
//     memshard_kept_in_total          counter  ServerStats::kept_in
//     memshard_cleaned_total          counter  ServerStats::cleaned
//     memshard_flushes_total          counter  ServerStats::flushes
//     memshard_server_ejected         gauge    ServerStats::ejected (0 or 1)
//     memshard_consecutive_failures   gauge    ServerStats::consecutive_failures
//     memshard_probe_failures         gauge    ServerStats::probe_failures
//     memshard_journal_keys           gauge    ServerStats::journaled
//     memshard_journal_lost           gauge    ServerStats::journal_lost
//   with MigrationStats (labels: the constant ones only):
//     memshard_migration_active       gauge    MigrationStats::active (0 or 1), always
//   and, only while a migration is active, in MigrationStats' order:
//     memshard_migration_<field>_total    counter  each MigrationStats counter
//                                                  (new_hits ... leases_busy)
//     memshard_migration_tainted_servers  gauge    MigrationStats::tainted_servers
//
//   with hot keys (hot_keys_to_prometheus(ShardedClient::hot_keys()); labels key="..." as
//   sent, then the constant labels; one sample per hot key):
//     memshard_hot_key_operations_per_second  gauge  HotKey::per_second (estimated)
//     memshard_hot_key_share                  gauge  HotKey::share (0 to 1)
//
// A family with no server (an empty span) is still written, as its HELP and
// TYPE lines alone: the text says which metrics exist, and a scrape of it is
// valid. Each migration's counters start from zero at begin_migration(); to
// Prometheus that is a counter reset, which rate() and increase() handle.

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/detail/throw.hpp"
#include "memshard/fleet/server_health.hpp"
#include "memshard/hotkeys/hot_key_sketch.hpp"
#include "memshard/migration/migration_options.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// kPrometheusContentType: the Content-Type of the text write_prometheus()
/// writes (the text exposition format, version 0.0.4).
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

/// PrometheusOptions: how write_prometheus() names and labels its metrics.
///
/// - `prefix` starts every metric name, followed by '_' ("memshard" gives
///   `memshard_requests_total`). It must be a metric name:
///   `[a-zA-Z_:][a-zA-Z0-9_:]*`.
/// - `labels` are constant labels added to every sample, in order, after the
///   per-server ones (for example {"pool", "sessions"}, to tell apart two
///   clients in one process). Each name must match `[a-zA-Z_][a-zA-Z0-9_]*`,
///   must not start with "__" (reserved by Prometheus), must not be "server"
///   or "name" (the per-server labels), and must not be given twice. Values
///   are any UTF-8 text; '\\', '"' and newlines are escaped as the format
///   requires.
///
/// write_prometheus() and to_prometheus() throw ConfigError for options that
/// break these rules, before writing anything; validate_prometheus_options()
/// checks them ahead (at start-up, say).
struct PrometheusOptions {
  std::string prefix = "memshard";
  std::vector<std::pair<std::string, std::string>> labels;
};

namespace detail {

/// is_prometheus_name: whether `text` is a label name, `[a-zA-Z_][a-zA-Z0-9_]*`,
/// or with `colons` a metric name, `[a-zA-Z_:][a-zA-Z0-9_:]*`.
[[nodiscard]] inline auto is_prometheus_name(std::string_view text, bool colons) noexcept -> bool {
  if (text.empty()) {
    return false;
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(letter || (colons && c == ':') || (i > 0 && digit))) {
      return false;
    }
  }
  return true;
}

/// append_prometheus_label_value: `text` as a quoted label value, with '\\',
/// '"' and a newline escaped as the exposition format requires.
inline void append_prometheus_label_value(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '"') {
      out.append("\\\"");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

/// append_prometheus_label: `name="value"`, preceded by a comma unless
/// `labels` is still empty.
inline void append_prometheus_label(std::string& labels, std::string_view name,
                                    std::string_view value) {
  if (!labels.empty()) {
    labels.push_back(',');
  }
  labels.append(name);
  labels.push_back('=');
  append_prometheus_label_value(labels, value);
}

/// PrometheusType: the TYPE of a family.
enum class PrometheusType : std::uint8_t { kCounter, kGauge };

/// PrometheusFamily: one family: its name after the prefix, its type and
/// help, and the field of `Stats` (ServerStats, MigrationStats) it reads.
template <class Stats>
struct PrometheusFamily {
  std::string_view name;
  PrometheusType type;
  std::string_view help;
  std::uint64_t (*read)(const Stats&) noexcept;
};

// The per-server families, in the order they are written.
inline constexpr PrometheusFamily<ServerStats> kPrometheusServerFamilies[] = {
    {.name = "requests_total",
     .type = PrometheusType::kCounter,
     .help = "Requests sent to the server.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.operations; }},
    {.name = "hits_total",
     .type = PrometheusType::kCounter,
     .help = "Keys found on the server by get and get_multi.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.hits; }},
    {.name = "misses_total",
     .type = PrometheusType::kCounter,
     .help = "Keys not found on the server by get and get_multi.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.misses; }},
    {.name = "errors_total",
     .type = PrometheusType::kCounter,
     .help = "Failed requests: timeouts, connection and server errors.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.errors; }},
    {.name = "ejections_total",
     .type = PrometheusType::kCounter,
     .help = "Times the server was ejected.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.ejections; }},
    {.name = "refused_total",
     .type = PrometheusType::kCounter,
     .help = "Requests for the server's keys refused while it was ejected (fail fast).",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.refused; }},
    {.name = "redirected_total",
     .type = PrometheusType::kCounter,
     .help = "Requests for the server's keys sent to another server while it was ejected.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.redirected; }},
    {.name = "kept_in_total",
     .type = PrometheusType::kCounter,
     .help = "Times the server reached the failure limit but stayed in: too many were out.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.kept_in; }},
    {.name = "cleaned_total",
     .type = PrometheusType::kCounter,
     .help = "Keys deleted on the server from its recovery journal.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.cleaned; }},
    {.name = "flushes_total",
     .type = PrometheusType::kCounter,
     .help = "Times the server was flushed after its recovery journal overflowed.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.flushes; }},
    {.name = "server_ejected",
     .type = PrometheusType::kGauge,
     .help = "1 while the server is ejected, else 0.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t {
       return static_cast<std::uint64_t>(s.ejected);
     }},
    {.name = "consecutive_failures",
     .type = PrometheusType::kGauge,
     .help = "Server failures in a row now.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.consecutive_failures; }},
    {.name = "probe_failures",
     .type = PrometheusType::kGauge,
     .help = "Probes of the ejected server that failed since it was last healthy.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.probe_failures; }},
    {.name = "journal_keys",
     .type = PrometheusType::kGauge,
     .help = "Keys the server's recovery journal holds now (writes it missed while out).",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.journaled; }},
    {.name = "journal_lost",
     .type = PrometheusType::kGauge,
     .help = "Writes the server missed that its full recovery journal could not remember.",
     .read = [](const ServerStats& s) noexcept -> std::uint64_t { return s.journal_lost; }},
};

// The migration families written while a migration is active, in order
// (memshard_migration_active, always written, comes first).
inline constexpr PrometheusFamily<MigrationStats> kPrometheusMigrationFamilies[] = {
    {.name = "migration_new_hits_total",
     .type = PrometheusType::kCounter,
     .help = "Reads of moved keys answered by the new owner.",
     .read = [](const MigrationStats& m) noexcept { return m.new_hits; }},
    {.name = "migration_same_owner_misses_total",
     .type = PrometheusType::kCounter,
     .help = "Misses of keys whose owner did not change.",
     .read = [](const MigrationStats& m) noexcept { return m.same_owner_misses; }},
    {.name = "migration_fallback_hits_total",
     .type = PrometheusType::kCounter,
     .help = "Moved keys found on the old owner.",
     .read = [](const MigrationStats& m) noexcept { return m.fallback_hits; }},
    {.name = "migration_fallback_misses_total",
     .type = PrometheusType::kCounter,
     .help = "Moved keys found on neither owner.",
     .read = [](const MigrationStats& m) noexcept { return m.fallback_misses; }},
    {.name = "migration_fallback_skipped_total",
     .type = PrometheusType::kCounter,
     .help = "Fallback reads skipped: the old owner was ejected, tainted or failing.",
     .read = [](const MigrationStats& m) noexcept { return m.fallback_skipped; }},
    {.name = "migration_copies_stored_total",
     .type = PrometheusType::kCounter,
     .help = "Copies forward stored on the new owner.",
     .read = [](const MigrationStats& m) noexcept { return m.copies_stored; }},
    {.name = "migration_copies_present_total",
     .type = PrometheusType::kCounter,
     .help = "Copies forward not stored: the new owner had the key already.",
     .read = [](const MigrationStats& m) noexcept { return m.copies_present; }},
    {.name = "migration_copies_revoked_total",
     .type = PrometheusType::kCounter,
     .help = "Copies forward deleted again because the old copy changed.",
     .read = [](const MigrationStats& m) noexcept { return m.copies_revoked; }},
    {.name = "migration_copies_failed_total",
     .type = PrometheusType::kCounter,
     .help = "Copies forward the new owner could not take.",
     .read = [](const MigrationStats& m) noexcept { return m.copies_failed; }},
    {.name = "migration_copies_ttl_exact_total",
     .type = PrometheusType::kCounter,
     .help = "Copies forward with the source's exact remaining TTL.",
     .read = [](const MigrationStats& m) noexcept { return m.copies_ttl_exact; }},
    {.name = "migration_copies_ttl_capped_total",
     .type = PrometheusType::kCounter,
     .help = "Copies forward with the TTL cap (the source's TTL was not readable).",
     .read = [](const MigrationStats& m) noexcept { return m.copies_ttl_capped; }},
    {.name = "migration_copies_skipped_total",
     .type = PrometheusType::kCounter,
     .help = "Sources not copied: less than the minimum TTL left.",
     .read = [](const MigrationStats& m) noexcept { return m.copies_skipped; }},
    {.name = "migration_old_copies_moved_total",
     .type = PrometheusType::kCounter,
     .help = "Old copies deleted after a copy forward (move on copy).",
     .read = [](const MigrationStats& m) noexcept { return m.old_copies_moved; }},
    {.name = "migration_invalidations_total",
     .type = PrometheusType::kCounter,
     .help = "Old copies deleted because of a write.",
     .read = [](const MigrationStats& m) noexcept { return m.invalidations; }},
    {.name = "migration_invalidations_failed_total",
     .type = PrometheusType::kCounter,
     .help = "Invalidations of old copies that could not be sent or failed.",
     .read = [](const MigrationStats& m) noexcept { return m.invalidations_failed; }},
    {.name = "migration_tainted_servers",
     .type = PrometheusType::kGauge,
     .help = "Old servers no longer read: they lost an invalidation.",
     .read = [](const MigrationStats& m) noexcept { return m.tainted_servers; }},
    {.name = "migration_counters_moved_total",
     .type = PrometheusType::kCounter,
     .help = "Keys moved before an incr, decr, append, prepend, touch, replace or add.",
     .read = [](const MigrationStats& m) noexcept { return m.counters_moved; }},
    {.name = "migration_leases_won_total",
     .type = PrometheusType::kCounter,
     .help = "Strict consistency: leases this family filled.",
     .read = [](const MigrationStats& m) noexcept { return m.leases_won; }},
    {.name = "migration_leases_busy_total",
     .type = PrometheusType::kCounter,
     .help = "Strict consistency: another reader held the lease.",
     .read = [](const MigrationStats& m) noexcept { return m.leases_busy; }},
};

/// append_prometheus_header: the HELP and TYPE lines of `prefix`_`name`.
/// (`help` is a constant of this header: nothing in it needs escaping.)
inline void append_prometheus_header(std::string& out, std::string_view prefix,
                                     std::string_view name, PrometheusType type,
                                     std::string_view help) {
  out.append("# HELP ").append(prefix).append("_").append(name).append(" ").append(help);
  out.append("\n# TYPE ").append(prefix).append("_").append(name);
  out.append(type == PrometheusType::kCounter ? " counter\n" : " gauge\n");
}

/// append_prometheus_sample: `prefix`_`name`{`labels`} `value`, braces left
/// out when `labels` is empty.
inline void append_prometheus_sample(std::string& out, std::string_view prefix,
                                     std::string_view name, std::string_view labels,
                                     std::uint64_t value) {
  out.append(prefix).append("_").append(name);
  if (!labels.empty()) {
    out.append("{").append(labels).append("}");
  }
  out.append(" ").append(std::to_string(value)).append("\n");
}

/// constant_prometheus_labels: the constant labels, rendered once.
[[nodiscard]] inline auto constant_prometheus_labels(const PrometheusOptions& options)
    -> std::string {
  std::string out;
  for (const auto& [name, value] : options.labels) {
    append_prometheus_label(out, name, value);
  }
  return out;
}

/// append_prometheus_servers: every per-server family (options validated).
inline void append_prometheus_servers(std::string& out, std::span<const ServerStats> stats,
                                      const PrometheusOptions& options) {
  const std::string constant = constant_prometheus_labels(options);
  std::vector<std::string> labels;
  labels.reserve(stats.size());
  for (const ServerStats& entry : stats) {
    std::string text;
    append_prometheus_label(text, "server", entry.server.endpoint());
    if (!entry.server.name.empty()) {
      append_prometheus_label(text, "name", entry.server.name);
    }
    if (!constant.empty()) {
      text.append(",").append(constant);
    }
    labels.push_back(std::move(text));
  }
  for (const PrometheusFamily<ServerStats>& family : kPrometheusServerFamilies) {
    append_prometheus_header(out, options.prefix, family.name, family.type, family.help);
    for (std::size_t s = 0; s < stats.size(); ++s) {
      append_prometheus_sample(out, options.prefix, family.name, labels[s], family.read(stats[s]));
    }
  }
}

/// append_prometheus_migration: the migration families (options validated).
inline void append_prometheus_migration(std::string& out, const MigrationStats& migration,
                                        const PrometheusOptions& options) {
  const std::string constant = constant_prometheus_labels(options);
  append_prometheus_header(out, options.prefix, "migration_active", PrometheusType::kGauge,
                           "1 while a live migration runs, else 0.");
  append_prometheus_sample(out, options.prefix, "migration_active", constant,
                           static_cast<std::uint64_t>(migration.active));
  if (!migration.active) {
    return;
  }
  for (const PrometheusFamily<MigrationStats>& family : kPrometheusMigrationFamilies) {
    append_prometheus_header(out, options.prefix, family.name, family.type, family.help);
    append_prometheus_sample(out, options.prefix, family.name, constant, family.read(migration));
  }
}

}  // namespace detail

/// validate_prometheus_options: throws ConfigError unless `options` follows
/// the rules of PrometheusOptions (a metric-name prefix; constant label names
/// that are valid, not reserved, not "server" or "name", and not repeated).
inline void validate_prometheus_options(const PrometheusOptions& options) {
  if (!detail::is_prometheus_name(options.prefix, true)) {
    detail::throw_config_error("prometheus metric prefix is not a metric name",
                               "'" + options.prefix + "'");
  }
  for (std::size_t i = 0; i < options.labels.size(); ++i) {
    const std::string& name = options.labels[i].first;
    if (!detail::is_prometheus_name(name, false)) {
      detail::throw_config_error("prometheus label name is not [a-zA-Z_][a-zA-Z0-9_]*",
                                 "'" + name + "'");
    }
    if (name.starts_with("__")) {
      detail::throw_config_error("prometheus label name starting with __ is reserved", name);
    }
    if (name == "server" || name == "name") {
      detail::throw_config_error("prometheus label name is used by the per-server labels", name);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (options.labels[j].first == name) {
        detail::throw_config_error("prometheus label name given twice", name);
      }
    }
  }
}

/// to_prometheus: the per-server families of `stats` (ShardedClient::stats())
/// as Prometheus text, version 0.0.4 (the families are listed at the top of
/// this header). Throws ConfigError for invalid `options`
/// (validate_prometheus_options).
///
/// **Example**:
///   const std::string text = memshard::to_prometheus(client.stats());
///   // # HELP memshard_requests_total Requests sent to the server.
///   // # TYPE memshard_requests_total counter
///   // memshard_requests_total{server="10.0.0.1:11211"} 1234
///   // ...
[[nodiscard]] inline auto to_prometheus(std::span<const ServerStats> stats,
                                        const PrometheusOptions& options = {}) -> std::string {
  validate_prometheus_options(options);
  std::string out;
  detail::append_prometheus_servers(out, stats, options);
  return out;
}

/// to_prometheus: the same, followed by the migration families of
/// `migration` (ShardedClient::migration_stats()): `<prefix>_migration_active`
/// always, the migration's counters while it is active.
[[nodiscard]] inline auto to_prometheus(std::span<const ServerStats> stats,
                                        const MigrationStats& migration,
                                        const PrometheusOptions& options = {}) -> std::string {
  validate_prometheus_options(options);
  std::string out;
  detail::append_prometheus_servers(out, stats, options);
  detail::append_prometheus_migration(out, migration, options);
  return out;
}

/// hot_keys_to_prometheus: the hot-key families of `keys` (ShardedClient::hot_keys()) as
/// Prometheus text, to serve after to_prometheus()'s. Throws ConfigError for invalid `options`,
/// or a constant label named "key".
///
/// **Example**:
///   std::string text = memshard::to_prometheus(client.stats());
///   text += memshard::hot_keys_to_prometheus(client.hot_keys());
///   // memshard_hot_key_operations_per_second{key="page:home"} 41250
[[nodiscard]] inline auto hot_keys_to_prometheus(std::span<const HotKey> keys,
                                                 const PrometheusOptions& options = {})
    -> std::string {
  validate_prometheus_options(options);
  for (const auto& [name, value] : options.labels) {
    if (name == "key") {
      detail::throw_config_error("prometheus label name is used by the hot-key labels", name);
    }
  }
  const std::string constant = detail::constant_prometheus_labels(options);
  const auto labels = [&constant](const HotKey& hot) {
    std::string out;
    detail::append_prometheus_label(out, "key", hot.key);
    if (!constant.empty()) {
      out.append(",").append(constant);
    }
    return out;
  };
  const auto sample = [&options](std::string& out, std::string_view name, const std::string& with,
                                 double value) {
    std::array<char, 32> text{};
    const auto printed = std::to_chars(text.data(), text.data() + text.size(), value);
    out.append(options.prefix).append("_").append(name).append("{").append(with).append("} ");
    out.append(text.data(), printed.ptr).append("\n");
  };
  std::string out;
  detail::append_prometheus_header(out, options.prefix, "hot_key_operations_per_second",
                                   detail::PrometheusType::kGauge,
                                   "Estimated operations per second on a hot key.");
  for (const HotKey& hot : keys) {
    sample(out, "hot_key_operations_per_second", labels(hot), hot.per_second);
  }
  detail::append_prometheus_header(
      out, options.prefix, "hot_key_share", detail::PrometheusType::kGauge,
      "Estimated share of the client family's operations on a hot key.");
  for (const HotKey& hot : keys) {
    sample(out, "hot_key_share", labels(hot), hot.share);
  }
  return out;
}

/// write_prometheus: writes to_prometheus(stats, options) to `out`, for a
/// /metrics endpoint (serve it as kPrometheusContentType). Throws ConfigError
/// for invalid `options` before writing anything; stream errors are left in
/// `out`'s state (and its exception mask).
///
/// **Example**:
///   memshard::PrometheusOptions options;
///   options.labels = {{"pool", "sessions"}};
///   std::ostringstream body;
///   memshard::write_prometheus(body, client.stats(), client.migration_stats(), options);
///   // memshard_requests_total{server="10.0.0.1:11211",pool="sessions"} 1234
///   // ...
///   // memshard_migration_active{pool="sessions"} 0
inline void write_prometheus(std::ostream& out, std::span<const ServerStats> stats,
                             const PrometheusOptions& options = {}) {
  const std::string text = to_prometheus(stats, options);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

/// write_prometheus: writes to_prometheus(stats, migration, options) to `out`:
/// the per-server families, then the migration ones. (A bare `{}` as the
/// third argument is ambiguous between the two overloads: name the type.)
inline void write_prometheus(std::ostream& out, std::span<const ServerStats> stats,
                             const MigrationStats& migration,
                             const PrometheusOptions& options = {}) {
  const std::string text = to_prometheus(stats, migration, options);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_OBSERVABILITY_PROMETHEUS_HPP_
