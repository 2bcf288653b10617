// `swarmcast agent` and `swarmcast deploy` end to end (issue 18): a real
// tracker, real seeds and agents (each running its own get and seed
// children) on 127.0.0.x. Every wait is on an event (a report at the
// tracker, a file, a process exit) with a generous deadline.
#include <gtest/gtest.h>
#include <signal.h>

#include <ctime>
#include <regex>
#include <string>
#include <vector>

#include "node/fleet_api.h"
#include "node/registry_client.h"
#include "tests/node/plain_http.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

std::string Logs(Child& c) { return "stdout:\n" + c.Stdout() + "\nstderr:\n" + c.Stderr(); }

class AgentTest : public LocalSwarmTest {
 protected:
  // Publishes `size` random bytes as NAME from a seed on 127.0.0.1.
  std::string Publish(const std::string& name, std::size_t size, unsigned seed) {
    const fs::path file = Dir("src-" + name) / (name + ".bin");
    WriteRandomFile(file, size, seed);
    files_[name] = file;
    seeds_.push_back(Run("seed-" + name, {"seed", file.string(), "--tracker", url_, "--name", name,
                                          "--listen", "127.0.0.1:0"}));
    return WaitSeedPublished(*seeds_.back());
  }
  std::unique_ptr<Child> Agent(const std::string& tag, const std::string& ip,
                               std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {
        "agent",           "--tracker", url_,       "--data-dir", AgentDir(tag).string(),
        "--poll-interval", "1s",        "--listen", ip + ":0",    "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return Run("agent-" + tag + "-" + std::to_string(++runs_), a);
  }
  fs::path AgentDir(const std::string& tag) { return dir_->path() / ("agent-" + tag); }
  fs::path Content(const std::string& tag, const std::string& hash, const std::string& name) {
    return AgentDir(tag) / "content" / hash / (name + ".bin");
  }
  RegistryClient Client() {
    return RegistryClient(*ParseTrackerUrl(url_), 5s, ReadToken(token_file_));
  }
  // The tracker's view of NAME's deployment, or nullopt.
  std::optional<DeploymentStatus> View(const std::string& name) {
    RegistryClient c = Client();
    auto s = GetDeployment(c, name);
    if (!s) return std::nullopt;
    return std::move(*s);
  }
  // GET /v1/agents.
  std::vector<Json> Agents() {
    RegistryClient c = Client();
    auto r = c.CallJson("GET", "/v1/agents");
    if (!r) return {};
    Json j = Json::parse(r->body, nullptr, false);
    if (!j.is_object() || !j["agents"].is_array()) return {};
    return j["agents"].get<std::vector<Json>>();
  }
  int RunDeploy(std::vector<std::string> args, Json* out = nullptr) {
    args.insert(args.begin(), "deploy");
    args.insert(args.end(), {"--tracker", url_, "--json"});
    auto d = Run("deploy-" + std::to_string(++runs_), args);
    auto code = d->Wait(180s);
    if (out) *out = d->JsonOut();
    EXPECT_TRUE(code.has_value()) << Logs(*d);
    return code.value_or(-1);
  }
  Json Ledger(const std::string& tag) {
    return Json::parse(ReadAll(AgentDir(tag) / "agent-state.json"), nullptr, false);
  }

  std::map<std::string, fs::path> files_;
  std::vector<std::unique_ptr<Child>> seeds_;
  int runs_ = 0;
};

TEST_F(AgentTest, DeployToThreeAgentsFinishesAndStatusShowsDone) {
  const std::string hash = Publish("img", 3 << 20, 1);
  ASSERT_FALSE(hash.empty()) << Logs(*seeds_[0]);
  std::vector<std::unique_ptr<Child>> agents;
  for (int i = 0; i < 3; ++i)
    agents.push_back(Agent(std::to_string(i), "127.0.0." + std::to_string(i + 2)));
  ASSERT_EQ(RunDeploy({"img", "--to", "all"}), 0);
  // Every agent registered and is assigned (total counts the agents the
  // deployment reaches): then wait for all of them.
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto v = View("img");
    return v && v->total == 3;
  })) << Logs(*agents[0]);
  Json out;
  ASSERT_EQ(RunDeploy({"img", "--to", "all", "--wait", "120s"}, &out), 0) << out.dump();
  EXPECT_EQ(out["schema"], 1);
  EXPECT_EQ(out["done"], 3);
  EXPECT_EQ(out["complete"], true);
  EXPECT_EQ(out["created"], false);  // the same deployment again
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(SameContent(Content(std::to_string(i), hash, "img"), files_["img"])) << i;
  }
  auto status = Run("status", {"status", "--tracker", url_, "img", "--json"});
  ASSERT_EQ(status->Wait(60s), 0) << Logs(*status);
  const Json s = status->JsonOut();
  ASSERT_TRUE(s["deployment"].is_object()) << s.dump();
  EXPECT_EQ(s["deployment"]["done"], 3);
  ASSERT_EQ(s["deployment"]["agents"].size(), 3u);
  for (const Json& a : s["deployment"]["agents"]) {
    EXPECT_EQ(a["state"], "done");
    EXPECT_EQ(a["bytes"], 3 << 20);
  }
  // A clean stop reports what it holds in its --json summary.
  agents[0]->Signal(SIGTERM);
  ASSERT_EQ(agents[0]->Wait(60s), 0) << Logs(*agents[0]);
  const Json summary = agents[0]->JsonOut();
  EXPECT_EQ(summary["schema"], 1);
  ASSERT_EQ(summary["entries"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["entries"][0]["state"], "done");
}

