// SPDX-License-Identifier: MIT
// Tests of codecs/detail/float_text.hpp: every writer against texts the real
// peers wrote, the readers of float and integer text.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "memshard/codecs/detail/float_text.hpp"
#include "support/value_table.hpp"

namespace codecs_float_text_test {
namespace {

using memshard::detail::parse_float_text;
using memshard::detail::parse_integer_text;
using memshard::detail::pecl_memcache_float_text;
using memshard::detail::perl_float_text;
using memshard::detail::php_gfmt_text;
using memshard::detail::php_repr_text;
using memshard::detail::python_float_text;
using memshard::detail::ruby_float_text;

auto bits_of(double value) -> std::uint64_t { return std::bit_cast<std::uint64_t>(value); }

struct Spelling {
  std::uint64_t bits;
  const char* serialize;  // PHP serialize(), between "d:" and ";"
  const char* json;       // PHP json_encode()
  const char* gfmt;       // php-memcached, type 2, as stored on the server
  const char* pecl;       // pecl memcache, flags 0x700, as stored on the server
  const char* python;     // Python repr()
  const char* ruby;       // Ruby Float#to_s
  const char* perl;       // Perl print
};

// Recorded from the real programs (Debian bookworm packages), one double per
// row given by its IEEE bits:
//   PHP 8.2.36 with php-memcached 3.2.0 and pecl memcache 4.0.5.2, against
//   memcached 1.6.18 on 127.0.0.1: for each $v, $m->set($k, $v) (Memcached)
//   and $p->set($k, $v) (Memcache), then a text-protocol "get" of the raw
//   bytes; serialize($v) and json_encode($v) in the same run;
//   Python 3.11.7:  repr(struct.unpack(">d", bits)[0]);
//   Ruby 3.1.2:     puts [bits].pack("Q>").unpack1("G").to_s;
//   Perl 5.36.0:    print unpack("d>", pack("Q>", bits)).
constexpr Spelling kSpellings[] = {
    {0x400a000000000000ULL, "3.25", "3.25", "3.25", "3.25", "3.25", "3.25", "3.25"},
    {0x3fd5555555555555ULL, "0.3333333333333333", "0.3333333333333333", ".3333333333333333",
     "0.33333333333333", "0.3333333333333333", "0.3333333333333333", "0.333333333333333"},
    {0x3fe5555555555555ULL, "0.6666666666666666", "0.6666666666666666", ".6666666666666666",
     "0.66666666666667", "0.6666666666666666", "0.6666666666666666", "0.666666666666667"},
    {0x444b1ae4d6e2ef50ULL, "1.0E+21", "1.0e+21", "1e+21", "1.0e+21", "1e+21", "1.0e+21", "1e+21"},
    {0xc44b1ae4d6e2ef50ULL, "-1.0E+21", "-1.0e+21", "-1e+21", "-1.0e+21", "-1e+21", "-1.0e+21",
     "-1e+21"},
    {0x3ee4f8b588e368f1ULL, "1.0E-5", "1.0e-5", "1e-05", "1.0e-5", "1e-05", "1.0e-05", "1e-05"},
    {0x4059000000000000ULL, "100", "100", "100", "100", "100.0", "100.0", "100"},
    {0x8000000000000000ULL, "-0", "-0", "-0", "-0", "-0.0", "-0.0", "0"},
    {0x0000000000000000ULL, "0", "0", "0", "0", "0.0", "0.0", "0"},
    {0x3fe0000000000000ULL, "0.5", "0.5", ".5", "0.5", "0.5", "0.5", "0.5"},
    {0x3fb999999999999aULL, "0.1", "0.1", ".1", "0.1", "0.1", "0.1", "0.1"},
    {0x3ff199999999999aULL, "1.1", "1.1", "1.1", "1.1", "1.1", "1.1", "1.1"},
    {0xc004000000000000ULL, "-2.5", "-2.5", "-2.5", "-2.5", "-2.5", "-2.5", "-2.5"},
    {0x412e848000000000ULL, "1000000", "1000000", "1e+06", "1000000", "1000000.0", "1000000.0",
     "1000000"},
    {0x40f86a0000000000ULL, "100000", "100000", "100000", "100000", "100000.0", "100000.0",
     "100000"},
    {0x40fe240000000000ULL, "123456", "123456", "123456", "123456", "123456.0", "123456.0",
     "123456"},
    {0x4132d68700000000ULL, "1234567", "1234567", "1234567", "1234567", "1234567.0", "1234567.0",
     "1234567"},
    {0x416312d000000000ULL, "10000000", "10000000", "1e+07", "10000000", "10000000.0", "10000000.0",
     "10000000"},
    {0x3f50624dd2f1a9fcULL, "0.001", "0.001", ".001", "0.001", "0.001", "0.001", "0.001"},
    {0x3f1a36e2eb1c432dULL, "0.0001", "0.0001", ".0001", "0.0001", "0.0001", "0.0001", "0.0001"},
    {0x3f23a92a30553261ULL, "0.00015", "0.00015", ".00015", "0.00015", "0.00015", "0.00015",
     "0.00015"},
    {0x3efa36e2eb1c432dULL, "2.5E-5", "2.5e-5", "2.5e-05", "2.5e-5", "2.5e-05", "2.5e-05",
     "2.5e-05"},
    {0x3ddb7cdfd9d7bdbbULL, "1.0E-10", "1.0e-10", "1e-10", "1.0e-10", "1e-10", "1.0e-10", "1e-10"},
    {0x42d6bcc41e900000ULL, "100000000000000", "100000000000000", "1e+14", "1.0e+14",
     "100000000000000.0", "100000000000000.0", "100000000000000"},
    {0x430c6bf526340000ULL, "1000000000000000", "1000000000000000", "1e+15", "1.0e+15",
     "1000000000000000.0", "1.0e+15", "1e+15"},
    {0x4341c37937e08000ULL, "10000000000000000", "10000000000000000", "1e+16", "1.0e+16", "1e+16",
     "1.0e+16", "1e+16"},
    {0x4376345785d8a000ULL, "1.0E+17", "1.0e+17", "1e+17", "1.0e+17", "1e+17", "1.0e+17", "1e+17"},
    {0x4415af1d78b58c40ULL, "1.0E+20", "1.0e+20", "1e+20", "1.0e+20", "1e+20", "1.0e+20", "1e+20"},
    {0x4480f0cf064dd592ULL, "1.0E+22", "1.0e+22", "1e+22", "1.0e+22", "1e+22", "1.0e+22", "1e+22"},
    {0x45208b2a2c280291ULL, "1.0E+25", "1.0e+25", "1e+25", "1.0e+25", "1e+25", "1.0e+25", "1e+25"},
    {0x54b249ad2594c37dULL, "1.0E+100", "1.0e+100", "1e+100", "1.0e+100", "1e+100", "1.0e+100",
     "1e+100"},
    {0x2b2bff2ee48e0530ULL, "1.0E-100", "1.0e-100", "1e-100", "1.0e-100", "1e-100", "1.0e-100",
     "1e-100"},
    {0x3e8421f5f40d8376ULL, "1.5E-7", "1.5e-7", "1.5e-07", "1.5e-7", "1.5e-07", "1.5e-07",
     "1.5e-07"},
    {0xbe7ad7f29abcaf48ULL, "-1.0E-7", "-1.0e-7", "-1e-07", "-1.0e-7", "-1e-07", "-1.0e-07",
     "-1e-07"},
    {0x7e41eb2d66005835ULL, "1.5E+300", "1.5e+300", "1.5e+300", "1.5e+300", "1.5e+300", "1.5e+300",
     "1.5e+300"},
    {0x437b69b4ba630f35ULL, "1.2345678901234568E+17", "1.2345678901234568e+17",
     "123456789012345680", "1.2345678901235e+17", "1.2345678901234568e+17",
     "1.2345678901234568e+17", "1.23456789012346e+17"},
    {0x4340000000000000ULL, "9007199254740992", "9007199254740992", "9007199254740992",
     "9.007199254741e+15", "9007199254740992.0", "9.007199254740992e+15", "9.00719925474099e+15"},
    {0x43e0000000000000ULL, "9.223372036854776E+18", "9.223372036854776e+18", "9223372036854776000",
     "9.2233720368548e+18", "9.223372036854776e+18", "9.223372036854776e+18",
     "9.22337203685478e+18"},
    {0x0000000000000001ULL, "5.0E-324", "5.0e-324", "5e-324", "4.9406564584125e-324", "5e-324",
     "5.0e-324", "4.94065645841247e-324"},
    {0x0010000000000000ULL, "2.2250738585072014E-308", "2.2250738585072014e-308",
     "2.2250738585072014e-308", "2.2250738585072e-308", "2.2250738585072014e-308",
     "2.2250738585072014e-308", "2.2250738585072e-308"},
    {0x7fefffffffffffffULL, "1.7976931348623157E+308", "1.7976931348623157e+308",
     "1.7976931348623157e+308", "1.7976931348623e+308", "1.7976931348623157e+308",
     "1.7976931348623157e+308", "1.79769313486232e+308"},
    {0x41678c29dccccccdULL, "12345678.9", "12345678.9", "12345678.9", "12345678.9", "12345678.9",
     "12345678.9", "12345678.9"},
    {0x42d6bcc41e8fffffULL, "99999999999999.98", "99999999999999.98", "99999999999999.98",
     "1.0e+14", "99999999999999.98", "99999999999999.98", "100000000000000"},
    {0x430c6bf52633ffffULL, "999999999999999.9", "999999999999999.9", "999999999999999.9",
     "1.0e+15", "999999999999999.9", "999999999999999.9", "1e+15"},
    {0x3fd3333333333334ULL, "0.30000000000000004", "0.30000000000000004", ".30000000000000004",
     "0.3", "0.30000000000000004", "0.30000000000000004", "0.3"},
    {0x4011666666666666ULL, "4.35", "4.35", "4.35", "4.35", "4.35", "4.35", "4.35"},
    {0x41f0000000000000ULL, "4294967296", "4294967296", "4294967296", "4294967296", "4294967296.0",
     "4294967296.0", "4294967296"},
    {0x42dc12218377de40ULL, "123456789012345", "123456789012345", "123456789012345",
     "1.2345678901234e+14", "123456789012345.0", "123456789012345.0", "123456789012345"},
    {0x42a674e79c5fe500ULL, "12345678901234.5", "12345678901234.5", "12345678901234.5",
     "12345678901234", "12345678901234.5", "12345678901234.5", "12345678901234.5"},
    {0x3f202e85be111841ULL, "0.000123456789", "0.000123456789", ".000123456789", "0.000123456789",
     "0.000123456789", "0.000123456789", "0.000123456789"},
    {0x44b52d02c7e14af6ULL, "1.0E+23", "1.0e+23", "1e+23", "1.0e+23", "1e+23", "1.0e+23", "1e+23"},
    {0x3f23a92a30553262ULL, "0.00015000000000000001", "0.00015000000000000001",
     ".00015000000000000001", "0.00015", "0.00015000000000000001", "0.00015000000000000001",
     "0.00015"},
    {0x4040aaaaaaaaaaabULL, "33.333333333333336", "33.333333333333336", "33.333333333333336",
     "33.333333333333", "33.333333333333336", "33.333333333333336", "33.3333333333333"},
    {0xc05edd2f1a9fbe77ULL, "-123.456", "-123.456", "-123.456", "-123.456", "-123.456", "-123.456",
     "-123.456"},
};

auto from_bits(std::uint64_t bits) -> double { return std::bit_cast<double>(bits); }

TEST(FloatText, WritersMatchThePeersForEveryRecordedDouble) {
  ASSERT_GE(std::size(kSpellings), 40U);
  for (const Spelling& row : kSpellings) {
    const double value = from_bits(row.bits);
    SCOPED_TRACE(row.serialize);
    EXPECT_EQ(php_repr_text(value, 'E'), row.serialize);
    EXPECT_EQ(php_repr_text(value, 'e'), row.json);
    EXPECT_EQ(php_gfmt_text(value), row.gfmt);
    EXPECT_EQ(pecl_memcache_float_text(value), row.pecl);
    EXPECT_EQ(python_float_text(value), row.python);
    EXPECT_EQ(ruby_float_text(value), row.ruby);
    EXPECT_EQ(perl_float_text(value), row.perl);
  }
}

TEST(FloatText, ReaderReadsEveryLosslessSpellingBackToTheSameBits) {
  for (const Spelling& row : kSpellings) {
    for (const char* text : {row.serialize, row.json, row.gfmt, row.python, row.ruby}) {
      SCOPED_TRACE(text);
      const auto parsed = parse_float_text(text);
      ASSERT_TRUE(parsed.has_value());
      EXPECT_EQ(bits_of(*parsed), row.bits);
    }
  }
}

TEST(FloatText, ReaderReadsTheLossySpellingsAsStrtodDoes) {
  for (const Spelling& row : kSpellings) {
    for (const char* text : {row.pecl, row.perl}) {
      SCOPED_TRACE(text);
      const auto parsed = parse_float_text(text);
      ASSERT_TRUE(parsed.has_value());
      EXPECT_EQ(bits_of(*parsed), bits_of(std::strtod(text, nullptr)));
    }
  }
  // Lossy: 1/3 through pecl memcache or Perl is another double.
  EXPECT_NE(*parse_float_text("0.33333333333333"), 1.0 / 3);
  EXPECT_NE(*parse_float_text("0.333333333333333"), 1.0 / 3);
}

TEST(FloatText, NonFiniteSpellings) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Recorded as above.
  EXPECT_EQ(php_gfmt_text(inf), "Infinity");
  EXPECT_EQ(php_gfmt_text(-inf), "-Infinity");
  EXPECT_EQ(php_gfmt_text(nan), "NaN");
  EXPECT_EQ(php_repr_text(inf, 'E'), "INF");
  EXPECT_EQ(php_repr_text(-inf, 'E'), "-INF");
  EXPECT_EQ(php_repr_text(nan, 'E'), "NAN");
  EXPECT_EQ(pecl_memcache_float_text(inf), "INF");
  EXPECT_EQ(pecl_memcache_float_text(-inf), "-INF");
  EXPECT_EQ(pecl_memcache_float_text(nan), "NAN");
  EXPECT_EQ(python_float_text(inf), "inf");
  EXPECT_EQ(python_float_text(-inf), "-inf");
  EXPECT_EQ(python_float_text(nan), "nan");
  EXPECT_EQ(ruby_float_text(inf), "Infinity");
  EXPECT_EQ(ruby_float_text(-inf), "-Infinity");
  EXPECT_EQ(ruby_float_text(nan), "NaN");
  EXPECT_EQ(perl_float_text(inf), "Inf");
  EXPECT_EQ(perl_float_text(-inf), "-Inf");
  EXPECT_EQ(perl_float_text(nan), "NaN");

