// The BitTorrent repair and re-serve path, modelled simply (not
// libtorrent): every node that holds verified pieces serves them to peers
// that lack them, over at most `upload_slots` flows at a time (libtorrent's
// unchoke slots), one flow per pair of peers, one piece per flow.
//
// - Who is served: an upload slot that frees stays with the same peer for
//   `unchoke_interval` while that peer still wants something (an unchoke
//   lasts); otherwise it goes to a peer that wants something, picked among
//   a few sampled at random from the receivers still missing pieces, the
//   one with the fewest downloads in flight (so downlinks fill evenly). A
//   receiver with room for a download looks the same way among the nodes
//   with a free slot. Idle slots look again every `retry_interval`.
// - Which piece: rarest first (fewest receivers hold it, ties at random) or
//   uniformly at random among those the uploader has and the downloader
//   neither has, nor is fetching, nor is checking. A piece on its way by
//   push can still be fetched here: libtorrent does not know about it, and
//   the duplicate is counted. A fetch whose piece arrives first by push is
//   cancelled.
// - End game (libtorrent's): once every piece a receiver lacks is being
//   fetched, it also asks one more peer for each of those pieces; the
//   first copy to arrive cancels the other.
// - The seed serves over BitTorrent only receivers the push channel does
//   not serve (the wire gate, node/wire_gate.h).
// - Rack-aware (an option, not what libtorrent does): peers in the same
//   rack are looked at first, others only when none there fits.
// - Connectivity is a full mesh: any node may serve any other. (At 10,000
//   nodes a real peer knows a few hundred from the tracker: a random graph
//   that dense spreads pieces like the mesh in a fluid model; not checked.)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "tools/sim/swarm_state.h"

namespace swarmcast::sim {

class BitTorrentRepair {
 public:
  explicit BitTorrentRepair(SwarmState& state) : s_(state) {}

  void OnJoin(std::uint32_t node);
  // `node` verified `piece`: a fetch of it is cancelled, and the node may
  // now serve it.
  void OnVerified(std::uint32_t node, std::uint32_t piece);
  // A BitTorrent flow finished. `deliver` hands the piece to its receiver
  // (before the slot is reused, so the same piece is not asked for again).
  void OnFlowDone(const FinishedFlow& flow, const std::function<void()>& deliver);
  void OnSeedLeaves();
  // Idle slots look for takers again; true if any flow started.
  bool Retry();

 private:
  bool MayServe(std::uint32_t u, std::uint32_t v) const;
  bool Wants(std::uint32_t u, std::uint32_t v) const;  // v lacks something u has
  // What u would send v: false, pieces nobody sends v yet; true, in the end
  // game, pieces others already send it; nothing: none.
  std::optional<bool> Mode(std::uint32_t u, std::uint32_t v) const;
  std::optional<std::uint32_t> PickPiece(std::uint32_t u, std::uint32_t v);
  void Start(std::uint32_t u, std::uint32_t v, std::uint32_t piece, double since);
  // Frees u's slot for flow `id`; returns when that peer got the slot.
  double FreeSlot(std::uint32_t u, std::uint32_t v, FlowId id, std::uint32_t piece);
  // A peer from `pool` for which `fits` holds, the least loaded of a few:
  // from `near`'s rack first when the pool is kept by rack.
  std::optional<std::uint32_t> Choose(const RackedSet& pool, std::uint32_t near,
                                      const std::function<bool(std::uint32_t)>& fits,
                                      const std::function<std::size_t(std::uint32_t)>& load);
  bool FillUploads(std::uint32_t u);
  bool FillDownloads(std::uint32_t v);
  void UpdateOpen(std::uint32_t u);

  SwarmState& s_;
};

// Bytes on the wire for one piece over BitTorrent: the payload plus a
// 13-byte PIECE message header per 16 KiB block.
double BitTorrentPieceBytes(std::int64_t piece_bytes);

}  // namespace swarmcast::sim
