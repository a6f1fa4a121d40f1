// SPDX-License-Identifier: MIT
// can_fail_over(): false for a Locator without locate_avoiding, a wrapper's
// own answer when it has one, true for every other FailoverLocator.
#include "memshard/placement/locators/locator.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/server.hpp"

namespace locator_test {
namespace {

// A Locator with no locate_avoiding.
struct PlainLocator {
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return key.size() % 3;
  }
  [[nodiscard]] auto size() const noexcept -> std::size_t { return 3; }
};

// A FailoverLocator that says whether it can fail over, as wrappers do.
struct Wrapper {
  bool answer;
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return key.size() % 3;
  }
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> /*avoid*/) const noexcept
      -> std::size_t {
    return locate(key);
  }
  [[nodiscard]] auto can_fail_over() const noexcept -> bool { return answer; }
  [[nodiscard]] auto size() const noexcept -> std::size_t { return 3; }
};

static_assert(!memshard::FailoverLocator<PlainLocator>);
static_assert(memshard::FailoverLocator<Wrapper>);

TEST(CanFailOverTest, FalseWithoutLocateAvoiding) {
  EXPECT_FALSE(memshard::can_fail_over(PlainLocator{}));
}

TEST(CanFailOverTest, TrueForFailoverLocators) {
  const auto servers = memshard::parse_servers("a:11211,b:11211,c:11211");
  EXPECT_TRUE(memshard::can_fail_over(memshard::ModuloLocator<memshard::Crc32>(servers)));
  EXPECT_TRUE(memshard::can_fail_over(memshard::KetamaLocator<memshard::Crc32>(servers)));
}

TEST(CanFailOverTest, AsksALocatorThatSays) {
  EXPECT_FALSE(memshard::can_fail_over(Wrapper{false}));
  EXPECT_TRUE(memshard::can_fail_over(Wrapper{true}));
}

}  // namespace
}  // namespace locator_test
