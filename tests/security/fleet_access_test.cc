// Attacks on the fleet API (issue 18) against the real swarmcast-tracker
// and the real `swarmcast deploy` and `swarmcast agent`: deploying or
// removing without the admin token (an agent token is not enough), syncing
// as an agent without a token, another publisher's deployment, private
// reads, and bodies that are too large or hold bad labels, ids, counts or
// reports. Each asserts the refusal and that nothing changed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "node/fleet_api.h"
#include "node/registry_client.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

constexpr char kAgentToken[] = "fleet-agent-token-0123456789";
constexpr char kAnnounceToken[] = "announce-token-0123456789";

class FleetAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::make_unique<TempDir>(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  // A tracker with two publishers and an agent token (private: also an
  // announce token); its URL.
  std::string Start(bool private_mode) {
    std::vector<std::string> extra = {"--admin-token", "admin-one-0123456789",
                                      "--admin-token", "admin-two-0123456789",
                                      "--agent-token", kAgentToken};
    if (private_mode) extra.insert(extra.end(), {"--announce-token", kAnnounceToken});
    auto t = StartTracker(dir_->path(), extra);
    EXPECT_TRUE(t.child);
    tracker_ = std::move(t.child);
    return "http://127.0.0.1:" + std::to_string(t.port);
  }
  RegistryClient As(const std::string& url, const std::string& token) {
    return RegistryClient(*ParseTrackerUrl(url), 5s, token);
  }
  // Publishes a small torrent as NAME with `token` through a real seed.
  void Publish(const std::string& url, const std::string& name, const std::string& token) {
    const fs::path file = dir_->path() / (name + ".bin");
    WriteRandomFile(file, 64 * 1024, 9);
    seeds_.push_back(std::make_unique<Child>(
        std::vector<std::string>{SwarmcastBin(), "seed", file.string(), "--tracker", url, "--name",
                                 name, "--listen", "127.0.0.1:0", "--no-push"},
        dir_->path() / ("seed-" + name),
        std::vector<std::string>{"SWARMCAST_CONFIG=", "SWARMCAST_TOKEN=" + token,
                                 "SWARMCAST_STATE_DIR=" + (dir_->path() / "state").string(),
                                 "SWARMCAST_CACHE_DIR=" + (dir_->path() / "cache").string()}));
    ASSERT_FALSE(WaitSeedPublished(*seeds_.back()).empty()) << seeds_.back()->Stderr();
  }
  int Status(const Result<RegistryClient::JsonAnswer, RegistryError>& r) {
    return r ? r->status : r.error().http_status;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Child> tracker_;
  std::vector<std::unique_ptr<Child>> seeds_;
};

TEST_F(FleetAccessTest, DeployAndRemoveNeedTheOwnersAdminToken) {
  const std::string url = Start(false);
  Publish(url, "img", "admin-one-0123456789");
  const std::string body = R"({"to":"all"})";
  for (const std::string& token :
       {std::string(), std::string("wrong-token"), std::string(kAgentToken)}) {
    auto c = As(url, token);
    EXPECT_EQ(Status(c.CallJson("PUT", "/v1/deployments/img", body)), 401) << token;
  }
  auto none = As(url, "");
  EXPECT_EQ(none.CallJson("GET", "/v1/deployments/img").error().http_status, 404);
  auto one = As(url, "admin-one-0123456789");
  EXPECT_EQ(Status(one.CallJson("PUT", "/v1/deployments/img", body)), 201);
  // Another publisher may neither re-point nor remove it.
  auto two = As(url, "admin-two-0123456789");
  EXPECT_EQ(Status(two.CallJson("PUT", "/v1/deployments/img", R"({"to":"3"})")), 403);
  EXPECT_EQ(Status(two.CallJson("DELETE", "/v1/deployments/img")), 403);
  auto agent = As(url, kAgentToken);
  EXPECT_EQ(Status(agent.CallJson("DELETE", "/v1/deployments/img")), 401);
  auto view = GetDeployment(none, "img");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->to, "all");
  // Through the CLI: exit 3 and the reason.
  auto cli = std::make_unique<Child>(
      std::vector<std::string>{SwarmcastBin(), "deploy", "img", "--remove", "--tracker", url,
                               "--json", "--tracker-retry", "0"},
      dir_->path() / "deploy-cli",
      std::vector<std::string>{"SWARMCAST_CONFIG=", "SWARMCAST_TOKEN="});
  ASSERT_EQ(cli->Wait(30s), 3) << cli->Stderr();
  EXPECT_EQ(cli->JsonOut()["http_status"], 401);
  EXPECT_TRUE(GetDeployment(none, "img"));
  // Deploying a name nobody published: 404, nothing recorded.
  EXPECT_EQ(Status(one.CallJson("PUT", "/v1/deployments/nothere", body)), 404);
  EXPECT_FALSE(GetDeployment(none, "nothere"));
}