  // A NaN with the sign bit (INF - INF): php-memcached stores "-NaN" and
  // reads it back as 0.0; memshard writes "NaN". PHP (serialize, pecl) and
  // the others never write a sign on a NaN.
  const double negative_nan = from_bits(0xfff8000000000000ULL);
  ASSERT_TRUE(std::signbit(negative_nan));
  EXPECT_EQ(php_gfmt_text(negative_nan), "NaN");
  EXPECT_EQ(php_repr_text(negative_nan, 'E'), "NAN");
  EXPECT_EQ(pecl_memcache_float_text(negative_nan), "NAN");
  EXPECT_EQ(python_float_text(negative_nan), "nan");
  EXPECT_EQ(ruby_float_text(negative_nan), "NaN");
  EXPECT_EQ(perl_float_text(negative_nan), "NaN");

  for (std::string_view text : {"Infinity", "INF", "Inf", "inf"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_float_text(text), inf);
    EXPECT_EQ(parse_float_text(std::string("-").append(text)), -inf);
  }
  for (std::string_view text : {"NaN", "NAN", "nan", "-NaN"}) {
    SCOPED_TRACE(text);
    const auto parsed = parse_float_text(text);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_TRUE(std::isnan(*parsed));
  }
}

TEST(FloatText, ReaderKeepsTheSignOfZero) {
  for (std::string_view text : {"-0", "-0.0", "-.0", "-0e5"}) {
    SCOPED_TRACE(text);
    const auto parsed = parse_float_text(text);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(bits_of(*parsed), 0x8000000000000000ULL);
  }
  EXPECT_EQ(bits_of(*parse_float_text("0")), 0U);
}

TEST(FloatText, ReaderAcceptsTheNumberForms) {
  EXPECT_EQ(parse_float_text(".333"), 0.333);
  EXPECT_EQ(parse_float_text("-.5"), -0.5);
  EXPECT_EQ(parse_float_text("1e21"), 1e21);  // Ruby Marshal writes an unsigned exponent
  EXPECT_EQ(parse_float_text("1E5"), 1e5);
  EXPECT_EQ(parse_float_text("1.0E+25"), 1e25);
  EXPECT_EQ(parse_float_text("2.5e-05"), 2.5e-5);
  EXPECT_EQ(parse_float_text("007.5"), 7.5);
  EXPECT_EQ(parse_float_text("42"), 42.0);
  // 1 followed by 400 zeros, scaled back into range.
  EXPECT_EQ(parse_float_text("1" + std::string(400, '0') + "e-300"), 1e100);
  EXPECT_EQ(parse_float_text("0." + std::string(399, '0') + "1e400"), 1.0);
}

TEST(FloatText, ReaderReadsOutOfRangeMagnitudesAsStrtod) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(parse_float_text("1e400"), inf);
  EXPECT_EQ(parse_float_text("-1e400"), -inf);
  EXPECT_EQ(parse_float_text("1" + std::string(400, '0')), inf);
  EXPECT_EQ(parse_float_text("0.0000000000001e+330"), inf);  // a positive order
  EXPECT_EQ(bits_of(*parse_float_text("1e-400")), 0U);
  EXPECT_EQ(bits_of(*parse_float_text("-1e-400")), 0x8000000000000000ULL);
  EXPECT_EQ(bits_of(*parse_float_text("100000000000e-340")), 0U);  // a big integer part
  // Leading zeros of the fraction count: this is 1e-391.
  EXPECT_EQ(bits_of(*parse_float_text("0." + std::string(400, '0') + "1e+10")), 0U);
  EXPECT_EQ(parse_float_text("1e99999999999999999999"), inf);
  EXPECT_EQ(bits_of(*parse_float_text("1e-99999999999999999999")), 0U);
  EXPECT_EQ(bits_of(*parse_float_text("0e99999")), 0U);
}

