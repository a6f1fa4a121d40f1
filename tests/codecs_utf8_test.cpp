// SPDX-License-Identifier: MIT
// codecs/detail/utf8.hpp: is_utf8 and utf8_error_at against an independent
// decoder over every string of one, two and three bytes and every four-byte
// sequence with boundary continuation bytes; then each rule of RFC 3629 by
// name (overlong forms, surrogates, nothing above U+10FFFF, truncated
// sequences, stray continuation bytes, every lead byte) and the offsets
// utf8_error_at reports.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gtest/gtest.h"
#include "memshard/codecs/detail/utf8.hpp"

namespace codecs_utf8_test {
namespace {

using memshard::detail::is_utf8;
using memshard::detail::utf8_error_at;
using memshard::detail::utf8_next;

// sequence_length: the length of the well-formed UTF-8 sequence at `at`, or 0.
// Decodes the code point and checks it, rather than checking byte ranges.
auto sequence_length(std::string_view text, std::size_t at) -> std::size_t {
  const auto lead = static_cast<unsigned char>(text[at]);
  std::size_t length = 0;
  std::uint32_t code = 0;
  if (lead < 0x80U) {
    return 1;
  }
  if ((lead & 0xe0U) == 0xc0U) {
    length = 2;
    code = lead & 0x1fU;
  } else if ((lead & 0xf0U) == 0xe0U) {
    length = 3;
    code = lead & 0x0fU;
  } else if ((lead & 0xf8U) == 0xf0U) {
    length = 4;
    code = lead & 0x07U;
  } else {
    return 0;  // a continuation byte, or 0xf8..0xff
  }
  if (text.size() - at < length) {
    return 0;
  }
  for (std::size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[at + i]);
    if ((next & 0xc0U) != 0x80U) {
      return 0;
    }
    code = (code << 6U) | (next & 0x3fU);
  }
  constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || (code >= 0xd800U && code <= 0xdfffU) || code > 0x10ffffU) {
    return 0;
  }
  return length;
}

auto expected_error_at(std::string_view text) -> std::size_t {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t length = sequence_length(text, at);
    if (length == 0) {
      return at;
    }
    at += length;
  }
  return at;
}

auto bytes(std::initializer_list<unsigned> values) -> std::string {
  std::string out;
  for (const unsigned value : values) {
    out.push_back(static_cast<char>(value));
  }
  return out;
}

// Usable at compile time.
static_assert(is_utf8(""));
static_assert(is_utf8("h\xc3\xa9llo"));
static_assert(!is_utf8("\xc0\x80"));
static_assert(utf8_error_at("ab\xff") == 2);

TEST(Utf8Test, EveryStringOfUpToThreeBytesAgreesWithADecoder) {
  std::string text(1, '\0');
  for (unsigned a = 0; a < 256; ++a) {
    text[0] = static_cast<char>(a);
    ASSERT_EQ(utf8_error_at(text), expected_error_at(text)) << a;
  }
  text.assign(2, '\0');
  for (unsigned a = 0; a < 256; ++a) {
    for (unsigned b = 0; b < 256; ++b) {
      text[0] = static_cast<char>(a);
      text[1] = static_cast<char>(b);
      ASSERT_EQ(utf8_error_at(text), expected_error_at(text)) << a << ' ' << b;
    }
  }
  text.assign(3, '\0');
  std::size_t valid = 0;
  for (unsigned a = 0; a < 256; ++a) {
    text[0] = static_cast<char>(a);
    for (unsigned b = 0; b < 256; ++b) {
      text[1] = static_cast<char>(b);
      for (unsigned c = 0; c < 256; ++c) {
        text[2] = static_cast<char>(c);
        const std::size_t at = utf8_error_at(text);
        if (at != expected_error_at(text)) {
          FAIL() << a << ' ' << b << ' ' << c << ": " << at;
        }
        valid += at == 3 ? 1U : 0U;
      }
    }
  }
  // Three ASCII bytes, ASCII + a 2-byte sequence either way, or one 3-byte
  // sequence (U+0800..U+FFFF less the 2,048 surrogates).
  EXPECT_EQ(valid, 128U * 128U * 128U + 2U * 128U * 1920U + (0x10000U - 0x800U - 0x800U));
}

TEST(Utf8Test, EveryFourByteLeadWithBoundaryContinuations) {
  const unsigned edges[] = {0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff};
  std::string text(4, '\0');
  std::size_t valid = 0;
  for (unsigned a = 0; a < 256; ++a) {
    for (unsigned b = 0; b < 256; ++b) {
      for (const unsigned c : edges) {
        for (const unsigned d : edges) {
          text[0] = static_cast<char>(a);
          text[1] = static_cast<char>(b);
          text[2] = static_cast<char>(c);
          text[3] = static_cast<char>(d);
          ASSERT_EQ(utf8_error_at(text), expected_error_at(text))
              << a << ' ' << b << ' ' << c << ' ' << d;
          valid += is_utf8(text) ? 1U : 0U;
        }
      }
    }
  }
  EXPECT_GT(valid, 0U);
}

