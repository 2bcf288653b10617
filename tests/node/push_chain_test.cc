// Integration: a chain (`seed --push-chain`, `get --chain`) between real
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
  std::vector<std::unique_ptr<Child>> StartGets() {
    std::vector<std::unique_ptr<Child>> gets;
    for (int i = 0; i < 3; ++i) {
      gets.push_back(Get("payload", "127.0.0." + std::to_string(3 + i), "peer" + std::to_string(i),
                         {"--chain"}));
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
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(gets[i]->Wait(120s), 0) << gets[i]->Stderr();
    const Json j = gets[i]->JsonOut();
    EXPECT_EQ(j["complete"], true) << j.dump();
    EXPECT_EQ(j["push"]["hash_failures"], 0) << j.dump();
    EXPECT_TRUE(SameContent(payload_, Dir("peer" + std::to_string(i)) / "payload.bin"));
    const Json& f = j["push"]["forwarding"];
    ASSERT_TRUE(f.is_object()) << j.dump();
    from_seed += j["push"]["payload_bytes"].get<std::int64_t>();
    from_chain += f["peer_payload_bytes"].get<std::int64_t>();
    // One link before it at a time; a second only if the seed made it a
    // leaf (a busy machine can stall a get long enough to look slow).
    EXPECT_LE(f["peer_channels"], 2) << j.dump();
  }
  // About one copy left the seed's capped uplink, not three; the other
  // two came down the chain.
  EXPECT_LT(from_seed, kSize * 3 / 2);
  EXPECT_GT(from_chain, kSize * 3 / 2);
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
  const Json sj = seed->JsonOut();
  EXPECT_LT(sj["push"]["payload_bytes"].get<std::int64_t>(), kSize * 3 / 2) << sj.dump();
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

}  // namespace
}  // namespace swarmcast::node::testing
