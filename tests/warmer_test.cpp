// SPDX-License-Identifier: MIT
// The Warmer (warmer.hpp) against real memcached servers started by the tests,
// filled by libmemcached itself: growing 4 -> 5 (every moved key on its new
// owner with its value, flags and TTL, its old copy gone, the counts adding
// up), shrinking 5 -> 4 (a retiring server is only read), the server-clock TTL
// skip, the rate limit (an injected clock, and the real one), the back-off on
// a tiny new owner's evictions, step and run_for, servers that cannot be
// listed, a listing that names an item twice, a migration that ends under it,
// and the ConfigErrors.

#include <libmemcached-1.0/memcached.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/fault_proxy.hpp"
#include "support/memcached_server.hpp"
#include "support/server_set.hpp"

namespace warmer_test {
namespace {

using memshard::AnyLocator;
using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::Server;
using memshard::Warmer;
using memshard::WarmerBudget;
using memshard::WarmerOptions;
using memshard::WarmerProgress;
using memshard::WarmerServerProgress;
using memshard::testing::Direction;
using memshard::testing::FaultProxy;
using memshard::testing::LimitAction;
using memshard::testing::MemcachedServer;
using memshard::testing::ServerSet;
using Client = memshard::ShardedClient<AnyLocator>;

constexpr std::size_t kServers = 5;

// RepeatingRelay: a TCP relay on 127.0.0.1 to a memcached server that passes everything on,
// but sends each line of the server's that starts with "key=" (a metadump entry) twice, as a
// live metadump may list an item that moved to another LRU during its walk. One thread serves
// every connection, polling in 20 ms steps; the destructor stops it and closes them all.
class RepeatingRelay {
 public:
  explicit RepeatingRelay(std::uint16_t target)
      : target_(target), listener_(memshard::testing::detail::listen_loopback(port_)) {
    thread_ = std::thread([this] { serve(); });
  }
  RepeatingRelay(const RepeatingRelay&) = delete;
  auto operator=(const RepeatingRelay&) -> RepeatingRelay& = delete;
  RepeatingRelay(RepeatingRelay&&) = delete;
  auto operator=(RepeatingRelay&&) -> RepeatingRelay& = delete;
  ~RepeatingRelay() {
    stop_ = true;
    thread_.join();
  }

  [[nodiscard]] auto spec() const -> std::string { return "127.0.0.1:" + std::to_string(port_); }
  /// repeated: the lines sent twice so far.
  [[nodiscard]] auto repeated() const noexcept -> std::size_t { return repeated_.load(); }

 private:
  using FileDescriptor = memshard::testing::detail::FileDescriptor;
  struct Link {
    FileDescriptor client;
    FileDescriptor server;
    std::string partial;  // the server's bytes after its last complete line
    bool open = true;
  };

  static auto send_all(int fd, std::string_view bytes) -> bool {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) {
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }

