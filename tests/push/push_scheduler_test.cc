#include "node/push/push_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace swarmcast::push {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

std::vector<bool> None(std::uint32_t n) { return std::vector<bool>(n, false); }

// Drives the scheduler as the sender does: every subscriber in `ready` gets
// at most one batch; each batch is delivered at once. Returns the batches.
std::vector<PushBatch> Round(PushScheduler& s, std::vector<SubscriberId> ready) {
  std::vector<PushBatch> out;
  while (auto b = s.NextBatch(ready)) {
    for (SubscriberId id : b->targets) {
      s.OnSent(id, b->piece);
      std::erase(ready, id);
    }
    out.push_back(*b);
  }
  return out;
}

TEST(PushScheduler, FirstPassSendsEachPieceOnceInDiskOrder) {
  PushScheduler s(6);
  for (SubscriberId id : {1, 2, 3}) s.AddSubscriber(id, None(6));
  std::vector<PieceIndex> order;
  std::multiset<SubscriberId> receivers;
  while (s.uncovered_pieces() > 0) {
    for (const auto& b : Round(s, {1, 2, 3})) {
      ASSERT_EQ(b.targets.size(), 1u) << "a piece went out twice in the first pass";
      EXPECT_TRUE(b.forward) << "the cover pass's copy is to be forwarded";
      order.push_back(b.piece);
      receivers.insert(b.targets[0]);
    }
  }
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3, 4, 5));
  // Spread evenly: two pieces each.
  EXPECT_EQ(receivers.count(1), 2u);
  EXPECT_EQ(receivers.count(2), 2u);
  EXPECT_EQ(receivers.count(3), 2u);
  for (PieceIndex p = 0; p < 6; ++p) EXPECT_EQ(s.copies(p), 1u);
}

TEST(PushScheduler, AfterFirstPassNextPieceInScanOrderFansOutToAllWhoLackIt) {
  PushScheduler s(3);
  s.AddSubscriber(1, {true, true, true});
  s.AddSubscriber(2, {true, false, true});
  s.AddSubscriber(3, {true, false, false});
  s.AddSubscriber(4, {true, true, false});
  // Every piece is covered. From the cursor (0), the first piece a ready
  // subscriber lacks is p1: to {2,3} at once.
  auto b = s.NextBatch(std::vector<SubscriberId>{1, 2, 3, 4});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 1u);
  EXPECT_THAT(b->targets, UnorderedElementsAre(2, 3));
  EXPECT_FALSE(b->forward) << "it reaches everyone lacking p1: DIRECT";
  EXPECT_EQ(s.copies(1), 4u);  // in flight counts
  // Next in scan order: p2, to the ready ones that lack it: 4 only (3 is
  // busy).
  b = s.NextBatch(std::vector<SubscriberId>{1, 4});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 2u);
  EXPECT_THAT(b->targets, ElementsAre(4));
  EXPECT_FALSE(b->forward) << "a fan-out batch, however small, is DIRECT";
  EXPECT_FALSE(s.NextBatch(std::vector<SubscriberId>{1, 4}));
}

TEST(PushScheduler, APieceFetchedOverTheWireIsNotFannedOutToThatSubscriber) {
  PushScheduler s(3);
  s.AddSubscriber(1, {true, true, true});
  s.AddSubscriber(2, {false, false, false});
  s.AddSubscriber(3, {false, false, false});
  EXPECT_TRUE(s.OnFetching(2, 0));
  EXPECT_TRUE(s.OnFetching(3, 0));
  EXPECT_TRUE(s.OnFetching(3, 1));
  EXPECT_FALSE(s.OnFetching(3, 1)) << "marked already";
  EXPECT_FALSE(s.OnFetching(3, 7)) << "out of range";
  EXPECT_FALSE(s.OnFetching(9, 1)) << "unknown subscriber";
  // Not a copy: the counts are those of the holder alone.
  EXPECT_EQ(s.copies(0), 1u);
  EXPECT_EQ(s.copies(1), 1u);
  // p0 is wanted by nobody (both fetch it), p1 by 2 only, p2 by both.
  auto b = s.NextBatch(std::vector<SubscriberId>{1, 2, 3});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 1u);
  EXPECT_THAT(b->targets, ElementsAre(2));
  b = s.NextBatch(std::vector<SubscriberId>{1, 3});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 2u);
  EXPECT_THAT(b->targets, ElementsAre(3));
  EXPECT_FALSE(s.NextBatch(std::vector<SubscriberId>{1})) << "1 holds every piece";
  s.OnSent(2, 1);
  s.OnSent(3, 2);
  b = s.NextBatch(std::vector<SubscriberId>{1, 2, 3});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 2u);
  EXPECT_THAT(b->targets, ElementsAre(2));
  s.OnSent(2, 2);
  EXPECT_FALSE(s.NextBatch(std::vector<SubscriberId>{1, 2, 3})) << "p0 comes over the wire";
  EXPECT_FALSE(s.IsComplete(2));
  s.OnHave(2, 0);  // the wire delivered it
  EXPECT_EQ(s.copies(0), 2u);
  // 3's request was refused: once the mark expires, the push brings p0.
  s.OnFetchingExpired(3, 0);
  b = s.NextBatch(std::vector<SubscriberId>{1, 2, 3});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 0u);
  EXPECT_THAT(b->targets, ElementsAre(3));
}

