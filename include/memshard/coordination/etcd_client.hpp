// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_ETCD_CLIENT_HPP_
#define MEMSHARD_COORDINATION_ETCD_CLIENT_HPP_

// coordination/etcd_client.hpp: EtcdClient, the requests the fleet makes of etcd v3, through
// etcd's documented JSON gateway (HTTP/1.1, keys and values in base64, 64-bit numbers as
// strings): read a key or every key under a prefix, put (optionally bound to a lease), put only
// if a key's mod_revision is still the one read (a transaction: how a change is made exactly
// once), delete, and grant, keep alive and revoke leases.
//
// etcd is treated like any server here. Every request has a deadline for the whole request
// (EtcdOptions::request_timeout) and a shorter one per connection attempt; the endpoints of the
// store URL are tried in turn, starting with the last one that answered; a request is sent to a
// second endpoint only when it was never sent to the first, or when repeating it is harmless
// (reads, puts, lease requests); a failure is a StoreStatus, never an exception. An EtcdClient
// is used by one thread at a time.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "memshard/codecs/json.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/coordination/detail/base64.hpp"
#include "memshard/coordination/detail/http_post.hpp"
#include "memshard/coordination/store_status.hpp"
#include "memshard/coordination/store_url.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// EtcdOptions: the bounds of every request to etcd.
struct EtcdOptions {
  /// request_timeout: the most one request may take, every endpoint tried included.
  std::chrono::milliseconds request_timeout{2'000};
  /// connect_timeout: the most one connection attempt may take, so that a dead endpoint leaves
  /// time to try the next one.
  std::chrono::milliseconds connect_timeout{500};
  /// max_reply_bytes: a larger reply is refused (kBadReply), so a confused peer cannot make the
  /// process allocate without bound.
  std::size_t max_reply_bytes = std::size_t{16} << 20U;
};

/// StoreEntry: one key as etcd holds it.
struct StoreEntry {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;  ///< the store's revision when the key was created
  std::int64_t mod_revision = 0;     ///< the store's revision when the key was last written
  std::int64_t version = 0;          ///< the number of writes since the key was created
  std::int64_t lease = 0;            ///< the lease the key is bound to (0: none)
};

/// StoreRange: the keys a read found, and the store's revision the read saw.
struct StoreRange {
  std::vector<StoreEntry> entries;
  std::int64_t revision = 0;
};

/// StoreWrite: the outcome of a conditional put: whether the condition held (and so the value
/// was written), and the store's revision after the request.
struct StoreWrite {
  bool succeeded = false;
  std::int64_t revision = 0;
};

/// StoreLease: a lease etcd granted: its id and the TTL etcd chose (at least the one asked for;
/// etcd raises a shorter one to its minimum).
struct StoreLease {
  std::int64_t id = 0;
  std::chrono::seconds ttl{0};
};

namespace detail {

/// etcd_int: a 64-bit field of an etcd reply (a string of digits in the gateway's JSON, or a
/// number), 0 when the field is absent (the gateway leaves out zero values); nullopt when it is
/// anything else.
[[nodiscard]] inline auto etcd_int(const Value& object, std::string_view field)
    -> std::optional<std::int64_t> {
  const Value* value = object.find(field);
  if (value == nullptr) {
    return 0;
  }
  if (value->is_int()) {
    return value->as_int();
  }
  if (!value->is_string()) {
    return std::nullopt;
  }
  const std::string& text = value->as_string();
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return number;
}

/// etcd_bytes: a base64 field of an etcd reply, "" when absent; nullopt when not base64.
[[nodiscard]] inline auto etcd_bytes(const Value& object, std::string_view field)
    -> std::optional<std::string> {
  const Value* value = object.find(field);
  if (value == nullptr) {
    return std::string();
  }
  if (!value->is_string()) {
    return std::nullopt;
  }
  return base64_decode(value->as_string());
}

/// decode_etcd_json: one JSON object of etcd's (a reply, or one message of a stream), read
/// strictly within `max_reply` bytes (and four times that of decoded values).
[[nodiscard]] inline auto decode_etcd_json(std::string_view text, std::size_t max_reply)
    -> CodecResult<Value> {
  DecodeLimits limits;
  limits.max_size = max_reply;
  limits.max_decoded_bytes = max_reply * 4;
  limits.max_depth = 32;
  return json_decode(text, limits);
}

/// prefix_end: the end of the range of keys that start with `prefix` (etcd's range_end): the
/// prefix with its last byte below 0xff incremented and what follows it dropped; "\0" (every
/// key) when there is none.
[[nodiscard]] inline auto prefix_end(std::string_view prefix) -> std::string {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());  // NOLINT
    if (last != 0xffU) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

}  // namespace detail

/// EtcdClient: requests to one etcd cluster (see the file comment).
///
/// **Example**:
///   memshard::EtcdClient etcd("etcd://127.0.0.1:2379");
///   auto put = etcd.put("fleet/web/record", text);
///   if (!put) log(put.status().message());
class EtcdClient {
 public:
  /// Throws ConfigError for a bad store URL (parse_store_url) or options out of range (a zero
  /// timeout, a connect timeout over the request timeout, a zero reply limit).
  explicit EtcdClient(std::string_view url, EtcdOptions options = {})
      : EtcdClient(parse_store_url(url), options) {}
  explicit EtcdClient(std::vector<StoreEndpoint> endpoints, EtcdOptions options = {})
      : endpoints_(std::move(endpoints)), options_(options) {
    if (endpoints_.empty()) {
      detail::throw_config_error("etcd", "no endpoint");
    }
    if (options_.request_timeout.count() <= 0 || options_.connect_timeout.count() <= 0 ||
        options_.connect_timeout > options_.request_timeout) {
      detail::throw_config_error(
          "etcd: timeouts must be positive, the connect timeout at most the request timeout",
          std::to_string(options_.connect_timeout.count()) + " ms / " +
              std::to_string(options_.request_timeout.count()) + " ms");
    }
    if (options_.max_reply_bytes == 0) {
      detail::throw_config_error("etcd: max_reply_bytes", "0");
    }
  }

