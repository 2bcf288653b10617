// Everything one simulated distribution depends on. Units: bytes, bytes per
// second and seconds throughout; the CLI converts from Mbit/s and MiB.
#pragma once

#include <cstdint>

namespace swarmcast::sim {

enum class PiecePick : std::uint8_t {
  kRarestFirst,  // libtorrent's default: the piece fewest receivers hold
  kRandom,
};

struct SimConfig {
  // The swarm.
  std::uint32_t receivers = 1;
  std::int64_t file_size = 64 << 20;
  std::int64_t piece_size = 0;        // 0: the node's default (proto::ChoosePieceSize)
  std::int64_t chunk_size = 1 << 20;  // push frames carry a piece in chunks of this size

  // Links, as line rates (bits on the wire per second, divided by 8).
  double link = 100e6 / 8;
  double seed_link = 0;      // 0: same as `link`
  double slow_fraction = 0;  // of the receivers, chosen at random (seeded)
  double slow_link = 0;      // 0: a tenth of `link`
  // TCP payload bytes per byte of line rate: 1448 payload bytes per
  // 1538-byte Ethernet frame (MTU 1500, with preamble and gap) = 0.941.
  // The benchmark's tbf counts 1514 bytes per frame: 0.955 there
  // (docs/benchmarks.md).
  double tcp_efficiency = 0.941;

  // Racks (0: a non-blocking LAN): `rack_size` nodes per rack, each rack's
  // uplink carries rack_size x link / oversubscription each way.
  std::uint32_t rack_size = 0;
  double oversubscription = 1;

  // Start-up of each receiver, from its launch to joining the swarm.
  double process_start = 0.005;  // exec, config, libtorrent session
  double rtt = 0.0005;           // one LAN round trip (tracker, HELLO)
  // Receivers launched together on one shared host start one after another
  // as its cores get to them: receiver start-up ends this many seconds per
  // receiver after the launch (the benchmark's 2-core host: 0.055 s, from
  // its progress samples; docs/benchmarks.md). 0: one machine per node.
  double shared_host_start = 0;

  // Push channel (node/push/): the seed pushes to at most this many
  // subscribers (PushSenderOptions::max_subscribers); the rest use
  // BitTorrent only.
  bool push = true;
  std::uint32_t max_subscribers = 512;
  // Bytes of pushed frames that may sit in a subscriber's socket beyond
  // what it has received (push_source.h). Linux sizes a send buffer to about
  // twice the congestion window, which on a LAN is a few hundred KiB; 4 MiB
  // (tcp_wmem's maximum) is the ceiling. The scheduler counts frames in the
  // buffer as copies: with subscribers x buffer near the file size its cover
  // pass is over before anything arrives (docs/benchmarks.md, Simulator).
  double push_socket_buffer = 256 << 10;
  // Forwarding (get --forward, Mutualcast; node/push/forward_group.h): a
  // subscriber that verified a piece the seed pushed it starts forwarding,
  // every other subscriber subscribes to it, and it pushes on each piece
  // that came to it from the seed's channel. Subscriptions to a new
  // forwarder count from the moment it starts (LISTEN, PEERS and HELLO
  // take a few round trips in the node).
  bool forward = false;
  // A what-if, not PushSender: at most this many subscribers have frames
  // in flight at once (0: every ready subscriber, as the sender does).
  std::uint32_t push_window = 0;

  // BitTorrent repair path (a model of libtorrent, not libtorrent).
  std::uint32_t upload_slots = 8;   // libtorrent's unchoke_slots_limit
  std::uint32_t max_downloads = 0;  // concurrent BitTorrent fetches per receiver, 0: no cap
  PiecePick pick = PiecePick::kRarestFirst;
  bool end_game = true;          // bit_torrent.h
  bool rack_aware = false;       // BitTorrent looks in its own rack first (a what-if)
  double unchoke_interval = 15;  // an upload slot stays with one peer this long
  double retry_interval = 1;     // idle upload slots look for takers again

  // The seed stops once the receivers together hold this many copies
  // (every piece on at least that many) or that many finished (0: never),
  // as `swarmcast seed --stop-after-copies` does.
  std::uint32_t seed_leaves_after_copies = 0;

  // Hash check of a received piece (bytes/s; 0: instant). A delay only:
  // checking overlaps with receiving the next pieces.
  double verify_rate = 0;

  // Max-min re-solve interval (flow_network.h): 0 exact, < 0 automatic.
  double solve_interval = -1;
  std::uint64_t rng_seed = 1;
};

}  // namespace swarmcast::sim
