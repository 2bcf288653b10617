#include "tools/sim/swarm_state.h"

#include <algorithm>

#include "proto/piece_size.h"

namespace swarmcast::sim {

namespace {
std::vector<std::uint32_t> RackOf(const Topology& t) {
  std::vector<std::uint32_t> r(t.nodes());
  for (std::uint32_t n = 0; n < t.nodes(); ++n) r[n] = t.rack(n);
  return r;
}

std::int64_t PieceSizeFor(const SimConfig& c) {
  return c.piece_size > 0 ? c.piece_size : proto::ChoosePieceSize(c.file_size);
}
}  // namespace

SwarmState::SwarmState(const SimConfig& cfg, Topology topo, double solve_interval)
    : config(cfg),
      topology(std::move(topo)),
      net(topology.capacity(), solve_interval),
      nodes(cfg.receivers + 1),
      pieces(
          static_cast<std::uint32_t>((cfg.file_size + PieceSizeFor(cfg) - 1) / PieceSizeFor(cfg))),
      piece_size(PieceSizeFor(cfg)),
      rng(cfg.rng_seed),
      holders(pieces, 0),
      incomplete(cfg.receivers + 1, cfg.rack_aware ? topology.racks() : 0, RackOf(topology)),
      open_uploaders(cfg.receivers + 1, cfg.rack_aware ? topology.racks() : 0, RackOf(topology)),
      pieces_at_(cfg.receivers + 2, 0) {
  pieces_at_[0] = pieces;
  for (NodeState& n : nodes) {
    n.have = PieceSet(pieces);
    n.fetching = PieceSet(pieces);
    n.doubled = PieceSet(pieces);
    n.verifying = PieceSet(pieces);
    n.from_seed = PieceSet(pieces);
  }
  NodeState& seed = nodes[kSeed];
  for (std::uint32_t p = 0; p < pieces; ++p) seed.have.set(p);
  seed.have_count = pieces;
  seed.joined = seed.complete = true;
  seed.done_time = 0;
}

std::int64_t SwarmState::PieceBytes(std::uint32_t p) const {
  const std::int64_t start = static_cast<std::int64_t>(p) * piece_size;
  return std::min(piece_size, config.file_size - start);
}

void SwarmState::MarkVerified(std::uint32_t node, std::uint32_t piece) {
  NodeState& n = nodes[node];
  n.verifying.reset(piece);
  n.have.set(piece);
  ++n.have_count;
  if (node == kSeed) return;
  if (first_piece < 0) first_piece = now;
  const std::uint32_t c = holders[piece]++;
  --pieces_at_[c];
  ++pieces_at_[c + 1];
  while (min_holders_ < config.receivers && pieces_at_[min_holders_] == 0) ++min_holders_;
}

}  // namespace swarmcast::sim
