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
  // seed), windows of 250 ms from t0_, heads judged after 2 windows as
  // head. Link 1 joins holding `head_start` pieces, the others none. The
  // head probe is off unless asked for.
  void Start(int n, PieceIndex head_start = 0, bool probe_head = false,
             std::size_t max_leaves = 8) {
    next_.clear();
    chain_ = ChainOrder(ChainOrderOptions{.window = 250ms,
                                          .windows_to_move = 2,
                                          .min_sample = 16,
                                          .min_lag = 16,
                                          .head_windows = 2,
                                          .slow_share = 2,
                                          .max_leaves = max_leaves,
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

  // One window in which each link gains what its rate and its source
  // allow: the head its rate (the seed holds every piece), a line link at
  // most what the one before it holds by the window's end, a leaf at most
  // what the line's last link holds (pieces go in order, so a link's
  // count is its next piece).
  std::optional<ChainOrder::Move> Flow(const std::map<SubscriberId, int>& rates) {
    std::vector<int> gains(rates.size());
    auto source = static_cast<PieceIndex>(kPieces);
    for (const auto& p : chain_.places()) {
      const PieceIndex held = next_[p.id];
      const int gain = std::min<int>(rates.at(p.id), source > held ? source - held : 0);
      gains[p.id - 1] = gain;
      if (!p.leaf) source = held + gain;
    }
    return Window(gains);
  }

  // What the sender does after a move: every link but the head takes from
  // the one before it (a leaf from the line's last link).
  void LinkAll() {
    const auto places = chain_.places();
    for (std::size_t i = 0; i < places.size(); ++i) {
      const bool linked = i > 0;
      if (chain_.Linked(places[i].id) != linked) chain_.SetLinked(places[i].id, linked, now_);
    }
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

TEST_F(ChainOrderTest, ALinkCatchingUpOnOneFarAheadIsNotFallingBehind) {
  // Link 2 is 100 pieces behind the head, and gains at least as much.
  Start(3, 100);
  for (int w = 0; w < 3; ++w) EXPECT_FALSE(Window({0, 40, 40}));
  for (int w = 0; w < 3; ++w) EXPECT_FALSE(Window({4, 4, 4}));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3}));
}

TEST_F(ChainOrderTest, AtAFewPiecesAWindowOnlyASampleMakesARate) {
  // Links on slow wires gain a piece or two a window: link 2 half a
  // window behind the head, window after window, is not slow.
  Start(4, 16);
  for (int w = 0; w < 8; ++w) EXPECT_FALSE(Window({2, 1, 1, 1}));
  // Link 3 gains nothing while link 2 gains 2 a window: slow once link 2
  // gained 16 in the streak.
  for (int w = 0; w < 7; ++w) EXPECT_FALSE(Window({2, 2, 0, 0})) << "window " << w;
  auto move = Window({2, 2, 0, 0});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->moved, 3u);
}

TEST_F(ChainOrderTest, TheLastLinkFallingBehindBecomesALeaf) {
  Start(3);
  Window({40, 40, 4});
  ASSERT_TRUE(Window({40, 40, 4}));
  // Same place, but newcomers now join the line before it.
  using P = ChainOrder::Place;
  EXPECT_EQ(chain_.places(), (std::vector<P>{{1, false}, {2, false}, {3, true}}));
}

TEST_F(ChainOrderTest, ANewcomerJoinsTheLineNotTheLeaves) {
  Start(4);
  Window({40, 4, 4, 4});
  ASSERT_TRUE(Window({40, 4, 4, 4}));  // 2 becomes a leaf
  chain_.Join(5, std::vector<bool>(kPieces));
  using P = ChainOrder::Place;
  EXPECT_EQ(chain_.places(),
            (std::vector<P>{{1, false}, {3, false}, {4, false}, {5, false}, {2, true}}));
}

