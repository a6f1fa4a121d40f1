// SPDX-License-Identifier: MIT
// any_locator.hpp: AnyLocator over each kind of locator, and the AnyLocator of
// every profile, through the locator conformance checks.
#include "memshard/placement/locators/any_locator.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/locators/continuum_locators.hpp"
#include "memshard/placement/locators/hash_tag.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/locators/rendezvous_locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"
#include "support/locator_conformance.hpp"

namespace memshard::testing {

template <class Inner>
struct AnyOf {
  using Locator = AnyLocator;
  static auto make(std::span<const Server> servers) -> Locator {
    return AnyLocator(Inner(servers), "conformance");
  }
  static constexpr bool kWeights = true;
};

// A Locator with neither locate_many nor locate_avoiding: the first byte of
// the key, modulo the servers.
struct FirstByte {
  explicit FirstByte(std::span<const Server> servers) : size_(servers.size()) {}
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return key.empty() ? 0 : static_cast<unsigned char>(key.front()) % size_;
  }
  [[nodiscard]] auto size() const noexcept -> std::size_t { return size_; }

 private:
  std::size_t size_;
};

using Anys =
    ::testing::Types<AnyOf<KetamaLocator<Md5>>, AnyOf<KetamaLocator<Crc32>>,
                     AnyOf<ModuloLocator<Crc32>>, AnyOf<CompatContinuumLocator<>>,
                     AnyOf<BucketedRingLocator<Crc32>>, AnyOf<RendezvousLocator>, AnyOf<FirstByte>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Any, LocatorConformanceTest, Anys);
INSTANTIATE_TYPED_TEST_SUITE_P(Any, BatchLocatorConformanceTest, Anys);

// Failover is only as good as the wrapped locator's: FirstByte has none.
using FailoverAnys = ::testing::Types<AnyOf<KetamaLocator<Md5>>, AnyOf<ModuloLocator<Crc32>>,
                                      AnyOf<CompatContinuumLocator<>>,
                                      AnyOf<BucketedRingLocator<Crc32>>, AnyOf<RendezvousLocator>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Any, FailoverLocatorConformanceTest, FailoverAnys);

using ConsistentAnys = ::testing::Types<AnyOf<RendezvousLocator>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Any, ConsistentLocatorConformanceTest, ConsistentAnys);

/// ProfileLocatorConformanceTest: the AnyLocator of one profile (the
/// parameter is its name) through the same checks.
class ProfileLocatorConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  [[nodiscard]] auto make() const {
    return [name = GetParam()](std::span<const Server> servers) {
      return make_locator(name, servers);
    };
  }
};

auto profile_names() -> std::vector<std::string> {
  std::vector<std::string> names;
  for (const ProfileInfo& profile : kProfiles) {
    names.emplace_back(profile.name);
  }
  return names;
}

TEST_P(ProfileLocatorConformanceTest, EveryIndexIsBelowSize) {
  expect_indexes_below_size(make(), false);
}

TEST_P(ProfileLocatorConformanceTest, SameArgumentsSamePlacement) {
  expect_deterministic(make(), false);
}

TEST_P(ProfileLocatorConformanceTest, LocateManyEqualsLocate) {
  expect_locate_many_equals_locate(make(), false);
}

TEST_P(ProfileLocatorConformanceTest, LiveServersKeepTheirKeys) {
  expect_avoiding_keeps_live_servers_keys(make(), false);
}

TEST_P(ProfileLocatorConformanceTest, EveryServerAvoidedAnswersLocate) {
  expect_all_avoided_answers_locate(make(), false);
}

TEST_P(ProfileLocatorConformanceTest, EjectingOneServerMovesOnlyItsKeys) {
  expect_ejecting_one_moves_only_its_keys(make(), false);
}

INSTANTIATE_TEST_SUITE_P(Profiles, ProfileLocatorConformanceTest,
                         ::testing::ValuesIn(profile_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) {
                             c = c == '-' ? '_' : c;
                           }
                           return name;
                         });

}  // namespace memshard::testing

namespace any_locator_test {
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
}  // namespace any_locator_test
