// SPDX-License-Identifier: MIT
// support/allocation_meter.cpp: the global operator new and delete of a test
// program that measures its allocations (support/allocation_meter.hpp): every
// allocation is noted, then served by malloc. Linked once into such a program.

#include "support/allocation_meter.hpp"

#include <cstddef>
#include <cstdlib>
#include <new>

// Not inlined, so that the compiler does not pair a new-expression with the
// free() inside (GCC's -Wmismatched-new-delete).
[[gnu::noinline]] auto operator new(std::size_t size) -> void* {
  memshard::testing::note_allocation(size);
  if (void* memory = std::malloc(size == 0 ? 1 : size)) {
    return memory;
  }
  throw std::bad_alloc();
}
[[gnu::noinline]] auto operator new[](std::size_t size) -> void* { return operator new(size); }
[[gnu::noinline]] void operator delete(void* memory) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete[](void* memory) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete(void* memory, std::size_t /*size*/) noexcept {
  std::free(memory);
}
[[gnu::noinline]] void operator delete[](void* memory, std::size_t /*size*/) noexcept {
  std::free(memory);
}
