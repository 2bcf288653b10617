#include "node/progress.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace swarmcast::node {
namespace {

ProgressSnapshot Half() {
  ProgressSnapshot s;
  s.role = "get";
  s.name = "disk.img";
  s.state = "downloading";
  s.total_bytes = 200 << 20;
  s.done_bytes = 100 << 20;
  s.down_rate = 50 << 20;
  s.peers = 4;
  return s;
}

TEST(Progress, EtaFromRate) {
  EXPECT_DOUBLE_EQ(EtaSeconds(Half()), 2.0);
  ProgressSnapshot stalled = Half();
  stalled.down_rate = 0;
  EXPECT_LT(EtaSeconds(stalled), 0);
  ProgressSnapshot done = Half();
  done.done_bytes = done.total_bytes;
  EXPECT_EQ(EtaSeconds(done), 0);
}

TEST(Progress, BarShowsRatePeersEtaAndFitsTheWidth) {
  const std::string bar = RenderBar(Half(), 200);
  EXPECT_NE(bar.find("[############............]"), std::string::npos) << bar;
  EXPECT_NE(bar.find(" 50.0%"), std::string::npos) << bar;
  EXPECT_NE(bar.find("down 50.0 MiB/s"), std::string::npos) << bar;
  EXPECT_NE(bar.find("peers 4"), std::string::npos) << bar;
  EXPECT_NE(bar.find("ETA 2s"), std::string::npos) << bar;
}

TEST(Progress, TheBarFitsEveryTerminalWidthAndKeepsTheEssentials) {
  for (int width : {20, 40, 60, 79, 100, 200}) {
    const std::string bar = RenderBar(Half(), width);
    EXPECT_LE(static_cast<int>(bar.size()), width) << bar;
    EXPECT_NE(bar.find("50.0%"), std::string::npos) << width << ": " << bar;
  }
  // At 79 columns (an 80-column terminal less one) the rate and ETA stay.
  const std::string narrow = RenderBar(Half(), 79);
  EXPECT_NE(narrow.find("down 50.0 MiB/s"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("ETA 2s"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("[#"), std::string::npos) << narrow;
}

TEST(Progress, PlainLineNamesTheTransfer) {
  const std::string line = RenderLine(Half());
  EXPECT_EQ(line.rfind("get disk.img: downloading", 0), 0u) << line;
  EXPECT_EQ(line.find('\r'), std::string::npos);
}

TEST(Progress, JsonCarriesTheCounters) {
  const nlohmann::json j = SnapshotJson(Half(), "/x/disk.img", {{"push", "on"}});
  EXPECT_EQ(j["push"], "on");
  EXPECT_EQ(j["path"], "/x/disk.img");
  EXPECT_EQ(j["done_bytes"], 100 << 20);
  EXPECT_EQ(j["state"], "downloading");
}

}  // namespace
}  // namespace swarmcast::node
