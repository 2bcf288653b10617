#include "node/payload_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace swarmcast::node {
namespace fs = std::filesystem;
namespace {

// A folder of model weights has thousands of files at most; a bound keeps
// a mistaken `seed /` from walking the whole machine.
constexpr std::size_t kMaxFiles = 1'000'000;
constexpr int kMaxDepth = 32;  // the metainfo check's limit

FileIdentity ToIdentity(const struct stat& st) {
  return {
      .device = static_cast<std::uint64_t>(st.st_dev),
      .inode = static_cast<std::uint64_t>(st.st_ino),
      .size = static_cast<std::int64_t>(st.st_size),
      .mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
      .ctime_ns =
          static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec};
}

class Walker {
 public:
  explicit Walker(Payload& out) : out_(out) {}

  Result<bool, std::string> Walk(const fs::path& dir, const std::string& prefix, int depth) {
    if (depth > kMaxDepth) return Unexpected(dir.string() + ": nested deeper than 32 folders");
    std::error_code ec;
    std::vector<fs::directory_entry> entries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      entries.push_back(*it);
    }
    if (ec) return Unexpected(dir.string() + ": " + ec.message());
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.path().filename().string() < b.path().filename().string();
    });
    for (const auto& e : entries) {
      const fs::path p = e.path();
      const std::string rel = prefix + "/" + p.filename().string();
      struct stat lst {};
      if (::lstat(p.c_str(), &lst) != 0)
        return Unexpected(p.string() + ": " + std::strerror(errno));
      if (S_ISDIR(lst.st_mode)) {
        auto r = Walk(p, rel, depth + 1);
        if (!r) return r;
        continue;
      }
      struct stat st = lst;
      if (S_ISLNK(lst.st_mode)) {
        if (::stat(p.c_str(), &st) != 0) {
          return Unexpected(p.string() + ": a link to nothing (" + std::strerror(errno) +
                            "); remove it or point it at a file");
        }
        if (S_ISDIR(st.st_mode)) {
          return Unexpected(p.string() +
                            ": a link to a folder; swarmcast follows links to files only "
                            "(copy the folder in, or seed it separately)");
        }
      }
      if (!S_ISREG(st.st_mode)) {
        return Unexpected(p.string() + ": not a regular file (a device, socket or FIFO)");
      }
      if (out_.files.size() >= kMaxFiles) {
        return Unexpected(out_.root.string() + ": more than 1,000,000 files");
      }
      out_.files.push_back({.torrent_path = rel, .disk_path = p, .identity = ToIdentity(st)});
      out_.total_size += static_cast<std::int64_t>(st.st_size);
    }
    return true;
  }

 private:
  Payload& out_;
};

}  // namespace

Result<FileIdentity, std::string> IdentityOf(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Unexpected(path.string() + ": " + std::strerror(errno));
  return ToIdentity(st);
}

Result<Payload, std::string> ListPayload(const fs::path& path) {
  std::error_code ec;
  fs::path root = fs::absolute(path, ec).lexically_normal();
  if (ec) return Unexpected(path.string() + ": " + ec.message());
  // "dir/" names the folder itself.
  if (!root.has_filename() && root.has_parent_path()) root = root.parent_path();
  if (root.filename().empty() || root == root.root_path()) {
    return Unexpected(path.string() + ": cannot share a file system root");
  }
  Payload out;
  out.root = root;
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) {
    return Unexpected(path.string() + ": " + std::strerror(errno));
  }
  const std::string name = root.filename().string();
  if (S_ISREG(st.st_mode)) {
    out.files.push_back({.torrent_path = name, .disk_path = root, .identity = ToIdentity(st)});
    out.total_size = static_cast<std::int64_t>(st.st_size);
  } else if (S_ISDIR(st.st_mode)) {
    out.is_directory = true;
    auto walked = Walker(out).Walk(root, name, 1);
    if (!walked) return Unexpected(std::move(walked.error()));
  } else {
    return Unexpected(path.string() + ": not a regular file or directory");
  }
  if (out.files.empty() || out.total_size == 0) {
    return Unexpected(path.string() + ": holds no data to share");
  }
  return out;
}

}  // namespace swarmcast::node
