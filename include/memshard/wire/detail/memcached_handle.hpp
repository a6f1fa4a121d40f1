// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_DETAIL_MEMCACHED_HANDLE_HPP_
#define MEMSHARD_WIRE_DETAIL_MEMCACHED_HANDLE_HPP_

// wire/detail/memcached_handle.hpp: MemcachedHandle, an owning, move-only
// libmemcached handle for exactly one server.
//
// One server per handle means libmemcached never hashes or distributes: the
// placement is memshard's. It also keeps libmemcached's own 100-server limit of
// its consistent distributions out of the way.

#include <libmemcached-1.0/memcached.h>
#include <string.h>  // explicit_bzero

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "memshard/client/client_options.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

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

/// authenticate: gives `memc` the SASL credentials of `options`, if any: each
/// connection it opens then authenticates before its first request (with
/// libmemcached's own once-per-process sasl_client_init). libmemcached keeps
/// a copy, freed by memcached_free. Throws ConfigError when this
/// libmemcached was built without SASL, std::bad_alloc when it cannot copy.
inline void authenticate(memcached_st* memc, const ClientOptions& options) {
  if (!options.sasl) {
    return;
  }
  const memcached_return_t rc = memcached_set_sasl_auth_data(memc, options.sasl->username.c_str(),
                                                             options.sasl->password.c_str());
  if (rc == MEMCACHED_NOT_SUPPORTED) {
    throw_config_error("SASL authentication is not supported by this libmemcached",
                       "built without libsasl2");
  }
  if (memcached_failed(rc)) {
    throw std::bad_alloc();
  }
}

/// forget_password: overwrites libmemcached's copy of the SASL password in
/// `memc` (before memcached_free, which frees it without clearing it).
inline void forget_password(memcached_st* memc) noexcept {
#if defined(LIBMEMCACHED_WITH_SASL_SUPPORT) && LIBMEMCACHED_WITH_SASL_SUPPORT
  sasl_callback_t* callbacks = memcached_get_sasl_callbacks(memc);
  for (std::size_t i = 0; callbacks != nullptr && callbacks[i].id != SASL_CB_LIST_END; ++i) {
    if (callbacks[i].id == SASL_CB_PASS && callbacks[i].context != nullptr) {
      auto* secret = static_cast<sasl_secret_t*>(callbacks[i].context);
      explicit_bzero(secret->data, secret->len);
    }
  }
#else
  (void)memc;
#endif
}

/// HandleCore: a memcached_st configured with a client's options, and the
/// caller-owned result its fetches reuse. Being caller-owned, libmemcached
/// resets the result at the end of a reply instead of freeing it. Neither
/// copyable nor movable: the result's address must not change. With SASL
/// credentials (ClientOptions::sasl) every connection authenticates. Creation
/// failure throws std::bad_alloc, or ConfigError when libmemcached has no
/// SASL support.
class HandleCore {
 public:
  explicit HandleCore(const ClientOptions& options);
  HandleCore(const HandleCore&) = delete;
  auto operator=(const HandleCore&) -> HandleCore& = delete;
  HandleCore(HandleCore&&) = delete;
  auto operator=(HandleCore&&) -> HandleCore& = delete;
  ~HandleCore();

  [[nodiscard]] auto memc() const noexcept -> memcached_st* { return memc_; }

  /// result: the fetch result, created on first use (nullptr if libmemcached
  /// cannot).
  [[nodiscard]] auto result() noexcept -> memcached_result_st*;

  /// add: adds `server` to the handle; ConfigError if libmemcached refuses it.
  void add(const Server& server);

 private:
  memcached_st* memc_;
  memcached_result_st result_{};
  bool has_result_ = false;
  bool has_sasl_ = false;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE HandleCore::HandleCore(const ClientOptions& options)
    : memc_(memcached_create(nullptr)) {
  if (memc_ == nullptr) {
    throw std::bad_alloc();
  }
  configure(memc_, options);
  try {
    authenticate(memc_, options);
  } catch (...) {
    memcached_free(memc_);
    throw;
  }
  has_sasl_ = options.sasl.has_value();
}

MEMSHARD_DETAIL_INLINE HandleCore::~HandleCore() {
  if (has_result_) {
    memcached_result_free(&result_);  // before the handle it belongs to
  }
  if (has_sasl_) {
    forget_password(memc_);
  }
  memcached_free(memc_);
}

MEMSHARD_DETAIL_INLINE auto HandleCore::result() noexcept -> memcached_result_st* {
  if (!has_result_) {
    has_result_ = memcached_result_create(memc_, &result_) != nullptr;
  }
  return has_result_ ? &result_ : nullptr;
}

MEMSHARD_DETAIL_INLINE void HandleCore::add(const Server& server) {
  if (memcached_failed(memcached_server_add(memc_, server.host.c_str(), server.port))) {
    throw_config_error("libmemcached refused the server", server.endpoint());
  }
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

/// MemcachedHandle: one libmemcached handle configured for one server, and the
/// result object its fetches reuse. Creation failure throws; moves are
/// noexcept and leave the source empty.
class MemcachedHandle {
 public:
  MemcachedHandle() = default;

  MemcachedHandle(const Server& server, const ClientOptions& options);

  [[nodiscard]] auto native_handle() const noexcept -> memcached_st* {
    return core_ ? core_->memc() : nullptr;
  }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(core_); }

  /// result: the caller-owned memcached_result_st for this handle's fetches
  /// (nullptr when empty or if libmemcached cannot make one).
  [[nodiscard]] auto result() noexcept -> memcached_result_st* {
    return core_ ? core_->result() : nullptr;
  }

  /// reset: frees the result, closes the connection and frees the handle.
  void reset() noexcept { core_.reset(); }

 private:
  std::unique_ptr<HandleCore> core_;  // on the heap, so the result survives moves
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE MemcachedHandle::MemcachedHandle(const Server& server,
                                                        const ClientOptions& options)
    : core_(std::make_unique<HandleCore>(options)) {
  // Health is memshard's business: libmemcached's own retry clock (whole
  // seconds) must never refuse a request memshard decided to send.
  (void)memcached_behavior_set(core_->memc(), MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 0);
  core_->add(server);
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_DETAIL_MEMCACHED_HANDLE_HPP_
