// Backpressure on the real push channel: a receiver whose disk does not
// keep up (its consumer holds every piece's room, as a disk that does not
// write would) stops at its budget and stops reading; the seed's fan-out
// skips it, so the other receivers finish as they would alone; once its
// disk catches up, it finishes too, never having held more than its budget.
#include <gtest/gtest.h>

#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kPiece = 256 << 10;
constexpr std::uint32_t kPieces = 160;  // 40 MiB: far more than socket buffers hold
constexpr std::uint64_t kBudget = 2 << 20;

class PushBackpressureTest : public PushChannelTest {
 protected:
  void SetUp() override {
    PushChannelTest::SetUp();
    MakeFile(std::uint64_t{kPieces} * kPiece, kPiece);
  }

  // Seconds until both fast receivers hold every piece, with `slow` (if
  // set) subscribed first and holding its room.
  double TimeTwoFastReceivers(PushSender& sender) {
    const auto start = Clock::now();
    Sink fast[2];
    std::vector<std::unique_ptr<PushReceiver>> receivers;
    for (int i = 0; i < 2; ++i) {
      receivers.push_back(
          Receive(sender.port(), fast[i], {}, {}, "127.0.0." + std::to_string(3 + i)));
    }
    for (auto& sink : fast) {
      EXPECT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= kPieces; }, 60s))
          << sink.pieces.size() << " pieces; ended: " << sink.end_reason;
      std::lock_guard lock(sink.mu);
      EXPECT_FALSE(sink.corrupt);
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
};

TEST_F(PushBackpressureTest, SlowDiskBoundsItsReceiverAndSlowsNobodyElse) {
  // No stall timeout in the way: the slow receiver stays subscribed.
  const auto alone_sender = StartSender(FanoutKind::kSplice, 120s);
  ASSERT_TRUE(alone_sender);
  const double alone = TimeTwoFastReceivers(*alone_sender);

  const auto sender = StartSender(FanoutKind::kSplice, 120s);
  ASSERT_TRUE(sender);
  Sink slow;
  slow.hold = true;
  PushReceiverOptions o;
  o.budget = kBudget;
  auto slow_receiver = Receive(sender->port(), slow, {}, {}, "127.0.0.5", o);
  ASSERT_TRUE(slow_receiver);
  // It fills its budget (eight pieces of 256 KiB) and stops there.
  ASSERT_TRUE(slow.WaitFor([&] { return slow.pieces.size() >= kBudget / kPiece; }, 60s));
  const double beside_slow = TimeTwoFastReceivers(*sender);
  std::printf("two receivers alone: %.3f s; beside a stuck one: %.3f s (%.2fx)\n", alone,
              beside_slow, beside_slow / alone);
  {
    std::lock_guard lock(slow.mu);
    EXPECT_FALSE(slow.ended) << slow.end_reason;
    EXPECT_EQ(slow.pieces.size(), kBudget / kPiece) << "read past its budget";
  }
  PushReceiverStats st = slow_receiver->stats();
  EXPECT_EQ(st.budget, kBudget);
  EXPECT_LE(st.peak_held_bytes, kBudget);
  // They did not wait for it: about the time alone (a generous bound, for
  // a loaded machine; the strict check is that they finished at all while
  // it was stuck).
  EXPECT_LT(beside_slow, 4 * alone + 2.0);

  // Its disk catches up: it finishes, within its budget all along.
  slow.Unhold();
  ASSERT_TRUE(slow.WaitFor([&] { return slow.pieces.size() >= kPieces; }, 60s))
      << slow.pieces.size() << " pieces; ended: " << slow.end_reason;
  st = slow_receiver->stats();
  EXPECT_LE(st.peak_held_bytes, kBudget);
  std::lock_guard lock(slow.mu);
  EXPECT_FALSE(slow.corrupt);
  EXPECT_EQ(slow.pieces.size(), kPieces);
}

TEST_F(PushBackpressureTest, ReceiveRateLimitHoldsAndCountsOtherBytes) {
  const auto sender = StartSender(FanoutKind::kSplice);
  ASSERT_TRUE(sender);
  Sink sink;
  PushReceiverOptions o;
  o.max_rate = 16 << 20;
  const auto start = Clock::now();
  auto r = Receive(sender->port(), sink, {}, {}, "127.0.0.5", o);
  ASSERT_TRUE(r);
  // Bytes from elsewhere (the wire) count too: 8 MiB of them cost half a
  // second of the budget.
  r->ChargeRate(8 << 20);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= kPieces; }, 60s)) << sink.end_reason;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // (40 + 8) MiB at 16 MiB/s: 3 s, less the 100 ms burst.
  EXPECT_GE(seconds, 2.8) << seconds;
}

}  // namespace
}  // namespace swarmcast::push
