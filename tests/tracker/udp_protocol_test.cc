#include <gtest/gtest.h>

#include <cstring>

#include "tracker/udp_server.h"

namespace swarmcast::tracker {
namespace {
using boost::asio::ip::make_address;
using udp = boost::asio::ip::udp;

class FakeClock : public Clock {
 public:
  std::int64_t Now() const override { return now; }
  std::int64_t now = 1'000'000;
};

void Put(std::vector<std::uint8_t>& v, std::uint64_t x, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
}
std::uint32_t Get32(const std::vector<std::uint8_t>& v, std::size_t at) {
  return std::uint32_t{v[at]} << 24 | std::uint32_t{v[at + 1]} << 16 |
         std::uint32_t{v[at + 2]} << 8 | v[at + 3];
}

struct Fixture {
  FakeClock clock;
  Metrics metrics;
  SwarmTable table{{}, nullptr, 1};
  UdpProtocol proto{table, metrics, clock, {}, SipKey{1, 2}};

  std::uint64_t Connect(const udp::endpoint& from) {
    std::vector<std::uint8_t> req, reply;
    Put(req, 0x41727101980ULL, 8);
    Put(req, 0, 4);
    Put(req, 77, 4);
    EXPECT_TRUE(proto.Handle(req.data(), req.size(), from, reply));
    EXPECT_EQ(reply.size(), 16u);
    EXPECT_EQ(Get32(reply, 4), 77u);
    std::uint64_t id = 0;
    for (int i = 8; i < 16; ++i) id = id << 8 | reply[static_cast<std::size_t>(i)];
    return id;
  }
  // The reply; empty when the tracker sends none.
  std::vector<std::uint8_t> Announce(std::uint64_t conn, const udp::endpoint& from, int peer) {
    std::vector<std::uint8_t> req, reply;
    Put(req, conn, 8);
    Put(req, 1, 4);
    Put(req, 5, 4);
    req.insert(req.end(), 20, 0xab);                             // info_hash
    req.insert(req.end(), 20, static_cast<std::uint8_t>(peer));  // peer_id
    Put(req, 0, 8);
    Put(req, 100, 8);
    Put(req, 0, 8);
    Put(req, 2, 4);
    Put(req, 0, 4);
    Put(req, 0, 4);
    Put(req, 0xffffffff, 4);
    Put(req, 6000 + peer, 2);
    if (!proto.Handle(req.data(), req.size(), from, reply)) reply.clear();
    return reply;
  }
};

TEST(UdpProtocol, ConnectionIdBoundToAddressAndTime) {
  Fixture f;
  udp::endpoint a(make_address("127.0.0.1"), 5000), b(make_address("127.0.0.2"), 5000);
  std::uint64_t id = f.Connect(a);
  auto ok = f.Announce(id, a, 1);
  EXPECT_EQ(Get32(ok, 0), 1u) << "announce accepted";
  // An id from another address, or an expired one, gets no reply at all:
  // errors go only to verified sources.
  EXPECT_TRUE(f.Announce(id, b, 2).empty()) << "an id from another address is refused";
  f.clock.now += 130;  // next window: still valid
  EXPECT_EQ(Get32(f.Announce(id, a, 1), 0), 1u);
  f.clock.now += 240;  // two windows later: expired
  EXPECT_TRUE(f.Announce(id, a, 1).empty());
}

TEST(UdpProtocol, AnnounceReturnsOtherPeers) {
  Fixture f;
  udp::endpoint a(make_address("127.0.0.1"), 5000), b(make_address("127.0.0.1"), 5001);
  f.Announce(f.Connect(a), a, 1);
  auto r = f.Announce(f.Connect(b), b, 2);
  ASSERT_EQ(r.size(), 26u);
  EXPECT_EQ(Get32(r, 12), 2u);  // leechers
  EXPECT_EQ(r[20], 127);
  EXPECT_EQ(r[24] << 8 | r[25], 6001);
}

TEST(UdpProtocol, MalformedDatagrams) {
  Fixture f;
  udp::endpoint a(make_address("127.0.0.1"), 5000);
  std::vector<std::uint8_t> reply;
  std::uint8_t tiny[8] = {};
  EXPECT_FALSE(f.proto.Handle(tiny, sizeof tiny, a, reply));
  std::vector<std::uint8_t> bad_magic;
  Put(bad_magic, 1234, 8);
  Put(bad_magic, 0, 4);
  Put(bad_magic, 1, 4);
  EXPECT_FALSE(f.proto.Handle(bad_magic.data(), bad_magic.size(), a, reply));
  std::uint64_t id = f.Connect(a);
  std::vector<std::uint8_t> short_announce;
  Put(short_announce, id, 8);
  Put(short_announce, 1, 4);
  Put(short_announce, 9, 4);
  short_announce.resize(60);
  ASSERT_TRUE(f.proto.Handle(short_announce.data(), short_announce.size(), a, reply));
  EXPECT_EQ(Get32(reply, 0), 3u);
  EXPECT_EQ(Get32(reply, 4), 9u);
  std::vector<std::uint8_t> bad_scrape;
  Put(bad_scrape, id, 8);
  Put(bad_scrape, 2, 4);
  Put(bad_scrape, 10, 4);
  bad_scrape.resize(16 + 19);
  ASSERT_TRUE(f.proto.Handle(bad_scrape.data(), bad_scrape.size(), a, reply));
  EXPECT_EQ(Get32(reply, 0), 3u);
}

}  // namespace
}  // namespace swarmcast::tracker