TEST_F(FleetAccessTest, AgentSyncNeedsAnAgentAnnounceOrAdminToken) {
  const std::string url = Start(false);
  const std::string body = R"({"labels":{"role":"gpu"},"reports":[]})";
  for (const std::string& token : {std::string(), std::string("wrong-token")}) {
    auto c = As(url, token);
    EXPECT_EQ(Status(c.CallJson("PUT", "/v1/agents/intruder", body)), 401) << token;
  }
  auto list = As(url, "").CallJson("GET", "/v1/agents");
  ASSERT_TRUE(list);
  EXPECT_EQ(Json::parse(list->body)["agents"].size(), 0u);
  auto agent = As(url, kAgentToken);
  EXPECT_EQ(Status(agent.CallJson("PUT", "/v1/agents/node-1", body)), 200);
  // The real agent without a token keeps being refused and says why.
  auto a = std::make_unique<Child>(
      std::vector<std::string>{SwarmcastBin(), "agent", "--tracker", url, "--data-dir",
                               (dir_->path() / "agent").string(), "--poll-interval", "1s"},
      dir_->path() / "agent", std::vector<std::string>{"SWARMCAST_CONFIG=", "SWARMCAST_TOKEN="});
  ASSERT_TRUE(WaitUntil(30s, [&] { return a->Stderr().find("HTTP 401") != std::string::npos; }))
      << a->Stderr();
  list = As(url, "").CallJson("GET", "/v1/agents");
  ASSERT_TRUE(list);
  EXPECT_EQ(Json::parse(list->body)["agents"].size(), 1u);
}

TEST_F(FleetAccessTest, PrivateTrackerHidesTheFleetFromReadsWithoutAToken) {
  const std::string url = Start(true);
  auto none = As(url, "");
  EXPECT_EQ(Status(none.CallJson("GET", "/v1/agents")), 401);
  EXPECT_EQ(Status(none.CallJson("GET", "/v1/deployments")), 401);
  EXPECT_EQ(Status(none.CallJson("GET", "/v1/deployments/img")), 401);
  auto agent = As(url, kAgentToken);
  EXPECT_EQ(Status(agent.CallJson("GET", "/v1/deployments")), 200);
  auto announcer = As(url, kAnnounceToken);
  EXPECT_EQ(Status(announcer.CallJson("PUT", "/v1/agents/n1", "{}")), 200);
}

TEST_F(FleetAccessTest, BadBodiesAreRefusedWithTheReason) {
  const std::string url = Start(false);
  Publish(url, "img", "admin-one-0123456789");
  auto agent = As(url, kAgentToken);
  auto admin = As(url, "admin-one-0123456789");
  struct Case {
    std::string target;
    std::string body;
    int status;
  };
  std::string many_reports = R"({"reports":[)";
  for (int i = 0; i < 1100; ++i) {
    many_reports +=
        std::string(i ? "," : "") +
        R"({"name":"img","info_hash":"0000000000000000000000000000000000000000","state":"done"})";
  }
  many_reports += "]}";
  std::string many_labels = R"({"labels":{)";
  for (int i = 0; i < 17; ++i) {
    many_labels += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":\"v\"";
  }
  many_labels += "}}";
  const std::vector<Case> cases = {
      {"/v1/agents/bad%2Fid", "{}", 400},
      {"/v1/agents/.hidden", "{}", 400},
      {"/v1/agents/" + std::string(65, 'a'), "{}", 400},
      {"/v1/agents/n1", "not json", 400},
      {"/v1/agents/n1", "[1,2]", 400},
      {"/v1/agents/n1", R"({"labels":{"bad key":"v"}})", 400},
      {"/v1/agents/n1", R"({"labels":{"k":"v w"}})", 400},
      {"/v1/agents/n1", R"({"labels":{"k":7}})", 400},
      {"/v1/agents/n1", many_labels, 400},
      {"/v1/agents/n1", R"({"poll_seconds":0})", 400},
      {"/v1/agents/n1", R"({"data_dir":"a\nb"})", 400},
      {"/v1/agents/n1", many_reports, 400},
      {"/v1/agents/n1", R"({"reports":[{"name":"img","info_hash":"zz","state":"done"}]})", 400},
      {"/v1/agents/n1",
       R"({"reports":[{"name":"img","info_hash":"0000000000000000000000000000000000000000","state":"hacked"}]})",
       400},
      {"/v1/agents/n1",
       R"({"reports":[{"name":"img","info_hash":"0000000000000000000000000000000000000000","state":"done","bytes":-1}]})",
       400},
      {"/v1/agents/n1", std::string(1100 * 1024, ' '), 413},
      {"/v1/deployments/img", R"({"to":"0"})", 400},
      {"/v1/deployments/img", R"({"to":"100001"})", 400},
      {"/v1/deployments/img", R"({"to":"label=role"})", 400},
      {"/v1/deployments/img", R"({"to":"some"})", 400},
      {"/v1/deployments/img", R"({"to":5})", 400},
      {"/v1/deployments/img", std::string(1100 * 1024, ' '), 413},
      {"/v1/deployments/bad..name/x", R"({"to":"all"})", 404},
  };
  for (const Case& c : cases) {
    auto& client = c.target.rfind("/v1/agents", 0) == 0 ? agent : admin;
    auto r = client.CallJson("PUT", c.target, c.body);
    EXPECT_EQ(Status(r), c.status) << c.target << " " << c.body.substr(0, 80);
  }
  // Nothing of it was recorded.
  EXPECT_FALSE(GetDeployment(admin, "img"));
  auto list = admin.CallJson("GET", "/v1/agents");
  ASSERT_TRUE(list);
  EXPECT_EQ(Json::parse(list->body)["agents"].size(), 0u);
  // The tracker still serves.
  EXPECT_EQ(Status(admin.CallJson("PUT", "/v1/deployments/img", R"({"to":"all"})")), 201);
}

}  // namespace
}  // namespace swarmcast::node::testing
