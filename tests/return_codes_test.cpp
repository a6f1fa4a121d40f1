// SPDX-License-Identifier: MIT
// wire/return_codes.hpp without a server: every libmemcached code a read or
// write can answer lands in the Errc a caller acts on, and keep_fetch_code
// only ever raises a zero count.

#include "memshard/wire/return_codes.hpp"

#include <libmemcached-1.0/memcached.h>

#include <cerrno>
#include <utility>

#include "gtest/gtest.h"
#include "memshard/client/result.hpp"

namespace return_codes_test {
namespace {

using memshard::Errc;
using memshard::detail::to_errc;

TEST(ReturnCodesTest, EachCodeMeansWhatACallerActsOn) {
  const std::pair<memcached_return_t, Errc> table[] = {
      {MEMCACHED_SUCCESS, Errc::kOk},
      {MEMCACHED_STORED, Errc::kOk},
      {MEMCACHED_DELETED, Errc::kOk},
      {MEMCACHED_END, Errc::kOk},
      {MEMCACHED_NOTFOUND, Errc::kNotFound},
      {MEMCACHED_NOTSTORED, Errc::kNotStored},
      {MEMCACHED_DATA_EXISTS, Errc::kExists},
      {MEMCACHED_E2BIG, Errc::kValueTooLarge},
      {MEMCACHED_TIMEOUT, Errc::kTimeout},
      {MEMCACHED_CONNECTION_FAILURE, Errc::kConnectionFailure},
      {MEMCACHED_HOST_LOOKUP_FAILURE, Errc::kConnectionFailure},
      {MEMCACHED_READ_FAILURE, Errc::kConnectionFailure},
      {MEMCACHED_WRITE_FAILURE, Errc::kConnectionFailure},
      {MEMCACHED_ERRNO, Errc::kConnectionFailure},
      {MEMCACHED_SERVER_MARKED_DEAD, Errc::kConnectionFailure},
      {MEMCACHED_SERVER_TEMPORARILY_DISABLED, Errc::kConnectionFailure},
      // MEMCACHED_ERROR (an ERROR line) shares its value with this one.
      {MEMCACHED_CONNECTION_SOCKET_CREATE_FAILURE, Errc::kConnectionFailure},
      {MEMCACHED_CLIENT_ERROR, Errc::kInvalidArgument},
      {MEMCACHED_BAD_KEY_PROVIDED, Errc::kInvalidArgument},
      {MEMCACHED_SERVER_ERROR, Errc::kServerError},
      {MEMCACHED_MEMORY_ALLOCATION_FAILURE, Errc::kServerError},
      {MEMCACHED_UNKNOWN_READ_FAILURE, Errc::kProtocolError},
      {MEMCACHED_PROTOCOL_ERROR, Errc::kProtocolError},
      // Queued in the client, not acknowledged: never "stored".
      {MEMCACHED_BUFFERED, Errc::kProtocolError},
      {MEMCACHED_AUTH_FAILURE, Errc::kAuthFailure},
      {MEMCACHED_AUTH_PROBLEM, Errc::kAuthFailure},
      {MEMCACHED_AUTH_CONTINUE, Errc::kAuthFailure},
  };
  for (const auto& [rc, code] : table) {
    EXPECT_EQ(to_errc(rc), code) << memcached_strerror(nullptr, rc);
  }
}

TEST(ReturnCodesTest, AnAuthenticationFailureNeverCountsAgainstAServer) {
  EXPECT_FALSE(memshard::is_server_failure(Errc::kAuthFailure));
  EXPECT_EQ(memshard::to_string(Errc::kAuthFailure), "auth_failure");
}

TEST(ReturnCodesTest, OnlyTimeoutsAndConnectionFailuresCountAgainstAServer) {
  for (int rc = 0; rc < MEMCACHED_MAXIMUM_RETURN; ++rc) {
    const auto code = static_cast<memcached_return_t>(rc);
    const Errc errc = to_errc(code);
    EXPECT_EQ(memshard::is_server_failure(errc),
              errc == Errc::kTimeout || errc == Errc::kConnectionFailure)
        << memcached_strerror(nullptr, code);
  }
  EXPECT_FALSE(memshard::is_server_failure(to_errc(MEMCACHED_NOTFOUND)));
  EXPECT_TRUE(memshard::is_server_failure(to_errc(MEMCACHED_TIMEOUT)));
}

// libmemcached answers a bare FAILURE when the replies it reads before a
// blocked write find the connection reset: only the errno says so.
TEST(ReturnCodesTest, ABareFailureOnAResetConnectionIsAConnectionFailure) {
  for (const int error : {ECONNRESET, EPIPE, ECONNREFUSED, ENOTCONN, ETIMEDOUT, EHOSTUNREACH}) {
    EXPECT_EQ(to_errc(MEMCACHED_FAILURE, error), Errc::kConnectionFailure) << error;
    EXPECT_TRUE(memshard::is_server_failure(to_errc(MEMCACHED_FAILURE, error))) << error;
  }
  // Without a socket's errno a FAILURE stays what it was.
  for (const int error : {0, EINVAL, ENOMEM, EAGAIN}) {
    EXPECT_EQ(to_errc(MEMCACHED_FAILURE, error), to_errc(MEMCACHED_FAILURE)) << error;
  }
  EXPECT_EQ(to_errc(MEMCACHED_FAILURE), Errc::kProtocolError);
  // The errno never changes any other code: a miss on a reset socket is a miss.
  for (int rc = 0; rc < MEMCACHED_MAXIMUM_RETURN; ++rc) {
    const auto code = static_cast<memcached_return_t>(rc);
    if (code != MEMCACHED_FAILURE) {
      EXPECT_EQ(to_errc(code, ECONNRESET), to_errc(code)) << memcached_strerror(nullptr, code);
    }
  }
}

TEST(ReturnCodesTest, KeepFetchCodeOnlyRaisesAZeroCount) {
  memcached_result_st result{};
  result.count = 0;
  memshard::detail::keep_fetch_code(result);
  EXPECT_EQ(result.count, 1U);
  result.count = 7;
  memshard::detail::keep_fetch_code(result);
  EXPECT_EQ(result.count, 7U);
}

TEST(ReturnCodesTest, AnIncrIsDoneOnlyWithANumber) {
  using memshard::detail::numeric_reply;
  EXPECT_EQ(numeric_reply(MEMCACHED_SUCCESS), MEMCACHED_SUCCESS);
  // Success lines of other commands carry no number.
  for (const memcached_return_t rc : {MEMCACHED_STORED, MEMCACHED_DELETED, MEMCACHED_END}) {
    EXPECT_EQ(numeric_reply(rc), memshard::detail::kStrayReply) << memcached_strerror(nullptr, rc);
    EXPECT_EQ(to_errc(numeric_reply(rc)), Errc::kProtocolError);
  }
  // Failures stay what they are.
  for (const memcached_return_t rc :
       {MEMCACHED_NOTFOUND, MEMCACHED_CLIENT_ERROR, MEMCACHED_TIMEOUT, MEMCACHED_SERVER_ERROR}) {
    EXPECT_EQ(numeric_reply(rc), rc) << memcached_strerror(nullptr, rc);
  }
}

TEST(ReturnCodesTest, ADeleteSucceedsOnlyOnDeleted) {
  using memshard::detail::delete_reply;
  for (const memcached_return_t rc : {MEMCACHED_SUCCESS, MEMCACHED_DELETED}) {
    EXPECT_EQ(delete_reply(rc), rc) << memcached_strerror(nullptr, rc);
  }
  // Success lines of other commands never report the key deleted.
  for (const memcached_return_t rc : {MEMCACHED_STORED, MEMCACHED_END}) {
    EXPECT_EQ(delete_reply(rc), memshard::detail::kStrayReply) << memcached_strerror(nullptr, rc);
    EXPECT_EQ(to_errc(delete_reply(rc)), Errc::kProtocolError);
  }
  for (const memcached_return_t rc : {MEMCACHED_NOTFOUND, MEMCACHED_TIMEOUT}) {
    EXPECT_EQ(delete_reply(rc), rc) << memcached_strerror(nullptr, rc);
  }
}

}  // namespace
}  // namespace return_codes_test
