// SPDX-License-Identifier: MIT
// codecs/make_codec.hpp, and through it every codec against every value table
// the real clients wrote (tests/golden/values/*.values): each case's codec is
// made from the case's own `codec` and `setting` lines; every item decodes to
// what that client reads back, and encoding the value the client stored gives
// the item's flags and bytes (by decoding, for the items another run writes
// differently). Then the settings make_codec refuses.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "memshard/codecs/make_codec.hpp"
#include "memshard/errors.hpp"
#include "support/value_table.hpp"

namespace codecs_make_codec_test {
namespace {

using memshard::AnyCodec;
using memshard::ConfigError;
using memshard::Value;
using memshard::testing::ValueCase;
using memshard::testing::ValueItem;

const std::filesystem::path kValues = std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values";

// read_back: what the client of `golden` reads back for `stored` (the value it
// was given), as the table's "# roundtrip" notes record: Perl and pymemcache
// (without a serde) have no types, pylibmc's booleans come back as integers,
// pecl memcache keeps 14 digits of a double, a Java object stays opaque.
auto read_back(const ValueCase& golden, const ValueItem& item, const Value& stored) -> Value {
  const std::string& codec = golden.codec;
  if (codec == "cache-memcached" || codec == "cache-memcached-fast") {
    // Numbers and booleans come back as the text stored (never compressed),
    // a hash as itself.
    return stored.is_map() || stored.is_string() ? stored : Value(item.bytes);
  }
  if (codec == "dalli" && golden.setting("raw") == "true") {
    return stored.is_string() ? stored : Value(item.bytes);  // to_s of anything else
  }
  if (codec == "pymemcache" && golden.setting("serde") == "none") {
    return Value::bytes(stored.is_string() ? stored.as_string() : item.bytes);
  }
  if (codec == "pylibmc" && stored.is_bool()) {
    return Value(stored.as_bool() ? 1 : 0);
  }
  if (codec == "php-memcache" && stored.is_float()) {
    return Value(std::stod(item.bytes));
  }
  if (codec == "spymemcached" && stored.is_map()) {
    return Value::serialized("java-serialization", item.bytes);
  }
  return stored;
}

// sorted: `value` with the entries of every map in key order.
auto sorted(Value value) -> Value {
  if (value.is_list()) {
    for (Value& item : value.as_list()) {
      item = sorted(std::move(item));
    }
  } else if (value.is_map()) {
    for (auto& entry : value.as_map()) {
      entry.second = sorted(std::move(entry.second));
    }
    std::sort(value.as_map().begin(), value.as_map().end(), [](const auto& a, const auto& b) {
      return testing::PrintToString(a.first) < testing::PrintToString(b.first);
    });
  }
  return value;
}

TEST(MakeCodecTest, EveryCodecReadsAndWritesEveryItemOfEveryTable) {
  const auto expected = memshard::testing::read_value_set(kValues);
  std::set<std::string> codecs_seen;
  std::size_t items = 0;
  std::size_t byte_exact = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kValues)) {
    if (entry.path().extension() != ".values") {
      continue;
    }
    for (const ValueCase& golden : memshard::testing::read_value_cases(entry.path())) {
      memshard::CodecSettings settings(golden.settings.begin(), golden.settings.end());
      const AnyCodec codec = memshard::make_codec(golden.codec, settings);
      ASSERT_EQ(codec.name(), golden.codec);
      codecs_seen.insert(golden.codec);
      for (const auto& [name, stored] : expected) {
        const ValueItem* item = golden.item(name);
        if (item == nullptr || item->refused) {
          continue;
        }
        SCOPED_TRACE(golden.id + " " + name);
        const Value wanted = read_back(golden, *item, stored);
        const auto decoded = codec.decode(item->bytes, item->flags);
        ASSERT_TRUE(decoded.ok()) << decoded.error();
        // A nondeterministic map (a Perl hash) holds its keys in any order.
        EXPECT_EQ(item->nondeterministic ? sorted(*decoded) : *decoded,
                  item->nondeterministic ? sorted(wanted) : wanted);
        // What memshard writes for the same value: the client's own item.
        const Value& source = wanted.is_serialized() ? wanted : stored;
        const auto encoded = codec.encode(source);
        ASSERT_TRUE(encoded.ok()) << encoded.error();
        EXPECT_EQ(encoded->flags, item->flags);
        if (item->nondeterministic) {
          const auto again = codec.decode(encoded->bytes, encoded->flags);
          ASSERT_TRUE(again.ok()) << again.error();
          EXPECT_EQ(*again, wanted);
        } else {
          EXPECT_EQ(encoded->bytes, item->bytes);
          if (encoded->bytes == item->bytes) {
            ++byte_exact;
          }
        }
        ++items;
      }
    }
  }
  EXPECT_EQ(codecs_seen.size(), 9U);  // every table's codec
  EXPECT_GE(items, 340U);
  EXPECT_GT(byte_exact, 300U);
}

