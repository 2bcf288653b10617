// The seed's wire gate: a libtorrent extension that keeps the seed from
// serving a peer over the BitTorrent wire while the push channel serves it.
//
// Without it the seed's uplink carries each piece twice for a subscribed
// peer: once pushed, once requested over the wire (measured: 24 MB of wire
// uploads beside 64 MB pushed for a 64 MiB file at N=8, run
// 20261130T055102Z). The gate swallows such a peer's INTERESTED message, so
// libtorrent's choker, which only unchokes interested peers, never unchokes
// it, and chokes it at its first request if libtorrent unchoked it early;
// the requests of a choked peer are rejected, so it asks other peers at
// once instead of waiting for a timeout. The connection stays up, so the
// seed still sees the peer's pieces (for --stop-after-copies).
//
// Once a second each connection is checked again: a peer that declared
// interest before it subscribed, or whose subscription ended, is
// disconnected so that it reconnects and declares interest afresh (and the
// gate decides again).
//
// A chain seed, and its links, have no gate: a link holds itself off the
// wire while the chain brings it pieces, and needs the wire when it does not.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

namespace libtorrent {
struct plugin;
}

namespace swarmcast::node {

// Whether the push channel is serving the peer at this numeric IP address.
// Called on libtorrent's network thread; must be thread-safe and cheap.
using ServedByPush = std::function<bool(std::string_view ip)>;

std::shared_ptr<libtorrent::plugin> MakeWireGate(ServedByPush served_by_push);

}  // namespace swarmcast::node
