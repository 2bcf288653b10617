#include "node/push/content_files.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace swarmcast::push {

ContentFiles::ContentFiles(std::filesystem::path root,
                           std::shared_ptr<const proto::ContentLayout> layout, std::size_t max_open)
    : root_(std::move(root)),
      layout_(std::move(layout)),
      max_open_(std::max<std::size_t>(1, max_open)) {}

Result<ContentFiles::Fd, std::string> ContentFiles::Open(std::uint32_t file) {
  if (auto it = open_.find(file); it != open_.end()) {
    recent_.splice(recent_.begin(), recent_, it->second.at);
    return it->second.fd;
  }
  const std::filesystem::path path = root_ / layout_->files().at(file).path;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Unexpected("open " + path.string() + ": " + std::strerror(errno));
  // The scan reads each file front to back; let the kernel read ahead.
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  Fd shared = std::make_shared<const UniqueFd>(std::move(fd));
  recent_.push_front(file);
  open_[file] = Entry{shared, recent_.begin()};
  // Closing drops only the cache's reference: a frame still being sent
  // keeps its descriptor.
  while (open_.size() > max_open_) {
    open_.erase(recent_.back());
    recent_.pop_back();
  }
  return shared;
}

void ContentFiles::ReadAhead(std::uint64_t offset, std::uint64_t length) {
  for (const proto::Chunk& range : layout_->FileRanges(offset, length)) {
    auto fd = Open(range.file);
    if (!fd) continue;  // the send itself reports the error
    ::posix_fadvise((*fd)->get(), static_cast<off_t>(range.file_offset),
                    static_cast<off_t>(range.length), POSIX_FADV_WILLNEED);
  }
}

}  // namespace swarmcast::push
