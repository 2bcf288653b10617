// A metainfo from the swarm's peers instead of a tracker (BEP 9,
// ut_metadata): `get INFOHASH --connect ADDR` with no tracker, or with one
// that does not answer. Every swarmcast session has libtorrent's
// ut_metadata extension (the default plugins of lt::session_params), so a
// seed or a finished get hands its metadata to whoever asks.
//
// What comes back is only the `info` dictionary, which hashes to the
// info-hash asked for (libtorrent checks that before it accepts the
// metadata); the caller still runs it through proto::CheckMetainfo like a
// tracker's metainfo. Its size is bounded by libtorrent's
// max_metadata_size, set here to MetainfoLimits::max_bytes.
//
// Blocking, on the calling thread, in a short-lived session of its own
// that downloads nothing (upload mode, an empty scratch save path).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "node/transfer.h"
#include "proto/endpoint.h"
#include "proto/log.h"
#include "proto/result.h"

namespace swarmcast::node {

struct PeerMetadataRequest {
  std::string info_hash_hex;  // 40 hex digits (v1)
  std::vector<proto::Endpoint> peers;
  NetworkOptions net;  // its listen address is used with port 0
  std::chrono::milliseconds deadline{std::chrono::seconds(60)};
  proto::Logger log;
};

// A metainfo ("d4:info...e") made of the info dictionary the peers sent,
// or why none came within the deadline (naming how many peers answered).
Result<std::string, std::string> FetchMetainfoFromPeers(const PeerMetadataRequest& request);

}  // namespace swarmcast::node
