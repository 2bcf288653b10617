// The status file's life and the liveness rule `swarmcast status` applies.
#include "node/status_file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;

nlohmann::json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in, nullptr, false);
}

class StatusFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("swarmcast-status-" + std::to_string(::getpid()));
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(StatusFileTest, WrittenAtOnceUpdatedAndRemovedAtTheEnd) {
  fs::path path;
  {
    StatusFile status(dir_ / "state", {{"role", "get"}, {"state", "fetching metainfo"}});
    path = status.path();
    EXPECT_EQ(path, dir_ / "state" / (std::to_string(::getpid()) + ".json"));
    nlohmann::json j = ReadJson(path);
    EXPECT_EQ(j["state"], "fetching metainfo");
    EXPECT_EQ(j["pid"], ::getpid());
    EXPECT_TRUE(WriterAlive(j)) << j.dump();

    status.Update({{"role", "get"}, {"state", "downloading"}});
    j = ReadJson(path);
    EXPECT_EQ(j["state"], "downloading");
    EXPECT_EQ(status.last(), nlohmann::json({{"role", "get"}, {"state", "downloading"}}));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(StatusFileTest, AFileOfAnExitedOrDifferentProcessIsNotAlive) {
  nlohmann::json mine;
  {
    StatusFile status(dir_, {{"role", "seed"}});
    mine = ReadJson(status.path());
  }
  ASSERT_TRUE(WriterAlive(mine));
  // Same pid, other start time: the pid was reused by another process.
  nlohmann::json reused = mine;
  reused["pid_start"] = mine["pid_start"].get<std::uint64_t>() + 1;
  EXPECT_FALSE(WriterAlive(reused));

  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int st = 0;
  ASSERT_EQ(::waitpid(child, &st, 0), child);
  nlohmann::json gone = mine;
  gone["pid"] = child;  // reaped: no such process now
  EXPECT_FALSE(WriterAlive(gone));
  EXPECT_FALSE(WriterAlive(nlohmann::json::object()));
  EXPECT_FALSE(WriterAlive({{"pid", "12"}, {"pid_start", 1}}));
}

TEST_F(StatusFileTest, AStateDirectoryOthersCanWriteOrALinkIsNotUsed) {
  fs::create_directories(dir_ / "open");
  fs::permissions(dir_ / "open", fs::perms::all);  // 0777: anyone could plant files
  EXPECT_TRUE(UnsafeStateDir(dir_ / "open").has_value());
  {
    StatusFile status(dir_ / "open", {{"role", "get"}});
    EXPECT_TRUE(status.path().empty());
    EXPECT_TRUE(fs::is_empty(dir_ / "open"));
  }
  fs::create_directories(dir_ / "real");
  fs::create_directory_symlink(dir_ / "real", dir_ / "link");
  EXPECT_TRUE(UnsafeStateDir(dir_ / "link").has_value());
  // Missing: created, owner only.
  EXPECT_FALSE(UnsafeStateDir(dir_ / "fresh").has_value());
  EXPECT_EQ(fs::status(dir_ / "fresh").permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST(ProcessStartTicks, KnowsThisProcessAndNotANegativePid) {
  EXPECT_TRUE(ProcessStartTicks(::getpid()).has_value());
  EXPECT_FALSE(ProcessStartTicks(-1).has_value());
  EXPECT_FALSE(ProcessStartTicks(0).has_value());
}

}  // namespace
}  // namespace swarmcast::node
