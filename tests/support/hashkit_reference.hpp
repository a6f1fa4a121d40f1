// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_HASHKIT_REFERENCE_HPP_
#define MEMSHARD_TESTS_SUPPORT_HASHKIT_REFERENCE_HPP_

// support/hashkit_reference.hpp: HashkitConformanceTest, a typed suite that
// checks a hasher against libhashkit's function of the same algorithm (the
// hash library inside libmemcached). TypeParam is a HashkitPair:
//   using Pairs = ::testing::Types<memshard::testing::HashkitPair<memshard::Md5,
//                                                                HASHKIT_HASH_MD5>>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(Md5, HashkitConformanceTest, Pairs);
// The test links Libmemcached::Hashkit.

#include <libhashkit-1.0/hashkit.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace memshard::testing {

/// HashkitPair: a hasher and the libhashkit algorithm it must equal.
template <class Hash, hashkit_hash_algorithm_t kAlgorithm>
struct HashkitPair {
  using Hasher = Hash;
  static constexpr hashkit_hash_algorithm_t algorithm = kAlgorithm;
};

/// hashkit_reference: libhashkit's hash of `key` with `algorithm`.
inline auto hashkit_reference(std::string_view key, hashkit_hash_algorithm_t algorithm)
    -> std::uint32_t {
  return libhashkit_digest(key.data(), key.size(), algorithm);
}

/// HashkitConformanceTest: the typed suite; TypeParam is a HashkitPair.
template <class Pair>
class HashkitConformanceTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(HashkitConformanceTest);

TYPED_TEST_P(HashkitConformanceTest, RandomBytesOfEveryLengthUpTo300) {
  using Hash = typename TypeParam::Hasher;
  std::mt19937 rng(42);
  for (int i = 0; i < 5000; ++i) {
    std::string key(static_cast<std::size_t>(i % 301), '\0');
    for (char& c : key) {
      c = static_cast<char>(rng());  // includes bytes >= 0x80 and NUL
    }
    ASSERT_EQ(Hash{}(key), hashkit_reference(key, TypeParam::algorithm))
        << Hash::name() << " length " << key.size();
  }
}

TYPED_TEST_P(HashkitConformanceTest, AllByteValuesForwardAndReversed) {
  using Hash = typename TypeParam::Hasher;
  std::string forward;
  for (int byte = 0; byte < 256; ++byte) {
    const std::string single(1, static_cast<char>(byte));
    ASSERT_EQ(Hash{}(single), hashkit_reference(single, TypeParam::algorithm)) << byte;
    forward.push_back(static_cast<char>(byte));
  }
  const std::string reversed(forward.rbegin(), forward.rend());
  EXPECT_EQ(Hash{}(forward), hashkit_reference(forward, TypeParam::algorithm));
  EXPECT_EQ(Hash{}(reversed), hashkit_reference(reversed, TypeParam::algorithm));
}

TYPED_TEST_P(HashkitConformanceTest, ConstantEvaluationAgreesWithRunTime) {
  using Hash = typename TypeParam::Hasher;
  constexpr std::uint32_t kAtCompileTime = Hash{}("compile-time key \xC3\xA9 0123456789");
  const std::string key = "compile-time key \xC3\xA9 0123456789";
  EXPECT_EQ(kAtCompileTime, Hash{}(key));
  EXPECT_EQ(kAtCompileTime, hashkit_reference(key, TypeParam::algorithm));
}

REGISTER_TYPED_TEST_SUITE_P(HashkitConformanceTest, RandomBytesOfEveryLengthUpTo300,
                            AllByteValuesForwardAndReversed, ConstantEvaluationAgreesWithRunTime);

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_HASHKIT_REFERENCE_HPP_
