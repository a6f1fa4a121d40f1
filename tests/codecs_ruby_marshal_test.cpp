// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <zlib.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/codecs/ruby_marshal.hpp"
#include "support/allocation_meter.hpp"
#include "support/codec_bytes.hpp"
#include "support/value_table.hpp"

namespace memshard {
namespace codecs_ruby_marshal_test {
namespace {

using testing::allocated_bytes;
using testing::base64_decode;
using testing::counting_allocations;
using testing::to_hex;

auto from_hex(std::string_view hex) -> std::string {
  auto nibble = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  std::string out;
  for (std::size_t at = 0; at + 1 < hex.size(); at += 2) {
    const int high = nibble(hex[at]);
    const int low = nibble(hex[at + 1]);
    if (high < 0 || low < 0) {
      ADD_FAILURE() << "bad hex " << hex;
      return {};
    }
    out.push_back(static_cast<char>(high * 16 + low));
  }
  return out;
}

// same: equal Values, doubles compared by their bits (NaN equals NaN, -0.0
// differs from 0.0).
auto same(const Value& a, const Value& b) -> bool {
  if (a.kind() != b.kind()) {
    return false;
  }
  switch (a.kind()) {
    case ValueKind::kFloat:
      return std::isnan(a.as_double()) ? std::isnan(b.as_double())
                                       : std::bit_cast<std::uint64_t>(a.as_double()) ==
                                             std::bit_cast<std::uint64_t>(b.as_double());
    case ValueKind::kList: {
      const Value::List& x = a.as_list();
      const Value::List& y = b.as_list();
      if (x.size() != y.size()) {
        return false;
      }
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!same(x[i], y[i])) {
          return false;
        }
      }
      return true;
    }
    case ValueKind::kMap: {
      const Value::Map& x = a.as_map();
      const Value::Map& y = b.as_map();
      if (x.size() != y.size()) {
        return false;
      }
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!same(x[i].first, y[i].first) || !same(x[i].second, y[i].second)) {
          return false;
        }
      }
      return true;
    }
    default:
      return a == b;
  }
}

auto describe(const Value& value) -> std::string {
  switch (value.kind()) {
    case ValueKind::kNull:
      return "nil";
    case ValueKind::kBool:
      return value.as_bool() ? "true" : "false";
    case ValueKind::kInt:
      return std::to_string(value.as_int());
    case ValueKind::kFloat:
      return "float " + detail::marshal_float_text(value.as_double());
    case ValueKind::kString:
      return "\"" + value.as_string() + "\"";
    case ValueKind::kBytes:
      return "bytes " + to_hex(value.as_string());
    case ValueKind::kList: {
      std::string out = "[";
      for (const Value& item : value.as_list()) {
        out += describe(item) + ", ";
      }
      return out + "]";
    }
    case ValueKind::kMap: {
      std::string out = "{";
      for (const Value::Entry& entry : value.as_map()) {
        out += describe(entry.first) + " => " + describe(entry.second) + ", ";
      }
      return out + "}";
    }
    case ValueKind::kSerialized:
      return "serialized " + value.as_serialized().format + " " +
             to_hex(value.as_serialized().data);
  }
  return "?";
}

auto inf() -> double { return std::numeric_limits<double>::infinity(); }

// RubyCase: what `ruby -e 'print Marshal.dump(<ruby>)' | xxd -p` printed
// (ruby 3.1.2p20, Debian bookworm), the Value it decodes to, and whether
// marshal_dump(value) writes exactly those bytes (false where Ruby's object
// has what a Value cannot say: a Symbol, another encoding, a shared object).
struct RubyCase {
  std::string ruby;
  std::string hex;
  Value value;
  bool dump_exact = true;
};

