// SPDX-License-Identifier: MIT
// codecs/php_memcached_codec.hpp against the value tables of the real
// php-memcached (tests/golden/values/php_memcached.values): every item of
// every serializer and compression decodes to the value PHP stored, and
// encoding that value under the case's settings gives the item's flags and
// bytes; then the thresholds, the user flags, zstd, and bad items.

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/codecs/php_memcached_codec.hpp"
#include "support/allocation_meter.hpp"
#include "support/value_table.hpp"

namespace codecs_php_memcached_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::PhpCompression;
using memshard::PhpMemcachedCodec;
using memshard::PhpMemcachedOptions;
using memshard::PhpSerializer;
using memshard::Value;
using memshard::testing::allocated_bytes;
using memshard::testing::counting_allocations;
using memshard::testing::largest_allocation;

const std::filesystem::path kValues = std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values";

auto options_of(const memshard::testing::ValueCase& golden) -> PhpMemcachedOptions {
  PhpMemcachedOptions options;
  const std::string serializer = golden.setting("serializer");
  options.serializer = serializer == "igbinary"  ? PhpSerializer::kIgbinary
                       : serializer == "json"    ? PhpSerializer::kJson
                       : serializer == "msgpack" ? PhpSerializer::kMsgpack
                                                 : PhpSerializer::kPhp;
  const std::string compression = golden.setting("compression");
  options.compression = compression == "zlib" ? PhpCompression::kZlib : PhpCompression::kFastlz;
  options.compression_threshold = std::stoul(golden.setting("compression_threshold"));
  options.compression_factor = std::stod(golden.setting("compression_factor"));
  options.user_flags = static_cast<std::uint16_t>(std::stoul(golden.setting("user_flags", "0")));
  return options;
}

