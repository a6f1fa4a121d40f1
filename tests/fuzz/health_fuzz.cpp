// SPDX-License-Identifier: MIT
// libFuzzer target for fleet/server_health.hpp: detail::HealthPolicy on a
// fake clock, driven by a sequence of events from the input (a success, a
// server failure, allowed to eject or not, a probe attempt, a probe's
// outcome, a lease given back, the clock moving on) and compared with its
// documented rules after every event: `failure_limit` consecutive failures
// eject (unless the ejection is not allowed: the server is kept in), and
// fewer do not; an ejected server gets no probe before `retry_interval` has
// passed since the failure that ejected it, and one once it has, unless a
// lease is live; each failed probe keeps it out retry * 1.5^n (at most
// 30 * retry) plus up to a fifth; at most one lease is live at a time; a
// probe's success restores the server, its failure ejects it again. A prober
// whose lease ran out is taken to have gone away (it records nothing). Run by CTest for a bounded
// time (tests/fuzz/CMakeLists.txt).

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fuzz_support.hpp"
#include "memshard/fleet/server_health.hpp"

namespace {

using memshard::detail::HealthChange;
using memshard::detail::HealthPolicy;
using memshard::detail::ServerHealth;
using memshard::fuzz::check;

std::int64_t fake_now = 0;

auto fake_clock() noexcept -> std::int64_t { return fake_now; }

constexpr std::int64_t kMs = 1'000'000;

enum class Event : std::uint8_t {
  kSuccess,
  kFailure,
  kTryProbe,
  kProbeOutcome,
  kRelease,
  kAdvance,
  kMaxValue = kAdvance,  // for FuzzedDataProvider::ConsumeEnum
};

// What the documented rules say the state is.
struct Model {
  std::uint32_t streak = 0;
  std::uint32_t probe_failures = 0;
  bool ejected = false;
  std::int64_t until = 0;                 // no probe before this, while ejected
  std::int64_t until_latest = 0;          // a probe is due from this on (jitter)
  std::optional<std::int64_t> lease_end;  // the last lease won, until recorded or released
  std::uint64_t ejections = 0;
  std::uint64_t kept_in = 0;

  [[nodiscard]] auto lease_live() const -> bool {
    return lease_end.has_value() && fake_now < *lease_end;
  }
};

}  // namespace

extern "C" auto LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) -> int {
  FuzzedDataProvider input(data, size);
  const auto limit = input.ConsumeIntegralInRange<std::uint32_t>(0, 8);
  const auto retry = input.ConsumeIntegralInRange<std::int64_t>(1, 1000);
  const auto lease = input.ConsumeIntegralInRange<std::int64_t>(1, 3000);
  fake_now = 1000 * kMs;  // steady clocks start well above zero
  const HealthPolicy policy(limit, std::chrono::milliseconds(retry),
                            std::chrono::milliseconds(lease), &fake_clock);
  const std::uint32_t failure_limit = limit == 0 ? 1 : limit;  // documented: at least 1
  ServerHealth health;
  Model model;
  const auto fail = [&](bool probe, bool may_eject) {
    ++model.streak;
    HealthChange expected = HealthChange::kNone;
    if (probe) {
      ++model.probe_failures;
      const std::int64_t interval = policy.interval(model.probe_failures);
      const auto base = static_cast<double>(retry * kMs);
      double documented = base;
      for (std::uint32_t i = 0; i < model.probe_failures && documented < 30.0 * base; ++i) {
        documented *= 1.5;
      }
      documented = std::min(documented, 30.0 * base);
      check(static_cast<double>(interval) >= documented - 2 &&
            static_cast<double>(interval) <= documented + 2);
      model.until = fake_now + interval;
      model.until_latest = model.until + interval / 5 + 1;
      expected = HealthChange::kProbeFailed;
    } else if (model.streak >= failure_limit && !model.ejected) {
      if (may_eject) {
        model.ejected = true;
        model.until = fake_now + retry * kMs;
        model.until_latest = model.until;
        ++model.ejections;
        expected = HealthChange::kEjected;
      } else {
        ++model.kept_in;
        expected = HealthChange::kKeptIn;
      }
    }
    check(policy.record(health, true, probe, may_eject) == expected);
    if (probe) {
      const std::int64_t until = health.ejected_until.load();
      check(until >= model.until && until <= model.until_latest);
      model.until = until;  // the draw, from now on exact
      model.until_latest = until;
    }
  };
  for (int step = 0; step < 256 && input.remaining_bytes() > 0; ++step) {
    switch (input.ConsumeEnum<Event>()) {
      case Event::kSuccess:
        model.streak = 0;
        check(policy.record(health, false, false) == HealthChange::kNone);
        break;
      case Event::kFailure:
        fail(false, input.ConsumeBool());
        break;
      case Event::kTryProbe: {
        const bool expected = model.ejected && fake_now >= model.until && !model.lease_live();
        const bool won = policy.try_probe(health);
        check(won == expected);
        if (won) {
          model.lease_end = fake_now + lease * kMs;
        }
        break;
      }
      case Event::kProbeOutcome:
        if (!model.lease_live()) {
          break;  // no prober holds a live lease
        }
        model.lease_end.reset();
        if (input.ConsumeBool()) {
          fail(true, true);
        } else {
          model.streak = 0;
          model.probe_failures = 0;
          model.ejected = false;
          check(policy.record(health, false, true) == HealthChange::kRestored);
          check(!HealthPolicy::is_ejected(health));  // never stuck after a successful probe
        }
        break;
      case Event::kRelease:
        if (model.lease_live()) {
          model.lease_end.reset();
          HealthPolicy::release_probe(health);
        }
        break;
      case Event::kAdvance:
        fake_now += input.ConsumeIntegralInRange<std::int64_t>(0, 4000) * kMs / 4;
        break;
    }
    check(HealthPolicy::is_ejected(health) == model.ejected);
    check(health.consecutive_failures.load() == model.streak);
    check(health.ejections.load() == model.ejections);
    check(health.kept_in.load() == model.kept_in);
    check(health.probe_failures.load() == model.probe_failures);
    check(policy.now() == fake_now);
  }
  return 0;
}
