// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_NETNS_HPP_
#define MEMSHARD_TESTS_SUPPORT_NETNS_HPP_

// support/netns.hpp: network faults injected for real by the kernel.
// ServerHost makes, inside the test process's own network namespace, a
// "server host" namespace joined to it by a veth pair, runs real memcached
// servers there on addresses of 198.18.0.0/15 (used only inside these
// namespaces), and applies and heals nftables rules (drops, resets, ICMP
// errors, random loss, one-direction loss, a SYN counter) and a tbf qdisc in
// it. netns_unavailable() says why a test cannot do this here (not root, no
// CAP_NET_ADMIN, a tool missing, not in a private network namespace).
//
// The test binary runs under `unshare --net --pid --mount-proc --fork
// --kill-child=KILL` (tests/support/netns_run.sh): the namespaces, the veth
// and every process die with it, even on kill -9. Every command is bounded in
// time (kCommandTimeout). Linux only.

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/memcached_server.hpp"

namespace memshard::testing {

/// kCommandTimeout: the longest one ip, nft, tc or nsenter command may take.
inline constexpr std::chrono::milliseconds kCommandTimeout{10'000};

/// NetFault: a fault ServerHost::apply() injects for one server.
enum class NetFault : std::uint8_t {
  kDropFlow,     ///< every packet to the server's port dropped (a blackhole)
  kDropSyn,      ///< only connection attempts (SYN) dropped
  kReset,        ///< every packet answered with a TCP reset
  kUnreachable,  ///< every packet answered with ICMP host-unreachable
  kDropReplies,  ///< the server's replies dropped (loss in one direction)
};

/// to_string: "drop_flow", "drop_syn", "reset", "unreachable", "drop_replies".
[[nodiscard]] constexpr auto to_string(NetFault fault) noexcept -> std::string_view {
  switch (fault) {
    case NetFault::kDropFlow:
      return "drop_flow";
    case NetFault::kDropSyn:
      return "drop_syn";
    case NetFault::kReset:
      return "reset";
    case NetFault::kUnreachable:
      return "unreachable";
    case NetFault::kDropReplies:
      return "drop_replies";
  }
  return "unknown";
}

/// operator<<: writes to_string(fault) (gtest prints parameters with it).
inline auto operator<<(std::ostream& os, NetFault fault) -> std::ostream& {
  return os << to_string(fault);
}

namespace netns_detail {

/// has_net_admin: whether CAP_NET_ADMIN (bit 12) is in this process's
/// effective set.
[[nodiscard]] inline auto has_net_admin() -> bool {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("CapEff:")) {
      const std::uint64_t caps = std::stoull(line.substr(7), nullptr, 16);
      return (caps >> 12U & 1U) != 0;
    }
  }
  return false;
}

/// only_loopback: whether this network namespace holds no interface but lo
/// (a fresh one, as unshare --net makes).
[[nodiscard]] inline auto only_loopback() -> bool {
  struct if_nameindex* names = ::if_nameindex();
  if (names == nullptr) {
    return false;
  }
  bool only = true;
  for (const struct if_nameindex* entry = names; entry->if_index != 0; ++entry) {
    only = only && std::string_view(entry->if_name) == "lo";
  }
  ::if_freenameindex(names);
  return only;
}

/// run: runs `program` with `args` (bounded by kCommandTimeout); throws
/// std::runtime_error with its output unless it exits with status 0.
inline auto run(const std::string& program, std::vector<std::string> args,
                std::string_view input = {}) -> std::string {
  std::string line = program;
  for (const std::string& arg : args) {
    line += " " + arg;
  }
  const RunResult result = run_program(program, std::move(args), input, kCommandTimeout);
  if (result.status != 0) {
    throw std::runtime_error("memshard::testing: '" + line + "' failed: " +
                             std::to_string(result.status) + ": " + result.err + result.out);
  }
  return result.out;
}

/// answers: whether `address`:`port` answers "version" before `deadline`.
[[nodiscard]] inline auto answers(const std::string& address, std::uint16_t port,
                                  detail::Clock::time_point deadline) -> bool {
  const detail::FileDescriptor fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  if (!fd.valid() || ::inet_pton(AF_INET, address.c_str(), &to.sin_addr) != 1) {
    return false;
  }
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 &&
      (errno != EINPROGRESS || !detail::wait_for(fd.get(), POLLOUT, deadline))) {
    return false;
  }
  constexpr std::string_view kRequest = "version\r\n";
  if (::send(fd.get(), kRequest.data(), kRequest.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(kRequest.size()) ||
      !detail::wait_for(fd.get(), POLLIN, deadline)) {
    return false;
  }
  char reply[64];
  const ssize_t n = ::recv(fd.get(), reply, sizeof reply, 0);
  return n > 8 && std::string_view(reply, static_cast<std::size_t>(n)).starts_with("VERSION ");
}

}  // namespace netns_detail

