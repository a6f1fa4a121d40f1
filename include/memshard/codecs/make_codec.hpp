// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_MAKE_CODEC_HPP_
#define MEMSHARD_CODECS_MAKE_CODEC_HPP_

// codecs/make_codec.hpp: make_codec, a codec chosen by name at run time, with
// settings given as text: "php-memcached", or
// "dalli:serializer=JSON,compressor=gzip". The names and settings are those of
// the value tables (tests/golden/values/), which record each client's own:
//
//   php-memcached         serializer=php|igbinary|json|msgpack
//                         compression=fastlz|zlib|zstd|none compression_threshold=N
//                         compression_factor=F user_flags=N zlib_level=N zstd_level=N
//   php-memcache          compress_threshold=N set_flags=0|2 min_savings=F user_flags=N
//   spymemcached          compression_threshold=N java_int=Integer|Long gzip_level=N
//                         transcoder=SerializingTranscoder
//   python-memcache       pickle_protocol=N min_compress_len=N
//   pymemcache            serde=none|pickle_serde pickle_protocol=N
//   pylibmc               pickle_protocol=N min_compress_len=N
//   dalli                 serializer=Marshal|JSON|none raw=true|false compress=true|false
//                         compressor=zlib|gzip compression_min_size=N
//   cache-memcached       compress_threshold=N compress_savings=F
//   cache-memcached-fast  utf8=0|1 compress_threshold=N (-1: off) compress_ratio=F
//   php-session           (none: PHP session data, php-memcached's session handler)
//   plain                 flags=N
//
// Every codec also takes max_size=N, max_depth=N and max_decoded_bytes=N (its
// DecodeLimits). An unknown name or setting, or a value that does not parse,
// throws ConfigError: once, when the codec is made.

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "memshard/codecs/any_codec.hpp"
#include "memshard/codecs/cache_memcached_codec.hpp"
#include "memshard/codecs/cache_memcached_fast_codec.hpp"
#include "memshard/codecs/dalli_codec.hpp"
#include "memshard/codecs/php_memcache_codec.hpp"
#include "memshard/codecs/php_memcached_codec.hpp"
#include "memshard/codecs/php_session_codec.hpp"
#include "memshard/codecs/plain_codec.hpp"
#include "memshard/codecs/pylibmc_codec.hpp"
#include "memshard/codecs/pymemcache_codec.hpp"
#include "memshard/codecs/python_memcache_codec.hpp"
#include "memshard/codecs/spymemcached_codec.hpp"
#include "memshard/detail/throw.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// CodecSettings: a codec's settings by name, as text.
using CodecSettings = std::map<std::string, std::string, std::less<>>;

/// codec_names: every name make_codec knows.
[[nodiscard]] constexpr auto codec_names() noexcept -> std::array<std::string_view, 11> {
  return {"php-memcached",        "php-memcache", "spymemcached", "python-memcache",
          "pymemcache",           "pylibmc",      "dalli",        "cache-memcached",
          "cache-memcached-fast", "php-session",  "plain"};
}

namespace detail {

// CodecSettingReader: takes the settings of one codec, each once; what is left
// at the end was not understood.
class CodecSettingReader {
 public:
  CodecSettingReader(std::string_view codec, CodecSettings settings)
      : codec_(codec), settings_(std::move(settings)) {}

  [[nodiscard]] auto text(std::string_view name) -> const std::string* {
    const auto found = settings_.find(name);
    if (found == settings_.end()) {
      return nullptr;
    }
    taken_.insert(*found);
    settings_.erase(found);
    return &taken_.find(name)->second;
  }
  template <class Number>
  void number(std::string_view name, Number& out) {
    const std::string* value = text(name);
    if (value == nullptr) {
      return;
    }
    Number parsed{};
    const char* end = value->data() + value->size();
    const auto [at, error] = std::from_chars(value->data(), end, parsed);
    if (error != std::errc() || at != end || value->empty()) {
      fail(name, *value, "a number");
    }
    out = parsed;
  }
  void size(std::string_view name, std::size_t& out) {
    const std::string* value = text(name);
    if (value == nullptr) {
      return;
    }
    if (*value == "-1") {  // Cache::Memcached::Fast's "off"
      out = 0;
      return;
    }
    std::size_t parsed = 0;
    const char* end = value->data() + value->size();
    const auto [at, error] = std::from_chars(value->data(), end, parsed);
    if (error != std::errc() || at != end || value->empty()) {
      fail(name, *value, "a size");
    }
    out = parsed;
  }
  void flag(std::string_view name, bool& out) {
    const std::string* value = text(name);
    if (value == nullptr) {
      return;
    }
    if (*value == "true" || *value == "1") {
      out = true;
    } else if (*value == "false" || *value == "0") {
      out = false;
    } else {
      fail(name, *value, "true or false");
    }
  }
  template <class Enum, std::size_t N>
  void choice(std::string_view name, Enum& out,
              const std::array<std::pair<std::string_view, Enum>, N>& choices) {
    const std::string* value = text(name);
    if (value == nullptr) {
      return;
    }
    std::string known;
    for (const auto& [spelling, meaning] : choices) {
      if (*value == spelling) {
        out = meaning;
        return;
      }
      known.append(known.empty() ? "" : ", ").append(spelling);
    }
    fail(name, *value, "one of " + known);
  }
  void limits(DecodeLimits& out) {
    size("max_size", out.max_size);
    size("max_depth", out.max_depth);
    size("max_decoded_bytes", out.max_decoded_bytes);
  }
  void finish() const {
    if (!settings_.empty()) {
      throw_config_error(std::string(codec_) + " has no setting", settings_.begin()->first);
    }
  }
  [[noreturn]] void fail(std::string_view name, std::string_view value,
                         std::string_view wanted) const {
    throw_config_error(
        std::string(codec_) + " setting " + std::string(name) + " wants " + std::string(wanted),
        value);
  }

