// SPDX-License-Identifier: MIT
// quick_start.cpp: memshard's client on a real fleet. Keys are placed exactly as libmemcached
// KETAMA_WEIGHTED (PHP OPT_LIBKETAMA_COMPATIBLE, pylibmc ketama_weighted) places them, so this
// program and those clients find every key on the same server.
//
//   memshard-quick-start 127.0.0.1:11211 127.0.0.1:11212   # default: 127.0.0.1:11211
//
// Prints one line per key read: `key -> server "value"`, or `key -> server (miss)`; failures go
// to stderr as `key: status`. Exits 1 if any operation failed, 2 for a bad server list.

#include <array>
#include <iostream>
#include <memshard/memshard.hpp>
#include <string>
#include <string_view>

auto main(int argc, char** argv) -> int try {
  std::string list = argc > 1 ? "" : "127.0.0.1:11211";
  for (int i = 1; i < argc; ++i) {
    list.append(argv[i]).append(" ");  // host:port[:weight[:name]]
  }
  const auto servers = memshard::parse_servers(list);
  auto client = memshard::make_client("libmemcached-ketama-weighted", servers);

  int failures = 0;
  auto report = [&failures](std::string_view key, const memshard::Status& status) {
    // e.g. "user:42: connection_failure: set on 127.0.0.1:11211: ..."
    std::cerr << key << ": " << status << '\n';
    ++failures;
  };
  auto show = [&](std::string_view key) {
    const auto got = client.get(key);  // Result<std::optional<Item>>
    if (!got) {
      return report(key, got.status());
    }
    std::cout << key << " -> " << client.server_for(key).endpoint() << ' '
              << (got.value() ? '"' + got.value()->value + '"' : "(miss)") << '\n';
  };

  const std::array<std::string_view, 4> keys = {"user:42", "session:7f3a", "cart:1001",
                                                "feed:home"};
  for (const std::string_view key : keys) {
    if (auto stored = client.set(key, "hello from " + std::string(key)); !stored) {
      report(key, stored);
    }
  }
  for (const std::string_view key : keys) {
    show(key);
  }
  show("no-such-key");  // a miss is an empty optional, not an error
  return failures == 0 ? 0 : 1;
} catch (const memshard::ConfigError& error) {
  std::cerr << error.what() << '\n';
  return 2;
}
