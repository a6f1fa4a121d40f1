// SPDX-License-Identifier: MIT
// libmemcached.cpp: the same set and get with libmemcached alone (KETAMA
// weighted over the same two servers), for context: no target.

#include <libmemcached-1.0/memcached.h>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace {
struct MemcachedDeleter {
  void operator()(memcached_st* memc) const noexcept { memcached_free(memc); }
};
struct FreeDeleter {
  void operator()(char* value) const noexcept { std::free(value); }  // NOLINT(*-no-malloc)
};
}  // namespace

auto main() -> int {
  constexpr std::string_view kConfig =
      "--SERVER=127.0.0.1:11211 --SERVER=127.0.0.1:11212 --KETAMA-WEIGHTED";
  const std::unique_ptr<memcached_st, MemcachedDeleter> memc(
      memcached(kConfig.data(), kConfig.size()));
  if (!memc) {
    return 1;
  }
  constexpr std::string_view kKey = "greeting";
  constexpr std::string_view kValue = "hello";
  const memcached_return_t stored =
      memcached_set(memc.get(), kKey.data(), kKey.size(), kValue.data(), kValue.size(), 0, 0);
  std::size_t length = 0;
  std::uint32_t flags = 0;
  memcached_return_t rc = MEMCACHED_SUCCESS;
  const std::unique_ptr<char, FreeDeleter> value(
      memcached_get(memc.get(), kKey.data(), kKey.size(), &length, &flags, &rc));
  return memcached_success(stored) && value ? 0 : 1;
}
