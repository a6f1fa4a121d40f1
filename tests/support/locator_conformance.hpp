// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_LOCATOR_CONFORMANCE_HPP_
#define MEMSHARD_TESTS_SUPPORT_LOCATOR_CONFORMANCE_HPP_

// support/locator_conformance.hpp: typed suites that check the contracts of
// locator.hpp for any locator (the checks themselves: support/locator_checks.hpp).
//
// - LocatorConformanceTest: every Locator (indexes, determinism).
// - BatchLocatorConformanceTest: a BatchLocator (locate_many equals locate).
// - FailoverLocatorConformanceTest: a FailoverLocator (locate_avoiding).
// - ConsistentLocatorConformanceTest: a locator that promises that a server
//   list without one server moves only that server's keys (rings, rendezvous).
//
// TypeParam is a traits struct that builds the locator:
//   struct Md5Ring {
//     using Locator = memshard::KetamaLocator<memshard::Md5>;
//     static auto make(std::span<const memshard::Server> servers) -> Locator {
//       return Locator(servers);
//     }
//     static constexpr bool kWeights = true;  // optional: fleets with weights 1..10
//   };
//   using Rings = ::testing::Types<Md5Ring>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(Ketama, LocatorConformanceTest, Rings);
// (inside namespace memshard::testing).

#include <span>

#include "gtest/gtest.h"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/server.hpp"
#include "support/locator_checks.hpp"

namespace memshard::testing {

/// LocatorConformanceTest: the Locator contract; TypeParam is a traits struct.
template <class Traits>
class LocatorConformanceTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(LocatorConformanceTest);

TYPED_TEST_P(LocatorConformanceTest, SatisfiesTheConcept) {
  using L = typename TypeParam::Locator;
  static_assert(Locator<L>);
  static_assert(noexcept(std::declval<const L&>().locate(std::string_view{})));
  static_assert(noexcept(std::declval<const L&>().size()));
  static_assert(std::is_same_v<decltype(TypeParam::make(std::span<const Server>{})), L>);
}

TYPED_TEST_P(LocatorConformanceTest, EveryIndexIsBelowSize) {
  expect_indexes_below_size(make_with<TypeParam>(), kWeightedFleets<TypeParam>);
}

TYPED_TEST_P(LocatorConformanceTest, SameArgumentsSamePlacement) {
  expect_deterministic(make_with<TypeParam>(), kWeightedFleets<TypeParam>);
}

TYPED_TEST_P(LocatorConformanceTest, ACopyPlacesAsTheOriginal) {
  using L = typename TypeParam::Locator;
  if constexpr (std::is_copy_constructible_v<L>) {
    const auto servers = conformance_fleet(5, kWeightedFleets<TypeParam>, 8);
    const L original = TypeParam::make(servers);
    const L copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
    for (const std::string& key : conformance_keys()) {
      ASSERT_EQ(copy.locate(key), original.locate(key)) << key.size() << " bytes";
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(LocatorConformanceTest, SatisfiesTheConcept, EveryIndexIsBelowSize,
                            SameArgumentsSamePlacement, ACopyPlacesAsTheOriginal);

/// BatchLocatorConformanceTest: the BatchLocator contract.
template <class Traits>
class BatchLocatorConformanceTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(BatchLocatorConformanceTest);

TYPED_TEST_P(BatchLocatorConformanceTest, LocateManyEqualsLocate) {
  static_assert(BatchLocator<typename TypeParam::Locator>);
  expect_locate_many_equals_locate(make_with<TypeParam>(), kWeightedFleets<TypeParam>);
}

REGISTER_TYPED_TEST_SUITE_P(BatchLocatorConformanceTest, LocateManyEqualsLocate);
// Only the files of batch locators instantiate it.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BatchLocatorConformanceTest);

/// FailoverLocatorConformanceTest: the FailoverLocator contract.
template <class Traits>
class FailoverLocatorConformanceTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(FailoverLocatorConformanceTest);

TYPED_TEST_P(FailoverLocatorConformanceTest, LiveServersKeepTheirKeys) {
  static_assert(FailoverLocator<typename TypeParam::Locator>);
  expect_avoiding_keeps_live_servers_keys(make_with<TypeParam>(), kWeightedFleets<TypeParam>);
}

TYPED_TEST_P(FailoverLocatorConformanceTest, EveryServerAvoidedAnswersLocate) {
  expect_all_avoided_answers_locate(make_with<TypeParam>(), kWeightedFleets<TypeParam>);
}

TYPED_TEST_P(FailoverLocatorConformanceTest, EjectingOneServerMovesOnlyItsKeys) {
  expect_ejecting_one_moves_only_its_keys(make_with<TypeParam>(), kWeightedFleets<TypeParam>);
}

REGISTER_TYPED_TEST_SUITE_P(FailoverLocatorConformanceTest, LiveServersKeepTheirKeys,
                            EveryServerAvoidedAnswersLocate, EjectingOneServerMovesOnlyItsKeys);
// Only the files of failover locators instantiate it.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FailoverLocatorConformanceTest);

/// ConsistentLocatorConformanceTest: removing a server from the list moves
/// only that server's keys (consistent hashing's promise).
template <class Traits>
class ConsistentLocatorConformanceTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(ConsistentLocatorConformanceTest);

TYPED_TEST_P(ConsistentLocatorConformanceTest, RemovingAServerMovesOnlyItsKeys) {
  expect_removal_moves_only_its_keys(make_with<TypeParam>(), kWeightedFleets<TypeParam>);
}

REGISTER_TYPED_TEST_SUITE_P(ConsistentLocatorConformanceTest, RemovingAServerMovesOnlyItsKeys);
// Only the files of consistent locators instantiate it.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConsistentLocatorConformanceTest);

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_LOCATOR_CONFORMANCE_HPP_
