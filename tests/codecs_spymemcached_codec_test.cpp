// SPDX-License-Identifier: MIT
// codecs/spymemcached_codec.hpp against the value tables of the real
// spymemcached (tests/golden/values/spymemcached.values): every item decodes to
// the value the Java client stored, and encoding that value gives the item's
// flags and bytes; then the forms no table holds (Byte, Float, Date, byte[]),
// the JSON-looking rule, and bad items.

#include <cstdint>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "memshard/codecs/spymemcached_codec.hpp"
#include "support/value_table.hpp"

namespace codecs_spymemcached_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::SpymemcachedCodec;
using memshard::SpymemcachedIntegers;
using memshard::SpymemcachedOptions;
using memshard::Value;

const std::filesystem::path kValues = std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values";

TEST(SpymemcachedCodecTest, ReadsAndWritesEveryItemOfTheTables) {
  const auto expected = memshard::testing::read_value_set(kValues);
  const auto cases = memshard::testing::read_value_cases(kValues / "spymemcached.values");
  ASSERT_EQ(cases.size(), 2U);
  std::size_t checked = 0;
  for (const auto& golden : cases) {
    ASSERT_EQ(golden.codec, "spymemcached");
    SpymemcachedOptions options;
    options.compression_threshold = std::stoul(golden.setting("compression_threshold"));
    options.integers = golden.setting("java_int") == "Long"
                           ? SpymemcachedIntegers::kLong
                           : SpymemcachedIntegers::kIntegerWhenItFits;
    const SpymemcachedCodec codec(options);
    for (const auto& [name, value] : expected) {
      const auto* item = golden.item(name);
      if (item == nullptr) {
        continue;  // spymemcached-long holds only the integers
      }
      SCOPED_TRACE(golden.id + " " + name);
      const auto decoded = codec.decode(item->bytes, item->flags);
      ASSERT_TRUE(decoded.ok()) << decoded.error();
      if (name == "map") {
        // A java.util.HashMap: recognised, kept as it is, written back unchanged.
        ASSERT_TRUE(decoded->is_serialized());
        EXPECT_EQ(decoded->as_serialized().format, "java-serialization");
        EXPECT_EQ(decoded->as_serialized().data, item->bytes);
        const auto encoded = codec.encode(*decoded);
        ASSERT_TRUE(encoded.ok()) << encoded.error();
        EXPECT_EQ(encoded->flags, item->flags);
        EXPECT_EQ(encoded->bytes, item->bytes);
        ++checked;
        continue;
      }
      EXPECT_EQ(*decoded, value);
      const auto encoded = codec.encode(value);
      ASSERT_TRUE(encoded.ok()) << encoded.error();
      EXPECT_EQ(encoded->flags, item->flags);
      EXPECT_EQ(encoded->bytes, item->bytes);  // GZIPOutputStream's bytes too
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20U);
}

TEST(SpymemcachedCodecTest, TheFormsNoTableHolds) {
  const SpymemcachedCodec codec;
  // A Byte, a Float, a Date (its milliseconds) and byte[].
  EXPECT_EQ(*codec.decode(std::string(1, '\xf9'), SpymemcachedCodec::kByte), Value(-7));
  EXPECT_EQ(*codec.decode("", SpymemcachedCodec::kByte), Value(0));
  // 3.25f is 0x40500000: only leading zero bytes are dropped.
  EXPECT_EQ(*codec.decode(std::string("\x40\x50\x00\x00", 4), SpymemcachedCodec::kFloat),
            Value(3.25));
  EXPECT_EQ(*codec.decode("", SpymemcachedCodec::kDouble), Value(0.0));
  EXPECT_EQ(*codec.decode(std::string("\x01\x8c\x00\x00\x00\x00", 6), SpymemcachedCodec::kDate),
            Value(std::int64_t{0x018c00000000}));
  const auto bytes = codec.encode(Value::bytes(std::string("\0\xff", 2)));
  EXPECT_EQ(bytes->flags, SpymemcachedCodec::kByteArray);
  EXPECT_EQ(*codec.decode(bytes->bytes, bytes->flags), Value::bytes(std::string("\0\xff", 2)));
  // The smallest and largest Integer and Long.
  for (const std::int64_t number :
       {std::int64_t{INT32_MIN}, std::int64_t{INT32_MAX}, std::int64_t{INT64_MIN},
        std::int64_t{INT64_MAX}, std::int64_t{-1}, std::int64_t{255}, std::int64_t{256}}) {
    const auto encoded = codec.encode(Value(number));
    EXPECT_EQ(encoded->flags, number >= INT32_MIN && number <= INT32_MAX
                                  ? SpymemcachedCodec::kInteger
                                  : SpymemcachedCodec::kLong)
        << number;
    EXPECT_EQ(*codec.decode(encoded->bytes, encoded->flags), Value(number)) << number;
  }
  EXPECT_EQ(codec.encode(Value(255))->bytes, "\xff");
  EXPECT_EQ(codec.encode(Value(256))->bytes, std::string("\x01\x00", 2));
}

TEST(SpymemcachedCodecTest, AStringThatLooksLikeJsonIsNeverCompressed) {
  for (const std::string_view text : {"{", "[1]", "true", "false", "null", "-42", "0123"}) {
    EXPECT_TRUE(SpymemcachedCodec::looks_like_json(text)) << text;
  }
  for (const std::string_view text : {"", "-", "1.5", " 42", "True", "42x", "nul"}) {
    EXPECT_FALSE(SpymemcachedCodec::looks_like_json(text)) << text;
  }
  SpymemcachedOptions options;
  options.compression_threshold = 10;
  const SpymemcachedCodec codec(options);
  const std::string repeated(100, 'a');
  EXPECT_EQ(codec.encode(Value("[" + repeated))->flags, 0U);
  EXPECT_EQ(codec.encode(Value(repeated))->flags, SpymemcachedCodec::kCompressed);
  EXPECT_EQ(codec.encode(Value::bytes("[" + repeated))->flags,
            SpymemcachedCodec::kByteArray | SpymemcachedCodec::kCompressed);
  // At the threshold nothing is compressed: only longer values are.
  EXPECT_EQ(codec.encode(Value(repeated.substr(0, 10)))->flags, 0U);
  // Compression is kept only when smaller.
  std::string noise;
  for (int i = 0; i < 64; ++i) {
    noise.push_back(static_cast<char>(i * 97 + 13));
  }
  EXPECT_EQ(codec.encode(Value::bytes(noise))->flags, SpymemcachedCodec::kByteArray);
}

TEST(SpymemcachedCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const SpymemcachedCodec codec;
  EXPECT_EQ(codec.decode("hello", SpymemcachedCodec::kSerialized).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("hello", SpymemcachedCodec::kCompressed).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("12345", SpymemcachedCodec::kInteger).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("123456789", SpymemcachedCodec::kLong).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("12", SpymemcachedCodec::kByte).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("yes", SpymemcachedCodec::kBoolean).code(), CodecErrc::kCorrupt);
  const auto unknown = codec.decode("x", 0x900);
  EXPECT_EQ(unknown.code(), CodecErrc::kUnknownFlags);
  EXPECT_EQ(unknown.error().message(),
            "spymemcached: flags 2304 name the type 9, which SerializingTranscoder does not know");
  // Nothing a Java reader decodes without a class.
  EXPECT_EQ(codec.encode(Value()).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.encode(Value::list({1})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.encode(Value::map({{"a", 1}})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.encode(Value::serialized("pickle", "x")).code(), CodecErrc::kNotEncodable);
}

}  // namespace
}  // namespace codecs_spymemcached_codec_test
