// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_MULTI_GET_MODES_HPP_
#define MEMSHARD_TESTS_SUPPORT_MULTI_GET_MODES_HPP_

// support/multi_get_modes.hpp: the multi-get modes the client tests run in.

#include "memshard/client/client_options.hpp"

namespace memshard::testing {

/// kMultiGetModes: every MultiGetMode, for tests that loop over them.
inline constexpr MultiGetMode kMultiGetModes[] = {MultiGetMode::kPolled, MultiGetMode::kPerServer};

/// mode_name: the mode as a SCOPED_TRACE line.
inline auto mode_name(MultiGetMode mode) -> const char* {
  return mode == MultiGetMode::kPolled ? "MultiGetMode::kPolled" : "MultiGetMode::kPerServer";
}

/// with_mode: `options` reading multi-gets in `mode`.
inline auto with_mode(ClientOptions options, MultiGetMode mode) -> ClientOptions {
  options.multi_get = mode;
  return options;
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_MULTI_GET_MODES_HPP_
