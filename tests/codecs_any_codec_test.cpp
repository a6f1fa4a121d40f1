// SPDX-License-Identifier: MIT
// codecs/any_codec.hpp: AnyCodec, any Codec behind one type: it forwards
// name, encode and decode (errors included), target<T>() finds the codec held
// and nothing else, copies share the one codec (it is copied or moved in once,
// never again), and an AnyCodec is never wrapped in another.

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/codecs/any_codec.hpp"
#include "memshard/codecs/cache_memcached_codec.hpp"
#include "memshard/codecs/cache_memcached_fast_codec.hpp"
#include "memshard/codecs/dalli_codec.hpp"
#include "memshard/codecs/php_memcache_codec.hpp"
#include "memshard/codecs/plain_codec.hpp"
#include "memshard/codecs/pylibmc_codec.hpp"
#include "memshard/codecs/pymemcache_codec.hpp"
#include "memshard/codecs/python_memcache_codec.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_any_codec_test {
namespace {

using memshard::AnyCodec;
using memshard::CodecErrc;
using memshard::CodecResult;
using memshard::Encoded;
using memshard::PlainCodec;
using memshard::PlainOptions;
using memshard::Value;

static_assert(memshard::Codec<AnyCodec>);
static_assert(std::is_copy_constructible_v<AnyCodec> && std::is_copy_assignable_v<AnyCodec>);
static_assert(!std::is_default_constructible_v<AnyCodec>);  // there is always a codec
static_assert(!std::is_constructible_v<AnyCodec, int>);     // only Codecs

// CountedCodec: a codec that counts its copies and moves and its calls.
struct CountedCodec {
  static inline int copies = 0;
  static inline int moves = 0;
  std::shared_ptr<int> calls = std::make_shared<int>(0);
  std::uint32_t mark = 0;

  CountedCodec() = default;
  explicit CountedCodec(std::uint32_t m) : mark(m) {}
  CountedCodec(const CountedCodec& other) : calls(other.calls), mark(other.mark) { ++copies; }
  CountedCodec(CountedCodec&& other) noexcept : calls(std::move(other.calls)), mark(other.mark) {
    ++moves;
  }
  auto operator=(const CountedCodec&) -> CountedCodec& = delete;
  auto operator=(CountedCodec&&) -> CountedCodec& = delete;
  ~CountedCodec() = default;

  [[nodiscard]] static auto name() -> std::string_view { return "counted"; }
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    ++*calls;
    if (!value.is_string()) {
      return CodecResult<Encoded>(CodecErrc::kNotEncodable, "counted: strings only");
    }
    return Encoded{value.as_string(), mark};
  }
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    ++*calls;
    if (flags != mark) {
      return CodecResult<Value>(CodecErrc::kUnknownFlags,
                                "counted: flags " + std::to_string(flags));
    }
    return Value(std::string(bytes) + "!");
  }
};
static_assert(memshard::Codec<CountedCodec>);

