// SPDX-License-Identifier: MIT
// Result (memshard/client/result.hpp): reading a value, and never a failure as one.
#include "memshard/client/result.hpp"

#include <gtest/gtest.h>
#include <libmemcached-1.0/memcached.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace result_test {
namespace {

using memshard::BadResultAccess;
using memshard::Errc;
using memshard::Item;
using memshard::Result;
using memshard::Status;

auto failed() -> Status {
  return Status(Errc::kTimeout, MEMCACHED_TIMEOUT, 0, "10.0.0.1:11211: no reply");
}

auto hit(std::string value) -> Result<std::optional<Item>> {
  return Result<std::optional<Item>>(Item{.value = std::move(value), .flags = 3}, Status());
}

TEST(ResultTest, StarAndArrowReadTheValue) {
  const Result<std::uint64_t> number(42U, Status());
  EXPECT_EQ(*number, 42U);
  const auto item = hit("v");
  ASSERT_TRUE(item->has_value());
  EXPECT_EQ((*item)->value, "v");
  EXPECT_EQ(item->value().flags, 3U);
  EXPECT_EQ(*Result<std::string>("moved", Status()), "moved");
}

TEST(ResultTest, StarAndArrowOfAFailureThrowWithItsStatus) {
  const Result<std::uint64_t> number(failed());
  EXPECT_THROW((void)*number, BadResultAccess);
  const Result<std::optional<Item>> item(failed());
  EXPECT_THROW((void)item->has_value(), BadResultAccess);
  EXPECT_THROW((void)*Result<std::string>(failed()), BadResultAccess);
  try {
    (void)*number;
  } catch (const BadResultAccess& error) {
    EXPECT_NE(std::string(error.what()).find("no reply"), std::string::npos) << error.what();
  }
}

TEST(ResultTest, ValueOrGivesTheFallbackOnlyForAFailure) {
  EXPECT_EQ(Result<std::uint64_t>(7U, Status()).value_or(0U), 7U);
  EXPECT_EQ(Result<std::uint64_t>(failed()).value_or(9U), 9U);
  const Result<std::string> text("held", Status());
  EXPECT_EQ(text.value_or("fallback"), "held");
  EXPECT_EQ(Result<std::string>(failed()).value_or("fallback"), "fallback");
  // A miss is a value (an empty optional), not a failure.
  const Result<std::optional<Item>> miss(std::nullopt, Status());
  EXPECT_FALSE(miss.value_or(Item{.value = "fallback"}).has_value());
  const auto from_failure = Result<std::optional<Item>>(failed()).value_or(Item{.value = "x"});
  ASSERT_TRUE(from_failure.has_value());
  EXPECT_EQ(from_failure->value, "x");
}

}  // namespace
}  // namespace result_test
