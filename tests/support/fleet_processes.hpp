// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_FLEET_PROCESSES_HPP_
#define MEMSHARD_TESTS_SUPPORT_FLEET_PROCESSES_HPP_

// support/fleet_processes.hpp: FleetProcesses, a fleet's members as processes of their own
// (tests/fleet_member_process.cpp, whose path is the macro MEMSHARD_FLEET_MEMBER_PROCESS), each
// with its own client, reading and writing shared keys ("fleet:0" ...) on the test's memcached
// servers until stopped; their logs merged and checked by the history checker
// (support/history.hpp). The fleet is "web"; the test makes it and moves it (FleetAdmin).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "memshard/fleet.hpp"
#include "support/child_process.hpp"
#include "support/history.hpp"
#include "support/server_set.hpp"

#ifndef MEMSHARD_FLEET_MEMBER_PROCESS
#error "MEMSHARD_FLEET_MEMBER_PROCESS: the path of memshard_fleet_member_process"
#endif

namespace memshard::testing {

/// FleetProcesses: see the file comment. Neither copied nor moved; the destructor kills the
/// members still running and removes their logs.
class FleetProcesses {
 public:
  /// kKeys: the keys the members share.
  static constexpr std::size_t kKeys = 64;
  /// kWait: the bound of every wait.
  static constexpr std::chrono::milliseconds kWait{20'000};
  /// kMaxMembers: the most members one test starts (a member's index is its writer in the logs).
  static constexpr std::size_t kMaxMembers = 16;

  /// FleetProcesses: members of the fleet "web" in `store`, on `servers` (each member may use
  /// any of them), watched through `admin`. Makes the logs' directory.
  FleetProcesses(ServerSet& servers, std::string store, FleetAdmin& admin)
      : servers_(servers), store_(std::move(store)), admin_(admin) {
    std::string pattern = (std::filesystem::temp_directory_path() / "memshard-fleet-logs-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot make a directory for the members' logs");
    }
    logs_ = pattern;
  }
  FleetProcesses(const FleetProcesses&) = delete;
  auto operator=(const FleetProcesses&) -> FleetProcesses& = delete;
  FleetProcesses(FleetProcesses&&) = delete;
  auto operator=(FleetProcesses&&) -> FleetProcesses& = delete;
  ~FleetProcesses() {
    members_.clear();  // killed, if a test failed before it stopped them
    std::error_code ignored;
    std::filesystem::remove_all(logs_, ignored);
  }

  /// placement: the first `count` servers, placed by libmemcached's ketama.
  [[nodiscard]] auto placement(std::size_t count) const -> FleetPlacement {
    return {servers_.list(0, count), "libmemcached-ketama", {}};
  }