// --metrics-listen on the agent: its own view (states, bytes, children,
// syncs, fetches) moves from an empty ledger to the fetched item.
TEST_F(AgentTest, MetricsFollowTheLedgerAndTheFetch) {
  const std::string hash = Publish("metered", 1 << 20, 7);
  ASSERT_FALSE(hash.empty()) << Logs(*seeds_[0]);
  auto agent = Agent("m", "127.0.0.2", {"--metrics-listen", "127.0.0.2:0"});
  static const std::regex kLine(R"(metrics on http://127\.0\.0\.2:([0-9]+)/metrics)");
  int port = 0;
  ASSERT_TRUE(WaitUntil(30s, [&] {
    std::smatch m;
    const std::string err = agent->Stderr();
    if (std::regex_search(err, m, kLine)) port = std::stoi(m[1]);
    return port > 0;
  })) << Logs(*agent);
  auto scrape = [&] { return PlainHttpGet("127.0.0.2", port, "/metrics").body; };
  ASSERT_TRUE(WaitUntil(30s, [&] {
    return scrape().find("swarmcast_agent_syncs_total{result=\"ok\"} 1") != std::string::npos;
  })) << scrape();
  EXPECT_NE(scrape().find("swarmcast_agent_items{state=\"done\"} 0"), std::string::npos);

  ASSERT_EQ(RunDeploy({"metered", "--to", "all", "--wait", "120s"}), 0) << Logs(*agent);
  std::string text;
  ASSERT_TRUE(WaitUntil(30s, [&] {
    text = scrape();
    return text.find("swarmcast_agent_items{state=\"done\"} 1") != std::string::npos &&
           text.find("swarmcast_agent_seeds_running 1") != std::string::npos;
  })) << text;
  EXPECT_NE(text.find("swarmcast_agent_fetches_total{result=\"started\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("swarmcast_agent_fetches_total{result=\"done\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("swarmcast_agent_held_bytes 1048576"), std::string::npos) << text;
  EXPECT_NE(text.find("swarmcast_agent_fetch_running 0"), std::string::npos) << text;
  EXPECT_EQ(PlainHttpGet("127.0.0.2", port, "/healthz").body, "ok\n");
}

TEST_F(AgentTest, DeployByLabelReachesOnlyMatchingAgents) {
  const std::string hash = Publish("gpuimg", 1 << 20, 2);
  ASSERT_FALSE(hash.empty());
  auto gpu1 = Agent("gpu1", "127.0.0.2", {"--labels", "role=gpu,rack=r1"});
  auto gpu2 = Agent("gpu2", "127.0.0.3", {"--labels", "rack=r2,role=gpu"});
  auto cpu = Agent("cpu", "127.0.0.4", {"--labels", "role=cpu"});
  // All three registered before the deploy.
  ASSERT_TRUE(WaitUntil(60s, [&] { return Agents().size() == 3; }));
  ASSERT_EQ(RunDeploy({"gpuimg", "--to", "label=role=gpu"}), 0);
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto v = View("gpuimg");
    return v && v->total == 2;
  }));
  Json out;
  ASSERT_EQ(RunDeploy({"gpuimg", "--to", "label=role=gpu", "--wait", "120s"}, &out), 0)
      << out.dump();
  EXPECT_EQ(out["total"], 2);
  EXPECT_TRUE(SameContent(Content("gpu1", hash, "gpuimg"), files_["gpuimg"]));
  EXPECT_TRUE(SameContent(Content("gpu2", hash, "gpuimg"), files_["gpuimg"]));
  // The cpu agent synced after the gpu agents were done (so it had its
  // chance to be assigned) and got nothing.
  const std::int64_t after = std::time(nullptr);
  ASSERT_TRUE(WaitUntil(30s, [&] {
    for (const Json& a : Agents()) {
      if (a["labels"].value("role", "") == "cpu" && a["last_seen"].get<std::int64_t>() > after) {
        return true;
      }
    }
    return false;
  }));
  auto v = View("gpuimg");
  ASSERT_TRUE(v);
  for (const AgentState& a : v->agents) EXPECT_NE(a.labels.find("role=gpu"), std::string::npos);
  EXPECT_FALSE(fs::exists(AgentDir("cpu") / "content" / hash));
  EXPECT_EQ(cpu->Stderr().find("assigned gpuimg"), std::string::npos) << Logs(*cpu);
}

