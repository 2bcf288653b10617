// What a seed or get exposes at /metrics (metrics_server.h): one snapshot
// of the transfer's own counters, published by the control thread at every
// progress tick (500 ms) and once more when the transfer ends, and read by
// the metrics server's thread. Every value is one the transfer already
// keeps for its --json report and its status file, so a scrape and the
// report agree (the report is the last snapshot).
//
// Threads: Publish() from the control thread, Render() from any thread;
// the snapshot is copied under mu_, so a scrape never sees half a tick.
#pragma once

#include <cstdint>
#include <string>

#include "proto/mutex.h"

namespace swarmcast::node {

struct NodeSample {
  std::string role;   // "seed" or "get"
  std::string state;  // the status file's state ("downloading", "lingering", ...)
  std::string name;
  std::string info_hash;
  std::int64_t size_bytes = 0;
  std::int64_t done_bytes = 0;  // verified payload on disk
  std::int64_t pieces_total = 0;
  std::int64_t pieces_have = 0;
  // Payload by direction and path; the totals the report calls
  // downloaded_{wire,push}_bytes and uploaded_{wire,push}_bytes.
  std::int64_t in_wire_bytes = 0, in_push_bytes = 0;
  std::int64_t out_wire_bytes = 0, out_push_bytes = 0;
  double down_rate = 0, up_rate = 0;  // bytes/s over the last seconds
  std::int64_t peers = 0, seeds = 0;  // BitTorrent connections now
  std::int64_t hash_failures = 0;
  std::int64_t failed_bytes = 0;
  std::int64_t banned_peers = 0;
  std::int64_t disk_errors = 0;  // file and storage errors libtorrent reported
  // Push channel. A seed: subscribers now and dropped, pieces sent, and
  // its fan-out backend ("kmod", "splice", "sendfile", "copy") with the
  // calls it made and the sockets those calls served. A get: pieces
  // received by push and whether it is subscribed.
  bool push = false;  // the channel is in use (a sender runs / a subscription was made)
  std::string fanout_backend;
  std::int64_t push_subscribers = 0;
  std::int64_t push_subscribers_dropped = 0;
  std::int64_t push_pieces = 0;
  std::int64_t fanout_calls = 0;
  std::int64_t fanout_sockets = 0;
  double elapsed_seconds = 0;
};

class NodeMetrics {
 public:
  void Publish(const NodeSample& sample) EXCLUDES(mu_);
  NodeSample Snapshot() const EXCLUDES(mu_);
  // The Prometheus text of the latest snapshot.
  std::string Render() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  NodeSample sample_ GUARDED_BY(mu_);
};

}  // namespace swarmcast::node
