// Fleet (tracker/fleet.h) without a database: who a deployment reaches,
// which reports count, what a redeploy keeps.
#include "tracker/fleet.h"

#include <gtest/gtest.h>

namespace swarmcast::tracker {
namespace {

InfoHash Hash(std::uint8_t b) {
  InfoHash h{};
  h.fill(b);
  return h;
}

Deployment Dep(const std::string& name, const std::string& to, std::uint8_t h = 1,
               const std::string& owner = "token:a") {
  Deployment d;
  d.name = name;
  d.info_hash = Hash(h);
  d.size = 100;
  d.target = *proto::ParseDeployTarget(to);
  d.owner = owner;
  return d;
}

AgentSync Agent(const std::string& id, const std::string& labels) {
  AgentSync s;
  s.agent.id = id;
  s.agent.labels = *proto::ParseLabels(labels);
  return s;
}

std::size_t Assigned(Fleet& f, const std::string& id, const std::string& labels) {
  auto r = f.Sync(Agent(id, labels), 10);
  return r ? r->size() : 999;
}

TEST(FleetTest, LabelTargetReachesOnlyMatchingAgents) {
  Fleet f(nullptr, {});
  ASSERT_TRUE(f.Deploy(Dep("img", "label=role=gpu")));
  EXPECT_EQ(Assigned(f, "a", "role=gpu,rack=r1"), 1u);
  EXPECT_EQ(Assigned(f, "b", "role=cpu"), 0u);
  EXPECT_EQ(Assigned(f, "c", ""), 0u);
  auto v = f.View("img");
  ASSERT_TRUE(v);
  ASSERT_EQ(v->agents.size(), 1u);
  EXPECT_EQ(v->agents[0].agent.id, "a");
  EXPECT_EQ(v->agents[0].report.state, "pending");
}

TEST(FleetTest, CountTargetChoosesTheFirstNAndKeepsThem) {
  Fleet f(nullptr, {});
  ASSERT_TRUE(f.Deploy(Dep("img", "2")));
  EXPECT_EQ(Assigned(f, "a", ""), 1u);
  EXPECT_EQ(Assigned(f, "b", ""), 1u);
  EXPECT_EQ(Assigned(f, "c", ""), 0u);
  EXPECT_EQ(Assigned(f, "a", ""), 1u);  // still chosen on its next sync
  EXPECT_EQ(f.View("img")->agents.size(), 2u);
}

TEST(FleetTest, ReportsCountOnlyForTheAssignedContent) {
  Fleet f(nullptr, {});
  ASSERT_TRUE(f.Deploy(Dep("img", "label=role=gpu", 1)));
  AgentSync s = Agent("a", "role=gpu");
  s.reports.push_back({"img", Hash(2), {"done", "", 100, 0}});  // other content
  ASSERT_TRUE(f.Sync(s, 10));
  EXPECT_EQ(f.View("img")->agents[0].report.state, "pending");
  AgentSync cpu = Agent("b", "role=cpu");
  cpu.reports.push_back({"img", Hash(1), {"done", "", 100, 0}});  // not assigned to it
  ASSERT_TRUE(f.Sync(cpu, 10));
  EXPECT_EQ(f.View("img")->agents.size(), 1u);
  s.reports[0].info_hash = Hash(1);
  ASSERT_TRUE(f.Sync(s, 11));
  EXPECT_EQ(f.View("img")->agents[0].report.state, "done");
  EXPECT_EQ(f.View("img")->agents[0].report.updated, 11);
}

TEST(FleetTest, RedeployKeepsReportsUnlessContentOrTargetChange) {
  Fleet f(nullptr, {});
  ASSERT_TRUE(f.Deploy(Dep("img", "all", 1)));
  AgentSync s = Agent("a", "");
  s.reports.push_back({"img", Hash(1), {"done", "", 100, 0}});
  ASSERT_TRUE(f.Sync(s, 10));
  auto again = f.Deploy(Dep("img", "all", 1));
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);  // replaced, not created
  EXPECT_EQ(f.View("img")->agents[0].report.state, "done");
  ASSERT_TRUE(f.Deploy(Dep("img", "all", 2)));
  EXPECT_EQ(f.View("img")->agents[0].report.state, "pending");
}

TEST(FleetTest, OnlyTheOwnerChangesOrRemovesADeployment) {
  Fleet f(nullptr, {});
  ASSERT_TRUE(f.Deploy(Dep("img", "all")));
  auto other = f.Deploy(Dep("img", "3", 1, "token:b"));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().status, 403u);
  EXPECT_EQ(f.Remove("img", "token:b").error().status, 403u);
  EXPECT_EQ(f.Remove("nope", "token:a").error().status, 404u);
  ASSERT_TRUE(f.Remove("img", "token:a"));
  EXPECT_FALSE(f.View("img"));
  EXPECT_EQ(Assigned(f, "a", ""), 0u);
}

TEST(FleetTest, CapsOnAgentsAndDeployments) {
  Fleet f(nullptr, {.max_agents = 2, .max_deployments = 1});
  ASSERT_TRUE(f.Deploy(Dep("a", "all")));
  EXPECT_EQ(f.Deploy(Dep("b", "all")).error().status, 503u);
  ASSERT_TRUE(f.Sync(Agent("x", ""), 1));
  ASSERT_TRUE(f.Sync(Agent("y", ""), 1));
  EXPECT_EQ(f.Sync(Agent("z", ""), 1).error().status, 503u);
  EXPECT_TRUE(f.Sync(Agent("x", ""), 2));  // a known agent still syncs
}

TEST(FleetNamesTest, LabelsAndTargetsAreChecked) {
  EXPECT_TRUE(proto::ParseLabels("rack=r12,role=gpu"));
  EXPECT_TRUE(proto::ParseLabels(""));
  EXPECT_TRUE(proto::ParseLabels("k="));
  EXPECT_FALSE(proto::ParseLabels("rack"));
  EXPECT_FALSE(proto::ParseLabels("a=1,a=2"));
  EXPECT_FALSE(proto::ParseLabels("a b=1"));
  EXPECT_FALSE(proto::ParseLabels("a=1,"));
  EXPECT_FALSE(proto::ParseLabels("-a=1"));
  EXPECT_EQ(proto::FormatLabels(*proto::ParseLabels("role=gpu,rack=r12")), "rack=r12,role=gpu");
  EXPECT_EQ(proto::ParseDeployTarget("all")->kind, proto::DeployTarget::Kind::kAll);
  EXPECT_EQ(proto::ParseDeployTarget("label=role=gpu")->ToString(), "label=role=gpu");
  EXPECT_EQ(proto::ParseDeployTarget("12")->count, 12);
  for (const char* bad : {"", "0", "-1", "100001", "1x", "label=", "label=k", "label==v", "any"}) {
    EXPECT_FALSE(proto::ParseDeployTarget(bad)) << bad;
  }
  EXPECT_TRUE(proto::IsValidAgentId("vm-d81ffdf3"));
  EXPECT_FALSE(proto::IsValidAgentId(".x"));
  EXPECT_FALSE(proto::IsValidAgentId(std::string(65, 'a')));
}

}  // namespace
}  // namespace swarmcast::tracker
