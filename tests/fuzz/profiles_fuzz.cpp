// SPDX-License-Identifier: MIT
// libFuzzer target for the profile registry (placement/profiles/registry.hpp,
// profiles.hpp): a profile of kProfiles and its options (hash, points,
// weighted, hash tag) chosen by the input, built by make_locator for a fuzzed
// server list (a refusal must be a ConfigError), then fuzzed keys located:
// every index in range and two builds agree. A libmemcached profile with
// libmemcached's own options is also built in an in-process memcached_st,
// configured as tests/profiles_libmemcached_test.cpp does, and must name the
// server memcached_generate_hash names for every valid key (at most 100
// servers: libmemcached's ceiling). Run by CTest for a bounded time
// (tests/fuzz/CMakeLists.txt).

#include <fuzzer/FuzzedDataProvider.h>
#include <libmemcached-1.0/memcached.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "memshard/errors.hpp"
#include "memshard/placement/key.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/profiles/registry.hpp"
#include "memshard/placement/server.hpp"

namespace {

using memshard::AnyLocator;
using memshard::ProfileInfo;
using memshard::ProfileOptions;
using memshard::Server;
using memshard::fuzz::check;

struct MemcachedFree {
  void operator()(memcached_st* memc) const noexcept { memcached_free(memc); }
};
using Memcached = std::unique_ptr<memcached_st, MemcachedFree>;

// How libmemcached is configured for a profile that reproduces it.
enum class Oracle : std::uint8_t { kNone, kModula, kKetama, kKetamaWeighted, kKetamaSpy };

auto oracle_of(std::string_view profile) -> Oracle {
  if (profile == "libmemcached-modula" || profile == "php-memcached") {
    return Oracle::kModula;
  }
  if (profile == "libmemcached-ketama" || profile == "php-memcached-consistent") {
    return Oracle::kKetama;
  }
  if (profile == "libmemcached-ketama-weighted" || profile == "php-memcached-libketama") {
    return Oracle::kKetamaWeighted;
  }
  if (profile == "libmemcached-ketama-spy") {
    return Oracle::kKetamaSpy;
  }
  return Oracle::kNone;
}

struct HashName {
  std::string_view memshard;
  memcached_hash_t libmemcached;
};
constexpr HashName kHashes[] = {
    {"one_at_a_time", MEMCACHED_HASH_DEFAULT},
    {"default", MEMCACHED_HASH_DEFAULT},
    {"md5", MEMCACHED_HASH_MD5},
    {"crc", MEMCACHED_HASH_CRC},
    {"fnv1_64", MEMCACHED_HASH_FNV1_64},
    {"fnv1a_64", MEMCACHED_HASH_FNV1A_64},
    {"fnv1_32", MEMCACHED_HASH_FNV1_32},
    {"fnv1a_32", MEMCACHED_HASH_FNV1A_32},
    {"murmur", MEMCACHED_HASH_MURMUR},
};

// The libmemcached hash of memshard's `name`; nothing for "" (the profile's
// default) and for names libmemcached lacks.
auto libmemcached_hash(std::string_view name) -> std::optional<memcached_hash_t> {
  for (const HashName& hash : kHashes) {
    if (hash.memshard == name) {
      return hash.libmemcached;
    }
  }
  return std::nullopt;
}

auto make_oracle(Oracle oracle, std::optional<memcached_hash_t> hash,
                 const std::vector<Server>& servers) -> Memcached {
  Memcached memc(memcached(nullptr, 0));
  check(memc != nullptr);
  switch (oracle) {
    case Oracle::kModula:
      memcached_behavior_set_distribution(memc.get(), MEMCACHED_DISTRIBUTION_MODULA);
      break;
    case Oracle::kKetama:
      memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_KETAMA, 1);
      break;
    case Oracle::kKetamaWeighted:
      memcached_behavior_set(memc.get(), MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
      break;
    case Oracle::kKetamaSpy:
      memcached_behavior_set_distribution(memc.get(), MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY);
      break;
    case Oracle::kNone:
      break;
  }
  if (hash) {
    memcached_behavior_set_key_hash(memc.get(), *hash);
  }
  for (const Server& server : servers) {
    const memcached_return_t rc = memcached_server_add_with_weight(
        memc.get(), server.host.c_str(), server.port, static_cast<std::uint32_t>(server.weight));
    check(!memcached_failed(rc));
  }
  return memc;
}

auto build(std::string_view name, const std::vector<Server>& servers, const ProfileOptions& options)
    -> std::optional<AnyLocator> {
  try {
    return memshard::make_locator(name, servers, options);
  } catch (const memshard::ConfigError&) {
    return std::nullopt;  // refused, as it may be; any other exception is a crash
  }
}

}  // namespace

