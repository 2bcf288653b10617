#include "node/peer_metadata.h"

#include <cstdlib>
#include <filesystem>
#include <libtorrent/add_torrent_params.hpp>
#include <libtorrent/alert_types.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/torrent_handle.hpp>
#include <libtorrent/torrent_info.hpp>
#include <libtorrent/torrent_status.hpp>

#include "node/session_config.h"
#include "node/units.h"
#include "proto/hex.h"
#include "proto/metainfo.h"

namespace swarmcast::node {
namespace {

using Clock = std::chrono::steady_clock;

// An empty directory libtorrent may look into once it has the metadata
// (upload mode writes nothing); removed when the fetch ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "swarmcast-meta-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

Result<std::string, std::string> FetchMetainfoFromPeers(const PeerMetadataRequest& r) {
  std::array<std::uint8_t, 20> raw{};
  if (r.info_hash_hex.size() != 40 || !proto::FromHex(r.info_hash_hex, raw)) {
    return Unexpected(std::string("not a 40-hex info-hash"));
  }
  if (r.peers.empty()) return Unexpected(std::string("no --connect peer to ask"));
  ScratchDir scratch;
  if (scratch.path().empty()) return Unexpected(std::string("cannot make a scratch directory"));

  NetworkOptions net = r.net;
  net.listen_port = 0;  // the transfer binds --listen's port afterwards
  lt::session_params params = LanSessionParams(net);
  params.settings.set_int(lt::settings_pack::max_metadata_size,
                          static_cast<int>(proto::MetainfoLimits{}.max_bytes));
  params.settings.set_int(lt::settings_pack::alert_mask,
                          lt::alert_category::status | lt::alert_category::error);
  lt::session ses(std::move(params));

  lt::add_torrent_params atp;
  std::copy(raw.begin(), raw.end(), atp.info_hashes.v1.begin());
  atp.save_path = scratch.path().string();
  atp.flags &= ~(lt::torrent_flags::paused | lt::torrent_flags::auto_managed);
  // Only the metadata is wanted: no piece is requested or written.
  atp.flags |= lt::torrent_flags::upload_mode;
  lt::error_code ec;
  lt::torrent_handle h = ses.add_torrent(std::move(atp), ec);
  if (ec) return Unexpected("cannot add the info-hash: " + ec.message());

  std::vector<lt::tcp::endpoint> peers;
  for (const proto::Endpoint& p : r.peers) {
    const auto addr = lt::make_address(p.host, ec);
    if (ec) return Unexpected("bad peer address '" + p.ToString() + "'");
    peers.emplace_back(addr, p.port);
  }
  r.log.Info("asking " + std::to_string(peers.size()) + " peer(s) for the metadata of " +
             r.info_hash_hex);
  const auto deadline = Clock::now() + r.deadline;
  auto next_connect = Clock::now();
  int peers_seen = 0;
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline) break;
    if (now >= next_connect) {
      // A peer that was not up yet (or dropped us) is asked again.
      if (h.status().num_peers < static_cast<int>(peers.size())) {
        for (const auto& p : peers) h.connect_peer(p);
      }
      next_connect = now + std::chrono::seconds(2);
    }
    ses.wait_for_alert(std::min<Clock::duration>(deadline - now, std::chrono::milliseconds(500)));
    std::vector<lt::alert*> alerts;
    ses.pop_alerts(&alerts);
    for (lt::alert* a : alerts) {
      if (lt::alert_cast<lt::metadata_received_alert>(a)) {
        std::shared_ptr<const lt::torrent_info> ti = h.torrent_file();
        if (!ti) continue;
        const auto info = ti->info_section();
        std::string metainfo = "d4:info";
        metainfo.append(info.data(), static_cast<std::size_t>(info.size()));
        metainfo += "e";
        ses.remove_torrent(h);
        return metainfo;
      }
      if (auto* f = lt::alert_cast<lt::metadata_failed_alert>(a)) {
        r.log.Warning("a peer sent metadata that was refused: " + f->error.message());
      }
    }
    peers_seen = std::max(peers_seen, h.status().num_peers);
  }
  return Unexpected("no metadata from the --connect peers within " +
                    FormatSeconds(static_cast<double>(r.deadline.count()) / 1e3) + " (" +
                    std::to_string(peers_seen) + " of " + std::to_string(peers.size()) +
                    " connected)");
}

}  // namespace swarmcast::node