auto ruby_cases() -> std::vector<RubyCase> {
  const Value a_str("a");
  return {
      {"nil", "040830", Value()},
      {"true", "040854", Value(true)},
      {"false", "040846", Value(false)},
      {"0", "04086900", Value(0)},
      {"122", "0408697f", Value(122)},
      {"123", "040869017b", Value(123)},
      {"-123", "04086980", Value(-123)},
      {"-124", "040869ff84", Value(-124)},
      {"256", "040869020001", Value(256)},
      {"-257", "040869fefffe", Value(-257)},
      {"2**30-1", "04086904ffffff3f", Value((std::int64_t{1} << 30) - 1)},
      {"2**30", "04086c2b0700000040", Value(std::int64_t{1} << 30)},
      {"-2**30", "040869fc000000c0", Value(-(std::int64_t{1} << 30))},
      {"-2**30-1", "04086c2d0701000040", Value(-(std::int64_t{1} << 30) - 1)},
      {"2**62", "04086c2b090000000000000040", Value(std::int64_t{1} << 62)},
      {"2**63-1", "04086c2b09ffffffffffffff7f", Value(std::numeric_limits<std::int64_t>::max())},
      {"-2**63", "04086c2d090000000000000080", Value(std::numeric_limits<std::int64_t>::min())},
      {"-2**40", "04086c2d08000000000001", Value(-(std::int64_t{1} << 40))},
      {"3.25", "04086609332e3235", Value(3.25)},
      {"1.0/3", "04086617302e33333333333333333333333333333333", Value(1.0 / 3)},
      {"1e21", "0408660931653231", Value(1e21)},
      {"100.0", "04086608316532", Value(100.0)},
      {"-0.0", "040866072d30", Value(-0.0)},
      {"Float::INFINITY", "04086608696e66", Value(inf())},
      {"-Float::INFINITY", "040866092d696e66", Value(-inf())},
      {"Float::NAN", "040866086e616e", Value(std::numeric_limits<double>::quiet_NaN())},
      {"1e-5", "0408660931652d35", Value(1e-5)},
      {"123456789.123", "040866123132333435363738392e313233", Value(123456789.123)},
      {"0.0001", "0408660b302e30303031", Value(0.0001)},
      {"2.0**62", "04086619342e363131363836303138343237333838653138", Value(0x1p62)},
      {"5e-324", "0408660b35652d333234", Value(5e-324)},
      {"1.7976931348623157e308", "0408661b312e3739373639333133343836323331353765333038",
       Value(1.7976931348623157e308)},
      {"\"\"", "0408492200063a064554", Value("")},
      {"\"héllo\"", "040849220b68c3a96c6c6f063a064554", Value("h\xc3\xa9llo")},
      {"\"\\xff\".b", "04082206ff", Value::bytes("\xff")},
      {"\"\\xff\\x00\".b", "04082207ff00", Value::bytes(std::string("\xff\x00", 2))},
      {"\"abc\".force_encoding(\"US-ASCII\")", "0408492208616263063a064546", Value("abc"), false},
      {"\"é\".encode(\"ISO-8859-1\")", "0408492206e9063a0d656e636f64696e67220f49534f2d383835392d31",
       Value("\xe9"), false},
      // the second String's encoding name links the first's ("@" 07)
      {"[\"a\".encode(\"Shift_JIS\"), \"b\".encode(\"Shift_JIS\")]",
       "04085b0749220661063a0d656e636f64696e67220e53686966745f4a495349220662063b004007",
       Value::list({"a", "b"}), false},
      {"[\"é\".encode(\"ISO-8859-1\"), {\"é\".encode(\"ISO-8859-1\") => \"é\".encode(\"ISO-8859-"
       "1\")}]",
       "04085b07492206e9063a0d656e636f64696e67220f49534f2d383835392d317b06492206e9063b004007492206"
       "e9063b004007",
       Value::list({"\xe9", Value::map({{"\xe9", "\xe9"}})}), false},
      {":abc", "04083a08616263", Value("abc"), false},
      {":héllo", "0408493a0b68c3a96c6c6f063a064554", Value("h\xc3\xa9llo"), false},
      {"[:a, :a, :b]", "04085b083a06613b003a0662", Value::list({"a", "a", "b"}), false},
      {"{a: 1}", "04087b063a06616906", Value::map({{"a", 1}}), false},
      {"{a: 1, b: {a: [:a, :b]}}", "04087b073a066169063a06627b063b005b073b003b06",
       Value::map({{"a", 1}, {"b", Value::map({{"a", Value::list({"a", "b"})}})}}), false},
      {"[]", "04085b00", Value::list({})},
      {"{}", "04087b00", Value::map({})},
      {"[[], {}, [[]]]", "04085b085b007b005b065b00",
       Value::list({Value::list({}), Value::map({}), Value::list({Value::list({})})})},
      {"[1, [2, [3, [4]]]]", "04085b0769065b0769075b0769085b066909",
       Value::list({1, Value::list({2, Value::list({3, Value::list({4})})})})},
      {"{\"a\"=>1, \"b\"=>[2, 3]}", "04087b0749220661063a064554690649220662063b00545b0769076908",
       Value::map({{"a", 1}, {"b", Value::list({2, 3})}})},
      {"{1=>\"x\", nil=>true, 2.5=>[]}", "04087b08690649220678063a06455430546608322e355b00",
       Value::map({{1, "x"}, {nullptr, true}, {2.5, Value::list({})}})},
      // one Array twice: "@" 06 is object 1
      {"a=[1]; [a,a]", "04085b075b0669064006", Value::list({Value::list({1}), Value::list({1})}),
       false},
      {"s=\"x\"; [s,s]", "04085b0749220678063a0645544006", Value::list({"x", "x"}), false},
      // a flonum is one object per value: Ruby links the second 1.5
      {"[1.5, 1.5]", "04085b076608312e354006", Value::list({1.5, 1.5})},
      {"[1.5, \"a\", 1.5, 2.5, [2.5]]",
       "04085b0a6608312e3549220661063a06455440066608322e355b064008",
       Value::list({1.5, "a", 1.5, 2.5, Value::list({2.5})})},
      // String Hash keys are interned: the second "a" key is "@" 07
      {"[{\"a\"=>1},{\"a\"=>2}]", "04085b077b0649220661063a06455469067b0640076907",
       Value::list({Value::map({{"a", 1}}), Value::map({{"a", 2}})})},
      {"[{\"a\"=>1},{\"a\".b=>2}]", "04085b077b0649220661063a06455469067b062206616907",
       Value::list({Value::map({{"a", 1}}), Value::map({{Value::bytes("a"), 2}})})},
      {"[{\"a\"=>\"a\"}, \"a\"]", "04085b077b0649220661063a06455449220661063b005449220661063b0054",
       Value::list({Value::map({{"a", "a"}}), "a"})},
      {"{\"a\"=>{\"a\"=>1}}", "04087b0649220661063a0645547b0640066906",
       Value::map({{"a", Value::map({{"a", 1}})}})},
      // not flonums: a separate object each time
      {"[1e300, 1e300]", "04085b07660a3165333030660a3165333030", Value::list({1e300, 1e300})},
      {"[-0.0, -0.0]", "04085b0766072d3066072d30", Value::list({-0.0, -0.0})},
      {"[0.0, 0.0]", "04085b076606304006", Value::list({0.0, 0.0})},
      {"[\"a\",\"a\"]", "04085b0749220661063a06455449220661063b0054", Value::list({a_str, a_str})},
      {"[2**40, 2**40]", "04085b076c2b080000000000016c2b08000000000001",
       Value::list({std::int64_t{1} << 40, std::int64_t{1} << 40})},
      {"[nil, true, false, 0, -1, \"x\".b]", "04085b0b305446690069fa220678",
       Value::list({nullptr, true, false, 0, -1, Value::bytes("x")})},
  };
}