extern "C" auto LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) -> int {
  FuzzedDataProvider input(data, size);
  const ProfileInfo& profile = memshard::kProfiles[input.ConsumeIntegralInRange<std::size_t>(
      0, memshard::kProfiles.size() - 1)];
  ProfileOptions options;
  // Mostly options the profile takes; now and then one it must refuse.
  const bool any_option = input.ConsumeIntegralInRange<int>(0, 15) == 0;
  if ((any_option || !profile.hashes.empty()) && input.ConsumeBool()) {
    if (profile.hashes.empty() || input.ConsumeIntegralInRange<int>(0, 7) == 0) {
      options.hash = input.ConsumeRandomLengthString(16);
    } else {
      options.hash =
          profile.hashes[input.ConsumeIntegralInRange<std::size_t>(0, profile.hashes.size() - 1)]
              .name;
    }
  }
  if ((any_option || profile.has_points) && input.ConsumeIntegralInRange<int>(0, 3) == 0) {
    options.points = input.ConsumeIntegralInRange<std::size_t>(1, 400);
  }
  if ((any_option || profile.has_weighted) && input.ConsumeBool()) {
    options.weighted = input.ConsumeBool();
  }
  if ((any_option || profile.has_hash_tag) && input.ConsumeBool()) {
    options.hash_tag = input.ConsumeRandomLengthString(3);
  }
  const Oracle oracle = options.points == 0 && options.hash_tag.empty() &&
                                (options.hash.empty() || libmemcached_hash(options.hash))
                            ? oracle_of(profile.name)
                            : Oracle::kNone;
  memshard::fuzz::FleetLimits limits;
  if (oracle != Oracle::kNone) {
    limits.max_servers = 100;  // libmemcached asserts on more in its consistent rings
    limits.whole_weights = true;
    limits.safe_hosts = true;
  } else {
    limits.max_servers = 300;
    limits.max_weight = 4;  // rings whose point counts scale with the weight stay small
    limits.whole_weights = input.ConsumeBool();
  }
  const std::vector<Server> servers = memshard::fuzz::fuzzed_fleet(input, limits);
  std::vector<std::string> keys = memshard::fuzz::fuzzed_keys(input, 32);
  for (int i = 0; i < 64; ++i) {  // and plain keys, so that a small difference shows
    keys.push_back("key:" + std::to_string(i));
  }

  const std::optional<AnyLocator> locator = build(profile.name, servers, options);
  if (!locator) {
    return 0;
  }
  const std::optional<AnyLocator> again = build(profile.name, servers, options);
  check(again.has_value());
  check(locator->size() == servers.size() && again->size() == servers.size());
  std::vector<std::size_t> where;
  for (const std::string& key : keys) {
    const std::size_t index = locator->locate(key);
    check(index < servers.size());
    check(again->locate(key) == index);
    where.push_back(index);
  }
  if (oracle == Oracle::kNone) {
    return 0;
  }
  const Memcached memc = make_oracle(oracle, libmemcached_hash(options.hash), servers);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (memshard::is_valid_key(keys[k])) {
      check(memcached_generate_hash(memc.get(), keys[k].data(), keys[k].size()) == where[k]);
    }
  }
  return 0;
}
