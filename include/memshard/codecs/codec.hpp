// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_CODEC_HPP_
#define MEMSHARD_CODECS_CODEC_HPP_

// codecs/codec.hpp: the Codec concept and Encoded, an item's flags and bytes.
//
// A codec is one peer client's way of storing values: it encodes a Value into
// the flags and bytes that client would store, and decodes an item that client
// stored back into a Value. It is chosen per peer (per client or per call),
// never guessed from the bytes: one flag value means different things to
// different clients (0x1 is a PHP long to php-memcached, a serialize() to pecl
// memcache, a pickle to python-memcache, a Marshal blob to Dalli).

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// Encoded: what is stored for one value: the flags and the bytes.
struct Encoded {
  std::string bytes;
  std::uint32_t flags = 0;

  friend auto operator==(const Encoded&, const Encoded&) -> bool = default;
};

/// Codec: a type with
///   name()                 the codec's name ("php-memcached"), as memshard-get lists it;
///   encode(value)          CodecResult<Encoded>: the item the peer would store;
///   decode(bytes, flags)   CodecResult<Value>: what the peer's item means.
/// decode keeps to the codec's DecodeLimits and never throws for bad bytes.
template <class C>
concept Codec = requires(const C& codec, const Value& value, std::string_view bytes,
                         std::uint32_t flags) {
  { codec.name() } -> std::convertible_to<std::string_view>;
  { codec.encode(value) } -> std::same_as<CodecResult<Encoded>>;
  { codec.decode(bytes, flags) } -> std::same_as<CodecResult<Value>>;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_CODEC_HPP_
