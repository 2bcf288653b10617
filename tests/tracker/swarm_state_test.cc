#include "tracker/swarm_state.h"

#include <gtest/gtest.h>

#include <map>

namespace swarmcast::tracker {
namespace {

// Records what the table reports, as the SQLite store would receive it.
class RecordingSink : public StateSink {
 public:
  void PeerUpdated(const InfoHash&, const Peer& p) override {
    peers[p.id] = p;
    ++updates;
  }
  void PeerRemoved(const InfoHash&, const PeerId& id) override {
    peers.erase(id);
    ++removed;
  }
  void SwarmCounters(const InfoHash&, std::int64_t c, std::int64_t) override { completed = c; }
  void SwarmRemoved(const InfoHash&) override { ++swarms_removed; }
  std::map<PeerId, Peer> peers;
  int removed = 0, swarms_removed = 0, updates = 0;
  std::int64_t completed = 0;
};

InfoHash Hash(int n) {
  InfoHash h;
  h.fill(static_cast<std::uint8_t>(n));
  return h;
}

AnnounceRequest Req(int swarm, int peer, std::int64_t left,
                    AnnounceEvent ev = AnnounceEvent::kNone) {
  AnnounceRequest r;
  r.info_hash = Hash(swarm);
  r.peer_id.fill(static_cast<std::uint8_t>(peer));
  r.port = static_cast<std::uint16_t>(1000 + peer);
  r.left = left;
  r.event = ev;
  return r;
}

PeerAddress Addr(int peer) {
  PeerAddress a;
  a.ip = {127, 0, 0, 1};
  a.port = static_cast<std::uint16_t>(1000 + peer);
  return a;
}

TEST(SwarmTable, AnnounceCountsAndPeers) {
  RecordingSink sink;
  SwarmTable t({}, &sink, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 100, AnnounceEvent::kStarted), Addr(1), 1000).ok());
  ASSERT_TRUE(t.Announce(Req(1, 2, 0, AnnounceEvent::kStarted), Addr(2), 1000).ok());
  auto r = t.Announce(Req(1, 3, 50), Addr(3), 1000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->complete, 1);
  EXPECT_EQ(r->incomplete, 2);
  EXPECT_EQ(r->peers.size(), 2u);
  for (const auto& p : r->peers) EXPECT_NE(p.addr, Addr(3));
  EXPECT_EQ(sink.peers.size(), 3u);
}

TEST(SwarmTable, CompletedCountedOncePerPeer) {
  RecordingSink sink;
  SwarmTable t({}, &sink, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 100, AnnounceEvent::kStarted), Addr(1), 1).ok());
  ASSERT_TRUE(t.Announce(Req(1, 1, 0, AnnounceEvent::kCompleted), Addr(1), 2).ok());
  ASSERT_TRUE(t.Announce(Req(1, 1, 0, AnnounceEvent::kCompleted), Addr(1), 3).ok());
  // A lost `completed` event still counts when left drops to zero.
  ASSERT_TRUE(t.Announce(Req(1, 2, 100), Addr(2), 3).ok());
  ASSERT_TRUE(t.Announce(Req(1, 2, 0), Addr(2), 4).ok());
  auto s = t.Scrape({Hash(1), Hash(9)});
  ASSERT_TRUE(s[0].has_value());
  EXPECT_EQ(s[0]->downloaded, 2);
  EXPECT_EQ(s[0]->complete, 2);
  EXPECT_FALSE(s[1].has_value());
  EXPECT_EQ(sink.completed, 2);
}

TEST(SwarmTable, StoppedLeecherLeavesFinishedPeerStays) {
  RecordingSink sink;
  SwarmTable t({}, &sink, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 100), Addr(1), 1).ok());
  ASSERT_TRUE(t.Announce(Req(1, 2, 0), Addr(2), 1).ok());
  ASSERT_TRUE(t.Announce(Req(1, 1, 100, AnnounceEvent::kStopped), Addr(1), 2).ok());
  ASSERT_TRUE(t.Announce(Req(1, 2, 0, AnnounceEvent::kStopped), Addr(2), 2).ok());
  auto counts = t.Scrape({Hash(1)})[0];
  EXPECT_EQ(counts->complete, 0);
  EXPECT_EQ(counts->incomplete, 0);
  EXPECT_EQ(t.GetTotals().leechers, 0u);
  auto peers = t.Peers(Hash(1), 2);
  ASSERT_TRUE(peers.has_value());
  ASSERT_EQ(peers->size(), 1u);
  EXPECT_TRUE((*peers)[0].peer.stopped);
  EXPECT_EQ((*peers)[0].state, PeerState::kDone);
  // A stopped finished peer is not handed out and not counted as a seeder.
  auto r = t.Announce(Req(1, 3, 10), Addr(3), 3);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->peers.empty());
  EXPECT_EQ(r->complete, 0);
}

