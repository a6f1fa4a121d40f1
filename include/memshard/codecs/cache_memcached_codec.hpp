// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_CACHE_MEMCACHED_CODEC_HPP_
#define MEMSHARD_CODECS_CACHE_MEMCACHED_CODEC_HPP_

// codecs/cache_memcached_codec.hpp: CacheMemcachedCodec, the values Perl's
// Cache::Memcached (1.30) stores.
//
// Perl has no string, number or boolean types a reader could see: a scalar is
// stored as its text with flags 0 (42 as "42", 1/3 as "0.333333333333333",
// true as "1", false as ""), and read back as a string. A reference (an array
// or hash) is Storable::nfreeze'd, flag 0x1. With compress_threshold set, a
// payload at least that long is gzipped (Compress::Zlib::memGzip: level 9,
// mtime 0, OS 255), flag 0x2, when that saves at least a fifth. Other flag bits
// are ignored, as Cache::Memcached ignores them.
//
// Storable is read by a restricted reader: scalars, arrays and hashes become
// values, a blessed object reads as a serialized value ("storable").

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/codecs/detail/zlib.hpp"
#include "memshard/codecs/storable.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// perl_scalar_text: the text Perl stores for a scalar value (false when the
/// value is no scalar).
[[nodiscard]] inline auto perl_scalar_text(const Value& value, std::string& out) -> bool {
  switch (value.kind()) {
    case ValueKind::kString:
    case ValueKind::kBytes:
      out = value.as_string();
      return true;
    case ValueKind::kInt:
      out = std::to_string(value.as_int());
      return true;
    case ValueKind::kFloat:
      out = perl_float_text(value.as_double());
      return true;
    case ValueKind::kBool:
      out = value.as_bool() ? "1" : "";
      return true;
    default:
      return false;
  }
}

/// perl_gzip_level: Compress::Zlib::memGzip's deflate level.
inline constexpr int kPerlGzipLevel = 9;

// read_perl_item: what both Perl clients do first with an item: flag 0x2
// gunzips it (into `inflated`, `bytes` then viewing it), flag 0x1 thaws it as
// Storable; nullopt when it is a scalar's text, left in `bytes`.
[[nodiscard]] inline auto read_perl_item(std::string_view codec, std::string_view& bytes,
                                         std::uint32_t flags, const DecodeLimits& limits,
                                         std::string& inflated)
    -> std::optional<CodecResult<Value>> {
  if ((flags & 0x2U) != 0) {
    if (auto error =
            inflate_payload(codec, bytes, DeflateFormat::kGzip, limits.max_size, inflated)) {
      return CodecResult<Value>(*std::move(error));
    }
  }
  if ((flags & 0x1U) != 0) {
    return storable_thaw(bytes, limits);
  }
  return std::nullopt;
}

}  // namespace detail

/// CacheMemcachedOptions: the client's settings (Cache::Memcached's defaults).
struct CacheMemcachedOptions {
  /// compress_threshold: payloads at least this long are gzipped when that
  /// saves `compress_savings`; 0 (the default) never compresses.
  std::size_t compress_threshold = 0;
  double compress_savings = 0.2;
  DecodeLimits limits;
};

/// CacheMemcachedCodec: Cache::Memcached's values (a Codec).
class CacheMemcachedCodec {
 public:
  static constexpr std::uint32_t kStorable = 0x1U;
  static constexpr std::uint32_t kCompressed = 0x2U;

  CacheMemcachedCodec() = default;
  explicit CacheMemcachedCodec(CacheMemcachedOptions options) : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view {
    return "cache-memcached";
  }
  [[nodiscard]] auto options() const noexcept -> const CacheMemcachedOptions& { return options_; }

  /// encode: a scalar as its Perl text, a list or map as Storable; null
  /// (undef) is refused, as Cache::Memcached refuses it.
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    Encoded out;
    if (!detail::perl_scalar_text(value, out.bytes)) {
      if (value.is_null()) {
        return CodecResult<Encoded>(CodecErrc::kNotEncodable,
                                    "cache-memcached: undef cannot be stored");
      }
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
                                return static_cast<double>(gzipped) <
                                       static_cast<double>(payload) *
                                           (1.0 - options_.compress_savings);
                              });
    }
    return out;
  }

  /// decode: a scalar's text as a string, a Storable image as what it holds.
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    std::string inflated;
    if (auto item =
            detail::read_perl_item("cache-memcached", bytes, flags, options_.limits, inflated)) {
      return *std::move(item);
    }
    return Value(std::string(bytes));
  }

 private:
  CacheMemcachedOptions options_;
};

static_assert(Codec<CacheMemcachedCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_CACHE_MEMCACHED_CODEC_HPP_
