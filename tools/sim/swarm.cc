#include "tools/sim/swarm.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "proto/piece_size.h"

namespace swarmcast::sim {

namespace {

// Per-node links: the seed's, the slow receivers' (a seeded random choice
// of round(fraction x N) receivers), and everyone else's.
Topology BuildTopology(const SimConfig& c, std::vector<bool>* slow) {
  const double eff = c.tcp_efficiency;
  const double seed_link = c.seed_link > 0 ? c.seed_link : c.link;
  const double slow_link = c.slow_link > 0 ? c.slow_link : c.link / 10;
  TopologySpec spec;
  spec.up.assign(c.receivers + 1, c.link * eff);
  spec.down.assign(c.receivers + 1, c.link * eff);
  spec.up[kSeed] = spec.down[kSeed] = seed_link * eff;
  slow->assign(c.receivers + 1, false);
  const auto count = static_cast<std::uint32_t>(std::lround(c.slow_fraction * c.receivers));
  std::vector<std::uint32_t> ids(c.receivers);
  std::iota(ids.begin(), ids.end(), 1u);
  std::mt19937_64 rng(c.rng_seed ^ 0x5109);  // its own stream: the choice does not shift the run's
  std::shuffle(ids.begin(), ids.end(), rng);
  for (std::uint32_t i = 0; i < std::min(count, c.receivers); ++i) {
    (*slow)[ids[i]] = true;
    spec.up[ids[i]] = spec.down[ids[i]] = slow_link * eff;
  }
  if (c.rack_size > 0) {
    spec.rack_size = c.rack_size;
    spec.rack_uplink = c.rack_size * c.link * eff / std::max(c.oversubscription, 1e-9);
  }
  return Topology(spec);
}

double Startup(const SimConfig& c) {
  const std::int64_t piece = c.piece_size > 0 ? c.piece_size : proto::ChoosePieceSize(c.file_size);
  const double pieces = std::ceil(static_cast<double>(c.file_size) / static_cast<double>(piece));
  // Announce, metainfo fetch (20 bytes of hash per piece) and push HELLO:
  // three round trips and the metainfo's bytes.
  const double metainfo_bytes = 20 * pieces + 256;
  return c.process_start + c.shared_host_start * c.receivers + 3 * c.rtt +
         metainfo_bytes / (c.link * c.tcp_efficiency);
}

}  // namespace

double AutoSolveInterval(const SimConfig& c) {
  if (c.receivers <= 256) return 0;
  const std::int64_t piece = c.piece_size > 0 ? c.piece_size : proto::ChoosePieceSize(c.file_size);
  return static_cast<double>(piece) / (c.link * c.tcp_efficiency) / 8;
}

double NearestRank(std::vector<double> times, double q) {
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(times.size())));
  return times[std::clamp<std::size_t>(rank, 1, times.size()) - 1];
}

Swarm::Swarm(const SimConfig& config)
    : config_(config),
      solve_interval_(config.solve_interval < 0 ? AutoSolveInterval(config)
                                                : config.solve_interval),
      startup_(Startup(config)),
      s_(config_, BuildTopology(config_, &slow_), solve_interval_),
      bt_(s_) {
  for (std::uint32_t v = 0; v < s_.nodes.size(); ++v) s_.nodes[v].slow = slow_[v];
  if (config_.push) {
    push_.emplace(s_, kSeed, [this](std::uint32_t, std::uint32_t v, std::uint32_t p, bool forward) {
      Deliver(v, p, forward ? Path::kSeedPush : Path::kSeedDirect);
    });
  }
  if (config_.push && config_.forward) forwarder_of_.resize(s_.nodes.size());
}

void Swarm::Join(std::uint32_t node) {
  NodeState& n = s_.nodes[node];
  n.joined = true;
  n.join_time = s_.now;
  s_.incomplete.insert(node);
  if (push_ && push_->Subscribe(node)) {
    push_->Schedule();
    // The seed's PEERS: the forwarders so far.
    for (std::uint32_t f : forwarders_) {
      if (forwarder_of_[f]->Subscribe(node)) forwarder_of_[f]->Schedule();
    }
  }
  bt_.OnJoin(node);
}