TEST_F(ChainOrderTest, ALineLeftWithOnlyLeavesTakesTheLeafFurthestAlong) {
  Start(4);
  // 2 becomes a leaf (slow), then 4 (slow as well, but further along).
  Window({40, 4, 40, 40});
  ASSERT_TRUE(Window({40, 4, 40, 40}));
  chain_.SetLinked(2, true, now_);  // the sender links the leaf to 4
  Window({40, 4, 40, 10});
  ASSERT_TRUE(Window({40, 4, 40, 10}));
  using P = ChainOrder::Place;
  ASSERT_EQ(chain_.places(), (std::vector<P>{{1, false}, {3, false}, {2, true}, {4, true}}));
  // The line's links finish and leave: the leaf with the most pieces is
  // the new line, the slow one hangs off it.
  chain_.Leave(1);
  chain_.Leave(3);
  EXPECT_EQ(chain_.places(), (std::vector<P>{{4, false}, {2, true}}));
}

TEST_F(ChainOrderTest, AChainAllAtItsHeadsRateMovesNothing) {
  Start(3);
  // Everyone at the head's slow rate: nothing falls behind anything.
  for (int w = 0; w < 4; ++w) EXPECT_FALSE(Window({4, 4, 4}));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3}));
}

TEST_F(ChainOrderTest, WhatTheOneBeforeGainedBeforeALinkWasLinkedDoesNotCount) {
  Start(4);
  Window({40, 4, 4, 4});
  ASSERT_TRUE(Window({40, 4, 4, 4}));  // 2 moves to the tail: 1 3 4 2
  // 1 gains 40 while 3 is still connecting to it; then 3 is linked, and
  // from then on 1 gains 2, 3 gains 1.
  for (int k = 0; k < 40; ++k) chain_.OnHave(1, next_[1]++);
  chain_.SetLinked(3, true, now_ + 100ms);
  // 2 gives up: a link falling behind 1 while a leaf that fell behind 1 is
  // there waits for that leaf's verdict (a slow uplink?) instead.
  chain_.Leave(2);
  EXPECT_FALSE(Window({2, 0, 1, 1}));
  // The streak holds 2 + 12 of 1's pieces, under the sample of 16: the 40
  // before the link do not count, or 3 would be a leaf now.
  EXPECT_FALSE(Window({12, 0, 2, 2}));
  EXPECT_EQ(chain_.order(), (Ids{1, 3, 4}));
  auto move = Window({12, 0, 0, 0});
  ASSERT_TRUE(move) << "26 of 1's pieces, 3 of its own: slow";
  EXPECT_EQ(move->moved, 3u);
}

TEST_F(ChainOrderTest, ALinkBecomesALeafAsSoonAsTheEvidenceIsInNotAtTheWindowsEnd) {
  Start(3);
  EXPECT_FALSE(Window({40, 4, 4}));
  EXPECT_FALSE(chain_.Review(now_ + 10ms)) << "nothing yet in the second window";
  // Half-way through the second window of the streak, 1 has gained 20
  // more, 2 has gained 2: the window under way counts.
  for (int k = 0; k < 20; ++k) chain_.OnHave(1, next_[1]++);
  for (int k = 0; k < 2; ++k) chain_.OnHave(2, next_[2]++);
  auto move = chain_.Review(now_ + 120ms);
  EXPECT_LT(now_ + 120ms, chain_.next_review());
  ASSERT_TRUE(move);
  EXPECT_EQ(move->moved, 2u);
  EXPECT_EQ(chain_.order(), (Ids{1, 3, 2}));
}