 private:
  std::string_view codec_;
  CodecSettings settings_;
  CodecSettings taken_;
};

// read_codec_settings: the settings of one codec, read into its options (all
// but the DecodeLimits, which make_codec_of reads for every codec).
inline void read_codec_settings(CodecSettingReader& read, PhpMemcachedOptions& options) {
  read.choice("serializer", options.serializer,
              std::array<std::pair<std::string_view, PhpSerializer>, 4>{
                  {{"php", PhpSerializer::kPhp},
                   {"igbinary", PhpSerializer::kIgbinary},
                   {"json", PhpSerializer::kJson},
                   {"msgpack", PhpSerializer::kMsgpack}}});
  read.choice("compression", options.compression,
              std::array<std::pair<std::string_view, PhpCompression>, 4>{
                  {{"fastlz", PhpCompression::kFastlz},
                   {"zlib", PhpCompression::kZlib},
                   {"zstd", PhpCompression::kZstd},
                   {"none", PhpCompression::kNone}}});
  read.size("compression_threshold", options.compression_threshold);
  read.number("compression_factor", options.compression_factor);
  read.number("user_flags", options.user_flags);
  read.number("zlib_level", options.zlib_level);
  read.number("zstd_level", options.zstd_level);
}
inline void read_codec_settings(CodecSettingReader& read, PhpMemcacheOptions& options) {
  read.size("compress_threshold", options.compress_threshold);
  read.number("min_savings", options.min_savings);
  read.number("user_flags", options.user_flags);
  if (const std::string* set_flags = read.text("set_flags")) {
    if (*set_flags != "0" && *set_flags != "2") {
      read.fail("set_flags", *set_flags, "0 or 2 (MEMCACHE_COMPRESSED)");
    }
    options.always_compress = *set_flags == "2";
  }
}
inline void read_codec_settings(CodecSettingReader& read, SpymemcachedOptions& options) {
  if (const std::string* transcoder = read.text("transcoder");
      transcoder != nullptr && *transcoder != "SerializingTranscoder") {
    read.fail("transcoder", *transcoder, "SerializingTranscoder");
  }
  read.size("compression_threshold", options.compression_threshold);
  read.choice("java_int", options.integers,
              std::array<std::pair<std::string_view, SpymemcachedIntegers>, 2>{
                  {{"Integer", SpymemcachedIntegers::kIntegerWhenItFits},
                   {"Long", SpymemcachedIntegers::kLong}}});
  read.number("gzip_level", options.gzip_level);
}
inline void read_codec_settings(CodecSettingReader& read, PythonMemcacheOptions& options) {
  read.number("pickle_protocol", options.pickle_protocol);
  read.size("min_compress_len", options.min_compress_len);
}
inline void read_codec_settings(CodecSettingReader& read, PymemcacheOptions& options) {
  read.choice("serde", options.serde,
              std::array<std::pair<std::string_view, PymemcacheSerde>, 2>{
                  {{"none", PymemcacheSerde::kNone}, {"pickle_serde", PymemcacheSerde::kPickle}}});
  read.number("pickle_protocol", options.pickle_protocol);
}
inline void read_codec_settings(CodecSettingReader& read, PylibmcOptions& options) {
  read.number("pickle_protocol", options.pickle_protocol);
  read.size("min_compress_len", options.min_compress_len);
}
inline void read_codec_settings(CodecSettingReader& read, DalliOptions& options) {
  bool serializer_none = false;
  if (const std::string* serializer = read.text("serializer")) {
    if (*serializer == "Marshal") {
      options.serializer = DalliSerializer::kMarshal;
    } else if (*serializer == "JSON") {
      options.serializer = DalliSerializer::kJson;
    } else if (*serializer == "none") {
      serializer_none = true;  // what raw: true means
    } else {
      read.fail("serializer", *serializer, "one of Marshal, JSON, none");
    }
  }
  read.flag("raw", options.raw);
  options.raw = options.raw || serializer_none;
  read.flag("compress", options.compress);
  read.choice("compressor", options.compressor,
              std::array<std::pair<std::string_view, DalliCompressor>, 2>{
                  {{"zlib", DalliCompressor::kZlib}, {"gzip", DalliCompressor::kGzip}}});
  read.size("compression_min_size", options.compression_min_size);
}
inline void read_codec_settings(CodecSettingReader& read, CacheMemcachedOptions& options) {
  read.size("compress_threshold", options.compress_threshold);
  read.number("compress_savings", options.compress_savings);
}
inline void read_codec_settings(CodecSettingReader& read, CacheMemcachedFastOptions& options) {
  read.flag("utf8", options.utf8);
  read.size("compress_threshold", options.compress_threshold);
  read.number("compress_ratio", options.compress_ratio);
}
inline void read_codec_settings(CodecSettingReader& /*read*/, PhpSessionOptions& /*options*/) {}
inline void read_codec_settings(CodecSettingReader& read, PlainOptions& options) {
  read.number("flags", options.flags);
}

// make_codec_of: a `Codec` with the settings `read` holds for it, then its
// DecodeLimits (max_size, max_depth, max_decoded_bytes).
template <class Codec>
[[nodiscard]] auto make_codec_of(CodecSettingReader& read) -> AnyCodec {
  std::remove_cvref_t<decltype(std::declval<const Codec&>().options())> options;
  read_codec_settings(read, options);
  if constexpr (requires { options.limits; }) {
    read.limits(options.limits);
  } else {
    DecodeLimits unused;  // a codec without limits (plain) decodes nothing they apply to
    read.limits(unused);
  }
  return Codec(std::move(options));
}

// CodecMaker: make_codec_of for the codec of one name.
struct CodecMaker {
  std::string_view name;
  AnyCodec (*make)(CodecSettingReader&);
};

// kCodecMakers: a maker for each name of codec_names(), in its order.
inline constexpr std::array<CodecMaker, codec_names().size()> kCodecMakers{{
    {"php-memcached", &make_codec_of<PhpMemcachedCodec>},
    {"php-memcache", &make_codec_of<PhpMemcacheCodec>},
    {"spymemcached", &make_codec_of<SpymemcachedCodec>},
    {"python-memcache", &make_codec_of<PythonMemcacheCodec>},
    {"pymemcache", &make_codec_of<PymemcacheCodec>},
    {"pylibmc", &make_codec_of<PylibmcCodec>},
    {"dalli", &make_codec_of<DalliCodec>},
    {"cache-memcached", &make_codec_of<CacheMemcachedCodec>},
    {"cache-memcached-fast", &make_codec_of<CacheMemcachedFastCodec>},
    {"php-session", &make_codec_of<PhpSessionCodec>},
    {"plain", &make_codec_of<PlainCodec>},
}};
static_assert(
    [] {
      for (std::size_t i = 0; i < kCodecMakers.size(); ++i) {
        if (kCodecMakers[i].name != codec_names()[i] || kCodecMakers[i].make == nullptr) {
          return false;
        }
      }
      return true;
    }(),
    "kCodecMakers: one maker for each name of codec_names(), in the same order");

}  // namespace detail

