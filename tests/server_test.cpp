// SPDX-License-Identifier: MIT
#include "memshard/placement/server.hpp"

#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace server_test {
namespace {

using memshard::ConfigError;
using memshard::parse_server;
using memshard::parse_servers;
using memshard::Server;

// Expects ConfigError whose message contains `fragment`.
void expect_config_error(std::string_view spec, std::string_view fragment) {
  try {
    (void)parse_server(spec);
    ADD_FAILURE() << "no exception for " << spec;
  } catch (const ConfigError& error) {
    const std::string what = error.what();
    EXPECT_EQ(what.rfind("memshard: ", 0), 0U) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(ParseServerTest, HostPortWeightName) {
  const Server server = parse_server("10.0.0.7:11212:2:cache-a");
  EXPECT_EQ(server.host, "10.0.0.7");
  EXPECT_EQ(server.port, 11212);
  EXPECT_EQ(server.weight, 2);
  EXPECT_EQ(server.name, "cache-a");
}

TEST(ParseServerTest, DefaultsPortAndWeight) {
  const Server server = parse_server("cache.example.com");
  EXPECT_EQ(server.host, "cache.example.com");
  EXPECT_EQ(server.port, 11211);
  EXPECT_EQ(server.weight, 1);
  EXPECT_EQ(server.name, "");
  EXPECT_EQ(parse_server("h:11300").port, 11300);
  EXPECT_EQ(parse_server("h:11300:2.5").weight, 2.5);
}

TEST(ParseServerTest, NameKeepsItsColons) { EXPECT_EQ(parse_server("h:1:1:a:b:c").name, "a:b:c"); }

TEST(ParseServerTest, BracketedIpv6) {
  const Server server = parse_server("[::1]:11212:3:v6");
  EXPECT_EQ(server.host, "::1");
  EXPECT_EQ(server.port, 11212);
  EXPECT_EQ(server.weight, 3);
  EXPECT_EQ(server.name, "v6");
  EXPECT_EQ(server.endpoint(), "[::1]:11212");
  EXPECT_EQ(parse_server("[fe80::1]").port, 11211);
}

TEST(ParseServerTest, RejectsBadSpecsNamingTheProblem) {
  expect_config_error("", "empty host");
  expect_config_error(":11211", "empty host");
  expect_config_error("h:", "port");
  expect_config_error("h:0", "port");
  expect_config_error("h:65536", "port");
  expect_config_error("h:12ab", "h:12ab");
  expect_config_error("h:-1", "port");
  expect_config_error("h:11211:0", "weight must be a positive");
  expect_config_error("h:11211:-2", "weight must be a positive");
  expect_config_error("h:11211:nan", "weight");
  expect_config_error("h:11211:inf", "weight");
  expect_config_error("h:11211:heavy", "weight is not a number");
  expect_config_error("h:11211:", "weight is not a number");
  expect_config_error("h:11211:1:", "empty name");
  expect_config_error("[::1:11211", "closing ']'");
  expect_config_error("[::1]x", "after ']'");
  // A host with a bracket of its own: its endpoint() would not read back.
  expect_config_error("[[0]:112", "'[' or ']'");
  expect_config_error("[a[b]", "'[' or ']'");
  expect_config_error("a]:11211", "'[' or ']'");
  expect_config_error("h\t:11211", "space or control");
}

TEST(ParseServersTest, CommaAndSpaceSeparated) {
  const std::vector<Server> servers = parse_servers("a:1, b:2\tc:3:2 ,d");
  ASSERT_EQ(servers.size(), 4U);
  EXPECT_EQ(servers[0].endpoint(), "a:1");
  EXPECT_EQ(servers[2].weight, 2);
  EXPECT_EQ(servers[3].endpoint(), "d:11211");
}

TEST(ParseServersTest, EmptyListAndDuplicatesAreErrors) {
  EXPECT_THROW((void)parse_servers(""), ConfigError);
  EXPECT_THROW((void)parse_servers(" , "), ConfigError);
  EXPECT_THROW((void)parse_servers("a:1,a:1:2"), ConfigError);
  EXPECT_THROW((void)parse_servers("a:1:1:x,b:1:1:x"), ConfigError);
  // Same host, other port: two servers.
  EXPECT_EQ(parse_servers("a:1,a:2").size(), 2U);
}

TEST(ValidateServerTest, ChecksFieldsSetInCode) {
  Server server{"h", 11211, 1, ""};
  EXPECT_NO_THROW(memshard::validate_server(server));
  server.weight = 0;
  EXPECT_THROW(memshard::validate_server(server), ConfigError);
  server.weight = std::numeric_limits<double>::infinity();
  EXPECT_THROW(memshard::validate_server(server), ConfigError);
  server.weight = 1e-46;  // zero in float32, where weighted rings compute
  EXPECT_THROW(memshard::validate_server(server), ConfigError);
  server.weight = 1e39;  // beyond float32
  EXPECT_THROW(memshard::validate_server(server), ConfigError);
  server.weight = 1;
  server.port = 0;
  EXPECT_THROW(memshard::validate_server(server), ConfigError);
  server.port = 1;
  server.host = "";
  EXPECT_THROW(memshard::validate_server(server), ConfigError);
  server.host = "a b";
  EXPECT_THROW(memshard::validate_server(server), ConfigError);
}

}  // namespace
}  // namespace server_test