TEST_F(ChainOrderTest, ALeafThatKeepsUpWithTheLineRejoinsItAndFreesTheLeafsPlace) {
  Start(4, 0, /*probe_head=*/false, /*max_leaves=*/1);
  // 2 stalls for two windows (a busy machine), and so do 3 and 4 behind it.
  Window({40, 0, 0, 0});
  ASSERT_TRUE(Window({40, 0, 0, 0}));  // 2 a leaf: 1 3 4 2
  chain_.SetLinked(3, true, now_);
  chain_.SetLinked(2, true, now_);
  // Fed by 4, 2 gains what 4 gains: it was not slow.
  auto move = Window({40, 40, 40, 40});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->moved, 2u);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kRejoined);
  using P = ChainOrder::Place;
  EXPECT_EQ(chain_.places(), (std::vector<P>{{1, false}, {3, false}, {4, false}, {2, false}}));
  EXPECT_TRUE(chain_.Linked(2)) << "it takes from 4 as before";
  // The one leaf's place is free for a link that is slow: 4.
  Window({40, 40, 40, 4});
  move = Window({40, 40, 40, 4});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->moved, 4u);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kFellBehind);
}

TEST_F(ChainOrderTest, ASlowLeafNeverRejoins) {
  Start(3, 0, /*probe_head=*/false, /*max_leaves=*/1);
  Window({40, 40, 4});
  ASSERT_TRUE(Window({40, 40, 4}));  // 3 a leaf, fed by 2
  for (int w = 0; w < 10; ++w) EXPECT_FALSE(Window({40, 40, 4})) << "window " << w;
  // Nor when the line stops: no evidence either way.
  for (int w = 0; w < 3; ++w) EXPECT_FALSE(Window({0, 0, 4}));
  using P = ChainOrder::Place;
  EXPECT_EQ(chain_.places(), (std::vector<P>{{1, false}, {2, false}, {3, true}}));
}

// The head forwards slowly (its ACKs wait behind a fast seed's pieces):
// whoever is second falls behind it.
TEST_F(ChainOrderTest, ASecondLinkFallingBehindTheOneAStalledLeafFellBehindMovesThatOne) {
  Start(4, 0, /*probe_head=*/false, /*max_leaves=*/1);
  Window({40, 4, 4, 4});
  auto move = Window({40, 4, 4, 4});
  ASSERT_TRUE(move);  // 2 a leaf: 1 3 4 2
  EXPECT_EQ(move->moved, 2u);
  chain_.SetLinked(3, true, now_);
  chain_.SetLinked(2, true, now_);
  // 2, fed by 4, keeps up with it (4 is held back by 1's uplink, so that
  // proves nothing alone). 3, now behind 1, gains a tenth of what 1
  // gains, as 2 did.
  EXPECT_FALSE(Window({40, 4, 4, 4}));
  move = Window({40, 4, 4, 4});
  ASSERT_TRUE(move) << "3 fell behind 1 for two windows";
  EXPECT_EQ(move->reason, ChainOrder::Reason::kSlowUplink);
  EXPECT_EQ(move->moved, 1u);
  EXPECT_EQ(move->behind, 3u);
  // 2 rejoins the line in front of 1.
  using P = ChainOrder::Place;
  EXPECT_EQ(chain_.places(), (std::vector<P>{{3, false}, {4, false}, {2, false}, {1, false}}));
  EXPECT_FALSE(chain_.Linked(3)) << "the new head takes from the seed";
  EXPECT_FALSE(chain_.Linked(1)) << "until it is linked to 2";
  EXPECT_EQ(chain_.previous_head(), 1u) << "3 takes what it lacks from 1";
}

TEST_F(ChainOrderTest, AStallLongPastIsNoEvidenceAgainstTheOneBefore) {
  Start(4, 0, /*probe_head=*/false, /*max_leaves=*/1);
  Window({40, 0, 0, 0});
  ASSERT_TRUE(Window({40, 0, 0, 0}));  // 2 stalled: a leaf, 1 3 4 2
  chain_.SetLinked(3, true, now_);
  chain_.SetLinked(2, true, now_);
  ASSERT_TRUE(Window({40, 40, 40, 40}));  // 2 rejoins: 1 3 4 2
  for (int w = 0; w < 4; ++w) EXPECT_FALSE(Window({40, 40, 40, 40}));
  // Long after, 3 is slow: it is the one that becomes a leaf.
  Window({40, 40, 4, 4});
  auto move = Window({40, 40, 4, 4});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kFellBehind);
  EXPECT_EQ(move->moved, 3u);
}

