// SPDX-License-Identifier: MIT
// codecs/php_session_codec.hpp: PhpSessionCodec, the items php-memcached's
// session handler keeps: a session reads as a map of its variables whatever
// the flags, a map is written as PHP writes it with flags 0, an object keeps
// its bytes both ways, and what PHP cannot hold is refused. The items are
// what PHP 8.2 with php-memcached 3.2.0 stored (session_start(), $_SESSION
// set, the raw item read back with a text-protocol get); examples_test checks
// the same round trip against php-cli itself.

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "memshard/codecs/make_codec.hpp"
#include "memshard/codecs/php_session_codec.hpp"
#include "memshard/errors.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_php_session_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::DecodeLimits;
using memshard::Encoded;
using memshard::PhpSessionCodec;
using memshard::PhpSessionOptions;
using memshard::Value;

// What PHP stored for $_SESSION = ['user_id' => 42, 'name' => 'Ada',
// 'roles' => ['admin', 'editor'], 'seen' => 1.5, 'ok' => true].
constexpr const char* kLogin =
    "user_id|i:42;name|s:3:\"Ada\";roles|a:2:{i:0;s:5:\"admin\";i:1;s:6:\"editor\";}"
    "seen|d:1.5;ok|b:1;";

auto login() -> Value {
  return Value::map({{Value("user_id"), Value(42)},
                     {Value("name"), Value("Ada")},
                     {Value("roles"), Value::list({Value("admin"), Value("editor")})},
                     {Value("seen"), Value(1.5)},
                     {Value("ok"), Value(true)}});
}

TEST(PhpSessionCodecTest, ReadsTheVariablesInTheirOrderWhateverTheFlags) {
  const PhpSessionCodec codec;
  EXPECT_EQ(codec.name(), "php-session");
  for (const std::uint32_t flags : {0U, 1U, 0x54U}) {
    const auto decoded = codec.decode(kLogin, flags);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message();
    EXPECT_EQ(*decoded, login());
  }
  // An empty session (PHP writes one for a new id) is an empty map.
  EXPECT_EQ(*codec.decode("", 0), Value::map({}));
}

TEST(PhpSessionCodecTest, WritesAMapAsPhpDoesWithFlagsZero) {
  const PhpSessionCodec codec;
  EXPECT_EQ(*codec.encode(login()), (Encoded{kLogin, 0}));
  EXPECT_EQ(*codec.encode(Value::map({})), (Encoded{"", 0}));
  // What it reads, it writes back byte for byte.
  EXPECT_EQ(*codec.encode(*codec.decode(kLogin, 0)), (Encoded{kLogin, 0}));
}

TEST(PhpSessionCodecTest, ASessionHoldingAnObjectKeepsItsBytes) {
  const PhpSessionCodec codec;
  const std::string data = "user|O:8:\"stdClass\":1:{s:2:\"id\";i:7;}name|s:1:\"x\";";
  const auto decoded = codec.decode(data, 0);
  ASSERT_TRUE(decoded.ok());
  ASSERT_TRUE(decoded->is_serialized());
  EXPECT_EQ(decoded->as_serialized().format, "php-session");
  EXPECT_EQ(*codec.encode(*decoded), (Encoded{data, 0}));
}

TEST(PhpSessionCodecTest, WhatPhpCannotHoldIsRefusedAndBadDataIsCorrupt) {
  const PhpSessionCodec codec;
  EXPECT_EQ(codec.encode(Value("user_id|i:42;")).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.encode(Value::list({Value(1)})).code(), CodecErrc::kNotEncodable);
  // PHP skips integer names and cannot read a name holding '|'.
  EXPECT_EQ(codec.encode(Value::map({{Value(1), Value("x")}})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.encode(Value::map({{Value("a|b"), Value("x")}})).code(),
            CodecErrc::kNotEncodable);
  EXPECT_EQ(codec.decode("user_id|i:42", 0).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("no bar here", 0).code(), CodecErrc::kCorrupt);
}

TEST(PhpSessionCodecTest, ItsLimitsBoundWhatItReads) {
  const PhpSessionCodec small(PhpSessionOptions{DecodeLimits{16, 256}});
  EXPECT_EQ(small.decode(kLogin, 0).code(), CodecErrc::kTooLarge);
  // A variable's array is one level deep, an array in it two.
  const PhpSessionCodec shallow(PhpSessionOptions{DecodeLimits{1024, 1}});
  EXPECT_TRUE(shallow.decode(kLogin, 0).ok());
  EXPECT_EQ(shallow.decode("m|a:1:{i:0;a:1:{i:0;i:1;}}", 0).code(), CodecErrc::kTooDeep);
}

TEST(PhpSessionCodecTest, MakeCodecNamesItAndTakesOnlyItsLimits) {
  const memshard::AnyCodec codec = memshard::make_codec_from_spec("php-session:max_size=16");
  ASSERT_NE(codec.target<PhpSessionCodec>(), nullptr);
  EXPECT_EQ(codec.target<PhpSessionCodec>()->options().limits.max_size, 16U);
  EXPECT_EQ(codec.decode(kLogin, 0).code(), CodecErrc::kTooLarge);
  EXPECT_THROW((void)memshard::make_codec("php-session", {{"serializer", "php"}}),
               memshard::ConfigError);
}

}  // namespace
}  // namespace codecs_php_session_codec_test
