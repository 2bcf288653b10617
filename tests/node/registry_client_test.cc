#include "node/registry_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>

namespace swarmcast::node {
namespace {

TEST(TrackerUrl, ParsesHostPortAndBase) {
  auto u = ParseTrackerUrl("http://127.0.0.1:6969");
  ASSERT_TRUE(u) << u.error();
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "6969");
  EXPECT_EQ(u->base_path, "");
  EXPECT_EQ(u->AnnounceUrl(), "http://127.0.0.1:6969/announce");

  u = ParseTrackerUrl("http://tracker.lan/sc/");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->port, "80");
  EXPECT_EQ(u->base_path, "/sc");
  EXPECT_EQ(u->AnnounceUrl(), "http://tracker.lan:80/sc/announce");

  // Was resolved as host "[::1]:6969", port 80.
  u = ParseTrackerUrl("http://[::1]:6969/");
  ASSERT_TRUE(u) << u.error();
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, "6969");
  EXPECT_EQ(u->ToString(), "http://[::1]:6969");
}

TEST(TrackerUrl, HttpsKeepsItsSchemeInEveryUrlMadeFromIt) {
  auto u = ParseTrackerUrl("https://tracker.lan/sc/");
  ASSERT_TRUE(u) << u.error();
  EXPECT_TRUE(u->https);
  EXPECT_EQ(u->port, "443");
  EXPECT_EQ(u->ToString(), "https://tracker.lan:443/sc");
  EXPECT_EQ(u->AnnounceUrl(), "https://tracker.lan:443/sc/announce");

  u = ParseTrackerUrl("https://[::1]:6969");
  ASSERT_TRUE(u) << u.error();
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->AnnounceUrl(), "https://[::1]:6969/announce");
  EXPECT_FALSE(ParseTrackerUrl("http://127.0.0.1:6969")->https);
}

TEST(RegistryClient, HttpsWithoutATlsContextIsRefusedNotSentInClear) {
  RegistryClient client(*ParseTrackerUrl("https://127.0.0.1:1"), std::chrono::seconds(2));
  auto r = client.GetSwarm("disk.img");
  ASSERT_FALSE(r);
  EXPECT_NE(ToString(r.error()).find("no TLS context"), std::string::npos) << ToString(r.error());
}

TEST(ClientTls, CaFileMustExistAndHoldACertificate) {
  auto missing = MakeClientTlsContext("/nonexistent/ca.pem");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("--ca-file /nonexistent/ca.pem"), std::string::npos);
  const std::string text = ::testing::TempDir() + "ca-not-pem.txt";
  std::ofstream(text) << "not a certificate\n";
  auto not_pem = MakeClientTlsContext(text);
  std::remove(text.c_str());
  ASSERT_FALSE(not_pem);
  EXPECT_NE(not_pem.error().find("no CA certificate"), std::string::npos) << not_pem.error();
  EXPECT_TRUE(MakeClientTlsContext(""));  // the system's CAs
}

TEST(TrackerUrl, RefusesOtherSchemesAndBadPorts) {
  EXPECT_FALSE(ParseTrackerUrl("ftp://x:1"));
  EXPECT_FALSE(ParseTrackerUrl("httpss://x:1"));
  EXPECT_FALSE(ParseTrackerUrl("udp://x:1"));
  EXPECT_FALSE(ParseTrackerUrl("127.0.0.1:6969"));
  EXPECT_FALSE(ParseTrackerUrl("http://:6969"));
  EXPECT_FALSE(ParseTrackerUrl("http://x:0"));
  EXPECT_FALSE(ParseTrackerUrl("http://x:70000"));
  EXPECT_FALSE(ParseTrackerUrl("http://x:12ab"));
  EXPECT_FALSE(ParseTrackerUrl("http://::1:6969"));  // IPv6 needs brackets
  EXPECT_FALSE(ParseTrackerUrl("http://[::1"));
}

TEST(CompletionView, AllDoneWaitsForRunningAndStalePeers) {
  CompletionView v;
  EXPECT_FALSE(v.AllDone());
  v.total = 5;
  v.done = 4;
  v.running = 1;
  EXPECT_FALSE(v.AllDone());
  v.running = 0;
  v.stale = 1;
  EXPECT_FALSE(v.AllDone());
  v.stale = 0;
  v.total = 4;
  EXPECT_TRUE(v.AllDone());
}

TEST(RegistryClient, UnreachableTrackerFailsFastWithAClearError) {
  // Port 1 on loopback: nothing listens there, the connect is refused.
  RegistryClient client(*ParseTrackerUrl("http://127.0.0.1:1"), std::chrono::seconds(2));
  const auto start = std::chrono::steady_clock::now();
  auto r = client.GetSwarm("disk.img");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, RegistryError::Kind::kUnreachable);
  EXPECT_NE(ToString(r.error()).find("127.0.0.1:1"), std::string::npos) << ToString(r.error());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace swarmcast::node