TEST_F(ChainOrderTest, ALinkFallingBehindASlowUplinkNeedsNoLeafsPlace) {
  Start(5, 0, /*probe_head=*/false, /*max_leaves=*/1);
  // 3 forwards slowly: 4 falls behind it, becomes a leaf, and keeps up
  // with 5 as one; then 5 falls behind 3.
  Window({40, 40, 40, 4, 4});
  ASSERT_TRUE(Window({40, 40, 40, 4, 4}));  // 1 2 3 5 4
  chain_.SetLinked(5, true, now_);
  chain_.SetLinked(4, true, now_);
  EXPECT_FALSE(Window({40, 40, 40, 4, 4}));
  auto move = Window({40, 40, 40, 4, 4});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kSlowUplink);
  EXPECT_EQ(move->moved, 3u);
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 5, 4, 3}));
  EXPECT_TRUE(chain_.Linked(2));
  EXPECT_FALSE(chain_.Linked(3));
}

TEST_F(ChainOrderTest, NoMoreLeavesThanMaxLeaves) {
  // Eight links, each behind slower than the one before; the sender links
  // every leaf.
  Start(8, 0, /*probe_head=*/false, /*max_leaves=*/2);
  std::size_t most = 0;
  for (int w = 0; w < 20; ++w) {
    Window({80, 40, 20, 10, 5, 2, 1, 0});
    LinkAll();
    const auto places = chain_.places();
    most = std::max<std::size_t>(
        most, std::count_if(places.begin(), places.end(), [](const auto& p) { return p.leaf; }));
  }
  EXPECT_EQ(most, 2u);
}

// Two slow receivers: with room for one leaf only, every link behind the
// second ran at its rate (10.5x of the limit, session 36).
TEST_F(ChainOrderTest, EachOfTwoSlowLinksBecomesALeaf) {
  Start(6, 0, /*probe_head=*/false, ChainOrderOptions{}.max_leaves);
  const std::map<SubscriberId, int> rates{{1, 40}, {2, 40}, {3, 4}, {4, 40}, {5, 4}, {6, 40}};
  int moves = 0;
  for (int w = 0; w < 12; ++w) {
    moves += Flow(rates).has_value();
    LinkAll();
  }
  // 3 fed by 6, which 5 held back, kept up with it: that did not make it
  // rejoin the line (and become a leaf again once 5 was one).
  EXPECT_EQ(moves, 2);
  using P = ChainOrder::Place;
  auto places = chain_.places();
  std::sort(places.begin() + 4, places.end(), [](P a, P b) { return a.id < b.id; });
  EXPECT_EQ(places,
            (std::vector<P>{{1, false}, {2, false}, {4, false}, {6, false}, {3, true}, {5, true}}));
}

// Two slow links in a row: the second falls behind the link the first
// fell behind, which then reads as a slow uplink and moves to the end of
// the line (a fast link there loses nothing); the second falls behind its
// new predecessor and becomes a leaf too. After the probe the first head,
// far ahead of the line at its end, feeds the first slow leaf at its rate,
// so that one gives no verdict on the link it fell behind, and the second
// becomes a leaf when the wait for one is over (a bench run, session 36).
TEST_F(ChainOrderTest, TwoSlowLinksInARowBothBecomeLeaves) {
  for (const bool probe : {false, true}) {
    Start(6, 0, probe, ChainOrderOptions{}.max_leaves);
    const std::map<SubscriberId, int> rates{{1, 40}, {2, 40}, {3, 4}, {4, 4}, {5, 40}, {6, 40}};
    for (int w = 0; w < 16; ++w) {
      Flow(rates);
      LinkAll();
    }
    Ids line, leaves;
    for (const auto& p : chain_.places()) (p.leaf ? leaves : line).push_back(p.id);
    std::sort(line.begin(), line.end());
    std::sort(leaves.begin(), leaves.end());
    EXPECT_EQ(line, (Ids{1, 2, 5, 6})) << "probe " << probe;
    EXPECT_EQ(leaves, (Ids{3, 4})) << "probe " << probe;
  }
}

