#include "tracker/peer_selection.h"

#include <gtest/gtest.h>

#include <set>

namespace swarmcast::tracker {
namespace {

PeerAddress V4(int a, int b, int c, int d, std::uint16_t port) {
  PeerAddress p;
  p.ip = {static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(c),
          static_cast<std::uint8_t>(d)};
  p.port = port;
  return p;
}

Peer MakePeer(int n, PeerAddress addr) {
  Peer p;
  p.id.fill(static_cast<std::uint8_t>(n));
  p.addr = addr;
  return p;
}

TEST(SameSubnet, PrefixBits) {
  SubnetPrefix p;
  EXPECT_TRUE(SameSubnet(V4(10, 0, 1, 5, 1), V4(10, 0, 1, 200, 2), p));
  EXPECT_FALSE(SameSubnet(V4(10, 0, 1, 5, 1), V4(10, 0, 2, 5, 1), p));
  p.v4 = 23;
  EXPECT_TRUE(SameSubnet(V4(10, 0, 2, 5, 1), V4(10, 0, 3, 5, 1), p));
  EXPECT_FALSE(SameSubnet(V4(10, 0, 1, 5, 1), V4(10, 0, 2, 5, 1), p));
  PeerAddress v6 = V4(10, 0, 1, 5, 1);
  v6.v6 = true;
  EXPECT_FALSE(SameSubnet(v6, V4(10, 0, 1, 5, 1), p));
}

TEST(ChoosePeers, NeverReturnsAskerOrStopped) {
  std::vector<Peer> peers;
  for (int i = 0; i < 10; ++i) peers.push_back(MakePeer(i, V4(10, 0, 0, i, 6881)));
  peers[3].stopped = true;
  // Another peer id at the asker's own address and port is the asker too.
  peers[7].addr = peers[5].addr;
  PeerRng rng(1);
  for (int round = 0; round < 50; ++round) {
    auto chosen = ChoosePeers(peers, 5, peers[5].addr, 100, {}, rng);
    std::set<std::size_t> s(chosen.begin(), chosen.end());
    EXPECT_EQ(s.size(), chosen.size()) << "duplicates";
    EXPECT_EQ(chosen.size(), 7u);
    EXPECT_FALSE(s.count(5));
    EXPECT_FALSE(s.count(3));
    EXPECT_FALSE(s.count(7));
  }
}

TEST(ChoosePeers, PrefersAskersSubnet) {
  std::vector<Peer> peers;
  for (int i = 0; i < 40; ++i) peers.push_back(MakePeer(i, V4(192, 168, 9, i, 1)));
  for (int i = 0; i < 5; ++i) peers.push_back(MakePeer(100 + i, V4(10, 1, 2, i, 1)));
  PeerAddress asker = V4(10, 1, 2, 99, 1);
  PeerRng rng(7);
  for (int round = 0; round < 20; ++round) {
    auto chosen = ChoosePeers(peers, peers.size(), asker, 8, {}, rng);
    ASSERT_EQ(chosen.size(), 8u);
    int local = 0;
    for (std::size_t i : chosen) local += SameSubnet(peers[i].addr, asker, {});
    EXPECT_EQ(local, 5) << "all five LAN peers come first";
  }
}

TEST(ChoosePeers, RandomSubsetCoversSwarm) {
  std::vector<Peer> peers;
  for (int i = 0; i < 100; ++i) peers.push_back(MakePeer(i, V4(172, 16, i, 1, 1)));
  PeerRng rng(3);
  std::set<std::size_t> seen;
  for (int round = 0; round < 200; ++round) {
    auto chosen = ChoosePeers(peers, peers.size(), V4(8, 8, 8, 8, 1), 5, {}, rng);
    EXPECT_EQ(chosen.size(), 5u);
    seen.insert(chosen.begin(), chosen.end());
  }
  EXPECT_GT(seen.size(), 90u) << "selection should not stick to a few peers";
}

TEST(ChoosePeers, EmptyAndZeroWant) {
  PeerRng rng(1);
  EXPECT_TRUE(ChoosePeers({}, 0, V4(1, 2, 3, 4, 5), 10, {}, rng).empty());
  std::vector<Peer> one{MakePeer(1, V4(1, 1, 1, 1, 1))};
  EXPECT_TRUE(ChoosePeers(one, 1, V4(1, 2, 3, 4, 5), 0, {}, rng).empty());
  EXPECT_EQ(ChoosePeers(one, 1, V4(1, 2, 3, 4, 5), 5, {}, rng).size(), 1u);
}

}  // namespace
}  // namespace swarmcast::tracker
