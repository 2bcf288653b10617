// The exact bytes of HTTP announce and scrape replies: clients parse them,
// and they must stay canonical bencode (keys sorted).
#include "tracker/announce_handler.h"

#include <gtest/gtest.h>

#include "proto/bencode.h"

namespace swarmcast::tracker {
namespace {

class FixedClock : public Clock {
 public:
  std::int64_t Now() const override { return 1000; }
};

std::string Query(char swarm, char peer, int port, std::int64_t left,
                  const std::string& extra = "") {
  return "info_hash=" + std::string(20, swarm) + "&peer_id=" + std::string(20, peer) +
         "&port=" + std::to_string(port) + "&uploaded=0&downloaded=0&left=" + std::to_string(left) +
         extra;
}

class AnnounceHandlerTest : public ::testing::Test {
 protected:
  std::string Announce(const std::string& query, const char* from = "127.0.0.1") {
    std::string reply = handler_.Announce(query, "", boost::asio::ip::make_address(from));
    EXPECT_TRUE(proto::DecodeBencode(reply).ok()) << "not canonical bencode: " << reply;
    return reply;
  }

  SwarmTable table_{StateOptions{}, nullptr, 1};
  Metrics metrics_;
  FixedClock clock_;
  AnnounceHandler handler_{table_, metrics_, clock_, AnnounceConfig{}};
};

TEST_F(AnnounceHandlerTest, CompactReply) {
  EXPECT_EQ(Announce(Query('h', 'a', 6001, 500, "&event=started")),
            "d8:completei0e10:downloadedi0e10:incompletei1e8:intervali120e"
            "12:min intervali30e5:peers0:e");
  EXPECT_EQ(Announce(Query('h', 'b', 6002, 0, "&event=completed")),
            "d8:completei1e10:downloadedi1e10:incompletei1e8:intervali120e"
            "12:min intervali30e5:peers6:" +
                std::string("\x7f\0\0\x01\x17\x71", 6) + "e");
}

TEST_F(AnnounceHandlerTest, CompactReplyWithIpv6Peers) {
  Announce(Query('6', 'a', 6001, 5), "::1");
  EXPECT_EQ(Announce(Query('6', 'b', 6002, 5)),
            "d8:completei0e10:downloadedi0e10:incompletei2e8:intervali120e"
            "12:min intervali30e5:peers0:6:peers618:" +
                std::string(15, '\0') + std::string("\x01\x17\x71", 3) + "e");
}

TEST_F(AnnounceHandlerTest, NonCompactReply) {
  Announce(Query('n', 'a', 6001, 5));
  EXPECT_EQ(Announce(Query('n', 'b', 6002, 5, "&compact=0")),
            "d8:completei0e10:downloadedi0e10:incompletei2e8:intervali120e12:min intervali30e"
            "5:peersld2:ip9:127.0.0.17:peer id20:aaaaaaaaaaaaaaaaaaaa4:porti6001eeee");
  Announce(Query('m', 'a', 6001, 5));
  EXPECT_EQ(Announce(Query('m', 'c', 6003, 5, "&compact=0&no_peer_id=1")),
            "d8:completei0e10:downloadedi0e10:incompletei2e8:intervali120e12:min intervali30e"
            "5:peersld2:ip9:127.0.0.14:porti6001eeee");
}

TEST_F(AnnounceHandlerTest, Scrape) {
  Announce(Query('s', 'a', 6001, 0));
  Announce(Query('t', 'a', 6001, 5));
  // Duplicates and unknown hashes are dropped; keys come out sorted.
  EXPECT_EQ(handler_.Scrape(
                "info_hash=" + std::string(20, 't') + "&info_hash=" + std::string(20, 'z') +
                    "&info_hash=" + std::string(20, 's') + "&info_hash=" + std::string(20, 't'),
                ""),
            "d5:filesd20:ssssssssssssssssssssd8:completei1e10:downloadedi0e10:incompletei0ee"
            "20:ttttttttttttttttttttd8:completei0e10:downloadedi0e10:incompletei1eeee");
}

TEST_F(AnnounceHandlerTest, FailureReasons) {
  EXPECT_EQ(BencodeFailure("tracker full: peer limit reached"),
            "d14:failure reason32:tracker full: peer limit reachede");
  EXPECT_EQ(Announce("port=1"), "d14:failure reason17:missing info_hashe");
  EXPECT_EQ(handler_.Scrape("", ""), "d14:failure reason35:scrape needs at least one info_hashe");
}

}  // namespace
}  // namespace swarmcast::tracker
