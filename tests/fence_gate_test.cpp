// SPDX-License-Identifier: MIT
// fleet/fence_gate.hpp: closed until opened, closed again by the clock alone (nobody has to act
// when the fence passes), closed at once by close(); the keys of refused writes kept up to the
// capacity and counted beyond it.

#include "memshard/fleet/fence_gate.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "memshard/detail/clock.hpp"

namespace fence_gate_test {
namespace {

using memshard::detail::FenceGate;
using memshard::detail::steady_now_ns;

TEST(FenceGateTest, ClosedUntilOpenedAndClosedAgainByTheClockAlone) {
  FenceGate gate;
  EXPECT_TRUE(gate.closed());
  gate.open_until(std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(gate.closed());
  gate.close();
  EXPECT_TRUE(gate.closed());
  const std::int64_t fence = steady_now_ns() + 1'000'000'000;  // 1 s from now
  gate.open_until(fence);
  EXPECT_EQ(gate.fence_at(), fence);
  EXPECT_FALSE(gate.closed());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (!gate.closed() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  ASSERT_TRUE(gate.closed());
  // Never after the fence, at most the coarse clock's slack before it.
  EXPECT_GE(steady_now_ns(), fence - FenceGate::kCoarseSlack - 10'000'000);
}

TEST(FenceGateTest, KeysAreKeptUpToTheCapacityAndCountedBeyondIt) {
  FenceGate gate(2);
  gate.keep("a");
  gate.keep("b");
  gate.keep("c");
  EXPECT_EQ(gate.kept(), 2U);
  EXPECT_EQ(gate.lost(), 1U);
  EXPECT_EQ(gate.take(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(gate.kept(), 0U);
  gate.keep("d");
  EXPECT_EQ(gate.take(), (std::vector<std::string>{"d"}));
  EXPECT_EQ(gate.lost(), 1U);
}

}  // namespace
}  // namespace fence_gate_test
