// SPDX-License-Identifier: MIT
// A live migration through ShardedClient, against real memcached servers
// started by the tests (migration/migration_paths.hpp holds the rules): read
// through with flags and a bounded TTL, no extra round trip on a hit or a
// same-owner miss, deletes old then new, writes that invalidate the old copy
// (no resurrection), counters and appends that move, cas after a copy, move on
// copy, multi-gets with one more fan-out, clones, commit, abort, a dead or
// stopped old owner (tainted), a placement change, and concurrent readers and
// writers that count stale reads.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/memcached_server.hpp"
#include "support/scripted_server.hpp"
#include "support/server_set.hpp"
#include "support/stopped_process.hpp"

namespace migration_paths_test {
namespace {

using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::Errc;
using memshard::Expiry;
using memshard::MigrationConsistency;
using memshard::MigrationOptions;
using memshard::MoveOnCopy;
using memshard::Server;
using memshard::testing::MemcachedServer;
using memshard::testing::ServerSet;
using memshard::testing::StoppedProcess;
using Ring = memshard::KetamaLocator<memshard::Md5>;
using Client = memshard::ShardedClient<Ring>;

constexpr std::size_t kServers = 5;

// Five servers shared by the suite, flushed before every test.
class MigrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<ServerSet>(kServers); }
  static void TearDownTestSuite() { servers_.reset(); }
  void SetUp() override { ASSERT_TRUE(servers_->reset()); }
  void TearDown() override {
    for (auto& server : *servers_) {
      if (server.running()) {
        (void)::kill(server.pid(), SIGCONT);  // a test that stopped one and failed
      }
    }
  }

  // Servers [first, first + count).
  static auto list(std::size_t first, std::size_t count) -> std::vector<Server> {
    return servers_->list(first, count);
  }
  static auto server(std::size_t i) -> MemcachedServer& { return (*servers_)[i]; }

  // The test server at `endpoint`.
  static auto at(const Server& s) -> MemcachedServer& {
    for (auto& server : *servers_) {
      if (server.port() == s.port) {
        return server;
      }
    }
    ADD_FAILURE() << "no server " << s.endpoint();
    return (*servers_)[0];
  }
  static auto holds(const Server& s, std::string_view key) -> bool {
    return at(s).command("get " + std::string(key)).starts_with("VALUE ");
  }
  static auto stat(const Server& s, std::string_view name) -> std::uint64_t {
    const std::string stats = at(s).command("stats");
    const std::string field = "STAT " + std::string(name) + " ";
    const auto found = stats.find(field);
    EXPECT_NE(found, std::string::npos) << name;
    return found == std::string::npos ? 0 : std::stoull(stats.substr(found + field.size()));
  }
  // The remaining TTL of `key` on `s` (meta mg t), or -2 when absent.
  static auto ttl(const Server& s, std::string_view key) -> long long {
    const std::string reply = at(s).command("mg " + std::string(key) + " t");
    const auto t = reply.find(" t");
    if (!reply.starts_with("HD") || t == std::string::npos) {
      return -2;
    }
    return std::stoll(reply.substr(t + 2));
  }

  // Keys whose owner changes from `before` to `after` (placed by Ring), and
  // keys whose owner stays.
  struct Split {
    std::vector<std::string> moved;
    std::vector<std::string> stayed;
  };
  static auto split(const std::vector<Server>& before, const std::vector<Server>& after,
                    std::size_t count, std::string_view prefix = "key:") -> Split {
    const Ring old_ring(before);
    const Ring new_ring(after);
    Split out;
    for (std::size_t i = 0; i < count; ++i) {
      std::string key = std::string(prefix) + std::to_string(i);
      const Server& was = before[old_ring.locate(key)];
      const Server& is = after[new_ring.locate(key)];
      (was.port == is.port ? out.stayed : out.moved).push_back(std::move(key));
    }
    return out;
  }
  static auto old_owner(const std::vector<Server>& before, std::string_view key) -> Server {
    return before[Ring(before).locate(key)];
  }

  static auto options() -> ClientOptions {
    ClientOptions options;
    options.connect_timeout = std::chrono::milliseconds{200};
    options.io_timeout = std::chrono::milliseconds{200};
    options.failure_limit = 100;  // the tests decide when a server is out
    return options;
  }

  static inline std::unique_ptr<ServerSet> servers_;
};

TEST_F(MigrationTest, AMovedKeyIsReadThroughOnceWithItsFlagsAndCopiedForward) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  ASSERT_GE(keys.moved.size(), 10U);
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(client.set(key, "v-" + key, Expiry::after(std::chrono::seconds{500}), 0x50));
  }
  client.begin_migration(after);
  EXPECT_TRUE(client.migration_stats().active);
  for (const auto& key : keys.moved) {
    auto hit = client.get(key);
    ASSERT_TRUE(hit.ok()) << hit.status();
    ASSERT_TRUE(hit.value().has_value()) << key;
    EXPECT_EQ(hit.value()->value, "v-" + key);
    EXPECT_EQ(hit.value()->flags, 0x50U);
    const Server now = client.server_for(key);
    EXPECT_TRUE(holds(now, key)) << key << " was not copied to " << now.endpoint();
    // Move on copy: the old server stays in the list, so its copy goes.
    EXPECT_FALSE(holds(old_owner(before, key), key)) << key;
    // The copy expires when the source would have.
    const long long left = ttl(now, key);
    EXPECT_GT(left, 490) << key;
    EXPECT_LE(left, 500) << key;
  }
  const auto stats = client.migration_stats();
  EXPECT_EQ(stats.fallback_hits, keys.moved.size());
  EXPECT_EQ(stats.copies_stored, keys.moved.size());
  EXPECT_EQ(stats.old_copies_moved, keys.moved.size());
  EXPECT_EQ(stats.copies_revoked, 0U);
  // Read again: the new owners answer.
  for (const auto& key : keys.moved) {
    EXPECT_TRUE(client.get(key).value().has_value());
  }
  EXPECT_EQ(client.migration_stats().new_hits, keys.moved.size());
  EXPECT_EQ(client.migration_stats().fallback_hits, keys.moved.size());
}

TEST_F(MigrationTest, AHitAndASameOwnerMissCostNoRoundTripOnTheOldOwnerAMovedMissOne) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 400);
  client.begin_migration(after);
  // A same-owner miss: nothing but the new owner's get.
  std::vector<std::uint64_t> gets;
  for (const auto& s : after) {
    gets.push_back(stat(s, "cmd_get"));
  }
  ASSERT_FALSE(client.get(keys.stayed.front()).value().has_value());
  for (std::size_t s = 0; s < after.size(); ++s) {
    const std::uint64_t expected =
        gets[s] + (after[s].port == client.server_for(keys.stayed.front()).port ? 1 : 0);
    EXPECT_EQ(stat(after[s], "cmd_get"), expected) << after[s].endpoint();
  }
  // A moved miss: exactly one more get, on the old owner.
  const std::string& moved = keys.moved.front();
  const Server old = old_owner(before, moved);
  const std::uint64_t old_gets = stat(old, "cmd_get");
  ASSERT_FALSE(client.get(moved).value().has_value());
  EXPECT_EQ(stat(old, "cmd_get"), old_gets + 1);
  // A hit on the new owner: no request to the old one.
  ASSERT_TRUE(client.set(moved, "x"));
  const std::uint64_t old_gets_after_set = stat(old, "cmd_get");
  ASSERT_TRUE(client.get(moved).value().has_value());
  EXPECT_EQ(stat(old, "cmd_get"), old_gets_after_set);
  const auto stats = client.migration_stats();
  EXPECT_EQ(stats.same_owner_misses, 1U);
  EXPECT_EQ(stats.fallback_misses, 1U);
  EXPECT_EQ(stats.new_hits, 1U);
}

