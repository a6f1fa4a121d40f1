// SPDX-License-Identifier: MIT
// libFuzzer target for the locators (modulo_locator.hpp, ketama_locator.hpp,
// continuum_locators.hpp, rendezvous_locator.hpp, any_locator.hpp): one
// locator, its hasher and its options chosen by the input, built for 1 to 2000
// fuzzed servers (a refusal must be a ConfigError), then fuzzed keys located:
// every index in range, two builds agree, locate_many and the AnyLocator and
// HashTagLocator wrappers agree with locate, locate_avoiding keeps the keys of
// servers not avoided and never names an avoided server instead; and where a
// locator documents it (ketama rings whose point counts do not depend on the
// other servers, rendezvous), removing a server moves only its own keys. Run
// by CTest for a bounded time (tests/fuzz/CMakeLists.txt).

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "memshard/errors.hpp"
#include "memshard/placement/hash/hashers.hpp"
#include "memshard/placement/locators/any_locator.hpp"
#include "memshard/placement/locators/continuum_locators.hpp"
#include "memshard/placement/locators/hash_tag.hpp"
#include "memshard/placement/locators/ketama_locator.hpp"
#include "memshard/placement/locators/locator.hpp"
#include "memshard/placement/locators/modulo_locator.hpp"
#include "memshard/placement/locators/rendezvous_locator.hpp"
#include "memshard/placement/server.hpp"

namespace {

using memshard::KetamaOptions;
using memshard::Server;
using memshard::fuzz::check;

enum class Kind : std::uint8_t {
  kModulo,
  kModuloWeighted,
  kModuloBuckets,
  kKetama,
  kCompatContinuum,
  kBucketedRing,
  kRendezvous,
  kLast = kRendezvous,
};

// What one input asks for, besides the locator's own options.
struct Case {
  std::vector<Server> servers;
  std::vector<std::string> keys;
  std::vector<std::uint8_t> avoid;
  std::size_t removed = 0;  // the server a removal check takes away
};

// Builds a locator with `make` for `servers`, or nothing when it refuses them.
template <class Make>
auto try_build(const Make& make, std::span<const Server> servers)
    -> std::optional<decltype(make(servers))> {
  try {
    return make(servers);
  } catch (const memshard::ConfigError&) {
    return std::nullopt;  // refused, as it may be; any other exception is a crash
  }
}

template <class L>
void check_ring(const L& locator) {
  if constexpr (requires { locator.points(); }) {
    const auto points = locator.points();
    check(!points.empty());
    for (std::size_t i = 0; i < points.size(); ++i) {
      check(points[i].server < locator.size());
      check(i == 0 || points[i - 1].value < points[i].value);
    }
  }
}

// Every check of one locator; `keeps_others`: removing a server moves only
// the keys it owned.
template <class Make>
void check_locator(const Make& make, const Case& c, bool keeps_others) {
  const auto built = try_build(make, c.servers);
  if (!built) {
    return;
  }
  const auto& locator = *built;
  using L = std::remove_cvref_t<decltype(locator)>;
  static_assert(memshard::Locator<L>);
  const std::vector<Server> copy = c.servers;
  const L again = make(copy);  // accepted once: accepted again
  const std::size_t n = c.servers.size();
  check(locator.size() == n && again.size() == n);
  check_ring(locator);
  const memshard::AnyLocator any(locator, "fuzz");
  const memshard::HashTagLocator<L> tagged(locator, memshard::HashTag{'{', '}'});
  std::vector<std::size_t> where(c.keys.size());
  for (std::size_t k = 0; k < c.keys.size(); ++k) {
    const std::string_view key = c.keys[k];
    const std::size_t index = locator.locate(key);
    where[k] = index;
    check(index < n);
    check(again.locate(key) == index);
    check(any.locate(key) == index);
    check(tagged.locate(key) == locator.locate(memshard::HashTag{'{', '}'}.apply(key)));
    if constexpr (memshard::FailoverLocator<L>) {
      const std::size_t avoiding = locator.locate_avoiding(key, c.avoid);
      check(avoiding < n);
      check(c.avoid[index] != 0 ? avoiding == index || c.avoid[avoiding] == 0 : avoiding == index);
      check(any.locate_avoiding(key, c.avoid) == avoiding);
    }
  }
  if constexpr (memshard::BatchLocator<L>) {
    std::vector<std::string_view> views(c.keys.begin(), c.keys.end());
    std::vector<std::size_t> many(views.size());
    locator.locate_many(views, many);
    check(many == where);
  }
  if (!keeps_others || n < 2) {
    return;
  }
  std::vector<Server> rest = c.servers;
  rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(c.removed));
  const auto smaller = try_build(make, rest);
  if (!smaller) {
    return;  // e.g. the servers left own no points
  }
  for (std::size_t k = 0; k < c.keys.size(); ++k) {
    if (where[k] == c.removed) {
      continue;
    }
    const std::size_t now = smaller->locate(c.keys[k]);
    check((now >= c.removed ? now + 1 : now) == where[k]);
  }
}

