// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_ETCD_WATCH_HPP_
#define MEMSHARD_COORDINATION_ETCD_WATCH_HPP_

// coordination/etcd_watch.hpp: EtcdWatch, every change under a key prefix as etcd streams it
// (POST /v3/watch on its JSON gateway: one JSON object per line), delivered in order to a
// handler on a thread of the watch's own.
//
// A watch never misses a change and never delivers one twice: it resumes after a broken stream
// from the revision after the last change it delivered, on the next endpoint, after a pause
// that doubles from 50 ms to 1 s. When etcd compacted the history it would resume from, it
// reads the whole prefix instead and delivers it as one update marked `resync` (the state, not
// the changes), then watches from there. Destroying the watch stops it at once.
//
// A watch gives latency, not safety: a stream can stay open to an etcd member cut off from its
// cluster and carry nothing. Whoever needs to know the current state must also read it from
// time to time (the fleet's members do, with every lease keep-alive).

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "memshard/codecs/json.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/coordination/detail/base64.hpp"
#include "memshard/coordination/detail/http_post.hpp"
#include "memshard/coordination/etcd_client.hpp"
#include "memshard/coordination/store_url.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// StoreEvent: one change of a key: written (its new entry) or removed (its key and the
/// revision of the removal in `entry.mod_revision`).
struct StoreEvent {
  bool removed = false;
  StoreEntry entry;
};

/// WatchUpdate: what the watch delivers at once: the changes of one or more revisions, in
/// order; or, with `resync`, every key under the prefix as of `revision` (as written events),
/// after etcd compacted the history the watch would have resumed from.
struct WatchUpdate {
  std::vector<StoreEvent> events;
  std::int64_t revision = 0;  ///< the newest revision this update covers
  bool resync = false;
};

/// EtcdWatch: see the file comment.
///
/// **Example**:
///   auto start = etcd.list("fleet/web/");
///   memshard::EtcdWatch watch(etcd.endpoints(), "fleet/web/", start->revision,
///                             [&](memshard::WatchUpdate update) { apply(update); });
class EtcdWatch {
 public:
  /// Handler: called on the watch's thread, one update at a time, in order. It must not throw
  /// (an exception is dropped) and should return soon: the stream waits for it.
  using Handler = std::function<void(WatchUpdate)>;

