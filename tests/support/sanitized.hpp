// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_SANITIZED_HPP_
#define MEMSHARD_TESTS_SUPPORT_SANITIZED_HPP_

// support/sanitized.hpp: kSanitized, whether this test is built with
// AddressSanitizer or ThreadSanitizer (GCC's __SANITIZE_*__ macros, clang's
// __has_feature), which make every call several times slower: timing bounds
// are looser and sweeps shorter there.

namespace memshard::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_SANITIZED_HPP_