TEST_F(MigrationTest, ACopyKeepsTheSourcesExactRemainingTtl) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  ASSERT_GE(keys.moved.size(), 4U);
  ASSERT_TRUE(client.set(keys.moved[0], "a", Expiry::after(std::chrono::seconds{5000})));
  ASSERT_TRUE(client.set(keys.moved[1], "b"));  // never expires
  ASSERT_TRUE(client.set(keys.moved[2], "c", Expiry::after(std::chrono::seconds{70})));
  // Over 30 days: the copy's exptime must be sent as a date.
  ASSERT_TRUE(client.set(keys.moved[3], "d", Expiry::after(std::chrono::hours{24 * 40})));
  client.begin_migration(after);
  for (std::size_t k = 0; k < 4; ++k) {
    const long long source = ttl(old_owner(before, keys.moved[k]), keys.moved[k]);
    ASSERT_TRUE(client.get(keys.moved[k]).value().has_value()) << k;
    const long long copy = ttl(client.server_for(keys.moved[k]), keys.moved[k]);
    if (k == 1) {
      EXPECT_EQ(source, -1);
      EXPECT_EQ(copy, -1) << "a source that never expires keeps that";
    } else {
      EXPECT_GT(source, 0) << k;
      EXPECT_LE(std::abs(copy - source), 1) << k << ": source " << source << ", copy " << copy;
    }
  }
  EXPECT_EQ(client.migration_stats().copies_ttl_exact, 4U);
  EXPECT_EQ(client.migration_stats().copies_ttl_capped, 0U);
}

TEST_F(MigrationTest, RemoveDeletesTheOldCopyThenTheNewOne) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  const std::string& key = keys.moved.front();
  ASSERT_TRUE(client.set(key, "v0"));
  client.begin_migration(after);
  EXPECT_TRUE(client.remove(key));  // only the old owner had it
  EXPECT_FALSE(holds(old_owner(before, key), key));
  EXPECT_FALSE(client.get(key).value().has_value());
  EXPECT_EQ(client.remove(key).code(), Errc::kNotFound);  // neither has it
  // Both hold it: both lose it.
  ASSERT_TRUE(
      at(old_owner(before, key)).command("set " + key + " 0 0 2\r\nv1").starts_with("STORED"));
  ASSERT_TRUE(client.set(key, "v2"));  // the new owner; the old copy is invalidated
  EXPECT_FALSE(holds(old_owner(before, key), key));
  EXPECT_TRUE(client.remove(key));
  EXPECT_FALSE(holds(client.server_for(key), key));
  EXPECT_GE(client.migration_stats().invalidations, 3U);
}

TEST_F(MigrationTest, AWriteInvalidatesTheOldCopySoAnEvictedNewCopyDoesNotResurrectIt) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  const std::string& key = keys.moved.front();
  ASSERT_TRUE(client.set(key, "v0"));
  client.begin_migration(after);
  ASSERT_TRUE(client.set(key, "v1"));
  EXPECT_FALSE(holds(old_owner(before, key), key));
  // The new copy goes (evicted, expired): the next read must not find v0.
  ASSERT_EQ(at(client.server_for(key)).command("delete " + key), "DELETED\r\n");
  EXPECT_FALSE(client.get(key).value().has_value());
  // cas, touch and the other stores too.
  const std::string& other = keys.moved.at(1);
  ASSERT_TRUE(
      at(old_owner(before, other)).command("set " + other + " 0 0 2\r\nv0").starts_with("STORED"));
  ASSERT_TRUE(client.replace(other, "v1"));  // moves the base, then replaces
  EXPECT_FALSE(holds(old_owner(before, other), other));
  auto hit = client.get(other);
  ASSERT_TRUE(hit.value().has_value());
  EXPECT_EQ(hit.value()->value, "v1");
}

TEST_F(MigrationTest, CountersAndAppendsMoveBeforeTheyChange) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  const std::string& counter = keys.moved.at(0);
  const std::string& text = keys.moved.at(1);
  ASSERT_TRUE(client.set(counter, "41"));
  ASSERT_TRUE(client.set(text, "ab"));
  client.begin_migration(after);
  auto value = client.incr(counter, 1);
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(value.value(), 42U);
  EXPECT_FALSE(holds(old_owner(before, counter), counter));  // a counter always moves
  ASSERT_TRUE(client.append(text, "cd"));
  auto hit = client.get(text);
  ASSERT_TRUE(hit.value().has_value());
  EXPECT_EQ(hit.value()->value, "abcd");
  EXPECT_FALSE(holds(old_owner(before, text), text));
  EXPECT_EQ(client.migration_stats().counters_moved, 2U);
  // A counter on neither owner is a real miss.
  EXPECT_EQ(client.incr(keys.moved.at(2), 1).status().code(), Errc::kNotFound);
  // add is refused for a key only the old owner holds (it moves first).
  const std::string& taken = keys.moved.at(3);
  ASSERT_TRUE(
      at(old_owner(before, taken)).command("set " + taken + " 0 0 1\r\nx").starts_with("STORED"));
  EXPECT_EQ(client.add(taken, "y").code(), Errc::kNotStored);
  EXPECT_EQ(client.get(taken).value()->value, "x");
}

TEST_F(MigrationTest, AGetAfterACopyAnswersTheNewOwnersCas) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  const std::string& key = keys.moved.front();
  ASSERT_TRUE(client.set(key, "v0"));
  client.begin_migration(after);
  auto hit = client.get(key);
  ASSERT_TRUE(hit.value().has_value());
  EXPECT_TRUE(client.cas(key, "v1", hit.value()->cas)) << "the cas came from the old owner";
  EXPECT_EQ(client.get(key).value()->value, "v1");
}

TEST_F(MigrationTest, ARetiringServerKeepsItsCopiesAndAnEmptyOneIsJustAMiss) {
  const auto before = list(0, 5);
  const auto after = list(0, 4);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  ASSERT_FALSE(keys.moved.empty());
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(client.set(key, "v"));
  }
  client.begin_migration(after);
  EXPECT_EQ(client.servers().size(), 4U);
  EXPECT_EQ(client.stats().size(), 5U);  // the retiring server still takes reads
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(client.get(key).value().has_value()) << key;
    EXPECT_TRUE(holds(old_owner(before, key), key)) << "a retiring server is only read";
  }
  EXPECT_EQ(client.migration_stats().old_copies_moved, 0U);
}

TEST_F(MigrationTest, MultiGetReadsTheMovedMissesInOneMoreFanOut) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  std::vector<std::string_view> all;
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(client.set(key, "m" + key, Expiry{}, 7));
    all.push_back(key);
  }
  for (std::size_t i = 0; i < 20; ++i) {
    ASSERT_TRUE(client.set(keys.stayed[i], "s"));
    all.push_back(keys.stayed[i]);
  }
  all.push_back("never-stored");
  client.begin_migration(after);
  auto result = client.get_multi(all);
  for (std::size_t i = 0; i + 1 < all.size(); ++i) {
    ASSERT_TRUE(result.items[i].has_value()) << all[i];
    EXPECT_TRUE(result.statuses[i].ok());
  }
  EXPECT_FALSE(result.items.back().has_value());
  for (std::size_t i = 0; i < keys.moved.size(); ++i) {
    EXPECT_EQ(result.items[i]->value, "m" + keys.moved[i]);
    EXPECT_EQ(result.items[i]->flags, 7U);
  }
  auto stats = client.migration_stats();
  EXPECT_EQ(stats.fallback_hits, keys.moved.size());
  EXPECT_EQ(stats.copies_stored, keys.moved.size());
  // The second time, every moved key is on its new owner: the old owners
  // (servers 0-3: in 4 -> 5 every moved key goes to the new server) get no
  // request for them.
  std::vector<std::uint64_t> gets;
  for (const auto& s : before) {
    gets.push_back(stat(s, "cmd_get"));
  }
  const std::vector<std::string_view> moved(
      all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keys.moved.size()));
  result = client.get_multi(moved);
  EXPECT_EQ(result.hits(), moved.size());
  for (std::size_t s = 0; s < before.size(); ++s) {
    EXPECT_EQ(stat(before[s], "cmd_get"), gets[s]) << before[s].endpoint();
  }
  stats = client.migration_stats();
  EXPECT_EQ(stats.fallback_hits, keys.moved.size());
}

