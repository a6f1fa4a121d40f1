// SPDX-License-Identifier: MIT
// base64_test.cpp: detail::base64_encode and base64_decode: RFC 4648's vectors, every byte
// value, and a refusal for every text that is not canonical padded base64.

#include "memshard/coordination/detail/base64.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace base64_test {
namespace {

using memshard::detail::base64_decode;
using memshard::detail::base64_encode;

TEST(Base64Test, TheVectorsOfRfc4648) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [bytes, text] : vectors) {
    EXPECT_EQ(base64_encode(bytes), text);
    EXPECT_EQ(base64_decode(text), bytes);
  }
}

TEST(Base64Test, EveryByteValueAndLengthRoundTrips) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    bytes.push_back(static_cast<char>((i * 7 + 3) & 0xff));
    const std::string text = base64_encode(bytes);
    EXPECT_EQ(text.size() % 4, 0U);
    EXPECT_EQ(base64_decode(text), bytes);
  }
  EXPECT_EQ(base64_encode("\xfb\xff"), "+/8=");
}

TEST(Base64Test, TextThatIsNotCanonicalPaddedBase64IsRefused) {
  for (const std::string text : {"Zg", "Zg=", "Zg===", "Z===", "====", "Zm9v=", "Zm=v", "Zg==Zg==",
                                 "Zh==", "Zm9=", "Zm 9v", "Zm9v\n", "Zm-_", "Zm9\xc3"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(base64_decode(text).has_value());
  }
}

}  // namespace
}  // namespace base64_test
