// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_VERSION_HPP_
#define MEMSHARD_VERSION_HPP_

// version.hpp: the library version. tests/version_test.cpp keeps these equal to
// the project(VERSION) in CMakeLists.txt.

#define MEMSHARD_VERSION_MAJOR 0
#define MEMSHARD_VERSION_MINOR 1
#define MEMSHARD_VERSION_PATCH 0

namespace memshard {

/// The version as `major * 10000 + minor * 100 + patch`.
inline constexpr int kVersion =
    MEMSHARD_VERSION_MAJOR * 10000 + MEMSHARD_VERSION_MINOR * 100 + MEMSHARD_VERSION_PATCH;

}  // namespace memshard

#endif  // MEMSHARD_VERSION_HPP_
