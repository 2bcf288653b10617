// Integration: the --json contract (node/cli/json_output.h) of every
// command, run as a script would: stdout holds exactly one JSON object,
// with "schema": 1, on success and on every kind of failure, and a failure
// carries {"error": {"code", "kind", "message"}} matching the exit code.
#include <gtest/gtest.h>
#include <signal.h>

#include <sstream>

#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

class JsonContractTest : public LocalSwarmTest {
 protected:
  // Runs `args` to its end; returns its exit code and the one object it
  // printed, failing the test if stdout is anything else.
  std::pair<int, Json> RunToEnd(std::vector<std::string> args) {
    auto c = Run("run-" + std::to_string(++runs_), std::move(args));
    const auto rc = c->Wait(60s);
    EXPECT_TRUE(rc.has_value());
    return {rc.value_or(-1), OnlyObject(*c)};
  }
  static Json OnlyObject(Child& c) {
    std::istringstream lines(c.Stdout());
    std::vector<std::string> all;
    for (std::string l; std::getline(lines, l);) all.push_back(l);
    EXPECT_EQ(all.size(), 1u) << "stdout:\n" << c.Stdout() << "\nstderr:\n" << c.Stderr();
    if (all.size() != 1) return nullptr;
    Json j = Json::parse(all[0], nullptr, false);
    EXPECT_TRUE(j.is_object()) << all[0];
    EXPECT_EQ(j.value("schema", 0), 1) << all[0];
    return j;
  }
  static void ExpectError(const Json& j, int code, const std::string& kind,
                          const std::string& in_message) {
    ASSERT_TRUE(j.contains("error")) << j.dump();
    EXPECT_EQ(j["error"]["code"], code) << j.dump();
    EXPECT_EQ(j["error"]["kind"], kind) << j.dump();
    EXPECT_NE(j["error"]["message"].get<std::string>().find(in_message), std::string::npos)
        << j.dump();
  }
  int runs_ = 0;
};

TEST_F(JsonContractTest, CreateSucceedsOrSaysWhyInOneObject) {
  const fs::path file = Dir("data") / "disk.img";
  WriteRandomFile(file, 1 << 20, 41);
  auto [rc, j] =
      RunToEnd({"create", file.string(), "-o", (Dir("out") / "d.torrent").string(), "--json"});
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(j["name"], "disk.img");
  EXPECT_FALSE(j.contains("error"));

  auto [missing_rc, missing] = RunToEnd({"create", (Dir("data") / "nope").string(), "-o",
                                         (Dir("out") / "x.torrent").string(), "--json"});
  EXPECT_EQ(missing_rc, 5);
  ExpectError(missing, 5, "storage", "No such file");
}

TEST_F(JsonContractTest, UsageErrorsAreObjectsToo) {
  auto [rc, j] = RunToEnd(
      {"get", "x", "--tracker", url_, "-o", Dir("o").string(), "--json", "--no-such-option"});
  EXPECT_EQ(rc, 2);
  ExpectError(j, 2, "usage", "no-such-option");

  auto [bad_rc, bad] =
      RunToEnd({"get", "../etc", "--tracker", url_, "-o", Dir("o").string(), "--json"});
  EXPECT_EQ(bad_rc, 2);
  ExpectError(bad, 2, "usage", "neither a swarm name nor");

  const fs::path file = Dir("data") / "paced.img";
  WriteRandomFile(file, 1 << 16, 43);
  auto [paced_rc, paced] =
      RunToEnd({"seed", file.string(), "--tracker", url_, "--json", "--push-in-flight", "-1"});
  EXPECT_EQ(paced_rc, 2);
  ExpectError(paced, 2, "usage", "--push-in-flight must be 0-512");
  auto [shape_rc, shape] =
      RunToEnd({"seed", file.string(), "--tracker", url_, "--json", "--push-topology", "tree"});
  EXPECT_EQ(shape_rc, 2);
  ExpectError(shape, 2, "usage", "--push-topology must be chain or fan-out");
}

