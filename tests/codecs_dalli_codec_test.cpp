// SPDX-License-Identifier: MIT
// codecs/dalli_codec.hpp: DalliCodec beyond the value tables (which
// codecs_make_codec_test checks): Dalli reads only bits 0x1 (serialized) and
// 0x2 (compressed), and a compressed item is zlib or gzip whatever the reader
// is configured with; every kind on encode through Marshal, JSON (NaN and the
// infinities as JSON.dump writes them) and `raw` (Ruby's to_s / inspect text,
// String#inspect's escapes); compression from compression_min_size whether
// or not it makes the item smaller; the options; bad items. The literal items
// were checked once against the real client (see
// ReadsAndWritesWhatTheRealClientDoes).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/codecs/dalli_codec.hpp"
#include "memshard/codecs/detail/quote.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "support/codec_bytes.hpp"

namespace codecs_dalli_codec_test {
namespace {

using memshard::CodecErrc;
using memshard::DalliCodec;
using memshard::DalliCompressor;
using memshard::DalliOptions;
using memshard::DalliSerializer;
using memshard::Encoded;
using memshard::Value;
using memshard::detail::DeflateFormat;
using memshard::testing::from_hex;
using memshard::testing::noisy;

constexpr double kInf = std::numeric_limits<double>::infinity();

auto zlib(std::string_view data) -> std::string {
  return memshard::detail::deflate_bytes(data, DeflateFormat::kZlib, -1);
}

auto gzip(std::string_view data) -> std::string {
  return memshard::detail::deflate_bytes(data, DeflateFormat::kGzip, -1);
}

auto raw_codec() -> DalliCodec {
  DalliOptions options;
  options.raw = true;
  return DalliCodec(options);
}

auto json_codec() -> DalliCodec {
  DalliOptions options;
  options.serializer = DalliSerializer::kJson;
  return DalliCodec(options);
}

const std::string kHello = "\x04\x08I\"\x0ahello\x06:\x06\x45T";  // Marshal.dump("hello")

TEST(DalliCodecTest, OnlyBits1And2AreRead) {
  const DalliCodec codec;
  EXPECT_EQ(*codec.decode("hello", 0), Value("hello"));
  EXPECT_EQ(*codec.decode("\xff\xfe", 0), Value("\xff\xfe"));  // raw: any bytes
  EXPECT_EQ(*codec.decode(kHello, 0x1), Value("hello"));
  EXPECT_EQ(*codec.decode(zlib("hello"), 0x2), Value("hello"));
  EXPECT_EQ(*codec.decode(zlib(kHello), 0x3), Value("hello"));
  // Every other bit is ignored.
  for (const std::uint32_t flags : {0x4U, 0x8U, 0x10U, 0x100U, 0x10000U, 0xfffffffcU}) {
    EXPECT_EQ(*codec.decode("abc", flags), Value("abc")) << flags;
    EXPECT_EQ(*codec.decode(kHello, flags | 0x1U), Value("hello")) << flags;
    EXPECT_EQ(*codec.decode(zlib(kHello), flags | 0x3U), Value("hello")) << flags;
  }
}

TEST(DalliCodecTest, ACompressedItemIsZlibOrGzipWhateverTheCompressor) {
  DalliOptions options;
  for (const DalliCompressor compressor : {DalliCompressor::kZlib, DalliCompressor::kGzip}) {
    options.compressor = compressor;
    const DalliCodec codec(options);
    EXPECT_EQ(*codec.decode(zlib(kHello), 0x3), Value("hello"));
    EXPECT_EQ(*codec.decode(gzip(kHello), 0x3), Value("hello"));
    EXPECT_EQ(*codec.decode(gzip("raw"), 0x2), Value("raw"));
  }
  // Ruby's GzipWriter puts the time and OS 3 in the header: read as well.
  std::string stamped = gzip(kHello);
  stamped.replace(4, 4, "\x5e\x1a\x6f\x65");
  stamped[9] = '\x03';
  EXPECT_EQ(*DalliCodec().decode(stamped, 0x3), Value("hello"));
}

TEST(DalliCodecTest, TheJsonSerializerReadsFlag1AsJson) {
  const DalliCodec codec = json_codec();
  EXPECT_EQ(*codec.decode("42", 0x1), Value(42));
  EXPECT_EQ(*codec.decode("\"hello\"", 0x1), Value("hello"));
  EXPECT_EQ(*codec.decode("{\"a\":[1,null,true]}", 0x1),
            Value::map({{"a", Value::list({1, nullptr, true})}}));
  EXPECT_EQ(*codec.decode(zlib("[1.5]"), 0x3), Value::list({1.5}));
  EXPECT_EQ(*codec.decode("plain", 0), Value("plain"));
  EXPECT_EQ(codec.decode(kHello, 0x1).code(), CodecErrc::kCorrupt);  // Marshal is not JSON
}

TEST(DalliCodecTest, EveryKindThroughMarshal) {
  const DalliCodec codec;
  EXPECT_EQ(*codec.encode(Value("hello")), (Encoded{kHello, 0x1}));
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\xff\0", 2))),
            (Encoded{std::string("\x04\x08\"\x07\xff\0", 6), 0x1}));
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"\x04\x08\x30", 0x1}));
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"\x04\x08T", 0x1}));
  EXPECT_EQ(*codec.encode(Value(false)), (Encoded{"\x04\x08\x46", 0x1}));
  EXPECT_EQ(*codec.encode(Value(0)), (Encoded{std::string("\x04\x08i\0", 4), 0x1}));
  EXPECT_EQ(*codec.encode(Value(-7)), (Encoded{"\x04\x08i\xf4", 0x1}));
  EXPECT_EQ(*codec.encode(Value(3.25)), (Encoded{"\x04\x08\x66\x09\x33.25", 0x1}));
  // A marshalled object is written back as it is; another format cannot be.
  const std::string object("\x04\x08o:\x0bObject\x00", 12);
  EXPECT_EQ(*codec.encode(Value::serialized("ruby-marshal", object)), (Encoded{object, 0x1}));
  EXPECT_EQ(codec.encode(Value::serialized("pickle", "N.")).code(), CodecErrc::kNotEncodable);
  // What it writes reads back.
  for (const Value& value :
       {Value(), Value(true), Value(std::numeric_limits<std::int64_t>::min()),
        Value(std::numeric_limits<std::int64_t>::max()), Value(-0.5), Value("h\xc3\xa9"),
        Value::bytes("\xff"), Value::list({1, Value::list({"x"})}),
        Value::map({{"a", 1}, {2, Value::map({})}})}) {
    const auto encoded = codec.encode(value);
    ASSERT_TRUE(encoded.ok()) << value << ": " << encoded.error();
    EXPECT_EQ(*codec.decode(encoded->bytes, encoded->flags), value);
  }
}