void Swarm::StartForwarder(std::uint32_t node) {
  auto& f = forwarder_of_[node];
  f = std::make_unique<PushSource>(s_, node,
                                   [this](std::uint32_t, std::uint32_t v, std::uint32_t p, bool) {
                                     Deliver(v, p, Path::kForwarded);
                                   });
  forwarders_.push_back(node);
  s_.nodes[node].forwarding = true;
  // In the order the subscribers' HELLOs happen to arrive (random: each
  // connects when the seed's PEERS reaches it), which decides who gets a
  // place when the forwarder's subscriber limit is reached.
  std::vector<std::uint32_t> order(s_.nodes.size() - 1);
  std::iota(order.begin(), order.end(), 1u);
  std::shuffle(order.begin(), order.end(), s_.rng);
  for (std::uint32_t v : order) {
    if (v != node && s_.nodes[v].subscribed && !s_.nodes[v].complete) f->Subscribe(v);
  }
  push_->SetForwarding(true);
}

void Swarm::Deliver(std::uint32_t node, std::uint32_t piece, Path path) {
  NodeState& n = s_.nodes[node];
  if (n.have.test(piece) || n.verifying.test(piece)) {
    s_.bytes.duplicate += static_cast<double>(s_.PieceBytes(piece));
    return;
  }
  n.verifying.set(piece);
  if (path == Path::kSeedPush) n.from_seed.set(piece);
  if (config_.verify_rate > 0) {
    const double delay = static_cast<double>(s_.PieceBytes(piece)) / config_.verify_rate;
    s_.events.Schedule({s_.now + delay, EventKind::kPieceVerified, node, piece});
  } else {
    Verified(node, piece);
  }
}

void Swarm::Verified(std::uint32_t node, std::uint32_t piece) {
  s_.MarkVerified(node, piece);
  NodeState& n = s_.nodes[node];
  if (n.have_count == s_.pieces) {
    n.complete = true;
    n.done_time = s_.now;
    ++s_.finished;
    s_.incomplete.erase(node);
  }
  // HAVE on every channel the node is subscribed to. With forwarders a HAVE
  // can shorten a forwarder's backlog, and so end the seed's wait for it
  // (PushScheduler's backlog_slack_pieces): the seed schedules again.
  if (push_) {
    push_->OnVerified(node, piece);
    if (!forwarders_.empty()) push_->Schedule();
  }
  for (std::uint32_t f : forwarders_) {
    if (f != node) forwarder_of_[f]->OnVerified(node, piece);
  }
  // A forwarder pushes on what came to it from the seed's channel as PIECE
  // (not DIRECT), once it passed the check (ForwardGroup::OnPieceVerified);
  // once the seed has left, everything.
  // (A HAVE only takes work away from a forwarder: none other needs
  // scheduling here.)
  if (!forwarder_of_.empty() && (n.from_seed.test(piece) || !s_.seed_present)) {
    if (!forwarder_of_[node]) StartForwarder(node);
    forwarder_of_[node]->SourceHas(piece);
    forwarder_of_[node]->Schedule();
  }
  bt_.OnVerified(node, piece);
  MaybeSeedLeaves();
}

void Swarm::MaybeSeedLeaves() {
  const std::uint32_t k = config_.seed_leaves_after_copies;
  if (k == 0 || !s_.seed_present) return;
  if (s_.MinHolders() < k && s_.finished < k) return;
  s_.seed_present = false;
  s_.nodes[kSeed].gone = true;
  result_.seed_left_at = s_.now;
  if (push_) push_->Leave();
  // Each forwarder's channel to the seed ends: from now on it forwards
  // every piece it holds (ForwardGroup::OnSeedChannelEnded), or what the
  // seed sent as DIRECT would reach no one its wire gate keeps off.
  for (std::uint32_t f : forwarders_) {
    for (std::uint32_t p = 0; p < s_.pieces; ++p) {
      if (s_.nodes[f].have.test(p)) forwarder_of_[f]->SourceHas(p);
    }
    forwarder_of_[f]->Schedule();
  }
  bt_.OnSeedLeaves();
}

