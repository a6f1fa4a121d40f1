// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PLAIN_CODEC_HPP_
#define MEMSHARD_CODECS_PLAIN_CODEC_HPP_

// codecs/plain_codec.hpp: PlainCodec, bytes as they are: what libmemcached,
// gomemcache and any client that applies no codec store, and what every other
// client reads as a plain string (flags 0).
//
// Decoding gives a string when the bytes are UTF-8 and bytes otherwise (the
// flags are not looked at: they are the application's); encoding takes a
// string or bytes and stores them with the configured flags.

#include <cstdint>
#include <string>
#include <string_view>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/utf8.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// PlainOptions: the flags written with every item.
struct PlainOptions {
  std::uint32_t flags = 0;
};

/// PlainCodec: bytes as they are (a Codec).
class PlainCodec {
 public:
  PlainCodec() = default;
  explicit PlainCodec(PlainOptions options) : options_(options) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "plain"; }
  [[nodiscard]] auto options() const noexcept -> const PlainOptions& { return options_; }

  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    if (!value.is_string() && !value.is_bytes()) {
      return CodecResult<Encoded>(CodecErrc::kNotEncodable,
                                  "plain: only a string or bytes is stored as it is, not a " +
                                      std::string(to_string(value.kind())));
    }
    return Encoded{value.as_string(), options_.flags};
  }

  [[nodiscard]] static auto decode(std::string_view bytes, std::uint32_t /*flags*/)
      -> CodecResult<Value> {
    return detail::is_utf8(bytes) ? Value(std::string(bytes)) : Value::bytes(std::string(bytes));
  }

 private:
  PlainOptions options_;
};

static_assert(Codec<PlainCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PLAIN_CODEC_HPP_