TEST_F(AgentTest, AgentKilledMidwayResumesWithoutRefetchingVerifiedPieces) {
  constexpr std::int64_t kSize = 8 << 20;
  const std::string hash = Publish("big", kSize, 3);
  ASSERT_FALSE(hash.empty());
  // Slowed down so that it is surely mid-way when killed.
  auto agent = Agent("k", "127.0.0.2", {"--max-download-rate", "1MiB"});
  ASSERT_EQ(RunDeploy({"big", "--to", "all"}), 0);
  ASSERT_TRUE(WaitUntil(90s, [&] {
    auto v = View("big");
    return v && !v->agents.empty() && v->agents[0].state == "fetching" &&
           v->agents[0].bytes >= (2 << 20);
  })) << Logs(*agent);
  agent->Signal(SIGKILL);
  ASSERT_EQ(agent->Wait(30s), -SIGKILL);
  // Its get died with it (PR_SET_PDEATHSIG): the restarted agent can take
  // the directory's lock and the staging area at once.
  auto again = Agent("k", "127.0.0.2");
  Json out;
  ASSERT_EQ(RunDeploy({"big", "--to", "all", "--wait", "120s"}, &out), 0)
      << out.dump() << Logs(*again);
  EXPECT_TRUE(SameContent(Content("k", hash, "big"), files_["big"]));
  const Json ledger = Ledger("k");
  ASSERT_TRUE(ledger.is_object());
  const Json& e = ledger["entries"][hash];
  EXPECT_EQ(e["state"], "done");
  EXPECT_GT(e["pieces_at_start"].get<std::int64_t>(), 0) << e.dump();
  EXPECT_LT(e["downloaded_bytes"].get<std::int64_t>(), kSize - (1 << 20)) << e.dump();
}

