// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_COORDINATION_DETAIL_HTTP_POST_HPP_
#define MEMSHARD_COORDINATION_DETAIL_HTTP_POST_HPP_

// coordination/detail/http_post.hpp: HttpPost, one HTTP/1.1 connection (a libcurl easy handle,
// which keeps the connection open between requests) that POSTs a JSON body and reads the whole
// reply, bounded by a deadline for the whole exchange and a shorter one for connecting. Plain
// HTTP only, never through a proxy (whatever http_proxy says), no redirects, no signals (safe
// on any thread), and a reply larger than a limit is cut off and refused.

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// HttpReply: what one POST gave. `transport` is CURLE_OK when a whole HTTP reply came back
/// (any status); `sent` whether any of the request left (so a failure may have been acted on).
struct HttpReply {
  CURLcode transport = CURLE_OK;
  long status = 0;  // NOLINT(google-runtime-int): libcurl's type
  bool sent = false;
  std::string body;
  std::string error;  ///< libcurl's message when transport failed
};

/// curl_ready: initializes libcurl once per process (thread-safe since 7.84, and guarded here by
/// a function-local static). Returns false when libcurl could not initialize.
[[nodiscard]] inline auto curl_ready() noexcept -> bool {
  static const bool ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ready;
}

/// json_post: sets `h` up to POST `body` (which must outlive the transfer) as JSON to `url`:
/// plain HTTP only, never through a proxy, no redirects, no signals, TCP_NODELAY, connecting
/// within `connect_ms`, with `headers` (the JSON content type). The caller adds the timeout of
/// the whole transfer, if any, and where the reply goes.
inline void json_post(CURL* h, const std::string& url, std::string_view body, curl_slist* headers,
                      long connect_ms) noexcept {  // NOLINT(google-runtime-int): libcurl's type
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP));  // NOLINT
#endif
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
}

class HttpPost {
 public:
  /// Throws std::bad_alloc when libcurl cannot make a handle.
  HttpPost() : handle_(curl_ready() ? curl_easy_init() : nullptr) {
    if (!handle_) {
      throw std::bad_alloc();
    }
    headers_.reset(curl_slist_append(nullptr, "Content-Type: application/json"));
    if (!headers_) {
      throw std::bad_alloc();
    }
  }
  HttpPost(const HttpPost&) = delete;
  auto operator=(const HttpPost&) -> HttpPost& = delete;
  HttpPost(HttpPost&&) = delete;
  auto operator=(HttpPost&&) -> HttpPost& = delete;
  ~HttpPost() = default;

  /// post: POSTs `body` to `url` and reads the reply, within `total` (at least 1 ms), connecting
  /// within `connect`; a reply body over `max_reply` bytes is refused (CURLE_WRITE_ERROR).
  [[nodiscard]] auto post(const std::string& url, std::string_view body,
                          std::chrono::milliseconds total, std::chrono::milliseconds connect,
                          std::size_t max_reply) -> HttpReply {
    HttpReply reply;
    Sink sink{&reply.body, max_reply};
    const long total_ms = std::max<long>(1, static_cast<long>(total.count()));  // NOLINT
    const long connect_ms =                                                     // NOLINT
        std::clamp<long>(static_cast<long>(connect.count()), 1, total_ms);      // NOLINT
    CURL* h = handle_.get();
    curl_easy_reset(h);
    json_post(h, url, body, headers_.get(), connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, total_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &HttpPost::write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_);
    error_[0] = '\0';
    reply.transport = curl_easy_perform(h);
    long request_bytes = 0;  // NOLINT(google-runtime-int)
    curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &request_bytes);
    reply.sent = request_bytes > 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
    if (reply.transport != CURLE_OK) {
      reply.error = error_[0] != '\0' ? std::string(error_) : curl_easy_strerror(reply.transport);
      if (sink.over) {
        reply.error = "the reply is over " + std::to_string(max_reply) + " bytes";
      }
    }
    return reply;
  }

 private:
  struct Sink {
    std::string* body;
    std::size_t limit;
    bool over = false;
  };
  struct EasyFree {
    void operator()(CURL* handle) const noexcept { curl_easy_cleanup(handle); }
  };
  struct SlistFree {
    void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
  };

  static auto write(char* data, std::size_t size, std::size_t count, void* user) noexcept
      -> std::size_t {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t bytes = size * count;
    if (bytes > sink->limit - sink->body->size()) {
      sink->over = true;
      return 0;  // libcurl stops with CURLE_WRITE_ERROR
    }
    try {
      sink->body->append(data, bytes);
    } catch (...) {
      return 0;
    }
    return bytes;
  }

  std::unique_ptr<CURL, EasyFree> handle_;
  std::unique_ptr<curl_slist, SlistFree> headers_;
  char error_[CURL_ERROR_SIZE] = {};  // NOLINT(modernize-avoid-c-arrays): libcurl's buffer
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_COORDINATION_DETAIL_HTTP_POST_HPP_
