// One simulated distribution, start to end: builds the network from the
// config, launches every receiver at time 0, and runs the event loop until
// every receiver holds the whole file (or nothing can move any more: the
// seed left before the swarm held every piece).
//
// The loop takes, in time order, the earliest of: a flow completing, a
// timed event (a receiver joining, a piece passing its hash check, the
// BitTorrent retry tick), or a due re-solve of the rates (flow_network.h).
// Flow completions at one instant are handled before timed events at it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tools/sim/bit_torrent.h"
#include "tools/sim/push_source.h"
#include "tools/sim/sim_config.h"
#include "tools/sim/swarm_state.h"

namespace swarmcast::sim {

struct SimResult {
  std::uint32_t receivers = 0;
  std::uint32_t pieces = 0;
  std::int64_t piece_size = 0;
  std::vector<double> done;  // per receiver (receiver k at k-1); -1: never finished
  std::uint32_t unfinished = 0;
  double startup = 0;                            // launch to joining, per receiver
  double first_piece = -1;                       // a receiver first verified a piece
  double first = 0, p50 = 0, p99 = 0, last = 0;  // over the finished receivers
  ByteCounts bytes;
  double seed_upload = 0;    // payload bytes the seed sent, both paths, delivered
  double seed_written = 0;   // the same as the seed counts it: pushed frames once in its sockets
  double seed_left_at = -1;  // -1: stayed
  std::uint32_t subscribers = 0;
  std::uint32_t forwarders = 0;
  std::uint64_t push_batches = 0;
  std::uint64_t push_batch_targets = 0;
  std::uint64_t flow_events = 0;
  std::uint64_t timed_events = 0;
  std::uint64_t solves = 0;
  double solve_interval = 0;
};

// The interval the automatic mode picks (SimConfig::solve_interval < 0):
// exact up to 256 receivers; above, an eighth of the time one piece takes
// at the receivers' full link rate.
double AutoSolveInterval(const SimConfig& config);

// The quantile q (0..1] of `times` by nearest rank; 0 for none.
double NearestRank(std::vector<double> times, double q);

class Swarm {
 public:
  explicit Swarm(const SimConfig& config);
  SimResult Run();

 private:
  // How a piece reached a receiver.
  // kSeedPush: PIECE frames, forwarded on; kSeedDirect: DIRECT, kept.
  enum class Path : std::uint8_t { kSeedPush, kSeedDirect, kForwarded, kBitTorrent };

  void Join(std::uint32_t node);
  void OnFlow(const FinishedFlow& flow);
  void Deliver(std::uint32_t node, std::uint32_t piece, Path path);
  void Verified(std::uint32_t node, std::uint32_t piece);
  // `node` starts forwarding (its first verified piece from the seed's
  // channel): every other subscriber of the seed subscribes to it.
  void StartForwarder(std::uint32_t node);
  void MaybeSeedLeaves();

  SimConfig config_;
  double solve_interval_;
  double startup_;
  std::vector<bool> slow_;  // filled while s_'s topology is built
  SwarmState s_;
  std::optional<PushSource> push_;  // the seed's
  // Forwarders by node (null: not forwarding), and the nodes that are, in
  // the order they started.
  std::vector<std::unique_ptr<PushSource>> forwarder_of_;
  std::vector<std::uint32_t> forwarders_;
  BitTorrentRepair bt_;
  SimResult result_;
};

}  // namespace swarmcast::sim
