// SPDX-License-Identifier: MIT
// A user of memshard's client, built by CMake (tests/package/consumer) and without it:
//   c++ -std=c++20 client.cpp $(pkg-config --cflags --libs memshard)
// It constructs a ShardedClient (no server is contacted) and prints where a key goes. The
// multi-get, which sets libmemcached's hash through libhashkit, is compiled and linked but runs
// only when keys are given on the command line (the tests give none).
// MEMSHARD_CONSUMER_COMPILED says that the build links the compiled mode (memshard::compiled,
// memshard-compiled.pc), which must define MEMSHARD_COMPILED_LIB; the header-only mode must
// not. check_symbols.cmake then checks that this unit compiled no client of its own.
#if defined(MEMSHARD_CONSUMER_COMPILED) && !defined(MEMSHARD_COMPILED_LIB)
#error "the compiled mode does not define MEMSHARD_COMPILED_LIB"
#elif !defined(MEMSHARD_CONSUMER_COMPILED) && defined(MEMSHARD_COMPILED_LIB)
#error "the header-only mode defines MEMSHARD_COMPILED_LIB"
#endif

#include <cstdio>
#include <memshard/memshard.hpp>
#include <string_view>

auto main(int argc, char** argv) -> int {
  auto client = memshard::make_client("libmemcached-ketama-weighted",
                                      memshard::parse_servers("10.0.0.1:11211,10.0.0.3:11211"));
  std::printf("user:42 -> %s\n", client.server_for("user:42").endpoint().c_str());
  for (int i = 1; i < argc; ++i) {
    const std::string_view key = argv[i];
    const auto got = client.get_multi({key});
    std::printf("%s: %zu hits, %zu failures\n", argv[i], got.hits(), got.failures());
  }
  return 0;
}
