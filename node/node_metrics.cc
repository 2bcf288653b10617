#include "node/node_metrics.h"

#include <array>

#include "node/metrics_text.h"

namespace swarmcast::node {
namespace {

using Type = MetricsText::Type;

// Every state a node reports, so that each has a series (0 or 1) and an
// alert on "stalled in checking" needs no absent() tricks.
constexpr std::array<std::string_view, 10> kStates = {
    "fetching metainfo", "starting",  "publishing", "checking", "downloading",
    "moving into place", "lingering", "complete",   "seeding",  "stopping"};

}  // namespace

void NodeMetrics::Publish(const NodeSample& sample) {
  MutexLock lock(mu_);
  sample_ = sample;
}

NodeSample NodeMetrics::Snapshot() const {
  MutexLock lock(mu_);
  return sample_;
}

std::string NodeMetrics::Render() const {
  const NodeSample s = Snapshot();
  MetricsText m;
  m.Family("swarmcast_node_info", Type::kGauge, "The swarm this process serves (value always 1).");
  m.Sample({{"role", s.role}, {"name", s.name}, {"info_hash", s.info_hash}}, 1);
  m.Family("swarmcast_node_state", Type::kGauge, "1 for the transfer's current state, else 0.");
  bool known = false;
  for (std::string_view st : kStates) {
    known |= st == s.state;
    m.Sample({{"state", st}}, st == s.state ? 1 : 0);
  }
  if (!known && !s.state.empty()) m.Sample({{"state", s.state}}, 1);

  m.Family("swarmcast_node_payload_bytes_total", Type::kCounter,
           "Payload bytes moved, by direction (in, out) and path (wire: BitTorrent, push: the "
           "seed's push channel).");
  m.Sample({{"direction", "in"}, {"path", "wire"}}, static_cast<double>(s.in_wire_bytes));
  m.Sample({{"direction", "in"}, {"path", "push"}}, static_cast<double>(s.in_push_bytes));
  m.Sample({{"direction", "out"}, {"path", "wire"}}, static_cast<double>(s.out_wire_bytes));
  m.Sample({{"direction", "out"}, {"path", "push"}}, static_cast<double>(s.out_push_bytes));
  m.Family("swarmcast_node_payload_rate_bytes", Type::kGauge,
           "Payload bytes per second over the last few seconds, both paths.");
  m.Sample({{"direction", "in"}}, s.down_rate);
  m.Sample({{"direction", "out"}}, s.up_rate);

  m.Family("swarmcast_node_size_bytes", Type::kGauge, "Size of the swarm's content.");
  m.Sample(static_cast<double>(s.size_bytes));
  m.Family("swarmcast_node_done_bytes", Type::kGauge, "Verified content bytes this node holds.");
  m.Sample(static_cast<double>(s.done_bytes));
  m.Family("swarmcast_node_pieces", Type::kGauge, "Pieces of the swarm's content.");
  m.Sample(static_cast<double>(s.pieces_total));
  m.Family("swarmcast_node_pieces_have", Type::kGauge, "Pieces this node has verified.");
  m.Sample(static_cast<double>(s.pieces_have));

  m.Family("swarmcast_node_peers", Type::kGauge, "BitTorrent peers connected now.");
  m.Sample(static_cast<double>(s.peers));
  m.Family("swarmcast_node_seeds", Type::kGauge, "Connected peers that hold every piece.");
  m.Sample(static_cast<double>(s.seeds));

  m.Family("swarmcast_node_hash_failures_total", Type::kCounter,
           "Pieces that failed their hash check (any path).");
  m.Sample(static_cast<double>(s.hash_failures));
  m.Family("swarmcast_node_failed_bytes_total", Type::kCounter,
           "Received bytes that failed a hash check.");
  m.Sample(static_cast<double>(s.failed_bytes));
  m.Family("swarmcast_node_banned_peers_total", Type::kCounter,
           "Peers banned for sending data that failed the hash check.");
  m.Sample(static_cast<double>(s.banned_peers));
  m.Family("swarmcast_node_disk_errors_total", Type::kCounter,
           "File and storage errors (each ends the transfer with exit 5).");
  m.Sample(static_cast<double>(s.disk_errors));

  m.Family("swarmcast_node_push_active", Type::kGauge,
           "1 while the push channel is in use (seed: a sender runs; get: subscribed).");
  m.Sample(s.push ? 1 : 0);
  m.Family("swarmcast_node_push_pieces_total", Type::kCounter,
           "Whole pieces moved by the push channel (seed: sent; get: received).");
  m.Sample(static_cast<double>(s.push_pieces));
  if (s.role == "seed") {
    m.Family("swarmcast_node_push_subscribers", Type::kGauge, "Push subscribers now.");
    m.Sample(static_cast<double>(s.push_subscribers));
    m.Family("swarmcast_node_push_subscribers_dropped_total", Type::kCounter,
             "Push subscribers dropped (too slow, or a protocol error).");
    m.Sample(static_cast<double>(s.push_subscribers_dropped));
    const std::string backend = s.fanout_backend.empty() ? "none" : s.fanout_backend;
    m.Family("swarmcast_node_fanout_calls_total", Type::kCounter,
             "Fan-out backend calls that started a piece, by backend.");
    m.Sample({{"backend", backend}}, static_cast<double>(s.fanout_calls));
    m.Family("swarmcast_node_fanout_sockets_total", Type::kCounter,
             "Sockets served by those calls (sockets per call = this / calls_total).");
    m.Sample({{"backend", backend}}, static_cast<double>(s.fanout_sockets));
  }
  m.Family("swarmcast_node_elapsed_seconds", Type::kGauge, "Seconds since the transfer started.");
  m.Sample(s.elapsed_seconds);
  return m.Take();
}

}  // namespace swarmcast::node
