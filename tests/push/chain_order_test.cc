// ChainOrder: which link of a chain is moved to the tail, and when.
#include "node/push/chain_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;
using Clock = ChainOrder::Clock;
using Ids = std::vector<SubscriberId>;

class ChainOrderTest : public ::testing::Test {
 protected:
  // Links 1..n, each linked to the one before it (the head takes from the
  // seed), windows of 250 ms from t0_. Link 1 joins holding `head_start`
  // pieces, the others none. The head probe is off unless asked for.
  void Start(int n, PieceIndex head_start = 0, bool probe_head = false) {
    chain_ = ChainOrder(ChainOrderOptions{.window = 250ms,
                                          .windows_to_move = 2,
                                          .min_predecessor_gain = 4,
                                          .min_lag = 16,
                                          .probe_head = probe_head});
    for (SubscriberId id = 1; id <= static_cast<SubscriberId>(n); ++id) {
      std::vector<bool> have(kPieces);
      if (id == 1) {
        std::fill_n(have.begin(), head_start, true);
        next_[id] = head_start;
      }
      chain_.Join(id, have);
      chain_.SetLinked(id, id != 1, t0_);
    }
    ASSERT_FALSE(chain_.Review(t0_));  // opens the first window
    now_ = t0_;
  }

  // One window in which link i gains gains[i - 1] pieces (by id, whatever
  // the order); what the review at its end decided.
  std::optional<ChainOrder::Move> Window(const std::vector<int>& gains) {
    for (std::size_t i = 0; i < gains.size(); ++i) {
      const auto id = static_cast<SubscriberId>(i + 1);
      for (int k = 0; k < gains[i]; ++k) chain_.OnHave(id, next_[id]++);
    }
    now_ += 250ms;
    return chain_.Review(now_);
  }

  static constexpr PieceIndex kPieces = 4096;
  ChainOrder chain_;
  std::map<SubscriberId, PieceIndex> next_;  // the next piece each verifies
  Clock::time_point t0_ = Clock::now();
  Clock::time_point now_;
};

TEST_F(ChainOrderTest, ALinkThatKeepsFallingBehindMovesToTheTail) {
  Start(4);
  // Link 2 runs at a tenth of link 1's rate; 3 and 4 keep up with it.
  EXPECT_FALSE(Window({40, 4, 4, 4})) << "one window is not yet a pattern";
  auto move = Window({40, 4, 4, 4});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->moved, 2u);
  EXPECT_EQ(move->ahead, 1u);
  EXPECT_EQ(move->behind, 2u);
  EXPECT_EQ(chain_.order(), (Ids{1, 3, 4, 2}));
}

TEST_F(ChainOrderTest, AWindowOfKeepingUpStartsTheCountAgain) {
  Start(3);
  EXPECT_FALSE(Window({40, 4, 4}));
  EXPECT_FALSE(Window({40, 40, 40}));
  EXPECT_FALSE(Window({40, 4, 4}));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3}));
}

TEST_F(ChainOrderTest, ALinkOnlyAFewPiecesBehindIsNotSlow) {
  Start(3);
  // Link 2 gains nothing for two windows, but is only 10 pieces behind.
  EXPECT_FALSE(Window({5, 0, 0}));
  EXPECT_FALSE(Window({5, 0, 0}));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3}));
}

TEST_F(ChainOrderTest, ALinkIdleBecauseTheOneBeforeHasNothingNewIsNotSlow) {
  // Link 2 is 100 pieces behind the head, which gains under 4 a window.
  Start(3, 100);
  for (int w = 0; w < 3; ++w) EXPECT_FALSE(Window({3, 0, 0}));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3}));
}

TEST_F(ChainOrderTest, TheTailFallingBehindMovesNothing) {
  Start(3);
  for (int w = 0; w < 4; ++w) EXPECT_FALSE(Window({40, 40, 4}));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3}));
}

TEST_F(ChainOrderTest, AChainAllAtItsHeadsRateMovesNothing) {
  Start(3);
  // Everyone at the head's slow rate: nothing falls behind anything.
  for (int w = 0; w < 4; ++w) EXPECT_FALSE(Window({4, 4, 4}));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3}));
}

TEST_F(ChainOrderTest, ALinkJustRelinkedIsNotJudgedInItsFirstWindow) {
  Start(4);
  Window({40, 4, 4, 4});
  ASSERT_TRUE(Window({40, 4, 4, 4}));  // 2 moves to the tail: 1 3 4 2
  // The sender links 3 to 1, and 2 to 4, as the review ends.
  chain_.SetLinked(3, true, now_ + 1ms);
  chain_.SetLinked(2, true, now_ + 1ms);
  // 3 gains nothing for two windows (gains are by id: 1, 2, 3, 4), then
  // keeps up. Its first window, which it began still connecting, does not
  // count: one falling window, no move.
  EXPECT_FALSE(Window({40, 4, 0, 0}));
  EXPECT_FALSE(Window({40, 4, 0, 0}));
  EXPECT_FALSE(Window({40, 4, 40, 40}));
  EXPECT_EQ(chain_.order(), (Ids{1, 3, 4, 2}));
}

