// SPDX-License-Identifier: MIT
// store_url_test.cpp: parse_store_url, every accepted form and a refusal for each malformed one.

#include "memshard/coordination/store_url.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace store_url_test {
namespace {

using memshard::parse_store_url;
using memshard::StoreEndpoint;

TEST(StoreUrlTest, OneEndpointWithItsPort) {
  const auto endpoints = parse_store_url("etcd://127.0.0.1:23790");
  ASSERT_EQ(endpoints.size(), 1U);
  EXPECT_EQ(endpoints[0].host, "127.0.0.1");
  EXPECT_EQ(endpoints[0].port, 23790);
  EXPECT_EQ(endpoints[0].url(), "http://127.0.0.1:23790");
  EXPECT_EQ(endpoints[0].text(), "127.0.0.1:23790");
}

TEST(StoreUrlTest, SeveralEndpointsInTheirOrderAndTheDefaultPort) {
  const auto endpoints =
      parse_store_url("etcd://etcd-1.internal,10.0.0.2:2380,[::1]:2381,[fe80::1]");
  EXPECT_EQ(endpoints,
            (std::vector<StoreEndpoint>{
                {"etcd-1.internal", 2379}, {"10.0.0.2", 2380}, {"::1", 2381}, {"fe80::1", 2379}}));
  EXPECT_EQ(endpoints[2].url(), "http://[::1]:2381");
}

TEST(StoreUrlTest, EveryMalformedUrlIsAConfigErrorThatQuotesIt) {
  const std::vector<std::string> bad = {
      "",
      "127.0.0.1:2379",
      "http://127.0.0.1:2379",
      "etcd://",
      "etcd://,",
      "etcd://a,,b",
      "etcd://a,",
      "etcd://:2379",
      "etcd://a:",
      "etcd://a:0",
      "etcd://a:65536",
      "etcd://a:12x",
      "etcd://a:-1",
      "etcd://a b:1",
      "etcd://a/v3",
      "etcd://user@a:1",
      "etcd://a:1?x",
      "etcd://a:1,a:1",
      "etcd://a,a:2379",
      "etcd://[::1",
      "etcd://[]:1",
      "etcd://[zz::1]:1",
      "etcd://[::1]x",
      "etcd://[::1]:",
  };
  for (const std::string& url : bad) {
    SCOPED_TRACE(url);
    try {
      (void)parse_store_url(url);
      ADD_FAILURE() << "accepted";
    } catch (const memshard::ConfigError& error) {
      EXPECT_NE(std::string(error.what()).find("store URL"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find(url), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace store_url_test