TEST(SwarmTable, ExpiryWithMovingClock) {
  RecordingSink sink;
  StateOptions o;
  o.expire_after = 100;
  o.stale_after = 50;
  SwarmTable t(o, &sink, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 10), Addr(1), 1000).ok());
  ASSERT_TRUE(t.Announce(Req(1, 2, 10), Addr(2), 1080).ok());
  ASSERT_TRUE(t.Announce(Req(2, 3, 10), Addr(3), 1000).ok());
  auto views = t.Peers(Hash(1), 1060);
  ASSERT_TRUE(views.has_value());
  int stale = 0;
  for (const auto& v : *views) stale += v.state == PeerState::kStale;
  EXPECT_EQ(stale, 1);
  EXPECT_EQ(t.Expire(1100), 0u);  // exactly at the limit: kept
  EXPECT_EQ(t.Expire(1101), 2u);
  EXPECT_EQ(t.GetTotals().peers, 1u);
  EXPECT_EQ(sink.removed, 2);
  // Swarm 2 has no peers and no registry entry: dropped.
  EXPECT_EQ(sink.swarms_removed, 1);
  EXPECT_FALSE(t.Scrape({Hash(2)})[0].has_value());
}

TEST(SwarmTable, DatabaseSeesChangesAndRefreshesOnlyNow) {
  RecordingSink sink;
  StateOptions o;
  o.db_refresh = 60;
  SwarmTable t(o, &sink, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 100, AnnounceEvent::kStarted), Addr(1), 1000).ok());
  EXPECT_EQ(sink.updates, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 100), Addr(1), 1030).ok());  // nothing new
  EXPECT_EQ(sink.updates, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 40), Addr(1), 1031).ok());  // progress
  EXPECT_EQ(sink.updates, 2);
  EXPECT_EQ(sink.peers.begin()->second.left, 40);
  ASSERT_TRUE(t.Announce(Req(1, 1, 40), Addr(1), 1090).ok());  // 59 s after the last write
  EXPECT_EQ(sink.updates, 2);
  ASSERT_TRUE(t.Announce(Req(1, 1, 40), Addr(1), 1091).ok());  // refresh due
  EXPECT_EQ(sink.updates, 3);
  EXPECT_EQ(sink.peers.begin()->second.last_announce, 1091);
  ASSERT_TRUE(t.Announce(Req(1, 1, 40), Addr(2), 1092).ok());  // moved address
  EXPECT_EQ(sink.updates, 4);
}

TEST(SwarmTable, LargeSwarmIndexStaysConsistent) {
  SwarmTable t({}, nullptr, 1);
  // Grow past the index threshold, shrink below half of it, grow again;
  // every peer must stay findable (a re-announce must not add a duplicate).
  for (int i = 0; i < 150; ++i) ASSERT_TRUE(t.Announce(Req(1, i, 1), Addr(i), 1).ok());
  for (int i = 0; i < 130; ++i) {
    ASSERT_TRUE(t.Announce(Req(1, i, 1, AnnounceEvent::kStopped), Addr(i), 2).ok());
  }
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(t.Announce(Req(1, i, 1), Addr(i), 3).ok());
  for (int i = 0; i < 150; ++i) ASSERT_TRUE(t.Announce(Req(1, i, 1), Addr(i), 4).ok());
  EXPECT_EQ(t.GetTotals().peers, 150u);
  EXPECT_EQ(t.Scrape({Hash(1)})[0]->incomplete, 150);
}

