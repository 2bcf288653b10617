// Resume data of a get: saved whenever pieces finish (one save in flight),
// written atomically, and on a restart trusted for one thing only, which
// pieces were verified. Everything else a resume file could say (file
// paths, save path, trackers, web seeds, peers, rate limits, flags) is
// ignored: only the checked metainfo and the operator's flags decide where
// bytes go and whom the node talks to, so a resume file planted or edited
// by someone else cannot widen that.
//
// Internal to node/ (libtorrent types). Control thread only.
#pragma once

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

class ResumeSaver {
 public:
  ResumeSaver(std::filesystem::path path, lt::torrent_handle handle, proto::Logger log);

  // Asks libtorrent for resume data; while a save is in flight the request
  // is remembered and made once it returns.
  void Save();
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
};

}  // namespace swarmcast::node
