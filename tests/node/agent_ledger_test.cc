// The agent's ledger and its eviction plan (node/agent/agent_ledger.h).
#include "node/agent/agent_ledger.h"

#include <gtest/gtest.h>

#include <fstream>

namespace swarmcast::node {
namespace {

LedgerEntry Entry(std::int64_t size, std::int64_t used, bool assigned,
                  const std::string& state = "done") {
  LedgerEntry e;
  e.name = "n";
  e.size = size;
  e.last_used = used;
  e.assigned = assigned;
  e.state = state;
  e.bytes = state == "done" ? size : 0;
  return e;
}

const std::string kA(40, 'a'), kB(40, 'b'), kC(40, 'c'), kNew(40, 'd');

TEST(AgentLedgerTest, EvictsUnassignedLeastRecentlyUsedFirst) {
  Ledger l = {{kA, Entry(100, 30, false)}, {kB, Entry(100, 10, false)}, {kC, Entry(100, 20, true)}};
  auto plan = PlanEviction(l, kNew, 150, 400);
  ASSERT_TRUE(plan);
  EXPECT_EQ(*plan, std::vector<std::string>{kB});
  plan = PlanEviction(l, kNew, 250, 400);
  ASSERT_TRUE(plan);
  EXPECT_EQ(*plan, (std::vector<std::string>{kB, kA}));
  // Assigned content is never evicted: 100 held, 350 more do not fit.
  EXPECT_FALSE(PlanEviction(l, kNew, 350, 400));
  // No quota, nothing to evict.
  EXPECT_TRUE(PlanEviction(l, kNew, 1 << 30, 0)->empty());
  // Room already: nothing goes.
  EXPECT_TRUE(PlanEviction(l, kNew, 50, 400)->empty());
}

TEST(AgentLedgerTest, SavesAndLoadsAndDropsEntriesThatDoNotCheck) {
  const auto file =
      std::filesystem::temp_directory_path() / ("ledger-" + std::to_string(::getpid()) + ".json");
  Ledger l = {{kA, Entry(100, 30, false)}};
  l[kA].pieces_at_start = 7;
  ASSERT_FALSE(SaveLedger(file, l));
  std::size_t dropped = 9;
  auto back = LoadLedger(file, &dropped);
  ASSERT_TRUE(back);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(back->at(kA).pieces_at_start, 7);
  EXPECT_EQ(back->at(kA).state, "done");
  {
    std::ofstream f(file);
    f << R"({"entries":{"nothex":{"name":"n","size":1,"state":"done"},)"
      << "\"" << kB << R"(":{"name":"../x","size":1,"state":"done"},)"
      << "\"" << kC << R"(":{"name":"ok","size":-5,"state":"done"},)"
      << "\"" << kNew << R"(":{"name":"ok","size":5,"state":"done","file_name":"../../etc"}}})";
  }
  back = LoadLedger(file, &dropped);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->empty());
  EXPECT_EQ(dropped, 4u);
  {
    std::ofstream f(file);
    f << "[]";
  }
  EXPECT_FALSE(LoadLedger(file, &dropped));
  std::filesystem::remove(file);
  EXPECT_TRUE(LoadLedger(file, &dropped)->empty());
}

}  // namespace
}  // namespace swarmcast::node