// Inputs that name a class or module, a Hash with a default, instance
// variables, a cycle: `ruby -e 'print Marshal.dump(<ruby>)' | xxd -p`.
struct OpaqueCase {
  std::string ruby;
  std::string hex;
};

auto opaque_cases() -> std::vector<OpaqueCase> {
  return {
      {"Object.new", "04086f3a0b4f626a65637400"},
      {"S = Struct.new(:a); S.new(1)", "0408533a0653063a06616906"},
      {"Time.now",
       "040849753a0954696d650d45ac1f8045647e490a3a0d6e616e6f5f6e756d690211033a0d6e616e6f5f64656e69"
       "063a0d7375626d6963726f220778503a0b6f666673657469003a097a6f6e65492208555443063a064546"},
      {"/ab/i", "0408492f07616201063a064546"},
      {"String", "0408630b537472696e67"},
      {"Comparable", "04086d0f436f6d70617261626c65"},
      {"Hash.new(5).merge!(1=>2)", "04087d0669066907690a"},
      {"{\"a\"=>1}.compare_by_identity", "0408433a09486173687b0649220661063a0645546906"},
      {"a=[]; a<<a", "04085b064000"},
      {"h={}; h.instance_variable_set(:@x,1); h", "0408497b00063a0740786906"},
      {"module Mx; end; s=\"x\"; s.extend(Mx); s", "040849653a074d78220678063a064554"},
      {"module Mx; end; o=Object.new; o.extend(Mx); [o, \"y\"]",
       "04085b07653a074d786f3a0b4f626a6563740049220679063a064554"},
      {"class MyStr < String; end; MyStr.new(\"x\")", "040849433a0a4d79537472220678063a064554"},
      {"Rational(1, 2)", "0408553a0d526174696f6e616c5b0769066907"},
      {"1..2", "04086f3a0a52616e6765083a096578636c463a0a626567696e69063a08656e646907"},
      {"[1, Object.new]", "04085b0769066f3a0b4f626a65637400"},
      {"{\"k\"=>S.new([1, \"z\"])}",
       "04087b064922066b063a064554533a0653063a06615b0769064922067a063b0054"},
  };
}

TEST(RubyMarshal, DecodesWhatRubyWrites) {
  for (const RubyCase& c : ruby_cases()) {
    SCOPED_TRACE(c.ruby);
    const auto decoded = marshal_load(from_hex(c.hex));
    ASSERT_TRUE(decoded.ok()) << decoded.error();
    EXPECT_TRUE(same(*decoded, c.value)) << describe(*decoded) << " want " << describe(c.value);
  }
}

TEST(RubyMarshal, DumpsWhatRubyWrites) {
  int exact = 0;
  for (const RubyCase& c : ruby_cases()) {
    SCOPED_TRACE(c.ruby);
    const auto dumped = marshal_dump(c.value);
    ASSERT_TRUE(dumped.ok()) << dumped.error();
    if (c.dump_exact) {
      ++exact;
      EXPECT_EQ(to_hex(*dumped), c.hex);
    }
    // whatever the form, it reads back as the same Value (links become copies)
    const auto again = marshal_load(*dumped);
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_TRUE(same(*again, c.value)) << describe(*again);
  }
  EXPECT_GE(exact, 45);
}

