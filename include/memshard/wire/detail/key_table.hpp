// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_DETAIL_KEY_TABLE_HPP_
#define MEMSHARD_WIRE_DETAIL_KEY_TABLE_HPP_

// wire/detail/key_table.hpp: KeyTable, the positions of a request's keys by key,
// for matching the replies of a multi-get that arrive from many servers in
// any interleaving.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "memshard/detail/compiled.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// KeyTable: an open-addressing table from key to position in a request. A
/// key listed twice has two entries, found in insertion order. The caller
/// keeps the keys; the table keeps only positions.
class KeyTable {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  /// reset: empties the table and sizes it for `count` keys (load <= 1/2).
  void reset(std::size_t count);

  /// insert: records `position` for `key`.
  void insert(std::string_view key, std::uint32_t position);

  /// find: the first position recorded for `key`'s hash for which
  /// `take(position)` is true (take compares the key itself), or kNone.
  template <class Take>
  [[nodiscard]] auto find(std::string_view key, Take&& take) const -> std::size_t {
    for (std::size_t at = hash(key) & mask_; slots_[at] != 0; at = (at + 1) & mask_) {
      const std::size_t position = slots_[at] - 1;
      if (take(position)) {
        return position;
      }
    }
    return kNone;
  }

  /// hash: 64 bits of `key`, eight bytes at a time (not for adversaries: the
  /// keys are the caller's own).
  [[nodiscard]] static auto hash(std::string_view key) noexcept -> std::uint64_t;

 private:
  std::vector<std::uint32_t> slots_;  // position + 1; 0 is empty
  std::size_t mask_ = 0;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE void KeyTable::reset(std::size_t count) {
  std::size_t size = 16;
  while (size < 2 * count) {
    size *= 2;
  }
  slots_.assign(size, 0);
  mask_ = size - 1;
}

MEMSHARD_DETAIL_INLINE void KeyTable::insert(std::string_view key, std::uint32_t position) {
  std::size_t at = hash(key) & mask_;
  while (slots_[at] != 0) {
    at = (at + 1) & mask_;
  }
  slots_[at] = position + 1;
}

MEMSHARD_DETAIL_INLINE auto KeyTable::hash(std::string_view key) noexcept -> std::uint64_t {
  std::uint64_t h = key.size() * 0x9e3779b97f4a7c15ULL;
  std::size_t at = 0;
  for (; at + 8 <= key.size(); at += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, key.data() + at, 8);
    h = (h ^ word) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  }
  std::uint64_t tail = 0;
  if (at < key.size()) {
    std::memcpy(&tail, key.data() + at, key.size() - at);
  }
  h = (h ^ tail) * 0x94d049bb133111ebULL;
  return h ^ (h >> 29);
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_DETAIL_KEY_TABLE_HPP_
