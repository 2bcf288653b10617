// The libtorrent session configuration for a datacenter LAN. Internal to
// node/: only the translation units that already include libtorrent use it.
#pragma once

#include <libtorrent/session_params.hpp>
#include <libtorrent/torrent_info.hpp>
#include <string>

#include "node/transfer.h"

namespace swarmcast::node {

// Settings every swarmcast session gets:
// - nothing that sends packets off the machine unasked: DHT, local peer
//   discovery, UPnP and NAT-PMP off;
// - TCP only (uTP off: slower than TCP at every swarm size measured, and
//   several times the seed's CPU);
// - several connections per IP (many nodes share 127.0.0.1 in tests, and a
//   stock client behind one NAT address still gets in);
// - the measured LAN tuning: whole_pieces_threshold 0 with
//   request_queue_time 1, min_reconnect_time 1, generous connection limits;
// - https tracker certificates verified (validate_https_trackers);
// - outgoing connections bound to the listen address, so that every node
//   on its own 127.0.0.x is seen (and, if it misbehaves, banned) by that
//   address alone.
lt::settings_pack LanSettings(const NetworkOptions& net);

// Settings plus the chosen disk I/O back-end.
lt::session_params LanSessionParams(const NetworkOptions& net);

// The bounds libtorrent's own parse of a metainfo works within (after
// proto::CheckMetainfo has passed it): the same everywhere a node loads one.
lt::load_torrent_limits TorrentLoadLimits();

}  // namespace swarmcast::node
