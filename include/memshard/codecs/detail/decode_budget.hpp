// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_DECODE_BUDGET_HPP_
#define MEMSHARD_CODECS_DETAIL_DECODE_BUDGET_HPP_

// codecs/detail/decode_budget.hpp: DecodeBudget, the memory a decoder may
// still give the Value tree it builds (DecodeLimits::max_decoded_bytes).
//
// A tree costs sizeof(Value) for each Value (a map entry is two) plus the
// bytes of every string it holds. A decoder takes from the budget before it
// allocates: a container's slots when its header announces their count,
// before reserving them (a 5-byte header claiming 4 billion items is refused
// at once); a string's bytes before copying them. A decoder that learns a
// container's size only as it reads takes each slot as it adds it. Whatever
// the input, the tree a decode builds stays within the budget, and so does
// the time spent building it.

#include <cstddef>
#include <string>
#include <string_view>

#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// DecodeBudget: bytes of decoded tree left to give; taken, never given back.
class DecodeBudget {
 public:
  explicit DecodeBudget(std::size_t bytes) noexcept : limit_(bytes), left_(bytes) {}

  /// take: takes `count` times `size` bytes and returns true when they fit
  /// in what is left; else takes nothing and returns false (no overflow:
  /// any count is checked).
  [[nodiscard]] auto take(std::size_t count, std::size_t size = 1) noexcept -> bool {
    if (size != 0 && count > left_ / size) {
      return false;
    }
    left_ -= count * size;
    return true;
  }
  /// take_values: take(count, sizeof(Value)), the slots of a list.
  [[nodiscard]] auto take_values(std::size_t count) noexcept -> bool {
    return take(count, sizeof(Value));
  }
  /// take_entries: take(count, sizeof(Value::Entry)), the slots of a map.
  [[nodiscard]] auto take_entries(std::size_t count) noexcept -> bool {
    return take(count, sizeof(Value::Entry));
  }

  [[nodiscard]] auto limit() const noexcept -> std::size_t { return limit_; }
  [[nodiscard]] auto left() const noexcept -> std::size_t { return left_; }

  /// exceeded: the message of the kTooLarge error when `what` did not fit:
  /// "<what> would take the decoded value past max_decoded_bytes <limit>".
  [[nodiscard]] auto exceeded(std::string_view what) const -> std::string {
    return std::string(what) + " would take the decoded value past max_decoded_bytes " +
           std::to_string(limit_);
  }

 private:
  std::size_t limit_;
  std::size_t left_;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_DECODE_BUDGET_HPP_
