// Attacks on a seed's push channel (issue 14, items 4 and 6), against the
// real `swarmcast seed` and `get` on 127.0.0.x:
// - 515 connections from one host that never say HELLO (they used to fill
//   the subscriber limit and keep a real get out);
// - subscriptions to a private seed without its token, or with a wrong one.
// Each is refused with a BYE that says why, and a real get still gets in.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <optional>

#include "node/push/tcp.h"
#include "node/registry_client.h"
#include "proto/push_frame.h"
#include "tests/common/push_bye.h"
#include "tests/node/push_swarm_fixture.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using swarmcast::testing::ByeFrom;
using swarmcast::testing::WaitReadable;

constexpr std::size_t kSize = 8 << 20;

class PushAttackTest : public PushSwarmFixture {
 protected:
  void SetUp() override {
    PushSwarmFixture::SetUp();
    if (HasFatalFailure()) return;
    payload_ = Dir("seed") / "payload.bin";
    WriteRandomFile(payload_, kSize, 9);
  }

  std::string PushEndpoint() {
    RegistryClient c(*ParseTrackerUrl(url_), 2s);
    auto s = c.GetSwarm("payload");
    return s.ok() ? s->push : std::string();
  }

  fs::path payload_;
};

TEST_F(PushAttackTest, IdleConnectionsFromOneHostDoNotKeepARealGetOut) {
  auto seed = StartSeed(payload_, "payload");
  const std::string endpoint = PushEndpoint();
  ASSERT_FALSE(endpoint.empty());
  std::vector<push::UniqueFd> idle;
  const auto connected = std::chrono::steady_clock::now();  // before the first
  for (int i = 0; i < 515; ++i) {
    auto fd = push::ConnectTcp(endpoint, 5000, "127.0.0.20");
    ASSERT_TRUE(fd.ok()) << fd.error();
    idle.push_back(std::move(*fd));
  }
  // A real get from another host subscribes, and pieces come by push.
  auto get = Get("payload", "127.0.0.3", "peer");
  ASSERT_EQ(get->Wait(90s), 0) << get->Stderr();
  const Json j = get->JsonOut();
  EXPECT_GT(j["push"]["pieces_pushed"].get<std::int64_t>(), 0) << j.dump();
  EXPECT_TRUE(SameContent(payload_, Dir("peer") / "payload.bin"));
  // All but four were turned away at once; those four are closed at the
  // HELLO deadline (10 s). Each with a BYE that says why.
  int too_many = 0, too_slow = 0;
  for (auto& fd : idle) {
    auto bye = ByeFrom(fd.get(), 30s);
    ASSERT_TRUE(bye) << "closed without a BYE, or never";
    if (bye->reason == static_cast<std::uint16_t>(proto::ByeReason::kTooManyConnections)) {
      ++too_many;
    } else if (bye->reason == static_cast<std::uint16_t>(proto::ByeReason::kHelloTimeout)) {
      ++too_slow;
    }
  }
  EXPECT_EQ(too_many, 511);
  EXPECT_EQ(too_slow, 4);
  EXPECT_GE(std::chrono::steady_clock::now() - connected, 9s) << "closed before the deadline";
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
  EXPECT_EQ(seed->JsonOut()["push"]["connections_refused"], 515) << seed->JsonOut().dump();
}

TEST_F(PushAttackTest, PrivateSeedPushesOnlyToSubscribersWithItsToken) {
  // The seed publishes with the tracker's token (Env()) and pushes only to
  // subscribers presenting the swarm's push token; a get presents its own.
  auto seed = StartSeed(payload_, "payload", {"--push-token", "lab-secret"});
  auto wrong = Get("payload", "127.0.0.3", "wrong", {"--token", "lab-secrex"});
  std::vector<std::string> no_token_env;
  for (const std::string& e : Env()) {
    if (!e.starts_with("SWARMCAST_TOKEN=")) no_token_env.push_back(e);
  }
  auto none = std::make_unique<Child>(
      std::vector<std::string>{SwarmcastBin(), "get", "payload", "--tracker", url_, "-o",
                               Dir("none").string(), "--listen", "127.0.0.4:0", "--no-linger",
                               "--json"},
      dir_->path() / "get-none", no_token_env);
  auto right = Get("payload", "127.0.0.5", "right", {"--token", "lab-secret"});
  for (auto* g : {wrong.get(), none.get(), right.get()}) {
    ASSERT_EQ(g->Wait(90s), 0) << g->Stderr();
  }
  // Refused with a reason the operator can read; the data still arrives
  // over the BitTorrent wire.
  for (const auto& [get, dir, why] :
       {std::tuple{wrong.get(), "wrong", "wrong token"},
        std::tuple{none.get(), "none", "only to subscribers with the swarm's token"}}) {
    SCOPED_TRACE(dir);
    const Json j = get->JsonOut();
    EXPECT_EQ(j["push"]["pieces_pushed"], 0) << j.dump();
    const std::string ended = j["push"]["ended"].get<std::string>();
    EXPECT_NE(ended.find("BYE (5)"), std::string::npos) << ended;
    EXPECT_NE(ended.find(why), std::string::npos) << ended;
    EXPECT_TRUE(SameContent(payload_, Dir(dir) / "payload.bin"));
  }
  const Json j = right->JsonOut();
  EXPECT_GT(j["push"]["pieces_pushed"].get<std::int64_t>(), 0) << j.dump();
  EXPECT_TRUE(SameContent(payload_, Dir("right") / "payload.bin"));
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
  const Json sj = seed->JsonOut();
  EXPECT_EQ(sj["push"]["private"], true) << sj.dump();
  EXPECT_EQ(sj["push"]["connections_refused"], 2) << sj.dump();
}

}  // namespace
}  // namespace swarmcast::node::testing
