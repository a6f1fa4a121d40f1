// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_DETAIL_THROW_HPP_
#define MEMSHARD_DETAIL_THROW_HPP_

// detail/throw.hpp: cold throw sites, so that hot paths stay small.

#include <cstdlib>
#include <string>
#include <string_view>

#include "memshard/errors.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// throw_config_error: throws ConfigError("memshard: <what>: <value>"), or
/// aborts when exceptions are disabled.
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] inline void throw_config_error(
    std::string_view what, std::string_view value) {
  std::string message = "memshard: ";
  message.append(what);
  message.append(": ");
  message.append(value);
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  throw ConfigError(message);
#else
  std::abort();
#endif
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_DETAIL_THROW_HPP_
