#include "tools/sim/push_source.h"

#include <algorithm>

namespace swarmcast::sim {

namespace {
// A PIECE frame's header in protocol version 2: length, type, piece,
// offset, chunk length (docs/protocol.md), one per chunk.
constexpr double kChunkHeaderBytes = 18;
// Below this a frame counts as delivered or written: float error.
constexpr double kSlackBytes = 1e-3;
}  // namespace

double PushFrameBytes(std::int64_t piece_bytes, std::int64_t chunk_size) {
  const std::int64_t chunks = chunk_size > 0 ? (piece_bytes + chunk_size - 1) / chunk_size : 1;
  return static_cast<double>(piece_bytes) + kChunkHeaderBytes * static_cast<double>(chunks);
}

namespace {
push::PushSchedulerOptions SchedulerOptions(std::uint32_t origin) {
  push::PushSchedulerOptions o;
  if (origin != kSeed) {  // forwarder mode (PushSender::Loop)
    o.source_complete = false;
    o.cover_first = false;
  }
  return o;
}
}  // namespace

PushSource::PushSource(SwarmState& state, std::uint32_t origin, Deliver deliver)
    : s_(state),
      origin_(origin),
      deliver_(std::move(deliver)),
      scheduler_(state.pieces, SchedulerOptions(origin)),
      conns_(state.nodes.size()) {}

void PushSource::SetForwarding(bool on) {
  // PushSender's BacklogSlack: 1 MiB of pieces per other subscriber.
  const auto slack =
      std::max<std::uint32_t>(1, static_cast<std::uint32_t>((1 << 20) / s_.piece_size));
  scheduler_.SetBacklogPolicy(on, on ? slack : 0);
}

bool PushSource::Subscribe(std::uint32_t node) {
  if (!present_ || subscribers_ >= s_.config.max_subscribers) return false;
  NodeState& n = s_.nodes[node];
  std::vector<bool> have(s_.pieces);
  for (std::uint32_t p = 0; p < s_.pieces; ++p) have[p] = n.have.test(p);
  scheduler_.AddSubscriber(node, have);
  if (origin_ == kSeed) n.subscribed = true;
  ++subscribers_;
  if (!scheduler_.IsComplete(node)) ready_.push_back(node);
  return true;
}

void PushSource::OnVerified(std::uint32_t node, std::uint32_t piece) {
  if (present_) scheduler_.OnHave(node, piece);  // ignored for a non-subscriber
}

bool PushSource::CheckWritten(std::uint32_t node) {
  Connection& c = conns_[node];
  if (c.last_written || c.queued > s_.config.push_socket_buffer + kSlackBytes) return false;
  c.last_written = true;
  scheduler_.OnSent(node, c.frames.back().piece);
  if (origin_ == kSeed)
    s_.bytes.push_written += static_cast<double>(s_.PieceBytes(c.frames.back().piece));
  if (!scheduler_.IsComplete(node)) ready_.push_back(node);
  return true;
}

void PushSource::Write(std::uint32_t node, std::uint32_t piece, bool forward) {
  Connection& c = conns_[node];
  const double bytes = PushFrameBytes(s_.PieceBytes(piece), s_.config.chunk_size);
  if (c.frames.empty()) {
    c.head_left = bytes;
    ++busy_;
  }
  c.frames.push_back({piece, bytes, forward});
  c.queued += bytes;
  c.last_written = false;
  CheckWritten(node);  // a frame that fits the buffer is written at once
}

// The connection's next stretch runs to the end of its first frame, or to
// the moment its last frame is all in the buffer, whichever comes first.
void PushSource::StartFlow(std::uint32_t node) {
  Connection& c = conns_[node];
  if (c.flowing || c.frames.empty()) return;
  double bytes = c.head_left;
  if (!c.last_written) {
    const double until_written = c.queued - s_.config.push_socket_buffer;
    if (until_written > kSlackBytes && until_written < bytes) bytes = until_written;
  }
  c.flowing = true;
  c.flow_bytes = bytes;
  c.flow = s_.net.Start(s_.topology.Path(origin_, node), bytes,
                        {FlowKind::kPush, origin_, node, c.frames.front().piece}, s_.now);
}

void PushSource::OnFlowDone(const FinishedFlow& flow) {
  const std::uint32_t node = flow.tag.dst;
  Connection& c = conns_[node];
  c.flowing = false;
  c.head_left -= c.flow_bytes;
  c.queued -= c.flow_bytes;
  if (c.head_left <= kSlackBytes) {
    const Frame done = c.frames.front();
    c.frames.pop_front();
    c.queued = std::max(0.0, c.queued);
    if (c.frames.empty()) --busy_;
    if (!c.frames.empty()) c.head_left = c.frames.front().bytes;
    (origin_ == kSeed ? s_.bytes.push : s_.bytes.push_forwarded) +=
        static_cast<double>(s_.PieceBytes(done.piece));
    s_.bytes.framing += done.bytes - static_cast<double>(s_.PieceBytes(done.piece));
    deliver_(origin_, node, done.piece, done.forward);
  }
  CheckWritten(node);
  Schedule();
  StartFlow(node);
}

// The subscribers the scheduler may choose from: every ready one, or, with
// a window (a what-if), those whose connection is already busy plus as many
// idle ones as the window has room for.
std::vector<push::SubscriberId> PushSource::Offered() const {
  const std::uint32_t window = s_.config.push_window;
  if (window == 0) return ready_;
  std::vector<push::SubscriberId> offered;
  std::uint32_t room = window > busy_ ? window - busy_ : 0;
  for (push::SubscriberId id : ready_) {
    if (!conns_[id].frames.empty()) {
      offered.push_back(id);
    } else if (room > 0) {
      offered.push_back(id);
      --room;
    }
  }
  return offered;
}

void PushSource::Schedule() {
  if (!present_) return;
  while (!ready_.empty()) {
    auto batch = scheduler_.NextBatch(Offered());
    if (!batch) break;
    ++batches_;
    batch_targets_ += batch->targets.size();
    for (push::SubscriberId id : batch->targets) {
      std::erase(ready_, id);
      Write(id, batch->piece, batch->forward);  // may make it ready again at once
      StartFlow(id);
    }
  }
  // Whoever is left holds or is being sent every piece: nothing more for
  // them, now or later (pieces only ever get more copies).
  std::erase_if(ready_, [&](push::SubscriberId id) { return scheduler_.IsComplete(id); });
}

void PushSource::Leave() {
  present_ = false;
  for (Connection& c : conns_) {
    if (!c.frames.empty()) s_.bytes.cut += c.frames.front().bytes - c.head_left;
    if (c.flowing) s_.bytes.cut += s_.net.Cancel(c.flow, s_.now);
    c = Connection{};
  }
  ready_.clear();
  busy_ = 0;
}

}  // namespace swarmcast::sim