TEST_F(JsonContractTest, GetAndSeedAndStatusEachPrintOneObject) {
  auto [rc, j] =
      RunToEnd({"get", "no-such-swarm", "--tracker", url_, "-o", Dir("o").string(), "--json"});
  EXPECT_EQ(rc, 3);
  ExpectError(j, 3, "tracker", "404");

  const fs::path file = Dir("seed") / "image.raw";
  WriteRandomFile(file, 1 << 20, 42);
  auto seed = Run("seed", {"seed", file.string(), "--tracker", url_, "--name", "image", "--listen",
                           "127.0.0.2:0", "--json", "--no-push"});
  const std::string info_hash = WaitSeedPublished(*seed);
  ASSERT_FALSE(info_hash.empty()) << seed->Stderr();

  auto [get_rc, got] = RunToEnd({"get", "image", "--tracker", url_, "-o", Dir("peer").string(),
                                 "--listen", "127.0.0.3:0", "--no-linger", "--json"});
  EXPECT_EQ(get_rc, 0);
  EXPECT_EQ(got["end"], "completed") << got.dump();
  EXPECT_EQ(got["info_hash"], info_hash);

  auto [status_rc, status] = RunToEnd({"status", "--tracker", url_, "image", "--json"});
  EXPECT_EQ(status_rc, 0);
  EXPECT_EQ(status["info_hash"], info_hash) << status.dump();
  auto [ls_rc, ls] = RunToEnd({"ls", "--tracker", url_, "--json"});
  EXPECT_EQ(ls_rc, 0);
  ASSERT_EQ(ls["swarms"].size(), 1u) << ls.dump();
  EXPECT_EQ(ls["swarms"][0]["name"], "image");
  EXPECT_EQ(ls["swarms"][0]["info_hash"], info_hash);
  EXPECT_GE(ls["swarms"][0]["completed"].get<int>(), 1) << ls.dump();
  EXPECT_EQ(ls["swarms"][0]["push_chain"], false) << ls.dump();

  // --watch redraws the completion view until stopped.
  auto watch = Run("watch", {"status", "--tracker", url_, "image", "--watch", "200ms"});
  ASSERT_TRUE(WaitUntil(30s,
                        [&] {
                          const std::string out = watch->Stdout();
                          const auto first = out.find("every 200ms");
                          return first != std::string::npos &&
                                 out.find("every 200ms", first + 1) != std::string::npos;
                        }))
      << watch->Stdout() << watch->Stderr();
  EXPECT_NE(watch->Stdout().find("every peer is done"), std::string::npos) << watch->Stdout();
  watch->Signal(SIGTERM);
  watch->Wait(20s);
  auto [watch_json_rc, watch_json] =
      RunToEnd({"status", "--tracker", url_, "image", "--watch", "--json"});
  EXPECT_EQ(watch_json_rc, 2);
  ExpectError(watch_json, 2, "usage", "--watch redraws for a person");

  auto [local_rc, local] = RunToEnd({"status", "--json"});
  EXPECT_EQ(local_rc, 0);
  EXPECT_TRUE(local["transfers"].is_array()) << local.dump();

  // unpublish (with the harness's token): the name goes, and a second try
  // says why it failed, with the tracker's status.
  auto [gone_rc, gone] = RunToEnd({"unpublish", "image", "--tracker", url_, "--json"});
  EXPECT_EQ(gone_rc, 0);
  EXPECT_EQ(gone["deleted"], true) << gone.dump();
  EXPECT_EQ(gone["info_hash"], info_hash);
  auto [again_rc, again] = RunToEnd({"unpublish", "image", "--tracker", url_, "--json"});
  EXPECT_EQ(again_rc, 3);
  ExpectError(again, 3, "tracker", "unknown name");
  EXPECT_EQ(again["http_status"], 404) << again.dump();

  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
  const Json report = OnlyObject(*seed);
  EXPECT_EQ(report["info_hash"], info_hash) << report.dump();
  EXPECT_EQ(report["registry_name"], "image");
  EXPECT_FALSE(report.contains("error"));
}

}  // namespace
}  // namespace swarmcast::node::testing
