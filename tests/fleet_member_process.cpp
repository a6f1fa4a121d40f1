// SPDX-License-Identifier: MIT
// A fleet's member as its own process, for the tests that run several (fleet_process_test.cpp):
// joins the fleet, then reads and writes its keys until SIGTERM (or the time given passes),
// logging every call as support/history.hpp does, and writes its log to a file at the end (the
// test merges the members' logs and checks them together).
//
//   memshard_fleet_member_process STORE_URL FLEET MEMBER MEMBERS KEYS SECONDS LOG SERVERS
//                                 [alone BEGIN_AT COMMIT_AT]
//
// MEMBER: this member's index (0 to MEMBERS-1), also its writer in the log; KEYS: how many keys
// ("fleet:0" ...); SERVERS: every memcached server the fleet may use ("h:p,h:p"), whose order
// names a server in the log. With "alone", the process follows no fleet (STORE_URL and FLEET are
// not read): its own client starts on every server but the last (libmemcached's ketama), and
// begins a migration (kFast) onto all of them when the steady clock reaches BEGIN_AT, and commits
// it at COMMIT_AT (both in ns of the steady clock, which every process of the machine shares), as
// processes that each change on their own would. Exit status 0 once the log is written, 1 on a
// failure (said on stderr).

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "memshard/fleet.hpp"
#include "memshard/memshard.hpp"
#include "support/history.hpp"

namespace {

volatile std::sig_atomic_t stop_requested = 0;

extern "C" void on_term(int /*signal*/) { stop_requested = 1; }

// The index in `all` of the server that answered `call_server` on the snapshot `placed` (which
// did not change during the call), or kNoServer.
auto server_id(const std::vector<memshard::Server>& all,
               const std::vector<memshard::Server>& placed, std::size_t call_server)
    -> std::size_t {
  if (call_server >= placed.size()) {
    return memshard::testing::Call::kNoServer;  // the other placement of a phase, or none
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] == placed[call_server]) {
      return i;
    }
  }
  return memshard::testing::Call::kNoServer;
}

auto run(int argc, char** argv) -> int {
  if (argc != 9 && !(argc == 12 && std::string_view(argv[9]) == "alone")) {
    std::fprintf(stderr,
                 "usage: STORE_URL FLEET MEMBER MEMBERS KEYS SECONDS LOG SERVERS "
                 "[alone BEGIN_AT COMMIT_AT]\n");
    return 1;
  }
  const bool alone = argc == 12;
  const std::string store = argv[1];
  const std::string fleet = argv[2];
  const auto member = static_cast<std::uint32_t>(std::stoul(argv[3]));
  const auto members = static_cast<std::size_t>(std::stoul(argv[4]));
  const auto key_count = static_cast<std::size_t>(std::stoul(argv[5]));
  const auto seconds = std::chrono::seconds(std::stoul(argv[6]));
  const std::string log_path = argv[7];
  const std::vector<memshard::Server> all = memshard::parse_servers(argv[8]);
  std::signal(SIGTERM, on_term);

  std::vector<std::string> keys;
  for (std::size_t k = 0; k < key_count; ++k) {
    keys.push_back("fleet:" + std::to_string(k));
  }
  memshard::testing::History history(keys, members);
  memshard::ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds{500};
  options.io_timeout = std::chrono::milliseconds{500};
  memshard::FleetOptions fleet_options;
  fleet_options.member_id = "m" + std::to_string(member);
  fleet_options.lease_ttl = std::chrono::seconds{3};  // a member stopped holds the fleet back 3 s
  std::optional<memshard::FleetMember> joined;
  std::optional<memshard::ShardedClient<memshard::AnyLocator>> own;
  // alone: when to begin and commit the migration (steady clock ns); kNever once done.
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  std::int64_t begin_at = kNever;
  std::int64_t commit_at = kNever;
  if (alone) {
    own.emplace(memshard::make_client("libmemcached-ketama",
                                      std::vector<memshard::Server>(all.begin(), all.end() - 1), {},
                                      options));
    begin_at = std::stoll(argv[10]);
    commit_at = std::stoll(argv[11]);
  } else {
    joined.emplace(memshard::join_fleet(store, fleet, options, fleet_options));
  }
  auto& client = alone ? *own : joined->client();
  const auto steady_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  const std::chrono::milliseconds bound = client.options().call_budget();
  std::mt19937_64 rng(0x9e3779b97f4a7c15ULL * (member + 1U));
  const auto end_at = std::chrono::steady_clock::now() + seconds;
  using memshard::testing::HistoryClock;
  using memshard::testing::Op;
  while (stop_requested == 0 && std::chrono::steady_clock::now() < end_at) {
    if (joined && joined->fenced()) {
      std::this_thread::sleep_for(std::chrono::milliseconds{1});  // its calls would not wait
    }
    if (begin_at != kNever && steady_ns() >= begin_at) {
      begin_at = kNever;
      client.begin_migration(all);
    } else if (begin_at == kNever && commit_at != kNever && steady_ns() >= commit_at) {
      commit_at = kNever;
      (void)client.commit_migration();
    }
    const auto key = static_cast<std::uint32_t>(rng() % keys.size());
    const std::string& name = keys[key];
    const auto roll = rng() % 100;
    const std::vector<memshard::Server> placed = client.servers();
    const auto start = HistoryClock::now();
    if (roll < 70) {
      const auto got = client.get(name);
      const auto end = HistoryClock::now();
      std::optional<std::string_view> value;
      if (got.ok() && got.value()) {
        value = got.value()->value;
      }
      const std::size_t server = client.servers() == placed
                                     ? server_id(all, placed, got.status().server())
                                     : memshard::testing::Call::kNoServer;
      history.record_get(member, key, got.code(), server, value, start, end, bound);
      continue;
    }
    const auto id = history.next_id(member);
    const auto status = roll < 95 ? client.set(name, memshard::testing::encode_value(name, id))
                                  : client.remove(name);
    const auto end = HistoryClock::now();
    const std::size_t server = client.servers() == placed ? server_id(all, placed, status.server())
                                                          : memshard::testing::Call::kNoServer;
    history.record_write(roll < 95 ? Op::kSet : Op::kDelete, member, key, id, status.code(), server,
                         start, end, bound);
  }
  std::FILE* log = std::fopen(log_path.c_str(), "wb");
  if (log == nullptr) {
    std::perror("log");
    return 1;
  }
  const std::vector<memshard::testing::Call>& calls = history.calls(member);
  const bool written = calls.empty() || std::fwrite(calls.data(), sizeof(memshard::testing::Call),
                                                    calls.size(), log) == calls.size();
  if (std::fclose(log) != 0 || !written) {
    std::perror("log");
    return 1;
  }
  return 0;
}

}  // namespace

auto main(int argc, char** argv) -> int {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "memshard_fleet_member_process: %s\n", error.what());
    return 1;
  }
}