TEST(DalliCodecTest, EveryKindThroughJson) {
  const DalliCodec codec = json_codec();
  EXPECT_EQ(*codec.encode(Value("hello")), (Encoded{"\"hello\"", 0x1}));  // still flag 0x1
  EXPECT_EQ(*codec.encode(Value(42)), (Encoded{"42", 0x1}));
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"null", 0x1}));
  EXPECT_EQ(*codec.encode(Value(false)), (Encoded{"false", 0x1}));
  EXPECT_EQ(*codec.encode(Value(100.0)), (Encoded{"100.0", 0x1}));
  EXPECT_EQ(*codec.encode(Value::list({1.5, -0.0, 1e21})), (Encoded{"[1.5,-0.0,1.0e+21]", 0x1}));
  EXPECT_EQ(*codec.encode(Value::map({{"a/b", "\xc3\xa9"}, {1, Value::list({})}})),
            (Encoded{"{\"a/b\":\"\xc3\xa9\",\"1\":[]}", 0x1}));
  EXPECT_EQ(codec.encode(Value("\xff")).code(), CodecErrc::kNotEncodable);  // JSON is UTF-8
  EXPECT_EQ(codec.encode(Value::serialized("ruby-marshal", kHello)).code(),
            CodecErrc::kNotEncodable);
}