  [[nodiscard]] auto endpoints() const noexcept -> const std::vector<StoreEndpoint>& {
    return endpoints_;
  }
  [[nodiscard]] auto options() const noexcept -> const EtcdOptions& { return options_; }

  /// get: the key `key` (no entry when it does not exist).
  [[nodiscard]] auto get(std::string_view key) -> StoreResult<StoreRange> {
    return range("{\"key\":\"" + detail::base64_encode(key) + "\"}");
  }

  /// list: every key that starts with `prefix`, in key order.
  [[nodiscard]] auto list(std::string_view prefix) -> StoreResult<StoreRange> {
    return range("{\"key\":\"" + detail::base64_encode(prefix) + "\",\"range_end\":\"" +
                 detail::base64_encode(detail::prefix_end(prefix)) + "\"}");
  }

  /// put: writes `value` under `key`, bound to `lease` when not 0 (the key goes when the lease
  /// does). The store's revision after the write.
  [[nodiscard]] auto put(std::string_view key, std::string_view value, std::int64_t lease = 0)
      -> StoreResult<std::int64_t> {
    StoreResult<Value> reply = request("/v3/kv/put", put_body(key, value, lease), true);
    if (!reply) {
      return reply.status();
    }
    return header_revision(reply.value());
  }

  /// put_if: writes `value` under `key` only if the key's mod_revision is still
  /// `mod_revision` (0: only if the key does not exist), in one transaction. Not repeated on
  /// another endpoint once sent: a kTimeout leaves it unknown whether it was written (read the
  /// key to know).
  [[nodiscard]] auto put_if(std::string_view key, std::string_view value, std::int64_t mod_revision,
                            std::int64_t lease = 0) -> StoreResult<StoreWrite> {
    const std::string body = "{\"compare\":[{\"key\":\"" + detail::base64_encode(key) +
                             "\",\"result\":\"EQUAL\",\"target\":\"MOD\",\"mod_revision\":\"" +
                             std::to_string(mod_revision) +
                             "\"}],\"success\":[{\"request_put\":" + put_body(key, value, lease) +
                             "}]}";
    StoreResult<Value> reply = request("/v3/kv/txn", body, false);
    if (!reply) {
      return reply.status();
    }
    const Value* succeeded = reply.value().find("succeeded");
    if (succeeded != nullptr && !succeeded->is_bool()) {
      return bad_reply("a transaction's 'succeeded' is not a boolean");
    }
    StoreResult<std::int64_t> revision = header_revision(reply.value());
    if (!revision) {
      return revision.status();
    }
    return StoreWrite{succeeded != nullptr && succeeded->as_bool(), revision.value()};
  }

  /// remove: deletes `key`; the number of keys deleted (0 or 1).
  [[nodiscard]] auto remove(std::string_view key) -> StoreResult<std::int64_t> {
    StoreResult<Value> reply =
        request("/v3/kv/deleterange", "{\"key\":\"" + detail::base64_encode(key) + "\"}", true);
    if (!reply) {
      return reply.status();
    }
    const std::optional<std::int64_t> deleted = detail::etcd_int(reply.value(), "deleted");
    if (!deleted) {
      return bad_reply("'deleted' is not a number");
    }
    return *deleted;
  }

