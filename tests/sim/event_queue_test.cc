#include "tools/sim/event_queue.h"

#include <gtest/gtest.h>

namespace swarmcast::sim {
namespace {

TEST(EventQueueTest, EarliestFirst) {
  EventQueue q;
  q.Schedule({3.0, EventKind::kNodeJoins, 3});
  q.Schedule({1.0, EventKind::kNodeJoins, 1});
  q.Schedule({2.0, EventKind::kNodeJoins, 2});
  EXPECT_EQ(q.next_time(), 1.0);
  EXPECT_EQ(q.Pop().node, 1u);
  EXPECT_EQ(q.Pop().node, 2u);
  EXPECT_EQ(q.Pop().node, 3u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_time(), kNever);
}

TEST(EventQueueTest, SameTimeInTheOrderScheduled) {
  EventQueue q;
  for (std::uint32_t i = 0; i < 100; ++i) {
    q.Schedule({i % 2 ? 5.0 : 4.0, EventKind::kPieceVerified, i});
  }
  for (std::uint32_t i = 0; i < 100; i += 2) EXPECT_EQ(q.Pop().node, i);
  for (std::uint32_t i = 1; i < 100; i += 2) EXPECT_EQ(q.Pop().node, i);
}

TEST(EventQueueTest, EventsScheduledWhileRunningKeepTheOrder) {
  EventQueue q;
  q.Schedule({1.0, EventKind::kNodeJoins, 1});
  q.Schedule({2.0, EventKind::kNodeJoins, 2});
  const Event first = q.Pop();
  q.Schedule({first.time, EventKind::kPieceVerified, 10});  // same instant, later
  q.Schedule({1.5, EventKind::kPieceVerified, 15});
  EXPECT_EQ(q.Pop().node, 10u);
  EXPECT_EQ(q.Pop().node, 15u);
  EXPECT_EQ(q.Pop().node, 2u);
}

}  // namespace
}  // namespace swarmcast::sim