/// make_codec: the codec named `name` with `settings` (see the file comment);
/// throws ConfigError for an unknown name or setting, or a bad value.
///
/// **Example**:
///   AnyCodec codec = make_codec("php-memcached", {{"serializer", "igbinary"}});
[[nodiscard]] inline auto make_codec(std::string_view name, CodecSettings settings = {})
    -> AnyCodec {
  detail::CodecSettingReader read(name, std::move(settings));
  for (const detail::CodecMaker& maker : detail::kCodecMakers) {
    if (name == maker.name) {
      AnyCodec codec = maker.make(read);
      read.finish();
      return codec;
    }
  }
  std::string known;
  for (const std::string_view each : codec_names()) {
    known.append(known.empty() ? "" : ", ").append(each);
  }
  detail::throw_config_error("unknown codec (known: " + known + ")", name);
}

/// make_codec_from_spec: make_codec from one string, "name" or
/// "name:setting=value,setting=value" (memshard-get's --codec).
[[nodiscard]] inline auto make_codec_from_spec(std::string_view spec) -> AnyCodec {
  const std::size_t colon = spec.find(':');
  CodecSettings settings;
  if (colon != std::string_view::npos) {
    std::string_view rest = spec.substr(colon + 1);
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view pair = rest.substr(0, comma);
      const std::size_t equals = pair.find('=');
      if (equals == std::string_view::npos || equals == 0) {
        detail::throw_config_error("a codec setting is name=value", pair);
      }
      settings[std::string(pair.substr(0, equals))] = std::string(pair.substr(equals + 1));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return make_codec(spec.substr(0, colon), std::move(settings));
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_MAKE_CODEC_HPP_