void Swarm::OnFlow(const FinishedFlow& flow) {
  if (flow.tag.kind == FlowKind::kPush) {  // the source delivers
    PushSource& source = flow.tag.src == kSeed ? *push_ : *forwarder_of_[flow.tag.src];
    return source.OnFlowDone(flow);
  }
  const auto payload = static_cast<double>(s_.PieceBytes(flow.tag.piece));
  s_.bytes.framing += flow.bytes - payload;
  (flow.tag.src == kSeed ? s_.bytes.bt_from_seed : s_.bytes.bt_from_peers) += payload;
  bt_.OnFlowDone(flow, [&] { Deliver(flow.tag.dst, flow.tag.piece, Path::kBitTorrent); });
}

SimResult Swarm::Run() {
  bt_.OnJoin(kSeed);  // the seed serves over BitTorrent from the start
  // Everyone is launched at once, so who subscribes first (and so who gets
  // one of the seed's max_subscribers places) is down to chance: join in a
  // seeded random order, not by id (which would also put every subscriber
  // in the first racks).
  std::vector<std::uint32_t> order(config_.receivers);
  std::iota(order.begin(), order.end(), 1u);
  std::mt19937_64 join_rng(config_.rng_seed ^ 0x701e);
  std::shuffle(order.begin(), order.end(), join_rng);
  for (std::uint32_t v : order) s_.events.Schedule({startup_, EventKind::kNodeJoins, v, 0});
  if (config_.retry_interval > 0) {
    s_.events.Schedule({config_.retry_interval, EventKind::kBitTorrentTick, 0, 0});
  }
  while (s_.finished < config_.receivers) {
    if (s_.net.exact() && s_.net.dirty()) s_.net.Resolve(s_.now);
    const double t_flow = s_.net.NextCompletion();
    const double t_event = s_.events.next_time();
    const double t_solve = s_.net.exact() ? kNever : s_.net.NextSolveTime();
    const double t = std::min({t_flow, t_event, t_solve});
    if (t == kNever) break;  // nothing can move: the rest never finish
    s_.now = std::max(s_.now, t);
    if (t_solve <= t_flow && t_solve <= t_event) {
      s_.net.Resolve(s_.now);
    } else if (t_flow <= t_event) {
      while (auto flow = s_.net.PopCompleted(s_.now)) {
        ++result_.flow_events;
        OnFlow(*flow);
      }
    } else {
      const Event e = s_.events.Pop();
      ++result_.timed_events;
      switch (e.kind) {
        case EventKind::kNodeJoins:
          Join(e.node);
          break;
        case EventKind::kPieceVerified:
          Verified(e.node, e.piece);
          break;
        case EventKind::kBitTorrentTick: {
          const bool started = bt_.Retry();
          // Stop ticking once nothing else can happen: then the loop ends.
          if (started || s_.net.active() > 0 || !s_.events.empty()) {
            s_.events.Schedule({s_.now + config_.retry_interval, EventKind::kBitTorrentTick});
          }
          break;
        }
      }
    }
  }

  SimResult& r = result_;
  r.receivers = config_.receivers;
  r.pieces = s_.pieces;
  r.piece_size = s_.piece_size;
  r.startup = startup_;
  std::vector<double> finished;
  for (std::uint32_t v = 1; v < s_.nodes.size(); ++v) {
    const double t = s_.nodes[v].complete ? s_.nodes[v].done_time : -1;
    r.done.push_back(t);
    if (t >= 0) finished.push_back(t);
  }
  r.unfinished = config_.receivers - static_cast<std::uint32_t>(finished.size());
  if (!finished.empty()) {
    r.first = *std::min_element(finished.begin(), finished.end());
    r.last = *std::max_element(finished.begin(), finished.end());
    r.p50 = NearestRank(finished, 0.50);
    r.p99 = NearestRank(finished, 0.99);
  }
  r.bytes = s_.bytes;
  r.seed_upload = s_.bytes.push + s_.bytes.bt_from_seed;
  r.seed_written = s_.bytes.push_written + s_.bytes.bt_from_seed;
  r.first_piece = s_.first_piece;
  if (push_) {
    r.subscribers = push_->subscribers();
    r.forwarders = static_cast<std::uint32_t>(forwarders_.size());
    r.push_batches = push_->batches();
    r.push_batch_targets = push_->batch_targets();
  }
  r.solves = s_.net.solves();
  r.solve_interval = solve_interval_;
  return r;
}

}  // namespace swarmcast::sim