TEST_F(ChainOrderTest, ASecondLinkFallingBehindTheSameOneMovesThatOne) {
  Start(4);
  // Link 2 receives at full rate but forwards slowly: 3 falls behind it.
  Window({40, 40, 4, 4});
  auto first = Window({40, 40, 4, 4});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->moved, 3u);
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 4, 3}));
  chain_.SetLinked(4, true, now_);
  chain_.SetLinked(3, true, now_);
  // Then 4, linked to 2, falls behind it too: 2's uplink is the slow part.
  Window({40, 40, 4, 4});
  auto second = Window({40, 40, 4, 4});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->moved, 2u);
  EXPECT_EQ(second->ahead, 2u);
  EXPECT_EQ(second->behind, 4u);
  EXPECT_EQ(chain_.order(), (Ids{1, 4, 3, 2}));
}

TEST_F(ChainOrderTest, ARepeatedHaveIsNotProgress) {
  Start(3);
  // Link 2 repeats one HAVE 40 times a window, and so gains nothing; a
  // HAVE past the last piece does not count either.
  for (int w = 0; w < 2; ++w) {
    for (int k = 0; k < 40; ++k) chain_.OnHave(1, next_[1]++);
    for (int k = 0; k < 40; ++k) chain_.OnHave(2, 7);
    chain_.OnHave(2, kPieces);
    now_ += 250ms;
    auto move = chain_.Review(now_);
    EXPECT_EQ(move.has_value(), w == 1);
  }
  EXPECT_EQ(chain_.order(), (Ids{1, 3, 2}));
}

TEST_F(ChainOrderTest, TheFirstHeadMakesWayOnceTheChainRuns) {
  Start(3, 0, /*probe_head=*/true);
  auto probe = Window({40, 40, 40});
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->moved, 1u);
  EXPECT_EQ(probe->reason, ChainOrder::Reason::kHeadProbe);
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 1}));
  chain_.SetLinked(2, false, now_);
  chain_.SetLinked(1, true, now_);
  // Once only: the new head at the same rate stays; 1, ahead of all,
  // gains nothing for a while at the tail.
  for (int w = 0; w < 4; ++w) EXPECT_FALSE(Window({0, 40, 40}));
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 1}));
}

TEST_F(ChainOrderTest, TheProbeMovesASlowFirstHeadOutOfTheWay) {
  Start(4, 0, /*probe_head=*/true);
  // Everyone at the slow head's rate, until it makes way.
  ASSERT_TRUE(Window({4, 4, 4, 4}));
  chain_.SetLinked(2, false, now_);
  chain_.SetLinked(1, true, now_);
  // The new head runs at full rate; the slow one, at the tail, at its own.
  for (int w = 0; w < 4; ++w) EXPECT_FALSE(Window({4, 40, 40, 40}));
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 4, 1}));
}

TEST_F(ChainOrderTest, AHeadGainingUnderHalfTheBestMovesToTheTail) {
  Start(4, 0, /*probe_head=*/true);
  ASSERT_TRUE(Window({40, 40, 40, 40}));  // the probe: 2 heads
  chain_.SetLinked(2, false, now_);
  chain_.SetLinked(1, true, now_);
  // 2 is slow to receive: 3 and 4 keep up with it, 1 is ahead of them.
  EXPECT_FALSE(Window({0, 4, 4, 4}));
  auto move = Window({0, 4, 4, 4});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->moved, 2u);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kSlowHead);
  EXPECT_EQ(chain_.order(), (Ids{3, 4, 1, 2}));
}

TEST_F(ChainOrderTest, AHeadWithEveryPieceIsNotSlow) {
  Start(3, kPieces);
  EXPECT_FALSE(Window({0, 40, 40}));
  for (int w = 0; w < 3; ++w) EXPECT_FALSE(Window({0, 4, 4}));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3}));
}

TEST_F(ChainOrderTest, ALinkThatLeftIsForgotten) {
  Start(3);
  chain_.Leave(2);
  EXPECT_EQ(chain_.order(), (Ids{1, 3}));
  EXPECT_FALSE(chain_.Contains(2));
  chain_.OnHave(2, 0);  // a late HAVE from it changes nothing
  chain_.Join(5, std::vector<bool>(kPieces));
  EXPECT_EQ(chain_.order(), (Ids{1, 3, 5}));
}

TEST_F(ChainOrderTest, NoReviewBeforeTheWindowEnds) {
  Start(3);
  for (PieceIndex p = 0; p < 40; ++p) chain_.OnHave(1, p);
  EXPECT_FALSE(chain_.Review(now_ + 100ms));
  EXPECT_FALSE(chain_.Review(now_ + 200ms));
  EXPECT_EQ(chain_.next_review(), now_ + 250ms);
}

}  // namespace
}  // namespace swarmcast::push
