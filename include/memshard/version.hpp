// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_VERSION_HPP_
#define MEMSHARD_VERSION_HPP_

// version.hpp: the library version. tests/version_test.cpp keeps these equal to
// the project(VERSION) in CMakeLists.txt.

#define MEMSHARD_VERSION_MAJOR 0
#define MEMSHARD_VERSION_MINOR 1
#define MEMSHARD_VERSION_PATCH 0

// MEMSHARD_ABI_NAMESPACE: the inline namespace every memshard entity lives in,
// `v<major>_<minor>` (v0_1): while the version is 0.x a minor version may
// change the ABI, and two of them linked into one program then stay apart
// instead of breaking the one-definition rule.
// Code names memshard::X; the linker sees memshard::v0_1::X. Headers open it
// as `namespace memshard { inline namespace MEMSHARD_ABI_NAMESPACE {` (the
// C++20 `memshard::inline v0_1` form trips clang-format 14).
#define MEMSHARD_DETAIL_ABI_NAME_(major, minor) v##major##_##minor
#define MEMSHARD_DETAIL_ABI_NAME(major, minor) MEMSHARD_DETAIL_ABI_NAME_(major, minor)
#define MEMSHARD_ABI_NAMESPACE \
  MEMSHARD_DETAIL_ABI_NAME(MEMSHARD_VERSION_MAJOR, MEMSHARD_VERSION_MINOR)

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// The version as `major * 10000 + minor * 100 + patch`.
inline constexpr int kVersion =
    MEMSHARD_VERSION_MAJOR * 10000 + MEMSHARD_VERSION_MINOR * 100 + MEMSHARD_VERSION_PATCH;

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_VERSION_HPP_
