// Integration: gets and seeds against a tracker that is not answering
// (the real swarmcast-tracker stopped with SIGSTOP: the kernel still
// accepts connections, nothing replies, as on a saturated link), and a
// get waiting for a name that is published after it started.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;

class TrackerRetryTest : public LocalSwarmTest {
 protected:
  std::unique_ptr<Child> Seed(const fs::path& file, const std::string& name) {
    return Run("seed-" + name, {"seed", file.string(), "--tracker", url_, "--name", name,
                                "--listen", "127.0.0.2:0", "--json", "--no-push"});
  }
  std::unique_ptr<Child> Get(const std::string& name, const std::string& log,
                             std::vector<std::string> extra) {
    std::vector<std::string> a = {
        "get",      name,          "--tracker",   url_,    "-o", Dir(log).string(),
        "--listen", "127.0.0.3:0", "--no-linger", "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return Run(log, a);
  }
  // The tracker answers nothing while stopped; resumed at the end of the
  // test in any case, so it can be shut down.
  struct Stopped {
    explicit Stopped(Child& t) : tracker(t) { tracker.Signal(SIGSTOP); }
    ~Stopped() { Resume(); }
    void Resume() {
      if (!resumed) tracker.Signal(SIGCONT);
      resumed = true;
    }
    Child& tracker;
    bool resumed = false;
  };
};

TEST_F(TrackerRetryTest, AGetStartedWhileTheTrackerIsNotAnsweringCompletesOnceItIs) {
  const fs::path file = Dir("seed") / "image.raw";
  WriteRandomFile(file, 2 << 20, 21);
  auto seed = Seed(file, "image");
  ASSERT_FALSE(WaitSeedPublished(*seed).empty()) << seed->Stderr();

  Stopped stopped(*tracker_);
  auto get = Get("image", "patient", {"--timeout", "1s"});
  auto hasty = Get("image", "hasty", {"--timeout", "1s", "--tracker-retry", "0"});
  // The get without retries fails on its first timeout, saying so.
  ASSERT_EQ(hasty->Wait(30s), 3) << hasty->Stderr();
  EXPECT_NE(hasty->Stderr().find("read http://"), std::string::npos) << hasty->Stderr();
  EXPECT_NE(hasty->Stderr().find("timeout"), std::string::npos) << hasty->Stderr();
  // The other retries: it said so at least twice before the tracker answers.
  ASSERT_TRUE(WaitUntil(60s, [&] {
    const std::string err = get->Stderr();
    const auto first = err.find("retrying in");
    return first != std::string::npos && err.find("retrying in", first + 1) != std::string::npos;
  })) << get->Stderr();
  // The retry line names the tracker once ("tracker: ...; retrying in").
  EXPECT_EQ(get->Stderr().find("tracker: tracker:"), std::string::npos) << get->Stderr();
  EXPECT_TRUE(get->Running());
  stopped.Resume();
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_TRUE(SameContent(file, Dir("patient") / "image.raw"));
  seed->Signal(SIGTERM);
  EXPECT_EQ(seed->Wait(20s), 0);
}

TEST_F(TrackerRetryTest, AnUnansweredFirstRequestIsAskedAgainLongBeforeTheTimeout) {
  const fs::path file = Dir("seed") / "image.raw";
  WriteRandomFile(file, 1 << 20, 23);
  auto seed = Seed(file, "image");
  ASSERT_FALSE(WaitSeedPublished(*seed).empty()) << seed->Stderr();

  Stopped stopped(*tracker_);
  // --timeout 30s: each attempt used to wait all of it. The first now
  // gives up after 2 s and the next after 4 s, so two retries are logged
  // within 6.25 s (delays included); the deadline leaves room for a busy
  // machine and is still far below one 30 s timeout.
  auto get = Get("image", "quick", {"--timeout", "30s"});
  ASSERT_TRUE(WaitUntil(20s, [&] {
    const std::string err = get->Stderr();
    const auto first = err.find("timeout; retrying in");
    return first != std::string::npos &&
           err.find("timeout; retrying in", first + 1) != std::string::npos;
  })) << get->Stderr();
  EXPECT_TRUE(get->Running());
  stopped.Resume();
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_TRUE(SameContent(file, Dir("quick") / "image.raw"));
  seed->Signal(SIGTERM);
  EXPECT_EQ(seed->Wait(20s), 0);
}

TEST_F(TrackerRetryTest, GetWaitFetchesANamePublishedAfterItStarted) {
  auto get = Get("later", "waiting", {"--wait", "60s"});
  ASSERT_TRUE(WaitUntil(30s, [&] {
    return get->Stderr().find("not published yet; waiting") != std::string::npos;
  })) << get->Stderr();
  EXPECT_TRUE(get->Running());
  const fs::path file = Dir("seed") / "later.bin";
  WriteRandomFile(file, 1 << 20, 22);
  auto seed = Seed(file, "later");
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_TRUE(SameContent(file, Dir("waiting") / "later.bin"));
  seed->Signal(SIGTERM);
  EXPECT_EQ(seed->Wait(20s), 0);
}

}  // namespace
}  // namespace swarmcast::node::testing
