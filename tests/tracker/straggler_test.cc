// Unit: why the completion view says a peer is not done (tracker/straggler.h).
#include "tracker/straggler.h"

#include <gtest/gtest.h>

namespace swarmcast::tracker {
namespace {

PeerView View(PeerState state, std::int64_t left, std::int64_t last_announce,
              std::int64_t progress_at, std::int64_t rate, std::int64_t downloaded = 1) {
  PeerView v{};
  v.state = state;
  v.peer.left = left;
  v.peer.first_seen = 0;
  v.peer.last_announce = last_announce;
  v.peer.progress_at = progress_at;
  v.peer.rate = rate;
  v.peer.downloaded = downloaded;
  return v;
}

TEST(Straggler, EachReason) {
  const std::int64_t now = 1000;
  std::vector<PeerView> swarm = {
      View(PeerState::kDone, 0, 995, 995, -1),         // a seed
      View(PeerState::kRunning, 500, 995, 995, 1000),  // healthy
      View(PeerState::kRunning, 500, 995, 990, 1200),  // healthy
      View(PeerState::kRunning, 900, 995, 995, 100),   // slow
      View(PeerState::kRunning, 900, 995, 900, 0),     // no data for 100 s
      View(PeerState::kRunning, 1000, 995, 0, -1, 0),  // never got a byte
      View(PeerState::kStale, 700, 700, 650, 50),      // silent
  };
  const StragglerContext c = MakeStragglerContext(swarm, now, 180, 30);
  EXPECT_EQ(c.seeds, 1);
  EXPECT_EQ(c.median_rate, 1000) << "the upper median of 0, 100, 1000, 1200";
  const StragglerReason ok = ExplainStraggler(swarm[1], c);
  EXPECT_EQ(ok.code, "downloading");
  EXPECT_NE(ok.message.find("1000.0 B/s"), std::string::npos) << ok.message;
  const StragglerReason slow = ExplainStraggler(swarm[3], c);
  EXPECT_EQ(slow.code, "slow") << "under a quarter of the median";
  EXPECT_NE(slow.message.find("100.0 B/s"), std::string::npos) << slow.message;
  const StragglerReason idle = ExplainStraggler(swarm[4], c);
  EXPECT_EQ(idle.code, "no-data");
  EXPECT_EQ(idle.idle_seconds, 100);
  EXPECT_EQ(idle.message, "no data for 100s");
  EXPECT_NE(ExplainStraggler(swarm[5], c).message.find("since it joined"), std::string::npos);
  const StragglerReason silent = ExplainStraggler(swarm[6], c);
  EXPECT_EQ(silent.code, "stale");
  EXPECT_EQ(silent.message, "silent for 5m");
}

TEST(Straggler, NoSeedWhenNobodyFinishedIsStillAnnouncing) {
  std::vector<PeerView> swarm = {
      View(PeerState::kDone, 0, 500, 500, -1),  // a seed silent past 180 s
      View(PeerState::kRunning, 500, 995, 995, 10),
  };
  swarm[0].peer.stopped = false;
  StragglerContext c = MakeStragglerContext(swarm, 1000, 180, 30);
  EXPECT_EQ(c.seeds, 0);
  EXPECT_EQ(ExplainStraggler(swarm[1], c).code, "no-seed");
  swarm[0].peer.last_announce = 990;
  swarm[0].peer.stopped = true;  // sent `stopped`: kept for the view, serves nobody
  EXPECT_EQ(ExplainStraggler(swarm[1], MakeStragglerContext(swarm, 1000, 180, 30)).code, "no-seed");
}

}  // namespace
}  // namespace swarmcast::tracker