  /// start: starts `count` more members (member m with the store URL `store_of(m)`, or the
  /// store), and returns once every member still running registered.
  void start(std::size_t count, const std::function<std::string(std::size_t)>& store_of = {}) {
    std::string all;
    for (const Server& server : servers_.list()) {
      all += (all.empty() ? "" : ",") + server.endpoint();
    }
    for (std::size_t n = 0; n < count; ++n) {
      const std::size_t m = members_.size();
      ASSERT_LT(m, kMaxMembers);
      members_.push_back(std::make_unique<ChildProcess>(
          MEMSHARD_FLEET_MEMBER_PROCESS,
          std::vector<std::string>{store_of ? store_of(m) : store_, "web", std::to_string(m),
                                   std::to_string(kMaxMembers), std::to_string(kKeys), "120",
                                   log_path(m), all},
          -1, -1, 2));
    }
    const std::size_t live = members_.size() - left_;
    const auto until = std::chrono::steady_clock::now() + kWait;
    while (std::chrono::steady_clock::now() < until) {
      const auto members = admin_.members("web");
      if (members.ok() && members->size() == live) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    FAIL() << "the members did not all join";
  }

  /// leave: stops member `m` (SIGTERM: it ends its calls, writes its log and revokes its lease
  /// as it goes) and waits until it exited; its log is checked with the others'.
  void leave(std::size_t m) {
    members_.at(m)->terminate();
    ASSERT_EQ(members_[m]->wait_for(kWait), 0) << "member " << m;
    ++left_;
  }

  /// member: the process of member `m`.
  [[nodiscard]] auto member(std::size_t m) -> ChildProcess& { return *members_.at(m); }

  /// let_traffic_pass: waits until the servers answered `calls` more gets and sets (the
  /// members' load goes on meanwhile).
  void let_traffic_pass(std::uint64_t calls) {
    const std::uint64_t from = traffic();
    const auto until = std::chrono::steady_clock::now() + kWait;
    while (traffic() < from + calls && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    ASSERT_GE(traffic(), from + calls) << "the members made too few calls";
  }

  /// wait_until_member_serves_the_record: waits until member `id` ("m0" ...) serves the
  /// record's epoch (after a fault).
  void wait_until_member_serves_the_record(const std::string& id) {
    const auto until = std::chrono::steady_clock::now() + kWait;
    while (std::chrono::steady_clock::now() < until) {
      const auto view = admin_.show("web");
      const auto members = admin_.members("web");
      for (const auto& member : members.ok() ? *members : std::vector<FleetMemberInfo>{}) {
        if (view.ok() && member.id == id && member.epoch == view->record.epoch) {
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    FAIL() << id << " did not come back to the fleet's record";
  }

  /// wait_until_every_member_serves_the_record: the same for every member started.
  void wait_until_every_member_serves_the_record() {
    for (std::size_t m = 0; m < members_.size(); ++m) {
      wait_until_member_serves_the_record("m" + std::to_string(m));
    }
  }

  /// stop_and_check: stops the members (SIGTERM), merges their logs and checks them; prints
  /// the report and its examples.
  auto stop_and_check() -> HistoryReport {
    for (auto& member : members_) {
      member->terminate();
    }
    std::vector<std::string> keys;
    for (std::size_t k = 0; k < kKeys; ++k) {
      keys.push_back("fleet:" + std::to_string(k));
    }
    const std::size_t count = members_.size();
    History history(keys, kMaxMembers);
    fenced_calls_ = 0;
    for (std::size_t m = 0; m < count; ++m) {
      const auto code = members_[m]->wait_for(kWait);
      EXPECT_EQ(code, 0) << "member " << m;
      std::FILE* log = std::fopen(log_path(m).c_str(), "rb");
      if (log == nullptr) {
        ADD_FAILURE() << "no log of member " << m;
        continue;
      }
      Call call;
      while (std::fread(&call, sizeof call, 1, log) == 1) {
        fenced_calls_ += call.code == Errc::kFenced ? 1 : 0;
        history.record(call);
      }
      std::fclose(log);
    }
    members_.clear();
    const HistoryReport report = history.check(std::chrono::milliseconds{2'000});
    std::printf("%s\n", report.summary().c_str());
    for (const std::string& example : report.examples) {
      std::printf("%s\n", example.c_str());
    }
    return report;
  }

  /// fenced_calls: the writes the last check found refused with Errc::kFenced.
  [[nodiscard]] auto fenced_calls() const noexcept -> std::size_t { return fenced_calls_; }

 private:
  [[nodiscard]] auto log_path(std::size_t member) const -> std::string {
    return (logs_ / ("member-" + std::to_string(member) + ".log")).string();
  }

  // The gets and sets the servers answered so far.
  [[nodiscard]] auto traffic() -> std::uint64_t {
    std::uint64_t sum = 0;
    for (const auto& server : servers_) {
      sum += server.gets_and_sets();
    }
    return sum;
  }

  ServerSet& servers_;
  std::string store_;
  FleetAdmin& admin_;
  std::filesystem::path logs_;
  std::vector<std::unique_ptr<ChildProcess>> members_;
  std::size_t fenced_calls_ = 0;
  std::size_t left_ = 0;  // the members that left (leave)
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_FLEET_PROCESSES_HPP_