  /// grant: a new lease of (at least) `ttl`.
  [[nodiscard]] auto grant(std::chrono::seconds ttl) -> StoreResult<StoreLease> {
    StoreResult<Value> reply =
        request("/v3/lease/grant", "{\"TTL\":\"" + std::to_string(ttl.count()) + "\"}", true);
    if (!reply) {
      return reply.status();
    }
    const std::optional<std::int64_t> id = detail::etcd_int(reply.value(), "ID");
    const std::optional<std::int64_t> granted = detail::etcd_int(reply.value(), "TTL");
    if (!id || !granted || *id == 0 || *granted <= 0) {
      return bad_reply("a lease grant without an ID and a TTL");
    }
    return StoreLease{*id, std::chrono::seconds(*granted)};
  }

  /// keep_alive: renews `lease`; the TTL it has again, or 0 s when the lease no longer exists
  /// (it expired or was revoked).
  [[nodiscard]] auto keep_alive(std::int64_t lease) -> StoreResult<std::chrono::seconds> {
    StoreResult<Value> reply =
        request("/v3/lease/keepalive", "{\"ID\":\"" + std::to_string(lease) + "\"}", true);
    if (!reply) {
      return reply.status();
    }
    // A streamed reply: one object, {"result": {...}}, per keep-alive sent (here one).
    const Value* result = reply.value().find("result");
    if (result == nullptr || !result->is_map()) {
      return bad_reply("a keep-alive reply without a result");
    }
    const std::optional<std::int64_t> ttl = detail::etcd_int(*result, "TTL");
    if (!ttl || *ttl < 0) {
      return bad_reply("a keep-alive reply whose TTL is not a number");
    }
    return std::chrono::seconds(*ttl);
  }

  /// revoke: ends `lease` now and deletes the keys bound to it; false when the lease did not
  /// exist (any more).
  [[nodiscard]] auto revoke(std::int64_t lease) -> StoreResult<bool> {
    StoreResult<Value> reply =
        request("/v3/lease/revoke", "{\"ID\":\"" + std::to_string(lease) + "\"}", true);
    if (!reply) {
      if (reply.code() == StoreErrc::kRejected && lease_not_found(reply.status())) {
        return false;
      }
      return reply.status();
    }
    return true;
  }

 private:
  // gRPC's status code for a member that cannot serve, as etcd's gateway reports it in "code".
  static constexpr std::int64_t kGrpcUnavailable = 14;

  [[nodiscard]] static auto put_body(std::string_view key, std::string_view value,
                                     std::int64_t lease) -> std::string {
    std::string body = "{\"key\":\"" + detail::base64_encode(key) + "\",\"value\":\"" +
                       detail::base64_encode(value) + "\"";
    if (lease != 0) {
      body.append(",\"lease\":\"").append(std::to_string(lease)).append("\"");
    }
    body.push_back('}');
    return body;
  }

  [[nodiscard]] static auto bad_reply(std::string_view what) -> StoreStatus {
    return {StoreErrc::kBadReply, "etcd: " + std::string(what)};
  }

  [[nodiscard]] static auto lease_not_found(const StoreStatus& status) -> bool {
    return status.detail().find("lease not found") != std::string::npos;
  }

  [[nodiscard]] static auto header_revision(const Value& reply) -> StoreResult<std::int64_t> {
    const Value* header = reply.find("header");
    if (header == nullptr || !header->is_map()) {
      return bad_reply("a reply without a header");
    }
    const std::optional<std::int64_t> revision = detail::etcd_int(*header, "revision");
    if (!revision || *revision <= 0) {
      return bad_reply("a reply header without a revision");
    }
    return *revision;
  }

