// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_HASHER_CONFORMANCE_HPP_
#define MEMSHARD_TESTS_SUPPORT_HASHER_CONFORMANCE_HPP_

// support/hasher_conformance.hpp: HasherConformanceTest, a typed suite that
// checks the Hasher contract (hasher.hpp) for any hasher; two more for the
// streaming and batch forms some hashers have; and
// kConstantEvaluable, the check a hasher's test file static_asserts when the
// hasher claims to be constexpr.
//
// Instantiate it in the hasher's own test file:
//   using Hashers = ::testing::Types<memshard::Crc32, memshard::LibmemcachedCrc>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(Crc32, HasherConformanceTest, Hashers);
//   static_assert(memshard::testing::kConstantEvaluable<memshard::Crc32>);
// and, for a hasher with a streaming form or hash_many, the
// StreamingHasherConformanceTest or BatchHasherConformanceTest too.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/placement/hash/hasher.hpp"

namespace memshard::testing {

/// kConstantEvaluable: whether `H{}(bytes)` is a constant expression for an
/// ASCII key, a key with bytes >= 0x80 and the empty key.
template <class H>
inline constexpr bool kConstantEvaluable = requires {
  typename std::integral_constant<std::uint32_t, H{}("constant \xC3\xA9\xFF key")>;
  typename std::integral_constant<std::uint32_t, H{}("")>;
};

/// all_byte_values: the 256 byte values in ascending order.
inline auto all_byte_values() -> std::string {
  std::string bytes;
  for (int value = 0; value < 256; ++value) {
    bytes.push_back(static_cast<char>(value));
  }
  return bytes;
}

/// hash_at_offset: `H{}` of `bytes` copied to `offset` bytes into a fresh
/// buffer filled with junk around it (a hasher must read only the key's
/// bytes, at any alignment).
template <class H>
auto hash_at_offset(std::string_view bytes, std::size_t offset) -> std::uint32_t {
  std::vector<char> buffer(bytes.size() + offset + 16, static_cast<char>(0xA5));
  std::copy(bytes.begin(), bytes.end(), buffer.begin() + static_cast<std::ptrdiff_t>(offset));
  return H{}(std::string_view(buffer.data() + offset, bytes.size()));
}

/// HasherConformanceTest: the typed suite; TypeParam is the hasher.
template <class H>
class HasherConformanceTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(HasherConformanceTest);

TYPED_TEST_P(HasherConformanceTest, SatisfiesTheConceptWithANoexceptCall) {
  using H = TypeParam;
  static_assert(memshard::Hasher<H>);
  static_assert(noexcept(std::declval<const H&>()(std::string_view{})));
  static_assert(
      std::is_same_v<decltype(std::declval<const H&>()(std::string_view{})), std::uint32_t>);
  static_assert(std::is_empty_v<H>, "a Hasher is stateless");
}

TYPED_TEST_P(HasherConformanceTest, HasAStaticName) {
  using H = TypeParam;
  static_assert(noexcept(H::name()));
  const std::string_view name = H::name();
  EXPECT_FALSE(name.empty());
  EXPECT_EQ(name, std::string_view(H::name()));
  EXPECT_EQ(name.find(' '), std::string_view::npos) << name;
}

TYPED_TEST_P(HasherConformanceTest, ConstantEvaluationAgreesWithRunTime) {
  using H = TypeParam;
  if constexpr (kConstantEvaluable<H>) {
    constexpr std::uint32_t kAtCompileTime = H{}("constant \xC3\xA9\xFF key");
    constexpr std::uint32_t kEmptyAtCompileTime = H{}("");
    const std::string key = "constant \xC3\xA9\xFF key";
    EXPECT_EQ(kAtCompileTime, H{}(key));
    EXPECT_EQ(kEmptyAtCompileTime, H{}(std::string()));
  }
}

TYPED_TEST_P(HasherConformanceTest, IsAPureFunctionOfTheBytes) {
  using H = TypeParam;
  std::mt19937 rng(20);
  for (int round = 0; round < 500; ++round) {
    std::string key(static_cast<std::size_t>(round % 300), '\0');
    for (char& c : key) {
      c = static_cast<char>(rng());
    }
    const H first{};
    const H second{};
    const std::uint32_t expected = first(key);
    ASSERT_EQ(first(key), expected) << H::name() << ": asked twice, " << key.size() << " bytes";
    ASSERT_EQ(second(key), expected) << H::name() << ": another instance, " << key.size();
    for (std::size_t offset = 1; offset < 8; ++offset) {
      ASSERT_EQ(hash_at_offset<H>(key, offset), expected)
          << H::name() << ": the same bytes at offset " << offset << ", " << key.size();
    }
  }
}

TYPED_TEST_P(HasherConformanceTest, TheEmptyKey) {
  using H = TypeParam;
  const std::uint32_t empty = H{}(std::string_view{});
  EXPECT_EQ(H{}(""), empty) << H::name();
  EXPECT_EQ(H{}(std::string()), empty) << H::name();
  EXPECT_EQ(hash_at_offset<H>("", 3), empty) << H::name();
  EXPECT_EQ(H{}(std::string_view("x", 0)), empty) << H::name();
}

TYPED_TEST_P(HasherConformanceTest, AllByteValuesForwardAndReversed) {
  using H = TypeParam;
  const std::string forward = all_byte_values();
  const std::string reversed(forward.rbegin(), forward.rend());
  for (std::size_t byte = 0; byte < 256; ++byte) {
    const std::string single(1, forward[byte]);
    ASSERT_EQ(H{}(single), hash_at_offset<H>(single, 1)) << H::name() << " byte " << byte;
  }
  const std::uint32_t forward_hash = H{}(forward);
  const std::uint32_t reversed_hash = H{}(reversed);
  EXPECT_EQ(hash_at_offset<H>(forward, 5), forward_hash) << H::name();
  EXPECT_EQ(hash_at_offset<H>(reversed, 5), reversed_hash) << H::name();
  EXPECT_NE(forward_hash, reversed_hash) << H::name() << ": blind to byte order";
}

TYPED_TEST_P(HasherConformanceTest, AKeyOfTheLongestLegalLength) {
  using H = TypeParam;
  std::mt19937 rng(21);
  std::string key(250, '\0');
  for (char& c : key) {
    c = static_cast<char>(0x21 + rng() % 94);
  }
  const std::uint32_t whole = H{}(key);
  EXPECT_EQ(hash_at_offset<H>(key, 7), whole) << H::name();
  // Every byte counts, the last one too.
  std::string last_changed = key;
  last_changed.back() = static_cast<char>(last_changed.back() == 'a' ? 'b' : 'a');
  std::string first_changed = key;
  first_changed.front() = static_cast<char>(first_changed.front() == 'a' ? 'b' : 'a');
  EXPECT_NE(H{}(last_changed), whole) << H::name();
  EXPECT_NE(H{}(first_changed), whole) << H::name();
  EXPECT_NE(H{}(std::string_view(key).substr(0, 249)), whole) << H::name();
}

REGISTER_TYPED_TEST_SUITE_P(HasherConformanceTest, SatisfiesTheConceptWithANoexceptCall,
                            HasAStaticName, ConstantEvaluationAgreesWithRunTime,
                            IsAPureFunctionOfTheBytes, TheEmptyKey, AllByteValuesForwardAndReversed,
                            AKeyOfTheLongestLegalLength);

/// StreamingHasherConformanceTest: for a hasher with a streaming form
/// (`H::Stream` with update() and finish()): any split of the bytes, and any
/// copy of a stream, gives the one-shot hash.
template <class H>
class StreamingHasherConformanceTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(StreamingHasherConformanceTest);

TYPED_TEST_P(StreamingHasherConformanceTest, StreamingAgreesWithOneShot) {
  using H = TypeParam;
  using Stream = typename H::Stream;
  std::mt19937 rng(22);
  for (int round = 0; round < 100; ++round) {
    std::string text(rng() % 70, '\0');
    for (char& c : text) {
      c = static_cast<char>(rng());
    }
    const std::uint32_t expected = H{}(text);
    Stream whole;
    whole.update(text);
    ASSERT_EQ(whole.finish(), expected) << H::name() << " in one piece";
    Stream bytewise;
    for (const char c : text) {
      bytewise.update(std::string_view(&c, 1));
    }
    ASSERT_EQ(bytewise.finish(), expected) << H::name() << " one byte at a time";
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
      Stream prefix;
      prefix.update(std::string_view(text).substr(0, cut));
      Stream fork = prefix;  // a copy goes on from the same state
      fork.update(std::string_view(text).substr(cut));
      prefix.update("");
      prefix.update(std::string_view(text).substr(cut));
      ASSERT_EQ(fork.finish(), expected) << H::name() << " split at " << cut;
      ASSERT_EQ(prefix.finish(), expected) << H::name() << " split at " << cut;
    }
  }
  EXPECT_EQ(Stream{}.finish(), H{}("")) << H::name();
}