TEST_F(MigrationTest, MigrateKeyCopiesOneKeyAndSaysWhatItDid) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  ASSERT_GE(keys.moved.size(), 3U);
  EXPECT_EQ(client.migrate_key(keys.moved[0]), memshard::KeyMigration::kNoMigration);
  ASSERT_TRUE(client.set(keys.moved[0], "a", Expiry::after(std::chrono::seconds{300}), 3));
  ASSERT_TRUE(client.set(keys.moved[1], "b"));
  ASSERT_TRUE(client.set(keys.stayed[0], "c"));
  client.begin_migration(after);
  EXPECT_EQ(client.migrate_key(keys.moved[0]), memshard::KeyMigration::kCopied);
  EXPECT_TRUE(holds(client.server_for(keys.moved[0]), keys.moved[0]));
  EXPECT_FALSE(holds(old_owner(before, keys.moved[0]), keys.moved[0]));
  EXPECT_EQ(client.migrate_key(keys.moved[0]), memshard::KeyMigration::kNotOnOldOwner);
  ASSERT_EQ(at(client.server_for(keys.moved[1])).command("set " + keys.moved[1] + " 0 0 1\r\nn"),
            "STORED\r\n");
  EXPECT_EQ(client.migrate_key(keys.moved[1]), memshard::KeyMigration::kAlreadyPresent);
  EXPECT_EQ(client.migrate_key(keys.stayed[0]), memshard::KeyMigration::kSameOwner);
  EXPECT_EQ(client.migrate_key("bad key"), memshard::KeyMigration::kInvalidKey);
  auto hit = client.get(keys.moved[0]);
  ASSERT_TRUE(hit.value().has_value());
  EXPECT_EQ(hit.value()->flags, 3U);
  EXPECT_EQ(memshard::to_string(memshard::KeyMigration::kCopied), "copied");
}

TEST_F(MigrationTest, ClonesAreInTheMigrationFromTheirNextCall) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  Client clone = client.clone();
  const Split keys = split(before, after, 200);
  ASSERT_TRUE(client.set(keys.moved.front(), "v"));
  client.begin_migration(after);
  EXPECT_TRUE(clone.migration_stats().active);
  EXPECT_TRUE(clone.get(keys.moved.front()).value().has_value());
  EXPECT_EQ(client.migration_stats().fallback_hits, 1U);  // one family, one count
  EXPECT_TRUE(clone.commit_migration());
  EXPECT_FALSE(client.migration_stats().active);
  EXPECT_EQ(client.servers().size(), 5U);
  EXPECT_FALSE(client.commit_migration());
}

TEST_F(MigrationTest, CommitDropsTheOldPlacementAbortGoesBackWithoutStaleCopies) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  const std::string& written = keys.moved.at(0);
  const std::string& untouched = keys.moved.at(1);
  ASSERT_TRUE(client.set(written, "v0"));
  ASSERT_TRUE(client.set(untouched, "u"));
  client.begin_migration(after);
  ASSERT_TRUE(client.set(written, "v1"));
  EXPECT_TRUE(client.abort_migration());
  EXPECT_EQ(client.servers().size(), 4U);
  EXPECT_FALSE(client.get(written).value().has_value()) << "v0 must not come back";
  EXPECT_TRUE(client.get(untouched).value().has_value());
  // Commit: moved keys not copied are misses.
  client.begin_migration(after);
  EXPECT_TRUE(client.commit_migration());
  EXPECT_FALSE(client.get(untouched).value().has_value());
  EXPECT_FALSE(client.migration_stats().active);
}

TEST_F(MigrationTest, ConfigurationMistakesThrowAndChangeNothing) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  MigrationOptions bad;
  bad.copy_ttl_cap = std::chrono::seconds{0};
  EXPECT_THROW(client.begin_migration(after, bad), ConfigError);
  EXPECT_FALSE(client.migration_stats().active);
  EXPECT_THROW(client.begin_migration({}), ConfigError);
  client.begin_migration(after);
  EXPECT_THROW(client.begin_migration(after), ConfigError);
  EXPECT_THROW(client.reconfigure(before), ConfigError);
  EXPECT_EQ(client.servers().size(), 5U);
  EXPECT_TRUE(client.abort_migration());
  EXPECT_FALSE(client.abort_migration());
}

TEST_F(MigrationTest, ADeadOldOwnerIsAMissWithinTheFallbackTimeout) {
  const auto before = list(0, 5);
  const auto after = list(0, 4);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(client.set(key, "v"));
  }
  MigrationOptions migration;
  migration.fallback_timeout = std::chrono::milliseconds{100};
  client.begin_migration(after, migration);
  server(4).stop();  // the retiring server
  for (const auto& key : keys.moved) {
    const auto start = std::chrono::steady_clock::now();
    auto got = client.get(key);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_FALSE(got.value().has_value());
    EXPECT_LT(took, std::chrono::milliseconds{100 + 200 + 50})
        << key;  // new owner's get + fallback
  }
  EXPECT_EQ(client.migration_stats().fallback_skipped, keys.moved.size());
}

TEST_F(MigrationTest, ADeadNewOwnerFollowsTheClientsFailurePolicy) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  const Split keys = split(before, after, 300);
  ASSERT_FALSE(keys.moved.empty());
  Client fail_fast(before, options());
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(fail_fast.set(key, "v"));
  }
  fail_fast.begin_migration(after);
  server(4).stop();  // every key of 4 -> 5 moves to the new server
  auto got = fail_fast.get(keys.moved.front());
  EXPECT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Errc::kConnectionFailure) << got.status();
  EXPECT_EQ(fail_fast.migration_stats().fallback_hits, 0U);
  // kFailover: once the new owner is ejected, its keys go to the next live
  // server of the new ring, which for a ring that only grew is the old
  // owner: every key is a hit there, with no fallback at all.
  ClientOptions failover = options();
  failover.failure_policy = memshard::FailurePolicy::kFailover;
  failover.failure_limit = 1;
  Client client(before, failover);
  client.begin_migration(after);
  (void)client.get(keys.moved.front());  // ejects the new server
  for (const auto& key : keys.moved) {
    auto hit = client.get(key);
    ASSERT_TRUE(hit.ok()) << hit.status();
    EXPECT_TRUE(hit.value().has_value()) << key;
  }
  EXPECT_EQ(client.migration_stats().fallback_hits, 0U);
}

TEST_F(MigrationTest, AStoppedOldOwnerThatLostAnInvalidationIsNeverReadAgain) {
  const auto before = list(0, 5);
  const auto after = list(0, 4);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  ASSERT_GE(keys.moved.size(), 2U);
  const std::string& key = keys.moved.front();
  ASSERT_TRUE(client.set(key, "v0"));
  ASSERT_TRUE(client.set(keys.moved[1], "w0"));
  client.begin_migration(after);
  ASSERT_EQ(::kill(server(4).pid(), SIGSTOP), 0);
  ASSERT_TRUE(client.set(key, "v1"));  // the invalidation of v0 times out
  ASSERT_EQ(::kill(server(4).pid(), SIGCONT), 0);
  EXPECT_EQ(client.migration_stats().invalidations_failed, 1U);
  EXPECT_EQ(client.migration_stats().tainted_servers, 1U);
  ASSERT_EQ(at(client.server_for(key)).command("delete " + key), "DELETED\r\n");
  EXPECT_FALSE(client.get(key).value().has_value()) << "v0 came back from a tainted server";
  EXPECT_FALSE(client.get(keys.moved[1]).value().has_value());  // nothing is read there
  EXPECT_GE(client.migration_stats().fallback_skipped, 2U);
}

