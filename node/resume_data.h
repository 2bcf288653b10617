// Resume data of a get: saved when pieces have finished, at most once per
// kResumeSaveEvery (one save in flight), written atomically, and on a
// restart trusted for one thing only, which pieces were verified.
// Everything else a resume file could say (file paths, save path,
// trackers, web seeds, peers, rate limits, flags) is ignored: only the
// checked metainfo and the operator's flags decide where bytes go and whom
// the node talks to, so a resume file planted or edited by someone else
// cannot widen that.
//
// Internal to node/ (libtorrent types). Control thread only.
#pragma once

#include <chrono>
#include <filesystem>
#include <libtorrent/alert.hpp>
#include <libtorrent/bitfield.hpp>
#include <libtorrent/torrent_handle.hpp>
#include <libtorrent/torrent_info.hpp>
#include <string>

#include "proto/log.h"
#include "proto/result.h"
#include "proto/thread_checker.h"

namespace swarmcast::node {

// The verified pieces a resume file lists for `ti` (bounded read; the file
// must be for the same v1 info-hash and list no piece past the end).
Result<lt::typed_bitfield<lt::piece_index_t>, std::string> LoadVerifiedPieces(
    const std::filesystem::path& path, const lt::torrent_info& ti);

// A save per finished piece (as it was) cost about 3% of the machine's
// CPU at N = 16 on the bench LAN: 230 saves (libtorrent's resume entry,
// bencoding, a file written and renamed) per receiver in ten seconds.
// What a SIGKILL loses by saving less often is found again on restart
// (node/piece_salvage.h): a second's pieces hashed, not downloaded.
inline constexpr std::chrono::milliseconds kResumeSaveEvery{1000};

class ResumeSaver {
 public:
  using Clock = std::chrono::steady_clock;
  ResumeSaver(std::filesystem::path path, lt::torrent_handle handle, proto::Logger log);

  // Pieces have finished: asks libtorrent for resume data, or, within
  // kResumeSaveEvery of the last request, remembers to (Tick makes it).
  // While a save is in flight the request is made once it returns.
  void Save(Clock::time_point now = Clock::now());
  // Every tick of the transfer: makes a put-off save once it is due.
  void Tick(Clock::time_point now = Clock::now());
  // The last save, with the disk cache flushed. False when there is
  // nothing to wait for (saving was stopped); otherwise wait until
  // Handle() says kFinalSaved.
  bool SaveFinal();
  // No more saves or writes: the download is being moved into place.
  void StopSaving() {
    owner_.AssertOnOwnerThread();
    stopped_ = true;
  }

  enum class Outcome { kNotMine, kSaved, kFinalSaved };
  // Feeds one alert; save_resume_data(_failed) alerts are this saver's.
  Outcome Handle(const lt::alert* a);

 private:
  void Request(bool flush) REQUIRES(owner_);

  std::filesystem::path path_;
  lt::torrent_handle handle_;
  proto::Logger log_;
  // The control thread (the one that feeds it alerts) owns the rest.
  ThreadChecker owner_;
  bool in_flight_ GUARDED_BY(owner_) = false;
  bool again_ GUARDED_BY(owner_) = false;  // asked while one was in flight
  bool final_wanted_ GUARDED_BY(owner_) = false;
  bool in_flight_is_final_ GUARDED_BY(owner_) = false;
  bool stopped_ GUARDED_BY(owner_) = false;
  bool due_ GUARDED_BY(owner_) = false;  // pieces finished since the last request
  Clock::time_point not_before_ GUARDED_BY(owner_){};
};

}  // namespace swarmcast::node