TEST(PushScheduler, LateJoinerStartsAtCursorAndWrapsAround) {
  PushScheduler s(8);
  s.AddSubscriber(1, None(8));
  for (int i = 0; i < 5; ++i) Round(s, {1});
  EXPECT_EQ(s.cursor(), 5u);
  s.AddSubscriber(2, None(8));
  std::vector<PieceIndex> to_late;
  while (!s.IsComplete(2)) {
    for (const auto& b : Round(s, {1, 2})) {
      for (auto id : b.targets) {
        if (id == 2) to_late.push_back(b.piece);
      }
    }
  }
  // Pieces 5..7 are uncovered, so it gets one of those first; then the scan
  // wraps around to the pieces the first subscriber already holds.
  ASSERT_FALSE(to_late.empty());
  EXPECT_GE(to_late.front(), 5u);
  EXPECT_TRUE(std::find(to_late.begin(), to_late.end(), 0u) != to_late.end());
  EXPECT_TRUE(s.IsComplete(1));
}

TEST(PushScheduler, HaveFromOtherPeersCountsAsCopy) {
  PushScheduler s(4);
  s.AddSubscriber(1, None(4));
  s.AddSubscriber(2, None(4));
  s.OnHave(2, 0);  // got piece 0 over the BitTorrent wire
  EXPECT_EQ(s.copies(0), 1u);
  EXPECT_EQ(s.uncovered_pieces(), 3u);
  auto b = s.NextBatch(std::vector<SubscriberId>{1});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 1u);  // piece 0 is covered already
  s.OnHave(2, 99);          // out of range: ignored
  s.OnHave(7, 1);           // unknown subscriber: ignored
  EXPECT_EQ(s.copies(1), 1u);
}

TEST(PushScheduler, FailedSendAndLeavingSubscriberReleasePieces) {
  PushScheduler s(2);
  s.AddSubscriber(1, None(2));
  auto b = s.NextBatch(std::vector<SubscriberId>{1});
  ASSERT_TRUE(b);
  EXPECT_EQ(s.copies(b->piece), 1u);
  s.OnSendFailed(1, b->piece);
  EXPECT_EQ(s.copies(b->piece), 0u);
  EXPECT_EQ(s.uncovered_pieces(), 2u);
  s.OnSent(1, 0);
  s.AddSubscriber(2, {false, true});
  EXPECT_EQ(s.uncovered_pieces(), 0u);
  s.RemoveSubscriber(1);
  EXPECT_EQ(s.copies(0), 0u);
  EXPECT_EQ(s.uncovered_pieces(), 1u);
  EXPECT_FALSE(s.HasSubscriber(1));
}

TEST(PushScheduler, ScanContinuesFromCursorNotFromRarest) {
  PushScheduler s(4);
  s.AddSubscriber(1, {true, true, true, true});
  s.AddSubscriber(2, {true, true, true, true});
  s.AddSubscriber(3, {false, true, false, true});  // p0 and p2 have 2 copies
  s.AddSubscriber(4, {true, false, true, true});   // p1 has 3 copies
  // Scan order from 0: p0 to 3. Then p1 (not rarest, but next) to 4.
  auto b = s.NextBatch(std::vector<SubscriberId>{3});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 0u);
  b = s.NextBatch(std::vector<SubscriberId>{4});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 1u);
}

TEST(PushScheduler, IdleWhenEveryoneIsComplete) {
  PushScheduler s(2);
  s.AddSubscriber(1, {true, true});
  EXPECT_TRUE(s.IsComplete(1));
  EXPECT_FALSE(s.NextBatch(std::vector<SubscriberId>{1}));
  EXPECT_FALSE(s.NextBatch(std::vector<SubscriberId>{}));
  EXPECT_FALSE(s.NextBatch(std::vector<SubscriberId>{42}));  // unknown id
}

