// The node engine: one libtorrent session that seeds or downloads one
// torrent, driven by a single control thread.
//
// Threads (see docs/architecture.md): RunTransfer() runs an io_context on
// the calling thread, which owns every piece of transfer state. libtorrent
// runs its own network, disk and hashing threads; its alert-notify callback
// (called on the network thread) only posts "drain the alerts" to the
// control thread. Signals (SIGINT, SIGTERM) and a stop request from
// another thread (RunTransfer's stop_token) arrive through the io_context.
//
// Downloads go to the staging area (node/staging_area.h) and are moved
// into DIR only after every piece has passed its hash check. Resume data
// (node/resume_data.h) is saved whenever pieces finish, so a process killed
// with SIGKILL restarts from the pieces it had verified; of it only the
// list of verified pieces is trusted.
//
// Hook for the push channel (issue 5): TransferHooks. Pieces that arrive
// by push go to libtorrent through PieceFeed::add_piece
// (torrent_handle::add_piece), which hash-checks them like wire pieces, so
// resume data and the move into place apply to them unchanged.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "proto/endpoint.h"
#include "proto/log.h"
#include "proto/result.h"

namespace swarmcast::node {

class StatusFile;
class NodeMetrics;
struct NodeSample;

// kOpenFiles: node/open_file_disk_io.h; the others are libtorrent's.
enum class DiskIo { kOpenFiles, kPosix, kMmap };

struct NetworkOptions {
  std::string listen_ip = "0.0.0.0";
  int listen_port = 0;  // 0: any free port
  DiskIo disk_io = DiskIo::kOpenFiles;
  int hashing_threads = 0;             // 0: one per core
  std::int64_t max_download_rate = 0;  // bytes/s, 0 = unlimited
  std::int64_t max_upload_rate = 0;
  // BitTorrent peers of the torrent at most, and how many the tracker is
  // asked for (0: libtorrent's defaults, unlimited and 200). A get caps it
  // (`get --max-peers`): a full mesh costs every piece a HAVE to every
  // peer. A seed does not, so that it counts every peer's copies.
  int max_peers = 0;
};

enum class ProgressMode { kNone, kBar, kLines };

// The seam for the push channel (issue 5): how a piece that arrives outside
// the BitTorrent wire gets into the download.
struct PieceFeed {
  std::int64_t pieces = 0;
  std::int64_t piece_length = 0;
  std::vector<bool> have;  // verified when the initial check ended
  // Where the download's files are while it runs (the staging area; the
  // layout's paths are relative to it). Open files stay valid after the
  // move into place.
  std::filesystem::path save_path;
  // Hands one whole piece to libtorrent, which hash-checks and writes it
  // like a piece from a peer (a bad one counts as a hash failure). Safe to
  // call from any thread until TransferHooks::on_stop has returned; a wrong
  // index or size is dropped.
  std::function<void(std::uint32_t piece, std::vector<char> data)> add_piece;
  // Runs `f` on the control thread (asio::post); safe from any thread
  // until TransferHooks::on_stop has returned.
  std::function<void(std::function<void()> f)> post;
  // Ends the hold of TransferOptions::wire_hold now (idempotent; same
  // thread rules as post).
  std::function<void()> release_wire;
  // Keeps the hold past its deadline, until release_wire (same rules).
  std::function<void()> keep_wire_held;
};

// Callbacks into the caller, all on the control thread.
struct TransferHooks {
  std::function<void(const PieceFeed&)> on_ready;              // after the initial check
  std::function<void(std::uint32_t piece)> on_piece_verified;  // any source
  std::function<void(std::uint32_t piece)> on_hash_failed;     // any source
  // libtorrent asked the peer at `peer_ip` (numeric) for a block of
  // `piece`, once per request.
  std::function<void(std::uint32_t piece, const std::string& peer_ip)> on_piece_requested;
  std::function<void()> on_stop;  // before the session goes away: stop feeding
  // Every progress tick (500 ms): the payload bytes received and sent
  // over the BitTorrent wire so far (the push receiver counts the first
  // against --max-download-rate; a chain seed tells the second from other
  // traffic on its uplink).
  std::function<void(std::int64_t wire_received, std::int64_t wire_sent)> on_tick;
  // The BitTorrent listen socket is bound (TCP port; useful with port 0).
  std::function<void(std::uint16_t port)> on_listening;
};

struct TransferOptions {
  enum class Role { kSeed, kGet };
  Role role = Role::kGet;
  std::string torrent_bytes;       // metainfo; refused unless proto::CheckMetainfo passes
  std::string expected_info_hash;  // 40 hex, or empty
  // Seed: the directory that holds the content (its parent directory).
  // Get: the output directory.
  std::filesystem::path dir;
  // Get, single-file torrents only: the name the file gets in `dir` (get
  // --as; a safe path element, checked by the caller); empty: the
  // metainfo's name. The staging area keeps the metainfo's name, so a
  // resumed get finds its data whatever --as says; the file is renamed in
  // staging just before the move into place.
  std::string output_name;
  // Get, single-file torrents: compute the file's SHA-256 while it is
  // written (node/file_digest.h) into TransferReport::sha256. With
  // `expected_sha256` (64 lowercase hex; the publisher's pin) a download
  // that hashes otherwise fails with Kind::kVerification and stays in the
  // staging area, never moved into place.
  bool whole_file_sha256 = true;
  std::string expected_sha256;
  bool data_verified = false;  // seed: the content was just hashed
  std::string announce_url;    // the swarm's tracker
  // Private swarms: announces go to announce_url + "/" + this token (the
  // tracker's /announce/TOKEN form; a BitTorrent client can send no
  // header). Kept out of every log line. Empty: none.
  std::string announce_token;
  // Also use the trackers and web seeds the metainfo lists. Off: only
  // announce_url, so a published torrent cannot point every node's
  // requests elsewhere (--allow-torrent-urls).
  bool torrent_urls = false;
  NetworkOptions net;
  std::vector<proto::Endpoint> peers;  // IP literals to connect to directly

