// Integration: `get` run again over what is already there, with the real
// tracker and node processes on 127.0.0.x: a finished get ends at once
// without downloading (safe to run twice from Ansible or a Job), something
// else under the name is refused and left alone, and --force replaces it.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;

class GetTargetTest : public LocalSwarmTest {
 protected:
  void SetUp() override {
    LocalSwarmTest::SetUp();
    if (HasFatalFailure()) return;
    payload_ = Dir("seed") / "image.raw";
    WriteRandomFile(payload_, 3 << 20, 31);
    seed_ = Run("seed", {"seed", payload_.string(), "--tracker", url_, "--name", "image",
                         "--listen", "127.0.0.2:0", "--json", "--no-push"});
    ASSERT_FALSE(WaitSeedPublished(*seed_).empty()) << seed_->Stderr();
  }
  void TearDown() override {
    if (seed_) seed_->Signal(SIGTERM);
  }

  std::unique_ptr<Child> Get(const fs::path& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"get",        "image",    "--tracker",   url_,          "-o",
                                  out.string(), "--listen", "127.0.0.3:0", "--no-linger", "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return Run("get-" + std::to_string(++runs_), a);
  }

  fs::path payload_;
  std::unique_ptr<Child> seed_;
  int runs_ = 0;
};

TEST_F(GetTargetTest, ARerunOfAFinishedGetEndsAtOnceWithoutDownloading) {
  auto first = Get(Dir("node"));
  ASSERT_EQ(first->Wait(60s), 0) << first->Stderr();
  EXPECT_EQ(first->JsonOut()["end"], "completed");
  ASSERT_TRUE(SameContent(payload_, Dir("node") / "image.raw"));

  auto again = Get(Dir("node"));
  ASSERT_EQ(again->Wait(60s), 0) << again->Stderr();
  const auto j = again->JsonOut();
  EXPECT_EQ(j["end"], "already-complete") << j.dump();
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["downloaded_bytes"], 0);
  EXPECT_EQ(j["path"], (Dir("node") / "image.raw").string());
  // The first get kept the hashes of what it wrote: the check read nothing.
  EXPECT_NE(again->Stderr().find("already complete (every piece matches, by the cached hashes"),
            std::string::npos)
      << again->Stderr();
}

TEST_F(GetTargetTest, SomethingElseUnderTheNameIsRefusedUnlessForced) {
  const fs::path out = Dir("node");
  {  // The right size, other bytes: only a check can tell.
    std::ofstream f(out / "image.raw", std::ios::binary);
    f << std::string(3 << 20, 'x');
  }
  auto refused = Get(out);
  ASSERT_EQ(refused->Wait(60s), 5) << refused->Stderr();
  EXPECT_NE(
      refused->Stderr().find("exists and is not this swarm's content (48 of 48 pieces "
                             "differ); remove it, choose another -o or --as, or pass --force"),
      std::string::npos)
      << refused->Stderr();
  EXPECT_TRUE(refused->JsonOut().contains("error")) << refused->Stdout();
  EXPECT_EQ(ReadAll(out / "image.raw"), std::string(3 << 20, 'x')) << "left alone";

  auto forced = Get(out, {"--force"});
  ASSERT_EQ(forced->Wait(60s), 0) << forced->Stderr();
  EXPECT_NE(forced->Stderr().find("replacing"), std::string::npos) << forced->Stderr();
  EXPECT_TRUE(SameContent(payload_, out / "image.raw"));
}

}  // namespace
}  // namespace swarmcast::node::testing