TEST(Utf8Test, TheBoundariesOfEachLength) {
  EXPECT_TRUE(is_utf8(""));
  EXPECT_TRUE(is_utf8(std::string("a\0b", 3)));  // NUL is a character
  EXPECT_TRUE(is_utf8("\x7f"));
  EXPECT_TRUE(is_utf8(bytes({0xc2, 0x80})));              // U+0080
  EXPECT_TRUE(is_utf8(bytes({0xdf, 0xbf})));              // U+07FF
  EXPECT_TRUE(is_utf8(bytes({0xe0, 0xa0, 0x80})));        // U+0800
  EXPECT_TRUE(is_utf8(bytes({0xed, 0x9f, 0xbf})));        // U+D7FF
  EXPECT_TRUE(is_utf8(bytes({0xee, 0x80, 0x80})));        // U+E000
  EXPECT_TRUE(is_utf8(bytes({0xef, 0xbf, 0xbf})));        // U+FFFF
  EXPECT_TRUE(is_utf8(bytes({0xf0, 0x90, 0x80, 0x80})));  // U+10000
  EXPECT_TRUE(is_utf8(bytes({0xf4, 0x8f, 0xbf, 0xbf})));  // U+10FFFF
  EXPECT_TRUE(is_utf8("h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9f\x98\x80"));
}

TEST(Utf8Test, OverlongFormsAreRefused) {
  EXPECT_EQ(utf8_error_at(bytes({0xc0, 0x80})), 0U);  // U+0000 in two bytes
  EXPECT_EQ(utf8_error_at(bytes({0xc0, 0xaf})), 0U);  // '/'
  EXPECT_EQ(utf8_error_at(bytes({0xc1, 0xbf})), 0U);  // U+007F
  EXPECT_EQ(utf8_error_at(bytes({0xe0, 0x80, 0x80})), 0U);
  EXPECT_EQ(utf8_error_at(bytes({0xe0, 0x9f, 0xbf})), 0U);  // U+07FF in three bytes
  EXPECT_EQ(utf8_error_at(bytes({0xf0, 0x80, 0x80, 0x80})), 0U);
  EXPECT_EQ(utf8_error_at(bytes({0xf0, 0x8f, 0xbf, 0xbf})), 0U);  // U+FFFF in four bytes
}

TEST(Utf8Test, SurrogatesAreRefused) {
  EXPECT_EQ(utf8_error_at(bytes({0xed, 0xa0, 0x80})), 0U);  // U+D800
  EXPECT_EQ(utf8_error_at(bytes({0xed, 0xaf, 0xbf})), 0U);  // U+DBFF
  EXPECT_EQ(utf8_error_at(bytes({0xed, 0xb0, 0x80})), 0U);  // U+DC00
  EXPECT_EQ(utf8_error_at(bytes({0xed, 0xbf, 0xbf})), 0U);  // U+DFFF
  // CESU-8's pair for U+1F600.
  EXPECT_EQ(utf8_error_at(bytes({0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80})), 0U);
}

TEST(Utf8Test, NothingAboveU10FFFF) {
  EXPECT_EQ(utf8_error_at(bytes({0xf4, 0x90, 0x80, 0x80})), 0U);  // U+110000
  EXPECT_EQ(utf8_error_at(bytes({0xf4, 0xbf, 0xbf, 0xbf})), 0U);
  EXPECT_EQ(utf8_error_at(bytes({0xf5, 0x80, 0x80, 0x80})), 0U);
  EXPECT_EQ(utf8_error_at(bytes({0xf7, 0xbf, 0xbf, 0xbf})), 0U);  // U+1FFFFF
  EXPECT_EQ(utf8_error_at(bytes({0xf8, 0x88, 0x80, 0x80, 0x80})), 0U);
  EXPECT_EQ(utf8_error_at(bytes({0xfc, 0x84, 0x80, 0x80, 0x80, 0x80})), 0U);
}

TEST(Utf8Test, EveryLeadByteAlone) {
  for (unsigned lead = 0; lead < 256; ++lead) {
    const std::string text(1, static_cast<char>(lead));
    EXPECT_EQ(is_utf8(text), lead < 0x80) << lead;
    // With a continuation byte after it: only the two-byte leads C2..DF.
    const std::string pair = text + "\xbf";
    EXPECT_EQ(is_utf8(pair), lead >= 0xc2 && lead <= 0xdf) << lead;
  }
}

