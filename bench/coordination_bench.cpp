// SPDX-License-Identifier: MIT
// coordination_bench.cpp: what following a fleet in etcd costs (memshard::fleet), on a local
// etcd that the benchmark starts (tests/support/etcd_server.hpp; MEMSHARD_ETCD overrides the
// binary) and local memcached servers (never read or written here: the members make no calls).
//
// BM_EtcdAtRest/members:M: M members join a fleet (the default lease TTL, 30 s) and sit idle
// for MEMSHARD_COORDINATION_REST_SECONDS (default 20); the requests etcd received meanwhile
// (the sum of its grpc_server_started_total, which counts each request of its JSON gateway and
// each watch stream opened) per member and second.
//
// BM_PhasePropagation/members:M: M members join; the fleet is reconfigured back and forth
// between 2 and 3 servers, each change through its phases (1, 3, 4, steady), each record
// written by the benchmark itself (fleet_step, then a conditional put) once every member
// acknowledged the one before. For each record: the time from its write until each member
// serves it (FleetMember::record(), polled every 200 us), and until the last member
// acknowledged it in etcd (what a coordinator waits for). Counters: their p50, p99 and max
// over every member and record, in ms.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "memshard/fleet.hpp"
#include "memshard/memshard.hpp"
#include "support/etcd_server.hpp"
#include "support/memcached_server.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using memshard::FleetAdmin;
using memshard::FleetCommand;
using memshard::FleetCommandKind;
using memshard::FleetMember;
using memshard::FleetRecord;
using memshard::testing::EtcdServer;
using memshard::testing::MemcachedServer;

constexpr std::string_view kFleet = "bench";

auto env_count(const char* name, std::size_t fallback) -> std::size_t {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  return static_cast<std::size_t>(std::stoul(text));
}

// The sum of every labelled line of the counter `name` in etcd's /metrics.
auto metric_sum(const EtcdServer& etcd, std::string_view name) -> double {
  const std::string metrics = etcd.get("/metrics");
  const std::string start = "\n" + std::string(name) + "{";
  double sum = 0;
  for (std::size_t at = metrics.find(start); at != std::string::npos;
       at = metrics.find(start, at + 1)) {
    const std::size_t end = metrics.find('\n', at + 1);
    const std::string line = metrics.substr(at + 1, end - at - 1);
    const std::size_t space = line.rfind(' ');
    sum += std::stod(line.substr(space + 1));
  }
  return sum;
}

