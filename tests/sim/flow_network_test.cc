#include "tools/sim/flow_network.h"

#include <gtest/gtest.h>

namespace swarmcast::sim {
namespace {

FlowPath Path(std::initializer_list<LinkId> links) { return FlowPath::Of(links); }

TEST(FlowNetworkTest, OneFlowTakesBytesOverRate) {
  FlowNetwork net({10.0}, 0);
  const FlowId id = net.Start(Path({0}), 100, {}, 0);
  net.Resolve(0);
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 10);
  EXPECT_FALSE(net.PopCompleted(9.9).has_value());
  auto done = net.PopCompleted(10);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->id, id);
  EXPECT_EQ(net.active(), 0u);
  EXPECT_FALSE(net.Alive(id));
}

TEST(FlowNetworkTest, AFinishedFlowHandsItsShareOn) {
  // 5 bytes/s each until the 50-byte flow ends at 10 s; the other has 100
  // bytes left and gets all 10 bytes/s: done at 20 s.
  FlowNetwork net({10.0}, 0);
  net.Start(Path({0}), 50, {FlowKind::kPush, 0, 1, 7}, 0);
  net.Start(Path({0}), 150, {FlowKind::kPush, 0, 2, 8}, 0);
  net.Resolve(0);
  auto first = net.PopCompleted(net.NextCompletion());
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->tag.piece, 7u);
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 30);  // still at 5 bytes/s: not resolved yet
  net.Resolve(10);
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 20);
}

TEST(FlowNetworkTest, CancelReportsTheBytesMoved) {
  FlowNetwork net({4.0}, 0);
  const FlowId id = net.Start(Path({0}), 100, {}, 0);
  net.Resolve(0);
  EXPECT_DOUBLE_EQ(net.Cancel(id, 5), 20);
  EXPECT_EQ(net.active(), 0u);
  EXPECT_EQ(net.Cancel(id, 6), 0);  // gone: nothing
  EXPECT_EQ(net.NextCompletion(), kNever);
}

TEST(FlowNetworkTest, AnIdIsNeverReused) {
  FlowNetwork net({1.0}, 0);
  const FlowId a = net.Start(Path({0}), 1, {}, 0);
  net.Cancel(a, 0);
  const FlowId b = net.Start(Path({0}), 1, {}, 0);
  EXPECT_NE(a, b);
  EXPECT_FALSE(net.Alive(a));
  EXPECT_TRUE(net.Alive(b));
}

TEST(FlowNetworkTest, AggregatedModeStartsAtTheSpareCapacity) {
  // Links 0 (10) and 1 (10). A flow on both is solved at 10; one that joins
  // on link 0 before the next solve gets what is spare there (nothing), and
  // the solve one interval later shares link 0 evenly.
  FlowNetwork net({10.0, 10.0}, 0.5);
  const FlowId a = net.Start(Path({0, 1}), 1000, {}, 0);
  EXPECT_DOUBLE_EQ(net.rate(a), 10);  // the links were empty
  const FlowId b = net.Start(Path({0}), 1000, {}, 0.1);
  EXPECT_DOUBLE_EQ(net.rate(b), 0);
  EXPECT_TRUE(net.dirty());
  EXPECT_DOUBLE_EQ(net.NextSolveTime(), 0.5);  // one interval after the last (at 0)
  net.Resolve(0.5);
  EXPECT_DOUBLE_EQ(net.rate(a), 5);
  EXPECT_DOUBLE_EQ(net.rate(b), 5);
  // A flow ending frees its rate for a replacement at once.
  net.Cancel(a, 1.0);
  const FlowId c = net.Start(Path({0, 1}), 1000, {}, 1.0);
  EXPECT_DOUBLE_EQ(net.rate(c), 5);
}

}  // namespace
}  // namespace swarmcast::sim
