// SPDX-License-Identifier: MIT
// A user of memshard's fleet: it reads a store URL and asks an etcd where nothing listens,
// which must fail cleanly within the deadline (the consumer needs no etcd to run).

#include <chrono>
#include <cstdio>
#include <memshard/fleet.hpp>

auto main() -> int {
  memshard::EtcdOptions options;
  options.request_timeout = std::chrono::milliseconds{300};
  options.connect_timeout = std::chrono::milliseconds{100};
  memshard::EtcdClient etcd("etcd://127.0.0.1:1", options);
  const auto got = etcd.get("memshard/consumer");
  if (got.ok() || got.code() != memshard::StoreErrc::kUnreachable) {
    std::printf("expected unreachable, got %s\n", got.status().message().c_str());
    return 1;
  }
  std::printf("memshard fleet consumer: %s\n", got.status().message().c_str());
  return 0;
}