TEST(RubyMarshal, FixnumBoundariesAndLongForms) {
  // Ruby writes `i` for -2^30 .. 2^30-1 and packs the long in 1..5 bytes.
  struct Row {
    std::int64_t number;
    std::string hex;
  };
  // ruby -e 'print Marshal.dump(N)' | xxd -p
  const std::vector<Row> rows = {
      {1, "04086906"},
      {-1, "040869fa"},
      {127, "040869017f"},
      {-128, "040869ff80"},
      {-129, "040869ff7f"},
      {65535, "04086902ffff"},
      {65536, "04086903000001"},
      {-65536, "040869fe0000"},
      {-65537, "040869fdfffffe"},
      {16777216, "0408690400000001"},
      {-16777217, "040869fcfffffffe"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.number);
    const auto dumped = marshal_dump(Value(row.number));
    ASSERT_TRUE(dumped.ok());
    EXPECT_EQ(to_hex(*dumped), row.hex);
    EXPECT_EQ(marshal_load(from_hex(row.hex))->as_int(), row.number);
  }
  // Readers accept the forms Ruby does not write (Ruby's Marshal.load reads
  // these the same): a 4-byte 2^32-1, a 1-byte 3, -2^32.
  EXPECT_EQ(marshal_load(from_hex("04086904ffffffff"))->as_int(), 4294967295);
  EXPECT_EQ(marshal_load(from_hex("0408690103"))->as_int(), 3);
  EXPECT_EQ(marshal_load(from_hex("040869fc00000000"))->as_int(), -4294967296);
  // A Bignum with high zero words and a small Bignum still read as ints
  // (Ruby: 1 and -5).
  EXPECT_EQ(marshal_load(from_hex("04086c2b0a01000000000000000000"))->as_int(), 1);
  EXPECT_EQ(marshal_load(from_hex("04086c2d060500"))->as_int(), -5);
}

TEST(RubyMarshal, IntegersOutsideInt64AreTooLarge) {
  // 2**64, 2**63, -2**63-1 as Ruby writes them
  for (const char* hex : {"04086c2b0a00000000000000000100", "04086c2b090000000000000080",
                          "04086c2d090100000000000080"}) {
    SCOPED_TRACE(hex);
    const auto decoded = marshal_load(from_hex(hex));
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
    EXPECT_NE(decoded.error().message().find("integer out of range"), std::string::npos);
  }
  // inside an object (an O with @x = 2**64) the input stays recognised
  const std::string inside = from_hex("04086f3a064f063a0740786c2b0a00000000000000000100");
  const auto opaque = marshal_load(inside);
  ASSERT_TRUE(opaque.ok()) << opaque.error();
  EXPECT_EQ(opaque->as_serialized().data, inside);
}

TEST(RubyMarshal, FloatText) {
  struct Row {
    double number;
    const char* text;
  };
  // ruby -e 'print Marshal.dump(X)' for each X (the text after `f` and its length)
  const std::vector<Row> rows = {
      {3.25, "3.25"},
      {1.0 / 3, "0.3333333333333333"},
      {1e21, "1e21"},
      {100.0, "1e2"},
      {-0.0, "-0"},
      {0.0, "0"},
      {inf(), "inf"},
      {-inf(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
      {1e-5, "1e-5"},
      {123456789.123, "123456789.123"},
      {0.0001, "0.0001"},
      {0.001, "0.001"},
      {2.5e-5, "2.5e-5"},
      {-1.5, "-1.5"},
      {0.1, "0.1"},
      {1e15, "1e15"},
      {1e16, "1e16"},
      {123456789012345.0, "123456789012345"},
      {1234567890123456.0, "1234567890123456"},
      {12345678901234567.0, "12345678901234568"},
      {0x1p62, "4.611686018427388e18"},
      {1.5e-300, "1.5e-300"},
      {1e100, "1e100"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.text);
    EXPECT_EQ(detail::marshal_float_text(row.number), row.text);
    const auto decoded =
        marshal_load(std::string("\x04\x08"
                                 "f") +
                     static_cast<char>(std::char_traits<char>::length(row.text) + 5) + row.text);
    ASSERT_TRUE(decoded.ok()) << decoded.error();
    EXPECT_TRUE(same(*decoded, Value(row.number)));
  }
  // Text Ruby 1.9+ never writes is refused, not guessed at.
  for (const char* text : {"", "x", "1.5x", " 1", "+1", "0x10", "Infinity", "-nan", "1e999"}) {
    SCOPED_TRACE(text);
    const auto decoded =
        marshal_load(std::string("\x04\x08"
                                 "f") +
                     static_cast<char>(std::char_traits<char>::length(text) + 5) + text);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt);
  }
  // Ruby 1.8's text + NUL + binary mantissa
  const auto old = marshal_load(from_hex("0408660b312e3100ab12"));
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.code(), CodecErrc::kUnsupported);
}

