// The log convention (proto/log.h): one line per event, levels filtered
// before anything is formatted.
#include "proto/log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace swarmcast::proto {
namespace {

TEST(Logger, OneLinePerEventWithTheLevelNamedUnlessInfo) {
  std::vector<std::string> lines;
  const Logger log("swarmcast", LogLevel::kInfo,
                   [&lines](std::string_view l) { lines.emplace_back(l); });
  log.Info("published x");
  log.Warning("banned peer 10.0.0.9");
  log.Error("disk full");
  log.Debug("not shown");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "swarmcast: published x");
  EXPECT_EQ(lines[1], "swarmcast: warning: banned peer 10.0.0.9");
  EXPECT_EQ(lines[2], "swarmcast: error: disk full");
  EXPECT_FALSE(log.Enabled(LogLevel::kDebug));
}

TEST(Logger, LevelsFilterAndADefaultLoggerIsSilent) {
  std::vector<std::string> lines;
  const Logger quiet("t", LogLevel::kWarning,
                     [&lines](std::string_view l) { lines.emplace_back(l); });
  quiet.Info("dropped");
  quiet.Warning("kept");
  EXPECT_EQ(lines, std::vector<std::string>{"t: warning: kept"});
  const Logger none;
  none.Error("nowhere");  // no sink: nothing happens
  EXPECT_FALSE(none.Enabled(LogLevel::kError));
}

TEST(Logger, TheObserverSeesEachShownMessageUnformattedBeforeTheSink) {
  std::vector<std::string> seen;
  std::vector<std::string> lines;
  const Logger log(
      "t", LogLevel::kWarning,
      [&](std::string_view l) {
        lines.emplace_back(l);
        EXPECT_EQ(seen.size(), lines.size()) << "observed first";
      },
      [&](LogLevel level, std::string_view m) {
        seen.push_back(std::string(LogLevelName(level)) + "|" + std::string(m));
      });
  log.Info("filtered out");
  log.Error("disk full");
  EXPECT_EQ(seen, std::vector<std::string>{"error|disk full"});
  EXPECT_EQ(lines, std::vector<std::string>{"t: error: disk full"});
}

TEST(LogLevel, ParsesItsNames) {
  EXPECT_EQ(*ParseLogLevel("debug"), LogLevel::kDebug);
  EXPECT_EQ(*ParseLogLevel("warning"), LogLevel::kWarning);
  EXPECT_FALSE(ParseLogLevel("loud"));
}

}  // namespace
}  // namespace swarmcast::proto