TEST(SwarmTable, Caps) {
  StateOptions o;
  o.max_swarms = 2;
  o.max_peers_per_swarm = 2;
  o.max_peers = 3;
  SwarmTable t(o, nullptr, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 1), Addr(1), 1).ok());
  ASSERT_TRUE(t.Announce(Req(1, 2, 1), Addr(2), 1).ok());
  auto full = t.Announce(Req(1, 3, 1), Addr(3), 1);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error(), "swarm full: peer limit per swarm reached");
  ASSERT_TRUE(t.Announce(Req(2, 4, 1), Addr(4), 1).ok());
  auto total = t.Announce(Req(2, 5, 1), Addr(5), 1);
  ASSERT_FALSE(total.ok());
  EXPECT_EQ(total.error(), "tracker full: peer limit reached");
  auto swarms = t.Announce(Req(3, 6, 1), Addr(6), 1);
  ASSERT_FALSE(swarms.ok());
  EXPECT_EQ(swarms.error(), "tracker full: swarm limit reached");
  // A known peer re-announcing is never refused by a cap.
  EXPECT_TRUE(t.Announce(Req(1, 1, 0), Addr(1), 2).ok());
}

TEST(SwarmTable, RequireRegistered) {
  StateOptions o;
  o.require_registered = true;
  SwarmTable t(o, nullptr, 1);
  EXPECT_FALSE(t.Announce(Req(1, 1, 1), Addr(1), 1).ok());
  RegistryEntry e;
  e.name = "img";
  EXPECT_EQ(t.Publish(Hash(1), e, 5).kind, PublishOutcome::kCreated);
  EXPECT_TRUE(t.Announce(Req(1, 1, 1), Addr(1), 6).ok());
}

TEST(SwarmTable, PublishConflicts) {
  SwarmTable t({}, nullptr, 1);
  RegistryEntry e;
  e.name = "img";
  e.owner = "token:a";
  e.push = "10.0.0.1:7000";
  EXPECT_EQ(t.Publish(Hash(1), e, 5).kind, PublishOutcome::kCreated);
  e.push = "10.0.0.2:7000";
  EXPECT_EQ(t.Publish(Hash(1), e, 6).kind, PublishOutcome::kUpdated);
  EXPECT_EQ(t.Entry(Hash(1))->push, "10.0.0.2:7000");
  EXPECT_EQ(t.Entry(Hash(1))->created, 5);
  RegistryEntry other;
  other.name = "other";
  other.owner = "token:a";
  EXPECT_EQ(t.Publish(Hash(1), other, 7).kind, PublishOutcome::kHashTaken);
  EXPECT_EQ(t.Resolve("img"), Hash(1));
  EXPECT_EQ(t.Resolve(ToHex(Hash(1))), Hash(1));
  EXPECT_FALSE(t.Resolve("nope").has_value());
  EXPECT_EQ(t.List().size(), 1u);
}

