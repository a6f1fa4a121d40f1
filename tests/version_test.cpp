// SPDX-License-Identifier: MIT
#include "memshard/version.hpp"

#include <string>

#include "gtest/gtest.h"

TEST(VersionTest, HeaderMatchesTheCMakeProjectVersion) {
  const std::string header = std::to_string(MEMSHARD_VERSION_MAJOR) + "." +
                             std::to_string(MEMSHARD_VERSION_MINOR) + "." +
                             std::to_string(MEMSHARD_VERSION_PATCH);
  EXPECT_EQ(header, MEMSHARD_PROJECT_VERSION);
  EXPECT_EQ(memshard::kVersion,
            MEMSHARD_VERSION_MAJOR * 10000 + MEMSHARD_VERSION_MINOR * 100 + MEMSHARD_VERSION_PATCH);
}
