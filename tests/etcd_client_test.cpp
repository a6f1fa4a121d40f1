// SPDX-License-Identifier: MIT
// etcd_client_test.cpp: EtcdClient against a real etcd (support/etcd_server.hpp) for what etcd
// does, and against scripted HTTP peers for what etcd never does (replies that are not its API,
// endpoints that take a request and never answer).

#include "memshard/coordination/etcd_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/etcd_server.hpp"
#include "support/memcached_server.hpp"
#include "support/scripted_server.hpp"

namespace etcd_client_test {
namespace {

using memshard::EtcdClient;
using memshard::EtcdOptions;
using memshard::StoreErrc;
using memshard::testing::EtcdServer;
using memshard::testing::ScriptedServer;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One etcd for the suite's tests (each test uses keys of its own).
class EtcdClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    etcd_ = new EtcdServer();
  }  // NOLINT(cppcoreguidelines-owning-memory)
  static void TearDownTestSuite() {
    delete etcd_;  // NOLINT(cppcoreguidelines-owning-memory)
    etcd_ = nullptr;
  }
  static auto etcd() -> EtcdServer& { return *etcd_; }
  // key: a key of this test's own.
  static auto key(std::string_view name) -> std::string {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string("test/") + info->name() + "/" + std::string(name);
  }

 private:
  static EtcdServer* etcd_;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
};
EtcdServer* EtcdClientTest::etcd_ = nullptr;  // NOLINT

// http_reply: a whole HTTP/1.1 reply with `body`.
auto http_reply(std::string_view body, int status = 200) -> std::string {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + std::string(body);
}

// A peer that answers every request (at the blank line ending its headers) with `body`.
auto answering(std::string body, int status = 200) -> ScriptedServer::Script {
  return [reply = http_reply(body, status)](std::string_view line, std::size_t) {
    return line.empty() ? reply : std::string();
  };
}

// A port on which nothing listens (taken from the kernel, then released).
auto closed_port() -> std::uint16_t { return memshard::testing::detail::free_port(); }

TEST_F(EtcdClientTest, PutThenGetGivesBackEveryByteWithTheRevisionOfThePut) {
  EtcdClient client(etcd().url());
  std::string value;
  for (int byte = 0; byte < 256; ++byte) {
    value.push_back(static_cast<char>(byte));
  }
  const std::string k = key(std::string("k\0\xff", 3));
  const auto put = client.put(k, value);
  ASSERT_TRUE(put.ok()) << put.status();
  const auto got = client.get(k);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->entries.size(), 1U);
  EXPECT_EQ(got->entries[0].key, k);
  EXPECT_EQ(got->entries[0].value, value);
  EXPECT_EQ(got->entries[0].mod_revision, put.value());
  EXPECT_EQ(got->entries[0].create_revision, put.value());
  EXPECT_EQ(got->entries[0].version, 1);
  EXPECT_EQ(got->entries[0].lease, 0);
  EXPECT_GE(got->revision, put.value());
}

TEST_F(EtcdClientTest, AMissingKeyHasNoEntryAndAnEmptyValueIsOne) {
  EtcdClient client(etcd().url());
  const auto missing = client.get(key("missing"));
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_TRUE(missing->entries.empty());
  EXPECT_GT(missing->revision, 0);
  ASSERT_TRUE(client.put(key("empty"), "").ok());
  const auto empty = client.get(key("empty"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  ASSERT_EQ(empty->entries.size(), 1U);
  EXPECT_EQ(empty->entries[0].value, "");
}

TEST_F(EtcdClientTest, ListGivesTheKeysUnderThePrefixInKeyOrderAndNoOther) {
  EtcdClient client(etcd().url());
  const std::string prefix = key("p/");
  for (const std::string& k : {prefix + "b", prefix + "a", prefix + "\xff", key("p0"), key("p")}) {
    ASSERT_TRUE(client.put(k, "v:" + k).ok());
  }
  const auto listed = client.list(prefix);
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> keys;
  for (const auto& entry : listed->entries) {
    keys.push_back(entry.key);
    EXPECT_EQ(entry.value, "v:" + entry.key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{prefix + "a", prefix + "b", prefix + "\xff"}));
}

TEST_F(EtcdClientTest, PutIfWritesOnlyWhileTheRevisionReadStillHolds) {
  EtcdClient client(etcd().url());
  const std::string k = key("record");
  const auto created = client.put_if(k, "one", 0);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_TRUE(created->succeeded);
  const auto again = client.put_if(k, "two", 0);  // it exists now
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->succeeded);
  const auto stale = client.put_if(k, "two", created->revision - 1);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(stale->succeeded);
  const auto current = client.put_if(k, "three", created->revision);
  ASSERT_TRUE(current.ok());
  EXPECT_TRUE(current->succeeded);
  EXPECT_GT(current->revision, created->revision);
  const auto got = client.get(k);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->entries.size(), 1U);
  EXPECT_EQ(got->entries[0].value, "three");
  EXPECT_EQ(got->entries[0].mod_revision, current->revision);
}

