// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_CODEC_RESULT_HPP_
#define MEMSHARD_CODECS_CODEC_RESULT_HPP_

// codecs/codec_result.hpp: what a codec answers: CodecResult<T>, a value or
// the CodecError saying what was found instead, and DecodeLimits, the bounds
// every decoder keeps to whatever the bytes claim.
//
// Decoding never throws for bad bytes: a truncated stream, a length that
// disagrees, a type a codec does not know, a nesting too deep are errors as
// values, named by CodecErrc, with a message saying what was found.

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// CodecErrc: why a codec gave no value.
enum class CodecErrc : std::uint8_t {
  kUnknownFlags,  ///< the flags name a type or compression this codec does not know
  kCorrupt,       ///< the bytes break their format (truncated, bad checksum, wrong length)
  kUnsupported,   ///< a well-formed construct memshard does not decode (an object, a GLOBAL)
  kTooLarge,      ///< over DecodeLimits::max_size or max_decoded_bytes, or a number out of range
  kTooDeep,       ///< nested deeper than DecodeLimits::max_depth
  kNotEncodable,  ///< encode: the peer has no form for this value
};

[[nodiscard]] constexpr auto to_string(CodecErrc code) noexcept -> std::string_view {
  constexpr std::string_view kNames[] = {"unknown_flags", "corrupt",  "unsupported",
                                         "too_large",     "too_deep", "not_encodable"};
  return kNames[static_cast<std::size_t>(code)];
}

/// CodecError: a CodecErrc and what was found ("php-memcached: type 9 in flags
/// 0x9 is unknown").
class CodecError {
 public:
  CodecError(CodecErrc code, std::string message) : code_(code), message_(std::move(message)) {}

  [[nodiscard]] auto code() const noexcept -> CodecErrc { return code_; }
  [[nodiscard]] auto message() const noexcept -> const std::string& { return message_; }

 private:
  CodecErrc code_;
  std::string message_;
};

inline auto operator<<(std::ostream& out, const CodecError& error) -> std::ostream& {
  return out << to_string(error.code()) << ": " << error.message();
}

/// BadCodecAccess: CodecResult::value() of an error.
class BadCodecAccess : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// CodecResult: a T, or the CodecError saying why there is none.
///
/// **Example**:
///   auto decoded = codec.decode(item.value, item.flags);
///   if (!decoded) log(decoded.error().message());
///   else use(*decoded);
template <class T>
class [[nodiscard]] CodecResult {
 public:
  CodecResult(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  CodecResult(CodecError error)  // NOLINT(google-explicit-constructor)
      : state_(std::in_place_index<1>, std::move(error)) {}
  CodecResult(CodecErrc code, std::string message)
      : state_(std::in_place_index<1>, code, std::move(message)) {}

  [[nodiscard]] auto ok() const noexcept -> bool { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  /// value: the value; BadCodecAccess when there is none.
  [[nodiscard]] auto value() const& -> const T& {
    check();
    return std::get<0>(state_);
  }
  [[nodiscard]] auto value() & -> T& {
    check();
    return std::get<0>(state_);
  }
  [[nodiscard]] auto value() && -> T {
    check();
    return std::move(std::get<0>(state_));
  }
  [[nodiscard]] auto operator*() const& -> const T& { return value(); }
  [[nodiscard]] auto operator*() & -> T& { return value(); }
  [[nodiscard]] auto operator*() && -> T { return std::move(*this).value(); }
  [[nodiscard]] auto operator->() const -> const T* { return &value(); }
  [[nodiscard]] auto operator->() -> T* { return &value(); }

  /// error: why there is no value; BadCodecAccess when there is one.
  [[nodiscard]] auto error() const -> const CodecError& {
    if (ok()) {
      throw BadCodecAccess("memshard: error() of a codec result that holds a value");
    }
    return std::get<1>(state_);
  }
  [[nodiscard]] auto code() const -> CodecErrc { return error().code(); }

 private:
  void check() const {
    if (!ok()) {
      const CodecError& failure = std::get<1>(state_);
      throw BadCodecAccess("memshard: value() of a failed codec result: " +
                           std::string(to_string(failure.code())) + ": " + failure.message());
    }
  }

  std::variant<T, CodecError> state_;
};

/// DecodeLimits: what a decoder allows, whatever the bytes claim. Memory stays
/// bounded: no decoder produces more than `max_size` bytes of decompressed
/// data or a string longer than that, builds a Value tree taking more than
/// `max_decoded_bytes` of memory, reserves room for more elements than the
/// bytes left can hold, or recurses deeper than `max_depth`.
struct DecodeLimits {
  /// max_size: the largest decompressed payload and the largest string
  /// (memcached's own item limit is 1 MiB by default, 1 GiB at most).
  std::size_t max_size = std::size_t{64} << 20U;
  /// max_depth: the deepest nesting of lists and maps.
  std::size_t max_depth = 256;
  /// max_decoded_bytes: the most memory a decoded tree may take: sizeof(Value)
  /// for each Value (two for a map entry) plus the bytes of its strings,
  /// counted as the decoder reads and checked before it allocates (a header
  /// announcing n elements is refused when n Values do not fit). A small
  /// item can announce millions of elements, each a Value (80 bytes with
  /// libstdc++ on 64 bits): this bounds the tree, as max_size the bytes.
  std::size_t max_decoded_bytes = std::size_t{64} << 20U;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_CODEC_RESULT_HPP_