TEST(Utf8Test, TruncatedSequencesAndStrayContinuations) {
  EXPECT_EQ(utf8_error_at("\xc3"), 0U);
  EXPECT_EQ(utf8_error_at("ab\xe2\x9c"), 2U);
  EXPECT_EQ(utf8_error_at("\xf0\x9f\x98"), 0U);
  EXPECT_EQ(utf8_error_at("x\xf0\x9f"), 1U);
  EXPECT_EQ(utf8_error_at("\x80"), 0U);
  EXPECT_EQ(utf8_error_at("a\xbf"), 1U);
  EXPECT_EQ(utf8_error_at("\xc3\xa9\xa9"), 2U);  // one continuation too many
  // A sequence broken by an ASCII byte or by a new lead.
  EXPECT_EQ(utf8_error_at("\xe2\x28\xa1"), 0U);
  EXPECT_EQ(utf8_error_at("\xe2\x9c\x28"), 0U);
  EXPECT_EQ(utf8_error_at("\xf0\x9f\x98\x28"), 0U);
  EXPECT_EQ(utf8_error_at("\xc3\xc3\xa9"), 0U);
  // The truncated sequence is found before the end of a longer text, too.
  EXPECT_EQ(utf8_error_at(std::string("\xe2\x9c", 2) + std::string(100, 'a')), 0U);
}

TEST(Utf8Test, TheOffsetIsThatOfTheFirstBadSequence) {
  EXPECT_EQ(utf8_error_at("h\xc3\xa9llo \xff"), 7U);
  EXPECT_EQ(utf8_error_at("\xf0\x9f\x98\x80\x80"), 4U);
  EXPECT_EQ(utf8_error_at("\xe2\x9c\x93\xed\xa0\x80ok"), 3U);
  EXPECT_EQ(utf8_error_at("ok\xff\xff"), 2U);
  const std::string valid = "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80";
  EXPECT_EQ(utf8_error_at(valid), valid.size());
  for (std::size_t cut = 0; cut <= valid.size(); ++cut) {
    const std::string prefix = valid.substr(0, cut);
    EXPECT_EQ(utf8_error_at(prefix), expected_error_at(prefix)) << cut;
  }
}

TEST(Utf8Test, SequencesAmongAsciiRunsOfEveryLengthAndAlignment) {
  // Runs of ASCII are checked eight bytes at a time: each sequence (good,
  // bad or cut) after and before every run length from 0 to 17 bytes.
  const std::string sequences[] = {
      "\xc3\xa9", "\xe2\x9c\x93", "\xf0\x9f\x98\x80", "\xff",         "\x80",
      "\xc3",     "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3\xa9\xff", "\x7f"};
  std::size_t valid = 0;
  for (std::size_t before = 0; before <= 17; ++before) {
    for (std::size_t after = 0; after <= 17; ++after) {
      for (const std::string& sequence : sequences) {
        const std::string text = std::string(before, 'a') + sequence + std::string(after, 'z');
        ASSERT_EQ(utf8_error_at(text), expected_error_at(text)) << before << ' ' << after;
        valid += is_utf8(text) ? 1U : 0U;
        // Two sequences, a run apart.
        const std::string twice = sequence + std::string(before, 'a') + sequence;
        ASSERT_EQ(utf8_error_at(twice), expected_error_at(twice)) << before;
      }
    }
  }
  EXPECT_EQ(valid, 18U * 18U * 4U);  // the three good sequences and DEL
}

TEST(Utf8Test, NextDecodesOneCharacterByTheSameRules) {
  // Its lengths agree with the decoder above on every string of two bytes
  // and on the four-byte leads with boundary continuation bytes.
  std::string text(2, '\0');
  for (unsigned a = 0; a < 256; ++a) {
    for (unsigned b = 0; b < 256; ++b) {
      text[0] = static_cast<char>(a);
      text[1] = static_cast<char>(b);
      const auto next = utf8_next(text, 0);
      ASSERT_EQ(next ? next->second : 0U, sequence_length(text, 0)) << a << ' ' << b;
    }
  }
  const unsigned edges[] = {0x7f, 0x80, 0x8f, 0x90, 0xbf, 0xc0};
  text.assign(4, '\0');
  for (unsigned a = 0xe0; a < 256; ++a) {
    for (const unsigned b : edges) {
      for (const unsigned c : edges) {
        text = bytes({a, b, c, 0x80});
        const auto next = utf8_next(text, 0);
        ASSERT_EQ(next ? next->second : 0U, sequence_length(text, 0)) << a << ' ' << b << ' ' << c;
      }
    }
  }
  // The code points, at an offset.
  const std::string line = "a\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80";
  EXPECT_EQ(utf8_next(line, 0), (std::pair<char32_t, std::size_t>{U'a', 1}));
  EXPECT_EQ(utf8_next(line, 1), (std::pair<char32_t, std::size_t>{0xe9, 2}));
  EXPECT_EQ(utf8_next(line, 3), (std::pair<char32_t, std::size_t>{0x2713, 3}));
  EXPECT_EQ(utf8_next(line, 6), (std::pair<char32_t, std::size_t>{0x1f600, 4}));
  EXPECT_EQ(utf8_next(line, 7), std::nullopt);  // a continuation byte
  static_assert(utf8_next("\xe2\x9c\x93", 0)->first == 0x2713);
}

}  // namespace
}  // namespace codecs_utf8_test
