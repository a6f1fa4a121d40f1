// SPDX-License-Identifier: MIT
// codecs/detail/quote.hpp: quote_bytes, the payload shown in error messages:
// which bytes are escaped (every byte value), the quotes, and where the text
// is cut (at `shown` input bytes, not output characters).

#include <cstddef>
#include <string>

#include "gtest/gtest.h"
#include "memshard/codecs/detail/quote.hpp"

namespace codecs_quote_test {
namespace {

using memshard::detail::quote_bytes;

TEST(QuoteTest, PrintableAsciiIsKeptAndEveryOtherByteEscaped) {
  EXPECT_EQ(quote_bytes(""), "\"\"");
  EXPECT_EQ(quote_bytes("12abc"), "\"12abc\"");
  EXPECT_EQ(quote_bytes(" ~"), "\" ~\"");  // 0x20 and 0x7e are printable
  EXPECT_EQ(quote_bytes(std::string("\0\x1f\x7f\x80\xff", 5)), "\"\\x00\\x1f\\x7f\\x80\\xff\"");
  // The quote and the backslash are escaped too, so the text is unambiguous.
  EXPECT_EQ(quote_bytes("a\"b\\c"), "\"a\\x22b\\x5cc\"");
  EXPECT_EQ(quote_bytes("\t\r\n"), "\"\\x09\\x0d\\x0a\"");
  EXPECT_EQ(quote_bytes("h\xc3\xa9"), "\"h\\xc3\\xa9\"");  // UTF-8 is shown as bytes
}

TEST(QuoteTest, EveryByteValue) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (unsigned value = 0; value < 256; ++value) {
    const std::string byte(1, static_cast<char>(value));
    std::string expected = "\"";
    if (value >= 0x20 && value < 0x7f && value != '"' && value != '\\') {
      expected += byte;
    } else {
      expected += "\\x";
      expected += kDigits[value >> 4U];
      expected += kDigits[value & 0xfU];
    }
    expected += "\"";
    EXPECT_EQ(quote_bytes(byte), expected) << value;
  }
}

TEST(QuoteTest, CutAfterShownBytes) {
  const std::string forty(40, 'x');
  EXPECT_EQ(quote_bytes(forty), "\"" + forty + "\"");
  EXPECT_EQ(quote_bytes(forty + "y"), "\"" + forty + "...\"");
  EXPECT_EQ(quote_bytes(std::string(1000, 'z')), std::string("\"").append(40, 'z').append("...\""));
  EXPECT_EQ(quote_bytes("abcdef", 3), "\"abc...\"");
  EXPECT_EQ(quote_bytes("abc", 3), "\"abc\"");
  EXPECT_EQ(quote_bytes("abc", 0), "\"...\"");
  EXPECT_EQ(quote_bytes("", 0), "\"\"");
  // The limit counts input bytes: 40 escaped bytes are shown whole.
  std::string escaped = "\"";
  for (int i = 0; i < 40; ++i) {
    escaped += "\\xff";
  }
  EXPECT_EQ(quote_bytes(std::string(40, '\xff')), escaped + "\"");
  EXPECT_EQ(quote_bytes(std::string(41, '\xff')), escaped + "...\"");
  // A cut may fall inside a UTF-8 sequence: its bytes are escaped anyway.
  std::string accents;
  for (int i = 0; i < 21; ++i) {
    accents += "\xc3\xa9";
  }
  std::string shown = "\"";
  for (int i = 0; i < 20; ++i) {
    shown += "\\xc3\\xa9";
  }
  EXPECT_EQ(quote_bytes(accents), shown + "...\"");
  EXPECT_EQ(quote_bytes(accents, 3), "\"\\xc3\\xa9\\xc3...\"");
}

}  // namespace
}  // namespace codecs_quote_test