// A read of a moved key keeps to the call's one deadline, here a caller's
// (DeadlineScope) shorter than the fallback timeout: a hung old owner does
// not get the fallback timeout on top, and is not judged for it.
TEST_F(MigrationTest, AReadThroughAHungOldOwnerEndsByTheCallersDeadline) {
  const auto before = list(0, 5);
  const auto after = list(0, 4);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  ASSERT_FALSE(keys.moved.empty());
  const std::string& key = keys.moved.front();
  ASSERT_TRUE(client.set(key, "v"));
  MigrationOptions migration;
  migration.fallback_timeout = std::chrono::milliseconds{300};
  client.begin_migration(after, migration);
  ASSERT_EQ(::kill(server(4).pid(), SIGSTOP), 0);  // the retiring server, the old owner
  const auto start = std::chrono::steady_clock::now();
  const auto got = [&] {
    const auto scope = client.deadline_scope(std::chrono::milliseconds{60});
    return client.get(key);
  }();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(::kill(server(4).pid(), SIGCONT), 0);
  EXPECT_LT(took, std::chrono::milliseconds{60 + 100}) << got.status();
  // A miss (the old copy could not be read in time) or the deadline's timeout.
  EXPECT_TRUE(got.ok() ? !got.value().has_value() : got.status().code() == Errc::kTimeout)
      << got.status();
}

TEST_F(MigrationTest, AnyPlacementToAnyOtherModuloToKetama) {
  const auto servers = list(0, 4);
  auto client = memshard::make_client("twemproxy-modula", servers, {}, options());
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) {
    keys.push_back("scheme:" + std::to_string(i));
    ASSERT_TRUE(client.set(keys.back(), "v" + std::to_string(i)));
  }
  const auto ketama = std::make_shared<const memshard::AnyLocator>(
      memshard::make_locator("libmemcached-ketama-weighted", servers));
  client.begin_migration(servers, ketama);
  for (int i = 0; i < 200; ++i) {
    auto hit = client.get(keys[static_cast<std::size_t>(i)]);
    ASSERT_TRUE(hit.value().has_value()) << keys[static_cast<std::size_t>(i)];
    EXPECT_EQ(hit.value()->value, "v" + std::to_string(i));
  }
  // A concrete locator converts to the client's AnyLocator.
  EXPECT_THROW(client.begin_migration(servers, memshard::KetamaLocator<memshard::Md5>(servers)),
               ConfigError);  // a migration already runs
  const auto stats = client.migration_stats();
  EXPECT_GT(stats.fallback_hits, 100U);  // most keys move
  EXPECT_EQ(stats.fallback_hits + stats.new_hits, 200U);
  EXPECT_TRUE(client.commit_migration());
  for (const auto& key : keys) {
    EXPECT_TRUE(client.get(key).value().has_value()) << key;
  }
}

// Readers and writers on the same keys while a migration copies them: a read
// is stale when it returns a version older than one whose write (database
// update, then cache delete) completed before the read began. Readers fill
// nothing on a full miss, so plain cache-aside races are left out.
// A scripted old owner (retiring) next to real servers: the replies a race
// or an old memcached would give, exactly when the test needs them.
class ScriptedOldOwner : public MigrationTest {
 protected:
  // The server list before (scripted, server 0) and after (servers 0, 1),
  // and a key the scripted server owned before.
  struct Setup {
    std::vector<Server> before;
    std::vector<Server> after;
    std::string key;
  };
  static auto setup(std::uint16_t scripted_port) -> Setup {
    Setup out;
    out.before = {memshard::parse_server("127.0.0.1:" + std::to_string(scripted_port)),
                  list(0, 1)[0]};
    out.after = list(0, 2);
    const Ring old_ring(out.before);
    for (int i = 0; out.key.empty(); ++i) {
      std::string key = "scripted:" + std::to_string(i);
      if (old_ring.locate(key) == 0) {
        out.key = std::move(key);
      }
    }
    return out;
  }
  static auto new_owner(const Setup& setup) -> MemcachedServer& {
    return at(setup.after[Ring(setup.after).locate(setup.key)]);
  }
  // An old owner whose n-th meta get (from 0) `on_read(n)` answers; a no-op
  // answers MN, anything else (a delete) HD.
  static auto old_copy(std::function<std::string(int)> on_read)
      -> memshard::testing::ScriptedServer::Script {
    return [on_read = std::move(on_read), reads = std::make_shared<std::atomic<int>>(0)](
               std::string_view line, std::size_t) -> std::string {
      if (line.starts_with("mg ")) {
        return on_read(reads->fetch_add(1));
      }
      return line.starts_with("mn") ? "MN\r\n" : "HD\r\n";
    };
  }
};

TEST_F(ScriptedOldOwner, ACopyIsRevokedWhenTheOldCopyChangedAfterItWasRead) {
  // The first read finds v0; by the validation a writer has deleted it.
  memshard::testing::ScriptedServer old(
      old_copy([](int read) { return read == 0 ? "VA 2 f0 t100 c5\r\nv0\r\n" : "EN\r\n"; }));
  const Setup set = setup(old.port());
  Client client(set.before, options());
  client.begin_migration(set.after);
  auto got = client.get(set.key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got.value().has_value());  // read while the write was running: not stale
  EXPECT_EQ(got.value()->value, "v0");
  EXPECT_FALSE(new_owner(set).command("get " + set.key).starts_with("VALUE"))
      << "the copy of a deleted value stayed on the new owner";
  EXPECT_EQ(client.migration_stats().copies_revoked, 1U);
}

TEST_F(ScriptedOldOwner, AStrictFillFailsWhenAWriterRemovedTheLease) {
  std::string key;
  MemcachedServer* fresh = nullptr;
  memshard::testing::ScriptedServer old([&](std::string_view line, std::size_t) -> std::string {
    if (line.starts_with("mg ")) {
      // While the old copy is read, a writer deletes the key (old, then
      // new: the lease's placeholder goes).
      EXPECT_EQ(fresh->command("delete " + key), "DELETED\r\n");
      return "VA 2 f0 t100 c5\r\nv0\r\n";
    }
    if (line.starts_with("mn")) {
      return "MN\r\n";
    }
    return "HD\r\n";
  });
  const Setup set = setup(old.port());
  key = set.key;
  fresh = &new_owner(set);
  Client client(set.before, options());
  MigrationOptions migration;
  migration.consistency = MigrationConsistency::kStrict;
  client.begin_migration(set.after, migration);
  auto got = client.get(set.key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got.value().has_value());
  EXPECT_FALSE(fresh->command("get " + set.key).starts_with("VALUE"))
      << "the lease was filled after a writer removed it";
  EXPECT_EQ(client.migration_stats().copies_revoked, 1U);
  EXPECT_EQ(client.migration_stats().leases_won, 1U);
}

TEST_F(ScriptedOldOwner, AnOldOwnerWithoutMetaCommandsIsReadAsTextAndItsCopyCapped) {
  memshard::testing::ScriptedServer old([](std::string_view line, std::size_t) -> std::string {
    if (line.starts_with("get ") || line.starts_with("gets ")) {  // memcached 1.5
      const std::string key(line.substr(line.find(' ') + 1));
      return "VALUE " + key + " 4 2 5\r\nv0\r\nEND\r\n";
    }
    return "ERROR\r\n";  // mg, md, mn: unknown commands
  });
  const Setup set = setup(old.port());
  Client client(set.before, options());
  MigrationOptions migration;
  migration.copy_ttl_cap = std::chrono::seconds{50};
  client.begin_migration(set.after, migration);
  auto got = client.get(set.key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got.value().has_value());
  EXPECT_EQ(got.value()->value, "v0");
  EXPECT_EQ(got.value()->flags, 4U);
  const long long left = ttl(set.after[Ring(set.after).locate(set.key)], set.key);
  EXPECT_GT(left, 40);
  EXPECT_LE(left, 50);
  EXPECT_EQ(client.migration_stats().copies_ttl_capped, 1U);
  EXPECT_EQ(client.migration_stats().copies_stored, 1U);
}