TEST(RubyMarshal, FlonumsAreLinkedOthersAreNot) {
  // 2.0**256 and -2.0**255 are flonums, 2.0**-255 is not (Ruby excludes it),
  // nor is 2.0**-256: ruby -e 'print Marshal.dump([x, x])'
  const std::vector<std::pair<double, std::string>> rows = {
      {0x1p256, "04085b076619312e3135373932303839323337333136326537374006"},
      {-0x1p255, "04085b0766192d352e37383936303434363138363538316537364006"},
      {0x1p-255,
       "04085b07661a312e373237323333373131303138383839652d3737661a312e37323732333337313130313838383"
       "9"
       "652d3737"},
      {0x1p-256,
       "04085b07661a382e363336313638353535303934343435652d3738661a382e36333631363835353530393434343"
       "5"
       "652d3738"},
      {-0x1p-255, "04085b07661b2d312e373237323333373131303138383839652d37374006"},
  };
  for (const auto& [number, hex] : rows) {
    SCOPED_TRACE(hex);
    const auto dumped = marshal_dump(Value::list({number, number}));
    ASSERT_TRUE(dumped.ok());
    EXPECT_EQ(to_hex(*dumped), hex);
  }
  // A float map key links like a value; a Bignum counts as an object.
  const auto dumped = marshal_dump(Value::list({std::int64_t{1} << 40, Value::map({{1.5, 1.5}}),
                                                Value::map({{"k", 1}}), Value::map({{"k", 1.5}})}));
  ASSERT_TRUE(dumped.ok());
  // objects: 0 array, 1 bignum, 2 hash, 3 1.5, 4 hash, 5 "k", 6 hash
  // ruby -e 'print Marshal.dump([2**40, {1.5=>1.5}, {"k"=>1}, {"k"=>1.5}])' | xxd -p
  EXPECT_EQ(to_hex(*dumped),
            "04085b096c2b080000000000017b066608312e3540087b064922066b063a06455469067b06400a4008");
}

auto inflate_all(std::string_view data, int window_bits) -> std::string {
  z_stream stream{};
  if (inflateInit2(&stream, window_bits) != Z_OK) {
    ADD_FAILURE() << "inflateInit2";
    return {};
  }
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  int status = Z_OK;
  while (status == Z_OK) {
    char chunk[16384];
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - stream.avail_out);
  }
  inflateEnd(&stream);
  EXPECT_EQ(status, Z_STREAM_END);
  EXPECT_EQ(stream.avail_in, 0U);
  return out;
}

TEST(RubyMarshal, GoldenDalliItems) {
  const std::filesystem::path dir = testing::golden_values_dir();
  const auto cases = testing::read_value_cases(dir / "dalli.values");
  const auto values = testing::read_value_set(dir);
  int checked = 0;
  int compressed = 0;
  for (const testing::ValueCase& c : cases) {
    if (c.setting("serializer") != "Marshal") {
      continue;
    }
    const bool gzip = c.setting("compressor") == "gzip";
    for (const testing::NamedValue& named : values) {
      SCOPED_TRACE(c.id + ":" + named.name);
      const testing::ValueItem* item = c.item(named.name);
      ASSERT_NE(item, nullptr);
      ASSERT_FALSE(item->refused);
      ASSERT_EQ(item->flags & 0x1U, 0x1U);
      std::string bytes = item->bytes;
      if ((item->flags & 0x2U) != 0) {
        ++compressed;
        bytes = inflate_all(bytes, gzip ? 31 : 15);
      }
      const auto decoded = marshal_load(bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.error();
      EXPECT_TRUE(same(*decoded, named.value)) << describe(*decoded);
      const auto dumped = marshal_dump(named.value);
      ASSERT_TRUE(dumped.ok()) << dumped.error();
      EXPECT_TRUE(*dumped == bytes)
          << "dumped " << to_hex(dumped->substr(0, 64)) << "... (" << dumped->size()
          << " bytes), stored " << to_hex(bytes.substr(0, 64)) << "... (" << bytes.size()
          << " bytes)";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 32);    // dalli-default and dalli-gzip, 16 values each
  EXPECT_EQ(compressed, 6);  // str20000, str70000, json20001 in each
  // the strings decode as text
  const testing::ValueItem* ascii = cases[0].item("ascii");
  ASSERT_NE(ascii, nullptr);
  EXPECT_EQ(marshal_load(ascii->bytes)->kind(), ValueKind::kString);
}

TEST(RubyMarshal, ClassesAndObjectsAreRecognisedNotBuilt) {
  for (const OpaqueCase& c : opaque_cases()) {
    SCOPED_TRACE(c.ruby);
    const std::string bytes = from_hex(c.hex);
    const auto decoded = marshal_load(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.error();
    ASSERT_EQ(decoded->kind(), ValueKind::kSerialized);
    EXPECT_EQ(decoded->as_serialized().format, "ruby-marshal");
    EXPECT_EQ(decoded->as_serialized().data, bytes);
    // written back unchanged
    const auto dumped = marshal_dump(*decoded);
    ASSERT_TRUE(dumped.ok());
    EXPECT_EQ(*dumped, bytes);
  }
  // A String's instance variables other than its encoding are kept opaque
  // too; an empty instance variable list is none.
  const auto ivar = marshal_load(from_hex("040849220678073a0645543a0740786906"));
  ASSERT_TRUE(ivar.ok()) << ivar.error();
  EXPECT_TRUE(ivar->is_serialized());
  const auto none = marshal_load(from_hex("04084922067800"));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(same(*none, Value::bytes("x")));
  const auto empty_list_ivars = marshal_load(from_hex("0408495b0669060000"));
  ASSERT_FALSE(empty_list_ivars.ok());  // a stray byte after the value
  EXPECT_EQ(empty_list_ivars.code(), CodecErrc::kCorrupt);
  const auto list_no_ivars = marshal_load(from_hex("0408495b06690600"));
  ASSERT_TRUE(list_no_ivars.ok()) << list_no_ivars.error();
  EXPECT_TRUE(same(*list_no_ivars, Value::list({1})));
  // `:E` with a value other than true/false is an ordinary instance variable
  const auto bogus_e = marshal_load(from_hex("040849220678063a06456906"));
  ASSERT_TRUE(bogus_e.ok()) << bogus_e.error();
  EXPECT_TRUE(bogus_e->is_serialized());
  // an encoding name that is not a String cannot be loaded
  const auto bad_name = marshal_load(from_hex("040849220678063a0d656e636f64696e676906"));
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.code(), CodecErrc::kCorrupt);
  // the binary encoding named outright is bytes
  const auto binary =
      marshal_load(from_hex("040849220678063a0d656e636f64696e67220f41534349492d38424954"));
  ASSERT_TRUE(binary.ok()) << binary.error();
  EXPECT_TRUE(same(*binary, Value::bytes("x")));
}

TEST(RubyMarshal, OtherSerializedValuesAreNotEncodable) {
  const auto php = marshal_dump(Value::serialized("php-serialize", "O:8:\"stdClass\":0:{}"));
  ASSERT_FALSE(php.ok());
  EXPECT_EQ(php.code(), CodecErrc::kNotEncodable);
  const auto nested = marshal_dump(Value::list({Value::serialized("ruby-marshal",
                                                                  "\x04\x08"
                                                                  "0")}));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.code(), CodecErrc::kNotEncodable);
}

TEST(RubyMarshal, VersionsOtherThan48AreUnsupported) {
  for (const char* hex : {"040730", "040930", "050830", "000000"}) {
    SCOPED_TRACE(hex);
    const auto decoded = marshal_load(from_hex(hex));
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.code(), CodecErrc::kUnsupported);
  }
}