TEST(FloatText, ReaderRefusesEverythingElse) {
  for (std::string_view text :
       {"",      " 1",        "1 ",       "+1",       "1.",    ".",      "-",       "-.",  "e5",
        "1e",    "1e+",       "1e-",      "--1",      "0x1p3", "0x10",   "1,5",     "1_0", "1.5.2",
        "1e5.5", "Infinity ", "infinity", "INFINITY", "+INF",  "nan(1)", "-nan(1)", "Na",  "In",
        "1f",    "1d",        "\t1",      "1\n",      "NaN0",  "--inf"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_float_text(text), std::nullopt);
  }
  EXPECT_EQ(parse_float_text(std::string_view("1\0", 2)), std::nullopt);
}

TEST(IntegerText, ReadsDecimalInt64) {
  EXPECT_EQ(parse_integer_text("0"), 0);
  EXPECT_EQ(parse_integer_text("42"), 42);
  EXPECT_EQ(parse_integer_text("-7"), -7);
  EXPECT_EQ(parse_integer_text("1099511627776"), 1099511627776LL);
  EXPECT_EQ(parse_integer_text("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse_integer_text("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
  // Leading zeros: the peers' own readers accept them.
  EXPECT_EQ(parse_integer_text("007"), 7);
  EXPECT_EQ(parse_integer_text("-0"), 0);
}

TEST(IntegerText, RefusesEverythingElse) {
  for (std::string_view text :
       {"", "-", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "9223372036854775808",
        "-9223372036854775809", "99999999999999999999999", "1-", "--1", "\xd9\xa1"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_integer_text(text), std::nullopt);
  }
}

// The float cells of the value tables (tests/golden/values): each client's
// stored text for 3.25, 1/3 and 1e21.
TEST(FloatText, GoldenValueTables) {
  const std::filesystem::path dir = std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values";
  const auto values = memshard::testing::read_value_set(dir);
  struct Source {
    const char* file;
    const char* case_id;
    std::string (*write)(double);
    bool lossless;
  };
  const Source sources[] = {
      {"php_memcached.values", "php-memcached-default", &php_gfmt_text, true},
      {"php_memcache.values", "php-memcache-default", &pecl_memcache_float_text, false},
      {"dalli.values", "dalli-raw", &ruby_float_text, true},
      {"pymemcache.values", "pymemcache-default", &python_float_text, true},
      {"cache_memcached.values", "cache-memcached-default", &perl_float_text, false},
      {"cache_memcached_fast.values", "cache-memcached-fast-default", &perl_float_text, false},
  };
  int checked = 0;
  for (const Source& source : sources) {
    const auto cases = memshard::testing::read_value_cases(dir / source.file);
    const memshard::testing::ValueCase* found = nullptr;
    for (const auto& value_case : cases) {
      if (value_case.id == source.case_id) {
        found = &value_case;
      }
    }
    ASSERT_NE(found, nullptr) << source.case_id;
    for (const auto& named : values) {
      if (!named.value.is_float()) {
        continue;
      }
      SCOPED_TRACE(std::string(source.case_id) + " " + named.name);
      const auto* item = found->item(named.name);
      ASSERT_NE(item, nullptr);
      EXPECT_EQ(source.write(named.value.as_double()), item->bytes);
      const auto parsed = parse_float_text(item->bytes);
      ASSERT_TRUE(parsed.has_value());
      if (source.lossless) {
        EXPECT_EQ(bits_of(*parsed), bits_of(named.value.as_double()));
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 18);
}

}  // namespace
}  // namespace codecs_float_text_test
