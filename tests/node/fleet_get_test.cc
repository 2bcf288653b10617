// Integration: the fleet-facing parts of `get` (issue 15), with the real
// tracker and node processes on 127.0.0.x:
// - `get INFOHASH --connect ADDR` without a tracker, and with one that does
//   not answer: the metadata comes from the peers (BEP 9) and goes through
//   the same metainfo check; a bounded wait when no peer has it;
// - `--as NAME` names the output file, with resume and rerun as usual;
// - the whole-file SHA-256 in the report, and the publisher's pin checked.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <regex>

#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;

class FleetGetTest : public LocalSwarmTest {
 protected:
  void SetUp() override {
    LocalSwarmTest::SetUp();
    if (HasFatalFailure()) return;
    payload_ = Dir("seed") / "image.raw";
    WriteRandomFile(payload_, 3 << 20, 47);
  }
  void TearDown() override {
    for (auto& s : seeds_) s->Signal(SIGTERM);
  }

  // A seed of payload_ under `name`; its info-hash and BitTorrent port.
  std::pair<std::string, int> Seed(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {
        "seed",        payload_.string(), "--tracker",           url_, "--name", name, "--listen",
        "127.0.0.2:0", "--json",          "--progress-interval", "1s"};
    // Push only where a test asks for it (--push-listen).
    if (std::find(extra.begin(), extra.end(), "--push-listen") == extra.end()) {
      a.push_back("--no-push");
    }
    a.insert(a.end(), extra.begin(), extra.end());
    seeds_.push_back(Run("seed-" + name, a));
    Child& seed = *seeds_.back();
    const std::string ih = WaitSeedPublished(seed);
    int port = 0;
    const std::regex rx("BitTorrent listening on 127\\.0\\.0\\.2:([0-9]+)");
    WaitUntil(30s, [&] {
      std::smatch m;
      const std::string err = seed.Stderr();
      if (std::regex_search(err, m, rx)) port = std::stoi(m[1]);
      return port != 0 || !seed.Running();
    });
    return {ih, port};
  }

  std::unique_ptr<Child> Get(std::vector<std::string> args) {
    std::vector<std::string> a = {"get", "--listen", "127.0.0.3:0", "--no-linger", "--json"};
    a.insert(a.end(), args.begin(), args.end());
    return Run("get-" + std::to_string(++runs_), a);
  }

  fs::path payload_;
  std::vector<std::unique_ptr<Child>> seeds_;
  int runs_ = 0;
};

TEST_F(FleetGetTest, AnInfoHashAndPeersNeedNoTracker) {
  auto [ih, port] = Seed("image");
  ASSERT_FALSE(ih.empty());
  ASSERT_NE(port, 0) << seeds_.back()->Stderr();
  const fs::path out = Dir("node");
  auto get = Get({ih, "--connect", "127.0.0.2:" + std::to_string(port), "-o", out.string()});
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_NE(get->Stderr().find("asking 1 peer(s) for the metadata"), std::string::npos)
      << get->Stderr();
  EXPECT_TRUE(SameContent(payload_, out / "image.raw"));
  const auto j = get->JsonOut();
  EXPECT_EQ(j["end"], "completed") << j.dump();
  EXPECT_EQ(j["info_hash"], ih);
  EXPECT_EQ(j["sha256"], Sha256Of(payload_)) << j.dump();
}

TEST_F(FleetGetTest, WithoutATrackerPushFromSubscribesByHand) {
  auto [ih, port] = Seed("image", {"--push-listen", "127.0.0.2:0"});
  ASSERT_NE(port, 0);
  std::smatch m;
  const std::string err = seeds_.back()->Stderr();
  ASSERT_TRUE(std::regex_search(err, m, std::regex("push on (127\\.0\\.0\\.2:[0-9]+)"))) << err;
  const fs::path out = Dir("node");
  auto get = Get({ih, "--connect", "127.0.0.2:" + std::to_string(port), "--push-from", m[1].str(),
                  "-o", out.string()});
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_NE(get->Stderr().find("push: subscribed to " + m[1].str()), std::string::npos)
      << get->Stderr();
  EXPECT_TRUE(SameContent(payload_, out / "image.raw"));
}