TEST(RubyMarshal, TruncatedAtEveryByteIsCorrupt) {
  std::vector<std::string> inputs;
  for (const RubyCase& c : ruby_cases()) {
    inputs.push_back(from_hex(c.hex));
  }
  for (const OpaqueCase& c : opaque_cases()) {
    inputs.push_back(from_hex(c.hex));
  }
  for (const std::string& input : inputs) {
    for (std::size_t length = 0; length < input.size(); ++length) {
      SCOPED_TRACE(to_hex(input.substr(0, length)));
      const auto decoded = marshal_load(std::string_view(input).substr(0, length));
      ASSERT_FALSE(decoded.ok());
      EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << decoded.error();
    }
  }
}

TEST(RubyMarshal, TrailingBytesAreCorrupt) {
  const auto decoded = marshal_load(from_hex("04083030"));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(decoded.error().message(),
            "ruby-marshal: at byte 3: trailing data after the value (1 bytes)");
}

TEST(RubyMarshal, HugeDeclaredLengthsAreRefusedBeforeAllocating) {
  // each claims 2^31-1 (string bytes, array items, hash pairs, bignum words,
  // float text, symbol bytes, instance variables), then a few bytes
  for (const char* hex :
       {"04082204ffffff7f616263", "04085b04ffffff7f30", "04087b04ffffff7f3030",
        "04086c2b04ffffff7f0000", "04086604ffffff7f31", "04083a04ffffff7f61",
        "04084922067804ffffff7f", "04086f3a064f04ffffff7f", "040822fa", "04085bfa"}) {
    SCOPED_TRACE(hex);
    allocated_bytes = 0;
    counting_allocations = true;
    const auto decoded = marshal_load(from_hex(hex));
    counting_allocations = false;
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt) << decoded.error();
    EXPECT_LT(allocated_bytes.load(), 4096U);
  }
  const auto message = marshal_load(from_hex("04082204ffffff7f616263"));
  EXPECT_EQ(message.error().message(),
            "ruby-marshal: at byte 3: the length of a String is 2147483647, more than the 3 bytes "
            "left can hold");
  // an input over max_size is refused whole
  DecodeLimits small;
  small.max_size = 4;
  const auto big = marshal_load(from_hex("04082200"
                                         "30"),
                                small);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.code(), CodecErrc::kTooLarge);
}

