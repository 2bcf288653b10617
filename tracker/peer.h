// One peer of one swarm as the tracker remembers it.
#pragma once

#include <cstdint>

#include "tracker/types.h"

namespace swarmcast::tracker {

struct Peer {
  PeerId id{};
  PeerAddress addr;
  // The BEP 7 key the peer announced with, if any. The entry is bound to
  // (id, addr.ip) and, with a key, to the key: see SwarmTable::Announce.
  std::uint64_t key = 0;
  bool has_key = false;
  std::int64_t uploaded = 0;
  std::int64_t downloaded = 0;
  std::int64_t left = 0;
  AnnounceEvent last_event = AnnounceEvent::kNone;
  std::int64_t first_seen = 0;     // unix seconds
  std::int64_t last_announce = 0;  // unix seconds
  // A peer that finished and then sent `stopped`: kept for the completion
  // view until it expires, never handed out to others.
  bool stopped = false;
  // Counted once in the swarm's `completed` total.
  bool counted_complete = false;
  // When this peer was last handed to the StateSink (unix seconds).
  std::int64_t persisted_at = 0;
  // Progress, for the straggler view (memory only; a restored peer starts
  // from its last announce): when `left` last went down, and the rate it
  // went down at between the last two announces that were at least a
  // second apart (bytes/s; -1 until there are two).
  std::int64_t progress_at = 0;
  std::int64_t rate = -1;
  std::int64_t rate_left = 0, rate_at = 0;
};

}  // namespace swarmcast::tracker