TEST(PushScheduler, EveryPieceReachesEverySubscriberExactlyOnce) {
  constexpr std::uint32_t kPieces = 37;
  PushScheduler s(kPieces);
  std::vector<std::multiset<PieceIndex>> got(5);
  for (SubscriberId id = 0; id < 5; ++id) s.AddSubscriber(id, None(kPieces));
  for (int round = 0; round < 1000; ++round) {
    bool all = true;
    for (SubscriberId id = 0; id < 5; ++id) all = all && s.IsComplete(id);
    if (all) break;
    for (const auto& b : Round(s, {0, 1, 2, 3, 4})) {
      for (auto id : b.targets) got[id].insert(b.piece);
    }
  }
  for (SubscriberId id = 0; id < 5; ++id) {
    EXPECT_EQ(got[id].size(), kPieces);
    for (PieceIndex p = 0; p < kPieces; ++p) EXPECT_EQ(got[id].count(p), 1u);
  }
}

// A forwarder's scheduler pushes only what its source holds, each piece at
// once to every ready subscriber lacking it (no cover pass).
TEST(PushSchedulerForwarder, PushesOnlyHeldPiecesToAllWhoLackThem) {
  PushScheduler s(6, {.source_complete = false, .cover_first = false});
  s.AddSubscriber(1, None(6));
  std::vector<bool> two_has = None(6);
  two_has[3] = true;
  s.AddSubscriber(2, two_has);
  EXPECT_FALSE(s.NextBatch(std::vector<SubscriberId>{1, 2}));  // holds nothing yet
  s.SourceHas(3);
  s.SourceHas(5);
  s.SourceHas(99);  // out of range: ignored
  EXPECT_TRUE(s.source_has(3));
  EXPECT_FALSE(s.source_has(4));
  auto batches = Round(s, {1, 2});
  ASSERT_EQ(batches.size(), 2u);
  // A forwarder's pushes are kept where they land.
  for (const PushBatch& b : batches) EXPECT_FALSE(b.forward);
  EXPECT_EQ(batches[0].piece, 3u);
  EXPECT_THAT(batches[0].targets, ElementsAre(1));
  EXPECT_EQ(batches[1].piece, 5u);
  EXPECT_THAT(batches[1].targets, UnorderedElementsAre(2));
  // Subscriber 1 takes 5 next round; then nothing is left to forward.
  batches = Round(s, {1, 2});
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].piece, 5u);
  EXPECT_THAT(batches[0].targets, ElementsAre(1));
  EXPECT_TRUE(Round(s, {1, 2}).empty());
  // A HAVE (the piece came from elsewhere) means it is not forwarded.
  s.OnHave(1, 0);
  s.SourceHas(0);
  batches = Round(s, {1, 2});
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].piece, 0u);
  EXPECT_THAT(batches[0].targets, ElementsAre(2));
}

// A seed's default scheduler is unchanged: it holds every piece.
TEST(PushSchedulerForwarder, SeedDefaultHoldsEveryPiece) {
  PushScheduler s(3);
  for (PieceIndex p = 0; p < 3; ++p) EXPECT_TRUE(s.source_has(p));
}

// With assign_by_backlog the cover pass feeds the subscriber whose group
// has taken the most of what it was given, not the one holding the fewest
// pieces: one whose pieces nobody has received yet gets no more until its
// group catches up.
void ForwardSome(PushScheduler& s, const std::vector<PushBatch>& first) {
  // 1 forwarded its piece to 3, 3 forwarded its piece to 1; 2 forwarded
  // nothing, and got nothing.
  s.OnHave(3, first[0].piece);
  s.OnHave(1, first[2].piece);
}

