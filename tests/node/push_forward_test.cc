// Integration: forwarding (Mutualcast) between real `swarmcast seed` and
// `get` processes on 127.0.0.x. The seed's upload is capped, as a seed's
// uplink is on a LAN, so what the gets hold beyond the seed's share came
// forwarded by the other gets; and a forwarder killed mid-way leaves every
// other copy intact.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/node/push_swarm_fixture.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

constexpr std::size_t kSize = 16 << 20;
// 4 MiB/s: a copy takes the seed 4 s, so three gets need 12 s from it
// alone, while loopback forwards at once.
const std::string kSeedRate = "4MiB";

class PushForwardTest : public PushSwarmFixture {
 protected:
  void SetUp() override {
    PushSwarmFixture::SetUp();
    if (HasFatalFailure()) return;
    payload_ = Dir("seed") / "payload.bin";
    WriteRandomFile(payload_, kSize, 11);
  }

  // Forwarding (Mutualcast) is the fan-out seed's; the chain, the
  // default, would make every get a link.
  std::unique_ptr<Child> StartSeed() {
    return PushSwarmFixture::StartSeed(
        payload_, "payload",
        {"--max-upload-rate", kSeedRate, "--fanout", "splice", "--push-topology", "fan-out"});
  }

  fs::path payload_;
};

TEST_F(PushForwardTest, PiecesArriveForwardedByPeersAndEveryCopyIsIntact) {
  auto seed = StartSeed();
  std::vector<std::unique_ptr<Child>> gets;
  for (int i = 0; i < 3; ++i) {
    gets.push_back(Get("payload", "127.0.0." + std::to_string(3 + i), "peer" + std::to_string(i),
                       {"--forward"}));
  }
  std::int64_t from_peers = 0, forwarded = 0, from_seed = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(gets[i]->Wait(120s), 0) << gets[i]->Stderr();
    const Json j = gets[i]->JsonOut();
    EXPECT_EQ(j["complete"], true) << j.dump();
    EXPECT_EQ(j["push"]["hash_failures"], 0) << j.dump();
    ASSERT_TRUE(j["push"]["forwarding"].is_object()) << j.dump();
    const Json& f = j["push"]["forwarding"];
    from_peers += f["peer_payload_bytes"].get<std::int64_t>();
    forwarded += f["forwarded_bytes"].get<std::int64_t>();
    from_seed += j["push"]["payload_bytes"].get<std::int64_t>();
    // Push bytes from the seed and from forwarders both count.
    EXPECT_EQ(j["downloaded_push_bytes"].get<std::int64_t>(),
              j["push"]["payload_bytes"].get<std::int64_t>() +
                  f["peer_payload_bytes"].get<std::int64_t>())
        << j.dump();
    EXPECT_TRUE(SameContent(payload_, Dir("peer" + std::to_string(i)) / "payload.bin"));
  }
  // Pieces demonstrably travelled get -> get by push (more than a quarter
  // of one copy, though the gets also trade over the BitTorrent wire), and
  // no get took more from forwarders than they sent (less can arrive: what
  // was in flight when a get exited).
  EXPECT_GT(from_peers, std::int64_t{kSize} / 4) << "from seed " << from_seed;
  EXPECT_GE(forwarded, from_peers);
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
  const Json sj = seed->JsonOut();
  EXPECT_GT(sj["push"]["pieces_sent"].get<std::int64_t>(), 0) << sj.dump();
}

TEST_F(PushForwardTest, AForwarderKilledMidwayLeavesEveryOtherCopyIntact) {
  auto seed = StartSeed();
  std::vector<std::unique_ptr<Child>> gets;
  for (int i = 0; i < 3; ++i) {
    gets.push_back(Get("payload", "127.0.0." + std::to_string(3 + i), "peer" + std::to_string(i),
                       {"--forward"}));
  }
  // A get forwards once its first pushed piece verified; kill the first
  // one another get has subscribed to, mid-transfer (a copy takes the
  // capped seed 4 s). Which get that is depends on the scheduler: pinned
  // to one core, get 0 once finished without a piece from the seed.
  auto address = [](int i) { return "127.0.0." + std::to_string(3 + i) + ":"; };
  int victim = -1;
  int subscriber = -1;  // a get that took pieces from the victim
  ASSERT_TRUE(WaitUntil(60s,
                        [&] {
                          for (int i = 0; i < 3 && victim < 0; ++i) {
                            for (int j = 0; j < 3; ++j) {
                              if (j != i &&
                                  gets[j]->Stderr().find("subscribed to forwarder " + address(i)) !=
                                      std::string::npos) {
                                victim = i;
                                subscriber = j;
                              }
                            }
                          }
                          return victim >= 0;
                        }))
      << gets[0]->Stderr() << gets[1]->Stderr() << gets[2]->Stderr();
  gets[victim]->Signal(SIGKILL);
  EXPECT_EQ(gets[victim]->Wait(20s), -SIGKILL);
  for (int i = 0; i < 3; ++i) {
    if (i == victim) continue;
    ASSERT_EQ(gets[i]->Wait(120s), 0) << gets[i]->Stderr();
    const Json j = gets[i]->JsonOut();
    EXPECT_EQ(j["complete"], true) << j.dump();
    // The victim's subscriber had a forwarder; the third get may have
    // finished from the seed and the wire before it learnt of any (once,
    // on a busy CI machine: peer_channels 0, every copy intact).
    if (i == subscriber) {
      EXPECT_GE(j["push"]["forwarding"]["peer_channels"].get<std::int64_t>(), 1) << j.dump();
    }
    EXPECT_TRUE(SameContent(payload_, Dir("peer" + std::to_string(i)) / "payload.bin"));
  }
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
}

TEST_F(PushForwardTest, WithoutForwardGetsSubscribeToTheSeedOnly) {
  auto seed = StartSeed();
  auto a = Get("payload", "127.0.0.3", "a");
  auto b = Get("payload", "127.0.0.4", "b");
  for (auto* g : {a.get(), b.get()}) {
    ASSERT_EQ(g->Wait(120s), 0) << g->Stderr();
    const Json j = g->JsonOut();
    EXPECT_EQ(j["complete"], true) << j.dump();
    EXPECT_TRUE(j["push"]["forwarding"].is_null()) << j.dump();
    EXPECT_EQ(g->Stderr().find("push: forwarding on port"), std::string::npos);
  }
  EXPECT_TRUE(SameContent(payload_, Dir("a") / "payload.bin"));
  EXPECT_TRUE(SameContent(payload_, Dir("b") / "payload.bin"));
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
  EXPECT_EQ(seed->JsonOut()["push"]["forwarders"], 0);
}

}  // namespace
}  // namespace swarmcast::node::testing