// A stalled link made a leaf, fed by the line's last link once that one
// has passed it, gains as much as the line: another leaf would share
// that uplink with it (several fast leaves on one uplink: 2.46x of the
// limit, session 15).
TEST_F(ChainOrderTest, ALeafThatShowsItIsFastLeavesNoRoomForAnother) {
  Start(6);
  Window({40, 40, 40, 40, 40, 40});
  Window({40, 40, 0, 0, 0, 0});
  ASSERT_TRUE(Window({40, 40, 0, 0, 0, 0}));  // 3 stalled: a leaf
  chain_.SetLinked(3, true, now_);
  chain_.SetLinked(4, true, now_);
  // 4 to 6 catch up from 2 and pass 3, which then takes from 6 as fast
  // as the line runs, staying more than `min_lag` behind it.
  EXPECT_FALSE(Window({40, 40, 0, 60, 60, 60}));
  for (int w = 0; w < 3; ++w) EXPECT_FALSE(Window({40, 40, 40, 40, 40, 40}));
  // 5 falls behind 4; 6 runs at its rate, and so does 3 now.
  for (int w = 0; w < 3; ++w) {
    const auto move = Window({40, 40, 4, 40, 4, 4});
    EXPECT_FALSE(move) << "window " << w << ": subscriber " << (move ? move->moved : 0);
  }
  using P = ChainOrder::Place;
  EXPECT_EQ(
      chain_.places(),
      (std::vector<P>{{1, false}, {2, false}, {4, false}, {5, false}, {6, false}, {3, true}}));
}

// A slow uplink leaves each link behind it in turn (the first a leaf):
// the second waits for the first's verdict instead of becoming a leaf.
TEST_F(ChainOrderTest, TheSecondLinkToFallBehindTheSameOneIsNoLeafWhileTheFirstIs) {
  Start(5);  // room for 8 leaves
  Window({40, 40, 40, 4, 4});
  ASSERT_TRUE(Window({40, 40, 40, 4, 4}));  // 4 a leaf: 1 2 3 5 4
  chain_.SetLinked(5, true, now_);
  chain_.SetLinked(4, true, now_);
  EXPECT_FALSE(Window({40, 40, 40, 4, 4}));  // 5 is falling behind 3
  auto move = Window({40, 40, 40, 4, 4});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kSlowUplink) << "5 did not become a leaf";
  EXPECT_EQ(move->moved, 3u);
  using P = ChainOrder::Place;
  EXPECT_EQ(chain_.places(),
            (std::vector<P>{{1, false}, {2, false}, {5, false}, {4, false}, {3, false}}));
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

TEST_F(ChainOrderTest, TheFirstHeadMovesToTheEndOfTheLineOnceTheChainRuns) {
  Start(3, 0, /*probe_head=*/true);
  EXPECT_FALSE(Window({40, 40, 40})) << "the probe waits for 2 windows as head";
  EXPECT_EQ(chain_.previous_head(), 0u);
  auto probe = Window({40, 40, 40});
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->moved, 1u);
  EXPECT_EQ(probe->reason, ChainOrder::Reason::kHeadProbe);
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 1}));
  EXPECT_EQ(chain_.previous_head(), 1u) << "the new head takes what it lacks from the old";
  // Both unlinked until the sender links them anew (the new head's PEERS
  // may not change: it takes from the old head, the one before it until
  // now); 3 still takes from 2.
  EXPECT_FALSE(chain_.Linked(1));
  EXPECT_FALSE(chain_.Linked(2));
  EXPECT_TRUE(chain_.Linked(3));
  chain_.SetLinked(2, false, now_);
  chain_.SetLinked(1, true, now_);
  EXPECT_TRUE(chain_.Linked(1));
  // Once only: all at the same rate, nothing moves again.
  for (int w = 0; w < 6; ++w) EXPECT_FALSE(Window({40, 40, 40}));
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 1}));
  chain_.Leave(1);
  EXPECT_EQ(chain_.previous_head(), 0u) << "gone: no longer a source";
}