TEST(MakeCodecTest, EveryNameMakesItsCodec) {
  for (const std::string_view name : memshard::codec_names()) {
    EXPECT_EQ(memshard::make_codec(name).name(), name);
    // Every codec takes its DecodeLimits.
    EXPECT_NO_THROW((void)memshard::make_codec(
        name, {{"max_size", "10"}, {"max_depth", "3"}, {"max_decoded_bytes", "99"}}))
        << name;
  }
  const AnyCodec dalli = memshard::make_codec_from_spec("dalli:serializer=JSON,compressor=gzip");
  ASSERT_NE(dalli.target<memshard::DalliCodec>(), nullptr);
  EXPECT_EQ(dalli.target<memshard::DalliCodec>()->options().serializer,
            memshard::DalliSerializer::kJson);
  EXPECT_EQ(dalli.target<memshard::DalliCodec>()->options().compressor,
            memshard::DalliCompressor::kGzip);
  EXPECT_EQ(dalli.target<memshard::PlainCodec>(), nullptr);
  const AnyCodec fast =
      memshard::make_codec_from_spec("cache-memcached-fast:compress_threshold=-1");
  EXPECT_EQ(fast.target<memshard::CacheMemcachedFastCodec>()->options().compress_threshold, 0U);
  const AnyCodec limited = memshard::make_codec_from_spec(
      "php-memcached:max_depth=3,max_size=10,max_decoded_bytes=4096");
  EXPECT_EQ(limited.target<memshard::PhpMemcachedCodec>()->options().limits.max_depth, 3U);
  EXPECT_EQ(limited.target<memshard::PhpMemcachedCodec>()->options().limits.max_size, 10U);
  EXPECT_EQ(limited.target<memshard::PhpMemcachedCodec>()->options().limits.max_decoded_bytes,
            4096U);
  // Unset, it is the default (64 MiB), and it bounds what the codec decodes:
  // php-memcached's msgpack (type 7) of [nil x 100] is 101 Values.
  EXPECT_EQ(memshard::make_codec("php-memcached")
                .target<memshard::PhpMemcachedCodec>()
                ->options()
                .limits.max_decoded_bytes,
            memshard::DecodeLimits{}.max_decoded_bytes);
  const std::string nils = std::string("\xdc\x00\x64", 3) + std::string(100, '\xc0');
  const std::string need = std::to_string(101 * sizeof(memshard::Value));
  const std::string under = std::to_string(101 * sizeof(memshard::Value) - 1);
  EXPECT_TRUE(
      memshard::make_codec("php-memcached", {{"max_decoded_bytes", need}}).decode(nils, 7).ok());
  EXPECT_EQ(
      memshard::make_codec("php-memcached", {{"max_decoded_bytes", under}}).decode(nils, 7).code(),
      memshard::CodecErrc::kTooLarge);
  // Copies share the codec.
  const AnyCodec copy = limited;
  EXPECT_EQ(copy.target<memshard::PhpMemcachedCodec>(),
            limited.target<memshard::PhpMemcachedCodec>());
}

TEST(MakeCodecTest, BadNamesAndSettingsThrowOnceWithTheReason) {
  auto message = [](auto make) -> std::string {
    try {
      (void)make();
    } catch (const ConfigError& error) {
      return error.what();
    }
    return "no error";
  };
  EXPECT_EQ(message([] { return memshard::make_codec("memcache"); }),
            "memshard: unknown codec (known: php-memcached, php-memcache, spymemcached, "
            "python-memcache, pymemcache, pylibmc, dalli, cache-memcached, "
            "cache-memcached-fast, php-session, plain): memcache");
  EXPECT_EQ(message([] { return memshard::make_codec_from_spec("dalli:serialiser=JSON"); }),
            "memshard: dalli has no setting: serialiser");
  EXPECT_EQ(message([] { return memshard::make_codec_from_spec("php-memcached:serializer=xml"); }),
            "memshard: php-memcached setting serializer wants one of php, igbinary, json, "
            "msgpack: xml");
  EXPECT_EQ(message([] { return memshard::make_codec_from_spec("pylibmc:min_compress_len=1k"); }),
            "memshard: pylibmc setting min_compress_len wants a size: 1k");
  EXPECT_EQ(message([] { return memshard::make_codec_from_spec("dalli:raw=yes"); }),
            "memshard: dalli setting raw wants true or false: yes");
  EXPECT_EQ(message([] { return memshard::make_codec_from_spec("plain:flags"); }),
            "memshard: a codec setting is name=value: flags");
  EXPECT_EQ(
      message([] { return memshard::make_codec_from_spec("php-memcached:user_flags=70000"); }),
      "memshard: php-memcached setting user_flags wants a number: 70000");
  EXPECT_EQ(
      message([] { return memshard::make_codec_from_spec("spymemcached:transcoder=Whalin"); }),
      "memshard: spymemcached setting transcoder wants SerializingTranscoder: Whalin");
}

}  // namespace
}  // namespace codecs_make_codec_test
