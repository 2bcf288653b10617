// ChainShare: when a chain seed gives up its chain to other traffic on
// its uplink; UplinkMeter: reading an interface's sent bytes.
#include "node/push/chain_share.h"

#include <gtest/gtest.h>

#include "node/push/uplink_meter.h"

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;
using Clock = ChainShare::Clock;

constexpr std::uint64_t kMiB = 1 << 20;

class ChainShareTest : public ::testing::Test {
 protected:
  // One window of 1 s: the chain pushes `chain` bytes, `sent` leave the
  // interface, of which `wire` are the seed's BitTorrent uploads.
  std::optional<double> Window(std::uint64_t chain, std::uint64_t sent, std::uint64_t wire = 0) {
    now_ += 1s;
    total_.chain_bytes += chain;
    total_.sent_bytes += sent;
    total_.wire_bytes += wire;
    return share_.Observe(now_, total_);
  }
  // The same, with the chain's head lacking pieces at the window's end.
  std::optional<double> WantedWindow(std::uint64_t chain, std::uint64_t sent,
                                     std::uint64_t wire = 0) {
    total_.head_lacks = true;
    auto share = Window(chain, sent, wire);
    total_.head_lacks = false;
    return share;
  }

  ChainShare share_{ChainShareOptions{
      .window = 1s, .windows = 2, .min_share = 0.5, .min_window_bytes = 128 << 10}};
  Clock::time_point now_ = Clock::now();
  UplinkSample total_;

  void SetUp() override { EXPECT_FALSE(share_.Observe(now_, total_)); }
};

TEST_F(ChainShareTest, AChainWithTheWholeUplinkIsKept) {
  // 95%: the rest is headers.
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(Window(95 * kMiB / 100, kMiB)) << i;
}

TEST_F(ChainShareTest, AChainWithASmallShareEndsAfterTwoWindows) {
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  const auto share = Window(kMiB / 10, kMiB);
  ASSERT_TRUE(share);
  EXPECT_NEAR(*share, 0.075, 1e-5);  // the streak's mean
}

TEST_F(ChainShareTest, AWindowWithItsShareEndsTheStreak) {
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  EXPECT_FALSE(Window(9 * kMiB / 10, kMiB));
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  EXPECT_TRUE(Window(kMiB / 20, kMiB));
}

TEST_F(ChainShareTest, TheSeedsOwnWireUploadsAreNotOtherTraffic) {
  // Half the uplink went to gets over the wire (links that left the
  // chain): the chain has all of what is not the seed's.
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(Window(kMiB / 2, kMiB, kMiB / 2 - 10000)) << i;
  // Counted as other traffic, it would have ended the chain.
  EXPECT_FALSE(Window(kMiB / 3, kMiB));
  EXPECT_TRUE(Window(kMiB / 3, kMiB));
}

TEST_F(ChainShareTest, WindowsWithoutPushesOrWithFewBytesAreNotJudged) {
  // The chain not started (or the head holds all): nothing pushed.
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(Window(0, 10 * kMiB)) << i;
  // An idle link: a few control bytes, none of them the chain's.
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(Window(1000, 100000)) << i;
  // And an unjudged window ends a streak.
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  EXPECT_FALSE(Window(0, kMiB));
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  EXPECT_TRUE(Window(kMiB / 20, kMiB));
}

TEST_F(ChainShareTest, AChainStarvedWhileItsHeadLacksPiecesHasAShareOfZero) {
  // A strict-priority qdisc: the host's other traffic fills the uplink and
  // the chain, in the bulk band, sends nothing. The first window's start
  // was sampled before the head lacked anything: not judged.
  EXPECT_FALSE(WantedWindow(0, kMiB));
  EXPECT_FALSE(WantedWindow(0, kMiB));
  const auto share = WantedWindow(0, kMiB);
  ASSERT_TRUE(share);
  EXPECT_EQ(*share, 0.0);
}