TEST_F(EtcdClientTest, RemoveCountsWhatItDeleted) {
  EtcdClient client(etcd().url());
  ASSERT_TRUE(client.put(key("gone"), "x").ok());
  const auto first = client.remove(key("gone"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first.value(), 1);
  const auto second = client.remove(key("gone"));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value(), 0);
  EXPECT_TRUE(client.get(key("gone"))->entries.empty());
}

TEST_F(EtcdClientTest, ALeaseKeepsItsKeyUntilRevokedAndIsThenGone) {
  EtcdClient client(etcd().url());
  const auto lease = client.grant(std::chrono::seconds{30});
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_NE(lease->id, 0);
  EXPECT_GE(lease->ttl, std::chrono::seconds{30});
  ASSERT_TRUE(client.put(key("member"), "alive", lease->id).ok());
  const auto got = client.get(key("member"));
  ASSERT_EQ(got->entries.size(), 1U);
  EXPECT_EQ(got->entries[0].lease, lease->id);
  const auto renewed = client.keep_alive(lease->id);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_GE(renewed.value(), std::chrono::seconds{29});
  const auto revoked = client.revoke(lease->id);
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_TRUE(revoked.value());
  EXPECT_TRUE(client.get(key("member"))->entries.empty());
  // Gone: a second revoke finds nothing, a keep-alive says 0 s, a put bound to it is refused.
  const auto twice = client.revoke(lease->id);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_FALSE(twice.value());
  const auto late = client.keep_alive(lease->id);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(late.value(), std::chrono::seconds{0});
  const auto bound = client.put(key("member"), "again", lease->id);
  EXPECT_EQ(bound.code(), StoreErrc::kRejected) << bound.status();
  EXPECT_NE(bound.status().message().find("lease not found"), std::string::npos);
}

TEST_F(EtcdClientTest, AKeyGoesWithALeaseThatIsNotKeptAlive) {
  EtcdClient client(etcd().url());
  const auto lease = client.grant(std::chrono::seconds{1});
  ASSERT_TRUE(lease.ok()) << lease.status();
  ASSERT_TRUE(client.put(key("member"), "alive", lease->id).ok());
  const auto deadline = Clock::now() + std::chrono::seconds{10};
  bool gone = false;
  while (!gone && Clock::now() < deadline) {
    gone = client.get(key("member"))->entries.empty();
    if (!gone) {
      std::this_thread::sleep_for(milliseconds{50});
    }
  }
  EXPECT_TRUE(gone);
  EXPECT_EQ(client.keep_alive(lease->id).value(), std::chrono::seconds{0});
}

TEST_F(EtcdClientTest, AnEndpointThatRefusesConnectionsIsPassedOver) {
  EtcdClient client("etcd://127.0.0.1:" + std::to_string(closed_port()) + "," + etcd().endpoint());
  const auto put = client.put(key("k"), "v");
  ASSERT_TRUE(put.ok()) << put.status();
  const auto put_if = client.put_if(key("k2"), "v", 0);  // never sent to the dead endpoint
  ASSERT_TRUE(put_if.ok()) << put_if.status();
  EXPECT_TRUE(put_if->succeeded);
}

TEST_F(EtcdClientTest, AProxyInTheEnvironmentIsNeverUsed) {
  // etcd's traffic goes straight to its endpoints, whatever the process's proxy settings say.
  const std::string proxy = "http://127.0.0.1:" + std::to_string(closed_port());
  ::setenv("http_proxy", proxy.c_str(), 1);
  ::setenv("HTTP_PROXY", proxy.c_str(), 1);
  ::setenv("ALL_PROXY", proxy.c_str(), 1);
  EtcdClient client(etcd().url());
  const auto put = client.put(key("k"), "v");
  ::unsetenv("http_proxy");
  ::unsetenv("HTTP_PROXY");
  ::unsetenv("ALL_PROXY");
  EXPECT_TRUE(put.ok()) << put.status();
}

