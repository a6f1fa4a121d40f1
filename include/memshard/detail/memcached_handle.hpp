// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_DETAIL_MEMCACHED_HANDLE_HPP_
#define MEMSHARD_DETAIL_MEMCACHED_HANDLE_HPP_

// detail/memcached_handle.hpp: MemcachedHandle, an owning, move-only
// libmemcached handle for exactly one server.
//
// One server per handle means libmemcached never hashes or distributes: the
// placement is memshard's. It also keeps libmemcached's own 100-server limit of
// its consistent distributions out of the way.

#include <libmemcached-1.0/memcached.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "memshard/client_options.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/server.hpp"

namespace memshard::detail {

/// configure: the behaviors every handle of a client shares.
inline void configure(memcached_st* memc, const ClientOptions& options) noexcept {
  auto set = [memc](memcached_behavior_t flag, std::uint64_t value) {
    (void)memcached_behavior_set(memc, flag, value);
  };
  // Non-blocking sockets are what make the connect timeout effective.
  set(MEMCACHED_BEHAVIOR_NO_BLOCK, 1);
  set(MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT,
      static_cast<std::uint64_t>(options.connect_timeout.count()));
  set(MEMCACHED_BEHAVIOR_POLL_TIMEOUT, static_cast<std::uint64_t>(options.io_timeout.count()));
  set(MEMCACHED_BEHAVIOR_SND_TIMEOUT,
      static_cast<std::uint64_t>(options.io_timeout.count()) * 1000U);
  set(MEMCACHED_BEHAVIOR_RCV_TIMEOUT,
      static_cast<std::uint64_t>(options.io_timeout.count()) * 1000U);
  set(MEMCACHED_BEHAVIOR_TCP_NODELAY, options.tcp_nodelay ? 1 : 0);
  set(MEMCACHED_BEHAVIOR_TCP_KEEPALIVE, options.tcp_keepalive ? 1 : 0);
  set(MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, options.protocol == Protocol::kBinary ? 1 : 0);
  set(MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
}

/// MemcachedHandle: one libmemcached handle configured for one server, and the
/// result object its fetches reuse. Creation failure throws std::bad_alloc
/// (libmemcached's only failure there); moves are noexcept and leave the source
/// empty.
class MemcachedHandle {
 public:
  MemcachedHandle() = default;

  MemcachedHandle(const Server& server, const ClientOptions& options)
      : parts_(std::make_unique<Parts>()) {
    parts_->memc = memcached_create(nullptr);
    if (parts_->memc == nullptr) {
      throw std::bad_alloc();
    }
    memcached_st* memc = parts_->memc;
    configure(memc, options);
    // Health is memshard's business: libmemcached's own retry clock (whole
    // seconds) must never refuse a request memshard decided to send.
    (void)memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 0);
    const memcached_return_t rc = memcached_server_add(memc, server.host.c_str(), server.port);
    if (memcached_failed(rc)) {
      throw_config_error("libmemcached refused the server", server.endpoint());
    }
  }

  [[nodiscard]] auto native_handle() const noexcept -> memcached_st* {
    return parts_ ? parts_->memc : nullptr;
  }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(parts_); }

  /// result: a caller-owned memcached_result_st for this handle's fetches,
  /// created on first use (nullptr if libmemcached cannot). Being caller-owned,
  /// libmemcached resets it at the end of a reply instead of freeing it.
  [[nodiscard]] auto result() noexcept -> memcached_result_st* {
    if (!parts_) {
      return nullptr;
    }
    if (!parts_->has_result) {
      parts_->has_result = memcached_result_create(parts_->memc, &parts_->result) != nullptr;
    }
    return parts_->has_result ? &parts_->result : nullptr;
  }

  /// reset: frees the result, closes the connection and frees the handle.
  void reset() noexcept { parts_.reset(); }

 private:
  // Heap-allocated so that the result's address survives moves.
  struct Parts {
    Parts() = default;
    Parts(const Parts&) = delete;
    auto operator=(const Parts&) -> Parts& = delete;
    Parts(Parts&&) = delete;
    auto operator=(Parts&&) -> Parts& = delete;
    ~Parts() {
      if (has_result) {
        memcached_result_free(&result);  // before the handle it belongs to
      }
      if (memc != nullptr) {
        memcached_free(memc);
      }
    }
    memcached_st* memc = nullptr;
    memcached_result_st result{};
    bool has_result = false;
  };

  std::unique_ptr<Parts> parts_;
};

}  // namespace memshard::detail

#endif  // MEMSHARD_DETAIL_MEMCACHED_HANDLE_HPP_