TEST(DalliCodecTest, RawStoresTheToSText) {
  const DalliCodec codec = raw_codec();
  EXPECT_EQ(*codec.encode(Value("hello")), (Encoded{"hello", 0}));
  EXPECT_EQ(*codec.encode(Value("\xff\xfe")), (Encoded{"\xff\xfe", 0}));
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\0", 1))), (Encoded{std::string("\0", 1), 0}));
  EXPECT_EQ(*codec.encode(Value()), (Encoded{"", 0}));  // nil.to_s
  EXPECT_EQ(*codec.encode(Value(true)), (Encoded{"true", 0}));
  EXPECT_EQ(*codec.encode(Value(std::numeric_limits<std::int64_t>::min())),
            (Encoded{"-9223372036854775808", 0}));
  EXPECT_EQ(*codec.encode(Value(-0.0)), (Encoded{"-0.0", 0}));
  EXPECT_EQ(*codec.encode(Value(100.0)), (Encoded{"100.0", 0}));
  EXPECT_EQ(*codec.encode(Value(1e100)), (Encoded{"1.0e+100", 0}));
  EXPECT_EQ(*codec.encode(Value(kInf)), (Encoded{"Infinity", 0}));
  EXPECT_EQ(*codec.encode(Value(std::nan(""))), (Encoded{"NaN", 0}));
  // Lists and maps: inspect, strings quoted and escaped.
  EXPECT_EQ(*codec.encode(Value::list({nullptr, Value::list({}), Value::map({})})),
            (Encoded{"[nil, [], {}]", 0}));
  EXPECT_EQ(*codec.encode(Value::map({{"a", 1}, {2, "b"}})), (Encoded{"{\"a\"=>1, 2=>\"b\"}", 0}));
  // No inspect text here for non-ASCII strings in containers, nor for objects.
  const auto nested = codec.encode(Value::list({"h\xc3\xa9"}));
  EXPECT_EQ(nested.code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(nested.error().message(),
            "dalli: a raw value is its to_s text; this one has none here");
  EXPECT_EQ(codec.encode(Value::serialized("ruby-marshal", kHello)).code(),
            CodecErrc::kNotEncodable);
  // Raw items read back as strings.
  EXPECT_EQ(*codec.decode("42", 0), Value("42"));
}

TEST(DalliCodecTest, CompressionFromTheMinimumSizeEvenWhenLarger) {
  const DalliCodec codec;
  // Marshal.dump of a binary String of 4089 bytes is 4095 bytes; of 4090, 4096.
  const std::string below = noisy(4089, 0);
  const std::string at = noisy(4090, 0);
  EXPECT_EQ(codec.encode(Value::bytes(below))->flags, 0x1U);
  EXPECT_EQ(codec.encode(Value::bytes(below))->bytes.size(), 4095U);
  const auto compressed = codec.encode(Value::bytes(at));
  EXPECT_EQ(compressed->flags, 0x3U);
  EXPECT_EQ(compressed->bytes, zlib(memshard::marshal_dump(Value::bytes(at)).value()));
  EXPECT_GT(compressed->bytes.size(), 4096U);  // larger, and kept
  EXPECT_EQ(*codec.decode(compressed->bytes, compressed->flags), Value::bytes(at));
  // Raw and JSON payloads alike.
  EXPECT_EQ(raw_codec().encode(Value(std::string(4095, 'x')))->flags, 0U);
  EXPECT_EQ(*raw_codec().encode(Value(std::string(4096, 'x'))),
            (Encoded{zlib(std::string(4096, 'x')), 0x2}));
  EXPECT_EQ(json_codec().encode(Value(std::string(4094, 'x')))->flags, 0x3U);  // 4096 with quotes
  EXPECT_EQ(json_codec().encode(Value(std::string(4093, 'x')))->flags, 0x1U);
  // The options: off, another size, gzip.
  DalliOptions options;
  options.compress = false;
  EXPECT_EQ(DalliCodec(options).encode(Value::bytes(std::string(100000, 'z')))->flags, 0x1U);
  options = {};
  options.compression_min_size = 10;
  EXPECT_EQ(DalliCodec(options).encode(Value(true))->flags, 0x1U);              // 3 bytes
  EXPECT_EQ(DalliCodec(options).encode(Value::bytes("0123456"))->flags, 0x3U);  // 10 bytes
  options.compressor = DalliCompressor::kGzip;
  const auto gzipped = DalliCodec(options).encode(Value::bytes("0123456"));
  EXPECT_EQ(*gzipped, (Encoded{gzip("\x04\x08\"\f0123456"), 0x3}));  // \f: length 7
  EXPECT_EQ(gzipped->bytes.substr(0, 10), std::string("\x1f\x8b\x08\0\0\0\0\0\0\xff", 10));
  EXPECT_EQ(*DalliCodec(options).decode(gzipped->bytes, gzipped->flags), Value::bytes("0123456"));
}

TEST(DalliCodecTest, ReadsAndWritesWhatTheRealClientDoes) {
  // Checked once against Dalli 3.0.6 (Debian ruby-dalli, Ruby 3.1.2) on a
  // private memcached: `c = Dalli::Client.new(addr[, serializer: JSON]);
  // c.set(k, v[, nil, raw: true])`, then a text-protocol get of the raw item;
  // and items written raw, read with c.get(k).
  const DalliCodec codec;
  // c.set(k, {"k" => [1, 2**62, -2**31, 1.5, nil, true]}); c.set(k, "h\u00e9llo");
  // c.set(k, "\xff\x00".b)
  EXPECT_EQ(*codec.encode(
                Value::map({{"k", Value::list({1, std::int64_t{1} << 62, -(std::int64_t{1} << 31),
                                               1.5, nullptr, true})}})),
            (Encoded{from_hex("04087b064922066b063a0645545b0b69066c2b0900000000000000406c2d07000000"
                              "806608312e353054"),
                     0x1}));
  EXPECT_EQ(*codec.encode(Value("h\xc3\xa9llo")),
            (Encoded{from_hex("040849220b68c3a96c6c6f063a064554"), 0x1}));
  EXPECT_EQ(*codec.encode(Value::bytes(std::string("\xff\0", 2))),
            (Encoded{from_hex("04082207ff00"), 0x1}));
  // A binary String of 4089 random bytes: flags 1, 4095 bytes; of 4090:
  // flags 3, a zlib stream of 4107 bytes (larger than the 4096 it holds).
  EXPECT_EQ(codec.encode(Value::bytes(noisy(4089, 0)))->flags, 0x1U);
  const auto larger = codec.encode(Value::bytes(noisy(4090, 0)));
  EXPECT_EQ(larger->flags, 0x3U);
  EXPECT_EQ(larger->bytes.size(), 4107U);
  EXPECT_EQ(larger->bytes.substr(0, 8), from_hex("789c010010ffef04"));
  // raw: c.set(k, 1e100, nil, raw: true); nil; -0.0; 2**63 - 1; "x" * 5000
  // (flags 2, 28 bytes); [nil, true, false, 1.5, "a\"b\\\n\t\r\e\#{x}\#$\#@#a",
  // "\xFF\x01".b, {1=>-0.0, "k"=>[]}, 1.0e100, -2**63, Infinity, -Infinity,
  // NaN, 100.0]
  const DalliCodec raw = raw_codec();
  EXPECT_EQ(*raw.encode(Value(1e100)), (Encoded{"1.0e+100", 0}));
  EXPECT_EQ(*raw.encode(Value()), (Encoded{"", 0}));
  EXPECT_EQ(*raw.encode(Value(-0.0)), (Encoded{"-0.0", 0}));
  EXPECT_EQ(*raw.encode(Value(std::numeric_limits<std::int64_t>::max())),
            (Encoded{"9223372036854775807", 0}));
  EXPECT_EQ(raw.encode(Value(std::string(5000, 'x')))->flags, 0x2U);
  EXPECT_EQ(raw.encode(Value(std::string(5000, 'x')))->bytes.size(), 28U);
  EXPECT_EQ(*raw.encode(Value::list(
                {nullptr, true, false, 1.5, "a\"b\\\n\t\r\x1b#{x}#$#@#a", Value::bytes("\xff\x01"),
                 Value::map({{1, -0.0}, {"k", Value::list({})}}), 1e100,
                 std::numeric_limits<std::int64_t>::min(), kInf, -kInf, std::nan(""), 100.0})),
            (Encoded{"[nil, true, false, 1.5, \"a\\\"b\\\\\\n\\t\\r\\e\\#{x}\\#$\\#@#a\", "
                     "\"\\xFF\\x01\", {1=>-0.0, \"k\"=>[]}, 1.0e+100, -9223372036854775808, "
                     "Infinity, -Infinity, NaN, 100.0]",
                     0}));
  // JSON: c.set(k, {"\u00e9" => "x/y", "n" => [nil, 1.0e21, -7]}); c.set(k, "hello")
  EXPECT_EQ(*json_codec().encode(
                Value::map({{"\xc3\xa9", "x/y"}, {"n", Value::list({nullptr, 1e21, -7})}})),
            (Encoded{"{\"\xc3\xa9\":\"x/y\",\"n\":[null,1.0e+21,-7]}", 0x1}));
  EXPECT_EQ(*json_codec().encode(Value("hello")), (Encoded{"\"hello\"", 0x1}));
  // c.get of raw items: 0x5 Marshal([1]) -> [1], 0x4 / 0x10000 "abc" -> "abc",
  // 0x2 zlib("zz") -> "zz", 0x1 "\x04\x08i\x06" -> 1.
  EXPECT_EQ(*codec.decode(from_hex("04085b066906"), 0x5), Value::list({1}));
  EXPECT_EQ(*codec.decode("abc", 0x4), Value("abc"));
  EXPECT_EQ(*codec.decode("abc", 0x10000), Value("abc"));
  EXPECT_EQ(*codec.decode(from_hex("789cabaa0200017000f5"), 0x2), Value("zz"));
  EXPECT_EQ(*codec.decode(from_hex("04086906"), 0x1), Value(1));
  // Written by memshard, stored raw, read with c.get(k): {"a"=>1, 2=>{},
  // "s"=>"\xFF"}, and with raw: "{\"a\"=>[nil, 1.5]}".
  EXPECT_EQ(
      *codec.encode(Value::map({{"a", 1}, {2, Value::map({})}, {"s", Value::bytes("\xff")}})),
      (Encoded{from_hex("04087b0849220661063a064554690669077b0049220673063b00542206ff"), 0x1}));
  EXPECT_EQ(*raw.encode(Value::map({{"a", Value::list({nullptr, 1.5})}})),
            (Encoded{"{\"a\"=>[nil, 1.5]}", 0}));
}

TEST(DalliCodecTest, RubyFloatsInMarshal) {
  // c.set(k, [-0.0, Float::INFINITY, 1e100, 2**63 - 1, -2**63]) with Dalli 3.0.6.
  EXPECT_EQ(
      *DalliCodec().encode(Value::list({-0.0, kInf, 1e100, std::numeric_limits<std::int64_t>::max(),
                                        std::numeric_limits<std::int64_t>::min()})),
      (Encoded{from_hex("04085b0a66072d306608696e66660a31653130306c2b09ffffffffffffff7f6c2d09"
                        "0000000000000080"),
               0x1}));
}

TEST(DalliCodecTest, RawInspectEscapesAsRuby) {
  // Dalli 3.0.6 (Ruby 3.1.2, LANG=C.UTF-8) on a private memcached:
  // Dalli::Client.new(addr).set("k", value, nil, raw: true), which stores value.to_s, then a
  // text-protocol get of the item. In a list or map each String is its inspect: a UTF-8
  // String's controls and DEL are \uXXXX, a binary one's \xXX, with \a \b \t \n \v \f \r \e
  // named in both; upper-case hex.
  const DalliCodec raw = raw_codec();
  // [nil, true, 1.5, "a\u0001\a", "\xFF".b, {1=>-0.0}]
  EXPECT_EQ(*raw.encode(Value::list(
                {nullptr, true, 1.5, "a\x01\x07", Value::bytes("\xff"), Value::map({{1, -0.0}})})),
            (Encoded{"[nil, true, 1.5, \"a\\u0001\\a\", \"\\xFF\", {1=>-0.0}]", 0}));
  // ["\x7f\b\v\f"], ["\a\x7F".b], {"\e" => ["\u0000"]}
  EXPECT_EQ(*raw.encode(Value::list({"\x7f\x08\x0b\x0c"})), (Encoded{"[\"\\u007F\\b\\v\\f\"]", 0}));
  EXPECT_EQ(*raw.encode(Value::list({Value::bytes("\x07\x7f")})), (Encoded{"[\"\\a\\x7F\"]", 0}));
  EXPECT_EQ(*raw.encode(Value::map({{"\x1b", Value::list({std::string(1, '\0')})}})),
            (Encoded{"{\"\\e\"=>[\"\\u0000\"]}", 0}));
  // Every byte: [(0..127).map(&:chr).join.force_encoding("UTF-8"), (0..255).map(&:chr).join.b]
  std::string ascii;
  std::string binary;
  for (unsigned byte = 0; byte < 256; ++byte) {
    (byte < 128 ? ascii : binary).push_back(static_cast<char>(byte));
  }
  binary = ascii + binary;
  EXPECT_EQ(*raw.encode(Value::list({ascii, Value::bytes(binary)})),
            (Encoded{"[\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\a\\b\\t\\n\\v\\f\\r"
                     "\\u000E\\u000F\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017"
                     "\\u0018\\u0019\\u001A\\e\\u001C\\u001D\\u001E\\u001F !\\\"\\#$%&'()*+,-./012"
                     "3456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`abcdefghijklmnopqrstuvwxyz{"
                     "|}~\\u007F\", \"\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\a\\b\\t\\n\\v\\f\\r"
                     "\\x0E\\x0F\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1A\\e\\x1C"
                     "\\x1D\\x1E\\x1F !\\\"\\#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVW"
                     "XYZ[\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\\x7F\\x80\\x81\\x82\\x83\\x84"
                     "\\x85\\x86\\x87\\x88\\x89\\x8A\\x8B\\x8C\\x8D\\x8E\\x8F\\x90\\x91\\x92\\x93"
                     "\\x94\\x95\\x96\\x97\\x98\\x99\\x9A\\x9B\\x9C\\x9D\\x9E\\x9F\\xA0\\xA1\\xA2"
                     "\\xA3\\xA4\\xA5\\xA6\\xA7\\xA8\\xA9\\xAA\\xAB\\xAC\\xAD\\xAE\\xAF\\xB0\\xB1"
                     "\\xB2\\xB3\\xB4\\xB5\\xB6\\xB7\\xB8\\xB9\\xBA\\xBB\\xBC\\xBD\\xBE\\xBF\\xC0"
                     "\\xC1\\xC2\\xC3\\xC4\\xC5\\xC6\\xC7\\xC8\\xC9\\xCA\\xCB\\xCC\\xCD\\xCE\\xCF"
                     "\\xD0\\xD1\\xD2\\xD3\\xD4\\xD5\\xD6\\xD7\\xD8\\xD9\\xDA\\xDB\\xDC\\xDD\\xDE"
                     "\\xDF\\xE0\\xE1\\xE2\\xE3\\xE4\\xE5\\xE6\\xE7\\xE8\\xE9\\xEA\\xEB\\xEC\\xED"
                     "\\xEE\\xEF\\xF0\\xF1\\xF2\\xF3\\xF4\\xF5\\xF6\\xF7\\xF8\\xF9\\xFA\\xFB\\xFC"
                     "\\xFD\\xFE\\xFF\"]",
                     0}));
  // A UTF-8 String with bytes of no character shows them one by one as \xXX; '#' takes a
  // backslash only before '{', '$' or '@': ["\xFF\xC3A\xED\xA0\x80\xE2\x82".dup
  // .force_encoding("UTF-8"), "\#{", "\#$", "\#@", "#", "a#", "#a", "##\#{}", "\#{x}".b]
  EXPECT_EQ(*raw.encode(Value::list({"\xff\xc3\x41\xed\xa0\x80\xe2\x82", "#{", "#$", "#@", "#",
                                     "a#", "#a", "###{}", Value::bytes("#{x}")})),
            (Encoded{"[\"\\xFF\\xC3A\\xED\\xA0\\x80\\xE2\\x82\", \"\\#{\", \"\\#$\", \"\\#@\", "
                     "\"#\", \"a#\", \"#a\", \"##\\#{}\", \"\\#{x}\"]",
                     0}));
  // A non-ASCII character in a String of a list: Ruby keeps it or escapes it by the process's
  // locale and its own Unicode tables (under C.UTF-8 "\u00e9" stays and "\u2028" is written
  // \u2028; under C both are escaped), so there is no one text to write.
  EXPECT_EQ(raw.encode(Value::list({"\xe2\x80\xa8"})).code(), CodecErrc::kNotEncodable);
  EXPECT_EQ(raw.encode(Value::list({"\xff\xc3\xa9"})).code(), CodecErrc::kNotEncodable);
}

TEST(DalliCodecTest, JsonKeepsNaNAndTheInfinities) {
  // Dalli 3.0.6 with serializer: JSON (json 2.6.1: JSON.dump, whose options allow NaN):
  // Dalli::Client.new(addr, serializer: JSON).set("k", Float::NAN) stores flags 1 "NaN";
  // set("k", [Float::NAN, Float::INFINITY, -Float::INFINITY]) flags 1
  // "[NaN,Infinity,-Infinity]", and get returns them.
  const DalliCodec codec = json_codec();
  EXPECT_EQ(*codec.encode(Value(std::nan(""))), (Encoded{"NaN", 0x1}));
  EXPECT_EQ(*codec.encode(Value(-std::nan(""))), (Encoded{"NaN", 0x1}));
  EXPECT_EQ(*codec.encode(Value::list({std::nan(""), kInf, -kInf})),
            (Encoded{"[NaN,Infinity,-Infinity]", 0x1}));
  EXPECT_EQ(*codec.encode(Value::map({{"x", -kInf}})), (Encoded{"{\"x\":-Infinity}", 0x1}));
  const auto nan = codec.decode("NaN", 0x1);
  ASSERT_TRUE(nan.ok()) << nan.error();
  ASSERT_TRUE(nan->is_float());
  EXPECT_TRUE(std::isnan(nan->as_double()));
  EXPECT_EQ(*codec.decode("[Infinity,-Infinity]", 0x1), Value::list({kInf, -kInf}));
  EXPECT_EQ(*codec.decode(" {\"a\" : -Infinity } ", 0x1), Value::map({{"a", -kInf}}));
  // What JSON.load refuses stays corrupt: ruby -rjson -e 'JSON.load("-NaN")' and "+Infinity",
  // "nan", "Infinityx", "-Infinit", "[NaN1]", "NaN.5", "-" raise JSON::ParserError.
  for (const char* bad :
       {"-NaN", "+Infinity", "nan", "Infinityx", "-Infinit", "[NaN1]", "NaN.5", "-", "infinity"}) {
    EXPECT_EQ(codec.decode(bad, 0x1).code(), CodecErrc::kCorrupt) << bad;
  }
  // Under the Marshal serializer the same bytes are no Marshal.
  EXPECT_FALSE(DalliCodec().decode("NaN", 0x1).ok());
}

TEST(DalliCodecTest, BadItemsAreErrorsThatSayWhatWasFound) {
  const DalliCodec codec;
  const auto notzlib = codec.decode("notzlib", 0x2);
  EXPECT_EQ(notzlib.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(notzlib.error().message().rfind("dalli: zlib: ", 0), 0U) << notzlib.error().message();
  const auto badgzip = codec.decode("\x1f\x8b\x08garbage", 0x2);
  EXPECT_EQ(badgzip.code(), CodecErrc::kCorrupt);
  EXPECT_EQ(badgzip.error().message().rfind("dalli: gzip: ", 0), 0U) << badgzip.error().message();
  for (const std::string& stream :
       {zlib(std::string(3000, 'p') + "end"), gzip(std::string(3000, 'p') + "end")}) {
    for (std::size_t cut = 0; cut < stream.size(); ++cut) {
      EXPECT_EQ(codec.decode(stream.substr(0, cut), 0x2).code(), CodecErrc::kCorrupt) << cut;
    }
    EXPECT_EQ(codec.decode(stream + "x", 0x2).code(), CodecErrc::kCorrupt);
    DalliOptions limited;
    limited.limits.max_size = 3002;
    const auto large = DalliCodec(limited).decode(stream, 0x2);
    EXPECT_EQ(large.code(), CodecErrc::kTooLarge);
    EXPECT_EQ(large.error().message().rfind("dalli: ", 0), 0U);
  }
  // Marshal that is not: another version, truncated, trailing bytes.
  EXPECT_EQ(codec.decode("\x04\x09T", 0x1).code(), CodecErrc::kUnsupported);
  EXPECT_EQ(codec.decode("\x04\x08I\"\x0ahel", 0x1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("\x04\x08TT", 0x1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(codec.decode("", 0x1).code(), CodecErrc::kCorrupt);
  EXPECT_EQ(json_codec().decode("{\"a\":", 0x1).code(), CodecErrc::kCorrupt);
  DalliOptions shallow;
  shallow.limits.max_depth = 2;
  EXPECT_EQ(DalliCodec(shallow).decode("\x04\x08[\x06[\x06[\x06T", 0x1).code(),
            CodecErrc::kTooDeep);
}

}  // namespace
}  // namespace codecs_dalli_codec_test
