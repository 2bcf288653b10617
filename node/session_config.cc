#include "node/session_config.h"

#include <libtorrent/alert.hpp>
#include <libtorrent/mmap_disk_io.hpp>
#include <libtorrent/posix_disk_io.hpp>
#include <libtorrent/settings_pack.hpp>
#include <thread>

#include "node/open_file_disk_io.h"
#include "proto/endpoint.h"

namespace swarmcast::node {

lt::settings_pack LanSettings(const NetworkOptions& net) {
  using sp = lt::settings_pack;
  lt::settings_pack p;
  p.set_bool(sp::enable_dht, false);
  p.set_bool(sp::enable_lsd, false);
  p.set_bool(sp::enable_upnp, false);
  p.set_bool(sp::enable_natpmp, false);
  p.set_bool(sp::enable_incoming_utp, false);
  p.set_bool(sp::enable_outgoing_utp, false);
  p.set_bool(sp::allow_multiple_connections_per_ip, true);
  // An https:// tracker's certificate is checked (chain, validity, host)
  // against OpenSSL's default verify paths: the system's CAs, or the
  // --ca-file they were pointed at (node/tls_client.h). It is libtorrent
  // 2.0's default; set here so that no build or later default turns it off.
  p.set_bool(sp::validate_https_trackers, true);
  // The wire's encryption (MSE/PE) hides BitTorrent from an ISP's traffic
  // shaping; it authenticates nobody, and its key derives from the
  // info-hash every peer knows, so it protects nothing here (pieces are
  // checked by their hashes). libtorrent tries it first on every outgoing
  // connection, and its Diffie-Hellman handshake runs in software bignums:
  // about a tenth of all get CPU at 64 peers (docs/benchmarks.md). Nodes
  // connect in plain text; a client that insists on encryption may still
  // connect to them.
  p.set_int(sp::out_enc_policy, sp::pe_disabled);
  p.set_int(sp::in_enc_policy, sp::pe_enabled);

  p.set_str(sp::listen_interfaces,
            proto::FormatEndpoint(net.listen_ip, static_cast<std::uint16_t>(net.listen_port)));
  if (net.listen_ip != "0.0.0.0" && net.listen_ip != "::") {
    p.set_str(sp::outgoing_interfaces, net.listen_ip);
  }
  if (net.listen_port != 0) {
    // The operator's port or a clear error (exit 7), never another one:
    // libtorrent would silently take port+1..+10 or any port when it is
    // busy, and announce that, so the tracker saw a restarted node as a
    // new address and kept its old entry as a stale straggler.
    p.set_int(sp::max_retry_port_bind, 0);
    p.set_bool(sp::listen_system_port_fallback, false);
  }

  // Measured on the emulated LAN (anchor notes): request whole pieces from
  // nobody in particular, keep request queues short, reconnect fast.
  p.set_int(sp::whole_pieces_threshold, 0);
  p.set_int(sp::request_queue_time, 1);
  p.set_int(sp::min_reconnect_time, 1);
  p.set_int(sp::connections_limit, 2000);
  p.set_int(sp::listen_queue_size, 200);
  p.set_int(sp::max_peerlist_size, 10000);
  p.set_int(sp::peer_connect_timeout, 5);
  p.set_int(sp::torrent_connect_boost, 100);
  p.set_int(sp::stop_tracker_timeout, 1);
  // Re-announce at the tracker's own interval (libtorrent's floor is 5
  // minutes): the tracker's completion view is only as fresh as the last
  // announce of each peer.
  p.set_int(sp::min_announce_interval, 5);
  p.set_int(sp::tracker_completion_timeout, 10);
  // After a tracker outage, retry soon: the delay after n failures is
  // 5 + 5 * backoff% * n^2 seconds. libtorrent's 250% left a reconnected
  // peer unknown to the tracker for minutes in the docker fault test; 10%
  // keeps retries under a minute for the first ten failures (about four
  // minutes of outage) and still backs off from a tracker that is gone.
  p.set_int(sp::tracker_backoff, 10);
  p.set_int(sp::max_out_request_queue, 2000);
  p.set_int(sp::max_allowed_in_request_queue, 2000);
  if (net.max_peers > 0) p.set_int(sp::num_want, net.max_peers);

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.set_int(sp::hashing_threads, net.hashing_threads > 0 ? net.hashing_threads : cores);
  p.set_int(sp::aio_threads, std::max(4, cores));

  p.set_str(sp::user_agent, "swarmcast/0.1");
  p.set_str(sp::peer_fingerprint, "-SC0001-");
  p.set_int(sp::alert_mask, lt::alert_category::error | lt::alert_category::status |
                                lt::alert_category::storage | lt::alert_category::peer |
                                lt::alert_category::tracker | lt::alert_category::piece_progress |
                                lt::alert_category::block_progress);
  p.set_int(sp::alert_queue_size, 100000);
  return p;
}

lt::session_params LanSessionParams(const NetworkOptions& net) {
  lt::session_params params(LanSettings(net));
  switch (net.disk_io) {
    case DiskIo::kOpenFiles:
      params.disk_io_constructor = OpenFileDiskIoConstructor;
      break;
    case DiskIo::kPosix:
      params.disk_io_constructor = lt::posix_disk_io_constructor;
      break;
    case DiskIo::kMmap:
      params.disk_io_constructor = lt::mmap_disk_io_constructor;
      break;
  }
  return params;
}

lt::load_torrent_limits TorrentLoadLimits() {
  lt::load_torrent_limits limits;
  limits.max_buffer_size = 32 << 20;
  limits.max_pieces = 0x200000;
  limits.max_decode_tokens = 4000000;
  return limits;
}

}  // namespace swarmcast::node
