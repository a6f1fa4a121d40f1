// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_ALLOCATION_METER_HPP_
#define MEMSHARD_TESTS_SUPPORT_ALLOCATION_METER_HPP_

// support/allocation_meter.hpp: what the code under test allocates, as the
// replacements of the global operator new and delete count it (defined in
// support/allocation_meter.cpp, which a test program that includes this header
// links once): the largest single allocation (what a false length in a stream
// makes a decoder claim), and the bytes allocated while counting is on (the
// "without allocating" checks).

#include <atomic>
#include <cstddef>

namespace memshard::testing {

/// largest_allocation: the largest single allocation through operator new
/// since it was last set to 0.
inline std::atomic<std::size_t> largest_allocation{0};

/// counting_allocations: while set, every allocation adds its size to
/// allocated_bytes.
inline std::atomic<bool> counting_allocations{false};
inline std::atomic<std::size_t> allocated_bytes{0};

/// note_allocation: records one allocation of `size` bytes.
inline void note_allocation(std::size_t size) noexcept {
  std::size_t seen = largest_allocation.load(std::memory_order_relaxed);
  while (size > seen && !largest_allocation.compare_exchange_weak(seen, size)) {
  }
  if (counting_allocations.load(std::memory_order_relaxed)) {
    allocated_bytes.fetch_add(size, std::memory_order_relaxed);
  }
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_ALLOCATION_METER_HPP_