TEST_F(FleetGetTest, ATrackerThatIsDownIsNotWaitedForWhenPeersAreGiven) {
  auto [ih, port] = Seed("image");
  ASSERT_NE(port, 0);
  const fs::path out = Dir("node");
  // Port 1 on loopback: nothing listens, the connection is refused. The
  // default --tracker-retry (5 minutes) would outlast the test's deadline.
  auto get = Get({ih, "--tracker", "http://127.0.0.1:1", "--connect",
                  "127.0.0.2:" + std::to_string(port), "-o", out.string()});
  ASSERT_EQ(get->Wait(90s), 0) << get->Stderr();
  EXPECT_NE(get->Stderr().find("asking the --connect peers for the metadata"), std::string::npos)
      << get->Stderr();
  EXPECT_TRUE(SameContent(payload_, out / "image.raw"));
}

TEST_F(FleetGetTest, NoMetadataFromThePeersEndsAtTheDeadline) {
  auto [ih, port] = Seed("image");
  ASSERT_NE(port, 0);
  // An info-hash nobody seeds: the seed refuses the handshake for it.
  const std::string other(40, 'a');
  auto get = Get({other, "--connect", "127.0.0.2:" + std::to_string(port), "-o",
                  Dir("node").string(), "--metadata-timeout", "2s"});
  ASSERT_EQ(get->Wait(60s), 7) << get->Stderr();
  EXPECT_NE(get->Stderr().find("no metadata from the --connect peers within 2s ("),
            std::string::npos)
      << get->Stderr();
  const auto j = get->JsonOut();
  EXPECT_EQ(j["error"]["kind"], "network") << j.dump();
  EXPECT_TRUE(fs::is_empty(Dir("node")));
}

TEST_F(FleetGetTest, WithoutTrackerOrPeersItSaysWhatIsNeeded) {
  auto get = Get({std::string(40, 'a'), "-o", Dir("node").string()});
  ASSERT_EQ(get->Wait(30s), 2) << get->Stderr();
  EXPECT_NE(get->Stderr().find("--tracker URL is required (or an INFOHASH with --connect"),
            std::string::npos)
      << get->Stderr();
}

TEST_F(FleetGetTest, AsNamesTheFileAndARerunFindsItComplete) {
  Seed("image");
  const fs::path out = Dir("node");
  auto get = Get({"image", "--tracker", url_, "-o", out.string(), "--as", "disk.img"});
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_TRUE(SameContent(payload_, out / "disk.img"));
  EXPECT_FALSE(fs::exists(out / "image.raw"));
  EXPECT_EQ(get->JsonOut()["path"], (out / "disk.img").string());

  auto again = Get({"image", "--tracker", url_, "-o", out.string(), "-O", "disk.img"});
  ASSERT_EQ(again->Wait(60s), 0) << again->Stderr();
  const auto j = again->JsonOut();
  EXPECT_EQ(j["end"], "already-complete") << j.dump();
  EXPECT_EQ(j["downloaded_bytes"], 0);
  // The digest the first get kept with its piece hashes: nothing was read.
  EXPECT_EQ(j["sha256"], Sha256Of(payload_)) << j.dump();
  EXPECT_NE(again->Stderr().find("by the cached hashes"), std::string::npos) << again->Stderr();
  EXPECT_FALSE(fs::exists(out / "image.raw"));
}

TEST_F(FleetGetTest, AKilledGetResumesWhateverAsSaysAndTheDigestCoversTheWholeFile) {
  const std::int64_t size = 32 << 20;
  WriteRandomFile(payload_, size, 5);
  Seed("image", {"--piece-size", "64KiB"});
  const fs::path out = Dir("node");
  auto get = Get({"image", "--tracker", url_, "-o", out.string(), "--as", "first.img",
                  "--max-download-rate", "4MiB"});
  const fs::path status = Dir("state") / (std::to_string(get->pid()) + ".json");
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto j = nlohmann::json::parse(ReadAll(status), nullptr, false);
    return !j.is_discarded() && j.value("done_bytes", std::int64_t{0}) >= size * 2 / 5;
  })) << get->Stderr();
  get->Signal(SIGKILL);
  ASSERT_EQ(get->Wait(10s), -SIGKILL);
  EXPECT_FALSE(fs::exists(out / "first.img")) << "nothing under the final name before the end";

  // Staging keeps the metainfo's name, so another --as resumes the same data.
  auto again = Get({"image", "--tracker", url_, "-o", out.string(), "--as", "second.img"});
  ASSERT_EQ(again->Wait(60s), 0) << again->Stderr();
  const auto j = again->JsonOut();
  EXPECT_GE(j["pieces_at_start"].get<std::int64_t>(), 1) << j.dump();
  EXPECT_TRUE(SameContent(payload_, out / "second.img"));
  EXPECT_FALSE(fs::exists(out / "first.img"));
  EXPECT_FALSE(fs::exists(out / "image.raw"));
  // The pieces verified before the kill were read from disk into the digest.
  EXPECT_EQ(j["sha256"], Sha256Of(payload_)) << j.dump();
  EXPECT_EQ(j["sha256_read_bytes"], size) << j.dump();
}