TEST(PhpMemcachedCodecTest, ReadsAndWritesEveryItemOfTheTables) {
  const auto expected = memshard::testing::read_value_set(kValues);
  const auto cases = memshard::testing::read_value_cases(kValues / "php_memcached.values");
  ASSERT_EQ(cases.size(), 6U);
  std::size_t checked = 0;
  for (const auto& golden : cases) {
    ASSERT_EQ(golden.codec, "php-memcached");
    const PhpMemcachedCodec codec(options_of(golden));
    for (const auto& [name, value] : expected) {
      SCOPED_TRACE(golden.id + " " + name);
      const auto* item = golden.item(name);
      ASSERT_NE(item, nullptr);
      const auto decoded = codec.decode(item->bytes, item->flags);
      ASSERT_TRUE(decoded.ok()) << decoded.error();
      EXPECT_EQ(*decoded, value);
      const auto encoded = codec.encode(value);
      ASSERT_TRUE(encoded.ok()) << encoded.error();
      EXPECT_EQ(encoded->flags, item->flags);
      EXPECT_EQ(encoded->bytes, item->bytes);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6U * 16U);
}

TEST(PhpMemcachedCodecTest, CompressesOnlyLargePayloadsThatShrinkEnough) {
  const std::string text(3000, 'x');
  PhpMemcachedOptions options;
  options.compression = PhpCompression::kZlib;
  const PhpMemcachedCodec codec(options);
  EXPECT_EQ(codec.encode(Value(text))->flags, 0x30U);
  EXPECT_EQ(codec.encode(Value(text.substr(0, 1999)))->flags, 0U);  // below the threshold
  EXPECT_EQ(codec.encode(Value(text.substr(0, 2000)))->flags, 0x30U);
  // Numbers and booleans never, whatever their length; lists through serialize().
  options.compression_threshold = 1;
  const PhpMemcachedCodec eager(options);
  EXPECT_EQ(eager.encode(Value(std::int64_t{1} << 62))->flags, 1U);
  EXPECT_EQ(eager.encode(Value(1.0 / 3))->flags, 2U);
  const Value list = Value::list({text, text});
  EXPECT_EQ(codec.encode(list)->flags, 0x34U);
  EXPECT_EQ(*codec.decode(codec.encode(list)->bytes, 0x34U), list);
  // Random bytes do not shrink by the factor: stored as they are.
  std::mt19937 random(7);
  std::string noise;
  for (int i = 0; i < 5000; ++i) {
    noise.push_back(static_cast<char>(random()));
  }
  EXPECT_EQ(codec.encode(Value(noise))->flags, 0U);
  EXPECT_EQ(codec.encode(Value(noise))->bytes, noise);
  options.compression = PhpCompression::kNone;
  EXPECT_EQ(PhpMemcachedCodec(options).encode(Value(text))->flags, 0U);
}

TEST(PhpMemcachedCodecTest, ZstdAndTheUserFlags) {
  PhpMemcachedOptions options;
  options.compression = PhpCompression::kZstd;
  options.user_flags = 0xC0DE;
  const PhpMemcachedCodec codec(options);
  const std::string text(5000, 'z');
  const auto encoded = codec.encode(Value(text));
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(encoded->flags, 0xC0DE0090U);
  EXPECT_EQ(encoded->bytes.substr(0, 4), std::string("\x88\x13\x00\x00", 4));  // 5000, LE
  EXPECT_EQ(*codec.decode(encoded->bytes, encoded->flags), Value(text));
  // User flags never change how an item is read.
  EXPECT_EQ(*PhpMemcachedCodec().decode("42", 0xffff0001U), Value(42));
}

TEST(PhpMemcachedCodecTest, TheTextForms) {
  const PhpMemcachedCodec codec;
  EXPECT_EQ(codec.encode(Value(false))->bytes, "");
  EXPECT_EQ(codec.encode(Value(true))->bytes, "1");
  EXPECT_EQ(codec.encode(Value(1e-5))->bytes, "1e-05");
  EXPECT_EQ(codec.encode(Value(-7))->bytes, "-7");
  EXPECT_EQ(*codec.decode("Infinity", 2), Value(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(*codec.decode("-Infinity", 2), Value(-std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(std::isnan(codec.decode("NaN", 2)->as_double()));
  EXPECT_EQ(*codec.decode("", 3), Value(false));
  EXPECT_EQ(*codec.decode("0", 3), Value(false));
  EXPECT_EQ(*codec.decode("1", 3), Value(true));
  EXPECT_EQ(*codec.decode("N;", 4), Value());
}

TEST(PhpMemcachedCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const PhpMemcachedCodec codec;
  const auto unknown = codec.decode("x", 8);
  EXPECT_EQ(unknown.code(), CodecErrc::kUnknownFlags);
  EXPECT_EQ(unknown.error().message(),
            "php-memcached: flags 0x8 hold the type 8, which php-memcached does not know (0 to 7)");
  // python-memcache's text (0x10): compressed, with no compression named.
  EXPECT_EQ(codec.decode("hello", 0x10).code(), CodecErrc::kUnknownFlags);
  EXPECT_EQ(codec.decode("abc", 0x30).code(), CodecErrc::kCorrupt);  // no room for the length
  const auto integer = codec.decode("12abc", 1);
  EXPECT_EQ(integer.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(integer.error().message(),
            "php-memcached: an integer (type 1) whose text is not a number: \"12abc\"");
  EXPECT_EQ(codec.decode("", 1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("3.25x", 2).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("yes", 3).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("a:1:{", 4).code(), CodecErrc::kCorrupt);
  // A length prefix that disagrees with the stream, either way.
  PhpMemcachedOptions zlib;
  zlib.compression = PhpCompression::kZlib;
  const auto good = PhpMemcachedCodec(zlib).encode(Value(std::string(4000, 'q')));
  ASSERT_EQ(good->flags, 0x30U);
  std::string longer = good->bytes;
  longer[0] = static_cast<char>(longer[0] + 1);
  EXPECT_EQ(codec.decode(longer, 0x30).code(), CodecErrc::kCorrupt);
  std::string shorter = good->bytes;
  shorter[0] = static_cast<char>(shorter[0] - 1);
  EXPECT_EQ(codec.decode(shorter, 0x30).code(), CodecErrc::kCorrupt);
  // A length past the limit is refused before anything is inflated.
  std::string huge = good->bytes;
  huge.replace(0, 4, std::string("\xff\xff\xff\x7f", 4));
  const auto refused = codec.decode(huge, 0x30);
  EXPECT_EQ(refused.code(), CodecErrc::kTooLarge);
  // Truncated at every byte: an error, never a value.
  for (std::size_t cut = 0; cut < good->bytes.size(); ++cut) {
    EXPECT_FALSE(codec.decode(good->bytes.substr(0, cut), 0x30).ok()) << cut;
  }
  // Nothing serializes what php-memcached cannot store.
  EXPECT_EQ(codec.encode(Value::serialized("pickle", "x")).code(), CodecErrc::kNotEncodable);
}

// msgpack_nils_item: the php-memcached item of a msgpack array32 of `count`
// nils compressed with zlib (flags 0x37): the 4-byte length, then the zlib
// stream, deflated 64 KiB at a time so that the payload is never held whole.
auto msgpack_nils_item(std::uint32_t count) -> std::string {
  z_stream stream{};
  EXPECT_EQ(deflateInit(&stream, Z_BEST_COMPRESSION), Z_OK);
  std::string item(4, '\0');
  const std::uint32_t length = count + 5;
  for (std::size_t i = 0; i < 4; ++i) {
    item[i] = static_cast<char>(length >> (8U * i) & 0xffU);
  }
  char out[1 << 16];
  auto feed = [&](std::string_view data, int flush) {
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream.avail_in = static_cast<uInt>(data.size());
    do {
      stream.next_out = reinterpret_cast<Bytef*>(out);
      stream.avail_out = sizeof out;
      EXPECT_NE(deflate(&stream, flush), Z_STREAM_ERROR);
      item.append(out, sizeof out - stream.avail_out);
    } while (stream.avail_out == 0);
  };
  const char header[] = {'\xdd', static_cast<char>(count >> 24U), static_cast<char>(count >> 16U),
                         static_cast<char>(count >> 8U), static_cast<char>(count)};
  feed(std::string_view(header, sizeof header), Z_NO_FLUSH);
  const std::string nils(std::size_t{1} << 16U, '\xc0');
  for (std::uint32_t left = count; left > 0;) {
    const std::uint32_t chunk =
        std::min<std::uint32_t>(left, static_cast<std::uint32_t>(nils.size()));
    left -= chunk;
    feed(std::string_view(nils).substr(0, chunk), left == 0 ? Z_FINISH : Z_NO_FLUSH);
  }
  deflateEnd(&stream);
  return item;
}

TEST(PhpMemcachedCodecTest, AnItemWhoseTreeWouldPassMaxDecodedBytesIsTooLargeInBoundedMemory) {
  // 60,000,000 nils: 60 MB inflated (under max_size, 64 MiB), 4.8 GB of
  // Values; refused at the array's header, with the default limits.
  const std::string item = msgpack_nils_item(60000000);
  EXPECT_LT(item.size(), std::size_t{64} << 10U);
  const PhpMemcachedCodec codec;
  allocated_bytes = 0;
  largest_allocation = 0;
  counting_allocations = true;
  const auto decoded = codec.decode(item, 0x37);
  counting_allocations = false;
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(decoded.error().message(),
            "msgpack: at byte 0: an array of 60000000 elements would take the decoded value past "
            "max_decoded_bytes 67108864");
  // Everything allocated while decoding, the inflated payload included.
  EXPECT_LT(allocated_bytes.load(), std::size_t{100} << 20U);
  EXPECT_LE(largest_allocation.load(), std::size_t{64} << 20U);

  // The same item of 1,000 nils decodes; a codec whose max_decoded_bytes is
  // below its 1,001 Values refuses it.
  const auto small = codec.decode(msgpack_nils_item(1000), 0x37);
  ASSERT_TRUE(small.ok()) << small.error();
  EXPECT_EQ(small->as_list().size(), 1000U);
  PhpMemcachedOptions tight;
  tight.limits.max_decoded_bytes = 1001 * sizeof(Value) - 1;
  EXPECT_EQ(PhpMemcachedCodec(tight).decode(msgpack_nils_item(1000), 0x37).code(),
            CodecErrc::kTooLarge);
}

}  // namespace
}  // namespace codecs_php_memcached_codec_test