TEST_F(AgentTest, AssignmentsSurviveATrackerRestart) {
  const std::string hash = Publish("keep", 1 << 20, 4);
  ASSERT_FALSE(hash.empty());
  auto agent = Agent("r", "127.0.0.2", {"--labels", "site=a"});
  Json out;
  ASSERT_EQ(RunDeploy({"keep", "--to", "label=site=a"}), 0);
  ASSERT_TRUE(WaitUntil(120s, [&] {
    auto v = View("keep");
    return v && v->done == 1;
  })) << Logs(*agent);
  agent->Signal(SIGTERM);
  ASSERT_EQ(agent->Wait(60s), 0);
  tracker_->Signal(SIGTERM);
  ASSERT_EQ(tracker_->Wait(30s), 0);
  // The same database under a new tracker process.
  auto t = StartTracker(dir_->path());
  ASSERT_TRUE(t.child);
  tracker_ = std::move(t.child);
  url_ = "http://127.0.0.1:" + std::to_string(t.port);
  auto v = View("keep");
  ASSERT_TRUE(v) << "deployment lost in the restart";
  EXPECT_EQ(v->to, "label=site=a");
  EXPECT_EQ(v->info_hash, hash);
  ASSERT_EQ(v->agents.size(), 1u);
  EXPECT_EQ(v->agents[0].state, "done");
  // A new agent that matches is assigned it by the restarted tracker.
  auto late = Agent("late", "127.0.0.3", {"--labels", "site=a"});
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto w = View("keep");
    return w && w->total == 2;
  })) << Logs(*late);
  ASSERT_TRUE(WaitUntil(30s, [&] {
    return late->Stderr().find("assigned keep (" + hash) != std::string::npos;
  })) << Logs(*late);
}

TEST_F(AgentTest, RemovingAnAssignmentLetsTheAgentEvictIt) {
  const std::string a = Publish("first", 2 << 20, 5);
  const std::string b = Publish("second", 2 << 20, 6);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  // Room for one of them only.
  auto agent = Agent("e", "127.0.0.2", {"--quota", "3MiB"});
  ASSERT_EQ(RunDeploy({"first", "--to", "1", "--wait", "120s"}), 0) << Logs(*agent);
  ASSERT_TRUE(SameContent(Content("e", a, "first"), files_["first"]));
  // While "first" is assigned, "second" does not fit: failed, with why.
  ASSERT_EQ(RunDeploy({"second", "--to", "all"}), 0);
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto v = View("second");
    return v && !v->agents.empty() && v->agents[0].state == "failed" &&
           v->agents[0].reason.find("quota") != std::string::npos;
  })) << Logs(*agent);
  EXPECT_TRUE(fs::exists(Content("e", a, "first")));
  // Removed, "first" may go; the agent evicts it for "second".
  Json out;
  ASSERT_EQ(RunDeploy({"first", "--remove"}, &out), 0);
  EXPECT_EQ(out["deleted"], true);
  ASSERT_EQ(RunDeploy({"second", "--to", "all", "--wait", "120s"}), 0) << Logs(*agent);
  EXPECT_TRUE(SameContent(Content("e", b, "second"), files_["second"]));
  EXPECT_FALSE(fs::exists(AgentDir("e") / "content" / a));
  EXPECT_NE(agent->Stderr().find("evicted first"), std::string::npos) << Logs(*agent);
  EXPECT_FALSE(View("first"));
}

TEST_F(AgentTest, DeployWaitNamesTheStragglersAndWhy) {
  const std::string hash = Publish("late", 1 << 20, 7);
  ASSERT_FALSE(hash.empty());
  // Assigned, but it cannot fit: a straggler with a reason.
  auto agent = Agent("s", "127.0.0.2", {"--quota", "64KiB"});
  ASSERT_EQ(RunDeploy({"late", "--to", "all"}), 0);
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto v = View("late");
    return v && !v->agents.empty() && v->agents[0].state == "failed";
  })) << Logs(*agent);
  Json out;
  EXPECT_EQ(RunDeploy({"late", "--to", "all", "--wait", "2s"}, &out), 8);
  EXPECT_EQ(out["complete"], false);
  ASSERT_EQ(out["stragglers"].size(), 1u) << out.dump();
  EXPECT_NE(out["stragglers"][0]["why"].get<std::string>().find("quota"), std::string::npos);
  EXPECT_EQ(out["error"]["kind"], "stalled");
}

}  // namespace
}  // namespace swarmcast::node::testing
