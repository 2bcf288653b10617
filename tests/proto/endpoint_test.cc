// The one host:port parser (proto/endpoint.h): every flag, URL and
// registry field that names an endpoint goes through it.
#include "proto/endpoint.h"

#include <gtest/gtest.h>

namespace swarmcast::proto {
namespace {

TEST(Endpoint, ParsesIpv4AndBracketedIpv6) {
  auto e = ParseEndpoint("127.0.0.2:6881");
  ASSERT_TRUE(e) << e.error();
  EXPECT_EQ(e->host, "127.0.0.2");
  EXPECT_EQ(e->port, 6881);
  EXPECT_FALSE(e->is_v6());
  // Was refused by --connect, which split at the last colon.
  e = ParseEndpoint("[::1]:6881");
  ASSERT_TRUE(e) << e.error();
  EXPECT_EQ(e->host, "::1");
  EXPECT_EQ(e->port, 6881);
  EXPECT_TRUE(e->is_v6());
  EXPECT_EQ(e->ToString(), "[::1]:6881");
}

TEST(Endpoint, SpellsAddressesCanonically) {
  EXPECT_EQ(ParseEndpoint("[0:0::0001]:80")->ToString(), "[::1]:80");
  EXPECT_EQ(ParseEndpoint("[FE80::A]:80")->host, "fe80::a");
  EXPECT_EQ(FormatEndpoint("10.0.0.1", 9), "10.0.0.1:9");
  EXPECT_EQ(FormatEndpoint("fe80::1", 9), "[fe80::1]:9");
}

TEST(Endpoint, RefusesWhatIsAmbiguousOrOutOfRange) {
  for (const char* bad : {"", ":80", "1.2.3.4", "1.2.3.4:", "1.2.3.4:0", "1.2.3.4:65536",
                          "1.2.3.4:80x", "1.2.3.4:-1", "::1:80", "[::1]", "[::1]80", "[::1",
                          "[1.2.3.4]:80", "[]:80", "host.lan:80", "1.2.3.256:80"}) {
    EXPECT_FALSE(ParseEndpoint(bad)) << "'" << bad << "'";
  }
  EXPECT_NE(ParseEndpoint("::1:80").error().find("brackets"), std::string::npos);
}

TEST(Endpoint, RulesForListenAddressesAndUrls) {
  auto any = ParseEndpoint("0.0.0.0:0", {.allow_port_zero = true});
  ASSERT_TRUE(any) << any.error();
  EXPECT_EQ(any->port, 0);
  const EndpointRules url{.allow_names = true, .default_port = 80};
  auto named = ParseEndpoint("tracker.lan", url);
  ASSERT_TRUE(named) << named.error();
  EXPECT_EQ(named->host, "tracker.lan");
  EXPECT_EQ(named->port, 80);
  EXPECT_EQ(ParseEndpoint("[::1]", url)->port, 80);
  EXPECT_EQ(ParseEndpoint("tracker.lan:6969", url)->port, 6969);
  EXPECT_FALSE(ParseEndpoint("bad host:1", url));
  EXPECT_FALSE(ParseEndpoint("-x:1", url));
  EXPECT_FALSE(ParseEndpoint(std::string(300, 'a') + ":1", url));
}

}  // namespace
}  // namespace swarmcast::proto
