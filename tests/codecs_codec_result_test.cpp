// SPDX-License-Identifier: MIT
// codecs/codec_result.hpp: a CodecResult holds a value or a CodecError, never
// both; reading the one it does not hold throws BadCodecAccess, with the error
// in the message.

#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "memshard/codecs/codec_result.hpp"

namespace codecs_codec_result_test {
namespace {

using memshard::BadCodecAccess;
using memshard::CodecErrc;
using memshard::CodecError;
using memshard::CodecResult;

TEST(CodecResultTest, AValueIsReadAndItsErrorRefused) {
  CodecResult<std::string> result(std::string("bytes"));
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(static_cast<bool>(result));
  EXPECT_EQ(*result, "bytes");
  EXPECT_EQ(result->size(), 5U);
  result.value() += "!";
  EXPECT_EQ(std::move(result).value(), "bytes!");
  const CodecResult<int> number(7);
  EXPECT_THROW((void)number.error(), BadCodecAccess);
}

TEST(CodecResultTest, AnErrorIsReadAndItsValueRefused) {
  const CodecResult<std::string> result(CodecErrc::kCorrupt, "zlib: at byte 3: bad header");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(result.error().message(), "zlib: at byte 3: bad header");
  try {
    (void)result.value();
    FAIL() << "value() of an error";
  } catch (const BadCodecAccess& error) {
    EXPECT_STREQ(
        error.what(),
        "memshard: value() of a failed codec result: corrupt: zlib: at byte 3: bad header");
  }
  std::ostringstream out;
  out << result.error();
  EXPECT_EQ(out.str(), "corrupt: zlib: at byte 3: bad header");
  const CodecResult<int> converted(CodecError(CodecErrc::kTooDeep, "deep"));
  EXPECT_EQ(converted.code(), CodecErrc::kTooDeep);
}

TEST(CodecResultTest, EveryCodeHasAName) {
  EXPECT_EQ(to_string(CodecErrc::kUnknownFlags), "unknown_flags");
  EXPECT_EQ(to_string(CodecErrc::kCorrupt), "corrupt");
  EXPECT_EQ(to_string(CodecErrc::kUnsupported), "unsupported");
  EXPECT_EQ(to_string(CodecErrc::kTooLarge), "too_large");
  EXPECT_EQ(to_string(CodecErrc::kTooDeep), "too_deep");
  EXPECT_EQ(to_string(CodecErrc::kNotEncodable), "not_encodable");
}

TEST(DecodeLimitsTest, DefaultsBoundSizeAndDepth) {
  const memshard::DecodeLimits limits;
  EXPECT_EQ(limits.max_size, std::size_t{64} << 20U);
  EXPECT_EQ(limits.max_depth, 256U);
}

}  // namespace
}  // namespace codecs_codec_result_test