  void accept_one(std::vector<std::unique_ptr<Link>>& links) const {
    auto link = std::make_unique<Link>();
    link->client = FileDescriptor(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    link->server = FileDescriptor(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const sockaddr_in address = memshard::testing::detail::loopback_address(target_);
    if (link->client.valid() && link->server.valid() &&
        ::connect(link->server.get(), reinterpret_cast<const sockaddr*>(&address),
                  sizeof(address)) == 0) {
      links.push_back(std::move(link));
    }
  }

  // Moves what `from` has to `to`; of the server's bytes, the complete lines go on in one
  // send, each metadump entry twice, and the rest waits for the line's end.
  void forward(Link& link, bool from_server) {
    std::array<char, 16384> buffer{};
    const int from = from_server ? link.server.get() : link.client.get();
    const int to = from_server ? link.client.get() : link.server.get();
    const ssize_t got = ::recv(from, buffer.data(), buffer.size(), 0);
    if (got <= 0) {
      link.open = false;
      return;
    }
    const std::string_view bytes(buffer.data(), static_cast<std::size_t>(got));
    if (!from_server) {
      link.open = send_all(to, bytes);
      return;
    }
    link.partial.append(bytes);
    std::string out;  // sent at once: a send per line would wait on Nagle's algorithm
    std::size_t start = 0;
    for (std::size_t end = link.partial.find('\n'); end != std::string::npos;
         end = link.partial.find('\n', start)) {
      const std::string_view line = std::string_view(link.partial).substr(start, end + 1 - start);
      out.append(line);
      if (line.starts_with("key=")) {
        out.append(line);
        ++repeated_;
      }
      start = end + 1;
    }
    link.partial.erase(0, start);
    link.open = send_all(to, out);
  }

  void serve() {
    std::vector<std::unique_ptr<Link>> links;
    while (!stop_) {
      std::vector<pollfd> polled{{listener_.get(), POLLIN, 0}};
      for (const auto& link : links) {
        polled.push_back({link->client.get(), POLLIN, 0});
        polled.push_back({link->server.get(), POLLIN, 0});
      }
      if (::poll(polled.data(), polled.size(), 20) <= 0) {
        continue;
      }
      const std::size_t count = links.size();
      for (std::size_t i = 0; i < count; ++i) {
        for (const bool from_server : {false, true}) {
          const short events = polled[1 + 2 * i + (from_server ? 1 : 0)].revents;
          if (links[i]->open && (events & (POLLIN | POLLHUP | POLLERR)) != 0) {
            forward(*links[i], from_server);
          }
        }
      }
      if ((polled[0].revents & POLLIN) != 0) {
        accept_one(links);
      }
      std::erase_if(links, [](const auto& link) { return !link->open; });
    }
  }

  std::uint16_t target_;
  std::uint16_t port_ = 0;  // set by the listener's initializer, so declared before it
  FileDescriptor listener_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> repeated_{0};
  std::thread thread_;
};

// A budget names its unit: no bare number makes one (WarmerBudget{10} read as
// ten milliseconds).
static_assert(!std::is_constructible_v<WarmerBudget, int>);
static_assert(!std::is_constructible_v<WarmerBudget, std::size_t>);
static_assert(!std::is_constructible_v<WarmerBudget, std::size_t, std::chrono::nanoseconds>);
static_assert(!std::is_default_constructible_v<WarmerBudget>);
static_assert(!std::is_aggregate_v<WarmerBudget>);
static_assert(WarmerBudget::keys(10).max_keys() == 10);
static_assert(!WarmerBudget::keys(10).has_time_limit());
static_assert(WarmerBudget::time(std::chrono::milliseconds{10}).max_time() ==
              std::chrono::milliseconds{10});
static_assert(WarmerBudget::time(std::chrono::milliseconds{10}).max_keys() ==
              std::numeric_limits<std::size_t>::max());
static_assert(WarmerBudget::keys_and_time(3, std::chrono::seconds{1}) ==
              WarmerBudget::keys_and_time(3, std::chrono::milliseconds{1000}));
static_assert(WarmerBudget::unlimited().max_keys() == std::numeric_limits<std::size_t>::max() &&
              !WarmerBudget::unlimited().has_time_limit());

// Unlimited: the tests that do not test the rate limit.
auto unlimited() -> WarmerOptions {
  WarmerOptions options;
  options.ops_per_second = 0;
  options.bytes_per_second = 0;
  return options;
}

// A clock that only the test moves.
std::atomic<std::int64_t> fake_now{1'000'000'000};
auto fake_clock() noexcept -> std::int64_t { return fake_now.load(); }

// Configures a libmemcached handle like a profile.
using Configure = std::function<void(memcached_st*)>;
const Configure kModula = [](memcached_st* memc) {
  memcached_behavior_set_distribution(memc, MEMCACHED_DISTRIBUTION_MODULA);
};
const Configure kKetamaWeighted = [](memcached_st* memc) {
  memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
};

// An item as the test stored it.
struct Stored {
  std::string key;
  std::string value;
  std::uint32_t flags = 0;
  time_t ttl = 0;  // 0: never expires
};

class WarmerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(kServers); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }

  // Servers [first, first + count).
  static auto list(std::size_t first, std::size_t count) -> std::vector<Server> {
    return servers_->list(first, count);
  }

  static auto options() -> ClientOptions {
    ClientOptions options;
    options.connect_timeout = std::chrono::milliseconds{500};
    options.io_timeout = std::chrono::milliseconds{500};
    options.failure_limit = 100;
    return options;
  }

  // Stores `items` through a plain libmemcached handle over `servers`.
  static void fill(const std::vector<Server>& servers, const Configure& configure,
                   const std::vector<Stored>& items) {
    memcached_st* memc = memcached_create(nullptr);
    ASSERT_NE(memc, nullptr);
    configure(memc);
    for (const Server& s : servers) {
      ASSERT_EQ(memcached_server_add(memc, s.host.c_str(), s.port), MEMCACHED_SUCCESS);
    }
    for (const Stored& item : items) {
      const memcached_return_t rc =
          memcached_set(memc, item.key.data(), item.key.size(), item.value.data(),
                        item.value.size(), item.ttl, item.flags);
      EXPECT_EQ(rc, MEMCACHED_SUCCESS) << item.key << ": " << memcached_strerror(memc, rc);
    }
    memcached_free(memc);
  }

  static auto items(std::size_t count, std::string_view prefix = "key:", std::size_t pad = 20)
      -> std::vector<Stored> {
    std::vector<Stored> out;
    for (std::size_t i = 0; i < count; ++i) {
      Stored item;
      item.key = std::string(prefix) + std::to_string(i);
      item.value = "value-" + std::to_string(i) + "-" + std::string(pad + i % 7, 'x');
      item.flags = static_cast<std::uint32_t>(i * 37 % 65536);
      item.ttl = i % 3 == 0 ? 0 : static_cast<time_t>(300 + i);
      out.push_back(std::move(item));
    }
    return out;
  }

  // The test server at `s`.
  static auto at(const Server& s) -> MemcachedServer& {
    for (auto& server : *servers_) {
      if (server.port() == s.port) {
        return server;
      }
    }
    ADD_FAILURE() << "no server " << s.endpoint();
    return (*servers_)[0];
  }

  // What `mg key t f v` says on `s`.
  struct Seen {
    bool found = false;
    long long ttl = 0;
    std::uint32_t flags = 0;
    std::string value;
  };
  static auto look(const Server& s, std::string_view key) -> Seen {
    const std::string reply = at(s).command("mg " + std::string(key) + " t f v");
    Seen out;
    if (!reply.starts_with("VA ")) {
      return out;
    }
    out.found = true;
    const std::size_t eol = reply.find("\r\n");
    const std::string head = reply.substr(0, eol);
    const auto t = head.find(" t");
    const auto f = head.find(" f");
    out.ttl = std::stoll(head.substr(t + 2));
    out.flags = static_cast<std::uint32_t>(std::stoul(head.substr(f + 2)));
    const std::size_t length = std::stoul(head.substr(3));
    out.value = reply.substr(eol + 2, length);
    return out;
  }

  static auto owner(const std::vector<Server>& servers, std::string_view profile,
                    std::string_view key) -> Server {
    return servers[memshard::make_locator(profile, servers).locate(key)];
  }

  // Runs `warmer` to its end in steps of `keys`, within a bound of steps.
  template <class W>
  static void run_to_end(W& warmer, std::size_t keys = 64) {
    for (int i = 0; i < 100'000 && warmer.step(keys); ++i) {
    }
    ASSERT_TRUE(warmer.done());
  }

  static inline std::unique_ptr<ServerSet> servers_;
};

// How long `work` took, on the steady clock.
template <class Work>
auto timed(Work&& work) -> std::chrono::milliseconds {
  const auto start = std::chrono::steady_clock::now();
  std::forward<Work>(work)();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

// A step with a time budget may overrun it by one I/O wait begun in time (a
// copy, an eviction poll: a few ms here) and the scheduler's delays.
constexpr std::chrono::milliseconds kStepBudget{50};
constexpr std::chrono::milliseconds kRunBudget{200};
constexpr std::chrono::milliseconds kSlack{100};

// Every count of one server adds up: each eligible item settled once.
void expect_settled(const WarmerServerProgress& p) {
  EXPECT_TRUE(p.scan_done) << p.server;
  EXPECT_TRUE(p.done()) << p.server;
  EXPECT_EQ(p.settled(), p.eligible) << p.to_json();
  EXPECT_EQ(p.error, "") << p.server;
}

TEST_F(WarmerTest, GrowingFourToFiveMovesEveryMovedKeyWithValueFlagsAndTtl) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  const std::string profile = "libmemcached-modula";
  std::vector<Stored> stored = items(600);
  // A few keys that live shorter than the warmer's minimum (server clock).
  std::vector<Stored> brief = items(30, "brief:");
  for (Stored& item : brief) {
    item.ttl = 3;
  }
  fill(before, kModula, stored);
  fill(before, kModula, brief);
  // Keys stored on a server that is not their owner under the old placement
  // (and that would move): not that server's to copy.
  std::vector<std::string> strays;
  for (int i = 0; strays.size() < 20; ++i) {
    const std::string key = "stray:" + std::to_string(i);
    const Server was = owner(before, profile, key);
    const Server wrong = before[(static_cast<std::size_t>(was.port == before[0].port ? 1 : 0))];
    if (owner(after, profile, key).port == wrong.port) {
      continue;
    }
    ASSERT_EQ(at(wrong).command("set " + key + " 0 0 1\r\ns"), "STORED\r\n");
    strays.push_back(key);
  }

  // What must move, and the source TTLs.
  std::vector<Stored> moved;
  std::vector<Stored> stayed;
  std::vector<long long> source_ttl;
  std::vector<std::chrono::steady_clock::time_point> source_at;  // when each was read
  for (const Stored& item : stored) {
    const Server was = owner(before, profile, item.key);
    if (was.port == owner(after, profile, item.key).port) {
      stayed.push_back(item);
      continue;
    }
    moved.push_back(item);
    source_at.push_back(std::chrono::steady_clock::now());
    const Seen source = look(was, item.key);
    ASSERT_TRUE(source.found) << item.key << " was not stored where the profile says";
    source_ttl.push_back(source.ttl);
  }
  ASSERT_GT(moved.size(), 300U);  // modulo 4 -> 5 moves about 80%
  // One moved key is on its new owner already, with another value.
  const Stored& present = moved.front();
  ASSERT_EQ(
      at(owner(after, profile, present.key)).command("set " + present.key + " 7 0 5\r\nfresh"),
      "STORED\r\n");

  Client client = memshard::make_client(profile, before, {}, options());
  client.begin_migration(after);
  WarmerOptions warm = unlimited();
  warm.min_ttl = std::chrono::seconds{10};
  Warmer<AnyLocator> warmer(client, warm);
  EXPECT_FALSE(warmer.done());
  run_to_end(warmer);

  for (std::size_t i = 0; i < moved.size(); ++i) {
    const Stored& item = moved[i];
    const Server fresh = owner(after, profile, item.key);
    const Seen copy = look(fresh, item.key);
    ASSERT_TRUE(copy.found) << item.key << " is not on " << fresh.endpoint();
    // The TTLs run down from the source's read to the copy's: whole seconds
    // since then, one for rounding, and one more because each memcached
    // reads its clock once a second, on its own phase: the source's and the
    // new owner's clocks may be a second apart (seen under a loaded machine).
    const auto slack = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now() - source_at[i])
                           .count() +
                       2;
    if (i == 0) {
      EXPECT_EQ(copy.value, "fresh");  // add never overwrites
      EXPECT_EQ(copy.flags, 7U);
      continue;
    }
    EXPECT_EQ(copy.value, item.value) << item.key;
    EXPECT_EQ(copy.flags, item.flags) << item.key;
    if (source_ttl[i] < 0) {
      EXPECT_EQ(copy.ttl, -1) << item.key;
    } else {
      EXPECT_LE(copy.ttl, source_ttl[i]) << item.key;
      EXPECT_GE(copy.ttl, source_ttl[i] - slack) << item.key;
    }
    // Move on copy: the old server stays, so its copy is gone.
    EXPECT_FALSE(look(owner(before, profile, item.key), item.key).found) << item.key;
  }
  for (const Stored& item : stayed) {
    EXPECT_EQ(look(owner(after, profile, item.key), item.key).value, item.value) << item.key;
  }
  for (const std::string& key : strays) {
    EXPECT_FALSE(look(owner(after, profile, key), key).found) << key;
  }
  // The short-lived keys were skipped at the scan, on the server's clock.
  for (const Stored& item : brief) {
    const Server fresh = owner(after, profile, item.key);
    if (fresh.port != owner(before, profile, item.key).port) {
      EXPECT_FALSE(look(fresh, item.key).found) << item.key << " was copied";
    }
  }

