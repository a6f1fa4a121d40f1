// SPDX-License-Identifier: MIT
// hashers.hpp: the lookup from a hash name to its hasher. (Each hasher has its
// own test file: crc32_test, md5_test, fnv_test, one_at_a_time_test, ...)
#include "memshard/placement/hash/hashers.hpp"

#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace hashers_test {
namespace {

using memshard::OneAtATime;

TEST(VisitHasherTest, EveryNameResolvesToTheHasherOfThatName) {
  for (const std::string_view name : memshard::kHashNames) {
    const std::string_view resolved =
        memshard::visit_hasher(name, [](auto hash) { return decltype(hash)::name(); });
    EXPECT_EQ(resolved, name);
  }
  EXPECT_EQ(memshard::visit_hasher("default", [](auto hash) { return decltype(hash)::name(); }),
            OneAtATime::name());
}

TEST(VisitHasherTest, UnknownNameThrowsListingTheKnownOnes) {
  try {
    (void)memshard::visit_hasher("sha1", [](auto hash) { return hash("x"); });
    FAIL() << "no exception";
  } catch (const memshard::ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("sha1"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("one_at_a_time"), std::string::npos);
  }
}

}  // namespace
}  // namespace hashers_test