  // Get: how long to keep serving after the download completed; nullopt
  // means do not linger. `swarm_complete` (may be empty) is polled every
  // 2 s while lingering; lingering ends early when it returns true.
  std::optional<std::chrono::milliseconds> linger;
  std::function<bool()> swarm_complete;
  // Get: give up when no byte of payload arrived for this long while the
  // download is incomplete (0: wait forever).
  std::chrono::milliseconds stall_timeout{0};

  // Seed: stop once the connected peers together hold this many full
  // copies (0: seed until interrupted).
  int stop_after_copies = 0;
  // Seed: full copies made so far as the tracker counts them (downloads it
  // saw complete since this seed started); polled every 2 s while
  // stop_after_copies is set. May be empty. Finished peers leave, so the
  // connected peers alone under-count, and missed copies on a busy machine.
  std::function<std::int64_t()> copies_made;
  // True when a SIGINT/SIGTERM came before this transfer handled signals
  // itself (node/cli/early_signals.h): it then stops at once. May be empty.
  std::function<bool()> signalled_before_start;
  // Peers at addresses for which this returns true get their pieces
  // through the push channel, and this node does not serve them over the
  // BitTorrent wire (node/wire_gate.h): a seed's subscribers, a
  // forwarding get's. Called on libtorrent's network
  // thread; must be thread-safe.
  std::function<bool(std::string_view ip)> served_by_push;
  // Payload bytes moved so far outside libtorrent, by the push channel:
  // a seed's sent, a get's received (control thread). They count in the
  // rates, the progress, the status file and the report's totals, which
  // also give the wire's and the push channel's share apart.
  std::function<std::int64_t()> pushed_bytes;

  // Notes (resume, bans, tracker errors, stop) go here.
  proto::Logger log;
  ProgressMode progress = ProgressMode::kNone;
  std::chrono::milliseconds progress_interval{5000};
  // The caller's status file (may be null): updated with SnapshotJson as
  // soon as the torrent is added and every 2 s after. The caller created
  // it before this call and removes it after.
  StatusFile* status = nullptr;
  // Members added to each status file write (control thread), e.g. the
  // push channel's state for `swarmcast status`.
  std::function<nlohmann::json()> status_extra;

