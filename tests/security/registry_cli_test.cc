// The node's side of issue 14's registry items, against the real
// `swarmcast` and `swarmcast-tracker` binaries on 127.0.0.x: a seed on the
// tracker's host publishes with the tracker's own token file; unpublish is
// the owner's alone; a private tracker's swarm is read and joined only with
// a token; and a symlink planted where the node used to write its
// temporary files redirects nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "node/registry_client.h"
#include "proto/metainfo.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

std::string Logs(Child& c) { return "stdout:\n" + c.Stdout() + "\nstderr:\n" + c.Stderr(); }

class RegistryCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::make_unique<TempDir>(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  // A tracker in <scratch>/<sub>; its URL (empty if it did not start).
  std::string StartTrackerIn(const std::string& sub, std::vector<std::string> extra = {}) {
    const fs::path d = Dir(sub);
    auto t = StartTracker(d, std::move(extra));
    if (!t.child) return {};
    trackers_.push_back(std::move(t.child));
    return "http://127.0.0.1:" + std::to_string(t.port);
  }
  fs::path Dir(const std::string& sub) {
    const fs::path p = dir_->path() / sub;
    fs::create_directories(p);
    return p;
  }
  // `swarmcast args...` with its own state directory and no token from
  // the test's environment.
  std::unique_ptr<Child> Run(const std::string& log, std::vector<std::string> args) {
    args.insert(args.begin(), SwarmcastBin());
    return std::make_unique<Child>(
        std::move(args), dir_->path() / log,
        std::vector<std::string>{"SWARMCAST_STATE_DIR=" + Dir("state").string(),
                                 "SWARMCAST_CACHE_DIR=" + Dir("cache").string(),
                                 "SWARMCAST_TOKEN="});
  }
  std::unique_ptr<Child> Seed(const std::string& log, const std::string& url, const fs::path& file,
                              const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> a = {"seed", file.string(), "--tracker",   url,         "--name",
                                  name,   "--listen",    "127.0.0.2:0", "--no-push", "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return Run(log, a);
  }

  std::unique_ptr<TempDir> dir_;
  std::vector<std::unique_ptr<Child>> trackers_;
};

TEST_F(RegistryCliTest, ASeedOnTheTrackersHostPublishesWithItsTokenFileAndNoOneElseDoes) {
  const std::string url = StartTrackerIn("tracker");
  ASSERT_FALSE(url.empty()) << ReadAll(dir_->path() / "tracker/tracker.err");
  const fs::path token_file = dir_->path() / "tracker/tracker.db.token";
  const fs::path payload = Dir("seed") / "image.raw";
  WriteRandomFile(payload, 1 << 20, 3);

  auto refused = Seed("seed-no-token", url, payload, "image", {});
  ASSERT_EQ(refused->Wait(60s), 3) << Logs(*refused);
  EXPECT_NE(refused->Stderr().find("HTTP 401"), std::string::npos) << Logs(*refused);
  EXPECT_NE(refused->Stderr().find("--token-file"), std::string::npos)
      << "the refusal says how to give the token";

  auto seed = Seed("seed", url, payload, "image", {"--token-file", token_file.string()});
  RegistryClient reader(*ParseTrackerUrl(url), 2s);
  ASSERT_TRUE(WaitUntil(60s, [&] { return seed->Running() && reader.GetSwarm("image").ok(); }))
      << Logs(*seed);
  seed->Signal(SIGTERM);
  EXPECT_TRUE(seed->Wait(30s).has_value());

  // Another publisher's token cannot unpublish; nor can no token.
  auto anonymous = Run("unpublish-anon", {"unpublish", "image", "--tracker", url, "--json"});
  ASSERT_EQ(anonymous->Wait(30s), 3) << Logs(*anonymous);
  EXPECT_EQ(anonymous->JsonOut()["http_status"], 401) << Logs(*anonymous);
  auto both = Run("unpublish-both", {"unpublish", "image", "--tracker", url, "--token", "x",
                                     "--token-file", token_file.string()});
  EXPECT_EQ(both->Wait(30s), 2) << "--token and --token-file exclude each other";
  auto owner = Run("unpublish", {"unpublish", "image", "--tracker", url, "--token-file",
                                 token_file.string(), "--json"});
  ASSERT_EQ(owner->Wait(30s), 0) << Logs(*owner);
  EXPECT_EQ(owner->JsonOut()["deleted"], true) << Logs(*owner);
  EXPECT_EQ(owner->JsonOut()["info_hash"].get<std::string>().size(), 40u);
  auto get = reader.GetSwarm("image");
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(get.error().kind, RegistryError::Kind::kNotFound);
}

TEST_F(RegistryCliTest, OnlyTheOwnerUnpublishes) {
  const std::string url =
      StartTrackerIn("tracker", {"--admin-token", "alice-token", "--admin-token", "bob-token"});
  ASSERT_FALSE(url.empty());
  const fs::path payload = Dir("seed") / "image.raw";
  WriteRandomFile(payload, 256 << 10, 4);
  auto seed = Seed("seed", url, payload, "image", {"--token", "alice-token"});
  RegistryClient reader(*ParseTrackerUrl(url), 2s);
  ASSERT_TRUE(WaitUntil(60s, [&] { return seed->Running() && reader.GetSwarm("image").ok(); }))
      << Logs(*seed);
  auto bob = Run("unpublish-bob",
                 {"unpublish", "image", "--tracker", url, "--token", "bob-token", "--json"});
  ASSERT_EQ(bob->Wait(30s), 3) << Logs(*bob);
  EXPECT_EQ(bob->JsonOut()["http_status"], 403) << Logs(*bob);
  EXPECT_NE(bob->Stderr().find("belongs to another publisher"), std::string::npos) << Logs(*bob);
  EXPECT_TRUE(reader.GetSwarm("image").ok()) << "still published";
  auto alice =
      Run("unpublish-alice", {"unpublish", "image", "--tracker", url, "--token", "alice-token"});
  ASSERT_EQ(alice->Wait(30s), 0) << Logs(*alice);
  EXPECT_NE(alice->Stdout().find("unpublished image ("), std::string::npos) << Logs(*alice);
}

// A private tracker: the swarm is invisible without a token, and a get with
// the announce token reads the registry and joins the swarm (its announces
// carry the token) from a seed that has the admin token.
TEST_F(RegistryCliTest, APrivateSwarmIsReadAndJoinedOnlyWithAToken) {
  const std::string url = StartTrackerIn(
      "tracker", {"--announce-token", "peer-secret", "--admin-token", "publisher-secret"});
  ASSERT_FALSE(url.empty());
  const fs::path payload = Dir("seed") / "image.raw";
  WriteRandomFile(payload, 2 << 20, 5);
  auto seed = Seed("seed", url, payload, "image", {"--token", "publisher-secret"});
  RegistryClient reader(*ParseTrackerUrl(url), 2s, "peer-secret");
  ASSERT_TRUE(WaitUntil(60s, [&] { return seed->Running() && reader.GetSwarm("image").ok(); }))
      << Logs(*seed);

  auto blind = Run("get-no-token", {"get", "image", "--tracker", url, "-o", Dir("blind").string(),
                                    "--listen", "127.0.0.3:0"});
  ASSERT_EQ(blind->Wait(60s), 3) << Logs(*blind);
  EXPECT_NE(blind->Stderr().find("HTTP 401"), std::string::npos) << Logs(*blind);
  auto status = Run("status-no-token", {"status", "--tracker", url, "image"});
  EXPECT_EQ(status->Wait(30s), 3) << Logs(*status);

  auto get = Run("get", {"get", "image", "--tracker", url, "--token", "peer-secret", "-o",
                         Dir("out").string(), "--listen", "127.0.0.3:0", "--no-linger", "--json"});
  ASSERT_EQ(get->Wait(120s), 0) << Logs(*get) << "\nseed:\n" << Logs(*seed);
  EXPECT_TRUE(SameContent(payload, Dir("out") / "image.raw"));
  EXPECT_EQ(get->Stderr().find("peer-secret"), std::string::npos) << "the token was logged";
  EXPECT_EQ(seed->Stderr().find("publisher-secret"), std::string::npos) << "the token was logged";
}

// Before, atomic writes went through PATH.tmpPID, opened without O_EXCL or
// O_NOFOLLOW: a symlink planted there by anyone who could write the
// directory sent the write to a file of their choosing. The shell plants
// it at the name the process would have used ($$ stays the pid across
// exec) and then runs `swarmcast create -o OUT`.
TEST_F(RegistryCliTest, APlantedTempFileSymlinkRedirectsNothing) {
  const fs::path work = Dir("work");
  const fs::path payload = work / "image.raw";
  WriteRandomFile(payload, 256 << 10, 6);
  const fs::path victim = Dir("victim") / "precious";
  { std::ofstream(victim) << "do not touch\n"; }
  const fs::path out = work / "image.torrent";
  const std::string script = "ln -s '" + victim.string() + "' '" + out.string() +
                             ".tmp'$$ && exec '" + SwarmcastBin() + "' create '" +
                             payload.string() + "' -o '" + out.string() + "' --json";
  Child create({"/bin/sh", "-c", script}, dir_->path() / "create",
               {"SWARMCAST_STATE_DIR=" + Dir("state").string(),
                "SWARMCAST_CACHE_DIR=" + Dir("cache").string()});
  ASSERT_EQ(create.Wait(60s), 0) << Logs(create);
  EXPECT_EQ(ReadAll(victim), "do not touch\n");
  const std::string torrent = ReadAll(out);
  EXPECT_TRUE(proto::CheckMetainfo(torrent).ok()) << "the real output was not written";
  // Only the planted link is left beside the output: no temporary file.
  int beside = 0;
  for (const auto& e : fs::directory_iterator(work)) {
    if (e.path().filename().string().rfind("image.torrent.tmp", 0) == 0) {
      ++beside;
      EXPECT_TRUE(fs::is_symlink(e.symlink_status())) << e.path();
    }
  }
  EXPECT_EQ(beside, 1);
}

}  // namespace
}  // namespace swarmcast::node::testing