TEST(SwarmTable, OnlyTheOwnerUpdatesMovesOrRemovesAName) {
  SwarmTable t({}, nullptr, 1);
  RegistryEntry e;
  e.name = "img";
  e.owner = "token:a";
  e.push = "10.0.0.1:7000";
  ASSERT_EQ(t.Publish(Hash(1), e, 5).kind, PublishOutcome::kCreated);
  RegistryEntry thief = e;
  thief.owner = "token:b";
  thief.push = "10.6.6.6:7000";
  EXPECT_FALSE(t.MayWrite("img", "token:b"));
  EXPECT_TRUE(t.MayWrite("img", "token:a"));
  EXPECT_TRUE(t.MayWrite("free", "token:b"));
  EXPECT_EQ(t.Publish(Hash(1), thief, 6).kind, PublishOutcome::kNotOwner);
  EXPECT_EQ(t.Publish(Hash(2), thief, 6).kind, PublishOutcome::kNotOwner);
  EXPECT_EQ(t.Unpublish("img", "token:b").kind, UnpublishOutcome::kNotOwner);
  EXPECT_EQ(t.Entry(Hash(1))->push, "10.0.0.1:7000");
  EXPECT_EQ(t.Resolve("img"), Hash(1));

  auto moved = t.Publish(Hash(2), e, 7);
  ASSERT_EQ(moved.kind, PublishOutcome::kMoved);
  EXPECT_EQ(moved.previous, Hash(1));
  EXPECT_EQ(t.Resolve("img"), Hash(2));
  // The old info-hash keeps its metainfo, nameless, and stays resolvable.
  ASSERT_TRUE(t.Entry(Hash(1)).has_value());
  EXPECT_EQ(t.Entry(Hash(1))->name, "");
  EXPECT_EQ(t.Entry(Hash(1))->retired, 7);
  EXPECT_EQ(t.Resolve(ToHex(Hash(1))), Hash(1));
  EXPECT_EQ(t.List().size(), 1u);
  EXPECT_EQ(t.GetTotals().registered, 1u);
  // Back to the first build: allowed, the retired entry takes the name.
  EXPECT_EQ(t.Publish(Hash(1), e, 8).kind, PublishOutcome::kMoved);
  EXPECT_EQ(t.Resolve("img"), Hash(1));

  auto removed = t.Unpublish("img", "token:a");
  ASSERT_EQ(removed.kind, UnpublishOutcome::kRemoved);
  EXPECT_EQ(removed.info_hash, Hash(1));
  EXPECT_FALSE(t.Resolve("img").has_value());
  EXPECT_FALSE(t.Entry(Hash(1)).has_value());
  EXPECT_EQ(t.Unpublish("img", "token:a").kind, UnpublishOutcome::kUnknown);
  EXPECT_EQ(t.GetTotals().registered, 0u);
  // Free again, for anyone.
  EXPECT_EQ(t.Publish(Hash(3), thief, 9).kind, PublishOutcome::kCreated);
}

TEST(SwarmTable, AnUnownedNameIsClaimedByTheFirstWrite) {
  SwarmTable t({}, nullptr, 1);
  RegistryEntry legacy;  // restored from a schema-2 database: no owner
  legacy.name = "img";
  t.RestoreSwarm(Hash(1), legacy, 0, 1);
  EXPECT_TRUE(t.MayWrite("img", "token:b"));
  RegistryEntry e = legacy;
  e.owner = "token:b";
  EXPECT_EQ(t.Publish(Hash(1), e, 5).kind, PublishOutcome::kUpdated);
  EXPECT_EQ(t.Entry(Hash(1))->owner, "token:b");
  EXPECT_FALSE(t.MayWrite("img", "token:c"));
}

TEST(SwarmTable, ARetiredEntryLivesWhileSeededThenExpires) {
  StateOptions o;
  o.expire_after = 100;
  SwarmTable t(o, nullptr, 1);
  RegistryEntry e;
  e.name = "img";
  e.owner = "token:a";
  ASSERT_EQ(t.Publish(Hash(1), e, 0).kind, PublishOutcome::kCreated);
  ASSERT_TRUE(t.Announce(Req(1, 1, 0), Addr(1), 10).ok());  // a seed on the old build
  ASSERT_EQ(t.Publish(Hash(2), e, 20).kind, PublishOutcome::kMoved);
  // Announced every 50 s, it keeps the old entry long past the grace time.
  for (std::int64_t now = 60; now <= 300; now += 50) {
    ASSERT_TRUE(t.Announce(Req(1, 1, 0), Addr(1), now).ok());
    t.Expire(now);
    ASSERT_TRUE(t.Entry(Hash(1)).has_value()) << "at " << now;
  }
  // The seed stops announcing: its entry expires, then the retired swarm.
  t.Expire(401);
  EXPECT_FALSE(t.Entry(Hash(1)).has_value());
  EXPECT_FALSE(t.Resolve(ToHex(Hash(1))).has_value());
  EXPECT_TRUE(t.Entry(Hash(2)).has_value()) << "the named entry never expires";
}

TEST(SwarmTable, DownloadingPeersGetTheProgressInterval) {
  StateOptions o;
  o.interval = 120;
  o.progress_interval = 10;
  SwarmTable t(o, nullptr, 1);
  auto leecher = t.Announce(Req(1, 1, 100, AnnounceEvent::kStarted), Addr(1), 1000);
  ASSERT_TRUE(leecher.ok());
  EXPECT_EQ(leecher->interval, 10);
  auto seed = t.Announce(Req(1, 2, 0, AnnounceEvent::kStarted), Addr(2), 1000);
  ASSERT_TRUE(seed.ok());
  EXPECT_EQ(seed->interval, 120) << "a finished peer goes back to the long interval";
  auto done = t.Announce(Req(1, 1, 0, AnnounceEvent::kCompleted), Addr(1), 1010);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->interval, 120);
  // Off: everyone gets `interval`.
  SwarmTable off({}, nullptr, 1);
  EXPECT_EQ(off.Announce(Req(1, 1, 100), Addr(1), 1000)->interval, 120);
}