TEST_F(ChainOrderTest, LinksThatJoinAfterTheProbeGoInFrontOfTheProbedHead) {
  Start(3, 0, /*probe_head=*/true);
  EXPECT_FALSE(Window({40, 40, 40}));
  ASSERT_TRUE(Window({40, 40, 40}));
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 1}));
  // It waits for its new source, and feeds the new head what it lacks:
  // nobody behind it waits with it.
  chain_.Join(4, std::vector<bool>(kPieces));
  chain_.Join(5, std::vector<bool>(kPieces));
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 4, 5, 1}));
  chain_.Leave(5);
  chain_.Leave(4);
  chain_.Leave(3);
  EXPECT_EQ(chain_.order(), (Ids{2, 1}));
  chain_.Leave(2);
  // Alone, it is the head again: a newcomer goes behind it.
  chain_.Join(6, std::vector<bool>(kPieces));
  EXPECT_EQ(chain_.order(), (Ids{1, 6}));
}

TEST_F(ChainOrderTest, WithoutTheProbeNewcomersJoinAtTheEndOfTheLine) {
  Start(3);
  chain_.Join(4, std::vector<bool>(kPieces));
  EXPECT_EQ(chain_.order(), (Ids{1, 2, 3, 4}));
}

TEST_F(ChainOrderTest, TheProbeTakesASlowFirstHeadOutOfEveryonesWay) {
  Start(4, 0, /*probe_head=*/true);
  // Everyone at the slow head's rate, until the probe.
  EXPECT_FALSE(Window({4, 4, 4, 4}));
  ASSERT_TRUE(Window({4, 4, 4, 4}));
  // At the end of the line it holds no one up: the line runs at once.
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 4, 1}));
  chain_.SetLinked(2, false, now_);
  chain_.SetLinked(1, true, now_);
  // 2, 3 and 4 at full rate; 1, behind 4, does not keep up: a leaf.
  EXPECT_FALSE(Window({4, 40, 40, 40}));
  auto move = Window({4, 40, 40, 40});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->moved, 1u);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kFellBehind);
  EXPECT_EQ(move->ahead, 4u);
  chain_.SetLinked(1, true, now_);
  for (int w = 0; w < 6; ++w) EXPECT_FALSE(Window({4, 40, 40, 40}));
  using Place = ChainOrder::Place;
  EXPECT_EQ(chain_.places(), (std::vector<Place>{{2, false}, {3, false}, {4, false}, {1, true}}));
  EXPECT_EQ(chain_.previous_head(), 1u) << "a leaf is still a source";
}

TEST_F(ChainOrderTest, AHeadGainingUnderAShareOfTheReferenceBecomesALeaf) {
  Start(4, 0, /*probe_head=*/true);
  EXPECT_FALSE(Window({40, 40, 40, 40}));
  ASSERT_TRUE(Window({40, 40, 40, 40}));  // the probe: 2 heads, 1 set 40 a window
  chain_.SetLinked(2, false, now_);
  chain_.SetLinked(1, true, now_);
  // 2 is slow to receive; 3, 4 and 1 hold all it has, and gain nothing.
  EXPECT_FALSE(Window({0, 4, 0, 0}));
  auto move = Window({0, 4, 0, 0});
  ASSERT_TRUE(move);
  EXPECT_EQ(move->moved, 2u);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kSlowHead);
  EXPECT_EQ(chain_.order(), (Ids{3, 4, 1, 2}));
  EXPECT_EQ(chain_.previous_head(), 2u);
}