  /// Watches the keys under `prefix` for changes after revision `after` (the revision of a read
  /// the caller already has). Throws ConfigError for an empty endpoint list or bad options, as
  /// EtcdClient does.
  EtcdWatch(std::vector<StoreEndpoint> endpoints, std::string prefix, std::int64_t after,
            Handler handler, EtcdOptions options = {})
      : reader_(std::move(endpoints), options),
        prefix_(std::move(prefix)),
        handler_(std::move(handler)),
        last_(after),
        multi_(curl_multi_init()),
        revision_(after) {
    if (!multi_) {
      throw std::bad_alloc();
    }
    thread_ = std::thread([this] { run(); });
  }
  EtcdWatch(const EtcdWatch&) = delete;
  auto operator=(const EtcdWatch&) -> EtcdWatch& = delete;
  EtcdWatch(EtcdWatch&&) = delete;
  auto operator=(EtcdWatch&&) -> EtcdWatch& = delete;
  ~EtcdWatch() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    curl_multi_wakeup(multi_.get());
    thread_.join();
  }

  /// revision: the newest revision delivered so far (or the one the watch started after).
  [[nodiscard]] auto revision() const noexcept -> std::int64_t { return revision_.load(); }
  /// streaming: whether a stream is open and etcd confirmed the watch on it.
  [[nodiscard]] auto streaming() const noexcept -> bool { return streaming_.load(); }
  /// streams: how many streams etcd confirmed so far (1 + the reconnections).
  [[nodiscard]] auto streams() const noexcept -> std::uint64_t { return streams_.load(); }
  /// resyncs: how many times the watch read the whole prefix after a compaction.
  [[nodiscard]] auto resyncs() const noexcept -> std::uint64_t { return resyncs_.load(); }

 private:
  static constexpr std::chrono::milliseconds kFirstPause{50};
  static constexpr std::chrono::milliseconds kLongestPause{1'000};

  struct MultiFree {
    void operator()(CURLM* multi) const noexcept { curl_multi_cleanup(multi); }
  };
  struct EasyFree {
    void operator()(CURL* easy) const noexcept { curl_easy_cleanup(easy); }
  };

  // Why a stream ended.
  enum class End : std::uint8_t { kStopped, kBroken, kCompacted };

  void run() {
    std::chrono::milliseconds pause = kFirstPause;
    std::size_t current = 0;
    while (!stopping()) {
      const std::int64_t before = last_;
      const End end = stream(reader_.endpoints()[current]);
      streaming_ = false;
      if (end == End::kStopped) {
        return;
      }
      if (end == End::kCompacted) {
        resync();
        pause = kFirstPause;
        continue;
      }
      if (last_ != before) {
        pause = kFirstPause;  // it carried changes: a break, not a dead endpoint
      }
      current = (current + 1) % reader_.endpoints().size();
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, pause, [this] { return stop_; });
      pause = std::min(pause * 2, kLongestPause);
    }
  }

  [[nodiscard]] auto stopping() -> bool {
    const std::lock_guard<std::mutex> lock(mutex_);
    return stop_;
  }

  // One stream from last_ + 1 on `endpoint`, until it breaks, the history is compacted, or the
  // watch stops.
  auto stream(const StoreEndpoint& endpoint) -> End {
    const std::unique_ptr<CURL, EasyFree> easy(curl_easy_init());
    if (!easy || !detail::curl_ready()) {
      return End::kBroken;
    }
    const std::string url = endpoint.url() + "/v3/watch";
    const std::string body = "{\"create_request\":{\"key\":\"" + detail::base64_encode(prefix_) +
                             "\",\"range_end\":\"" +
                             detail::base64_encode(detail::prefix_end(prefix_)) +
                             "\",\"start_revision\":\"" + std::to_string(last_ + 1) + "\"}}";
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    const std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(headers,
                                                                         &curl_slist_free_all);
    CURL* h = easy.get();
    // A stream: no timeout for the whole transfer (an idle watch is a healthy one).
    detail::json_post(h, url, body, headers,
                      static_cast<long>(options().connect_timeout.count()));  // NOLINT
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &EtcdWatch::write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, this);
    buffer_.clear();
    end_ = End::kBroken;
    failed_ = false;
    curl_multi_add_handle(multi_.get(), h);
    int running = 1;
    // etcd must confirm the watch within the request timeout: an endpoint that takes the
    // request and answers nothing is left for the next one.
    const auto confirm_by = std::chrono::steady_clock::now() + options().request_timeout;
    const std::uint64_t streams = streams_.load();
    while (running != 0 && !failed_ && !stopping()) {
      if (curl_multi_perform(multi_.get(), &running) != CURLM_OK) {
        break;
      }
      if (streams_.load() == streams && std::chrono::steady_clock::now() >= confirm_by) {
        break;
      }
      if (running != 0) {
        curl_multi_poll(multi_.get(), nullptr, 0, 1000, nullptr);
      }
    }
    curl_multi_remove_handle(multi_.get(), h);
    return stopping() ? End::kStopped : end_;
  }

  static auto write(char* data, std::size_t size, std::size_t count, void* user) noexcept
      -> std::size_t {
    auto* self = static_cast<EtcdWatch*>(user);
    const std::size_t bytes = size * count;
    try {
      self->buffer_.append(data, bytes);
      std::size_t newline = 0;
      while (!self->failed_ && (newline = self->buffer_.find('\n')) != std::string::npos) {
        const std::string line = self->buffer_.substr(0, newline);
        self->buffer_.erase(0, newline + 1);
        self->take(line);
      }
      if (self->buffer_.size() > self->options().max_reply_bytes) {
        self->failed_ = true;  // one message over the limit: a confused peer
      }
    } catch (...) {
      self->failed_ = true;
    }
    return self->failed_ ? 0 : bytes;
  }

  // One message of the stream.
  void take(std::string_view line) {
    if (line.empty()) {
      return;
    }
    CodecResult<Value> json = detail::decode_etcd_json(line, options().max_reply_bytes);
    const Value* result = json ? json.value().find("result") : nullptr;
    if (result == nullptr || !result->is_map()) {
      failed_ = true;  // an error object, or not etcd's API: break the stream, try elsewhere
      return;
    }
    if (const Value* canceled = result->find("canceled");
        canceled != nullptr && canceled->is_bool() && canceled->as_bool()) {
      const std::optional<std::int64_t> compacted = detail::etcd_int(*result, "compact_revision");
      end_ = compacted && *compacted > 0 ? End::kCompacted : End::kBroken;
      failed_ = true;
      return;
    }
    if (const Value* created = result->find("created");
        created != nullptr && created->is_bool() && created->as_bool()) {
      streaming_ = true;
      ++streams_;
    }
    const Value* events = result->find("events");
    if (events == nullptr) {
      return;
    }
    if (!events->is_list()) {
      failed_ = true;
      return;
    }
    WatchUpdate update;
    const std::int64_t delivered = last_;
    for (const Value& event : events->as_list()) {
      const Value* kv = event.find("kv");
      const Value* type = event.find("type");
      std::optional<std::string> key =
          kv != nullptr ? detail::etcd_bytes(*kv, "key") : std::nullopt;
      std::optional<std::string> value =
          kv != nullptr ? detail::etcd_bytes(*kv, "value") : std::nullopt;
      const auto number = [kv](std::string_view field) {
        return kv != nullptr ? detail::etcd_int(*kv, field) : std::nullopt;
      };
      const std::optional<std::int64_t> created = number("create_revision");
      const std::optional<std::int64_t> modified = number("mod_revision");
      const std::optional<std::int64_t> version = number("version");
      const std::optional<std::int64_t> lease = number("lease");
      // One revision may change several keys (a transaction); a revision is never delivered twice.
      if (!key || !value || !created || !modified || !version || !lease || *modified <= delivered ||
          *modified < last_ || (type != nullptr && !type->is_string())) {
        failed_ = true;  // malformed, or a change already delivered
        return;
      }
      const bool removed = type != nullptr && type->as_string() == "DELETE";
      last_ = *modified;
      update.events.push_back(StoreEvent{
          removed,
          StoreEntry{std::move(*key), std::move(*value), *created, *modified, *version, *lease}});
    }
    if (update.events.empty()) {
      return;
    }
    update.revision = last_;
    revision_ = last_;
    deliver(std::move(update));
  }

  // The history from last_ is gone: the whole prefix as of now, then changes after it.
  void resync() {
    StoreResult<StoreRange> range = reader_.list(prefix_);
    if (!range) {
      return;  // the next stream starts where it would have: compacted again, so tried again
    }
    WatchUpdate update;
    update.resync = true;
    update.revision = range->revision;
    for (const StoreEntry& entry : range->entries) {
      update.events.push_back(StoreEvent{false, entry});
    }
    last_ = range->revision;
    revision_ = last_;
    ++resyncs_;
    deliver(std::move(update));
  }

  void deliver(WatchUpdate update) noexcept {
    try {
      handler_(std::move(update));
    } catch (...) {  // NOLINT(bugprone-empty-catch): documented: a handler must not throw
    }
  }

  // options: the bounds of the requests and the stream (the reader's, which has the endpoints
  // too).
  [[nodiscard]] auto options() const noexcept -> const EtcdOptions& { return reader_.options(); }

  EtcdClient reader_;  // for a resync, and where the endpoints and options are kept
  std::string prefix_;
  Handler handler_;
  std::int64_t last_;  // the watch thread's: the newest revision delivered
  std::unique_ptr<CURLM, MultiFree> multi_;
  std::string buffer_;
  End end_ = End::kBroken;
  bool failed_ = false;
  std::atomic<std::int64_t> revision_{0};
  std::atomic<bool> streaming_{false};
  std::atomic<std::uint64_t> streams_{0};
  std::atomic<std::uint64_t> resyncs_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: started once everything above is built
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_ETCD_WATCH_HPP_
