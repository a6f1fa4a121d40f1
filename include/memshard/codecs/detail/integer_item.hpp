// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_INTEGER_ITEM_HPP_
#define MEMSHARD_CODECS_DETAIL_INTEGER_ITEM_HPP_

// codecs/detail/integer_item.hpp: integer_item, what the codecs whose clients
// store an integer as its decimal text (pecl memcache, php-memcached,
// python-memcache, pylibmc, pymemcache) read from such an item: the integer,
// or kTooLarge for one beyond 64 bits, which the peers with big integers write.

#include <optional>
#include <string>
#include <string_view>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/float_text.hpp"
#include "memshard/codecs/detail/quote.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// integer_item: the Value of an item whose bytes are an integer's decimal
/// text (parse_integer_text), or kTooLarge "<what> out of range of 64 bits:
/// <bytes>" for an integer beyond 64 bits (`what` names the codec and the
/// item: "pylibmc: an int"); nullopt for text that is no integer, which each
/// codec reports as kCorrupt in its own words.
[[nodiscard]] inline auto integer_item(std::string_view bytes, std::string_view what)
    -> std::optional<CodecResult<Value>> {
  if (const auto number = parse_integer_text(bytes)) {
    return CodecResult<Value>(Value(*number));
  }
  if (is_big_integer_text(bytes)) {
    return CodecResult<Value>(
        CodecErrc::kTooLarge,
        std::string(what) + " out of range of 64 bits: " + quote_bytes(bytes));
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_INTEGER_ITEM_HPP_