// With the seed's own options (100 ms windows; the probe after 2 windows
// as head, other heads judged after 4), the first head's tenure, cut short
// by the probe, is the reference that a slow second subscriber, head after
// the probe, is judged against. The fixture's options judge heads after 2
// windows, as early as the probe, and could not tell (session 20: the
// bench's slow receiver second to subscribe held the other seven to
// 10 Mbit/s for 70 s). The parameter is what a 100 Mbit/s head gains a
// window: 19 pieces of 64 KiB (a 64 MiB file), or 5 of 256 KiB (256 MiB),
// too few in 2 windows to be `min_sample` pieces; the slow head gains a
// tenth of it.
class ChainOrderDefaultsTest : public ::testing::TestWithParam<int> {};

TEST_P(ChainOrderDefaultsTest, ASlowSecondSubscriberIsJudgedAgainstTheProbedFirstHead) {
  const int fast = GetParam();
  ChainOrder chain;
  const ChainOrderOptions o;
  ASSERT_LT(o.probe_windows, o.head_windows) << "the case this test is for";
  constexpr PieceIndex kPieces = 1024;
  for (SubscriberId id = 1; id <= 4; ++id) {
    chain.Join(id, std::vector<bool>(kPieces));
    chain.SetLinked(id, id != 1, Clock::now());
  }
  Clock::time_point now = Clock::now();
  ASSERT_FALSE(chain.Review(now));
  std::map<SubscriberId, PieceIndex> next;
  // One window: every link gains `gain` pieces.
  auto window = [&](int gain) {
    for (SubscriberId id = 1; id <= 4; ++id) {
      for (int k = 0; k < gain; ++k) chain.OnHave(id, next[id]++);
    }
    now += o.window;
    return chain.Review(now);
  };
  std::optional<ChainOrder::Move> move;
  for (int w = 0; w < o.probe_windows && !move; ++w) move = window(fast);
  ASSERT_TRUE(move);
  ASSERT_EQ(move->reason, ChainOrder::Reason::kHeadProbe);
  ASSERT_EQ(chain.order(), (Ids{2, 3, 4, 1}));
  chain.SetLinked(2, false, now);
  chain.SetLinked(1, true, now);
  // Head 2 is on 10 Mbit/s, and everyone behind it gains what it gains:
  // a tenth of `fast` a window, in whole pieces.
  move.reset();
  int windows = 0, owed = 0;
  while (!move && windows < 40) {
    owed += fast;
    move = window(owed / 10);
    owed %= 10;
    ++windows;
  }
  ASSERT_TRUE(move) << "the slow head was never judged";
  EXPECT_EQ(move->moved, 2u);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kSlowHead);
  // As soon as the reference's worth over its windows is a sample.
  EXPECT_EQ(windows, std::max<int>(o.head_windows, (o.min_sample + fast - 1) / fast));
  EXPECT_EQ(chain.order(), (Ids{3, 4, 1, 2}));
}

INSTANTIATE_TEST_SUITE_P(PiecesAWindow, ChainOrderDefaultsTest, ::testing::Values(19, 5));

// The seed's own options: a link in the middle of the line on a tenth of
// the rate of the one before it (10 against 100 Mbit/s: a 64 KiB piece
// every 5 ms, against one every 50 ms) becomes a leaf as soon as its
// streak spans 2 windows and holds the sample: at the first HAVE of its
// second window, 105 ms after it was linked, where it took 200 ms until
// session 24 (the end of its second window) and 160 ms with a sample of
// 32 pieces. Every 5 ms later costs each link behind it 5 ms at a tenth
// of its rate (the bench's slow-receiver cell).
//
// Larger pieces: the options count the same bytes (ForPieceLength), so
// the same slow link is judged as early. 256 KiB pieces (a 64 MiB file):
// the fast links verify one every 20 ms, the slow one every 200 ms, a
// leaf at 120 ms. With the counts of 64 KiB pieces it took 320 ms (16
// pieces ahead), the bench's other seven at 10 Mbit/s meanwhile
// (session 34).
struct SlowLinkCase {
  std::int64_t piece_length;
  std::chrono::milliseconds fast_piece_every;  // at 100 Mbit/s
};