REGISTER_TYPED_TEST_SUITE_P(StreamingHasherConformanceTest, StreamingAgreesWithOneShot);
// Only the files of hashers with a streaming form instantiate it.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StreamingHasherConformanceTest);

/// BatchHasherConformanceTest: for a hasher with
/// `static H::hash_many(keys, out) noexcept`: out[i] equals one call for
/// keys[i], for every batch size, and nothing past the keys is written.
template <class H>
class BatchHasherConformanceTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(BatchHasherConformanceTest);

TYPED_TEST_P(BatchHasherConformanceTest, HashManyAgreesWithOneCallPerKey) {
  using H = TypeParam;
  static_assert(
      noexcept(H::hash_many(std::span<const std::string_view>{}, std::span<std::uint32_t>{})));
  std::mt19937 rng(23);
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < 300; ++i) {
    std::string key(rng() % 120, '\0');
    for (char& c : key) {
      c = static_cast<char>(rng());
    }
    keys.push_back(std::move(key));
  }
  for (std::size_t count = 0; count <= keys.size(); count += count < 20 ? 1 : 97) {
    const std::vector<std::string_view> views(keys.begin(),
                                              keys.begin() + static_cast<std::ptrdiff_t>(count));
    std::vector<std::uint32_t> out(count + 1, 0xDEADBEEFU);
    H::hash_many(views, out);
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(out[i], H{}(views[i])) << H::name() << ": key " << i << " of " << count;
    }
    ASSERT_EQ(out[count], 0xDEADBEEFU) << H::name() << ": wrote past " << count << " keys";
  }
}

REGISTER_TYPED_TEST_SUITE_P(BatchHasherConformanceTest, HashManyAgreesWithOneCallPerKey);
// Only the files of hashers with hash_many instantiate it.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BatchHasherConformanceTest);

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_HASHER_CONFORMANCE_HPP_