TEST_F(ChainShareTest, AnEmptyWindowIsStarvedOnlyIfTheHeadLackedAllThroughAndOthersSent) {
  EXPECT_FALSE(WantedWindow(0, kMiB));
  // The head had all at the window's end: the chain wanted nothing.
  EXPECT_FALSE(Window(0, kMiB));
  EXPECT_FALSE(WantedWindow(0, kMiB)) << "nor at this one's start";
  // An idle uplink: nothing took the chain's place.
  EXPECT_FALSE(WantedWindow(0, 1000));
  EXPECT_FALSE(WantedWindow(0, kMiB));
  // All that left was the seed's own wire: no other traffic.
  EXPECT_FALSE(WantedWindow(0, kMiB, kMiB));
  EXPECT_FALSE(WantedWindow(0, kMiB));
  EXPECT_TRUE(WantedWindow(0, kMiB));
}

TEST_F(ChainShareTest, StarvedAndSmallSharesMakeOneStreak) {
  EXPECT_FALSE(WantedWindow(kMiB / 20, kMiB));
  const auto share = WantedWindow(0, kMiB);
  ASSERT_TRUE(share);
  EXPECT_NEAR(*share, 0.025, 1e-5);
}

TEST_F(ChainShareTest, SamplesWithinAWindowDoNotJudge) {
  now_ += 300ms;
  total_ = {.chain_bytes = 1000, .sent_bytes = 10 * kMiB};
  EXPECT_FALSE(share_.Observe(now_, total_));
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  EXPECT_TRUE(Window(kMiB / 20, kMiB));
}

TEST_F(ChainShareTest, ItIsDueOnlyOnceAWindowHasPassed) {
  EXPECT_FALSE(share_.Due(now_ + 999ms));
  EXPECT_TRUE(share_.Due(now_ + 1s));
  EXPECT_TRUE(ChainShare().Due(now_)) << "before its first sample";
}

TEST_F(ChainShareTest, ACounterThatWentBackStartsAfresh) {
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  total_.sent_bytes = 0;  // the interface was made again
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  EXPECT_FALSE(Window(kMiB / 20, kMiB));
  EXPECT_TRUE(Window(kMiB / 20, kMiB));
}

constexpr const char* kProcNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo: 1219088 6315408    0    0    0     0          0         0 1219089 6315408    0    0 "
    "   0     0       0          0\n"
    "  eth0: 18446744073709551000 12 0 0 0 0 0 0 18446744073709551615 7 0 0 0 0 0 0\n"
    "veth-h12:1 2 3 4 5 6 7 8 90 10 11 12 13 14 15 16\n"
    "  bad0: 1 2 3\n";

TEST(UplinkMeterTest, ReadsAnInterfacesSentBytes) {
  EXPECT_EQ(UplinkMeter::ParseSentBytes(kProcNetDev, "lo"), 1219089u);
  EXPECT_EQ(UplinkMeter::ParseSentBytes(kProcNetDev, "eth0"), 18446744073709551615u);
  EXPECT_EQ(UplinkMeter::ParseSentBytes(kProcNetDev, "veth-h12"), 90u);
}

TEST(UplinkMeterTest, AMissingOrShortLineIsNoCount) {
  EXPECT_FALSE(UplinkMeter::ParseSentBytes(kProcNetDev, "eth1"));
  EXPECT_FALSE(UplinkMeter::ParseSentBytes(kProcNetDev, "bad0"));
  EXPECT_FALSE(UplinkMeter::ParseSentBytes(kProcNetDev, "eth"));
  EXPECT_FALSE(UplinkMeter::ParseSentBytes("", "eth0"));
}

TEST(UplinkMeterTest, ALoopbackHasNoUplink) {
  EXPECT_FALSE(UplinkMeter::ForAddress("127.0.0.1"));
  EXPECT_FALSE(UplinkMeter::ForAddress("not an address"));
}

}  // namespace
}  // namespace swarmcast::push
