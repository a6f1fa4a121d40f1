// SPDX-License-Identifier: MIT
#include "memshard/version.hpp"

#include <string>
#include <type_traits>
#include <typeinfo>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"

#define MEMSHARD_TEST_STRING_(x) #x
#define MEMSHARD_TEST_STRING(x) MEMSHARD_TEST_STRING_(x)

namespace version_test {
namespace {

TEST(VersionTest, HeaderMatchesTheCMakeProjectVersion) {
  const std::string header = std::to_string(MEMSHARD_VERSION_MAJOR) + "." +
                             std::to_string(MEMSHARD_VERSION_MINOR) + "." +
                             std::to_string(MEMSHARD_VERSION_PATCH);
  EXPECT_EQ(header, MEMSHARD_PROJECT_VERSION);
  EXPECT_EQ(memshard::kVersion,
            MEMSHARD_VERSION_MAJOR * 10000 + MEMSHARD_VERSION_MINOR * 100 + MEMSHARD_VERSION_PATCH);
}

// Everything lives in the inline namespace v<major>_<minor>, so the linker
// keeps two minor versions apart while callers write memshard::X.
static_assert(std::is_same_v<memshard::Server, memshard::MEMSHARD_ABI_NAMESPACE::Server>);
static_assert(std::is_same_v<memshard::ShardedClient<memshard::AnyLocator>,
                             memshard::MEMSHARD_ABI_NAMESPACE::ShardedClient<
                                 memshard::MEMSHARD_ABI_NAMESPACE::AnyLocator>>);
static_assert(std::is_same_v<memshard::detail::ClientCore,
                             memshard::MEMSHARD_ABI_NAMESPACE::detail::ClientCore>);
static_assert(std::is_same_v<decltype(memshard::profiles::kKetamaPoints),
                             decltype(memshard::MEMSHARD_ABI_NAMESPACE::profiles::kKetamaPoints)>);

TEST(VersionTest, TheAbiNamespaceFollowsTheMajorAndMinorVersion) {
  const std::string expected = std::string("v")
                                   .append(std::to_string(MEMSHARD_VERSION_MAJOR))
                                   .append("_")
                                   .append(std::to_string(MEMSHARD_VERSION_MINOR));
  EXPECT_EQ(MEMSHARD_TEST_STRING(MEMSHARD_ABI_NAMESPACE), expected);
  // The mangled name carries it.
  EXPECT_NE(std::string(typeid(memshard::Server).name()).find(expected), std::string::npos)
      << typeid(memshard::Server).name();
}

}  // namespace
}  // namespace version_test
