// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_ERRORS_HPP_
#define MEMSHARD_ERRORS_HPP_

// errors.hpp: the exception thrown for configuration mistakes.
//
// Bad configuration (a malformed server string, an empty server list, a zero
// weight, an unknown profile or hash name) is a programmer or operator error and
// throws `ConfigError` where it is made: at parse time or at construction.
// Per-operation outcomes are never exceptions.

#include <stdexcept>
#include <string>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// ConfigError: a configuration value was rejected. `what()` reads
/// `memshard: <what>: <value>`.
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_ERRORS_HPP_