  // Where each snapshot goes for --metrics-listen (may be null): at every
  // progress tick and once more when the transfer ends, so its last one
  // holds the report's counters. The caller owns it.
  NodeMetrics* metrics = nullptr;
  // Fills the push channel's part of each snapshot (control thread).
  std::function<void(NodeSample&)> metrics_extra;

  TransferHooks hooks;
  // Get: after the initial check, hold the BitTorrent wire (tracker
  // announces, --connect peers) until PieceFeed::release_wire is called, or
  // this long at most (0: no hold). hooks.on_ready makes the push
  // subscription and releases the wire once the seed has answered it, so
  // the seed's wire gate (node/wire_gate.h) knows this peer before its
  // first BitTorrent request, however fast or slow either side is.
  std::chrono::milliseconds wire_hold{0};
};

enum class TransferEnd {
  kCompleted,        // get: complete, no linger
  kSwarmComplete,    // get: lingered until the tracker reported all done
  kLingerTimeout,    // get: lingered for the full duration
  kCopiesReached,    // seed: stop_after_copies reached
  kInterrupted,      // SIGINT/SIGTERM
  kAlreadyComplete,  // get: the target already held every piece; nothing ran
};

struct TransferReport {
  TransferOptions::Role role = TransferOptions::Role::kGet;
  TransferEnd end = TransferEnd::kCompleted;
  std::string name;
  std::string info_hash;
  std::filesystem::path path;  // final location of the content
  std::int64_t total_bytes = 0;
  std::int64_t piece_length = 0;
  std::int64_t pieces_total = 0;
  std::int64_t pieces_at_start = 0;  // verified pieces when the check ended
  std::int64_t pieces_done = 0;
  // Payload received / sent by this process, whatever the path, and the
  // share of the BitTorrent wire and of the push channel in it.
  std::int64_t downloaded_bytes = 0;
  std::int64_t downloaded_wire_bytes = 0;
  std::int64_t downloaded_push_bytes = 0;
  std::int64_t uploaded_bytes = 0;
  std::int64_t uploaded_wire_bytes = 0;
  std::int64_t uploaded_push_bytes = 0;
  std::int64_t failed_bytes = 0;  // received bytes that failed a hash check
  // Wire bytes that arrived for blocks already held (a block requested
  // from two peers, or over the wire while the push channel brought it).
  std::int64_t redundant_bytes = 0;
  int hash_failures = 0;
  int banned_peers = 0;
  int disk_errors = 0;  // file and storage errors libtorrent reported
  bool complete = false;
  // Get of a single file: its whole-file SHA-256 (lowercase hex; empty when
  // not computed), and how many bytes were read back to compute it.
  std::string sha256;
  std::int64_t sha256_read_bytes = 0;
  // How long the move into place waited for the digest after the last
  // piece was verified: pieces arrive out of order, so much of the file is
  // hashed once the gaps before it are filled.
  double sha256_wait_seconds = 0;
  double download_seconds = -1;  // start to every piece verified (get)
  double total_seconds = 0;
  // Seed: the most full copies seen, among connected peers or as the
  // tracker counted completed downloads (copies_made), whichever is more.
  double distributed_copies = 0;
};

struct TransferError {
  // kVerification: every piece passed but the whole-file SHA-256 is not
  // the pinned one.
  enum class Kind { kMetainfo, kStorage, kNetwork, kStalled, kVerification, kInternal };
  Kind kind = Kind::kInternal;
  std::string message;
};

const char* ToString(TransferEnd end);

// Runs until the transfer ends (see TransferEnd) or fails. Blocks the
// calling thread, which becomes the control thread. A stop requested on
// `stop` (from any thread) ends it as SIGTERM does: kInterrupted, resume
// data saved.
Result<TransferReport, TransferError> RunTransfer(const TransferOptions& options,
                                                  std::stop_token stop = {});

}  // namespace swarmcast::node