// The q-quantile (0 to 1) of `values`, sorted here.
auto quantile(std::vector<double>& values, double q) -> double {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

auto ms(Clock::duration d) -> double {
  return std::chrono::duration<double, std::milli>(d).count();
}

// A local etcd, three local memcached servers, and a fleet on the first two.
class Setup {
 public:
  Setup() : servers_(3), admin_(etcd_.url()) {
    for (const MemcachedServer& server : servers_) {
      placement_.push_back(memshard::parse_server(server.spec()));
    }
    FleetRecord record;
    record.placement = placement(2);
    if (const memshard::StoreStatus created = admin_.create(kFleet, record); !created) {
      throw std::runtime_error("cannot create the fleet: " + created.message());
    }
  }

  [[nodiscard]] auto placement(std::size_t count) const -> memshard::FleetPlacement {
    return {std::vector<memshard::Server>(placement_.begin(),
                                          placement_.begin() + static_cast<std::ptrdiff_t>(count)),
            "libmemcached-ketama",
            {}};
  }

  // `count` members, joined one after another.
  auto join(std::size_t count, memshard::FleetOptions options = {}) -> std::vector<FleetMember> {
    std::vector<FleetMember> members;
    members.reserve(count);
    for (std::size_t m = 0; m < count; ++m) {
      options.member_id = "m" + std::to_string(m);
      members.push_back(memshard::join_fleet(etcd_.url(), kFleet, {}, options));
    }
    return members;
  }

  [[nodiscard]] auto etcd() const -> const EtcdServer& { return etcd_; }
  [[nodiscard]] auto admin() -> FleetAdmin& { return admin_; }

 private:
  EtcdServer etcd_;
  std::vector<MemcachedServer> servers_;
  std::vector<memshard::Server> placement_;
  FleetAdmin admin_;
};

void BM_EtcdAtRest(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const std::size_t seconds = env_count("MEMSHARD_COORDINATION_REST_SECONDS", 20);
  for (auto _ : state) {
    try {
      Setup setup;
      std::vector<FleetMember> members = setup.join(count);
      const double before = metric_sum(setup.etcd(), "grpc_server_started_total");
      std::this_thread::sleep_for(std::chrono::seconds(seconds));  // the rest measured
      const double after = metric_sum(setup.etcd(), "grpc_server_started_total");
      const double per_member_second =
          (after - before) / static_cast<double>(count) / static_cast<double>(seconds);
      state.counters["requests"] = after - before;
      state.counters["seconds"] = static_cast<double>(seconds);
      state.counters["per_member_per_second"] = per_member_second;
      state.counters["lease_ttl_s"] = 30;
    } catch (const std::exception& error) {
      state.SkipWithError(error.what());
    }
  }
}

void BM_PhasePropagation(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const std::size_t changes = env_count("MEMSHARD_COORDINATION_CHANGES", 10);
  for (auto _ : state) {
    try {
      Setup setup;
      std::vector<FleetMember> members = setup.join(count);
      FleetAdmin& admin = setup.admin();
      std::vector<double> served;  // per member and record
      std::vector<double> acked;   // per record: until the last member acknowledged it
      for (std::size_t c = 0; c < changes; ++c) {
        const FleetCommand command{
            FleetCommandKind::kReconfigure, setup.placement(c % 2 == 0 ? 3 : 2), {}, false};
        for (;;) {
          const auto view = admin.show(kFleet);
          if (!view) {
            throw std::runtime_error("show: " + view.status().message());
          }
          const memshard::FleetStep step =
              memshard::fleet_step(view->record, command, command.next);
          if (step.done) {
            break;
          }
          if (!step.next) {
            throw std::runtime_error("refused: " + step.refused);
          }
          const std::int64_t epoch = step.next->epoch;
          const memshard::FleetPhase phase =
              step.next->change ? step.next->change->phase : memshard::FleetPhase::kSteady;
          const auto start = Clock::now();
          const auto wrote =
              admin.etcd().put_if(memshard::detail::fleet_record_key(kFleet),
                                  memshard::encode_fleet_record(*step.next), view->mod_revision);
          if (!wrote || !wrote->succeeded) {
            throw std::runtime_error("the record could not be written");
          }
          std::vector<bool> seen(count, false);
          std::size_t left = count;
          const auto give_up = start + std::chrono::seconds{10};
          while (left > 0 && Clock::now() < give_up) {
            for (std::size_t m = 0; m < count; ++m) {
              if (!seen[m] && members[m].record().epoch >= epoch) {
                seen[m] = true;
                --left;
                served.push_back(ms(Clock::now() - start));
              }
            }
            std::this_thread::sleep_for(std::chrono::microseconds{200});
          }
          if (left > 0) {
            throw std::runtime_error(std::to_string(left) + " members never served epoch " +
                                     std::to_string(epoch));
          }
          const memshard::StoreStatus all =
              admin.wait_for_members(kFleet, epoch, phase, start + std::chrono::seconds{10});
          if (!all) {
            throw std::runtime_error("acknowledgements: " + all.message());
          }
          acked.push_back(ms(Clock::now() - start));
        }
      }
      state.counters["records"] = static_cast<double>(acked.size());
      state.counters["samples"] = static_cast<double>(served.size());
      state.counters["served_p50_ms"] = quantile(served, 0.5);
      state.counters["served_p99_ms"] = quantile(served, 0.99);
      state.counters["served_max_ms"] = served.empty() ? 0 : served.back();
      state.counters["acked_p50_ms"] = quantile(acked, 0.5);
      state.counters["acked_p99_ms"] = quantile(acked, 0.99);
      state.counters["acked_max_ms"] = acked.empty() ? 0 : acked.back();
    } catch (const std::exception& error) {
      state.SkipWithError(error.what());
    }
  }
}

}  // namespace

BENCHMARK(BM_EtcdAtRest)->ArgName("members")->Arg(8)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_PhasePropagation)
    ->ArgName("members")
    ->Arg(50)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

auto main(int argc, char** argv) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  try {
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << "memshard coordination benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