struct RaceCount {
  std::uint64_t reads = 0;
  std::uint64_t stale = 0;
  std::uint64_t revoked = 0;
};

class MigrationRace : public MigrationTest {
 protected:
  static auto race(MigrationConsistency consistency) -> RaceCount;
};

TEST_F(MigrationRace, FastReadersAndWritersSeeAlmostNoStaleRead) {
  const RaceCount count = race(MigrationConsistency::kFast);
  std::printf("kFast: %llu stale of %llu reads, %llu copies revoked\n",
              static_cast<unsigned long long>(count.stale),
              static_cast<unsigned long long>(count.reads),
              static_cast<unsigned long long>(count.revoked));
  EXPECT_GT(count.reads, 1000U);
  EXPECT_LE(count.stale * 10'000, count.reads + 10'000) << count.stale << " of " << count.reads;
}

TEST_F(MigrationRace, StrictReadersAndWritersSeeNoStaleReadAtAll) {
  const RaceCount count = race(MigrationConsistency::kStrict);
  std::printf("kStrict: %llu stale of %llu reads, %llu fills refused\n",
              static_cast<unsigned long long>(count.stale),
              static_cast<unsigned long long>(count.reads),
              static_cast<unsigned long long>(count.revoked));
  EXPECT_GT(count.reads, 1000U);
  EXPECT_EQ(count.stale, 0U);
}

auto MigrationRace::race(MigrationConsistency consistency) -> RaceCount {
  const auto before = list(0, 2);
  std::vector<Server> after = list(2, 2);
  constexpr int kRounds = 6;
  constexpr std::size_t kKeys = 32;
  constexpr int kReadsPerThread = 1500;
  std::uint64_t reads = 0;
  std::uint64_t stale = 0;
  std::uint64_t revoked = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (auto& s : *servers_) {
      EXPECT_EQ(s.command("flush_all"), "OK\r\n");
    }
    Client client(before, options());
    std::vector<std::string> keys;
    for (std::size_t k = 0; k < kKeys; ++k) {
      keys.push_back("race:" + std::to_string(round) + ":" + std::to_string(k));
      EXPECT_TRUE(client.set(keys.back(), "0"));
    }
    std::vector<std::atomic<std::uint64_t>> written(kKeys);  // completed versions
    std::vector<std::atomic<std::uint64_t>> database(kKeys);
    MigrationOptions migration;
    migration.consistency = consistency;
    client.begin_migration(after, migration);
    std::atomic<std::uint64_t> round_reads{0};
    std::atomic<std::uint64_t> round_stale{0};
    std::atomic<bool> stop{false};
    auto reader = [&](Client worker, int seed) {
      for (int i = 0; i < kReadsPerThread; ++i) {
        const std::size_t k = static_cast<std::size_t>(i * 7 + seed) % kKeys;
        const std::uint64_t floor = written[k].load();
        auto got = worker.get(keys[k]);
        if (got.ok() && got.value()) {
          round_reads.fetch_add(1);
          if (std::stoull(got.value()->value) < floor) {
            round_stale.fetch_add(1);
          }
        }
      }
    };
    auto writer = [&](Client worker) {
      for (std::uint64_t i = 0; !stop.load(); ++i) {
        const std::size_t k = static_cast<std::size_t>(i * 5) % kKeys;
        const std::uint64_t version = database[k].fetch_add(1) + 1;
        if (i % 3 == 0) {
          (void)worker.set(keys[k], std::to_string(version));
        } else {
          (void)worker.remove(keys[k]);
        }
        std::uint64_t done = written[k].load();
        while (done < version && !written[k].compare_exchange_weak(done, version)) {
        }
      }
    };
    std::thread w(writer, client.clone());
    std::thread r1(reader, client.clone(), 1);
    std::thread r2(reader, client.clone(), 2);
    r1.join();
    r2.join();
    stop = true;
    w.join();
    reads += round_reads.load();
    stale += round_stale.load();
    revoked += client.migration_stats().copies_revoked;
    EXPECT_TRUE(client.commit_migration());
  }
  return RaceCount{reads, stale, revoked};
}

TEST_F(MigrationTest, StrictModeFillsALeaseWithTheOldCopy) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  ASSERT_GE(keys.moved.size(), 4U);
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(client.set(key, "v-" + key, Expiry::after(std::chrono::seconds{300}), 9));
  }
  MigrationOptions migration;
  migration.consistency = MigrationConsistency::kStrict;
  client.begin_migration(after, migration);
  const std::string& key = keys.moved[0];
  auto hit = client.get(key);
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit.value().has_value());
  EXPECT_EQ(hit.value()->value, "v-" + key);
  EXPECT_EQ(hit.value()->flags, 9U);
  const Server now = client.server_for(key);
  EXPECT_EQ(at(now).command("get " + key), "VALUE " + key + " 9 " + std::to_string(key.size() + 2) +
                                               "\r\nv-" + key + "\r\nEND\r\n");
  EXPECT_LE(std::abs(ttl(now, key) - 300), 2);
  EXPECT_TRUE(client.cas(key, "next", hit.value()->cas)) << "the cas is the filled copy's";
  EXPECT_EQ(client.migration_stats().leases_won, 1U);
  // Another reader holds the lease: the old copy is read, nothing is copied,
  // and a plain text get sees the placeholder as an empty value.
  const std::string& busy = keys.moved[1];
  ASSERT_TRUE(at(client.server_for(busy)).command("mg " + busy + " N30 v").find(" W") !=
              std::string::npos);
  auto read = client.get(busy);
  ASSERT_TRUE(read.value().has_value());
  EXPECT_EQ(read.value()->value, "v-" + busy);
  EXPECT_EQ(client.migration_stats().leases_busy, 1U);
  EXPECT_EQ(at(client.server_for(busy)).command("get " + busy),
            "VALUE " + busy + " 0 0\r\n\r\nEND\r\n");
  // A multi-get of the rest: every value, through leases.
  std::vector<std::string_view> rest(keys.moved.begin() + 2, keys.moved.end());
  auto result = client.get_multi(rest);
  for (std::size_t i = 0; i < rest.size(); ++i) {
    ASSERT_TRUE(result.items[i].has_value()) << rest[i];
    EXPECT_EQ(result.items[i]->value, "v-" + std::string(rest[i]));
  }
  EXPECT_EQ(client.migration_stats().leases_won, 1U + rest.size());
}

// A move before an operation that needs the key's value (append here) is
// validated like a copy: a delete that completed between the move's read of
// the old copy and its add on the new owner revokes the moved copy, so the
// append finds no value, as it would after the delete.
TEST_F(ScriptedOldOwner, AMoveRacingADeleteDoesNotBringTheDeletedValueBack) {
  for (const MigrationConsistency consistency :
       {MigrationConsistency::kFast, MigrationConsistency::kStrict}) {
    SCOPED_TRACE(consistency == MigrationConsistency::kFast ? "kFast" : "kStrict");
    // The move reads v0; by its validation a clone's remove() has deleted
    // the old copy (and found nothing on the new owner yet).
    std::atomic<int> reads{0};
    memshard::testing::ScriptedServer old(old_copy([&](int read) {
      reads.fetch_add(1);
      return read == 0 ? "VA 2 f0 t100 c5\r\nv0\r\n" : "EN\r\n";
    }));
    const Setup set = setup(old.port());
    ASSERT_EQ(new_owner(set).command("flush_all"), "OK\r\n");
    Client client(set.before, options());
    MigrationOptions migration;
    migration.consistency = consistency;
    client.begin_migration(set.after, migration);
    const auto appended = client.append(set.key, "x");
    EXPECT_EQ(appended.code(), Errc::kNotStored) << appended;
    EXPECT_EQ(reads.load(), 2) << "the move validates its copy";
    EXPECT_FALSE(new_owner(set).command("get " + set.key).starts_with("VALUE"))
        << "the move brought back a value a completed delete removed";
    EXPECT_EQ(client.migration_stats().copies_revoked, 1U);
    EXPECT_EQ(client.migration_stats().counters_moved, 0U);
  }
}

