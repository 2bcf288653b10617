// Why a peer of the completion view is not done yet, in words an operator
// acts on. Pure: the peer views and the time in, one reason out.
//
//   stale    no announce for longer than the tracker's stale limit: the
//            node may be down or cut off ("silent for 2m")
//   no-seed  nobody in the swarm has every piece and is still announcing,
//            so the peer cannot finish from the swarm ("no seed in the
//            swarm")
//   no-data  announcing, but `left` has not gone down for idle_after
//            seconds ("no data for 45s"; "no data since it joined 45s
//            ago" when it never got a byte: no seed reachable from there)
//   slow     progressing at under a quarter of the swarm's median rate
//   downloading  none of the above
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracker/swarm_state.h"

namespace swarmcast::tracker {

struct StragglerContext {
  std::int64_t now = 0;
  std::int64_t seeds = 0;         // done, not stopped, not stale
  std::int64_t median_rate = -1;  // bytes/s of the running peers that have a rate; -1: none
  std::int64_t idle_after = 30;   // seconds without progress that count as "no data"
};

struct StragglerReason {
  std::string code;               // stale, no-seed, no-data, slow, downloading
  std::string message;            // one line for a person
  std::int64_t idle_seconds = 0;  // since `left` last went down
};

// The context of one swarm's views (seeds, median rate) at `now`: a done
// peer counts as a seed while it announced within `seed_fresh` seconds.
StragglerContext MakeStragglerContext(const std::vector<PeerView>& peers, std::int64_t now,
                                      std::int64_t seed_fresh, std::int64_t idle_after);
StragglerReason ExplainStraggler(const PeerView& v, const StragglerContext& c);

}  // namespace swarmcast::tracker