TEST(SwarmTable, ADownloadingPeerIsStaleAfterThreeProgressIntervals) {
  StateOptions o;
  o.interval = 120;
  o.stale_after = 180;
  o.progress_interval = 10;
  SwarmTable t(o, nullptr, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 100), Addr(1), 1000).ok());
  ASSERT_TRUE(t.Announce(Req(1, 2, 0), Addr(2), 1000).ok());
  EXPECT_EQ((*t.Peers(Hash(1), 1030))[0].state, PeerState::kRunning);
  EXPECT_EQ((*t.Peers(Hash(1), 1031))[0].state, PeerState::kStale);
  EXPECT_EQ((*t.Peers(Hash(1), 1031))[1].state, PeerState::kDone);
}

TEST(SwarmTable, ANewPeerIdOnAKnownAddressReplacesTheOldEntry) {
  RecordingSink sink;
  SwarmTable t({}, &sink, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 100, AnnounceEvent::kStarted), Addr(1), 1000).ok());
  ASSERT_TRUE(t.Announce(Req(1, 2, 0, AnnounceEvent::kStarted), Addr(2), 1000).ok());
  // Peer 1 was killed and restarted on the same IP and port: a new id.
  AnnounceRequest again = Req(1, 3, 60, AnnounceEvent::kStarted);
  auto r = t.Announce(again, Addr(1), 1005);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->incomplete, 1) << "the old entry no longer counts as a leecher";
  auto peers = *t.Peers(Hash(1), 1005);
  ASSERT_EQ(peers.size(), 2u);
  for (const PeerView& v : peers) EXPECT_NE(v.peer.id, Req(1, 1, 0).peer_id);
  EXPECT_EQ(sink.peers.count(Req(1, 1, 0).peer_id), 0u) << "removed from the database too";
  EXPECT_EQ(t.GetTotals().peers, 2u);
  EXPECT_EQ(t.GetTotals().leechers, 1u);
  // Another port on the same IP is another node: both stay.
  ASSERT_TRUE(t.Announce(Req(1, 4, 60), Addr(4), 1006).ok());
  EXPECT_EQ(t.Peers(Hash(1), 1006)->size(), 3u);
  // Off: the old entry stays until it expires.
  StateOptions keep;
  keep.replace_same_address = false;
  SwarmTable k(keep, nullptr, 1);
  ASSERT_TRUE(k.Announce(Req(1, 1, 100), Addr(1), 1000).ok());
  ASSERT_TRUE(k.Announce(Req(1, 3, 100), Addr(1), 1001).ok());
  EXPECT_EQ(k.Peers(Hash(1), 1001)->size(), 2u);
}

TEST(SwarmTable, ProgressTimeAndRateFollowLeft) {
  SwarmTable t({}, nullptr, 1);
  ASSERT_TRUE(t.Announce(Req(1, 1, 1000), Addr(1), 1000).ok());
  Peer p = (*t.Peers(Hash(1), 1000))[0].peer;
  EXPECT_EQ(p.progress_at, 1000);
  EXPECT_EQ(p.rate, -1) << "no rate from one announce";
  ASSERT_TRUE(t.Announce(Req(1, 1, 600), Addr(1), 1010).ok());
  p = (*t.Peers(Hash(1), 1010))[0].peer;
  EXPECT_EQ(p.progress_at, 1010);
  EXPECT_EQ(p.rate, 40);
  ASSERT_TRUE(t.Announce(Req(1, 1, 600), Addr(1), 1030).ok());  // nothing came
  p = (*t.Peers(Hash(1), 1030))[0].peer;
  EXPECT_EQ(p.progress_at, 1010);
  EXPECT_EQ(p.rate, 0);
}

}  // namespace
}  // namespace swarmcast::tracker
