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
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "memshard/client_options.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/server.hpp"

namespace memshard::detail {

/// MemcachedDeleter: frees a memcached_st.
struct MemcachedDeleter {
  void operator()(memcached_st* memc) const noexcept { memcached_free(memc); }
};

/// FreeDeleter: frees a buffer libmemcached allocated with malloc.
struct FreeDeleter {
  void operator()(char* buffer) const noexcept {
    std::free(buffer);  // NOLINT(cppcoreguidelines-no-malloc): libmemcached mallocs
  }
};

/// MemcachedHandle: one libmemcached handle configured for one server.
/// Creation failure throws std::bad_alloc (libmemcached's only failure there);
/// moves are noexcept and leave the source empty.
class MemcachedHandle {
 public:
  MemcachedHandle() = default;

  MemcachedHandle(const Server& server, const ClientOptions& options)
      : memc_(memcached_create(nullptr)) {
    if (!memc_) {
      throw std::bad_alloc();
    }
    auto set = [this](memcached_behavior_t flag, std::uint64_t value) {
      (void)memcached_behavior_set(memc_.get(), flag, value);
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
    // Health is memshard's business: libmemcached's own retry clock (whole
    // seconds) must never refuse a request memshard decided to send.
    set(MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 0);
    const memcached_return_t rc =
        memcached_server_add(memc_.get(), server.host.c_str(), server.port);
    if (memcached_failed(rc)) {
      throw_config_error("libmemcached refused the server", server.endpoint());
    }
  }

  [[nodiscard]] auto native_handle() const noexcept -> memcached_st* { return memc_.get(); }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(memc_); }

  /// reset: closes the connection and frees the handle.
  void reset() noexcept { memc_.reset(); }

 private:
  std::unique_ptr<memcached_st, MemcachedDeleter> memc_;
};

}  // namespace memshard::detail

#endif  // MEMSHARD_DETAIL_MEMCACHED_HANDLE_HPP_