  const WarmerProgress progress = warmer.progress();
  ASSERT_EQ(progress.servers.size(), 4U);
  for (std::size_t s = 0; s < 4; ++s) {
    EXPECT_EQ(progress.servers[s].server, before[s].endpoint());
    expect_settled(progress.servers[s]);
  }
  const WarmerServerProgress total = progress.totals();
  // Later servers also list the copies made onto them: not theirs to move.
  EXPECT_GE(total.scanned, stored.size() + brief.size() + strays.size());
  EXPECT_EQ(total.expired, brief.size());
  EXPECT_EQ(total.eligible, moved.size());
  EXPECT_EQ(total.copied, moved.size() - 1);
  EXPECT_EQ(total.already_present, 1U);
  EXPECT_EQ(total.vanished + total.revoked + total.failed, 0U);  // no stray was tried
  EXPECT_GT(total.bytes, 0U);
  EXPECT_TRUE(progress.done());
  EXPECT_EQ(client.migration_stats().copies_stored, moved.size() - 1);
  // Nothing is left: a step does nothing more.
  EXPECT_FALSE(warmer.step(10));
  EXPECT_EQ(warmer.progress(), progress);
}

TEST_F(WarmerTest, ShrinkingFiveToFourOnlyReadsTheRetiringServer) {
  const auto before = list(0, 5);
  const auto after = list(0, 4);
  const std::string profile = "libmemcached-ketama-weighted";
  const std::vector<Stored> stored = items(500);
  fill(before, kKetamaWeighted, stored);
  std::vector<Stored> moved;
  for (const Stored& item : stored) {
    if (owner(before, profile, item.key).port != owner(after, profile, item.key).port) {
      moved.push_back(item);
    }
  }
  ASSERT_GT(moved.size(), 40U);

  Client client = memshard::make_client(profile, before, {}, options());
  client.begin_migration(after);
  Warmer<AnyLocator> warmer(client, unlimited());
  run_to_end(warmer);

  for (const Stored& item : moved) {
    const Server old = owner(before, profile, item.key);
    EXPECT_EQ(old.port, before[4].port) << item.key << ": only the retiring server loses keys";
    const Seen copy = look(owner(after, profile, item.key), item.key);
    EXPECT_EQ(copy.value, item.value) << item.key;
    EXPECT_EQ(copy.flags, item.flags) << item.key;
    // A retiring server keeps serving the window's fallback reads.
    EXPECT_TRUE(look(old, item.key).found) << item.key;
  }
  const WarmerProgress progress = warmer.progress();
  ASSERT_EQ(progress.servers.size(), 5U);
  for (std::size_t s = 0; s < 5; ++s) {
    expect_settled(progress.servers[s]);
    EXPECT_EQ(progress.servers[s].eligible, s == 4 ? moved.size() : 0U) << s;
  }
  EXPECT_EQ(progress.totals().copied, moved.size());
  // A live listing may name an item twice (AnItemListedTwiceIsQueuedAndCopiedOnce).
  EXPECT_GE(progress.totals().scanned, stored.size());
  EXPECT_LE(progress.totals().scanned, stored.size() + stored.size() / 10);
}

TEST_F(WarmerTest, TheRateLimitBoundsTheCopiesOfAStep) {
  const auto before = list(0, 1);
  const auto after = list(0, 2);
  fill(before, kModula, items(200));
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  WarmerOptions warm;
  warm.ops_per_second = 100;  // a bucket of 10 (100 ms)
  warm.bytes_per_second = 0;
  warm.clock = &fake_clock;
  Warmer<AnyLocator> warmer(client, warm);
  const WarmerBudget now_only = WarmerBudget::keys_and_time(1000, std::chrono::nanoseconds{0});
  // A budget of keys alone reads the listing to its end (a budget of no time
  // reads only what it has already sent); no copy yet.
  EXPECT_TRUE(warmer.step(0));
  ASSERT_TRUE(warmer.progress().servers[0].scan_done);
  EXPECT_EQ(warmer.progress().totals().settled(), 0U);
  EXPECT_TRUE(warmer.step(now_only));
  EXPECT_EQ(warmer.progress().totals().settled(), 10U);
  EXPECT_TRUE(warmer.step(now_only));  // no time passed: nothing more
  EXPECT_EQ(warmer.progress().totals().settled(), 10U);
  fake_now += 50'000'000;  // 50 ms: 5 more
  EXPECT_TRUE(warmer.step(now_only));
  EXPECT_EQ(warmer.progress().totals().settled(), 15U);
  fake_now += 10'000'000'000;  // a long idle spell refills one burst only
  EXPECT_TRUE(warmer.step(WarmerBudget::keys_and_time(3, std::chrono::nanoseconds{0})));
  EXPECT_EQ(warmer.progress().totals().settled(), 18U);
  EXPECT_TRUE(warmer.step(now_only));
  EXPECT_EQ(warmer.progress().totals().settled(), 25U);

  // Bytes: a bucket smaller than one item lets one through per refill.
  WarmerOptions bytes;
  bytes.ops_per_second = 0;
  bytes.bytes_per_second = 100;
  bytes.clock = &fake_clock;
  Warmer<AnyLocator> by_bytes(client, bytes);
  EXPECT_TRUE(by_bytes.step(0));
  EXPECT_TRUE(by_bytes.step(now_only));
  EXPECT_EQ(by_bytes.progress().totals().settled(), 1U);
  fake_now += 50'000'000;
  EXPECT_TRUE(by_bytes.step(now_only));
  EXPECT_EQ(by_bytes.progress().totals().settled(), 1U);  // still in debt
}

TEST_F(WarmerTest, TheRateLimitHoldsOnTheRealClock) {
  const auto before = list(0, 1);
  const auto after = list(0, 2);
  fill(before, kModula, items(400));
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  WarmerOptions warm;
  warm.ops_per_second = 500;  // a burst of 50
  warm.bytes_per_second = 0;
  Warmer<AnyLocator> warmer(client, warm);
  const auto start = std::chrono::steady_clock::now();
  run_to_end(warmer, 1000);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto settled = static_cast<double>(warmer.progress().totals().settled());
  ASSERT_GT(settled, 150);
  EXPECT_GE(seconds, (settled - 50) / 500 * 0.95) << settled << " keys";
}

TEST_F(WarmerTest, ItBacksOffWhileANewOwnerEvictsAndRestoresWhenItStops) {
  // New owners: a normal server and one with 2 MB, which evicts at once.
  MemcachedServer tiny = MemcachedServer::with_args({"-m", "2"});
  const auto before = list(0, 1);
  std::vector<Server> after = list(0, 2);
  after.push_back(memshard::parse_server(tiny.spec()));
  std::vector<Stored> big = items(60, "big:", 200'000);
  fill(before, kModula, big);
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  WarmerOptions warm;
  warm.ops_per_second = 20'000;
  warm.bytes_per_second = 0;
  warm.eviction_poll_interval = std::chrono::milliseconds{0};  // before every copy
  Warmer<AnyLocator> warmer(client, warm);
  bool slowed = false;
  bool restored = false;
  for (int i = 0; i < 1000 && warmer.step(1); ++i) {
    slowed = slowed || warmer.slowdown() > 1;
    restored = restored || (slowed && warmer.slowdown() == 1);
  }
  ASSERT_TRUE(warmer.done());
  const std::string evictions = tiny.command("stats");
  EXPECT_EQ(evictions.find("STAT evictions 0\r\n"), std::string::npos) << "no eviction";
  EXPECT_GT(warmer.backoffs(), 0U);
  EXPECT_TRUE(slowed);
  EXPECT_TRUE(restored);
}

TEST_F(WarmerTest, FetchedKeysAreCopiedFirst) {
  const auto before = list(0, 1);
  const auto after = list(0, 2);
  const std::string profile = "libmemcached-modula";
  const std::vector<Stored> stored = items(200);
  fill(before, kModula, stored);
  std::vector<std::string> hot;
  std::vector<std::string> cold;
  for (const Stored& item : stored) {
    if (owner(after, profile, item.key).port == after[0].port) {
      continue;  // stays
    }
    if (hot.size() < 10 && cold.size() >= 2 * hot.size()) {
      ASSERT_TRUE(at(after[0]).command("get " + item.key).starts_with("VALUE "));
      hot.push_back(item.key);
    } else {
      cold.push_back(item.key);
    }
  }
  ASSERT_EQ(hot.size(), 10U);
  Client client = memshard::make_client(profile, before, {}, options());
  client.begin_migration(after);
  Warmer<AnyLocator> warmer(client, unlimited());
  EXPECT_TRUE(warmer.step(hot.size()));
  for (const std::string& key : hot) {
    EXPECT_TRUE(look(after[1], key).found) << key << " (fetched) was not copied first";
  }
  for (const std::string& key : cold) {
    EXPECT_FALSE(look(after[1], key).found) << key << " (never fetched) was copied first";
  }
  run_to_end(warmer);
  for (const std::string& key : cold) {
    EXPECT_TRUE(look(after[1], key).found) << key;
  }
}

TEST_F(WarmerTest, OnlyFetchedLeavesItemsNeverReadToTheReadThrough) {
  const auto before = list(0, 1);
  const auto after = list(0, 2);
  const std::string profile = "libmemcached-modula";
  const std::vector<Stored> stored = items(200);
  fill(before, kModula, stored);
  std::vector<std::string> hot;
  std::vector<std::string> cold;
  for (const Stored& item : stored) {
    if (owner(after, profile, item.key).port == after[0].port) {
      continue;  // stays
    }
    if (hot.size() < 10) {
      ASSERT_TRUE(at(after[0]).command("get " + item.key).starts_with("VALUE "));
      hot.push_back(item.key);
    } else {
      cold.push_back(item.key);
    }
  }
  ASSERT_FALSE(cold.empty());
  Client client = memshard::make_client(profile, before, {}, options());
  client.begin_migration(after);
  WarmerOptions warm = unlimited();
  warm.only_fetched = true;
  Warmer<AnyLocator> warmer(client, warm);
  run_to_end(warmer);
  for (const std::string& key : hot) {
    EXPECT_TRUE(look(after[1], key).found) << key << " (fetched) was not copied";
  }
  for (const std::string& key : cold) {
    EXPECT_FALSE(look(after[1], key).found) << key << " (never fetched) was copied";
  }
  const WarmerServerProgress total = warmer.progress().totals();
  EXPECT_EQ(total.eligible, hot.size());
  EXPECT_EQ(total.copied, hot.size());
}

TEST_F(WarmerTest, AServerWhoseCrawlerIsHeldElsewhereIsReportedWithinItsListingTimeout) {
  // Another listing, far larger than the socket buffers, that nobody reads
  // holds the server's crawler: memcached 1.6.18 answers BUSY to another
  // listing only while a crawl is being set up, and otherwise leaves it
  // waiting. Either way the server is reported, within listing_timeout.
  namespace support = memshard::testing::detail;
  const auto before = list(0, 1);
  const auto after = list(0, 2);
  std::vector<Stored> many = items(60'000, "many:" + std::string(200, 'm') + ":", 0);
  for (Stored& item : many) {
    item.value = "v";
  }
  fill(before, kModula, many);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  int error = 0;
  support::FileDescriptor blocker =
      support::connect_loopback(at(before[0]).port(), deadline, error);
  ASSERT_TRUE(blocker.valid()) << error;
  const std::string_view request = "lru_crawler metadump all\r\n";
  ASSERT_EQ(::send(blocker.get(), request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  ASSERT_TRUE(support::wait_for(blocker.get(), POLLIN, deadline));
  char first[4] = {};
  ASSERT_EQ(::recv(blocker.get(), first, sizeof first, MSG_PEEK), 4);
  ASSERT_EQ(std::string_view(first, 4), "key=") << "the blocking listing did not start";

  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  WarmerOptions warm = unlimited();
  warm.busy_retries = 2;
  warm.busy_retry_delay = std::chrono::milliseconds{10};
  warm.listing_timeout = std::chrono::seconds{1};
  Warmer<AnyLocator> warmer(client, warm);
  const auto start = std::chrono::steady_clock::now();
  run_to_end(warmer);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds{3});
  const WarmerProgress progress = warmer.progress();
  const WarmerServerProgress& p = progress.servers[0];
  EXPECT_TRUE(p.error.starts_with(before[0].endpoint() + ": lru_crawler metadump all: "))
      << p.error;
  EXPECT_TRUE(p.error.find("BUSY") != std::string::npos ||
              p.error.find("deadline passed") != std::string::npos)
      << p.error;
  EXPECT_TRUE(p.done());
  EXPECT_EQ(p.scanned, 0U);

  // The crawler is free again once the blocking listing's reader is gone.
  blocker.reset();
  ASSERT_EQ(at(before[0]).command("flush_all"), "OK\r\n");
  bool busy = true;
  while (busy && std::chrono::steady_clock::now() < deadline) {
    busy = at(before[0]).command("lru_crawler metadump all").starts_with("BUSY");
  }
  EXPECT_FALSE(busy);
}

// A metadump walks the LRUs while they change and may list an item twice: the warmer queues,
// counts and copies each key once (scanned counts the lines).
TEST_F(WarmerTest, AnItemListedTwiceIsQueuedAndCopiedOnce) {
  const RepeatingRelay relay((*servers_)[0].port());
  const std::vector<Server> before = {memshard::parse_server(relay.spec())};
  const std::vector<Server> after = {before[0], list(1, 1)[0]};
  const std::vector<Stored> stored = items(200);
  fill(list(0, 1), kModula, stored);
  std::vector<std::string> moved;
  for (const Stored& item : stored) {
    if (owner(after, "libmemcached-modula", item.key).port == after[1].port) {
      moved.push_back(item.key);
    }
  }
  ASSERT_GT(moved.size(), 50U);
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  Warmer<AnyLocator> warmer(client, unlimited());
  run_to_end(warmer);
  const WarmerServerProgress p = warmer.progress().servers[0];
  EXPECT_GE(relay.repeated(), stored.size()) << "the relay did not repeat the listing";
  EXPECT_EQ(p.scanned, 2 * relay.repeated()) << p.to_json();
  EXPECT_EQ(p.eligible, moved.size()) << p.to_json();
  EXPECT_EQ(p.copied, moved.size()) << p.to_json();
  EXPECT_EQ(p.already_present, 0U) << p.to_json();
  expect_settled(p);
  for (const std::string& key : moved) {
    EXPECT_TRUE(look(after[1], key).found) << key;
  }
}

TEST_F(WarmerTest, AtMostMaxKeysPerServerAreKept) {
  const auto before = list(0, 2);
  const auto after = list(0, 3);
  fill(before, kModula, items(300));
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  WarmerOptions warm = unlimited();
  warm.max_keys_per_server = 10;
  Warmer<AnyLocator> warmer(client, warm);
  run_to_end(warmer);
  const WarmerProgress progress = warmer.progress();
  for (const WarmerServerProgress& p : progress.servers) {
    EXPECT_EQ(p.eligible, 10U) << p.to_json();
    EXPECT_EQ(p.copied, 10U) << p.to_json();
    EXPECT_GT(p.scanned, 100U) << p.to_json();  // the whole listing was read
    expect_settled(p);
  }
}

// A client with a key prefix (placed by the bare key, as php-memcached's
// OPT_PREFIX_KEY) copies its own moved keys, placed by their bare keys, and
// leaves another application's keys on the same servers alone.
TEST_F(WarmerTest, APrefixedClientCopiesOnlyItsOwnKeys) {
  const auto before = list(0, 3);
  const auto after = list(0, 4);
  std::vector<Stored> mine = items(300, "app:key:");
  fill(
      before,
      [](memcached_st* memc) {
        memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
        ASSERT_EQ(memcached_callback_set(memc, MEMCACHED_CALLBACK_NAMESPACE, "app:"),
                  MEMCACHED_SUCCESS);
      },
      items(300, "key:"));  // stored by libmemcached as app:key:N, placed by key:N
  const std::vector<Stored> theirs = items(300, "other:");
  fill(before, kKetamaWeighted, theirs);
  ClientOptions prefixed = options();
  prefixed.key_prefix = "app:";
  Client client = memshard::make_client("libmemcached-ketama-weighted", before, {}, prefixed);
  client.begin_migration(after);
  Warmer<AnyLocator> warmer(client, unlimited());
  run_to_end(warmer);
  std::uint64_t copied = 0;
  std::uint64_t eligible = 0;
  for (const WarmerServerProgress& p : warmer.progress().servers) {
    expect_settled(p);
    copied += p.copied;
    eligible += p.eligible;
  }
  std::size_t moved = 0;
  for (std::size_t i = 0; i < 300; ++i) {
    const std::string bare = "key:" + std::to_string(i);
    const Server old_owner = owner(before, "libmemcached-ketama-weighted", bare);
    const Server new_owner = owner(after, "libmemcached-ketama-weighted", bare);
    if (old_owner.port != new_owner.port) {
      ++moved;
      EXPECT_TRUE(look(new_owner, mine[i].key).found) << mine[i].key;
    }
  }
  EXPECT_GT(moved, 20U);
  EXPECT_EQ(copied, moved);
  EXPECT_EQ(eligible, moved);  // the other application's moved keys are not even queued
  for (const Stored& item : theirs) {
    const Server new_owner = owner(after, "libmemcached-ketama-weighted", item.key);
    if (owner(before, "libmemcached-ketama-weighted", item.key).port != new_owner.port) {
      EXPECT_FALSE(look(new_owner, item.key).found) << item.key << " is not the client's";
    }
  }
  EXPECT_TRUE(client.commit_migration());
  for (std::size_t i = 0; i < 300; ++i) {
    const auto hit = client.get("key:" + std::to_string(i));
    ASSERT_TRUE(hit.ok() && hit->has_value()) << i;
  }
}

// A listing that the old server sends slowly (a fault proxy in front of it
// trickles its replies: about 0.8 s for this one) is read across steps: no
// step with a time budget and no run_for outlasts its budget by more than the
// slack, and every few steps the listing moves on. Once it is read, the
// copies are those of a listing read in one go.
TEST_F(WarmerTest, ATimeBudgetBoundsEveryStepWhileASlowListingIsReadAcrossSteps) {
  FaultProxy proxy((*servers_)[0].port());
  const std::vector<Server> before = {memshard::parse_server(proxy.spec())};
  const std::vector<Server> after = list(1, 2);  // the old server retires: every key moves
  const std::vector<Stored> stored = items(600);
  fill(before, kModula, stored);
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  Warmer<AnyLocator> warmer(client, unlimited());
  proxy.set_trickle(Direction::kDownstream, 512, std::chrono::milliseconds{10});

  const auto scan = [&warmer] { return warmer.progress().servers[0]; };
  std::chrono::milliseconds longest{0};
  const std::chrono::milliseconds first = timed([&] { EXPECT_TRUE(warmer.run_for(kRunBudget)); });
  EXPECT_LE(first, kRunBudget + kSlack);
  ASSERT_FALSE(scan().scan_done) << "the listing was not slow enough to test anything";
  std::size_t steps = 0;
  std::size_t moved_on = 0;  // steps after which more items were scanned
  for (std::uint64_t scanned = scan().scanned; !scan().scan_done && steps < 1000; ++steps) {
    const std::chrono::milliseconds took =
        timed([&] { EXPECT_TRUE(warmer.step(WarmerBudget::time(kStepBudget))); });
    EXPECT_LE(took, kStepBudget + kSlack) << "step " << steps;
    longest = std::max(longest, took);
    if (scan().scanned > scanned) {
      ++moved_on;
      scanned = scan().scanned;
    }
  }
  ASSERT_TRUE(scan().scan_done);
  EXPECT_EQ(scan().error, "");
  EXPECT_GE(steps, 4U) << "the listing took too few steps to test anything";
  EXPECT_GE(moved_on, 3U);
  RecordProperty("first_run_for_ms", static_cast<int>(first.count()));
  RecordProperty("longest_step_ms", static_cast<int>(longest.count()));
  RecordProperty("listing_steps", static_cast<int>(steps));

  // The copies, at full speed: every item, once.
  proxy.heal();
  for (int i = 0; i < 1000 && !warmer.done(); ++i) {
    const std::chrono::milliseconds took =
        timed([&] { static_cast<void>(warmer.run_for(kRunBudget)); });
    EXPECT_LE(took, kRunBudget + kSlack) << "run_for " << i;
  }
  ASSERT_TRUE(warmer.done());
  const WarmerServerProgress p = scan();
  expect_settled(p);
  EXPECT_GE(p.scanned, stored.size());  // an item may be listed twice
  EXPECT_LE(p.scanned, stored.size() + stored.size() / 10);
  EXPECT_EQ(p.eligible, stored.size());
  EXPECT_EQ(p.copied, stored.size());
  for (const Stored& item : stored) {
    EXPECT_EQ(look(owner(after, "libmemcached-modula", item.key), item.key).value, item.value)
        << item.key;
  }
}

// A listing that stops halfway and never ends (the proxy forwards nothing
// more) is reported once listing_timeout has passed, while every step keeps
// to its budget meanwhile.
TEST_F(WarmerTest, AListingThatNeverEndsIsReportedAfterItsTimeoutWithEveryStepInBudget) {
  FaultProxy proxy((*servers_)[0].port());
  const std::vector<Server> before = {memshard::parse_server(proxy.spec())};
  const std::vector<Server> after = list(1, 1);
  fill(before, kModula, items(600));
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  WarmerOptions warm = unlimited();
  warm.listing_timeout = std::chrono::milliseconds{1000};
  warm.only_fetched = true;  // nothing was read: no copy, only the listing
  Warmer<AnyLocator> warmer(client, warm);
  // Each connection's first 4096 bytes: the stats (about 2.2 KB) and a part
  // of the listing.
  proxy.set_limit(Direction::kDownstream, 4096, LimitAction::kStall);

  const auto start = std::chrono::steady_clock::now();
  std::size_t steps = 0;
  for (; !warmer.progress().servers[0].scan_done && steps < 1000; ++steps) {
    const std::chrono::milliseconds took =
        timed([&] { static_cast<void>(warmer.step(WarmerBudget::time(kStepBudget))); });
    EXPECT_LE(took, kStepBudget + kSlack) << "step " << steps;
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  const WarmerServerProgress p = warmer.progress().servers[0];
  ASSERT_TRUE(p.scan_done);
  EXPECT_TRUE(p.error.starts_with(before[0].endpoint() + ": lru_crawler metadump all: "))
      << p.error;
  EXPECT_NE(p.error.find("deadline passed"), std::string::npos) << p.error;
  EXPECT_GT(p.scanned, 0U);
  EXPECT_LT(p.scanned, 600U);
  EXPECT_GE(waited, warm.listing_timeout);
  EXPECT_LT(waited, warm.listing_timeout + std::chrono::seconds{1});
  EXPECT_GE(steps, 10U);
  EXPECT_TRUE(warmer.done());
}

TEST_F(WarmerTest, StepAndRunFor) {
  const auto before = list(0, 1);
  const auto after = list(0, 2);
  fill(before, kModula, items(100));
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  std::vector<WarmerProgress> reports;
  WarmerOptions warm = unlimited();
  warm.chunk_size = 7;
  warm.on_progress = [&reports](const WarmerProgress& progress) { reports.push_back(progress); };
  Warmer<AnyLocator> warmer(client, warm);
  EXPECT_TRUE(warmer.step(5));  // lists the server, then 5 copies
  const WarmerServerProgress first = warmer.progress().totals();
  EXPECT_TRUE(first.scan_done);
  // About the 100 items stored: metadump is a live walk of the server's LRUs, not a snapshot,
  // so an item the LRU maintainer moves during the walk may be listed twice, or (rarely) not
  // at all; scanned counts what was listed.
  EXPECT_GE(first.scanned, 90U);
  EXPECT_LE(first.scanned, 110U);
  EXPECT_EQ(first.settled(), 5U);
  EXPECT_GT(first.eligible, 5U);
  EXPECT_TRUE(warmer.step(0));  // nothing
  EXPECT_EQ(warmer.progress().totals().settled(), 5U);
  EXPECT_FALSE(warmer.run_for(std::chrono::seconds{60}));
  EXPECT_TRUE(warmer.done());
  EXPECT_EQ(warmer.progress().totals().settled(), first.eligible);
  EXPECT_FALSE(warmer.run_for(std::chrono::seconds{1}));
  ASSERT_FALSE(reports.empty());
  EXPECT_TRUE(reports.back().done());
  EXPECT_EQ(reports.back(), warmer.progress());
}

TEST_F(WarmerTest, ServersThatCannotBeListedAreReportedNotThrown) {
  MemcachedServer gone;
  MemcachedServer no_dump = MemcachedServer::with_args({"-X"});
  std::vector<Server> before = list(0, 1);
  before.push_back(memshard::parse_server(gone.spec()));
  before.push_back(memshard::parse_server(no_dump.spec()));
  const auto after = list(0, 2);
  fill(before, kModula, items(150));
  gone.stop();
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  Warmer<AnyLocator> warmer(client, unlimited());
  run_to_end(warmer);
  const WarmerProgress progress = warmer.progress();
  ASSERT_EQ(progress.servers.size(), 3U);
  expect_settled(progress.servers[0]);
  EXPECT_GT(progress.servers[0].copied, 0U);
  EXPECT_NE(progress.servers[1].error.find(gone.spec()), std::string::npos)
      << progress.servers[1].error;
  EXPECT_TRUE(progress.servers[1].done());
  EXPECT_NE(progress.servers[2].error.find("metadump"), std::string::npos)
      << progress.servers[2].error;
  EXPECT_TRUE(progress.servers[2].done());
  EXPECT_NE(progress.to_json().find("\"error\":"), std::string::npos);
}

TEST_F(WarmerTest, AMigrationThatEndsUnderItLeavesNothingPending) {
  const auto before = list(0, 1);
  const auto after = list(0, 2);
  fill(before, kModula, items(100));
  Client client = memshard::make_client("libmemcached-modula", before, {}, options());
  client.begin_migration(after);
  Warmer<AnyLocator> warmer(client, unlimited());
  EXPECT_TRUE(warmer.step(3));
  ASSERT_TRUE(client.commit_migration());
  EXPECT_FALSE(warmer.step(100));
  const WarmerServerProgress total = warmer.progress().totals();
  EXPECT_EQ(total.copied, 3U);
  EXPECT_EQ(total.failed, total.eligible - 3);
  EXPECT_NE(warmer.progress().servers[0].error.find("migration ended"), std::string::npos);
}

TEST_F(WarmerTest, ConfigErrors) {
  Client client = memshard::make_client("libmemcached-modula", list(0, 2), {}, options());
  EXPECT_THROW(Warmer<AnyLocator>(client, unlimited()), ConfigError);  // no migration
  client.begin_migration(list(0, 3));
  WarmerOptions zero_chunk = unlimited();
  zero_chunk.chunk_size = 0;
  EXPECT_THROW(Warmer<AnyLocator>(client, zero_chunk), ConfigError);
  WarmerOptions factor = unlimited();
  factor.backoff_factor = 0.5;
  EXPECT_THROW(Warmer<AnyLocator>(client, factor), ConfigError);
  WarmerOptions no_clock = unlimited();
  no_clock.clock = nullptr;
  EXPECT_THROW(Warmer<AnyLocator>(client, no_clock), ConfigError);
  EXPECT_NO_THROW(Warmer<AnyLocator>(client, unlimited()));
}

}  // namespace
}  // namespace warmer_test
