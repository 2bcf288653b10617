#include "node/staging_area.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <system_error>

#include "node/units.h"

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;

std::string Errno() { return std::generic_category().message(errno); }

// Bytes the files under `dir` already occupy on disk (sparse-aware).
std::int64_t AllocatedBytes(const fs::path& dir) {
  std::int64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<std::int64_t>(st.st_blocks) * 512;
    }
  }
  return total;
}

// Why `path` cannot serve as a directory of ours: it must exist (it is
// created if missing) as a real directory, not a link, owned by this user.
std::optional<std::string> NotOurDirectory(const fs::path& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return "cannot create " + path.string() + ": " + Errno();
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return path.string() + ": " + Errno();
  if (!S_ISDIR(st.st_mode)) {
    return path.string() + " is not a directory (a link or a file is never followed)";
  }
  if (st.st_uid != ::geteuid()) {
    return path.string() + " belongs to another user; refusing to use it";
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<StagingArea>, std::string> StagingArea::Open(const fs::path& dir,
                                                                    const std::string& info_hash,
                                                                    const std::string& name,
                                                                    std::int64_t total_bytes) {
  std::unique_ptr<StagingArea> s(new StagingArea());
  s->name_ = name;
  s->root_ = dir / ".swarmcast";
  s->save_path_ = s->root_ / info_hash;
  s->resume_path_ = s->root_ / (info_hash + ".resume");
  s->lock_path_ = s->root_ / (info_hash + ".lock");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Unexpected("cannot create " + dir.string() + ": " + ec.message());
  for (const fs::path& d : {s->root_, s->save_path_}) {
    if (auto why = NotOurDirectory(d)) return Unexpected(*why);
  }
  // O_NOFOLLOW: a planted link is an error, never a file written elsewhere.
  s->lock_fd_ = ::open(s->lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (s->lock_fd_ < 0) return Unexpected("cannot open " + s->lock_path_.string() + ": " + Errno());
  if (::flock(s->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Unexpected("another swarmcast process is downloading " + name + " into " + dir.string());
  }
  if (::access(s->save_path_.c_str(), W_OK) != 0) {
    return Unexpected("cannot write to " + dir.string() + ": " + Errno());
  }
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) == 0) {
    const std::int64_t avail =
        static_cast<std::int64_t>(vfs.f_bavail) * static_cast<std::int64_t>(vfs.f_frsize);
    const std::int64_t have = AllocatedBytes(s->save_path_);
    if (avail + have < total_bytes) {
      return Unexpected("not enough space in " + dir.string() + ": needs " +
                        FormatBytes(static_cast<double>(total_bytes - have)) + ", " +
                        FormatBytes(static_cast<double>(avail)) + " free");
    }
  }
  return s;
}

StagingArea::~StagingArea() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void StagingArea::RemoveAfterMove() {
  std::error_code ec;
  fs::remove(resume_path_, ec);
  fs::remove_all(save_path_, ec);
  fs::remove(lock_path_, ec);
  fs::remove(root_, ec);  // only if empty
}

}  // namespace swarmcast::node
