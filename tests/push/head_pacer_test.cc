// HeadPacer: the pacing ceiling on a chain seed's push to its head
// (node/push/head_pacer.h), driven step by step with the clock and the
// socket's path as a test chooses them.
#include "node/push/head_pacer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace swarmcast::push {
namespace {

using std::chrono::milliseconds;
using Ceiling = HeadPacer::Ceiling;

constexpr double kLink = 12.5e6;  // bytes/s: a 100 Mbit/s head

// One head's socket: acknowledged bytes grow at the rate the test says,
// and what is in flight is what the test says.
struct Head {
  HeadPacer& pacer;
  SubscriberId id;
  HeadPacer::Clock::time_point now;
  TcpPathSample path{.bytes_acked = 0, .in_flight = 0, .min_rtt = std::chrono::microseconds(20)};

  std::optional<Ceiling> Start() { return pacer.Observe(now, id, path); }
  // One step at `rate` bytes/s with `in_flight` bytes unacknowledged.
  std::optional<Ceiling> Step(double rate, std::uint64_t in_flight = 0) {
    const auto step = milliseconds(5);
    now += step;
    path.bytes_acked += static_cast<std::uint64_t>(rate * 0.005);
    path.in_flight = in_flight;
    return pacer.Observe(now, id, path);
  }
};

TEST(HeadPacerTest, TheFirstHeadStartsAtTheInitialRate) {
  HeadPacer pacer;
  Head head{pacer, 1, HeadPacer::Clock::now()};
  EXPECT_EQ(head.Start(), (Ceiling{1, 8'000'000}));
  EXPECT_EQ(pacer.head(), 1u);
}

TEST(HeadPacerTest, TheFirstHeadsCeilingDoublesWhileItHoldsTheSocketBack) {
  HeadPacer pacer;
  Head head{pacer, 1, HeadPacer::Clock::now()};
  head.Start();
  // The socket delivers all the ceiling allows and nothing queues.
  EXPECT_EQ(head.Step(8e6), (Ceiling{1, 16'000'000}));
  EXPECT_EQ(head.Step(16e6), (Ceiling{1, 32'000'000}));
}

TEST(HeadPacerTest, TheFirstQueueBringsTheCeilingDownToAQuarterOverTheRate) {
  HeadPacer pacer;
  Head head{pacer, 1, HeadPacer::Clock::now()};
  head.Start();
  head.Step(8e6);
  head.Step(16e6);  // 32 MB/s now: over the link
  // The link delivers its 12.5 MB/s and the rest waits in a queue.
  const auto down = head.Step(kLink, 400 << 10);
  ASSERT_TRUE(down);
  // 1.25 x what the link took: the last three steps' rate (12.2 MB/s), or
  // at least 0.9 of the 16 MB/s that held the socket back a step before.
  EXPECT_EQ(down->bytes_per_second, 18'000'000u);
  EXPECT_LT(down->bytes_per_second, 32'000'000u);
}

TEST(HeadPacerTest, AfterTheFirstQueueNothingLowersTheCeiling) {
  HeadPacer pacer;
  Head head{pacer, 1, HeadPacer::Clock::now()};
  head.Start();
  head.Step(8e6);
  head.Step(16e6);
  ASSERT_TRUE(head.Step(kLink, 400 << 10));
  // Loss recovery: little delivered, much in flight.
  EXPECT_FALSE(head.Step(1e6, 400 << 10));
  EXPECT_FALSE(head.Step(kLink, 300 << 10));
}

TEST(HeadPacerTest, AStepWithLittleToSendChangesNothing) {
  HeadPacer pacer;
  Head head{pacer, 1, HeadPacer::Clock::now()};
  head.Start();
  // Under 0.9 of the ceiling, no queue: the seed had too little to send.
  EXPECT_FALSE(head.Step(4e6));
  EXPECT_FALSE(head.Step(0));
}

TEST(HeadPacerTest, ANewHeadStartsAtAQuarterOverTheBestRateAHeadTook) {
  HeadPacer pacer;
  Head first{pacer, 1, HeadPacer::Clock::now()};
  first.Start();
  first.Step(8e6);
  first.Step(16e6);
  first.Step(kLink, 400 << 10);
  for (int i = 0; i < 60; ++i) first.Step(kLink, 300 << 10);  // 0.3 s at the link's rate
  EXPECT_NEAR(pacer.best_rate(), kLink, 0.01 * kLink);
  Head second{pacer, 2, first.now};
  const auto ceiling = second.Start();
  ASSERT_TRUE(ceiling);
  EXPECT_EQ(ceiling->head, 2u);
  EXPECT_NEAR(static_cast<double>(ceiling->bytes_per_second), 1.25 * kLink, 0.02 * kLink);
}

TEST(HeadPacerTest, ANewHeadFasterThanTheBestRateGetsItInAFewSteps) {
  // The first head was a slow receiver (10 Mbit/s), the second is not.
  HeadPacer pacer;
  Head first{pacer, 1, HeadPacer::Clock::now()};
  first.Start();
  for (int i = 0; i < 60; ++i) first.Step(1.25e6, 200 << 10);
  Head second{pacer, 2, first.now};
  double ceiling = static_cast<double>(second.Start()->bytes_per_second);
  // Not 1.25 x 1.25 MB/s: a step's few segments at that rate cannot tell
  // whether the ceiling holds the socket back.
  EXPECT_EQ(ceiling, 8e6);
  int steps = 0;
  while (ceiling < kLink && steps < 20) {
    // All the ceiling allows, no queue: it holds the socket back.
    if (auto c = second.Step(ceiling)) ceiling = static_cast<double>(c->bytes_per_second);
    ++steps;
  }
  EXPECT_GE(ceiling, kLink);
  // Doubling after two steps in a row held back: 8 -> 16 MB/s in 10 ms.
  EXPECT_EQ(steps, 2);
}

TEST(HeadPacerTest, ANewHeadsCeilingRisesOnlyAfterTwoStepsInARowHeldBack) {
  HeadPacer pacer;
  Head first{pacer, 1, HeadPacer::Clock::now()};
  first.Start();
  for (int i = 0; i < 60; ++i) first.Step(kLink, 200 << 10);
  Head second{pacer, 2, first.now};
  const double ceiling = static_cast<double>(second.Start()->bytes_per_second);
  // One step at the ceiling (a switch's burst), then the link's rate.
  EXPECT_FALSE(second.Step(ceiling));
  EXPECT_FALSE(second.Step(kLink));
  EXPECT_FALSE(second.Step(ceiling));
  EXPECT_TRUE(second.Step(ceiling));
}

TEST(HeadPacerTest, NoHeadForgetsTheOneBefore) {
  HeadPacer pacer;
  Head head{pacer, 1, HeadPacer::Clock::now()};
  head.Start();
  EXPECT_FALSE(pacer.Observe(head.now, 0, TcpPathSample{}));
  EXPECT_EQ(pacer.head(), 0u);
  // The same link, head again: a new tenure, a ceiling set again.
  EXPECT_TRUE(head.Start());
}

}  // namespace
}  // namespace swarmcast::push
