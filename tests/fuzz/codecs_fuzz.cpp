// SPDX-License-Identifier: MIT
// libFuzzer target for the value codecs (include/memshard/codecs/): the first
// byte chooses a decoder (a format, a decompressor, or a peer's codec with the
// next four bytes as flags), the rest is its input. Every decoder must answer
// with a value or a CodecError, never crash, throw or exceed its limits; a
// value it decodes, encoded again by the same format, must decode again, and
// what a peer's codec decodes every peer's codec writes (or refuses) and
// reads back; a compressor's stream of the input must decompress to the input.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/codecs/detail/fastlz.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/detail/zstd.hpp"
#include "memshard/codecs/igbinary.hpp"
#include "memshard/codecs/json.hpp"
#include "memshard/codecs/make_codec.hpp"
#include "memshard/codecs/msgpack.hpp"
#include "memshard/codecs/php_serialize.hpp"
#include "memshard/codecs/pickle.hpp"
#include "memshard/codecs/ruby_marshal.hpp"
#include "memshard/codecs/storable.hpp"

namespace {

using memshard::CodecResult;
using memshard::DecodeLimits;
using memshard::Value;

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

constexpr DecodeLimits kLimits{.max_size = std::size_t{1} << 20U, .max_depth = 64};

// round_trip: a decoded value, encoded again, decodes again.
template <class Encode, class Decode>
void round_trip(const CodecResult<Value>& decoded, Encode encode, Decode decode) {
  if (!decoded.ok()) {
    return;
  }
  const CodecResult<std::string> encoded = encode(*decoded);
  if (encoded.ok()) {
    check(decode(*encoded).ok());
  }
}

auto codecs() -> const std::vector<memshard::AnyCodec>& {
  static const std::vector<memshard::AnyCodec> all = [] {
    std::vector<memshard::AnyCodec> made;
    for (const std::string_view name : memshard::codec_names()) {
      made.push_back(memshard::make_codec(name, {{"max_size", "1048576"}, {"max_depth", "64"}}));
    }
    made.push_back(memshard::make_codec_from_spec("dalli:serializer=JSON,max_depth=64"));
    made.push_back(memshard::make_codec_from_spec("pymemcache:serde=pickle_serde,max_depth=64"));
    made.push_back(memshard::make_codec_from_spec("dalli:raw=true,max_depth=64"));
    return made;
  }();
  return all;
}

}  // namespace

extern "C" auto LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) -> int {
  if (size == 0) {
    return 0;
  }
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto choice = static_cast<unsigned char>(input[0]);
  const std::string_view bytes = input.substr(1);
  namespace ms = memshard;
  namespace md = memshard::detail;
  switch (choice % 16U) {
    case 0:
      round_trip(
          ms::php_unserialize(bytes, kLimits), [](const Value& v) { return ms::php_serialize(v); },
          [](std::string_view b) { return ms::php_unserialize(b, kLimits); });
      break;
    case 1:
      round_trip(
          ms::igbinary_unserialize(bytes, kLimits),
          [](const Value& v) { return ms::igbinary_serialize(v); },
          [](std::string_view b) { return ms::igbinary_unserialize(b, kLimits); });
      break;
    case 2:
      round_trip(
          ms::msgpack_decode(bytes, kLimits), [](const Value& v) { return ms::msgpack_encode(v); },
          [](std::string_view b) { return ms::msgpack_decode(b, kLimits); });
      break;
    case 3:
      round_trip(
          ms::json_decode(bytes, kLimits), [](const Value& v) { return ms::json_encode(v); },
          [](std::string_view b) { return ms::json_decode(b, kLimits); });
      break;
    case 4:
      round_trip(
          ms::pickle_loads(bytes, kLimits), [](const Value& v) { return ms::pickle_dumps(v, 5); },
          [](std::string_view b) { return ms::pickle_loads(b, kLimits); });
      break;
    case 5:
      round_trip(
          ms::marshal_load(bytes, kLimits), [](const Value& v) { return ms::marshal_dump(v); },
          [](std::string_view b) { return ms::marshal_load(b, kLimits); });
      break;
    case 6:
      round_trip(
          ms::storable_thaw(bytes, kLimits), [](const Value& v) { return ms::storable_nfreeze(v); },
          [](std::string_view b) { return ms::storable_thaw(b, kLimits); });
      break;
    case 7: {
      if (bytes.size() < 2) {
        break;
      }
      const std::size_t expected = std::size_t{static_cast<unsigned char>(bytes[0])} << 8U |
                                   std::size_t{static_cast<unsigned char>(bytes[1])};
      const auto out = md::fastlz_decompress(bytes.substr(2), expected);
      check(!out.ok() || out->size() == expected);
      const std::string stream = md::fastlz_compress(bytes, choice & 0x10U ? 2 : 1);
      const auto back = md::fastlz_decompress(stream, bytes.size());
      check(back.ok() && *back == bytes);
      break;
    }
    case 8:
    case 9: {
      const auto format = choice % 16U == 8 ? md::DeflateFormat::kZlib : md::DeflateFormat::kGzip;
      const auto out = md::inflate_bytes(bytes, format, kLimits.max_size);
      check(!out.ok() || out->size() <= kLimits.max_size);
      const auto back =
          md::inflate_bytes(md::deflate_bytes(bytes, format, choice >> 4U), format, bytes.size());
      check(back.ok() && *back == bytes);
      break;
    }
    case 10: {
      const auto out = md::zstd_decompress(bytes, kLimits.max_size);
      check(!out.ok() || out->size() <= kLimits.max_size);
      const auto back = md::zstd_decompress(md::zstd_compress(bytes, 1), bytes.size());
      check(back.ok() && *back == bytes);
      break;
    }
    case 11:
      round_trip(
          ms::php_session_decode(bytes, kLimits),
          [](const Value& v) { return ms::php_session_encode(v); },
          [](std::string_view b) { return ms::php_session_decode(b, kLimits); });
      break;
    default: {
      // A peer's codec: the next byte picks it, four more are the flags.
      if (bytes.size() < 5) {
        break;
      }
      const auto& all = codecs();
      const ms::AnyCodec& codec = all[static_cast<unsigned char>(bytes[0]) % all.size()];
      std::uint32_t flags = 0;
      for (std::size_t i = 1; i < 5; ++i) {
        flags = flags << 8U | static_cast<unsigned char>(bytes[i]);
      }
      const auto decoded = codec.decode(bytes.substr(5), flags);
      if (!decoded.ok()) {
        break;
      }
      const auto encoded = codec.encode(*decoded);
      if (encoded.ok()) {
        check(codec.decode(encoded->bytes, encoded->flags).ok());
      }
      // Every codec writes the value, or refuses it, and reads back what it
      // wrote (within its limits: another codec's text may be longer or count
      // its nesting otherwise).
      for (const ms::AnyCodec& other : all) {
        const auto written = other.encode(*decoded);
        if (written.ok()) {
          const auto read = other.decode(written->bytes, written->flags);
          check(read.ok() || read.code() == ms::CodecErrc::kTooLarge ||
                read.code() == ms::CodecErrc::kTooDeep);
        }
      }
      break;
    }
  }
  return 0;
}
