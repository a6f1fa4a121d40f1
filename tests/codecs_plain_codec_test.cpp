// SPDX-License-Identifier: MIT
// codecs/plain_codec.hpp: PlainCodec, bytes as they are: decoding tells text
// (UTF-8) from bytes and never looks at the flags; encoding stores a string or
// bytes unchanged with the configured flags and refuses every other kind.

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>

#include "gtest/gtest.h"
#include "memshard/codecs/plain_codec.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_plain_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::Encoded;
using memshard::PlainCodec;
using memshard::PlainOptions;
using memshard::Value;

static_assert(memshard::Codec<PlainCodec>);

TEST(PlainCodecTest, DecodingTellsTextFromBytes) {
  const PlainCodec codec;
  EXPECT_EQ(*codec.decode("hello", 0), Value("hello"));
  EXPECT_EQ(*codec.decode("h\xc3\xa9llo \xf0\x9f\x98\x80", 0),
            Value("h\xc3\xa9llo \xf0\x9f\x98\x80"));
  EXPECT_EQ(*codec.decode("", 0), Value(""));
  EXPECT_EQ(*codec.decode(std::string("a\0b", 3), 0), Value(std::string("a\0b", 3)));
  // Anything that is not well-formed UTF-8 is bytes: a stray byte, a
  // truncated sequence, an overlong form, a surrogate.
  for (const std::string& bad :
       {std::string("\x00\xff", 2), std::string("\xc3"), std::string("ok\xe2\x9c"),
        std::string("\xc0\xaf"), std::string("\xed\xa0\x80")}) {
    const auto decoded = codec.decode(bad, 0);
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, Value::bytes(bad));
  }
}

TEST(PlainCodecTest, TheFlagsAreNeverLookedAt) {
  const PlainCodec codec;
  for (const std::uint32_t flags : {0U, 1U, 2U, 0x10U, 0x300U, 0x12345678U, 0xffffffffU}) {
    EXPECT_EQ(*codec.decode("42", flags), Value("42")) << flags;
    EXPECT_EQ(*codec.decode("\xff", flags), Value::bytes("\xff")) << flags;
  }
  // decode needs no codec object.
  EXPECT_EQ(*PlainCodec::decode("x", 7), Value("x"));
}

TEST(PlainCodecTest, EncodingStoresStringsAndBytesWithTheConfiguredFlags) {
  const PlainCodec codec;
  EXPECT_EQ(*codec.encode(Value("hello")), (Encoded{"hello", 0}));
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\0\xff", 2))),
            (Encoded{std::string("\0\xff", 2), 0}));
  // A string is stored as its bytes, whether or not they are UTF-8.
  EXPECT_EQ(*codec.encode(Value("\xff\xfe")), (Encoded{"\xff\xfe", 0}));
  EXPECT_EQ(*codec.encode(Value("")), (Encoded{"", 0}));
  const std::string big(1 << 20, 'q');
  EXPECT_EQ(codec.encode(Value(big))->bytes, big);  // never compressed
  for (const std::uint32_t flags : {1U, 0x12345678U, 0xffffffffU}) {
    const PlainCodec flagged(PlainOptions{flags});
    EXPECT_EQ(flagged.options().flags, flags);
    EXPECT_EQ(*flagged.encode(Value("x")), (Encoded{"x", flags}));
    EXPECT_EQ(*flagged.encode(Value::bytes("y")), (Encoded{"y", flags}));
  }
  EXPECT_EQ(codec.options().flags, 0U);
  EXPECT_EQ(PlainCodec::name(), "plain");
}

TEST(PlainCodecTest, EveryOtherKindIsNotEncodable) {
  const PlainCodec codec(PlainOptions{5});
  const struct {
    Value value;
    const char* kind;
  } cases[] = {
      {Value(), "null"},
      {Value(true), "bool"},
      {Value(std::numeric_limits<std::int64_t>::min()), "int"},
      {Value(-0.0), "float"},
      {Value::list({"a"}), "list"},
      {Value::map({{"a", "b"}}), "map"},
      {Value::serialized("php-serialize", "s:1:\"a\";"), "serialized"},
  };
  for (const auto& item : cases) {
    const auto encoded = codec.encode(item.value);
    ASSERT_FALSE(encoded.ok()) << item.kind;
    EXPECT_EQ(encoded.code(), CodecErrc::kNotEncodable);
    EXPECT_EQ(encoded.error().message(),
              std::string("plain: only a string or bytes is stored as it is, not a ") + item.kind);
  }
}

TEST(PlainCodecTest, WhatAClientWithoutACodecReadsAndWrites) {
  // Checked once against pymemcache 3.5.2 with no serde (Python 3.11) on a
  // private memcached: an item written raw with flags 0xffffffff and bytes
  // 00 ff, as PlainCodec({0xffffffff}) writes it, reads back as b'\x00\xff';
  // Client.set("k", b"\xc3\xa9\xff") stores flags 0 and those bytes.
  const PlainCodec writer(PlainOptions{0xffffffffU});
  EXPECT_EQ(*writer.encode(Value::bytes(std::string("\0\xff", 2))),
            (Encoded{std::string("\0\xff", 2), 0xffffffffU}));
  EXPECT_EQ(*PlainCodec().decode("\xc3\xa9\xff", 0), Value::bytes("\xc3\xa9\xff"));
  EXPECT_EQ(*PlainCodec().decode("\xc3\xa9", 0), Value("\xc3\xa9"));
}

}  // namespace
}  // namespace codecs_plain_codec_test