template <class E>
auto pick(FuzzedDataProvider& input, E last) -> E {
  return static_cast<E>(input.ConsumeIntegralInRange<int>(0, static_cast<int>(last)));
}

auto ketama_options(FuzzedDataProvider& input) -> KetamaOptions {
  KetamaOptions options;
  options.format = pick(input, memshard::PointFormat::kHostNulPortChained);
  options.point_hash = pick(input, memshard::PointHash::kCrc32);
  options.count = pick(input, memshard::PointCount::kScaledWeight);
  options.ties = pick(input, memshard::TieBreak::kNameOrder);
  options.search = pick(input, memshard::RingSearch::kLastAtOrBefore);
  options.points_per_server = input.ConsumeIntegralInRange<std::size_t>(1, 400);
  // Mostly a valid combination (the invalid ones are refused up front).
  if (input.ConsumeIntegralInRange<int>(0, 7) != 0) {
    if (options.point_hash == memshard::PointHash::kCrc32) {
      options.format = memshard::PointFormat::kHostNulPortChained;
    } else if (options.format == memshard::PointFormat::kHostNulPortChained) {
      options.format = memshard::PointFormat::kLibmemcached;
    }
    if (options.point_hash == memshard::PointHash::kMd5x4) {
      options.points_per_server = (options.points_per_server + 3) / 4 * 4;
      if (options.count == memshard::PointCount::kWeightedShare ||
          options.count == memshard::PointCount::kScaledWeight) {
        options.count = memshard::PointCount::kFixed;
      }
    }
  }
  return options;
}

}  // namespace

extern "C" auto LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) -> int {
  FuzzedDataProvider input(data, size);
  const Kind kind = pick(input, Kind::kLast);
  const std::string_view hash = memshard::kHashNames[input.ConsumeIntegralInRange<std::size_t>(
      0, memshard::kHashNames.size() - 1)];
  const KetamaOptions options = kind == Kind::kKetama ? ketama_options(input) : KetamaOptions{};
  const auto input_kind = pick(input, memshard::RendezvousInput::kPythonBytesRepr);
  memshard::fuzz::FleetLimits limits;
  // Point counts that scale with the weight: small weights, to bound the ring.
  if (kind == Kind::kBucketedRing || options.count == memshard::PointCount::kScaledWeight) {
    limits.max_weight = 4;
  }
  limits.whole_weights = input.ConsumeBool();
  Case c;
  c.servers = memshard::fuzz::fuzzed_fleet(input, limits);
  const std::size_t n = c.servers.size();
  KetamaOptions ring = options;
  ring.points_per_server = std::min(ring.points_per_server, std::max<std::size_t>(4, 40000 / n));
  if (ring.point_hash == memshard::PointHash::kMd5x4) {
    ring.points_per_server = ring.points_per_server / 4 * 4;
  }
  c.removed = input.ConsumeIntegralInRange<std::size_t>(0, n - 1);
  c.avoid.resize(n);
  for (std::uint8_t& flag : c.avoid) {
    flag = input.ConsumeBool() ? 1 : 0;
  }
  std::vector<std::uint32_t> buckets;
  if (kind == Kind::kModuloBuckets) {
    buckets.resize(input.ConsumeIntegralInRange<std::size_t>(0, 4096));
    for (std::uint32_t& bucket : buckets) {
      bucket = input.ConsumeIntegralInRange<std::uint32_t>(0, static_cast<std::uint32_t>(n));
    }
  }
  c.keys = memshard::fuzz::fuzzed_keys(input, 32);

  memshard::visit_hasher(hash, [&](auto hasher) {
    using H = decltype(hasher);
    using memshard::ModuloLocator;
    switch (kind) {
      case Kind::kModulo:
        check_locator([](std::span<const Server> s) { return ModuloLocator<H>(s); }, c, false);
        break;
      case Kind::kModuloWeighted:
        check_locator(
            [](std::span<const Server> s) { return ModuloLocator<H>(s, {.weighted = true}); }, c,
            false);
        break;
      case Kind::kModuloBuckets:
        check_locator(
            [&buckets](std::span<const Server> s) {
              return ModuloLocator<H>(s, memshard::ModuloBuckets{buckets});
            },
            c, false);
        break;
      case Kind::kKetama: {
        // Fixed counts, or counts from the server's own weight: the other
        // servers' points do not depend on the one removed.
        const bool keeps = ring.count == memshard::PointCount::kFixed ||
                           ring.count == memshard::PointCount::kScaledWeight;
        check_locator(
            [&ring](std::span<const Server> s) { return memshard::KetamaLocator<H>(s, ring); }, c,
            keeps);
        break;
      }
      case Kind::kCompatContinuum:
        check_locator(
            [](std::span<const Server> s) { return memshard::CompatContinuumLocator<H>(s); }, c,
            false);
        break;
      case Kind::kBucketedRing:
        check_locator([](std::span<const Server> s) { return memshard::BucketedRingLocator<H>(s); },
                      c, false);
        break;
      case Kind::kRendezvous:
        check_locator(
            [input_kind](std::span<const Server> s) {
              return memshard::RendezvousLocator(s, input_kind);
            },
            c, true);
        break;
    }
  });
  return 0;
}
