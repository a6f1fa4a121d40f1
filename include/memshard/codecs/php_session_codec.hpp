// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PHP_SESSION_CODEC_HPP_
#define MEMSHARD_CODECS_PHP_SESSION_CODEC_HPP_

// codecs/php_session_codec.hpp: PhpSessionCodec, the items php-memcached's
// session handler (session.save_handler = memcached) keeps: PHP's session
// data in the "php" serialize handler's format (`user_id|i:42;name|s:3:"Ada";`,
// session.serialize_handler's default), stored as it is with flags 0.
//
// A session reads as a map of variable names to values (php_session_decode:
// an empty item is an empty map; a session holding an object reads as
// Value::serialized("php-session", bytes), which encodes back unchanged), and
// a map of names to values is written as PHP writes it (php_session_encode).
// The flags are not looked at: the handler writes 0 and never reads them.
//
// Where the sessions are (the key prefix "memc.sess.key.", the placement and
// the lock PHP takes while a request runs): docs/codecs.md, "PHP sessions", and
// examples/php_session.cpp.
//
// **Example**:
//   const PhpSessionCodec session;
//   auto login = client.get_value("memc.sess.key." + id, session);

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/php_serialize.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// PhpSessionOptions: the bounds of decoding.
struct PhpSessionOptions {
  DecodeLimits limits;
};

/// PhpSessionCodec: PHP session data as php-memcached's session handler
/// stores it (a Codec).
class PhpSessionCodec {
 public:
  PhpSessionCodec() = default;
  explicit PhpSessionCodec(PhpSessionOptions options) : options_(std::move(options)) {}

  [[nodiscard]] static constexpr auto name() noexcept -> std::string_view { return "php-session"; }
  [[nodiscard]] auto options() const noexcept -> const PhpSessionOptions& { return options_; }

  /// encode: a map of session variables (or a Value::serialized
  /// "php-session" read earlier) with flags 0; kNotEncodable for anything
  /// php_session_encode refuses.
  [[nodiscard]] static auto encode(const Value& value) -> CodecResult<Encoded> {
    CodecResult<std::string> data = php_session_encode(value);
    if (!data) {
      return data.error();
    }
    return Encoded{std::move(data).value(), 0};
  }

  /// decode: the session's variables, whatever the flags.
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t /*flags*/) const
      -> CodecResult<Value> {
    return php_session_decode(bytes, options_.limits);
  }

 private:
  PhpSessionOptions options_;
};

static_assert(Codec<PhpSessionCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PHP_SESSION_CODEC_HPP_