  [[nodiscard]] auto range(const std::string& body) -> StoreResult<StoreRange> {
    StoreResult<Value> reply = request("/v3/kv/range", body, true);
    if (!reply) {
      return reply.status();
    }
    StoreResult<std::int64_t> revision = header_revision(reply.value());
    if (!revision) {
      return revision.status();
    }
    StoreRange out;
    out.revision = revision.value();
    const Value* kvs = reply.value().find("kvs");
    if (kvs == nullptr) {
      return out;
    }
    if (!kvs->is_list()) {
      return bad_reply("'kvs' is not a list");
    }
    for (const Value& kv : kvs->as_list()) {
      std::optional<std::string> key = detail::etcd_bytes(kv, "key");
      std::optional<std::string> value = detail::etcd_bytes(kv, "value");
      const std::optional<std::int64_t> created = detail::etcd_int(kv, "create_revision");
      const std::optional<std::int64_t> modified = detail::etcd_int(kv, "mod_revision");
      const std::optional<std::int64_t> version = detail::etcd_int(kv, "version");
      const std::optional<std::int64_t> lease = detail::etcd_int(kv, "lease");
      if (!kv.is_map() || !key || !value || !created || !modified || !version || !lease ||
          key->empty() || *modified <= 0) {
        return bad_reply("a key entry that is not base64 key, value and numbers");
      }
      out.entries.push_back(
          StoreEntry{std::move(*key), std::move(*value), *created, *modified, *version, *lease});
    }
    return out;
  }

  /// request: POSTs `body` to `path` on the endpoints in turn (see the file comment) and
  /// returns the reply's JSON object, or why there is none. `repeatable`: whether the request
  /// may be sent again to another endpoint after one took it without answering.
  [[nodiscard]] auto request(std::string_view path, const std::string& body, bool repeatable)
      -> StoreResult<Value> {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point deadline = Clock::now() + options_.request_timeout;
    StoreStatus failure(StoreErrc::kUnreachable, "etcd: no endpoint tried");
    const std::size_t count = endpoints_.size();
    for (std::size_t attempt = 0; attempt < count; ++attempt) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        if (failure.code() == StoreErrc::kUnreachable && attempt == 0) {
          failure = StoreStatus(StoreErrc::kTimeout, "etcd: no time left");
        }
        break;
      }
      // A request that may be repeated leaves the endpoints not tried yet their share of the
      // time, so that one hung endpoint cannot take all of it.
      const std::chrono::milliseconds share =
          repeatable ? std::max(left / static_cast<std::int64_t>(count - attempt),
                                std::chrono::milliseconds{1})
                     : left;
      const StoreEndpoint& endpoint = endpoints_[current_];
      const std::string where = "etcd " + endpoint.text();
      detail::HttpReply reply =
          http_.post(endpoint.url() + std::string(path), body, share,
                     std::min(options_.connect_timeout, share), options_.max_reply_bytes);
      if (reply.transport != CURLE_OK) {
        if (reply.transport == CURLE_WRITE_ERROR) {
          return StoreStatus(StoreErrc::kBadReply, where + ": " + reply.error);
        }
        if (reply.sent) {
          failure = StoreStatus(StoreErrc::kTimeout,
                                where + ": no answer (" + reply.error +
                                    "); the request may or may not have been carried out");
          if (!repeatable) {
            return failure;
          }
        } else {
          failure = StoreStatus(StoreErrc::kUnreachable, where + ": " + reply.error);
        }
        current_ = (current_ + 1) % count;
        continue;
      }
      // A streamed reply (lease keep-alive) is one JSON object per line: the first is the one.
      std::string_view text = reply.body;
      if (const std::size_t newline = text.find('\n'); newline != std::string_view::npos) {
        text = text.substr(0, newline);
      }
      CodecResult<Value> json = detail::decode_etcd_json(text, options_.max_reply_bytes);
      if (!json || !json.value().is_map()) {
        return StoreStatus(StoreErrc::kBadReply, where + ": HTTP " + std::to_string(reply.status) +
                                                     " with a body that is not a JSON object");
      }
      Value object = std::move(json).value();
      if (const Value* error = object.find("error"); error != nullptr || reply.status != 200) {
        const std::optional<std::int64_t> code = detail::etcd_int(object, "code");
        std::string message = error != nullptr && error->is_string() ? error->as_string() : "";
        failure = StoreStatus(StoreErrc::kRejected,
                              where + ": HTTP " + std::to_string(reply.status) + ": " + message);
        if (code && *code == kGrpcUnavailable) {
          // The member cannot serve (no leader, stopping, overloaded): another may.
          failure = StoreStatus(repeatable ? StoreErrc::kUnreachable : StoreErrc::kTimeout,
                                where + ": unavailable: " + message);
          if (!repeatable) {
            return failure;
          }
          current_ = (current_ + 1) % count;
          continue;
        }
        return failure;
      }
      return object;
    }
    return failure;
  }

  std::vector<StoreEndpoint> endpoints_;
  EtcdOptions options_;
  std::size_t current_ = 0;
  detail::HttpPost http_;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_ETCD_CLIENT_HPP_