TEST(RubyMarshal, DeepNestingIsTooDeep) {
  std::string deep("\x04\x08", 2);
  for (int i = 0; i < 10000; ++i) {
    deep.append("[\x06", 2);
  }
  deep.push_back('0');
  const auto decoded = marshal_load(deep);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.code(), CodecErrc::kTooDeep);

  // exactly max_depth lists is fine, one more is not
  DecodeLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(marshal_load(from_hex("04085b065b065b0630"), limits).ok());
  const auto four = marshal_load(from_hex("04085b065b065b065b0630"), limits);
  ASSERT_FALSE(four.ok());
  EXPECT_EQ(four.code(), CodecErrc::kTooDeep);

  // a link places a copy: [[[[]]], [@1]] nests 5 deep
  const std::string linked = from_hex("04085b075b065b065b005b064006");
  limits.max_depth = 4;
  const auto too_deep = marshal_load(linked, limits);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.code(), CodecErrc::kTooDeep);
  limits.max_depth = 5;
  const auto fits = marshal_load(linked, limits);
  ASSERT_TRUE(fits.ok()) << fits.error();
  const Value inner = Value::list({Value::list({Value::list({})})});
  EXPECT_TRUE(same(*fits, Value::list({inner, Value::list({inner})})));

  // Symbols whose instance variable names are Symbols with instance
  // variables, 100,000 deep; and 100,000 `o` objects nested in ivars
  std::string symbols("\x04\x08", 2);
  std::string objects("\x04\x08", 2);
  for (int i = 0; i < 100000; ++i) {
    symbols.append(
        "I:\x06"
        "a\x06",
        5);
    objects.append("o:\x06O\x06:\x06@", 8);
  }
  symbols.append(":\x06z", 3);
  symbols.append(100000, '0');
  objects.push_back('0');
  for (const std::string& input : {symbols, objects}) {
    const auto result = marshal_load(input);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.code(), CodecErrc::kTooDeep);
  }
  // long prefix chains are read without recursion: 100,000 `e` modules
  std::string extended("\x04\x08", 2);
  for (int i = 0; i < 100000; ++i) {
    extended.append("e:\x06M", 4);
  }
  extended.push_back('0');
  const auto chain = marshal_load(extended);
  ASSERT_TRUE(chain.ok()) << chain.error();
  EXPECT_TRUE(chain->is_serialized());
}

TEST(RubyMarshal, LinksToMissingEntriesAreCorrupt) {
  struct Row {
    const char* hex;
    const char* message;
  };
  const std::vector<Row> rows = {
      {"04085b064006", "ruby-marshal: at byte 4: a link to object 1, but 1 objects precede it"},
      {"04084000", "ruby-marshal: at byte 2: a link to object 0, but 0 objects precede it"},
      {"04085b0640fa", "ruby-marshal: at byte 4: a link to object -1, but 1 objects precede it"},
      {"04083b00", "ruby-marshal: at byte 2: a link to Symbol 0, but 0 Symbols precede it"},
      {"04085b073a06613b06",
       "ruby-marshal: at byte 7: a link to Symbol 1, but 1 Symbols precede it"},
      {"0408493b0000", "ruby-marshal: at byte 3: a link to Symbol 0, but 0 Symbols precede it"},
      {"0408493a0661063b0654",
       "ruby-marshal: at byte 7: a link to Symbol 1, but 1 Symbols precede it"},
      {"0408493a0661064b3b0054",
       "ruby-marshal: at byte 7: expected a Symbol (':' or ';'), found 'K'"},
      {"0408493a066106493b0054", "ruby-marshal: at byte 7: a Symbol link with instance variables"},
      {"04087a", "ruby-marshal: at byte 2: unknown type byte 'z'"},
      {"040801", "ruby-marshal: at byte 2: unknown type byte 0x01"},
      {"04086c2a0600", "ruby-marshal: at byte 3: a Bignum's sign is '*', not '+' or '-'"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.hex);
    const auto decoded = marshal_load(from_hex(row.hex));
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.code(), CodecErrc::kCorrupt);
    EXPECT_EQ(decoded.error().message(), row.message);
  }
  // a link to an object still being read is a cycle: recognised, not built
  const auto map_cycle = marshal_load(from_hex("04087b0669064000"));
  ASSERT_TRUE(map_cycle.ok()) << map_cycle.error();
  EXPECT_TRUE(map_cycle->is_serialized());
}

TEST(RubyMarshal, LinksAreCopiedAndNumberedAsRubyDoes) {
  // ["s", [2.5, 2**40, @s], {@s => @bignum}, @f]: objects 0 array, 1 "s",
  // 2 array, 3 2.5, 4 the Bignum, 5 the hash. Ruby's Marshal.load of these
  // bytes: ["s", [2.5, 1099511627776, "s"], {"s"=>1099511627776}, 2.5]
  const std::string input = from_hex(
      "04085b09"
      "49220673063a064554"
      "5b086608322e35"
      "6c2b08000000000001"
      "4006"
      "7b06"
      "4006"
      "4009"
      "4008");
  const auto decoded = marshal_load(input);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  const Value big(std::int64_t{1} << 40);
  EXPECT_TRUE(same(*decoded,
                   Value::list({"s", Value::list({2.5, big, "s"}), Value::map({{"s", big}}), 2.5})))
      << describe(*decoded);
}

