// SPDX-License-Identifier: MIT
// RuntimeHash (placement/hash/runtime_hash.hpp): the hasher chosen at run time
// computes exactly the hasher it was made of, and says which one it is.

#include "memshard/placement/hash/runtime_hash.hpp"

#include <cstdint>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/hash/fnv.hpp"
#include "memshard/placement/hash/md5.hpp"
#include "memshard/placement/hash/murmur.hpp"
#include "memshard/placement/hash/one_at_a_time.hpp"

namespace runtime_hash_test {
namespace {

template <memshard::Hasher H>
void expect_same_as() {
  const auto hash = memshard::RuntimeHash::of<H>();
  EXPECT_EQ(hash.hash_name(), H::name());
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(hash(bytes), H{}(bytes)) << H::name() << " of " << bytes.size() << " bytes";
    bytes.push_back(static_cast<char>(i * 37));
  }
}

TEST(RuntimeHashTest, ComputesTheHasherItWasMadeOf) {
  expect_same_as<memshard::OneAtATime>();
  expect_same_as<memshard::Md5>();
  expect_same_as<memshard::Crc32>();
  expect_same_as<memshard::LibmemcachedCrc>();
  expect_same_as<memshard::Fnv1a_64>();
  expect_same_as<memshard::Murmur>();
}

TEST(RuntimeHashTest, DefaultConstructedItIsOneAtATime) {
  constexpr memshard::RuntimeHash hash;
  EXPECT_EQ(hash.hash_name(), memshard::OneAtATime::name());
  EXPECT_EQ(hash("user:42"), memshard::OneAtATime{}("user:42"));
  EXPECT_EQ(memshard::RuntimeHash::name(), "runtime");
}

TEST(RuntimeHashTest, InstancesOfDifferentHashesDiffer) {
  const auto md5 = memshard::RuntimeHash::of<memshard::Md5>();
  const auto crc = memshard::RuntimeHash::of<memshard::Crc32>();
  EXPECT_NE(md5("user:42"), crc("user:42"));
}

}  // namespace
}  // namespace runtime_hash_test
