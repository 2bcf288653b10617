// The state of one simulated distribution that the push model and the
// BitTorrent model share: the clock, the flows, every node's pieces, and
// the byte counters. Owned by Swarm (swarm.h), which runs the event loop.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "tools/sim/event_queue.h"
#include "tools/sim/flow_network.h"
#include "tools/sim/indexed_set.h"
#include "tools/sim/piece_set.h"
#include "tools/sim/sim_config.h"
#include "tools/sim/topology.h"

namespace swarmcast::sim {

inline constexpr std::uint32_t kSeed = 0;

// One BitTorrent upload slot in use (an unchoked peer being served).
struct UploadSlot {
  std::uint32_t peer = 0;
  double since = 0;  // when this peer got the slot (unchoke rotation)
  FlowId flow = 0;
  std::uint32_t piece = 0;
};

// One BitTorrent fetch in flight to a node.
struct Fetch {
  std::uint32_t piece = 0;
  FlowId flow = 0;
  std::uint32_t from = 0;
};

struct NodeState {
  PieceSet have;       // verified
  PieceSet fetching;   // on its way over BitTorrent
  PieceSet doubled;    // on its way from two peers (end game)
  PieceSet verifying;  // received, hash check pending
  PieceSet from_seed;  // the copy being checked came by the seed's push channel
  std::uint32_t have_count = 0;
  bool joined = false;
  bool complete = false;
  bool gone = false;        // left the swarm (the seed, after its copies)
  bool subscribed = false;  // served by the seed's push channel
  bool forwarding = false;  // pushes on what the seed pushed it (SimConfig::forward)
  double join_time = 0;
  double done_time = -1;
  std::vector<UploadSlot> uploads;  // BitTorrent uploads in flight from it
  std::vector<Fetch> fetches;       // BitTorrent fetches in flight to it
  bool slow = false;
};

struct ByteCounts {
  double push = 0;            // seed -> subscribers, push channel, delivered
  double push_forwarded = 0;  // forwarder -> its subscribers, push channel, delivered
  double push_written = 0;    // pushed frames all in sockets (what the seed counts as sent)
  double bt_from_seed = 0;    // seed -> peers, BitTorrent wire
  double bt_from_peers = 0;   // peer -> peer, BitTorrent wire
  double duplicate = 0;       // delivered pieces the receiver already had
  double cut = 0;             // moved by flows cut short (piece got otherwise, seed left)
  double framing = 0;         // headers: push chunk headers, BitTorrent block headers
};

class SwarmState {
 public:
  SwarmState(const SimConfig& config, Topology topology, double solve_interval);

  const SimConfig& config;
  Topology topology;
  FlowNetwork net;
  EventQueue events;
  std::vector<NodeState> nodes;  // index 0: the seed
  std::uint32_t pieces;
  std::int64_t piece_size;
  double now = 0;
  std::mt19937_64 rng;
  ByteCounts bytes;
  std::uint32_t finished = 0;
  double first_piece = -1;  // when a receiver first verified a piece
  bool seed_present = true;
  std::vector<std::uint32_t> holders;  // receivers holding each verified piece
  RackedSet incomplete;                // joined receivers still missing pieces
  RackedSet open_uploaders;            // nodes with a free BitTorrent upload slot

  std::int64_t PieceBytes(std::uint32_t p) const;
  // Fewest receivers holding any one piece (copies in the swarm).
  std::uint32_t MinHolders() const { return min_holders_; }
  // Records that `node` verified `piece`; keeps the holder counts.
  void MarkVerified(std::uint32_t node, std::uint32_t piece);

 private:
  std::vector<std::uint32_t> pieces_at_;  // how many pieces have exactly c holders
  std::uint32_t min_holders_ = 0;
};

}  // namespace swarmcast::sim
