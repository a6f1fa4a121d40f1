// SPDX-License-Identifier: MIT
// Tests for codecs/storable.hpp: Perl Storable 3.26 (perl 5.36.0, Debian
// bookworm) images, and the golden Cache::Memcached(::Fast) tables. Every hex
// literal below was printed by the perl command in the comment above it.

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "memshard/codecs/storable.hpp"
#include "support/codec_bytes.hpp"
#include "support/value_table.hpp"

namespace codecs_storable_test {
namespace {

using memshard::CodecErrc;
using memshard::DecodeLimits;
using memshard::storable_nfreeze;
using memshard::storable_thaw;
using memshard::Value;
using memshard::testing::from_hex;
using memshard::testing::to_hex;

auto nfreeze_hex(const Value& value) -> std::string {
  auto frozen = storable_nfreeze(value);
  EXPECT_TRUE(frozen.ok()) << frozen.error();
  return frozen.ok() ? to_hex(*frozen) : std::string("<error>");
}

auto thaw_hex(std::string_view hex) -> Value {
  auto thawed = storable_thaw(from_hex(hex));
  EXPECT_TRUE(thawed.ok()) << hex << ": " << thawed.error();
  return thawed.ok() ? *thawed : Value("<error>");
}

auto repeat(std::string_view text, int times) -> std::string {
  std::string out;
  for (int i = 0; i < times; ++i) {
    out += text;
  }
  return out;
}

TEST(StorableGolden, CacheMemcachedMapsThaw) {
  for (const char* table : {"cache_memcached.values", "cache_memcached_fast.values"}) {
    const auto cases =
        memshard::testing::read_value_cases(memshard::testing::golden_values_dir() / table);
    int seen = 0;
    for (const auto& c : cases) {
      const auto* item = c.item("map");
      ASSERT_NE(item, nullptr) << table << " " << c.id;
      EXPECT_EQ(item->flags, 1U);
      EXPECT_TRUE(item->nondeterministic);
      auto thawed = storable_thaw(item->bytes);
      ASSERT_TRUE(thawed.ok()) << table << " " << c.id << ": " << thawed.error();
      ASSERT_TRUE(thawed->is_map());
      EXPECT_EQ(thawed->as_map().size(), 2U);
      ASSERT_NE(thawed->find("a"), nullptr);
      EXPECT_EQ(*thawed->find("a"), Value(1));
      ASSERT_NE(thawed->find("b"), nullptr);
      EXPECT_EQ(*thawed->find("b"), Value::list({2, 3}));
      // Written back in the order read, the bytes are the same.
      auto frozen = storable_nfreeze(*thawed);
      ASSERT_TRUE(frozen.ok()) << frozen.error();
      EXPECT_EQ(*frozen, item->bytes);
      ++seen;
    }
    EXPECT_GE(seen, 2) << table;
  }
}

TEST(StorableGolden, TheValueSetMapFreezesAsPerlDoesInEitherKeyOrder) {
  // The golden item has b before a; Perl's order follows its hash seed.
  EXPECT_EQ(nfreeze_hex(Value::map({{"b", Value::list({2, 3})}, {"a", 1}})),
            "050b03000000020402000000020882088300000001620881000000016"
            "1");
  EXPECT_EQ(nfreeze_hex(Value::map({{"a", 1}, {"b", Value::list({2, 3})}})),
            "050b03000000020881000000016104020000000208820883000000016"
            "2");
}

// perl -MStorable=nfreeze -e 'for my $v ([0],[127],[128],[-128],[-129],[2147483647],
//   [2147483648],[-2147483648],[-2147483649],[2**40],[-2**40],[9223372036854775807])
//   { print unpack("H*", nfreeze($v)),"\n" }'
TEST(StorableNfreeze, IntegersAsPerlWritesThem) {
  const struct {
    std::int64_t number;
    const char* hex;
  } kCases[] = {
      {0, "050b02000000010880"},
      {127, "050b020000000108ff"},
      {128, "050b02000000010900000080"},
      {-128, "050b02000000010800"},
      {-129, "050b020000000109ffffff7f"},
      {2147483647, "050b0200000001097fffffff"},
      {2147483648LL, "050b02000000010a0a32313437343833363438"},
      {-2147483648LL, "050b02000000010980000000"},
      {-2147483649LL, "050b02000000010a0b2d32313437343833363439"},
      {1099511627776LL, "050b02000000010a0d31303939353131363237373736"},
      {-1099511627776LL, "050b02000000010a0e2d31303939353131363237373736"},
      {std::numeric_limits<std::int64_t>::max(),
       "050b02000000010a1339323233333732303336383534373735383037"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(nfreeze_hex(Value::list({c.number})), c.hex) << c.number;
  }
  // SX_BYTE and SX_NETINT read back as integers; the text as Perl's string.
  EXPECT_EQ(thaw_hex("050b020000000109ffffff7f"), Value::list({-129}));
  EXPECT_EQ(thaw_hex("050b02000000010800"), Value::list({-128}));
  EXPECT_EQ(thaw_hex("050b02000000010a0d31303939353131363237373736"),
            Value::list({"1099511627776"}));
}

// perl -MStorable=nfreeze -e 'my $z = -1e-300; $z *= 1e-300; for my $v ($z, 0.5, 1/3,
//   1e21, 1e16, 1e15, 3.0, 2**53, 9007199254740991.0, 1e-5, 0.1, 9**9**9, -9**9**9,
//   9**9**9 - 9**9**9) { print unpack("H*", nfreeze([$v])),"\n" }'
TEST(StorableNfreeze, DoublesAsPerlWritesThem) {
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    double number;
    const char* hex;
  } kCases[] = {
      {-0.0, "050b02000000010880"},
      {0.5, "050b02000000010a03302e35"},
      {1.0 / 3.0, "050b02000000010a11302e333333333333333333333333333333"},
      {1e21, "050b02000000010a0531652b3231"},
      {1e16, "050b02000000010a0531652b3136"},
      {1e15, "050b02000000010a1031303030303030303030303030303030"},
      {3.0, "050b02000000010883"},
      {9007199254740992.0, "050b02000000010a14392e3030373139393235343734303939652b3135"},
      {9007199254740991.0, "050b02000000010a1039303037313939323534373430393931"},
      {1e-5, "050b02000000010a0531652d3035"},
      {0.1, "050b02000000010a03302e31"},
      {inf, "050b02000000010a03496e66"},
      {-inf, "050b02000000010a042d496e66"},
      {std::numeric_limits<double>::quiet_NaN(), "050b02000000010a034e614e"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(nfreeze_hex(Value::list({c.number})), c.hex) << c.number;
  }
}

// perl -MStorable=nfreeze -e 'print unpack("H*", nfreeze([!!1, !!0])),"\n"'
// perl -MStorable=nfreeze -e 'print unpack("H*", nfreeze([undef, ""])),"\n"'
TEST(StorableNfreeze, BoolsAndUndefAsPerl536WritesThem) {
  EXPECT_EQ(nfreeze_hex(Value::list({true, false})), "050b02000000020a01310a00");
  EXPECT_EQ(thaw_hex("050b02000000020a01310a00"), Value::list({"1", ""}));
  EXPECT_EQ(nfreeze_hex(Value::list({nullptr})), "050b020000000105");
}

// perl -MStorable=nfreeze -e '$Storable::canonical = 1; print unpack("H*", nfreeze(
//   {list=>[1,-200,70000,2**40,-2**40, 0.5, 1/3, 1e21, undef, "", "x" x 300],
//    h=>{x=>undef, y=>[]}, s=>"hello", u=>"h\x{e9}llo \x{263a}", big=>"\x{263a}" x 100,
//    e=>{}})),"\n"'
constexpr const char* kNested =
    "050b0300000006180000012ce298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae2"
    "98bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298"
    "bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298ba"
    "e298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae2"
    "98bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298"
    "bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298ba"
    "e298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298bae298ba00000003626967040300"
    "00000000000001650403000000020500000001780402000000000000000179000000016804020000000b088109ff"
    "ffff3809000111700a0d313039393531313632373737360a0e2d313039393531313632373737360a03302e350a11"
    "302e3333333333333333333333333333330a0531652b3231050a00010000012c7878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878000000046c6973740a0568656c6c6f0000000173170a68c3a96c6c6f20e298ba00000001"
    "75";

TEST(StorableNfreeze, NestedStructureMatchesPerlCanonicalOrder) {
  const Value value = Value::map({
      {"big", repeat("\xe2\x98\xba", 100)},
      {"e", Value::map({})},
      {"h", Value::map({{"x", nullptr}, {"y", Value::list({})}})},
      {"list", Value::list({1, -200, 70000, std::int64_t{1} << 40, -(std::int64_t{1} << 40), 0.5,
                            1.0 / 3.0, 1e21, nullptr, "", std::string(300, 'x')})},
      {"s", "hello"},
      {"u", "h\xc3\xa9llo \xe2\x98\xba"},
  });
  EXPECT_EQ(nfreeze_hex(value), kNested);
}

TEST(StorableThaw, NestedStructureFromPerl) {
  const Value expected = Value::map({
      {"big", repeat("\xe2\x98\xba", 100)},
      {"e", Value::map({})},
      {"h", Value::map({{"x", nullptr}, {"y", Value::list({})}})},
      {"list", Value::list({1, -200, 70000, "1099511627776", "-1099511627776", "0.5",
                            "0.333333333333333", "1e+21", nullptr, "", std::string(300, 'x')})},
      {"s", "hello"},
      {"u", "h\xc3\xa9llo \xe2\x98\xba"},
  });
  EXPECT_EQ(thaw_hex(kNested), expected);
}

// perl -MStorable=nfreeze -e '$Storable::canonical = 1; my $k = "\x{e9}t\x{e9}";
//   utf8::upgrade($k); print unpack("H*", nfreeze({"a"=>1, "\x{263a}"=>2, $k=>3})),"\n"'
TEST(StorableHashKeys, NonAsciiKeysMakeAFlagHashAsPerlDoes) {
  const char* kPerl = "050b190000000003088100000000016108830200000003e974e908820100000003e298ba";
  EXPECT_EQ(nfreeze_hex(Value::map({{"a", 1}, {"\xc3\xa9t\xc3\xa9", 3}, {"\xe2\x98\xba", 2}})),
            kPerl);
  // The Latin-1 key ("was UTF-8") reads back as UTF-8 text.
  EXPECT_EQ(thaw_hex(kPerl), Value::map({{"a", 1}, {"\xc3\xa9t\xc3\xa9", 3}, {"\xe2\x98\xba", 2}}));
}

// perl -MStorable=nfreeze -e '$Storable::canonical = 1; print unpack("H*",
//   nfreeze({"a"=>1, "\x{263a}"=>2, "\x{e9}t\x{e9}"=>3})),"\n"'
TEST(StorableHashKeys, AByteKeyInAFlagHashStaysBytes) {
  EXPECT_EQ(thaw_hex("050b190000000003088100000000016108830000000003e974e908820100000003e298ba"),
            Value::map({{"a", 1}, {"\xe9t\xe9", 3}, {"\xe2\x98\xba", 2}}));
}

// perl -MStorable=nfreeze -e 'print unpack("H*", nfreeze({"\x{e9}"=>1})),"\n";
//   my $k = "\x{e9}"; utf8::upgrade($k); print unpack("H*", nfreeze({$k=>1})),"\n"'
TEST(StorableHashKeys, ByteKeysStayBytes) {
  EXPECT_EQ(thaw_hex("050b0300000001088100000001e9"), Value::map({{"\xe9", 1}}));
  EXPECT_EQ(thaw_hex("050b19000000000108810200000001e9"), Value::map({{"\xc3\xa9", 1}}));
  // Bytes and text that is not UTF-8 are written as they are, in a plain hash.
  EXPECT_EQ(nfreeze_hex(Value::map({{Value::bytes("\xc3\xa9"), 1}, {"\xe9", 2}})),
            "050b0300000002088100000002c3a9088200000001e9");
}

TEST(StorableHashKeys, IntegerKeysAreTheirTextOtherKeysAndClashesAreNotEncodable) {
  EXPECT_EQ(nfreeze_hex(Value::map({{-5, 1}})),
            "050b0300000001088100000002"
            "2d35");
  for (const Value& value :
       {Value::map({{1, "a"}, {"1", "b"}}), Value::map({{1.5, "a"}}), Value::map({{true, "a"}}),
        Value::map({{nullptr, "a"}}), Value::map({{"\xc3\xa9", 1}, {Value::bytes("\xe9"), 2}}),
        Value::list({Value::map({{Value::list({}), 1}})})}) {
    auto frozen = storable_nfreeze(value);
    ASSERT_FALSE(frozen.ok());
    EXPECT_EQ(frozen.code(), CodecErrc::kNotEncodable);
  }
  // A UTF-8 key and the byte key with the same bytes are two Perl keys.
  EXPECT_TRUE(
      storable_nfreeze(Value::map({{"\xe2\x98\xba", 1}, {Value::bytes("\xe2\x98\xba"), 2}})).ok());
}

TEST(StorableNfreeze, StringsAndBytes) {
  EXPECT_EQ(nfreeze_hex(Value::list({"ab"})), "050b02000000010a026162");
  EXPECT_EQ(nfreeze_hex(Value::list({Value::bytes("\xe2\x98\xba")})), "050b02000000010a03e298ba");
  EXPECT_EQ(nfreeze_hex(Value::list({"\xe2\x98\xba"})),
            "050b020000000117"
            "03e298ba");
  // Not UTF-8: a Perl byte string.
  EXPECT_EQ(nfreeze_hex(Value::list({"\xff"})), "050b02000000010a01ff");
  EXPECT_EQ(nfreeze_hex(Value::list({std::string(256, 'a')})).substr(0, 32),
            "050b0200000001010000010061616161");
}

TEST(StorableNfreeze, OnlyListsAndMapsAtTheTop) {
  for (const Value& value : {Value(1), Value("x"), Value(), Value(true), Value(1.5),
                             Value::bytes("x"), Value::serialized("pickle", "x")}) {
    auto frozen = storable_nfreeze(value);
    ASSERT_FALSE(frozen.ok());
    EXPECT_EQ(frozen.code(), CodecErrc::kNotEncodable);
  }
  auto nested = storable_nfreeze(Value::list({Value::serialized("storable", "\x05\x0b")}));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(nfreeze_hex(Value::list({})), "050b0200000000");
  EXPECT_EQ(nfreeze_hex(Value::map({})), "050b0300000000");
}

// perl -MStorable=freeze -e 'print unpack("H*", freeze([-5, 2**40, -2**40, 0.5, "ab",
//   "\x{263a}", {a=>[1]}])),"\n"'
TEST(StorableThaw, NativeOrderFreezeImages) {
  const Value expected = Value::list({-5, std::int64_t{1} << 40, -(std::int64_t{1} << 40), 0.5,
                                      "ab", "\xe2\x98\xba", Value::map({{"a", Value::list({1})}})});
  EXPECT_EQ(thaw_hex("040b083132333435363738040808080207000000087b06000000000001000006000000"
                     "0000ffffff07000000000000e03f0a0261621703e298ba0403010000000402010000000881"
                     "0100000061"),
            expected);
  // The same on a big-endian 64-bit perl (made by hand: the byte order
  // string reversed, and every length and native number with it).
  EXPECT_EQ(thaw_hex("040b08383736353433323104080808"
                     "0200000007087b"
                     "060000010000000000"
                     "06ffffff0000000000"
                     "073fe0000000000000"
                     "0a0261621703e298ba"
                     "0403000000010402000000010881000000016"
                     "1"),
            expected);
  // A perl with 32-bit integers (byte order "1234").
  EXPECT_EQ(thaw_hex("040b043132333404040408"
                     "0202000000"
                     "0605000000"
                     "06fbffffff"),
            Value::list({5, -5}));
  for (const char* hex : {"040b083132333435363738040808100200000000",  // 16-byte NV
                          "040b0331323304040408020000000000"}) {       // byte order "123"
    auto thawed = storable_thaw(from_hex(hex));
    ASSERT_FALSE(thawed.ok()) << hex;
    EXPECT_EQ(thawed.code(), CodecErrc::kUnsupported) << hex;
  }
}

TEST(StorableThaw, PerlYesNoBooleansAndUndefs) {
  // SX_SV_YES, SX_SV_NO, Storable 3.32's SX_BOOLEAN_TRUE/FALSE, SX_SV_UNDEF,
  // SX_SVUNDEF_ELEM.
  EXPECT_EQ(thaw_hex("050b02000000060f102223"
                     "0e1f"),
            Value::list({true, false, true, false, nullptr, nullptr}));
}

// perl -MStorable=nfreeze -e 'my $x=[1]; print unpack("H*", nfreeze([$x,$x])),"\n";
//   print unpack("H*", nfreeze(bless {}, "Foo")),"\n"; print unpack("H*", nfreeze(\"abc")),"\n";
//   print unpack("H*", nfreeze([\undef, \1])),"\n"; print unpack("H*", nfreeze(\\[1])),"\n";
//   print unpack("H*", nfreeze(qr/x/)),"\n"; use Hash::Util qw(lock_keys); my %h=(a=>1);
//   lock_keys(%h); print unpack("H*", nfreeze(\%h)),"\n"'
// perl -MStorable=nfreeze -e 'my $x = "x"; print unpack("H*", nfreeze(sub { \@_ }->($x, $x))),
//   "\n"; my $y = 1; print unpack("H*", nfreeze({a => sub { \@_ }->($y, $y)})),"\n"'
TEST(StorableThaw, SharedBlessedAndScalarReferencesAreKeptWhole) {
  for (const char* hex : {
           "050b02000000020a01780000000001",                      // one scalar twice
           "050b0300000001040200000002088100000000030000000161",  // the same, in a hash
           "050b02000000020402000000010881040000000002",          // [$x, $x]: SX_OBJECT
           "050b1103466f6f0300000000",                            // bless {}, "Foo"
           "050b0a03616263",                                      // \"abc"
           "050b0200000002040e040881",                            // [\undef, \1]
           "050b040402000000010881",                              // \\[1]
           "050b11065265676578702000017800",                      // qr/x/
           "050b1901000000010881000000000161",                    // a restricted hash
           "050b1900000000010881040000000161",                    // a locked key
       }) {
    const std::string bytes = from_hex(hex);
    auto thawed = storable_thaw(bytes);
    ASSERT_TRUE(thawed.ok()) << hex << ": " << thawed.error();
    ASSERT_TRUE(thawed->is_serialized()) << hex;
    EXPECT_EQ(thawed->as_serialized().format, "storable");
    EXPECT_EQ(thawed->as_serialized().data, bytes);
    auto frozen = storable_nfreeze(*thawed);
    ASSERT_TRUE(frozen.ok());
    EXPECT_EQ(*frozen, bytes);
  }
}

TEST(StorableThaw, BadInputIsCorruptWithItsOffset) {
  const struct {
    const char* hex;
    const char* where;
  } kCases[] = {
      {"", "at byte 0"},
      {"05", "at byte 0"},
      {"070b0200000000", "at byte 0"},                  // major version 3
      {"706c7374", "at byte 0"},                        // not Storable
      {"050b02ffffffff", "at byte 2"},                  // a count the bytes cannot hold
      {"050b03ffffffff0500000000", "at byte 2"},        // a hash size too
      {"050b1900ffffffff050000000000", "at byte 2"},    // a flagged hash size too
      {"050b03000000010500000005616263", "at byte 8"},  // a key longer than the data
      {"050b0200000001010000000561", "at byte 7"},      // a string longer than the data
      {"050b020000000102", "at byte 7"},                // an array as an element
      {"050b02000000010600", "at byte 7"},              // SX_INTEGER in nfreeze
      {"050b02000000010700", "at byte 7"},              // SX_DOUBLE in nfreeze
      {"050b0200000001ff", "at byte 7"},                // unknown type
      {"050b020000000108810a", "at byte 9"},            // bytes after the item
      {"050b020000000104", "at byte 8"},                // a reference to nothing
  };
  for (const auto& c : kCases) {
    auto thawed = storable_thaw(from_hex(c.hex));
    ASSERT_FALSE(thawed.ok()) << c.hex;
    EXPECT_EQ(thawed.code(), CodecErrc::kCorrupt) << c.hex;
    EXPECT_NE(thawed.error().message().find(c.where), std::string::npos)
        << c.hex << ": " << thawed.error().message();
    EXPECT_EQ(thawed.error().message().rfind("storable: ", 0), 0U);
  }
}

TEST(StorableThaw, EveryTruncationIsCorrupt) {
  const std::string bytes = from_hex(kNested);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    auto thawed = storable_thaw(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(thawed.ok()) << cut;
    EXPECT_EQ(thawed.code(), CodecErrc::kCorrupt) << cut;
  }
}

TEST(StorableThaw, DepthAndSizeAreBounded) {
  std::string deep = from_hex("050b0200000001");
  for (int i = 0; i < 300; ++i) {
    deep += from_hex("040200000001");
  }
  deep += from_hex("05");
  auto thawed = storable_thaw(deep);
  ASSERT_FALSE(thawed.ok());
  EXPECT_EQ(thawed.code(), CodecErrc::kTooDeep);
  // [[1]]: two levels.
  auto shallow = storable_thaw(from_hex("050b02000000010402000000010881"), DecodeLimits{1024, 2});
  ASSERT_TRUE(shallow.ok()) << shallow.error();
  auto too_deep = storable_thaw(from_hex("050b02000000010402000000010881"), DecodeLimits{1024, 1});
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.code(), CodecErrc::kTooDeep);
  auto big =
      storable_thaw(*storable_nfreeze(Value::list({std::string(100, 'a')})), DecodeLimits{64, 8});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.code(), CodecErrc::kTooLarge);
}

TEST(StorableThaw, MaxDecodedBytesBoundsTheTree) {
  // What each costs: the top Value, an array's or hash's slots (reserved from
  // its size), each string's bytes (a Latin-1 key's as UTF-8).
  struct Case {
    std::string bytes;
    std::size_t need;
  };
  // [[1]]; {"\x{e9}" (was UTF-8) => 1}; Perl's flag hash of
  // NonAsciiKeysMakeAFlagHashAsPerlDoes; [undef, undef, undef]; ["abc"]
  for (const Case& c : {
           Case{from_hex("050b02000000010402000000010881"), 3 * sizeof(Value)},
           Case{from_hex("050b19000000000108810200000001e9"),
                sizeof(Value) + sizeof(Value::Entry) + 2},
           Case{from_hex("050b190000000003088100000000016108830200000003e974e908820100000003e298"
                         "ba"),
                sizeof(Value) + 3 * sizeof(Value::Entry) + 1 + 5 + 3},
           Case{*storable_nfreeze(Value::list({nullptr, nullptr, nullptr})), 4 * sizeof(Value)},
           Case{*storable_nfreeze(Value::list({"abc"})), 2 * sizeof(Value) + 3},
       }) {
    SCOPED_TRACE(to_hex(c.bytes));
    DecodeLimits limits;
    limits.max_decoded_bytes = c.need;
    auto fits = storable_thaw(c.bytes, limits);
    ASSERT_TRUE(fits.ok()) << fits.error();
    limits.max_decoded_bytes = c.need - 1;
    auto over = storable_thaw(c.bytes, limits);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.code(), CodecErrc::kTooLarge) << over.error();
  }
  // An array of 1,000,000 undefs, all there: refused at its size.
  const std::string many = from_hex("050b02000f4240") + std::string(1000000, '\x05');
  DecodeLimits limits;
  limits.max_decoded_bytes = std::size_t{1} << 20U;
  auto refused = storable_thaw(many, limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "storable: at byte 2: an array of 1000000 elements would take the decoded value past "
            "max_decoded_bytes 1048576");
}

TEST(StorableRoundTrip, NfreezeThenThaw) {
  const Value value = Value::map({
      {"list", Value::list({1, -129, 40000, "text", "", nullptr, Value::list({})})},
      {"nested", Value::list({Value::map({{"deep", Value::list({Value::map({})})}})})},
      {"utf8", "h\xc3\xa9llo \xe2\x9c\x93"},
      {"\xe2\x9c\x93", "check"},
      {"long", std::string(70000, 'z')},
  });
  auto frozen = storable_nfreeze(value);
  ASSERT_TRUE(frozen.ok()) << frozen.error();
  auto thawed = storable_thaw(*frozen);
  ASSERT_TRUE(thawed.ok()) << thawed.error();
  EXPECT_EQ(*thawed, value);
}

}  // namespace
}  // namespace codecs_storable_test
