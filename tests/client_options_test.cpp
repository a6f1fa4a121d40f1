// SPDX-License-Identifier: MIT
// client_options.hpp: Expiry (relative seconds up to 30 days, Unix times
// beyond) and validate_options, without a server.
#include "memshard/client/client_options.hpp"

#include <chrono>
#include <ctime>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "memshard/errors.hpp"

namespace client_options_test {
namespace {

using memshard::ClientOptions;
using memshard::ConfigError;
using memshard::Expiry;
using memshard::Protocol;
using memshard::SaslCredentials;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using std::chrono::system_clock;

constexpr std::time_t kThirtyDays = 60 * 60 * 24 * 30;

auto unix_now() -> std::time_t {
  return static_cast<std::time_t>(
      std::chrono::duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
}

// The message of the ConfigError `call` throws ("" if it throws none).
auto config_error_of(const std::function<void()>& call) -> std::string {
  try {
    call();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

static_assert(Expiry{}.wire_value() == 0);
static_assert(Expiry::never().wire_value() == 0);
static_assert(noexcept(Expiry::never()) && noexcept(Expiry{}.wire_value()));

TEST(ExpiryTest, NeverIsZero) {
  EXPECT_EQ(Expiry{}.wire_value(), 0);
  EXPECT_EQ(Expiry::never().wire_value(), 0);
}

TEST(ExpiryTest, DurationsUpToThirtyDaysAreRelativeSeconds) {
  EXPECT_EQ(Expiry::after(seconds(1)).wire_value(), 1);
  EXPECT_EQ(Expiry::after(seconds(60)).wire_value(), 60);
  EXPECT_EQ(Expiry::after(minutes(5)).wire_value(), 300);
  EXPECT_EQ(Expiry::after(hours(24)).wire_value(), 86400);
  EXPECT_EQ(Expiry::after(hours(24 * 30)).wire_value(), kThirtyDays);  // the last relative one
}

TEST(ExpiryTest, LongerDurationsBecomeUnixTimes) {
  for (const seconds duration :
       {seconds(kThirtyDays + 1), seconds(hours(24 * 90)), seconds(hours(24 * 365 * 10))}) {
    const std::time_t before = unix_now();
    const std::time_t wire = Expiry::after(duration).wire_value();
    const std::time_t after = unix_now();
    EXPECT_GE(wire, before + duration.count()) << duration.count();
    EXPECT_LE(wire, after + duration.count()) << duration.count();
    EXPECT_GT(wire, kThirtyDays) << "would be read as relative seconds";
  }
}

TEST(ExpiryTest, AtIsTheUnixTimeInWholeSeconds) {
  EXPECT_EQ(Expiry::at(system_clock::from_time_t(2000000000)).wire_value(), 2000000000);
  EXPECT_EQ(Expiry::at(system_clock::from_time_t(2000000000) + milliseconds(999)).wire_value(),
            2000000000);
  // The first time that memcached cannot mistake for relative seconds.
  EXPECT_EQ(Expiry::at(system_clock::time_point(seconds(kThirtyDays + 1))).wire_value(),
            kThirtyDays + 1);
  const std::time_t before = unix_now();
  const std::time_t wire = Expiry::at(system_clock::now() + hours(1)).wire_value();
  EXPECT_GE(wire, before + 3600);
  EXPECT_LE(wire, unix_now() + 3600);
}

TEST(ExpiryTest, NonPositiveDurationsAreRefused) {
  for (const seconds duration : {seconds(0), seconds(-1), seconds(-5), seconds(hours(-24 * 90))}) {
    const std::string message =
        config_error_of([duration] { static_cast<void>(Expiry::after(duration)); });
    EXPECT_NE(message.find("memshard: expiry duration must be positive"), std::string::npos)
        << duration.count() << ": " << message;
    EXPECT_NE(message.find(std::to_string(duration.count()) + " s"), std::string::npos) << message;
  }
}

TEST(ExpiryTest, TimesMemcachedWouldReadAsRelativeAreRefused) {
  for (const system_clock::time_point when :
       {system_clock::time_point{}, system_clock::time_point(seconds(1)),
        system_clock::time_point(seconds(kThirtyDays)),
        system_clock::time_point(seconds(kThirtyDays) + milliseconds(999)),
        system_clock::time_point(seconds(-1)), system_clock::time_point(hours(-24 * 365))}) {
    const std::string message = config_error_of([when] { static_cast<void>(Expiry::at(when)); });
    EXPECT_NE(message.find("memshard: expiry time is not a plausible date"), std::string::npos)
        << when.time_since_epoch().count() << ": " << message;
  }
}

TEST(ExpiryTest, TimesPastWhatMemcachedStoresAreRefused) {
  // memcached reads exptime as a signed 32-bit number: 2038-01-19T03:14:07Z is
  // the last time it takes.
  using Clock = std::chrono::system_clock;
  EXPECT_EQ(Expiry::at(Clock::time_point(seconds(2'147'483'647))).wire_value(), 2'147'483'647);
  EXPECT_THROW((void)Expiry::at(Clock::time_point(seconds(2'147'483'648))), ConfigError);
  EXPECT_THROW((void)Expiry::at(Clock::time_point(seconds(4'102'444'800))), ConfigError);
  // A duration so long that now + duration would overflow is refused too.
  EXPECT_THROW((void)Expiry::after(std::chrono::hours(24 * 365 * 300)), ConfigError);
  EXPECT_THROW((void)Expiry::after(seconds(std::numeric_limits<seconds::rep>::max())), ConfigError);
}

TEST(ValidateOptionsTest, TheDefaultsAreValid) {
  EXPECT_NO_THROW(memshard::validate_options(ClientOptions{}));
  ClientOptions smallest;
  smallest.connect_timeout = milliseconds(1);
  smallest.io_timeout = milliseconds(1);
  smallest.failure_limit = 1;
  smallest.retry_interval = milliseconds(1);
  smallest.max_value_size = 1;
  EXPECT_NO_THROW(memshard::validate_options(smallest));
}

TEST(ValidateOptionsTest, TheBudgetsDeriveFromTheTimeouts) {
  ClientOptions options;
  options.connect_timeout = milliseconds(300);
  options.io_timeout = milliseconds(200);
  EXPECT_EQ(options.call_budget(), milliseconds(500));
  options.call_timeout = milliseconds(50);
  EXPECT_EQ(options.call_budget(), milliseconds(50));
  EXPECT_EQ(options.retry_cap(), options.retry_interval * 30);
  options.retry_interval_max = milliseconds(9000);
  EXPECT_EQ(options.retry_cap(), milliseconds(9000));
}

TEST(ValidateOptionsTest, EachNonPositiveSettingIsRefusedByName) {
  struct Case {
    std::string_view field;
    std::function<void(ClientOptions&)> set;
  };
  const Case cases[] = {
      {"connect_timeout must be positive: 0 ms",
       [](ClientOptions& o) { o.connect_timeout = milliseconds(0); }},
      {"connect_timeout must be positive: -5 ms",
       [](ClientOptions& o) { o.connect_timeout = milliseconds(-5); }},
      {"io_timeout must be positive: 0 ms",
       [](ClientOptions& o) { o.io_timeout = milliseconds(0); }},
      {"io_timeout must be positive: -1 ms",
       [](ClientOptions& o) { o.io_timeout = milliseconds(-1); }},
      {"failure_limit must be at least 1: 0", [](ClientOptions& o) { o.failure_limit = 0; }},
      {"retry_interval must be positive: 0 ms",
       [](ClientOptions& o) { o.retry_interval = milliseconds(0); }},
      {"retry_interval must be positive: -2000 ms",
       [](ClientOptions& o) { o.retry_interval = milliseconds(-2000); }},
      {"max_value_size must be positive: 0", [](ClientOptions& o) { o.max_value_size = 0; }},
      {"call_timeout must not be negative: -1 ms",
       [](ClientOptions& o) { o.call_timeout = milliseconds(-1); }},
      {"retry_interval_max must be 0 or at least retry_interval: 1999 ms",
       [](ClientOptions& o) { o.retry_interval_max = milliseconds(1999); }},
      {"retry_interval_max must be 0 or at least retry_interval: -1 ms",
       [](ClientOptions& o) { o.retry_interval_max = milliseconds(-1); }},
      {"max_ejected_fraction must be in (0, 1]: 0.000000",
       [](ClientOptions& o) { o.max_ejected_fraction = 0; }},
      {"max_ejected_fraction must be in (0, 1]: 1.500000",
       [](ClientOptions& o) { o.max_ejected_fraction = 1.5; }},
      {"max_ejected_fraction must be in (0, 1]: nan",
       [](ClientOptions& o) { o.max_ejected_fraction = std::numeric_limits<double>::quiet_NaN(); }},
      {"failover_rate must be in (0, 1]: -0.100000",
       [](ClientOptions& o) { o.failover_rate = -0.1; }},
      {"max_item_ttl must not be negative: -1 s",
       [](ClientOptions& o) { o.max_item_ttl = seconds(-1); }},
      {"failover_ttl must be positive and at most 30 days: 0 s",
       [](ClientOptions& o) { o.failover_ttl = seconds(0); }},
      {"failover_ttl must be positive and at most 30 days: 2592001 s",
       [](ClientOptions& o) { o.failover_ttl = seconds(kThirtyDays + 1); }},
  };
  for (const Case& c : cases) {
    ClientOptions options;
    c.set(options);
    const std::string message =
        config_error_of([&options] { memshard::validate_options(options); });
    EXPECT_EQ(message, "memshard: " + std::string(c.field));
  }
}

TEST(ValidateOptionsTest, SaslNeedsTheBinaryProtocol) {
  ClientOptions options;
  options.sasl = SaslCredentials{"alice", "s3cret-pw"};
  const std::string text = config_error_of([&options] { memshard::validate_options(options); });
  EXPECT_EQ(text,
            "memshard: SASL authentication needs the binary protocol: set protocol = "
            "Protocol::kBinary");
  options.protocol = Protocol::kBinary;
  EXPECT_NO_THROW(memshard::validate_options(options));
}

TEST(ValidateOptionsTest, BadSaslCredentialsAreRefusedWithoutQuotingThem) {
  ClientOptions options;
  options.protocol = Protocol::kBinary;
  options.sasl = SaslCredentials{"", "s3cret-pw"};
  EXPECT_EQ(config_error_of([&options] { memshard::validate_options(options); }),
            "memshard: SASL user name must not be empty: sasl.username");
  options.sasl = SaslCredentials{"alice", std::string("s3cret\0pw", 9)};
  const std::string text = config_error_of([&options] { memshard::validate_options(options); });
  EXPECT_EQ(text, "memshard: SASL user name and password must not hold a NUL byte: sasl");
  EXPECT_EQ(text.find("s3cret"), std::string::npos);
  EXPECT_EQ(text.find("alice"), std::string::npos);
}

TEST(SaslCredentialsTest, ThePasswordNeverPrints) {
  std::ostringstream out;
  out << SaslCredentials{"alice", "s3cret-pw"};
  EXPECT_EQ(out.str(), "SaslCredentials{username: \"alice\", password: <hidden>}");
  EXPECT_EQ(out.str().find("s3cret"), std::string::npos);
  EXPECT_EQ(::testing::PrintToString(SaslCredentials{"alice", "s3cret-pw"}).find("s3cret"),
            std::string::npos);
}

}  // namespace
}  // namespace client_options_test