/// netns_unavailable: why the namespace tests cannot run here, or nothing
/// when they can: they need CAP_NET_ADMIN (root), the ip, nft, tc and nsenter
/// tools, and a private network namespace (one with only lo), so that nothing
/// touches the machine's own network.
[[nodiscard]] inline auto netns_unavailable() -> std::optional<std::string> {
  if (!netns_detail::has_net_admin()) {
    return "needs root (CAP_NET_ADMIN) to make network namespaces";
  }
  for (const char* tool : {"ip", "nft", "tc", "nsenter", "unshare"}) {
    if (detail::find_in_path(tool).empty() &&
        detail::find_in_path(std::string("/usr/sbin/") + tool).empty()) {
      return std::string("needs '") + tool +
             "' (scripts/install-deps.sh installs nftables and iproute2)";
    }
  }
  if (!netns_detail::only_loopback()) {
    return "not in a private network namespace: run it under 'unshare --net --pid --mount-proc "
           "--fork --kill-child=KILL' (ctest does, as root)";
  }
  return std::nullopt;
}

/// ServerHost: a network namespace joined to the test's by the veth pair
/// msh0 (198.18.0.1/24, on the test's side) and msh1 (the host's side), with
/// `count` memcached servers listening on 198.18.0.11, .12, ... port 11211,
/// and the nftables table "inet memshard" (chains count, in, out) that
/// apply() fills and heal() empties. The memcached binary is
/// $MEMSHARD_MEMCACHED, the MEMSHARD_MEMCACHED_BINARY macro, or memcached from
/// PATH.
///
/// Lifetime: the constructor returns once every server answers; the
/// destructor kills the servers and the process that holds the namespace,
/// which then disappears with its veth. Throws std::runtime_error naming the
/// command when a step fails. Neither copied nor moved.
class ServerHost {
 public:
  /// kPort: the port every server listens on.
  static constexpr std::uint16_t kPort = 11211;
  /// kStartTimeout: how long the servers may take to answer.
  static constexpr std::chrono::milliseconds kStartTimeout{10'000};

  /// Makes the namespace and starts `count` servers (1 to 8), each with
  /// `extra_args` after `-u nobody -l ADDRESS -p 11211 -U 0 -t 1 -m 64`.
  explicit ServerHost(std::size_t count, std::vector<std::string> extra_args = {}) {
    if (count == 0 || count > 8) {
      throw std::runtime_error("memshard::testing: ServerHost holds 1 to 8 servers");
    }
    try {
      start(count, extra_args);
    } catch (...) {
      release();
      throw;
    }
  }

  ServerHost(const ServerHost&) = delete;
  auto operator=(const ServerHost&) -> ServerHost& = delete;
  ServerHost(ServerHost&&) = delete;
  auto operator=(ServerHost&&) -> ServerHost& = delete;
  ~ServerHost() { release(); }

  /// spec: "198.18.0.N:11211" of server `index`, the form parse_server() reads.
  [[nodiscard]] auto spec(std::size_t index) const -> std::string {
    return addresses_.at(index) + ":" + std::to_string(kPort);
  }

  /// address: the address of server `index`.
  [[nodiscard]] auto address(std::size_t index) const -> const std::string& {
    return addresses_.at(index);
  }

  /// size: how many servers there are.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return addresses_.size(); }

  /// apply: injects `fault` for server `index` (added to any fault already
  /// there).
  void apply(std::size_t index, NetFault fault) {
    const std::string to = "ip daddr " + address(index) + " tcp dport " + std::to_string(kPort);
    switch (fault) {
      case NetFault::kDropFlow:
        add_rule("in", to + " drop");
        break;
      case NetFault::kDropSyn:
        add_rule("in", to + " tcp flags & (syn | ack) == syn drop");
        break;
      case NetFault::kReset:
        add_rule("in", to + " reject with tcp reset");
        break;
      case NetFault::kUnreachable:
        add_rule("in", to + " reject with icmpx type host-unreachable");
        break;
      case NetFault::kDropReplies:
        add_rule("out",
                 "ip saddr " + address(index) + " tcp sport " + std::to_string(kPort) + " drop");
        break;
    }
  }

  /// apply_loss: drops `percent` % of the packets sent to every server, at
  /// random (nft numgen).
  void apply_loss(unsigned percent) {
    add_rule("in", "tcp dport " + std::to_string(kPort) + " numgen random mod 100 < " +
                       std::to_string(percent) + " drop");
  }

  /// limit_rate: shapes what the servers send to a token bucket (tc tbf) of
  /// `rate` (tc's syntax: "2mbit"), with a deep queue (2 s), so replies slow
  /// down rather than drop.
  void limit_rate(const std::string& rate) {
    in_host(tool("tc"), {"qdisc", "replace", "dev", "msh1", "root", "tbf", "rate", rate, "burst",
                         "16kb", "latency", "2s"});
  }

  /// heal: removes every fault (rules and qdisc); the SYN counters keep
  /// counting.
  void heal() {
    in_host(tool("nft"), {"flush", "chain", "inet", "memshard", "in"});
    in_host(tool("nft"), {"flush", "chain", "inet", "memshard", "out"});
    const RunResult qdisc = run_program(tool("nsenter"),
                                        {"-t", std::to_string(holder_->pid()), "-n", tool("tc"),
                                         "qdisc", "del", "dev", "msh1", "root"},
                                        {}, kCommandTimeout);
    static_cast<void>(qdisc);  // fails when there is none, which is fine
  }

  /// syns: connection attempts (SYN packets) server `index` has received.
  [[nodiscard]] auto syns(std::size_t index) const -> std::uint64_t {
    const std::string listing =
        in_host(tool("nft"), {"list", "chain", "inet", "memshard", "count"});
    const std::string needle = "ip daddr " + address(index) + " ";
    const std::size_t rule = listing.find(needle);
    const std::size_t packets = listing.find("packets ", rule);
    if (rule == std::string::npos || packets == std::string::npos) {
      throw std::runtime_error("memshard::testing: no SYN counter for " + address(index) +
                               " in: " + listing);
    }
    return std::stoull(listing.substr(packets + 8));
  }

  /// server_pid: the process id of server `index`.
  [[nodiscard]] auto server_pid(std::size_t index) const -> pid_t {
    return servers_.at(index)->pid();
  }

 private:
  // Makes the namespace, the veth pair, the nftables table and the servers.
  void start(std::size_t count, const std::vector<std::string>& extra_args) {
    holder_ = std::make_unique<ChildProcess>(tool("unshare"),
                                             std::vector<std::string>{"--net", "sleep", "1000000"});
    // unshare execs sleep once the namespace exists: wait until the holder is
    // in another namespace than ours.
    const auto deadline = detail::Clock::now() + kStartTimeout;
    while (ns_of(holder_->pid()) == ns_of(::getpid())) {
      if (detail::Clock::now() > deadline || !holder_->running()) {
        throw std::runtime_error("memshard::testing: the namespace holder did not start");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const std::string pid = std::to_string(holder_->pid());
    const std::string ip = tool("ip");
    netns_detail::run(ip, {"link", "set", "lo", "up"});
    netns_detail::run(ip, {"link", "add", "msh0", "type", "veth", "peer", "name", "msh1"});
    netns_detail::run(ip, {"link", "set", "msh1", "netns", pid});
    netns_detail::run(ip, {"addr", "add", "198.18.0.1/24", "dev", "msh0"});
    netns_detail::run(ip, {"link", "set", "msh0", "up"});
    std::string batch = "link set lo up\nlink set msh1 up\n";
    for (std::size_t i = 0; i < count; ++i) {
      addresses_.push_back("198.18.0." + std::to_string(11 + i));
      batch += "addr add " + addresses_.back() + "/24 dev msh1\n";
    }
    in_host(ip, {"-batch", "-"}, batch);
    in_host(tool("nft"), {"-f", "-"},
            "table inet memshard {\n"
            "  chain count { type filter hook input priority -10; policy accept; }\n"
            "  chain in { type filter hook input priority 0; policy accept; }\n"
            "  chain out { type filter hook output priority 0; policy accept; }\n"
            "}\n");
    std::string counters;
    for (const std::string& address : addresses_) {
      counters += "add rule inet memshard count ip daddr " + address + " tcp dport " +
                  std::to_string(kPort) + " tcp flags & (syn | ack) == syn counter\n";
    }
    in_host(tool("nft"), {"-f", "-"}, counters);
    for (const std::string& address : addresses_) {
      std::vector<std::string> args = {"-t", pid,
                                       "-n", memcached_binary(),
                                       "-u", "nobody",
                                       "-l", address,
                                       "-p", std::to_string(kPort),
                                       "-U", "0",
                                       "-t", "1",
                                       "-m", "64"};
      args.insert(args.end(), extra_args.begin(), extra_args.end());
      servers_.push_back(std::make_unique<ChildProcess>(tool("nsenter"), std::move(args)));
    }
    for (std::size_t i = 0; i < count; ++i) {
      while (!netns_detail::answers(addresses_[i], kPort,
                                    detail::Clock::now() + std::chrono::milliseconds(200))) {
        if (detail::Clock::now() > deadline || !servers_[i]->running()) {
          throw std::runtime_error("memshard::testing: memcached on " + addresses_[i] +
                                   " did not answer");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
  }

  // Kills the servers and the namespace's holder. Never throws.
  void release() noexcept {
    for (auto& server : servers_) {
      server->kill();
    }
    // The kernel removes a dead namespace's veth only later: remove it now,
    // so that the next ServerHost finds a namespace with only lo again.
    try {
      static_cast<void>(run_program(tool("ip"), {"link", "del", "msh0"}, {}, kCommandTimeout));
    } catch (const std::exception&) {
      // nothing more to do: it goes with the namespace
    }
    if (holder_) {
      holder_->kill();
    }
  }

  // The memcached binary: $MEMSHARD_MEMCACHED, the MEMSHARD_MEMCACHED_BINARY
  // macro, or memcached from PATH.
  [[nodiscard]] static auto memcached_binary() -> std::string {
    if (const char* chosen = std::getenv("MEMSHARD_MEMCACHED"); chosen != nullptr && *chosen != 0) {
      return detail::find_in_path(chosen);
    }
#ifdef MEMSHARD_MEMCACHED_BINARY
    return MEMSHARD_MEMCACHED_BINARY;
#else
    return tool("memcached");
#endif
  }

  // The path of a tool: from PATH, else from /usr/sbin.
  [[nodiscard]] static auto tool(const std::string& name) -> std::string {
    std::string path = detail::find_in_path(name);
    return path.empty() ? "/usr/sbin/" + name : path;
  }

  [[nodiscard]] static auto ns_of(pid_t pid) -> std::string {
    std::error_code error;
    return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", error)
        .string();
  }

  // Runs `program` `args` inside the host's network namespace.
  auto in_host(const std::string& program, std::vector<std::string> args,
               std::string_view input = {}) const -> std::string {
    std::vector<std::string> all = {"-t", std::to_string(holder_->pid()), "-n", program};
    all.insert(all.end(), args.begin(), args.end());
    return netns_detail::run(tool("nsenter"), std::move(all), input);
  }

  void add_rule(const std::string& chain, const std::string& rule) {
    in_host(tool("nft"), {"add rule inet memshard " + chain + " " + rule});
  }

  std::unique_ptr<ChildProcess> holder_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<ChildProcess>> servers_;
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_NETNS_HPP_