TEST(RubyMarshal, AMillionLinksToABigArrayAreTooLargeWithoutBuildingThem) {
  // [big, @1 x 1,000,000] where big is an Array of 1,000 ints
  std::string input("\x04\x08[", 3);
  input.append("\x03\x41\x42\x0f", 4);  // 1,000,001
  input.append("[\x02\xe8\x03", 4);     // 1,000
  for (int i = 0; i < 1000; ++i) {
    input.append("i\x06", 2);
  }
  for (int i = 0; i < 1000000; ++i) {
    input.append("@\x06", 2);
  }
  allocated_bytes = 0;
  counting_allocations = true;
  const auto decoded = marshal_load(input);
  counting_allocations = false;
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.code(), CodecErrc::kTooLarge);
  EXPECT_LT(allocated_bytes.load(), std::size_t{1} << 16) << "bytes allocated";

  // a Symbol link repeats its name: a 1,000-byte Symbol linked 100,000 times
  std::string symbols("\x04\x08[", 3);
  symbols.append("\x03\xa1\x86\x01", 4);  // 100,001
  symbols.append(":\x02\xe8\x03", 4);
  symbols.append(1000, 's');
  for (int i = 0; i < 100000; ++i) {
    symbols.append(";\x00", 2);
  }
  const auto repeated = marshal_load(symbols);
  ASSERT_FALSE(repeated.ok());
  EXPECT_EQ(repeated.code(), CodecErrc::kTooLarge);

  // a few links to it are fine
  std::string few("\x04\x08[\x08[\x02\xe8\x03", 8);
  for (int i = 0; i < 1000; ++i) {
    few.append("i\x06", 2);
  }
  few.append("@\x06@\x06", 4);
  const auto ok = marshal_load(few);
  ASSERT_TRUE(ok.ok()) << ok.error();
  ASSERT_EQ(ok->as_list().size(), 3U);
  EXPECT_EQ(ok->as_list()[2].as_list().size(), 1000U);
}

TEST(RubyMarshal, MaxDecodedBytesBoundsTheValueLinksIncluded) {
  // [s, @1 x k] with a 100-byte String s: the list's Value, and k + 1
  // copies of s, each a Value and its 100 bytes.
  auto input = [](int links) {
    std::string bytes("\x04\x08[", 3);
    bytes.push_back(static_cast<char>(links + 1 + 5));
    bytes.append("\"\x69", 2);  // a binary String of 100 bytes
    bytes.append(100, 'x');
    for (int i = 0; i < links; ++i) {
      bytes.append("@\x06", 2);
    }
    return bytes;
  };
  const std::size_t need = sizeof(Value) + 10 * (sizeof(Value) + 100);
  DecodeLimits limits;
  limits.max_decoded_bytes = need;
  const auto fits = marshal_load(input(9), limits);
  ASSERT_TRUE(fits.ok()) << fits.error();
  EXPECT_EQ(fits->as_list().size(), 10U);
  EXPECT_TRUE(same(fits->as_list()[9], Value::bytes(std::string(100, 'x'))));
  limits.max_decoded_bytes = need - 1;
  const auto over = marshal_load(input(9), limits);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.code(), CodecErrc::kTooLarge);
  EXPECT_EQ(over.error().message(),
            "ruby-marshal: at byte 2: a value of " + std::to_string(need) +
                " bytes (a link counts as the copy it makes) would take the decoded value past "
                "max_decoded_bytes " +
                std::to_string(need - 1));
  // Without links: a map's entries, Symbols and Strings count as they are
  // ({:ab => [nil, "c"]}).
  const std::string plain = from_hex("04087b063a0761625b073049220663063a064554");
  const std::size_t plain_need = 5 * sizeof(Value) + 2 + 1;
  limits.max_decoded_bytes = plain_need;
  const auto plain_fits = marshal_load(plain, limits);
  ASSERT_TRUE(plain_fits.ok()) << plain_fits.error();
  EXPECT_TRUE(same(*plain_fits, Value::map({{"ab", Value::list({nullptr, "c"})}})))
      << describe(*plain_fits);
  limits.max_decoded_bytes = plain_need - 1;
  const auto plain_over = marshal_load(plain, limits);
  ASSERT_FALSE(plain_over.ok());
  EXPECT_EQ(plain_over.code(), CodecErrc::kTooLarge);
  // An Array of 1,000,000 nils, all there: measured, refused before
  // anything is built.
  std::string many("\x04\x08[\x03\x40\x42\x0f", 7);
  many.append(1000000, '0');
  allocated_bytes = 0;
  counting_allocations = true;
  const auto refused = marshal_load(many);
  counting_allocations = false;
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), CodecErrc::kTooLarge);
  EXPECT_LT(allocated_bytes.load(), 4096U);
}

TEST(RubyMarshal, DumpRefusesNestingPastItsLimit) {
  // kMarshalMaxDumpDepth nested lists are written, one more is not
  Value deep = Value::list({});
  for (std::size_t i = 1; i < kMarshalMaxDumpDepth; ++i) {
    Value::List wrap;
    wrap.push_back(std::move(deep));
    deep = Value::list(std::move(wrap));
  }
  const auto fits = marshal_dump(deep);
  ASSERT_TRUE(fits.ok()) << fits.error();
  EXPECT_EQ(fits->size(), 2 + 2 * kMarshalMaxDumpDepth);
  Value::List wrap;
  wrap.push_back(std::move(deep));
  const auto dumped = marshal_dump(Value::list(std::move(wrap)));
  ASSERT_FALSE(dumped.ok());
  EXPECT_EQ(dumped.code(), CodecErrc::kNotEncodable);
}

}  // namespace
}  // namespace codecs_ruby_marshal_test
}  // namespace memshard
