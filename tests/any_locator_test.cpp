// SPDX-License-Identifier: MIT
// AnyLocator: can_fail_over() follows the wrapped locator, through nested
// AnyLocators and HashTagLocators, and every profile can fail over.
#include "memshard/any_locator.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/crc32.hpp"
#include "memshard/hash_tag.hpp"
#include "memshard/locator.hpp"
#include "memshard/modulo_locator.hpp"
#include "memshard/profiles.hpp"
#include "memshard/server.hpp"

namespace {

using memshard::AnyLocator;
using memshard::HashTag;
using memshard::HashTagLocator;

// A Locator with no locate_avoiding.
struct PlainLocator {
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return key.size() % 3;
  }
  [[nodiscard]] auto size() const noexcept -> std::size_t { return 3; }
};

auto modulo() -> memshard::ModuloLocator<memshard::Crc32> {
  return memshard::ModuloLocator<memshard::Crc32>(
      memshard::parse_servers("a:11211,b:11211,c:11211"));
}

TEST(AnyLocatorTest, WrappingALocatorWithoutFailoverCannotFailOver) {
  const AnyLocator any(PlainLocator{});
  static_assert(memshard::FailoverLocator<AnyLocator>);  // so the concept cannot tell
  EXPECT_FALSE(any.can_fail_over());
  EXPECT_FALSE(memshard::can_fail_over(any));
  // What failover would get: the key's own server, avoided or not.
  const std::vector<std::uint8_t> avoid = {1, 1, 0};
  EXPECT_EQ(any.locate_avoiding("k", avoid), any.locate("k"));
}

TEST(AnyLocatorTest, WrappingAFailoverLocatorCanFailOver) {
  const AnyLocator any(modulo());
  EXPECT_TRUE(any.can_fail_over());
  EXPECT_TRUE(memshard::can_fail_over(any));
}

TEST(AnyLocatorTest, NestedWrappersGiveTheInnermostAnswer) {
  const HashTag tag = HashTag::parse("{}");
  EXPECT_FALSE(AnyLocator(AnyLocator(PlainLocator{})).can_fail_over());
  EXPECT_TRUE(AnyLocator(AnyLocator(modulo())).can_fail_over());
  EXPECT_FALSE(AnyLocator(HashTagLocator<PlainLocator>(PlainLocator{}, tag)).can_fail_over());
  EXPECT_TRUE(AnyLocator(HashTagLocator<memshard::ModuloLocator<memshard::Crc32>>(modulo(), tag))
                  .can_fail_over());
  EXPECT_FALSE(
      AnyLocator(HashTagLocator<AnyLocator>(AnyLocator(PlainLocator{}), tag)).can_fail_over());
}

TEST(AnyLocatorTest, EveryProfileCanFailOver) {
  const auto servers = memshard::parse_servers("a:11211,b:11211,c:11211");
  for (const memshard::ProfileInfo& profile : memshard::kProfiles) {
    EXPECT_TRUE(memshard::make_locator(profile.name, servers).can_fail_over()) << profile.name;
  }
  memshard::ProfileOptions tagged;
  tagged.hash_tag = "{}";
  EXPECT_TRUE(memshard::make_locator("twemproxy-ketama", servers, tagged).can_fail_over());
}

}  // namespace