TEST(PushSchedulerBacklog, CoverPassFavoursTheSubscribersThatForward) {
  PushScheduler s(8, {.assign_by_backlog = true});
  for (SubscriberId id : {1u, 2u, 3u}) s.AddSubscriber(id, None(8));
  auto first = Round(s, {1, 2, 3});
  ASSERT_EQ(first.size(), 3u);
  EXPECT_THAT(first[0].targets, ElementsAre(1));
  EXPECT_THAT(first[1].targets, ElementsAre(2));
  EXPECT_THAT(first[2].targets, ElementsAre(3));
  EXPECT_EQ(s.backlog(1), 2u);  // 2 and 3 lack its piece
  ForwardSome(s, first);
  EXPECT_EQ(s.backlog(1), 1u);
  EXPECT_EQ(s.backlog(2), 2u);
  EXPECT_EQ(s.backlog(3), 1u);
  auto next = s.NextBatch(std::vector<SubscriberId>{1, 2, 3});
  ASSERT_TRUE(next);
  EXPECT_THAT(next->targets, ElementsAre(1));  // backlog 1, held 2; 2 holds 1 piece only
  EXPECT_EQ(s.backlog(1), 3u);                 // plus the new piece, which 2 and 3 lack

  // Without the option the one holding the fewest pieces wins.
  PushScheduler plain(8);
  for (SubscriberId id : {1u, 2u, 3u}) plain.AddSubscriber(id, None(8));
  ForwardSome(plain, Round(plain, {1, 2, 3}));
  next = plain.NextBatch(std::vector<SubscriberId>{1, 2, 3});
  ASSERT_TRUE(next);
  EXPECT_THAT(next->targets, ElementsAre(2));

  // A subscriber that leaves: the others' backlogs drop by what it lacked,
  // and its own pieces are no one's.
  s.RemoveSubscriber(2);
  EXPECT_EQ(s.backlog(1), 1u);  // only 3 lacks the new piece now
  EXPECT_EQ(s.backlog(3), 0u);
  EXPECT_EQ(s.backlog(2), 0u);
}

// With forwarders, a piece that has copies but no forwarder (it came over
// the wire) goes as PIECE to one subscriber lacking it, before any fan-out.
TEST(PushSchedulerBacklog, APieceWithoutAForwarderIsGivenOne) {
  PushScheduler s(2, {.assign_by_backlog = true});
  s.AddSubscriber(1, {true, false});  // piece 0 from the wire: covered, no forwarder
  s.AddSubscriber(2, None(2));
  s.AddSubscriber(3, None(2));
  auto b = s.NextBatch(std::vector<SubscriberId>{1, 2, 3});  // the cover pass: piece 1
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 1u);
  EXPECT_TRUE(b->forward);
  const SubscriberId cover = b->targets.at(0);
  s.OnSent(cover, 1);
  std::vector<SubscriberId> ready = {1, 2, 3};
  b = s.NextBatch(ready);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->piece, 0u);
  ASSERT_EQ(b->targets.size(), 1u);
  EXPECT_NE(b->targets[0], 1u) << "it has the piece";
  EXPECT_TRUE(b->forward);
  const SubscriberId forwarder = b->targets[0];
  s.OnSent(forwarder, 0);
  // Every piece has a forwarder now: what remains goes out as DIRECT.
  b = s.NextBatch(ready);
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->forward);
  // Without forwarders (the option off) there is no such pass.
  PushScheduler plain(2);
  plain.AddSubscriber(1, {true, true});
  plain.AddSubscriber(2, None(2));
  plain.AddSubscriber(3, None(2));
  b = plain.NextBatch(std::vector<SubscriberId>{1, 2, 3});
  ASSERT_TRUE(b);
  EXPECT_THAT(b->targets, UnorderedElementsAre(2, 3));
  EXPECT_FALSE(b->forward);
}

// With a backlog slack the cover pass waits rather than pile pieces onto
// a ready subscriber whose queue is far behind the shortest one.
TEST(PushSchedulerBacklog, CoverPassWaitsForAForwarderThatKeepsUp) {
  PushScheduler s(16, {.assign_by_backlog = true, .backlog_slack_pieces = 1});
  for (SubscriberId id : {1u, 2u, 3u}) s.AddSubscriber(id, None(16));
  // Only subscriber 1 is ever ready: it gets pieces until its backlog is
  // more than 1 piece x 2 others beyond the others' (0).
  auto b = s.NextBatch(std::vector<SubscriberId>{1});
  ASSERT_TRUE(b);
  s.OnSent(1, b->piece);
  EXPECT_EQ(s.backlog(1), 2u);
  b = s.NextBatch(std::vector<SubscriberId>{1});
  ASSERT_TRUE(b);  // 2 <= 0 + 2: still fed
  s.OnSent(1, b->piece);
  EXPECT_EQ(s.backlog(1), 4u);
  EXPECT_FALSE(s.NextBatch(std::vector<SubscriberId>{1}));  // waits: 4 > 2
  // Its group takes one of its pieces: fed again.
  s.OnHave(2, b->piece);
  s.OnHave(3, b->piece);
  EXPECT_TRUE(s.NextBatch(std::vector<SubscriberId>{1}));
}