// A read-through whose copy is stored while the window ends: from the end on
// writers no longer delete old copies, so the copy's validation (the old copy
// unchanged) proves nothing and the copy revokes itself.
TEST_F(ScriptedOldOwner, ACopyStoredAcrossTheCommitRevokesItself) {
  std::atomic<int> reads{0};
  Client* writer = nullptr;
  std::string key;
  memshard::testing::ScriptedServer old(old_copy([&](int read) {
    reads.fetch_add(1);
    if (read == 0) {
      // While the old copy is read: the window is committed and a writer
      // deletes the key, on the new owner only (it has nothing yet).
      EXPECT_TRUE(writer->commit_migration());
      EXPECT_EQ(writer->remove(key).code(), Errc::kNotFound);
    }
    return "VA 2 f0 t100 c5\r\nv0\r\n";  // unchanged: nobody deletes old copies now
  }));
  const Setup set = setup(old.port());
  key = set.key;
  Client client(set.before, options());
  Client clone = client.clone();
  writer = &clone;
  client.begin_migration(set.after);
  auto got = client.get(set.key);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(reads.load(), 2);
  EXPECT_FALSE(new_owner(set).command("get " + set.key).starts_with("VALUE"))
      << "a copy stored across the commit brought back a deleted value";
  EXPECT_EQ(client.migration_stats().copies_revoked, 1U);
  EXPECT_FALSE(client.migration_stats().active);
}

// abort_migration() after an invalidation that failed (the old owner was
// ejected): the key stays in the old owner's recovery journal, which deletes
// the old value before the server serves again.
TEST_F(MigrationTest, AnAbortAfterAFailedInvalidationNeverBringsBackTheOldValue) {
  const auto before = list(0, 1);
  const auto after = list(1, 1);
  ClientOptions opts = options();
  opts.connect_timeout = std::chrono::milliseconds{100};
  opts.io_timeout = std::chrono::milliseconds{100};
  opts.failure_limit = 1;
  opts.retry_interval = std::chrono::milliseconds{300};
  Client client(before, opts);
  ASSERT_TRUE(client.set("k", "v0"));
  ASSERT_TRUE(client.set("other", "o"));
  client.begin_migration(after);
  {
    const StoppedProcess hung(server(0).pid());
    (void)client.get("other");  // its fallback read times out: the old owner is ejected
  }
  ASSERT_TRUE(client.set("k", "v1"));
  EXPECT_EQ(client.migration_stats().invalidations_failed, 1U);
  ASSERT_TRUE(client.abort_migration());
  EXPECT_EQ(client.migration_stats().invalidations_failed, 1U) << "the last window's figures";
  EXPECT_FALSE(client.migration_stats().active);
  // Until the retry interval has passed the server is out; then it is probed.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  memshard::Result<std::optional<memshard::Item>> got = client.get("k");
  while (!got.ok() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
    got = client.get("k");
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got.value().has_value()) << "v0 came back: " << got.value()->value;
  EXPECT_FALSE(holds(before[0], "k"));
}

// kFailover with the new owner ejected: its keys go to another server of the
// new ring, which gets no copy of the old owner's value (nothing would
// invalidate it once the owner is back).
TEST_F(MigrationTest, AFailoverServerGetsNoCopy) {
  const auto before = list(0, 1);
  const auto after = list(1, 2);
  ClientOptions opts = options();
  opts.failure_policy = memshard::FailurePolicy::kFailover;
  opts.failure_limit = 1;
  opts.retry_interval = std::chrono::seconds{30};
  Client client(before, opts);
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) {
    keys.push_back("fo:" + std::to_string(i));
    ASSERT_TRUE(client.set(keys.back(), "v0"));
  }
  const Ring fresh(after);
  const auto owned_by_1 =
      std::ranges::find_if(keys, [&](const std::string& key) { return fresh.locate(key) == 0; });
  ASSERT_NE(owned_by_1, keys.end());
  const std::string& key = *owned_by_1;
  client.begin_migration(after);
  server(1).stop();       // the new owner
  (void)client.get(key);  // ejects it
  auto got = client.get(key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got.value().has_value());
  EXPECT_EQ(got.value()->value, "v0");  // read on the old owner
  const std::vector<std::string_view> one{key};
  const auto many = client.get_multi(one);
  ASSERT_TRUE(many.items[0].has_value());
  EXPECT_EQ(client.migrate_key(key), memshard::KeyMigration::kNewOwnerFailed);
  EXPECT_FALSE(holds(after[1], key)) << "the failover server got a copy";
  EXPECT_TRUE(holds(before[0], key));
  EXPECT_EQ(client.migration_stats().copies_stored, 0U);
}

// Inside a window a write keeps to the call's one deadline, the invalidation
// of the old copy included; a batch keeps to one deadline for all its keys.
TEST_F(MigrationTest, AWriteInAWindowKeepsToOneCallBudget) {
  const auto before = list(0, 1);
  const auto after = list(1, 1);
  ClientOptions opts = options();
  opts.connect_timeout = std::chrono::milliseconds{50};
  opts.io_timeout = std::chrono::milliseconds{150};  // a call's budget: 200 ms
  Client client(before, opts);
  std::vector<std::string> keys;
  for (int i = 0; i < 5; ++i) {
    keys.push_back("budget:" + std::to_string(i));
    ASSERT_TRUE(client.set(keys.back(), "1"));
  }
  client.begin_migration(after);
  ASSERT_TRUE(client.get(keys[0]).ok());  // both connections open
  const StoppedProcess old_hung(server(0).pid());
  const StoppedProcess new_hung(server(1).pid());
  const auto timed = [](auto&& call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  };
  // Two budgets would be 350 ms at least (the write's I/O timeout, then a
  // fresh budget for the invalidation); the slack is for scheduling.
  const auto budget = std::chrono::milliseconds{200};
  const auto slack = std::chrono::milliseconds{100};
  EXPECT_LT(timed([&] { EXPECT_FALSE(client.set(keys[0], "v")); }), budget + slack);
  EXPECT_LT(timed([&] { EXPECT_FALSE(client.incr(keys[1], 1).ok()); }), budget + slack);
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& key : keys) {
    items.emplace_back(key, "v");
  }
  EXPECT_LT(timed([&] {
              const auto written = client.set_multi(items);
              for (const auto& status : written.statuses) {
                EXPECT_FALSE(status.ok());
              }
            }),
            budget + slack);
  EXPECT_LT(timed([&] { (void)client.delete_multi(keys); }), budget + slack);
}

// The servers an aborted window copied values to keep those copies: a new
// window onto them is refused until the caller says they were flushed.
TEST_F(MigrationTest, ANewWindowOntoServersAnAbortedOneCopiedToIsRefusedUntilFlushed) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 200);
  ASSERT_TRUE(client.set(keys.moved.at(0), "v0"));
  client.begin_migration(after);
  ASSERT_TRUE(client.get(keys.moved.at(0)).value().has_value());  // copied to server 4
  ASSERT_TRUE(client.abort_migration());
  EXPECT_EQ(client.migration_stats().copies_stored, 1U);
  try {
    client.begin_migration(after);
    ADD_FAILURE() << "a window onto a server with an aborted window's copies began";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find(after[4].endpoint()), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(client.migration_stats().active);
  client.begin_migration(list(0, 3));  // servers with no copies: fine
  ASSERT_TRUE(client.abort_migration());
  ASSERT_EQ(server(4).command("flush_all"), "OK\r\n");
  MigrationOptions flushed;
  flushed.aborted_copies_flushed = true;
  client.begin_migration(after, flushed);
  EXPECT_TRUE(client.migration_stats().active);
  EXPECT_TRUE(client.commit_migration());
}