TEST_F(EtcdClientTest, NoEndpointThatAnswersIsUnreachableBeforeTheDeadline) {
  EtcdOptions options;
  options.request_timeout = milliseconds{1'000};
  EtcdClient client("etcd://127.0.0.1:" + std::to_string(closed_port()) +
                        ",127.0.0.1:" + std::to_string(closed_port()),
                    options);
  const auto start = Clock::now();
  const auto got = client.get("k");
  EXPECT_LT(Clock::now() - start, milliseconds{1'500});
  EXPECT_EQ(got.code(), StoreErrc::kUnreachable) << got.status();
  EXPECT_NE(got.status().message().find("127.0.0.1"), std::string::npos);
}

TEST_F(EtcdClientTest, AHungEndpointTakesItsShareOfTheDeadlineFromARead) {
  // A listener that never accepts: the connection completes in its backlog and the request is
  // sent, but nothing ever answers.
  std::uint16_t port = 0;
  const auto hung = memshard::testing::detail::listen_loopback(port);
  EtcdOptions options;
  options.request_timeout = milliseconds{1'000};
  EtcdClient client("etcd://127.0.0.1:" + std::to_string(port) + "," + etcd().endpoint(), options);
  const auto start = Clock::now();
  const auto got = client.get(key("k"));
  const auto took = Clock::now() - start;
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_LT(took, milliseconds{1'500});
  EXPECT_GE(took, milliseconds{400});  // the hung endpoint had half of it
}

TEST_F(EtcdClientTest, AConditionalPutSentToAHungEndpointIsATimeoutNeverRepeated) {
  std::uint16_t port = 0;
  const auto hung = memshard::testing::detail::listen_loopback(port);
  EtcdOptions options;
  options.request_timeout = milliseconds{600};
  EtcdClient client("etcd://127.0.0.1:" + std::to_string(port) + "," + etcd().endpoint(), options);
  const auto start = Clock::now();
  const auto wrote = client.put_if(key("k"), "v", 0);
  EXPECT_LT(Clock::now() - start, milliseconds{1'100});
  EXPECT_EQ(wrote.code(), StoreErrc::kTimeout) << wrote.status();
  EXPECT_NE(wrote.status().message().find("may or may not"), std::string::npos);
  // It was not repeated on the good endpoint.
  EXPECT_TRUE(EtcdClient(etcd().url()).get(key("k"))->entries.empty());
}

TEST_F(EtcdClientTest, AStoppedEtcdIsUnreachableAtOnce) {
  EtcdServer own;
  EtcdOptions options;
  options.request_timeout = milliseconds{1'000};
  EtcdClient client(own.url(), options);
  ASSERT_TRUE(client.put("kept", "v").ok());  // a connection is open and kept
  own.stop();
  const auto start = Clock::now();
  const auto down = client.get("kept");
  EXPECT_LT(Clock::now() - start, milliseconds{1'000});
  EXPECT_EQ(down.code(), StoreErrc::kUnreachable) << down.status();
}

TEST_F(EtcdClientTest, APausedEtcdTimesOutWithinTheDeadlineAndAnswersOnceResumed) {
  EtcdServer own;
  EtcdOptions options;
  options.request_timeout = milliseconds{500};
  EtcdClient client(own.url(), options);
  ASSERT_TRUE(client.put("k", "v").ok());  // the connection is open and kept
  own.pause();
  const auto start = Clock::now();
  const auto hung = client.get("k");
  EXPECT_LT(Clock::now() - start, milliseconds{1'000});
  EXPECT_EQ(hung.code(), StoreErrc::kTimeout) << hung.status();
  own.resume();
  const auto deadline = Clock::now() + std::chrono::seconds{10};
  auto back = client.get("k");
  while (!back.ok() && Clock::now() < deadline) {
    back = client.get("k");
  }
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->entries.at(0).value, "v");
}

TEST_F(EtcdClientTest, RepliesThatAreNotEtcdsApiAreBadReplies) {
  struct Case {
    std::string body;
    int status;
    std::string_view what;
  };
  const std::vector<Case> cases = {
      {"not json", 200, "not JSON"},
      {"[1,2]", 200, "not an object"},
      {R"({"kvs":[]})", 200, "no header"},
      {R"({"header":{"revision":"x"}})", 200, "a revision that is not a number"},
      {R"({"header":{"revision":"5"},"kvs":{}})", 200, "kvs not a list"},
      {R"({"header":{"revision":"5"},"kvs":[{"key":"!!!!","mod_revision":"5"}]})", 200,
       "a key that is not base64"},
      {R"({"header":{"revision":"5"},"kvs":[{"key":"YQ=","mod_revision":"5"}]})", 200,
       "base64 without its padding"},
      {R"({"header":{"revision":"5"},"kvs":[{"key":"YQ==","mod_revision":"5x"}]})", 200,
       "a mod_revision that is not a number"},
      {R"({"header":{"revision":"5"},"kvs":[{"key":"YQ=="}]})", 200, "no mod_revision"},
      {std::string(300, ' ') + "{}", 200, "over max_reply_bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const ScriptedServer peer(answering(c.body, c.status));
    EtcdOptions options;
    options.max_reply_bytes = 256;
    EtcdClient client("etcd://" + peer.spec(), options);
    const auto got = client.get("a");
    EXPECT_EQ(got.code(), StoreErrc::kBadReply) << got.status();
  }
}

TEST_F(EtcdClientTest, AnErrorReplyIsRejectedWithEtcdsMessage) {
  const ScriptedServer peer(answering(
      R"({"error":"etcdserver: mvcc: required revision has been compacted","code":11})", 400));
  EtcdClient client("etcd://" + peer.spec());
  const auto got = client.get("a");
  EXPECT_EQ(got.code(), StoreErrc::kRejected);
  EXPECT_NE(got.status().message().find("compacted"), std::string::npos) << got.status();
}

TEST_F(EtcdClientTest, AnUnavailableMemberSendsAReadToTheNextEndpointButNotAConditionalPut) {
  const ScriptedServer unavailable(
      answering(R"({"error":"etcdserver: no leader","code":14})", 503));
  EtcdClient client("etcd://" + unavailable.spec() + "," + etcd().endpoint());
  const auto read = client.get(key("k"));
  ASSERT_TRUE(read.ok()) << read.status();
  EtcdClient writer("etcd://" + unavailable.spec() + "," + etcd().endpoint());
  const auto wrote = writer.put_if(key("k"), "v", 0);
  EXPECT_EQ(wrote.code(), StoreErrc::kTimeout) << wrote.status();
  EXPECT_TRUE(EtcdClient(etcd().url()).get(key("k"))->entries.empty());
}

TEST(EtcdClientConfigTest, BadOptionsThrowAtConstruction) {
  EtcdOptions zero;
  zero.request_timeout = milliseconds{0};
  EXPECT_THROW(EtcdClient("etcd://127.0.0.1:2379", zero), memshard::ConfigError);
  EtcdOptions slow_connect;
  slow_connect.connect_timeout = milliseconds{3'000};
  slow_connect.request_timeout = milliseconds{2'000};
  EXPECT_THROW(EtcdClient("etcd://127.0.0.1:2379", slow_connect), memshard::ConfigError);
  EtcdOptions no_reply;
  no_reply.max_reply_bytes = 0;
  EXPECT_THROW(EtcdClient("etcd://127.0.0.1:2379", no_reply), memshard::ConfigError);
  EXPECT_THROW(EtcdClient("http://127.0.0.1:2379"), memshard::ConfigError);
  EXPECT_THROW(EtcdClient(std::vector<memshard::StoreEndpoint>{}), memshard::ConfigError);
}

TEST(EtcdClientPrefixTest, ThePrefixEndIsTheNextKeyAfterEveryKeyWithThePrefix) {
  using memshard::detail::prefix_end;
  EXPECT_EQ(prefix_end("a/"), "a0");
  EXPECT_EQ(prefix_end("a\xff"), "b");
  EXPECT_EQ(prefix_end(std::string("\xff\xff", 2)), std::string(1, '\0'));
  EXPECT_EQ(prefix_end(""), std::string(1, '\0'));
}

}  // namespace
}  // namespace etcd_client_test
