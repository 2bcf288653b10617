#include "tools/sim/max_min.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace swarmcast::sim {
namespace {

FlowPath Path(std::initializer_list<LinkId> links) { return FlowPath::Of(links); }

TEST(MaxMinTest, OneLinkSplitsEvenly) {
  const std::vector<double> cap = {9};
  const std::vector<FlowPath> flows = {Path({0}), Path({0}), Path({0})};
  EXPECT_EQ(SolveMaxMin(cap, flows), (std::vector<double>{3, 3, 3}));
}

TEST(MaxMinTest, ATightLinkLeavesTheRestToOthers) {
  // Link 0 (10) carries flows 0 and 1, link 1 (4) carries flows 1 and 2.
  // Link 1 is tighter (2 each); flow 0 takes what link 0 has left.
  const std::vector<double> cap = {10, 4};
  const std::vector<FlowPath> flows = {Path({0}), Path({0, 1}), Path({1})};
  const auto r = SolveMaxMin(cap, flows);
  EXPECT_DOUBLE_EQ(r[0], 8);
  EXPECT_DOUBLE_EQ(r[1], 2);
  EXPECT_DOUBLE_EQ(r[2], 2);
}

TEST(MaxMinTest, BertsekasGallagerExample) {
  // Data Networks, 6.5.2: links of capacity 1 and 2; flow 0 crosses both,
  // flow 1 the first, flow 2 the second: 1/2, 1/2, 3/2.
  const std::vector<double> cap = {1, 2};
  const std::vector<FlowPath> flows = {Path({0, 1}), Path({0}), Path({1})};
  const auto r = SolveMaxMin(cap, flows);
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 1.5);
}

TEST(MaxMinTest, SenderAndReceiverLinks) {
  // The simulator's case: a seed uplink of 10 feeding two receivers whose
  // downlinks are 10 and 1; the slow one takes 1, the other 9.
  const std::vector<double> cap = {10, 10, 1};
  const std::vector<FlowPath> flows = {Path({0, 1}), Path({0, 2})};
  const auto r = SolveMaxMin(cap, flows);
  EXPECT_DOUBLE_EQ(r[0], 9);
  EXPECT_DOUBLE_EQ(r[1], 1);
}

TEST(MaxMinTest, ZeroCapacityStopsItsFlowsOnly) {
  const std::vector<double> cap = {0, 6};
  const std::vector<FlowPath> flows = {Path({0, 1}), Path({1})};
  const auto r = SolveMaxMin(cap, flows);
  EXPECT_EQ(r[0], 0);
  EXPECT_DOUBLE_EQ(r[1], 6);
}

TEST(MaxMinTest, NoFlows) { EXPECT_TRUE(SolveMaxMin(std::vector<double>{1}, {}).empty()); }

// The definition, checked on random instances: the allocation is feasible,
// and every flow crosses a full link on which no flow gets more than it
// (its bottleneck). Such an allocation is the max-min fair one.
TEST(MaxMinTest, RandomInstancesAreFeasibleAndEveryFlowHasABottleneck) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int links = 2 + static_cast<int>(rng() % 8);
    std::vector<double> cap(links);
    for (double& c : cap) c = 1 + static_cast<double>(rng() % 100);
    std::vector<FlowPath> flows(1 + rng() % 20);
    for (FlowPath& f : flows) {
      const int n = 1 + static_cast<int>(rng() % kMaxPathLinks);
      while (f.count < n) {
        const auto l = static_cast<LinkId>(rng() % links);
        bool dup = false;
        for (int k = 0; k < f.count; ++k) dup |= f.links[k] == l;
        if (!dup) f.links[f.count++] = l;
        if (f.count == links) break;
      }
    }
    const auto r = SolveMaxMin(cap, flows);
    std::vector<double> load(links, 0);
    for (std::size_t i = 0; i < flows.size(); ++i) {
      for (int k = 0; k < flows[i].count; ++k) load[flows[i].links[k]] += r[i];
    }
    for (int l = 0; l < links; ++l) ASSERT_LE(load[l], cap[l] * (1 + 1e-9)) << "round " << round;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      bool has_bottleneck = false;
      for (int k = 0; k < flows[i].count && !has_bottleneck; ++k) {
        const LinkId l = flows[i].links[k];
        if (load[l] < cap[l] * (1 - 1e-9)) continue;
        bool biggest = true;
        for (std::size_t j = 0; j < flows.size(); ++j) {
          for (int m = 0; m < flows[j].count; ++m) {
            if (flows[j].links[m] == l && r[j] > r[i] * (1 + 1e-9)) biggest = false;
          }
        }
        has_bottleneck = biggest;
      }
      ASSERT_TRUE(has_bottleneck) << "round " << round << " flow " << i;
    }
  }
}

}  // namespace
}  // namespace swarmcast::sim