TEST_F(FleetGetTest, AsRefusesNamesThatAreNotOneFileName) {
  const std::vector<std::string> names = {"a/b", "..",         ".",
                                          "",    ".swarmcast", std::string(256, 'n')};
  for (const std::string& bad : names) {
    auto get = Get({"image", "--tracker", url_, "-o", Dir("node").string(), "--as", bad});
    ASSERT_EQ(get->Wait(30s), 2) << bad << ": " << get->Stderr();
    EXPECT_NE(get->Stderr().find("--as"), std::string::npos) << get->Stderr();
  }
}

TEST_F(FleetGetTest, AsRefusesAFolder) {
  const fs::path folder = Dir("seed") / "model";
  fs::create_directories(folder);
  WriteRandomFile(folder / "a.bin", 100000, 1);
  WriteRandomFile(folder / "b.bin", 100000, 2);
  seeds_.push_back(Run("seed-model", {"seed", folder.string(), "--tracker", url_, "--listen",
                                      "127.0.0.2:0", "--no-push"}));
  ASSERT_FALSE(WaitSeedPublished(*seeds_.back()).empty());
  auto get = Get({"model", "--tracker", url_, "-o", Dir("node").string(), "--as", "x"});
  ASSERT_EQ(get->Wait(60s), 2) << get->Stderr();
  EXPECT_NE(get->Stderr().find("--as names a single file; 'model' is a folder"), std::string::npos)
      << get->Stderr();
}

TEST_F(FleetGetTest, ThePublishersPinIsCheckedAndAMismatchIsNotMovedIntoPlace) {
  auto [good_ih, port] = Seed("image", {"--sha256", "auto"});
  ASSERT_FALSE(good_ih.empty());
  const fs::path out = Dir("node");
  auto get = Get({"image", "--tracker", url_, "-o", out.string()});
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_EQ(get->JsonOut()["sha256"], Sha256Of(payload_));

  // The same name republished with a wrong pin: the pieces all match the
  // metainfo, the whole file does not match the pin.
  seeds_.back()->Signal(SIGTERM);
  ASSERT_TRUE(seeds_.back()->Wait(30s).has_value());
  Seed("image", {"--sha256", std::string(64, '0')});
  const fs::path out2 = Dir("node2");
  auto bad = Get({"image", "--tracker", url_, "-o", out2.string()});
  ASSERT_EQ(bad->Wait(60s), 9) << bad->Stderr();
  EXPECT_NE(bad->Stderr().find("whole-file SHA-256 mismatch"), std::string::npos) << bad->Stderr();
  EXPECT_EQ(bad->JsonOut()["error"]["kind"], "verification") << bad->Stdout();
  EXPECT_FALSE(fs::exists(out2 / "image.raw")) << "not moved into place";
  // And the finished copy, checked against that pin: refused, left alone.
  auto rerun = Get({"image", "--tracker", url_, "-o", out.string()});
  ASSERT_EQ(rerun->Wait(60s), 9) << rerun->Stderr();
  EXPECT_TRUE(SameContent(payload_, out / "image.raw"));
}

TEST_F(FleetGetTest, ABadPinIsRefusedBeforeAnythingIsPublished) {
  seeds_.push_back(Run("seed-bad", {"seed", payload_.string(), "--tracker", url_, "--listen",
                                    "127.0.0.2:0", "--no-push", "--sha256", "abc"}));
  ASSERT_EQ(seeds_.back()->Wait(30s), 2) << seeds_.back()->Stderr();
  auto get = Get({"image.raw", "--tracker", url_, "-o", Dir("node").string(), "--sha256", "xyz"});
  ASSERT_EQ(get->Wait(30s), 2) << get->Stderr();
}

}  // namespace
}  // namespace swarmcast::node::testing