TEST(PushScheduler, ASubscriberHoldingAPieceTheForwarderLacksIsAhead) {
  PushScheduler s(4, {.source_complete = false, .cover_first = false});
  s.AddSubscriber(1, {false, false, false, false});
  s.AddSubscriber(2, {true, false, false, false});
  EXPECT_FALSE(s.Ahead(1));
  EXPECT_TRUE(s.Ahead(2)) << "it has piece 0, the forwarder does not";
  s.SourceHas(0);
  EXPECT_FALSE(s.Ahead(2));
  s.OnHave(2, 3);
  EXPECT_TRUE(s.Ahead(2));
  s.OnHave(1, 1);
  s.SourceHas(1);
  EXPECT_FALSE(s.Ahead(1)) << "what it has, the forwarder has too";
  EXPECT_FALSE(s.Ahead(7)) << "unknown";
  PushScheduler seed(4);
  seed.AddSubscriber(1, {true, true, false, false});
  EXPECT_FALSE(seed.Ahead(1)) << "a seed holds every piece";
}

// A chain's new head takes from the old one until it has every piece the
// old one has, or is being sent: the piece in flight to the old head when
// the head changed is one the new head lacks, and only the old one will
// have it soon.
TEST(PushScheduler, WhatIsOnItsWayToTheOtherCountsAsWhatItHas) {
  PushScheduler s(4, {.cover_first = false});
  s.AddSubscriber(1, {true, false, false, false});
  s.AddSubscriber(2, {true, false, false, false});
  EXPECT_TRUE(s.HasEveryPieceOf(2, 1));
  auto b = s.NextBatch(std::vector<SubscriberId>{1});
  ASSERT_TRUE(b);
  ASSERT_EQ(b->piece, 1u);
  EXPECT_FALSE(s.HasEveryPieceOf(2, 1)) << "piece 1 is on its way to 1";
  EXPECT_TRUE(s.HasEveryPieceOf(1, 2));
  s.OnSent(1, 1);
  EXPECT_FALSE(s.HasEveryPieceOf(2, 1));
  s.OnHave(2, 1);
  EXPECT_TRUE(s.HasEveryPieceOf(2, 1));
  EXPECT_FALSE(s.HasEveryPieceOf(2, 9)) << "unknown";
}

// A chain's link dies half-way: what the seed had sent it and the next
// link had not yet got has no copy left. The next link, now the head, gets
// those pieces first, lowest first, and then the scan goes on where it was;
// left to the scan they would come only at the file's end, and every get's
// whole-file SHA-256 (file order) would wait for them until then. A send
// that failed is the same.
TEST(PushScheduler, APieceThatLostItsLastCopyComesBeforeTheScansNext) {
  PushScheduler s(8);
  s.AddSubscriber(1, None(8));
  s.AddSubscriber(2, None(8));
  for (PieceIndex p = 0; p < 4; ++p) {
    auto b = s.NextBatch(std::vector<SubscriberId>{1});
    ASSERT_TRUE(b);
    ASSERT_EQ(b->piece, p);
    s.OnSent(1, p);
  }
  s.OnHave(2, 0);  // relayed on by 1; pieces 2 and 3 were not yet
  s.OnHave(2, 1);
  EXPECT_EQ(s.cursor(), 4u);
  s.RemoveSubscriber(1);
  EXPECT_EQ(s.copies(2), 0u);
  std::vector<PieceIndex> order;
  auto next = [&] {
    auto b = s.NextBatch(std::vector<SubscriberId>{2});
    if (!b) return false;
    EXPECT_THAT(b->targets, ElementsAre(2u));
    order.push_back(b->piece);
    return true;
  };
  ASSERT_TRUE(next());
  ASSERT_TRUE(next());
  EXPECT_THAT(order, ElementsAre(2, 3));
  EXPECT_EQ(s.cursor(), 4u) << "the scan goes on where it was";
  ASSERT_TRUE(next());
  EXPECT_EQ(order.back(), 4u);
  s.OnSendFailed(2, 4);
  ASSERT_TRUE(next());
  EXPECT_EQ(order.back(), 4u) << "a failed send is sent again at once";
  s.OnSent(2, 4);
  while (next()) s.OnSent(2, order.back());
  EXPECT_THAT(order, ElementsAre(2, 3, 4, 4, 5, 6, 7));
  EXPECT_TRUE(s.IsComplete(2));
}

}  // namespace
}  // namespace swarmcast::push