TEST(AnyCodecTest, ForwardsNameEncodeAndDecode) {
  const AnyCodec codec = PlainCodec(PlainOptions{0x2a});
  EXPECT_EQ(codec.name(), "plain");
  EXPECT_EQ(*codec.encode(Value("abc")), (Encoded{"abc", 0x2a}));
  EXPECT_EQ(*codec.decode("abc", 0x2a), Value("abc"));
  EXPECT_EQ(*codec.decode("\xff", 0), Value::bytes("\xff"));
  // Errors pass through unchanged.
  const auto refused = codec.encode(Value(1));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(refused.error().message(),
            "plain: only a string or bytes is stored as it is, not a int");

  const AnyCodec counted = CountedCodec(7);
  EXPECT_EQ(counted.name(), "counted");
  EXPECT_EQ(*counted.encode(Value("x")), (Encoded{"x", 7}));
  EXPECT_EQ(*counted.decode("y", 7), Value("y!"));
  const auto unknown = counted.decode("y", 8);
  EXPECT_EQ(unknown.code(), CodecErrc::kUnknownFlags);
  EXPECT_EQ(unknown.error().message(), "counted: flags 8");
  EXPECT_EQ(counted.encode(Value(1)).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(*counted.target<CountedCodec>()->calls, 4);
}

TEST(AnyCodecTest, HoldsEveryCodecOfTheLibrary) {
  const std::vector<AnyCodec> codecs = {
      memshard::PhpMemcacheCodec{},
      memshard::PythonMemcacheCodec{},
      memshard::PylibmcCodec{},
      memshard::PymemcacheCodec{},
      memshard::DalliCodec{},
      memshard::CacheMemcachedCodec{},
      memshard::CacheMemcachedFastCodec{},
      memshard::PlainCodec{},
  };
  std::vector<std::string_view> names;
  for (const AnyCodec& codec : codecs) {
    names.push_back(codec.name());
  }
  EXPECT_EQ(names, (std::vector<std::string_view>{"php-memcache", "python-memcache", "pylibmc",
                                                  "pymemcache", "dalli", "cache-memcached",
                                                  "cache-memcached-fast", "plain"}));
  // Each one behaves as itself: the same value, each peer's own item.
  EXPECT_EQ(codecs[0].encode(Value(42))->flags, 0x300U);
  EXPECT_EQ(codecs[1].encode(Value(42))->flags, 0x2U);
  EXPECT_EQ(codecs[2].encode(Value(42))->flags, 0x4U);
  EXPECT_EQ(*codecs[3].encode(Value(42)), (Encoded{"42", 0}));
  EXPECT_EQ(*codecs[4].encode(Value(42)), (Encoded{"\x04\x08i\x2f", 1}));
  EXPECT_EQ(*codecs[5].encode(Value(42)), (Encoded{"42", 0}));
  EXPECT_EQ(*codecs[6].encode(Value()), (Encoded{"", 0}));
  EXPECT_EQ(codecs[7].encode(Value(42)).code(), CodecErrc::kNotEncodable);
}

TEST(AnyCodecTest, TargetFindsTheCodecHeldAndNothingElse) {
  const AnyCodec codec = PlainCodec(PlainOptions{9});
  ASSERT_NE(codec.target<PlainCodec>(), nullptr);
  EXPECT_EQ(codec.target<PlainCodec>()->options().flags, 9U);
  EXPECT_EQ(codec.target<memshard::DalliCodec>(), nullptr);
  EXPECT_EQ(codec.target<CountedCodec>(), nullptr);

  memshard::DalliOptions options;
  options.raw = true;
  options.compression_min_size = 10;
  const AnyCodec dalli = memshard::DalliCodec(options);
  ASSERT_NE(dalli.target<memshard::DalliCodec>(), nullptr);
  EXPECT_TRUE(dalli.target<memshard::DalliCodec>()->options().raw);
  EXPECT_EQ(dalli.target<memshard::DalliCodec>()->options().compression_min_size, 10U);
  EXPECT_EQ(dalli.target<PlainCodec>(), nullptr);
}

TEST(AnyCodecTest, CopiesShareTheOneCodec) {
  CountedCodec::copies = 0;
  CountedCodec::moves = 0;
  const CountedCodec original(3);
  const AnyCodec first = original;  // the codec is copied in once
  EXPECT_EQ(CountedCodec::copies, 1);
  const int moves = CountedCodec::moves;
  EXPECT_NE(first.target<CountedCodec>(), &original);
  const AnyCodec second = first;  // NOLINT(performance-unnecessary-copy-initialization)
  AnyCodec third = second;
  AnyCodec fourth = std::move(third);
  EXPECT_EQ(CountedCodec::copies, 1);
  EXPECT_EQ(CountedCodec::moves, moves);
  EXPECT_EQ(second.target<CountedCodec>(), first.target<CountedCodec>());
  EXPECT_EQ(fourth.target<CountedCodec>(), first.target<CountedCodec>());
  // A temporary is moved in, never copied.
  const AnyCodec moved = CountedCodec(4);
  EXPECT_EQ(CountedCodec::copies, 1);
  EXPECT_GT(CountedCodec::moves, moves);
  EXPECT_EQ(moved.target<CountedCodec>()->mark, 4U);
  // Assigning another codec changes that AnyCodec only.
  fourth = moved;
  EXPECT_EQ(fourth.target<CountedCodec>(), moved.target<CountedCodec>());
  EXPECT_EQ(first.target<CountedCodec>()->mark, 3U);
  EXPECT_EQ(second.target<CountedCodec>()->mark, 3U);
  fourth = PlainCodec{};
  EXPECT_EQ(fourth.name(), "plain");
  EXPECT_EQ(first.name(), "counted");
}

TEST(AnyCodecTest, AnAnyCodecIsNeverWrappedInAnother) {
  const AnyCodec inner = PlainCodec(PlainOptions{1});
  const AnyCodec copy(inner);
  ASSERT_NE(copy.target<PlainCodec>(), nullptr);  // not a codec holding an AnyCodec
  EXPECT_EQ(copy.target<PlainCodec>(), inner.target<PlainCodec>());
  AnyCodec source = inner;
  const AnyCodec moved(std::move(source));
  EXPECT_EQ(moved.target<PlainCodec>(), inner.target<PlainCodec>());
  EXPECT_EQ(moved.target<AnyCodec>(), nullptr);
}

// NamedAtRunTime: a codec whose name is built, returned as a std::string
// (the Codec concept only asks for something convertible to string_view).
struct NamedAtRunTime {
  std::string prefix = "a-codec-name-longer-than-any-small-string-buffer";
  [[nodiscard]] auto name() const -> std::string { return prefix + "-v2"; }
  [[nodiscard]] static auto encode(const Value&) -> CodecResult<Encoded> { return Encoded{}; }
  [[nodiscard]] static auto decode(std::string_view, std::uint32_t) -> CodecResult<Value> {
    return CodecResult<Value>(CodecErrc::kUnsupported, "never decodes");
  }
};
static_assert(memshard::Codec<NamedAtRunTime>);

TEST(AnyCodecTest, ANameReturnedByValueStaysValid) {
  const AnyCodec codec = NamedAtRunTime{};
  const std::string name(codec.name());
  EXPECT_EQ(name, "a-codec-name-longer-than-any-small-string-buffer-v2");
}

}  // namespace
}  // namespace codecs_any_codec_test
