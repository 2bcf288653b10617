#include "tracker/query_parse.h"

#include <gtest/gtest.h>

namespace swarmcast::tracker {
namespace {

const std::string kHash20 = "%01%02%03%04%05%06%07%08%09%0a%0b%0c%0d%0e%0f%10%11%12%13%14";
const std::string kPeer = "-SC0001-abcdefghijkl";

std::string Query(const std::string& extra = "") {
  return "info_hash=" + kHash20 + "&peer_id=" + kPeer + "&port=6881&uploaded=1&downloaded=2" +
         "&left=3" + extra;
}

TEST(SplitTarget, PathAndQuery) {
  auto r = SplitTarget("/announce?a=b&c");
  EXPECT_EQ(r.path, "/announce");
  EXPECT_EQ(r.query, "a=b&c");
  EXPECT_EQ(SplitTarget("/scrape").query, "");
}

TEST(PercentDecode, EscapesAndLimits) {
  EXPECT_EQ(PercentDecode("a%20b%ff+", 10), std::string("a b\xff+"));
  EXPECT_FALSE(PercentDecode("%2", 10));
  EXPECT_FALSE(PercentDecode("%", 10));
  EXPECT_FALSE(PercentDecode("%zz", 10));
  EXPECT_FALSE(PercentDecode("abcd", 3));
  EXPECT_EQ(PercentDecode("abc", 3), "abc");
}

TEST(ParseAnnounce, FullRequest) {
  auto r = ParseAnnounceQuery(Query("&event=started&numwant=10&compact=0&no_peer_id=1&key=x"), {});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->info_hash[0], 1);
  EXPECT_EQ(r->info_hash[19], 0x14);
  EXPECT_EQ(std::string(r->peer_id.begin(), r->peer_id.end()), kPeer);
  EXPECT_EQ(r->port, 6881);
  EXPECT_EQ(r->uploaded, 1);
  EXPECT_EQ(r->downloaded, 2);
  EXPECT_EQ(r->left, 3);
  EXPECT_EQ(r->event, AnnounceEvent::kStarted);
  EXPECT_EQ(r->numwant, 10);
  EXPECT_FALSE(r->compact);
  EXPECT_TRUE(r->no_peer_id);
}

TEST(ParseAnnounce, HexInfoHashAccepted) {
  auto r = ParseAnnounceQuery(
      "info_hash=0102030405060708090a0b0c0d0e0f1011121314&peer_id=" + kPeer + "&port=1", {});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->info_hash[19], 0x14);
}

TEST(ParseAnnounce, RejectsBadInput) {
  struct Case {
    std::string query, reason;
  } cases[] = {
      {"peer_id=" + kPeer + "&port=1", "missing info_hash"},
      {"info_hash=" + kHash20 + "&port=1", "missing peer_id"},
      {"info_hash=" + kHash20 + "&peer_id=" + kPeer, "missing port"},
      {"info_hash=abc&peer_id=" + kPeer + "&port=1", "invalid info_hash: must be 20 bytes"},
      {"info_hash=" + kHash20 + "%00&peer_id=" + kPeer + "&port=1",
       "invalid info_hash: must be 20 bytes"},
      {"info_hash=" + kHash20 + "&peer_id=short&port=1", "invalid peer_id: must be 20 bytes"},
      {Query("&port=2"), "duplicate parameter: port"},
      {"info_hash=" + kHash20 + "&peer_id=" + kPeer + "&port=0", "invalid port"},
      {"info_hash=" + kHash20 + "&peer_id=" + kPeer + "&port=65536", "invalid port"},
      {"info_hash=" + kHash20 + "&peer_id=" + kPeer + "&port=-1", "invalid port"},
      {"info_hash=" + kHash20 + "&peer_id=" + kPeer + "&port=1&left=-5", "invalid left"},
      {"info_hash=" + kHash20 + "&peer_id=" + kPeer + "&port=1&left=99999999999999999999",
       "invalid left"},
      {Query("&event=exploded"), "invalid event"},
      {Query("&compact=2"), "invalid compact"},
      {Query("&numwant=abc"), "invalid numwant"},
  };
  for (const Case& c : cases) {
    auto r = ParseAnnounceQuery(c.query, {});
    ASSERT_FALSE(r.ok()) << c.query;
    EXPECT_EQ(r.error(), c.reason) << c.query;
  }
}

TEST(ParseAnnounce, ParameterCountIsBounded) {
  QueryLimits limits;
  limits.max_params = 8;
  EXPECT_TRUE(ParseAnnounceQuery(Query("&a=1&b=2"), limits).ok());
  auto r = ParseAnnounceQuery(Query("&a=1&b=2&c=3"), limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "too many parameters");
}

TEST(ParseAnnounce, NumwantNegativeMeansDefault) {
  auto r = ParseAnnounceQuery(Query("&numwant=-1"), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->numwant, -1);
}

TEST(ParseScrape, ManyHashesBounded) {
  QueryLimits limits;
  limits.max_scrape_hashes = 2;
  auto r = ParseScrapeQuery("info_hash=" + kHash20 + "&info_hash=" + kHash20, limits);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->info_hashes.size(), 2u);
  auto bad = ParseScrapeQuery(
      "info_hash=" + kHash20 + "&info_hash=" + kHash20 + "&info_hash=" + kHash20, limits);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "too many info_hash values");
  EXPECT_FALSE(ParseScrapeQuery("info_hash=%41", limits).ok());
}

TEST(ParseAnnounceQuery, KeyHexIsANumberOtherwiseHashed) {
  auto hex = ParseAnnounceQuery(Query("&key=1A2B3C4D"), {});
  ASSERT_TRUE(hex.ok());
  EXPECT_TRUE(hex->has_key);
  EXPECT_EQ(hex->key, 0x1a2b3c4dU);
  auto text = ParseAnnounceQuery(Query("&key=not-hex%21"), {});
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(text->has_key);
  EXPECT_NE(text->key, 0u);
  auto none = ParseAnnounceQuery(Query("&key="), {});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_key);
  EXPECT_FALSE(ParseAnnounceQuery(Query("&key=1&key=2"), {}).ok());
}

}  // namespace
}  // namespace swarmcast::tracker