// A fleet's phases that only invalidate (Fleet::serve with a second placement that is not read
// through): phase 1 places on the old list and deletes the new owner's copy on every write;
// phase 3 the other way round. No read, multi-get or copy ever touches the second placement.
// Phase 1 is the one whose second placement is the next one (deleted last).
auto serve(Client& client, const std::vector<Server>& placed, const std::vector<Server>& second,
           bool read_through, bool phase_one = false,
           MigrationConsistency consistency = MigrationConsistency::kFast) -> void {
  memshard::Fleet<Ring>::SecondPlacement other;
  other.servers = second;
  other.locator = std::make_shared<const Ring>(second);
  other.read_through = read_through;
  other.deleted_first = !phase_one;
  other.options.consistency = consistency;
  memshard::Fleet<Ring>& fleet = memshard::detail::FleetOf<Ring>::of(client);
  fleet.serve(placed, std::make_shared<const Ring>(placed), std::move(other));
  fleet.gate().open_until(std::numeric_limits<std::int64_t>::max());  // a member in good standing
}

auto put(MemcachedServer& server, const std::string& key, const std::string& value) -> bool {
  return server.command("set " + key + " 0 0 " + std::to_string(value.size()) + "\r\n" + value)
      .starts_with("STORED");
}

TEST_F(MigrationTest, APreparingPhaseReadsTheOldPlacementAndWritesDeleteTheNewCopy) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  ASSERT_GE(keys.moved.size(), 8U);
  const Ring next(after);
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(client.set(key, "a-" + key));
    ASSERT_TRUE(put(at(after[next.locate(key)]), key, "b-" + key));
  }
  serve(client, before, after, false, true);
  // Reads: the old owner only, even for a miss there; nothing is copied.
  for (const auto& key : keys.moved) {
    auto hit = client.get(key);
    ASSERT_TRUE(hit.ok()) << hit.status();
    ASSERT_TRUE(hit.value().has_value()) << key;
    EXPECT_EQ(hit.value()->value, "a-" + key);
    EXPECT_EQ(client.server_for(key).port, old_owner(before, key).port);
  }
  const std::string& only_new = keys.moved[0];
  ASSERT_EQ(at(old_owner(before, only_new)).command("delete " + only_new), "DELETED\r\n");
  EXPECT_FALSE(client.get(only_new).value().has_value());
  std::vector<std::string_view> all(keys.moved.begin(), keys.moved.end());
  const auto many = client.get_multi(all);
  EXPECT_FALSE(many.items[0].has_value());
  for (std::size_t i = 1; i < all.size(); ++i) {
    ASSERT_TRUE(many.items[i].has_value()) << all[i];
    EXPECT_EQ(many.items[i]->value, "a-" + keys.moved[i]);
  }
  EXPECT_EQ(client.migrate_key(keys.moved[1]), memshard::KeyMigration::kNoMigration);
  EXPECT_TRUE(holds(after[next.locate(only_new)], only_new));  // read nowhere, copied nowhere
  // Every write, whatever its kind, deletes the new owner's copy after writing the old owner.
  const std::string& set_key = keys.moved[1];
  const std::string& add_key = keys.moved[2];
  const std::string& append_key = keys.moved[3];
  const std::string& touched = keys.moved[4];
  const std::string& removed = keys.moved[5];
  ASSERT_TRUE(client.set(set_key, "v2"));
  ASSERT_TRUE(client.add(add_key, "v2").code() == Errc::kNotStored);  // the old owner has it
  ASSERT_TRUE(client.append(append_key, "+"));
  ASSERT_TRUE(client.touch(touched, Expiry::after(std::chrono::seconds{100})));
  ASSERT_TRUE(client.remove(removed));
  for (const std::string* key : {&set_key, &add_key, &append_key, &touched, &removed}) {
    EXPECT_FALSE(holds(after[next.locate(*key)], *key)) << *key;
  }
  EXPECT_EQ(client.get(set_key).value()->value, "v2");
  EXPECT_EQ(client.get(append_key).value()->value, "a-" + append_key + "+");
  EXPECT_FALSE(holds(old_owner(before, removed), removed));
  EXPECT_GE(client.migration_stats().invalidations, 5U);
  EXPECT_EQ(client.migration_stats().fallback_hits, 0U);
  // A batch write deletes the new copies too.
  ASSERT_TRUE(put(at(after[next.locate(set_key)]), set_key, "b"));
  const std::vector<std::pair<std::string, std::string>> pairs = {{set_key, "v3"}};
  ASSERT_TRUE(client.set_multi(pairs).ok());
  EXPECT_FALSE(holds(after[next.locate(set_key)], set_key));
}

// A delete in phase 1 goes to the placement a window copies from (the one in use) before the one
// it copies to: a read-through between the two steps then finds nothing, or copies what the
// second step deletes. Seen here through the call's one budget: the other placement's server
// hangs, and the delete that comes first is the one that is made.
TEST_F(MigrationTest, APreparingPhaseDeletesWhereAWindowCopiesFromFirst) {
  const auto before = list(0, 1);
  const auto after = list(1, 1);  // every key moves
  ClientOptions opts = options();
  opts.connect_timeout = std::chrono::milliseconds{50};
  opts.io_timeout = std::chrono::milliseconds{150};
  opts.call_timeout = std::chrono::milliseconds{150};  // the hung server takes the whole budget
  Client client(before, opts);
  ASSERT_TRUE(client.set("first", "v0"));
  ASSERT_TRUE(client.set("second", "v0"));
  serve(client, before, after, false, true);
  ASSERT_TRUE(client.set("opener", "v"));  // the other server's connection is open
  const StoppedProcess hung(server(1).pid());
  (void)client.remove("first");             // the other server's delete times out (journaled)
  EXPECT_FALSE(holds(before[0], "first"));  // but the source's came first
  // Phase 3 (the source is the other placement, the retiring one): that one first.
  serve(client, after, before, false);
  const auto removed = client.remove("second");
  EXPECT_FALSE(removed.ok());
  EXPECT_FALSE(holds(before[0], "second")) << removed;
}

TEST_F(MigrationTest, ASettlingPhaseReadsTheNewPlacementOnlyAndWritesDeleteTheOldCopy) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  ASSERT_GE(keys.moved.size(), 2U);
  const std::string& key = keys.moved[0];
  const std::string& other = keys.moved[1];
  ASSERT_TRUE(client.set(key, "old"));
  ASSERT_TRUE(client.set(other, "old"));
  serve(client, after, before, false);
  EXPECT_FALSE(client.get(key).value().has_value());  // never read through, never copied
  EXPECT_FALSE(holds(client.server_for(key), key));
  ASSERT_TRUE(client.set(key, "new"));
  EXPECT_FALSE(holds(old_owner(before, key), key));
  EXPECT_EQ(client.get(key).value()->value, "new");
  EXPECT_TRUE(client.remove(other));  // the old owner had it
  EXPECT_FALSE(holds(old_owner(before, other), other));
}

// Beside a kStrict window (a fleet's phase 3: other members may still read through), a lease's
// placeholder on the new owner is a miss, never an empty hit; an empty value stored is a hit.
TEST_F(MigrationTest, ASettlingPhaseBesideAStrictWindowReadsALeasePlaceholderAsAMiss) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  ASSERT_GE(keys.moved.size(), 2U);
  const std::string& leased = keys.moved[0];
  const std::string& empty = keys.moved[1];
  serve(client, after, before, false, false, MigrationConsistency::kStrict);
  // Another member's read-through took the lease: the placeholder is on the new owner.
  ASSERT_TRUE(at(client.server_for(leased)).command("mg " + leased + " N30 v").find(" W") !=
              std::string::npos);
  ASSERT_TRUE(client.set(empty, ""));  // an empty value stored: a real hit
  auto got = client.get(leased);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got.value().has_value());
  got = client.get(empty);
  ASSERT_TRUE(got.value().has_value());
  EXPECT_EQ(got.value()->value, "");
  const auto many = client.get_multi({std::string_view(leased), std::string_view(empty)});
  EXPECT_FALSE(many.items[0].has_value());
  EXPECT_TRUE(many.items[1].has_value());
  // Filled by the lease's holder, it reads as the value filled in (the placeholder is read
  // again by meta, and what that read finds is the answer).
  MemcachedServer& owner = at(client.server_for(leased));
  const std::string lease = owner.command("mg " + leased + " c");
  ASSERT_TRUE(lease.starts_with("HD c")) << lease;
  const std::string cas = lease.substr(4, lease.find_first_of(" \r", 4) - 4);
  ASSERT_EQ(owner.command("ms " + leased + " 6 C" + cas + " T0\r\nfilled"), "HD\r\n");
  got = client.get(leased);
  ASSERT_TRUE(got.value().has_value());
  EXPECT_EQ(got.value()->value, "filled");
}

