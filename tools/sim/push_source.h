// One sending end of the push channel in the simulation: the seed's, or a
// forwarder's (a receiver that pushes on what the seed assigned it, get
// --forward; node/push/forward_group.h). The real PushScheduler
// (node/push/push_scheduler.h) decides what goes to whom, driven the way
// PushSender drives it:
//
// - A subscriber is "ready" when the frame last written to its socket is
//   all in the socket buffer (PushSender: no job pending). The scheduler's
//   batches go only to ready subscribers, and a frame counts as sent
//   (OnSent) once it is all in the buffer, which is before it arrives: with
//   a send buffer of B bytes, up to B bytes of frames are sent but not yet
//   delivered. That is why the scheduler's cover pass ends, and its
//   fan-out starts, before the pieces of the cover pass have arrived.
// - Each subscriber's connection delivers its frames in order, as one TCP
//   flow at a time from the seed's uplink (a flow per stretch between two
//   scheduler decisions: the moment a frame is all in the buffer splits a
//   frame's flow in two).
// - Pieces a subscriber verified from other peers reach the scheduler as
//   OnHave (the receiver's HAVE frames).
// - A what-if the sender does not have (SimConfig::push_window): frames go
//   to at most that many subscribers at a time.
// - A forwarder's scheduler runs in forwarder mode, as PushSender's does: it
//   holds only the pieces given to SourceHas() (those that came to it from
//   the seed's channel and verified) and has no cover pass. The seed, once
//   it has forwarders, assigns its cover pass by backlog and waits for the
//   forwarders' queues (SetForwarding, as PushSender does on LISTEN).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "node/push/push_scheduler.h"
#include "tools/sim/swarm_state.h"

namespace swarmcast::sim {

class PushSource {
 public:
  // `deliver(origin, node, piece, forward)` is called when a pushed piece
  // has arrived. `origin`: kSeed, or the receiver that forwards;
  // `forward`: it came as PIECE, not DIRECT (PushBatch::forward).
  using Deliver = std::function<void(std::uint32_t origin, std::uint32_t node, std::uint32_t piece,
                                     bool forward)>;
  PushSource(SwarmState& state, std::uint32_t origin, Deliver deliver);

  std::uint32_t origin() const { return origin_; }
  // A receiver subscribes with what it holds. False when the source is full
  // (PushSender answers BYE "subscriber limit reached") or gone.
  bool Subscribe(std::uint32_t node);
  bool subscribed(std::uint32_t node) const { return scheduler_.HasSubscriber(node); }
  // The receiver verified `piece` (from any path): its HAVE.
  void OnVerified(std::uint32_t node, std::uint32_t piece);
  // A forwarder now holds `piece` and may push it on.
  void SourceHas(std::uint32_t piece) { scheduler_.SourceHas(piece); }
  // The seed has forwarders now (PushSender::Loop's policy on LISTEN).
  void SetForwarding(bool on);
  // A push flow finished.
  void OnFlowDone(const FinishedFlow& flow);
  // Writes frames to every ready subscriber that the scheduler has work for.
  void Schedule();
  // The source leaves: every frame not yet delivered is lost.
  void Leave();

  std::uint32_t subscribers() const { return subscribers_; }
  std::uint64_t batches() const { return batches_; }
  std::uint64_t batch_targets() const { return batch_targets_; }

 private:
  struct Frame {
    std::uint32_t piece;
    double bytes;
    bool forward;
  };
  // One subscriber's connection: frames written and not yet delivered,
  // the first one partly delivered.
  struct Connection {
    std::deque<Frame> frames;
    double head_left = 0;      // bytes of frames.front() not yet delivered
    double queued = 0;         // bytes of every frame not yet delivered
    bool last_written = true;  // frames.back() is all in the socket buffer
    bool flowing = false;
    FlowId flow = 0;
    double flow_bytes = 0;
  };

  void Write(std::uint32_t node, std::uint32_t piece, bool forward);
  // Marks the last frame written if it fits the buffer now; true if so.
  bool CheckWritten(std::uint32_t node);
  void StartFlow(std::uint32_t node);
  std::vector<push::SubscriberId> Offered() const;

  SwarmState& s_;
  std::uint32_t origin_;
  Deliver deliver_;
  bool present_ = true;
  push::PushScheduler scheduler_;
  std::vector<Connection> conns_;  // by node id
  std::vector<push::SubscriberId> ready_;
  std::uint32_t subscribers_ = 0;
  std::uint32_t busy_ = 0;  // connections with frames not yet delivered
  std::uint64_t batches_ = 0;
  std::uint64_t batch_targets_ = 0;
};

// Bytes on the wire for one pushed piece: its payload plus one frame header
// per chunk (protocol version 2 sends pieces as chunks, docs/protocol.md).
double PushFrameBytes(std::int64_t piece_bytes, std::int64_t chunk_size);

}  // namespace swarmcast::sim
