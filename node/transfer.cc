#include "node/transfer.h"

#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <deque>
#include <libtorrent/add_torrent_params.hpp>
#include <libtorrent/alert_types.hpp>
#include <libtorrent/announce_entry.hpp>
#include <libtorrent/peer_info.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/torrent_handle.hpp>
#include <libtorrent/torrent_info.hpp>
#include <libtorrent/torrent_status.hpp>

#include "node/file_digest.h"
#include "node/file_io.h"
#include "node/node_metrics.h"
#include "node/piece_salvage.h"
#include "node/progress.h"
#include "node/rate_meter.h"
#include "node/resume_data.h"
#include "node/session_config.h"
#include "node/staging_area.h"
#include "node/status_file.h"
#include "node/units.h"
#include "node/wire_gate.h"
#include "proto/hex.h"
#include "proto/metainfo.h"

namespace swarmcast::node {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Kind = TransferError::Kind;

constexpr auto kTick = std::chrono::milliseconds(500);
constexpr auto kStatusEvery = std::chrono::seconds(2);
constexpr auto kPollEvery = std::chrono::seconds(2);
// How often the listen sockets are matched against the local addresses
// again (OnTick says why).
constexpr auto kReopenSocketsEvery = std::chrono::seconds(5);
constexpr auto kStopGrace = std::chrono::seconds(5);

std::string Hex(const lt::sha1_hash& h) {
  return proto::ToHex(std::string_view(h.data(), h.size()));
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Where a transfer is in its life. A get goes kChecking -> kDownloading ->
// kMoving -> kInPlace; a seed kChecking -> kSeeding. Stopping (end_ set)
// may begin in any phase.
enum class Phase { kChecking, kDownloading, kSeeding, kMoving, kInPlace };

class Transfer {
 public:
  Transfer(const TransferOptions& o, std::stop_token stop)
      : o_(o), stop_(std::move(stop)), tick_(ioc_), signals_(ioc_, SIGINT, SIGTERM) {}
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  Result<TransferReport, TransferError> Run() {
    if (auto e = Prepare()) return Unexpected(*e);
    if (auto e = Start()) return Unexpected(*e);
    WriteStatus();
    WaitForSignal();
    // After WaitForSignal: signals_ has taken SIGINT/SIGTERM over, so one
    // that came earlier was recorded there and is seen here.
    if (o_.signalled_before_start && o_.signalled_before_start()) {
      asio::post(ioc_, [this] {
        o_.log.Info("interrupted; saving state");
        Finish(TransferEnd::kInterrupted);
      });
    }
    // Runs at once if a stop was already requested; only posts, so it is
    // safe from any thread while ioc_ lives (this callback goes first).
    std::stop_callback on_stop_request(stop_, [this] {
      asio::post(ioc_, [this] {
        o_.log.Info("stop requested; saving state");
        Finish(TransferEnd::kInterrupted);
      });
    });
    ScheduleTick();
    ioc_.run();

    if (o_.hooks.on_stop) o_.hooks.on_stop();
    if (h_.is_valid()) Record(h_.status());
    ShowProgress(true);
    report_.total_seconds = Seconds();
    // Destroying the session sends the tracker its "stopped" announce
    // (bounded by stop_tracker_timeout) and joins libtorrent's threads.
    lt::session_proxy proxy = ses_->abort();
    ses_.reset();
    if (error_) return Unexpected(*error_);
    report_.end = end_.value_or(TransferEnd::kInterrupted);
    return report_;
  }

 private:
  bool IsGet() const { return o_.role == TransferOptions::Role::kGet; }
  // The file gets another name in DIR than the metainfo's (get --as).
  bool Renamed() const { return !o_.output_name.empty() && o_.output_name != ti_->name(); }
  bool stopping() const { return end_.has_value(); }
  // Moving or moved: the staging area is no longer where the data is.
  bool leaving_staging() const { return phase_ == Phase::kMoving || phase_ == Phase::kInPlace; }
  double Seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  std::optional<TransferError> Prepare() {
    // The caller checked it too (for its summary); the engine does not
    // depend on that: no unchecked metainfo reaches libtorrent.
    if (auto checked = proto::CheckMetainfo(o_.torrent_bytes); !checked) {
      return TransferError{Kind::kMetainfo, "metainfo refused: " + checked.error()};
    }
    try {
      ti_ = std::make_shared<lt::torrent_info>(
          lt::span<const char>(o_.torrent_bytes.data(),
                               static_cast<std::ptrdiff_t>(o_.torrent_bytes.size())),
          TorrentLoadLimits(), lt::from_span);
    } catch (const std::exception& e) {
      return TransferError{Kind::kMetainfo, std::string("metainfo refused: ") + e.what()};
    }
    report_.info_hash = Hex(ti_->info_hashes().v1);
    if (!o_.expected_info_hash.empty() && Lower(o_.expected_info_hash) != report_.info_hash) {
      return TransferError{Kind::kMetainfo, "info-hash mismatch: asked for " +
                                                o_.expected_info_hash + ", the tracker sent " +
                                                report_.info_hash};
    }
    report_.name = ti_->name();
    report_.total_bytes = ti_->total_size();
    report_.piece_length = ti_->piece_length();
    report_.pieces_total = ti_->num_pieces();
    if (!o_.output_name.empty() && ti_->num_files() != 1) {
      return TransferError{Kind::kMetainfo,
                           "--as names a single file; '" + ti_->name() + "' is a folder"};
    }
    final_path_ = o_.dir / (o_.output_name.empty() ? ti_->name() : o_.output_name);
    report_.path = final_path_;

    std::error_code ec;
    if (!IsGet()) {
      if (!fs::exists(final_path_, ec)) {
        return TransferError{Kind::kStorage, final_path_.string() + ": no such file or directory"};
      }
      save_path_ = o_.dir;
      return std::nullopt;
    }
    if (fs::exists(fs::symlink_status(final_path_, ec))) {
      return TransferError{
          Kind::kStorage, final_path_.string() + " already exists; remove it or choose another -o"};
    }
    auto staging = StagingArea::Open(o_.dir, report_.info_hash, report_.name, report_.total_bytes);
    if (!staging) return TransferError{Kind::kStorage, staging.error()};
    staging_ = std::move(*staging);
    save_path_ = staging_->save_path();
    if (Renamed()) {
      // A run stopped between the rename in staging and the move into
      // place left the file under the --as name: put it back.
      const fs::path ours = staging_->content_path();
      const fs::path renamed = save_path_ / o_.output_name;
      if (!fs::exists(fs::symlink_status(ours, ec)) &&
          fs::is_regular_file(fs::symlink_status(renamed, ec))) {
        fs::rename(renamed, ours, ec);
      }
    }
    return std::nullopt;
  }

  std::optional<TransferError> Start() {
    ses_ = std::make_unique<lt::session>(LanSessionParams(o_.net));
    ses_->set_alert_notify([this] {
      // libtorrent's network thread: only wake the control thread.
      if (!drain_posted_.exchange(true)) asio::post(ioc_, [this] { DrainAlerts(); });
    });
    if (o_.served_by_push) {
      // Extensions must be in place before the torrent is added.
      ses_->add_extension(MakeWireGate(o_.served_by_push));
      // Allowed-fast pieces could be requested even while choked.
      lt::settings_pack no_fast;
      no_fast.set_int(lt::settings_pack::allowed_fast_set_size, 0);
      ses_->apply_settings(std::move(no_fast));
    }

    // Built from the checked metainfo and the flags alone (see
    // node/resume_data.h): resume data adds which pieces are verified.
    lt::add_torrent_params atp;
    if (IsGet() && fs::exists(staging_->resume_path())) {
      auto have = LoadVerifiedPieces(staging_->resume_path(), *ti_);
      if (have) {
        atp.have_pieces = std::move(*have);
        resumed_ = true;
      } else {
        o_.log.Info("ignoring resume data " + staging_->resume_path().string() + " (" +
                    have.error() + "); checking files");
      }
    }
    atp.ti = std::make_shared<lt::torrent_info>(*ti_);
    if (!o_.torrent_urls) {
      // Only the swarm's tracker: the metainfo's own trackers and web
      // seeds would send every node's requests where the publisher says.
      atp.ti->clear_trackers();
      atp.ti->set_web_seeds({});
    }
    atp.save_path = save_path_.string();
    if (o_.net.max_peers > 0) atp.max_connections = o_.net.max_peers;
    // Neither paused nor auto-managed: the auto-manage timer costs ~0.5 s
    // at start, and clearing only auto_managed leaves the torrent paused.
    atp.flags &= ~(lt::torrent_flags::paused | lt::torrent_flags::auto_managed);
    if (!IsGet() && o_.data_verified) atp.flags |= lt::torrent_flags::seed_mode;
    if (!o_.announce_url.empty()) {
      atp.trackers = {o_.announce_url +
                      (o_.announce_token.empty() ? std::string() : "/" + o_.announce_token)};
    }
    if (WireHeld()) {
      // Held back until the push subscription is in place (StartWire).
      for (const auto& t : atp.ti->trackers()) deferred_trackers_.push_back(t.url);
      deferred_trackers_.insert(deferred_trackers_.end(), atp.trackers.begin(), atp.trackers.end());
      atp.ti->clear_trackers();
      atp.trackers.clear();
      atp.tracker_tiers.clear();
    }
    // Always set: resume data carries the limits of the previous run.
    auto limit = [](std::int64_t rate) {
      return rate > 0 ? static_cast<int>(std::min<std::int64_t>(rate, 0x7fffffff)) : -1;
    };
    atp.download_limit = limit(o_.net.max_download_rate);
    atp.upload_limit = limit(o_.net.max_upload_rate);
    lt::error_code ec;
    h_ = ses_->add_torrent(std::move(atp), ec);
    if (ec) return TransferError{Kind::kStorage, "cannot add the torrent: " + ec.message()};
    if (IsGet()) resume_.emplace(staging_->resume_path(), h_, o_.log);
    for (const proto::Endpoint& peer : o_.peers) {
      lt::error_code aec;
      const auto addr = lt::make_address(peer.host, aec);
      if (aec) {
        return TransferError{Kind::kNetwork, "bad peer address '" + peer.ToString() + "'"};
      }
      peers_.emplace_back(addr, peer.port);
    }
    if (!WireHeld()) StartWire();
    return std::nullopt;
  }

  // A get holds back its trackers and peers while the push subscription is
  // set up (wire_hold), and while it salvages verified pieces after a
  // restart: peers connected during the salvage were sent requests for
  // pieces it was about to find on disk (62 pieces of 244 fetched twice).
  bool WireHeld() const { return IsGet() && (o_.wire_hold.count() > 0 || resumed_); }

  // libtorrent's tracker alerts name the URL, announce token included.
  std::string Redacted(std::string text) const {
    const std::string& token = o_.announce_token;
    if (token.empty()) return text;
    for (std::size_t at; (at = text.find(token)) != std::string::npos;) {
      text.replace(at, token.size(), "<token>");
    }
    return text;
  }

  // Announces to the trackers and connects the --connect peers: at once,
  // or when the wire hold ends (release_wire, or its deadline on a tick).
  void StartWire() {
    if (wire_started_) return;
    wire_started_ = true;
    wire_hold_until_.reset();
    for (const std::string& url : deferred_trackers_) h_.add_tracker(lt::announce_entry(url));
    if (!deferred_trackers_.empty()) h_.force_reannounce();
    deferred_trackers_.clear();
    for (const auto& peer : peers_) h_.connect_peer(peer);
  }

  void WaitForSignal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (ec) return;
      if (signalled_) {
        ioc_.stop();  // a second signal: stop now
        return;
      }
      signalled_ = true;
      // Already ending on its own (complete, copies reached): the first
      // signal changes nothing, the final save and the report included.
      if (!stopping()) {
        o_.log.Info("interrupted; saving state");
        Finish(TransferEnd::kInterrupted);
      }
      WaitForSignal();
    });
  }

  void ScheduleTick() {
    tick_.expires_after(kTick);
    tick_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      OnTick();
      ScheduleTick();
    });
  }

  void DrainAlerts() {
    drain_posted_.store(false);
    std::vector<lt::alert*> alerts;
    ses_->pop_alerts(&alerts);
    for (lt::alert* a : alerts) Handle(a);
  }

  void Handle(lt::alert* a) {
    if (resume_) {
      const auto saved = resume_->Handle(a);
      if (saved == ResumeSaver::Outcome::kFinalSaved && stopping()) ioc_.stop();
      if (saved != ResumeSaver::Outcome::kNotMine) return;
    }
    if (lt::alert_cast<lt::torrent_checked_alert>(a)) {
      phase_ = IsGet() ? Phase::kDownloading : Phase::kSeeding;
      report_.pieces_at_start =
          h_.status(lt::torrent_handle::query_accurate_download_counters).num_pieces;
      if (IsGet() && report_.pieces_at_start > 0) {
        o_.log.Info("resuming with " + std::to_string(report_.pieces_at_start) + " of " +
                    std::to_string(report_.pieces_total) + " pieces verified");
      }
      if (IsGet()) StartDigest();
      if (IsGet() && resumed_) Salvage();
      if (o_.wire_hold.count() == 0) {
        StartWire();  // only the salvage held it
      } else if (!wire_started_) {
        wire_hold_until_ = Clock::now() + o_.wire_hold;
      }
      if (o_.hooks.on_ready) o_.hooks.on_ready(MakeFeed());
    } else if (lt::alert_cast<lt::torrent_finished_alert>(a)) {
      if (IsGet()) OnDownloadVerified();
    } else if (auto* p = lt::alert_cast<lt::piece_finished_alert>(a)) {
      if (resume_) resume_->Save();
      if (digest_) digest_->MarkVerified(static_cast<int>(p->piece_index));
      if (o_.hooks.on_piece_verified) {
        o_.hooks.on_piece_verified(static_cast<std::uint32_t>(static_cast<int>(p->piece_index)));
      }
    } else if (auto* p = lt::alert_cast<lt::block_downloading_alert>(a)) {
      if (o_.hooks.on_piece_requested) {
        o_.hooks.on_piece_requested(static_cast<std::uint32_t>(static_cast<int>(p->piece_index)),
                                    p->endpoint.address().to_string());
      }
    } else if (auto* p = lt::alert_cast<lt::hash_failed_alert>(a)) {
      ++report_.hash_failures;
      if (o_.hooks.on_hash_failed) {
        o_.hooks.on_hash_failed(static_cast<std::uint32_t>(static_cast<int>(p->piece_index)));
      }
    } else if (auto* p = lt::alert_cast<lt::peer_ban_alert>(a)) {
      ++report_.banned_peers;
      o_.log.Warning("banned peer " + p->endpoint.address().to_string() +
                     " (sent data that failed the hash check)");
    } else if (auto* p = lt::alert_cast<lt::file_error_alert>(a)) {
      ++report_.disk_errors;
      FailWith({Kind::kStorage, std::string(p->filename()) + ": " + lt::operation_name(p->op) +
                                    ": " + p->error.message()});
    } else if (auto* p = lt::alert_cast<lt::torrent_error_alert>(a)) {
      ++report_.disk_errors;
      FailWith({Kind::kStorage, std::string(p->filename()) + ": " + p->error.message()});
    } else if (lt::alert_cast<lt::file_renamed_alert>(a)) {
      if (phase_ == Phase::kMoving && !stopping()) MoveIntoPlace();
    } else if (auto* p = lt::alert_cast<lt::file_rename_failed_alert>(a)) {
      FailWith({Kind::kStorage, "cannot rename the download to " + o_.output_name + ": " +
                                    p->error.message() + "; verified data stays in " +
                                    save_path_.string()});
    } else if (lt::alert_cast<lt::storage_moved_alert>(a)) {
      OnMovedIntoPlace();
    } else if (auto* p = lt::alert_cast<lt::storage_moved_failed_alert>(a)) {
      phase_ = Phase::kDownloading;
      const std::string why = p->error ? p->error.message() : "a file of that name exists";
      FailWith({Kind::kStorage, "cannot move the download into " + o_.dir.string() + ": " + why +
                                    " (" + std::string(p->file_path()) +
                                    "); verified data stays in " + save_path_.string()});
    } else if (auto* p = lt::alert_cast<lt::listen_succeeded_alert>(a)) {
      if (p->socket_type == lt::socket_type_t::tcp) {
        if (o_.hooks.on_listening) o_.hooks.on_listening(p->port);
        listening_ = true;
      }
    } else if (auto* p = lt::alert_cast<lt::listen_failed_alert>(a)) {
      const std::string what = "cannot listen on " + p->address.to_string() + ":" +
                               std::to_string(p->port) + ": " + p->error.message();
      // At the start it is the operator's error (exit 7); later it is an
      // address that appeared since (OnTick's re-open), and the sockets
      // that work keep the transfer going.
      if (!listening_) {
        FailWith({Kind::kNetwork, what});
      } else {
        o_.log.Warning(what);
      }
    } else if (auto* p = lt::alert_cast<lt::tracker_error_alert>(a)) {
      // "skipping tracker announce (unreachable)": libtorrent would announce
      // from a listen socket that cannot reach the tracker (loopback, a
      // second interface); the other sockets announce. Not the user's
      // problem, and it came at every announce.
      const std::string line = "tracker: " + Redacted(p->message());
      if (p->error == lt::errors::announce_skipped) {
        o_.log.Debug(line);
      } else if (tracker_errors_++ < 3) {
        o_.log.Warning(line);
      } else {
        o_.log.Debug(line);
      }
    }
  }

  // Pieces verified after the last resume save are still on disk: hash
  // them here instead of downloading them again. add_piece writes the same
  // bytes back and marks the piece as had once libtorrent's own check
  // passes.
  void Salvage() {
    const lt::torrent_status st = h_.status(lt::torrent_handle::query_pieces);
    const int n = SalvageVerifiedPieces(*ti_, save_path_.string(), st.pieces,
                                        [this](lt::piece_index_t piece, std::vector<char> data) {
                                          h_.add_piece(piece, std::move(data));
                                        });
    report_.pieces_at_start += n;
    if (n > 0) o_.log.Info("found " + std::to_string(n) + " more verified pieces on disk");
  }

  PieceFeed MakeFeed() {
    PieceFeed feed;
    feed.pieces = report_.pieces_total;
    feed.piece_length = report_.piece_length;
    feed.save_path = save_path_;
    const lt::torrent_status st = h_.status(lt::torrent_handle::query_pieces);
    feed.have.assign(static_cast<std::size_t>(feed.pieces), false);
    for (int i = 0; i < st.pieces.size() && i < feed.pieces; ++i) {
      feed.have[static_cast<std::size_t>(i)] = st.pieces[lt::piece_index_t(i)];
    }
    // Copies of the handle and the immutable torrent_info: both may be used
    // from any thread. The vector overload of add_piece does not block.
    feed.add_piece = [h = h_, ti = ti_](std::uint32_t piece, std::vector<char> data) {
      if (piece >= static_cast<std::uint32_t>(ti->num_pieces())) return;
      const lt::piece_index_t index(static_cast<int>(piece));
      if (data.size() != static_cast<std::size_t>(ti->piece_size(index))) return;
      h.add_piece(index, std::move(data));
    };
    feed.post = [this](std::function<void()> f) { asio::post(ioc_, std::move(f)); };
    feed.release_wire = [this] { asio::post(ioc_, [this] { StartWire(); }); };
    feed.keep_wire_held = [this] { asio::post(ioc_, [this] { wire_hold_until_.reset(); }); };
    return feed;
  }

  void OnDownloadVerified() {
    if (phase_ != Phase::kDownloading || stopping()) return;
    const lt::torrent_status st = h_.status();
    if (st.num_pieces != report_.pieces_total) return;
    report_.download_seconds = Seconds();
    report_.complete = true;
    phase_ = Phase::kMoving;
    resume_->StopSaving();
    if (digest_ && !digest_result_) {
      awaiting_digest_ = true;  // OnDigest goes on
      awaiting_since_ = Clock::now();
      return;
    }
    CheckDigestAndPlace();
  }

  // The whole-file SHA-256 of a single-file get, hashed in file order as
  // pieces are verified (node/file_digest.h); the verified pieces so far
  // count at once (a resumed get's are read from disk).
  void StartDigest() {
    if (!o_.whole_file_sha256 || ti_->num_files() != 1 || digest_) return;
    digest_ = std::make_unique<WholeFileDigest>(
        staging_->content_path(), report_.total_bytes, report_.piece_length,
        [this](Result<std::string, std::string> r) {
          // The worker's thread: hand the result to the control thread.
          asio::post(ioc_, [this, r = std::move(r)]() mutable { OnDigest(std::move(r)); });
        });
    const lt::torrent_status st = h_.status(lt::torrent_handle::query_pieces);
    for (int i = 0; i < st.pieces.size(); ++i) {
      if (st.pieces[lt::piece_index_t(i)]) digest_->MarkVerified(i);
    }
  }

  void OnDigest(Result<std::string, std::string> r) {
    if (digest_) report_.sha256_read_bytes = digest_->bytes_read();
    digest_result_ = std::move(r);
    if (awaiting_digest_) {
      report_.sha256_wait_seconds =
          std::chrono::duration<double>(Clock::now() - awaiting_since_).count();
    }
    if (awaiting_digest_ && !stopping()) CheckDigestAndPlace();
  }

  // Every piece passed: the digest against the pin, then into place.
  void CheckDigestAndPlace() {
    if (digest_result_ && *digest_result_) {
      report_.sha256 = **digest_result_;
    } else if (digest_result_) {
      if (!o_.expected_sha256.empty()) {
        FailWith(
            {Kind::kVerification, "cannot check the pinned SHA-256: " + digest_result_->error() +
                                      "; verified data stays in " + save_path_.string()});
        return;
      }
      o_.log.Warning("whole-file SHA-256 not computed: " + digest_result_->error());
    }
    if (!o_.expected_sha256.empty() && report_.sha256 != o_.expected_sha256) {
      report_.complete = false;
      FailWith({Kind::kVerification,
                "whole-file SHA-256 mismatch: the publisher pinned " + o_.expected_sha256 +
                    ", the download hashes to " + report_.sha256 +
                    " (every piece matched the metainfo, so the pin and the metainfo disagree); "
                    "not moved into place, the data stays in " +
                    save_path_.string()});
      return;
    }
    if (Renamed()) {
      h_.rename_file(lt::file_index_t(0), o_.output_name);  // then MoveIntoPlace
      return;
    }
    MoveIntoPlace();
  }

  void MoveIntoPlace() { h_.move_storage(o_.dir.string(), lt::move_flags_t::fail_if_exist); }

  void OnMovedIntoPlace() {
    phase_ = Phase::kInPlace;
    staging_->RemoveAfterMove();
    if (!o_.linger || o_.linger->count() == 0) {
      Finish(TransferEnd::kCompleted);
      return;
    }
    linger_deadline_ = Clock::now() + *o_.linger;
  }

  void FailWith(TransferError e) {
    if (error_) return;
    error_ = std::move(e);
    Finish(TransferEnd::kInterrupted);
  }

  void Finish(TransferEnd end) {
    if (stopping()) return;
    end_ = end;
    stop_deadline_ = Clock::now() + kStopGrace;
    if (IsGet() && !leaving_staging() && h_.is_valid() && resume_) {
      h_.pause();
      if (resume_->SaveFinal()) return;  // ioc_ stops once it is written
    }
    ioc_.stop();
  }

  double CopiesAmongPeers() {
    std::vector<lt::peer_info> peers;
    h_.get_peer_info(peers);
    std::vector<int> count(static_cast<std::size_t>(report_.pieces_total), 0);
    for (const lt::peer_info& p : peers) {
      if (p.flags & lt::peer_info::seed) {
        for (int& c : count) ++c;
        continue;
      }
      const int n = std::min<int>(p.pieces.size(), static_cast<int>(count.size()));
      for (int i = 0; i < n; ++i) {
        if (p.pieces[lt::piece_index_t(i)]) ++count[static_cast<std::size_t>(i)];
      }
    }
    if (count.empty()) return 0;
    return *std::min_element(count.begin(), count.end());
  }

  void Record(const lt::torrent_status& st) {
    const std::int64_t pushed = o_.pushed_bytes ? o_.pushed_bytes() : 0;
    report_.role = o_.role;
    report_.pieces_done = st.num_pieces;
    report_.downloaded_wire_bytes = st.total_payload_download;
    report_.uploaded_wire_bytes = st.total_payload_upload;
    (IsGet() ? report_.downloaded_push_bytes : report_.uploaded_push_bytes) = pushed;
    report_.downloaded_bytes = report_.downloaded_wire_bytes + report_.downloaded_push_bytes;
    report_.uploaded_bytes = report_.uploaded_wire_bytes + report_.uploaded_push_bytes;
    report_.failed_bytes = st.total_failed_bytes;
    report_.redundant_bytes = st.total_redundant_bytes;
    snap_.role = IsGet() ? "get" : "seed";
    snap_.name = report_.name;
    snap_.info_hash = report_.info_hash;
    snap_.total_bytes = report_.total_bytes;
    snap_.done_bytes = st.total_wanted_done;
    snap_.pieces_total = report_.pieces_total;
    snap_.pieces_done = st.num_pieces;
    snap_.downloaded_bytes = report_.downloaded_bytes;
    snap_.uploaded_bytes = report_.uploaded_bytes;
    // Rates from the byte counters of both paths: libtorrent's own rate
    // lags and knows nothing of the push channel. Until the meter has a
    // second of samples, the average since the start stands in.
    const auto now = Clock::now();
    const double elapsed = std::max(Seconds(), 1e-3);
    snap_.down_rate = down_rate_.Add(now, report_.downloaded_bytes)
                          .value_or(static_cast<double>(report_.downloaded_bytes) / elapsed);
    snap_.up_rate = up_rate_.Add(now, report_.uploaded_bytes)
                        .value_or(static_cast<double>(report_.uploaded_bytes) / elapsed);
    snap_.peers = st.num_peers;
    snap_.seeds = st.num_seeds;
    snap_.elapsed_seconds = Seconds();
    snap_.state = StateName(st);
    if (o_.metrics) PublishMetrics();
  }

  void PublishMetrics() {
    NodeSample m;
    m.role = snap_.role;
    m.state = snap_.state;
    m.name = report_.name;
    m.info_hash = report_.info_hash;
    m.size_bytes = report_.total_bytes;
    m.done_bytes = snap_.done_bytes;
    m.pieces_total = report_.pieces_total;
    m.pieces_have = report_.pieces_done;
    m.in_wire_bytes = report_.downloaded_wire_bytes;
    m.in_push_bytes = report_.downloaded_push_bytes;
    m.out_wire_bytes = report_.uploaded_wire_bytes;
    m.out_push_bytes = report_.uploaded_push_bytes;
    m.down_rate = snap_.down_rate;
    m.up_rate = snap_.up_rate;
    m.peers = snap_.peers;
    m.seeds = snap_.seeds;
    m.hash_failures = report_.hash_failures;
    m.failed_bytes = report_.failed_bytes;
    m.banned_peers = report_.banned_peers;
    m.disk_errors = report_.disk_errors;
    m.elapsed_seconds = snap_.elapsed_seconds;
    if (o_.metrics_extra) o_.metrics_extra(m);
    o_.metrics->Publish(m);
  }

  std::string StateName(const lt::torrent_status& st) const {
    if (phase_ == Phase::kInPlace)
      return linger_deadline_ && !stopping() ? "lingering" : "complete";
    if (stopping()) return "stopping";
    if (phase_ == Phase::kMoving) return "moving into place";
    switch (st.state) {
      case lt::torrent_status::checking_files:
      case lt::torrent_status::checking_resume_data:
        return "checking";
      case lt::torrent_status::downloading:
        return "downloading";
      case lt::torrent_status::finished:
      case lt::torrent_status::seeding:
        return "seeding";
      default:
        return "starting";
    }
  }

  void ShowProgress(bool final_line) {
    if (o_.progress == ProgressMode::kBar) {
      // One column short of the width: writing the last column makes some
      // terminals wrap.
      const int width = TerminalColumns(STDERR_FILENO) - 1;
      std::fprintf(stderr, "\r%s\033[K%s", RenderBar(snap_, width).c_str(), final_line ? "\n" : "");
    } else if (o_.progress == ProgressMode::kLines) {
      const auto now = Clock::now();
      if (final_line || now >= next_line_) {
        std::fprintf(stderr, "%s\n", RenderLine(snap_).c_str());
        next_line_ = now + o_.progress_interval;
      }
    }
  }

  void WriteStatus() {
    if (o_.status == nullptr) return;
    if (snap_.role.empty()) Record(h_.status());
    next_status_ = Clock::now() + kStatusEvery;
    o_.status->Update(SnapshotJson(
        snap_,
        (phase_ == Phase::kInPlace || !IsGet() ? final_path_ : staging_->content_path()).string(),
        o_.status_extra ? o_.status_extra() : nlohmann::json()));
  }

  void OnTick() {
    const auto now = Clock::now();
    if (stopping()) {
      if (now >= stop_deadline_) ioc_.stop();
      return;
    }
    if (wire_hold_until_ && now >= *wire_hold_until_) {
      o_.log.Info(
          "the push subscription was not confirmed (or, in a chain, brought nothing) "
          "within " +
          FormatSeconds(o_.wire_hold.count() / 1e3) + "; joining the swarm anyway");
      StartWire();
    }
    if (now >= next_reopen_) {
      // libtorrent opens one listen socket per local address (the wildcard
      // expanded) and closes it when the address goes, but 2.0.8 did not
      // open it again when an interface deleted and made again brought the
      // address back (docker network disconnect and connect, a NIC
      // re-created; tests/netns/relink-test): the node stayed unannounced
      // and unreachable there until it stalled. Re-enumerating keeps the
      // sockets that still match and opens the missing ones; it is cheap.
      next_reopen_ = now + kReopenSocketsEvery;
      ses_->reopen_network_sockets({});
    }
    const lt::torrent_status st = h_.status();
    Record(st);
    if (o_.hooks.on_tick) o_.hooks.on_tick(st.total_payload_download, st.total_payload_upload);
    ShowProgress(false);
    if (now >= next_status_) WriteStatus();
    if (resume_) resume_->Tick(now);
    if (IsGet()) {
      if (phase_ == Phase::kDownloading && st.is_seeding) OnDownloadVerified();
      if (st.total_wanted_done != last_done_ || phase_ != Phase::kDownloading) {
        last_done_ = st.total_wanted_done;
        last_progress_ = now;
      } else if (o_.stall_timeout.count() > 0 && now - last_progress_ >= o_.stall_timeout) {
        FailWith({Kind::kStalled, "no progress for " +
                                      FormatSeconds(o_.stall_timeout.count() / 1e3) + " (" +
                                      std::to_string(st.num_peers) +
                                      " peers connected); verified pieces are kept, run the "
                                      "same command again to resume"});
        return;
      }
      if (phase_ == Phase::kInPlace && linger_deadline_) {
        if (now >= *linger_deadline_) {
          Finish(TransferEnd::kLingerTimeout);
        } else if (o_.swarm_complete && now >= next_poll_) {
          next_poll_ = now + kPollEvery;
          if (o_.swarm_complete()) Finish(TransferEnd::kSwarmComplete);
        }
      }
    } else if (o_.stop_after_copies > 0) {
      double copies = CopiesAmongPeers();
      if (o_.copies_made && now >= next_poll_) {
        next_poll_ = now + kPollEvery;
        copies = std::max(copies, static_cast<double>(o_.copies_made()));
      }
      report_.distributed_copies = std::max(report_.distributed_copies, copies);
      if (report_.distributed_copies >= o_.stop_after_copies) Finish(TransferEnd::kCopiesReached);
    }
  }

  const TransferOptions& o_;
  std::stop_token stop_;
  asio::io_context ioc_;
  asio::steady_timer tick_;
  asio::signal_set signals_;
  std::atomic<bool> drain_posted_{false};  // the only state libtorrent's thread touches
  std::unique_ptr<lt::session> ses_;
  lt::torrent_handle h_;
  std::shared_ptr<const lt::torrent_info> ti_;
  fs::path save_path_, final_path_;
  std::unique_ptr<StagingArea> staging_;     // get only
  std::optional<ResumeSaver> resume_;        // get only, once the torrent is added
  std::unique_ptr<WholeFileDigest> digest_;  // get of a single file (StartDigest)
  std::optional<Result<std::string, std::string>> digest_result_;
  bool awaiting_digest_ = false;  // every piece verified; the move waits for the digest
  Clock::time_point awaiting_since_{};
  Phase phase_ = Phase::kChecking;
  Clock::time_point start_ = Clock::now();
  Clock::time_point next_line_{}, next_status_{}, next_poll_{}, stop_deadline_{};
  Clock::time_point next_reopen_ = Clock::now() + kReopenSocketsEvery;
  bool listening_ = false;  // a TCP listen socket was opened once
  std::optional<Clock::time_point> linger_deadline_;
  bool resumed_ = false;                        // resume data gave verified pieces (see Salvage)
  std::vector<std::string> deferred_trackers_;  // see StartWire
  bool wire_started_ = false;
  bool signalled_ = false;  // a stop signal came (a second one stops at once)
  std::optional<Clock::time_point> wire_hold_until_;  // see WireHeld
  RateMeter down_rate_, up_rate_;
  std::vector<lt::tcp::endpoint> peers_;  // --connect
  int tracker_errors_ = 0;
  std::int64_t last_done_ = -1;
  Clock::time_point last_progress_ = Clock::now();
  std::optional<TransferEnd> end_;
  std::optional<TransferError> error_;
  TransferReport report_;
  ProgressSnapshot snap_;
};

}  // namespace

const char* ToString(TransferEnd end) {
  switch (end) {
    case TransferEnd::kCompleted:
      return "completed";
    case TransferEnd::kSwarmComplete:
      return "swarm-complete";
    case TransferEnd::kLingerTimeout:
      return "linger-timeout";
    case TransferEnd::kCopiesReached:
      return "copies-reached";
    case TransferEnd::kInterrupted:
      return "interrupted";
    case TransferEnd::kAlreadyComplete:
      return "already-complete";
  }
  return "unknown";
}

Result<TransferReport, TransferError> RunTransfer(const TransferOptions& options,
                                                  std::stop_token stop) {
  Transfer t(options, std::move(stop));
  return t.Run();
}

}  // namespace swarmcast::node