class ChainOrderSlowLinkTest : public ::testing::TestWithParam<SlowLinkCase> {};

TEST_P(ChainOrderSlowLinkTest, ASlowLinkInTheLineIsALeafEarlyInItsSecondWindow) {
  const auto [piece_length, tick] = GetParam();
  const ChainOrderOptions o = ForPieceLength({}, piece_length);
  ChainOrder chain(o);
  const auto pieces = static_cast<PieceIndex>((64 << 20) / piece_length);
  const Clock::time_point t0 = Clock::now();
  for (SubscriberId id = 1; id <= 5; ++id) {
    chain.Join(id, std::vector<bool>(pieces));
    chain.SetLinked(id, id != 1, t0);
  }
  ASSERT_FALSE(chain.Review(t0));
  std::map<SubscriberId, PieceIndex> next;
  std::optional<ChainOrder::Move> move;
  int ticks = 0;
  while (!move && ticks < 100) {
    ++ticks;
    for (SubscriberId id = 1; id <= 5; ++id) {
      if (id <= 2 || ticks % 10 == 0) chain.OnHave(id, next[id]++);
    }
    move = chain.Review(t0 + ticks * tick);
  }
  ASSERT_TRUE(move) << "the slow link was never judged";
  EXPECT_EQ(move->moved, 3u);
  EXPECT_EQ(move->reason, ChainOrder::Reason::kFellBehind);
  EXPECT_EQ(move->ahead, 2u);
  EXPECT_EQ(ticks * tick, o.window + tick);
  EXPECT_EQ(chain.places().back(), (ChainOrder::Place{3, true}));
}

INSTANTIATE_TEST_SUITE_P(PieceLengths, ChainOrderSlowLinkTest,
                         ::testing::Values(SlowLinkCase{64 << 10, 5ms},
                                           SlowLinkCase{256 << 10, 20ms}));

TEST(ChainOrderOptionsTest, LargerPiecesCountTheSameBytesAtLeastFourPieces) {
  const ChainOrderOptions d;
  for (std::int64_t small : {16 << 10, 64 << 10}) {
    const ChainOrderOptions o = ForPieceLength(d, small);
    EXPECT_EQ(o.min_sample, d.min_sample) << small;
    EXPECT_EQ(o.min_lag, d.min_lag) << small;
  }
  const ChainOrderOptions quarter = ForPieceLength({.min_sample = 16, .min_lag = 10}, 256 << 10);
  EXPECT_EQ(quarter.min_sample, 4u);
  EXPECT_EQ(quarter.min_lag, 4u);  // 2.5 rounded up is 3, under the floor
  const ChainOrderOptions eighth = ForPieceLength({.min_sample = 64, .min_lag = 2}, 512 << 10);
  EXPECT_EQ(eighth.min_sample, 8u);
  EXPECT_EQ(eighth.min_lag, 2u);  // never more than given
  EXPECT_EQ(ForPieceLength(d, 16 << 20).min_sample, 4u);
  EXPECT_EQ(ForPieceLength(d, 16 << 20).window, d.window);
}

TEST_F(ChainOrderTest, AHeadIsJudgedOnItsWholeTenureNotOneWindow) {
  Start(3, 0, /*probe_head=*/true);
  // The first head: a burst of 120 HAVEs (a disk stall's backlog), then a
  // window of nothing; its rate is 60 a window over the two.
  Window({120, 120, 120});
  ASSERT_TRUE(Window({0, 0, 0}));  // the probe
  chain_.SetLinked(2, false, now_);
  chain_.SetLinked(1, true, now_);
  // The next head's 40 a window is over half of 60: it stays.
  for (int w = 0; w < 6; ++w) EXPECT_FALSE(Window({40, 40, 40}));
  EXPECT_EQ(chain_.order(), (Ids{2, 3, 1}));
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
