// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_CACHE_MEMCACHED_FAST_CODEC_HPP_
#define MEMSHARD_CODECS_CACHE_MEMCACHED_FAST_CODEC_HPP_

// codecs/cache_memcached_fast_codec.hpp: CacheMemcachedFastCodec, the values
// Perl's Cache::Memcached::Fast (0.28) stores.
//
// As Cache::Memcached: scalars as their text (flags 0), references as
// Storable::nfreeze (0x1), gzip (0x2) when compress_threshold is set (-1, off,
// by default) and the result is at most compress_ratio (0.8) of the payload.
// Differences: undef is stored as an empty string; and with `utf8 => 1` a
// character string is stored as UTF-8 with flag 0x4, which such a reader
// decodes back to characters (without `utf8`, Perl refuses characters above
// 0xff). Here a string with bytes above 0x7f is such a character string.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/cache_memcached_codec.hpp"
#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/utf8.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/storable.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// CacheMemcachedFastOptions: the client's settings (Cache::Memcached::Fast's
/// defaults).
struct CacheMemcachedFastOptions {
  /// utf8: the client's `utf8 => 1`.
  bool utf8 = false;
  /// compress_threshold: payloads at least this long are gzipped when the
  /// result is at most `compress_ratio` of them; 0 never compresses (the
  /// client's -1).
  std::size_t compress_threshold = 0;
  double compress_ratio = 0.8;
  DecodeLimits limits;
};

/// CacheMemcachedFastCodec: Cache::Memcached::Fast's values (a Codec).
class CacheMemcachedFastCodec {
 public:
  static constexpr std::uint32_t kStorable = 0x1U;
  static constexpr std::uint32_t kCompressed = 0x2U;
  static constexpr std::uint32_t kUtf8 = 0x4U;

  CacheMemcachedFastCodec() = default;
  explicit CacheMemcachedFastCodec(CacheMemcachedFastOptions options)
      : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view {
    return "cache-memcached-fast";
  }
  [[nodiscard]] auto options() const noexcept -> const CacheMemcachedFastOptions& {
    return options_;
  }

  /// encode: a scalar as its Perl text (a string above ASCII with the utf8
  /// flag when `utf8` is set), null as "", a list or map as Storable.
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    Encoded out;
    if (value.is_null()) {
      // undef is stored as ""
    } else if (detail::perl_scalar_text(value, out.bytes)) {
      if (options_.utf8 && value.is_string() && !is_ascii(out.bytes)) {
        if (!detail::is_utf8(out.bytes)) {
          return CodecResult<Encoded>(CodecErrc::kNotEncodable,
                                      "cache-memcached-fast: a character string must be UTF-8");
        }
        out.flags = kUtf8;
      }
    } else {
      CodecResult<std::string> frozen = storable_nfreeze(value);
      if (!frozen) {
        return frozen.error();
      }
      out.bytes = std::move(frozen).value();
      out.flags = kStorable;
    }
    if (options_.compress_threshold != 0 && out.bytes.size() >= options_.compress_threshold) {
      detail::deflate_payload(out, detail::DeflateFormat::kGzip, detail::kPerlGzipLevel,
                              kCompressed, [this](std::size_t gzipped, std::size_t payload) {
                                return static_cast<double>(gzipped) <=
                                       static_cast<double>(payload) * options_.compress_ratio;
                              });
    }
    return out;
  }

  /// decode: a scalar's text as a string, a Storable image as what it holds.
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    std::string inflated;
    if (auto item = detail::read_perl_item("cache-memcached-fast", bytes, flags, options_.limits,
                                           inflated)) {
      return *std::move(item);
    }
    if (options_.utf8 && (flags & kUtf8) != 0 && !detail::is_utf8(bytes)) {
      return CodecResult<Value>(CodecErrc::kCorrupt,
                                "cache-memcached-fast: flag 0x4 marks UTF-8, but byte " +
                                    std::to_string(detail::utf8_error_at(bytes)) + " is not");
    }
    return Value(std::string(bytes));
  }

 private:
  [[nodiscard]] static auto is_ascii(std::string_view text) noexcept -> bool {
    for (const char c : text) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  CacheMemcachedFastOptions options_;
};

static_assert(Codec<CacheMemcachedFastCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_CACHE_MEMCACHED_FAST_CODEC_HPP_