TEST_F(MigrationTest, AServedFleetRefusesTheClientsOwnChangesAndEndsAnOpenWindow) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  const std::string& key = keys.moved.at(0);
  ASSERT_TRUE(client.set(key, "v"));
  serve(client, after, before, true);  // a read-through window
  EXPECT_TRUE(client.get(key).value().has_value());
  EXPECT_EQ(client.migration_stats().copies_stored, 1U);
  EXPECT_THROW(client.reconfigure(after), ConfigError);
  EXPECT_THROW(client.begin_migration(before), ConfigError);
  EXPECT_THROW((void)client.commit_migration(), ConfigError);
  EXPECT_THROW((void)client.abort_migration(), ConfigError);
  Client clone = client.clone();
  EXPECT_THROW(clone.reconfigure(before), ConfigError);
  serve(client, after, before, false);  // settle: the window's counters are the last window's
  memshard::detail::FleetOf<Ring>::of(client).serve(after, std::make_shared<const Ring>(after),
                                                    std::nullopt);
  const auto stats = client.migration_stats();
  EXPECT_FALSE(stats.active);
  EXPECT_EQ(stats.copies_stored, 1U);
  EXPECT_EQ(clone.servers().size(), after.size());
}

TEST_F(MigrationTest, AClosedGateReadsMissesAndRefusesWritesKeepingTheirKeys) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  Client client(before, options());
  const Split keys = split(before, after, 300);
  const std::string& kept = keys.moved.at(0);
  const std::string& other = keys.moved.at(1);
  ASSERT_TRUE(client.set(kept, "v0"));
  ASSERT_TRUE(client.set(other, "v0"));
  serve(client, before, after, false, true);
  memshard::Fleet<Ring>& fleet = memshard::detail::FleetOf<Ring>::of(client);
  fleet.gate().close();
  Client clone = client.clone();
  for (Client* c : {&client, &clone}) {
    auto read = c->get(kept);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_FALSE(read.value().has_value());  // a miss, though the server holds it
    EXPECT_EQ(c->get_multi({std::string_view(kept), std::string_view(other)}).hits(), 0U);
  }
  EXPECT_TRUE(holds(old_owner(before, kept), kept));
  EXPECT_EQ(client.set(other, "v1").code(), Errc::kFenced);
  EXPECT_EQ(client.remove(kept).code(), Errc::kFenced);
  EXPECT_EQ(client.incr(other, 1).status().code(), Errc::kFenced);
  const std::vector<std::pair<std::string, std::string>> pairs = {{kept, "v2"}};
  EXPECT_EQ(client.set_multi(pairs).statuses.at(0).code(), Errc::kFenced);
  EXPECT_EQ(client.get("bad key").status().code(), Errc::kInvalidKey);  // bad input stays so
  EXPECT_EQ(client.set("bad key", "v").code(), Errc::kInvalidKey);
  EXPECT_EQ(fleet.gate().kept(), 4U);  // kept, other, other, kept: nothing reached a server
  EXPECT_TRUE(holds(old_owner(before, kept), kept));
  EXPECT_EQ(client.get(other).value(), std::nullopt);
  EXPECT_EQ(memshard::to_string(Errc::kFenced), "fenced");
  // Before serving again: the kept keys deleted by the phase's rules, then the gate opened.
  for (const std::string& key : fleet.gate().take()) {
    (void)memshard::detail::FleetOf<Ring>::remove_unfenced(client, key);
  }
  EXPECT_FALSE(holds(old_owner(before, kept), kept));
  EXPECT_FALSE(holds(old_owner(before, other), other));
  fleet.gate().open_until(std::numeric_limits<std::int64_t>::max());
  ASSERT_TRUE(client.set(other, "v3"));
  EXPECT_EQ(clone.get(other).value()->value, "v3");
}

// The meta connections that read through take values as large as the
// client's max_value_size (a server started with a larger -I).
TEST(MigrationLargeValues, AValueOverOneMebibyteIsReadThrough) {
  MemcachedServer old = MemcachedServer::with_args({"-I", "4m"});
  MemcachedServer fresh = MemcachedServer::with_args({"-I", "4m"});
  ClientOptions opts;
  opts.max_value_size = 3U << 20U;
  opts.failure_limit = 100;
  const std::vector<Server> before{memshard::parse_server(old.spec())};
  const std::vector<Server> after{memshard::parse_server(fresh.spec())};
  Client client(before, opts);
  const std::string value(std::size_t{2} << 20U, 'v');
  ASSERT_TRUE(client.set("big", value));
  client.begin_migration(after);
  auto got = client.get("big");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got.value().has_value()) << "a 2 MiB value read through as a miss";
  EXPECT_EQ(got.value()->value.size(), value.size());
  EXPECT_EQ(client.migration_stats().copies_stored, 1U);
  EXPECT_TRUE(fresh.command("mg big s").starts_with("HD s2097152"));
}

// Under kStrict another reader's lease placeholder on the new owner is no
// value: gat does not answer it as an empty hit, and a get that reaches the
// new owner the ordinary way (a probe) reads it again with a lease.
TEST_F(MigrationTest, AStrictLeasePlaceholderIsNeverAnEmptyHit) {
  const auto before = list(0, 4);
  const auto after = list(0, 5);
  ClientOptions opts = options();
  opts.failure_limit = 1;
  opts.retry_interval = std::chrono::milliseconds{200};
  opts.connect_timeout = std::chrono::milliseconds{100};
  opts.io_timeout = std::chrono::milliseconds{100};
  Client client(before, opts);
  const Split keys = split(before, after, 200);
  ASSERT_GE(keys.moved.size(), 3U);
  for (const auto& key : keys.moved) {
    ASSERT_TRUE(client.set(key, "v-" + key));
  }
  MigrationOptions migration;
  migration.consistency = MigrationConsistency::kStrict;
  client.begin_migration(after, migration);
  // gat of a leased key.
  const std::string& touched = keys.moved[0];
  ASSERT_NE(server(4).command("mg " + touched + " N30 v").find(" W"), std::string::npos);
  const auto got = client.gat(touched, Expiry::after(std::chrono::seconds{100}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(!got.value().has_value() || got.value()->value == "v-" + touched)
      << "a lease's placeholder answered as a value: '" << got.value()->value << "'";
  // A probe of the new owner, once it was ejected, reads the ordinary way.
  const std::string& probed = keys.moved[1];
  {
    const StoppedProcess hung(server(4).pid());
    (void)client.get(keys.moved[2]);  // times out: the new server is ejected
  }
  ASSERT_NE(server(4).command("mg " + probed + " N30 v").find(" W"), std::string::npos);
  const auto ejected = [&] {
    for (const auto& stat : client.stats()) {
      if (stat.server.port == after[4].port) {
        return stat.ejected;
      }
    }
    return false;
  };
  ASSERT_TRUE(ejected());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (ejected() && std::chrono::steady_clock::now() < until) {
    const auto read = client.get(probed);
    ASSERT_TRUE(!read.ok() || !read.value().has_value() || read.value()->value == "v-" + probed);
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  ASSERT_FALSE(ejected());
  const auto read = client.get(probed);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read.value().has_value());
  EXPECT_EQ(read.value()->value, "v-" + probed);
}

}  // namespace
}  // namespace migration_paths_test
