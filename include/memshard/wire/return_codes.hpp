// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_RETURN_CODES_HPP_
#define MEMSHARD_WIRE_RETURN_CODES_HPP_

// wire/return_codes.hpp: libmemcached's return codes as memshard's Errc, and
// the one workaround every read path needs to keep them (keep_fetch_code).

#include <libmemcached-1.0/memcached.h>

#include <cerrno>
#include <string_view>

#include "memshard/client/result.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

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

/// kStrayReply: the code of a reply that answers some other request (a value
/// for a key not asked for, a second value): a protocol error, after which
/// the connection is closed (ClientCore::finish).
inline constexpr memcached_return_t kStrayReply = MEMCACHED_PROTOCOL_ERROR;

/// numeric_reply: `rc` for an incr or decr, whose one success is a number
/// (MEMCACHED_SUCCESS): another success code (a STORED or DELETED line, which
/// libmemcached accepts there and answers with no number) is kStrayReply.
[[nodiscard]] inline auto numeric_reply(memcached_return_t rc) noexcept -> memcached_return_t {
  return rc != MEMCACHED_SUCCESS && memcached_success(rc) ? kStrayReply : rc;
}

/// delete_reply: `rc` for a delete, whose one success is DELETED (which
/// libmemcached answers as MEMCACHED_SUCCESS or MEMCACHED_DELETED): another
/// success code (a STORED, END or OK line, which libmemcached accepts there)
/// is kStrayReply, never a key reported deleted.
[[nodiscard]] inline auto delete_reply(memcached_return_t rc) noexcept -> memcached_return_t {
  return rc != MEMCACHED_SUCCESS && rc != MEMCACHED_DELETED && memcached_success(rc) ? kStrayReply
                                                                                     : rc;
}

/// delete_key: deletes `key` on `memc`'s server, its reply read by
/// delete_reply (every delete of the client goes through here).
[[nodiscard]] inline auto delete_key(memcached_st* memc, std::string_view key) noexcept
    -> memcached_return_t {
  return delete_reply(memcached_delete(memc, key.data(), key.size(), 0));
}

/// to_errc: libmemcached's return code as an Errc.
[[nodiscard]] inline auto to_errc(memcached_return_t rc) noexcept -> Errc {
  switch (rc) {
    case MEMCACHED_SUCCESS:
    case MEMCACHED_STORED:
    case MEMCACHED_DELETED:
    case MEMCACHED_END:
      return Errc::kOk;
    case MEMCACHED_BUFFERED:
      // A write queued in the client (BUFFER_REQUESTS, which memshard never
      // sets), not acknowledged by the server: never reported as stored.
      return Errc::kProtocolError;
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
    case MEMCACHED_AUTH_FAILURE:
    case MEMCACHED_AUTH_PROBLEM:
    case MEMCACHED_AUTH_CONTINUE:
      return Errc::kAuthFailure;
    case MEMCACHED_UNKNOWN_READ_FAILURE:
      // A reply libmemcached could not interpret, such as a binary-protocol
      // error status it does not know; socket failures have their own codes.
    default:
      return Errc::kProtocolError;
  }
}

/// is_connection_errno: `error` is the socket's own failure (the peer reset
/// or closed it, the route is gone, the connection timed out), not a
/// property of the request.
[[nodiscard]] constexpr auto is_connection_errno(int error) noexcept -> bool {
  switch (error) {
    case ECONNRESET:
    case ECONNABORTED:
    case ECONNREFUSED:
    case EPIPE:
    case ENOTCONN:
    case ESHUTDOWN:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETUNREACH:
    case ENETDOWN:
    case ENETRESET:
      return true;
    default:
      return false;
  }
}

/// to_errc: `rc` as an Errc, where `error` is the errno libmemcached recorded
/// with it. A write that would block makes libmemcached read the replies
/// still owed first; when that read finds the connection reset, it answers a
/// bare MEMCACHED_FAILURE, whose errno alone says the server's connection
/// failed: a connection failure, which counts toward ejection.
[[nodiscard]] inline auto to_errc(memcached_return_t rc, int error) noexcept -> Errc {
  if (rc == MEMCACHED_FAILURE && is_connection_errno(error)) {
    return Errc::kConnectionFailure;
  }
  return to_errc(rc);
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_RETURN_CODES_HPP_
