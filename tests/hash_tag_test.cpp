// SPDX-License-Identifier: MIT
// hash_tag.hpp: HashTag's rule (twemproxy's hash_tag) and HashTagLocator, with
// the locator conformance suites over the locators it wraps.
#include "memshard/placement/locators/hash_tag.hpp"

#include <cstddef>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/placement/hash/crc32.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/locators/rendezvous_locator.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"
#include "support/fleet.hpp"
#include "support/locator_conformance.hpp"

namespace memshard::testing {

template <class Inner, char kOpen, char kClose>
struct TaggedOf {
  using Locator = HashTagLocator<Inner>;
  static auto make(std::span<const Server> servers) -> Locator {
    return Locator(Inner(servers), HashTag{kOpen, kClose});
  }
};

using Tagged = ::testing::Types<TaggedOf<KetamaLocator<Md5>, '{', '}'>,
                                TaggedOf<ModuloLocator<Crc32>, ':', ':'>,
                                TaggedOf<RendezvousLocator, '{', '}'>>;
INSTANTIATE_TYPED_TEST_SUITE_P(HashTag, LocatorConformanceTest, Tagged);
INSTANTIATE_TYPED_TEST_SUITE_P(HashTag, FailoverLocatorConformanceTest, Tagged);

using ConsistentTagged = ::testing::Types<TaggedOf<RendezvousLocator, '{', '}'>>;
INSTANTIATE_TYPED_TEST_SUITE_P(HashTag, ConsistentLocatorConformanceTest, ConsistentTagged);

}  // namespace memshard::testing

namespace hash_tag_test {
namespace {

using memshard::ConfigError;
using memshard::testing::random_ascii_keys;
using memshard::testing::random_fleet;

TEST(HashTagTest, OnlyTheTaggedPartIsHashed) {
  const memshard::HashTag braces = memshard::HashTag::parse("{}");
  EXPECT_EQ(braces.apply("user:{42}:name"), "42");
  EXPECT_EQ(braces.apply("{a}{b}"), "a");
  EXPECT_EQ(braces.apply("}x{y}"), "y");  // the first open, then the first close after it
  EXPECT_EQ(braces.apply("user:{}:name"), "user:{}:name");  // empty tag: the whole key
  EXPECT_EQ(braces.apply("user:{42"), "user:{42");          // no close
  EXPECT_EQ(braces.apply("plain"), "plain");
  const memshard::HashTag colons = memshard::HashTag::parse("::");
  EXPECT_EQ(colons.apply("a:b:c"), "b");
  EXPECT_THROW(static_cast<void>(memshard::HashTag::parse("{")), ConfigError);
  EXPECT_THROW(static_cast<void>(memshard::HashTag::parse("{}}")), ConfigError);
}

TEST(HashTagTest, TaggedKeysShareAServerAndProfilesTakeTheOption) {
  std::mt19937 rng(14);
  const auto servers = random_fleet(rng, 10);
  memshard::ProfileOptions options;
  options.hash_tag = "{}";
  const auto tagged = memshard::make_locator("twemproxy-ketama", servers, options);
  const auto plain = memshard::profiles::twemproxy_ketama(servers);
  std::set<std::size_t> servers_of_42;
  for (const std::string& key : random_ascii_keys(rng, 500)) {
    if (key.find('{') != std::string::npos) {
      continue;  // the tag below must be the key's first
    }
    servers_of_42.insert(tagged.locate(key + "{42}" + key));
    ASSERT_EQ(tagged.locate(key), plain.locate(key)) << key;
  }
  EXPECT_EQ(servers_of_42.size(), 1U);
  EXPECT_EQ(*servers_of_42.begin(), plain.locate("42"));
  EXPECT_NE(tagged.description().find("hash_tag={}"), std::string_view::npos);
  // Only twemproxy pools have hash tags.
  EXPECT_THROW(static_cast<void>(memshard::make_locator("libmemcached-ketama", servers, options)),
               ConfigError);
  options.hash_tag = "{";
  EXPECT_THROW(static_cast<void>(memshard::make_locator("twemproxy-modula", servers, options)),
               ConfigError);
}

}  // namespace
}  // namespace hash_tag_test

namespace hash_tag_test {
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
}  // namespace hash_tag_test
