// Where a get keeps its download until every piece has passed its hash
// check: DIR/.swarmcast/<info-hash>/ for the data,
// DIR/.swarmcast/<info-hash>.resume for the resume data, and an flock on
// DIR/.swarmcast/<info-hash>.lock so that two processes never write the
// same staging files. Only the move into place puts anything at DIR/<name>.
//
// No torrent can reach the staging area: ".swarmcast" is a reserved name
// (proto::CheckMetainfo refuses it), and a .swarmcast that is not a real
// directory of this user (a symlink, someone else's) is refused, not used.
//
// RAII: the lock is held from Open() until destruction. One owner thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "proto/result.h"

namespace swarmcast::node {

class StagingArea {
 public:
  // Creates (or reopens, to resume) the staging area for `name` (the
  // torrent's top-level name) in `dir`, takes the lock, and checks that
  // `dir` is writable and has room for what is still missing of
  // `total_bytes`. Fails with a message naming the path.
  static Result<std::unique_ptr<StagingArea>, std::string> Open(const std::filesystem::path& dir,
                                                                const std::string& info_hash_hex,
                                                                const std::string& name,
                                                                std::int64_t total_bytes);
  ~StagingArea();
  StagingArea(const StagingArea&) = delete;
  StagingArea& operator=(const StagingArea&) = delete;

  const std::filesystem::path& save_path() const { return save_path_; }  // libtorrent's
  const std::filesystem::path& resume_path() const { return resume_path_; }
  // Where the staged content is now (save_path/name).
  std::filesystem::path content_path() const { return save_path_ / name_; }

  // After the content was moved into DIR: removes the staging directory,
  // the resume data and the lock file (and .swarmcast itself if empty).
  void RemoveAfterMove();

 private:
  StagingArea() = default;

  std::filesystem::path root_, save_path_, resume_path_, lock_path_;
  std::string name_;
  int lock_fd_ = -1;
};

}  // namespace swarmcast::node
