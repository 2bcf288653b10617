// Integration: a chain (`seed --push-chain`; the gets learn their role
// from the registry, or take it with `get --chain`) between real
// processes on 127.0.0.x. The seed's upload is capped, as a seed's uplink
// is on a LAN; each get takes its pieces from the one before it, and a
// link killed mid-way leaves every other copy intact.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/node/push_swarm_fixture.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

constexpr std::int64_t kSize = 16 << 20;
// 4 MiB/s: one copy takes the seed 4 s, while loopback forwards at once.
const std::string kSeedRate = "4MiB";

class PushChainTest : public PushSwarmFixture {
 protected:
  void SetUp() override {
    PushSwarmFixture::SetUp();
    if (HasFatalFailure()) return;
    payload_ = Dir("seed") / "payload.bin";
    WriteRandomFile(payload_, kSize, 12);
  }

  std::unique_ptr<Child> StartSeed() {
    return PushSwarmFixture::StartSeed(
        payload_, "payload",
        {"--max-upload-rate", kSeedRate, "--fanout", "splice", "--push-chain"});
  }

  // Three gets, each subscribed before the next starts: the chain's order.
  // No --chain: the seed's registry record makes each a link.
  std::vector<std::unique_ptr<Child>> StartGets() {
    std::vector<std::unique_ptr<Child>> gets;
    for (int i = 0; i < 3; ++i) {
      gets.push_back(
          Get("payload", "127.0.0." + std::to_string(3 + i), "peer" + std::to_string(i), {}));
      EXPECT_TRUE(WaitUntil(60s, [&] {
        return gets.back()->Stderr().find("push: subscribed to ") != std::string::npos;
      })) << gets.back()->Stderr();
    }
    return gets;
  }

  fs::path payload_;
};

TEST_F(PushChainTest, EachGetTakesItsPiecesFromTheOneBeforeIt) {
  auto seed = StartSeed();
  auto gets = StartGets();
  std::int64_t from_seed = 0;
  std::int64_t from_chain = 0;
  std::string reports;  // every get's JSON and log, for a failure below
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(gets[i]->Wait(120s), 0) << gets[i]->Stderr();
    const Json j = gets[i]->JsonOut();
    reports += "get " + std::to_string(i) + ": " + j.dump() + "\n" + gets[i]->Stderr() + "\n";
    EXPECT_EQ(j["complete"], true) << j.dump();
    EXPECT_EQ(j["push"]["hash_failures"], 0) << j.dump();
    EXPECT_EQ(j["push"]["chain"], true) << "the registry said the seed runs a chain";
    EXPECT_TRUE(SameContent(payload_, Dir("peer" + std::to_string(i)) / "payload.bin"));
    const Json& f = j["push"]["forwarding"];
    ASSERT_TRUE(f.is_object()) << j.dump();
    from_seed += j["push"]["payload_bytes"].get<std::int64_t>();
    from_chain += f["peer_payload_bytes"].get<std::int64_t>();
    // One link before it at a time: the first head takes from the second
    // (what it lacks), then, after the probe, from the line's last link; a
    // third only if the seed made one a leaf (a busy machine can stall a
    // get long enough to look slow). Not one channel per piece or per HAVE.
    EXPECT_LE(f["peer_channels"], 3) << j.dump() << "\n" << gets[i]->Stderr();
  }
  // About one copy left the seed's capped uplink, not three; the other
  // two came down the chain.
  EXPECT_LT(from_seed, kSize * 3 / 2) << reports << seed->Stderr();
  EXPECT_GT(from_chain, kSize * 3 / 2) << reports << seed->Stderr();
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
  const Json sj = seed->JsonOut();
  EXPECT_LT(sj["push"]["payload_bytes"].get<std::int64_t>(), kSize * 3 / 2) << sj.dump() << "\n"
                                                                            << seed->Stderr();
}

TEST_F(PushChainTest, AMiddleLinkKilledLeavesTheNextLinkedToTheOneBeforeIt) {
  auto seed = StartSeed();
  auto gets = StartGets();
  // Kill get 1 once get 2 takes pieces from it, mid-transfer (a copy
  // takes the capped seed 4 s).
  ASSERT_TRUE(WaitUntil(60s, [&] {
    return gets[2]->Stderr().find("subscribed to forwarder") != std::string::npos;
  })) << gets[2]->Stderr();
  gets[1]->Signal(SIGKILL);
  EXPECT_EQ(gets[1]->Wait(20s), -SIGKILL);
  for (int i : {0, 2}) {
    ASSERT_EQ(gets[i]->Wait(120s), 0) << gets[i]->Stderr();
    const Json j = gets[i]->JsonOut();
    EXPECT_EQ(j["complete"], true) << j.dump();
    EXPECT_TRUE(SameContent(payload_, Dir("peer" + std::to_string(i)) / "payload.bin"));
  }
  // Get 2 was linked to get 0 (or, had get 0 finished by then, to the
  // seed itself): either way it did not wait for the wire.
  const Json j2 = gets[2]->JsonOut();
  EXPECT_EQ(gets[2]->Stderr().find("the chain brought nothing"), std::string::npos)
      << gets[2]->Stderr();
  EXPECT_GT(j2["downloaded_push_bytes"].get<std::int64_t>(), kSize / 2) << j2.dump();
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
}

// A chain link holds its announces back while the chain brings pieces, so
// the tracker does not know it. Here the second get is slow and becomes a
// leaf of the head; the head finishes, and the seed dies before the slow
// one is done. The head, done and lingering, must not take the tracker's
// "every peer is done" for the truth and leave with what the slow one
// lacks: it stays while the slow one takes pieces from its forwarder, and
// the slow one, without its seed, announces at once.
TEST_F(PushChainTest, ASlowLinkLeftWithoutItsSeedFinishesFromTheOthers) {
  auto seed = PushSwarmFixture::StartSeed(
      payload_, "payload", {"--max-upload-rate", "16MiB", "--fanout", "splice", "--push-chain"});
  auto head = Get("payload", "127.0.0.3", "head",
                  {"--chain", "--linger", "120s", "--progress-interval", "100ms"});
  ASSERT_TRUE(WaitUntil(60s, [&] {
    return head->Stderr().find("push: subscribed to ") != std::string::npos;
  })) << head->Stderr();
  // An eighth of the seed's rate: a leaf, far behind when the head is done.
  auto slow = Get("payload", "127.0.0.4", "slow", {"--chain", "--max-download-rate", "2MiB"});
  ASSERT_TRUE(WaitUntil(60s, [&] { return head->Stderr().find("lingering") != std::string::npos; }))
      << head->Stderr();
  seed->Signal(SIGKILL);
  EXPECT_EQ(seed->Wait(20s), -SIGKILL);
  ASSERT_EQ(slow->Wait(60s), 0) << slow->Stderr();
  const Json j = slow->JsonOut();
  EXPECT_EQ(j["complete"], true) << j.dump();
  EXPECT_TRUE(SameContent(payload_, Dir("slow") / "payload.bin"));
  EXPECT_EQ(slow->Stderr().find("the chain brought nothing"), std::string::npos) << slow->Stderr();
  // The head stayed for it, then left once the tracker said every peer
  // was done, well before its 120 s.
  ASSERT_EQ(head->Wait(60s), 0) << head->Stderr();
  EXPECT_EQ(head->JsonOut()["end"], "swarm-complete") << head->Stderr();
}

}  // namespace
}  // namespace swarmcast::node::testing
