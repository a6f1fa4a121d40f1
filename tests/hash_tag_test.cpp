// SPDX-License-Identifier: MIT
// HashTagLocator: can_fail_over() is the wrapped locator's answer.
#include "memshard/hash_tag.hpp"

#include <cstddef>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/any_locator.hpp"
#include "memshard/crc32.hpp"
#include "memshard/locator.hpp"
#include "memshard/modulo_locator.hpp"
#include "memshard/server.hpp"

namespace {

using memshard::AnyLocator;
using memshard::HashTag;
using memshard::HashTagLocator;
using Modulo = memshard::ModuloLocator<memshard::Crc32>;

// A Locator with no locate_avoiding.
struct PlainLocator {
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return key.size() % 3;
  }
  [[nodiscard]] auto size() const noexcept -> std::size_t { return 3; }
};

TEST(HashTagLocatorTest, CanFailOverIsTheWrappedLocators) {
  const HashTag tag = HashTag::parse("{}");
  const Modulo modulo(memshard::parse_servers("a:11211,b:11211,c:11211"));
  static_assert(memshard::FailoverLocator<HashTagLocator<PlainLocator>>);
  EXPECT_FALSE(HashTagLocator<PlainLocator>(PlainLocator{}, tag).can_fail_over());
  EXPECT_FALSE(memshard::can_fail_over(HashTagLocator<PlainLocator>(PlainLocator{}, tag)));
  EXPECT_TRUE(HashTagLocator<Modulo>(modulo, tag).can_fail_over());
  EXPECT_TRUE(memshard::can_fail_over(HashTagLocator<Modulo>(modulo, tag)));
  EXPECT_FALSE(HashTagLocator<AnyLocator>(AnyLocator(PlainLocator{}), tag).can_fail_over());
  EXPECT_TRUE(HashTagLocator<AnyLocator>(AnyLocator(modulo), tag).can_fail_over());
}

}  // namespace
