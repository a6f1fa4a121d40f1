// SPDX-License-Identifier: MIT
// DeadlineScope against real memcached behind a FaultProxy: a call ends by
// the caller's deadline when it is nearer than the call's own; one scope
// bounds a sequence of calls; a call begun after the deadline sends nothing
// (and a write refused so leaves no old value behind); timeouts the caller's
// deadline caused never eject a server, while the call's own still do;
// scopes nest; both multi-get engines keep to the caller's deadline.
#include "memshard/client/deadline_scope.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "memshard/memshard.hpp"
#include "support/fault_proxy.hpp"
#include "support/memcached_server.hpp"
#include "support/multi_get_modes.hpp"
#include "support/sanitized.hpp"

namespace deadline_scope_test {
namespace {

using memshard::ClientOptions;
using memshard::Errc;
using memshard::testing::Direction;
using memshard::testing::FaultProxy;
using memshard::testing::MemcachedServer;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Client = memshard::ShardedClient<memshard::ModuloLocator<memshard::Crc32>>;

// The call's own budget is 1 s: far from the scopes' deadlines.
constexpr milliseconds kTimeout{500};
constexpr milliseconds kScope{60};
// What a call may take past a deadline here (see deadline_watch_test.cpp).
constexpr milliseconds kOver = memshard::testing::kSanitized ? milliseconds(100) : milliseconds(40);

auto options() -> ClientOptions {
  ClientOptions out;
  out.connect_timeout = kTimeout;
  out.io_timeout = kTimeout;
  out.failure_limit = 2;
  return out;
}

template <class F>
auto timed(F&& call) -> milliseconds {
  const auto start = Clock::now();
  call();
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

class DeadlineScopeTest : public ::testing::Test {
 protected:
  DeadlineScopeTest() : proxy_(server_.port()) {}

  auto client(ClientOptions with = options()) const -> Client {
    return Client({memshard::parse_server(proxy_.spec())}, with);
  }

  MemcachedServer server_;
  FaultProxy proxy_;
};

TEST_F(DeadlineScopeTest, ASilentServerTimesOutAtTheCallersDeadline) {
  Client c = client();
  ASSERT_TRUE(c.set("k", "v"));  // connected
  proxy_.set_blackhole(Direction::kBoth);
  memshard::Status status;
  {
    const auto scope = c.deadline_scope(kScope);
    const auto took = timed([&] { status = c.get("k").status(); });
    EXPECT_LE(took, kScope + kOver);
  }
  EXPECT_EQ(status.code(), Errc::kTimeout) << status;
  EXPECT_NE(status.detail().find("caller's deadline"), std::string::npos) << status;
  // Once the scope is over, the call's own budget is back: the same call
  // waits for its I/O timeout.
  const auto took = timed([&] { status = c.get("k").status(); });
  EXPECT_EQ(status.code(), Errc::kTimeout) << status;
  EXPECT_GE(took, kTimeout - milliseconds(10));
}

TEST_F(DeadlineScopeTest, OneScopeBoundsASequenceOfCalls) {
  Client c = client();
  ASSERT_TRUE(c.set("k", "v"));
  proxy_.set_blackhole(Direction::kBoth);
  std::vector<memshard::Status> statuses;
  const auto took = timed([&] {
    const auto scope = c.deadline_scope(kScope * 2);
    for (int i = 0; i < 5; ++i) {
      statuses.push_back(c.get("k").status());
    }
  });
  EXPECT_LE(took, kScope * 2 + kOver);
  for (const auto& status : statuses) {
    EXPECT_EQ(status.code(), Errc::kTimeout) << status;
  }
  // The first call used the time up; the others sent nothing.
  EXPECT_NE(statuses.back().detail().find("before the request was sent"), std::string::npos)
      << statuses.back();
}

TEST_F(DeadlineScopeTest, ACallBegunAfterTheDeadlineSendsNothing) {
  Client c = client();
  ASSERT_EQ(proxy_.accepted(), 0U);
  {
    const auto scope = c.deadline_scope(Clock::now() - milliseconds(1));
    EXPECT_EQ(c.get("k").status().code(), Errc::kTimeout);
    EXPECT_EQ(c.set("k", "v").code(), Errc::kTimeout);
    EXPECT_EQ(c.remove("k").code(), Errc::kTimeout);
    EXPECT_EQ(c.incr("n", 1).status().code(), Errc::kTimeout);
    const auto multi = c.get_multi({"a", "b"});
    EXPECT_EQ(multi.statuses[0].code(), Errc::kTimeout) << multi.statuses[0];
    EXPECT_EQ(multi.statuses[1].code(), Errc::kTimeout) << multi.statuses[1];
  }
  EXPECT_EQ(proxy_.accepted(), 0U) << "a call after the deadline opened a connection";
  EXPECT_EQ(c.stats()[0].operations, 0U);
  EXPECT_FALSE(c.stats()[0].ejected);
}

TEST_F(DeadlineScopeTest, AWriteRefusedAfterTheDeadlineLeavesNoOldValue) {
  Client c = client();
  ASSERT_TRUE(c.set("k", "old"));
  {
    const auto scope = c.deadline_scope(Clock::now() - milliseconds(1));
    EXPECT_EQ(c.set("k", "new").code(), Errc::kTimeout);
  }
  // The caller knows the write failed; the old value is not served either.
  const auto got = c.get("k");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got.value().has_value()) << "served " << got.value()->value;
  EXPECT_EQ(server_.command("get k"), "END\r\n");
}

TEST_F(DeadlineScopeTest, TimeoutsTheCallersDeadlineCausedNeverEject) {
  Client c = client();
  ASSERT_TRUE(c.set("k", "v"));
  proxy_.set_blackhole(Direction::kBoth);
  for (int i = 0; i < 6; ++i) {
    const auto scope = c.deadline_scope(milliseconds(20));
    EXPECT_EQ(c.get("k").status().code(), Errc::kTimeout);
  }
  EXPECT_FALSE(c.stats()[0].ejected) << "ejected for the caller's deadlines";
  EXPECT_EQ(c.stats()[0].ejections, 0U);
  // Its own timeouts still count: failure_limit 2.
  EXPECT_EQ(c.get("k").status().code(), Errc::kTimeout);
  EXPECT_EQ(c.get("k").status().code(), Errc::kTimeout);
  EXPECT_TRUE(c.stats()[0].ejected);
}

TEST_F(DeadlineScopeTest, ScopesNestAndAnInnerOneNeverExtendsTheOuter) {
  Client c = client();
  const auto outer_deadline = Clock::now() + milliseconds(10'000);
  const auto outer = c.deadline_scope(outer_deadline);
  EXPECT_EQ(outer.deadline(), outer_deadline);
  {
    const auto later = c.deadline_scope(milliseconds(60'000));
    EXPECT_EQ(later.deadline(), outer_deadline) << "an inner scope extended the outer one";
    const auto nearer_deadline = Clock::now() + kScope;
    const auto nearer = c.deadline_scope(nearer_deadline);
    EXPECT_EQ(nearer.deadline(), nearer_deadline);
    proxy_.set_blackhole(Direction::kBoth);
    const auto took = timed([&] { EXPECT_EQ(c.get("k").status().code(), Errc::kTimeout); });
    EXPECT_LE(took, kScope + kOver);
    proxy_.heal();
  }
  EXPECT_EQ(outer.deadline(), outer_deadline);
  EXPECT_TRUE(c.set("k", "v")) << "the outer deadline is far";
}

class DeadlineScopeMultiGetTest : public DeadlineScopeTest,
                                  public ::testing::WithParamInterface<memshard::MultiGetMode> {};

TEST_P(DeadlineScopeMultiGetTest, AMultiGetEndsByTheCallersDeadline) {
  MemcachedServer healthy;
  Client c({memshard::parse_server(proxy_.spec()), memshard::parse_server(healthy.spec())},
           memshard::testing::with_mode(options(), GetParam()));
  std::vector<std::string> keys;
  std::size_t on_silent = 0;
  for (int i = 0; keys.size() < 8; ++i) {
    std::string key = "m" + std::to_string(i);
    ASSERT_TRUE(c.set(key, "fine"));
    on_silent += c.server_index_for(key) == 0 ? 1U : 0U;
    keys.push_back(std::move(key));
  }
  ASSERT_GT(on_silent, 0U);
  ASSERT_LT(on_silent, keys.size());
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  proxy_.set_blackhole(Direction::kBoth);
  memshard::MultiGetResult result;
  {
    const auto scope = c.deadline_scope(kScope);
    const auto took = timed([&] { result = c.get_multi(views); });
    EXPECT_LE(took, kScope + kOver);
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (c.server_index_for(keys[i]) == 0) {
      EXPECT_FALSE(result.items[i].has_value()) << keys[i];
      EXPECT_EQ(result.statuses[i].code(), Errc::kTimeout) << result.statuses[i];
    } else {
      ASSERT_TRUE(result.items[i].has_value()) << keys[i] << ": " << result.statuses[i];
      EXPECT_EQ(result.items[i]->value, "fine");
    }
  }
  EXPECT_FALSE(c.stats()[0].ejected);
}

INSTANTIATE_TEST_SUITE_P(Modes, DeadlineScopeMultiGetTest,
                         ::testing::ValuesIn(memshard::testing::kMultiGetModes),
                         [](const auto& mode) {
                           return mode.param == memshard::MultiGetMode::kPolled ? "Polled"
                                                                                : "PerServer";
                         });

}  // namespace
}  // namespace deadline_scope_test
