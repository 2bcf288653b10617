// ContentFiles: the seed's files of one torrent, opened for the fan-out
// backends to send chunks from (a chunk lies in one file: proto/
// content_layout.h). A file opens read-only on first use; the cache keeps
// at most `max_open` open, closing the least recently used first, so a
// folder of thousands of files needs few descriptors. A descriptor handed
// out stays valid while its shared_ptr lives (a frame still being sent),
// even after the cache has let go of it.
//
// Not thread-safe: the push sender's thread owns it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "node/push/tcp.h"
#include "proto/content_layout.h"
#include "proto/result.h"

namespace swarmcast::push {

class ContentFiles {
 public:
  using Fd = std::shared_ptr<const UniqueFd>;

  // `root`: the directory the layout's paths are relative to.
  ContentFiles(std::filesystem::path root, std::shared_ptr<const proto::ContentLayout> layout,
               std::size_t max_open = 64);

  // The open file `file` (an index into the layout's files), or why it
  // cannot be opened.
  Result<Fd, std::string> Open(std::uint32_t file);
  // Asks the kernel to start reading torrent bytes [offset, offset +
  // length) into the page cache (posix_fadvise WILLNEED), file by file.
  void ReadAhead(std::uint64_t offset, std::uint64_t length);

  const proto::ContentLayout& layout() const { return *layout_; }

 private:
  std::filesystem::path root_;
  std::shared_ptr<const proto::ContentLayout> layout_;
  std::size_t max_open_;
  std::list<std::uint32_t> recent_;  // most recent first
  struct Entry {
    Fd fd;
    std::list<std::uint32_t>::iterator at;
  };
  std::unordered_map<std::uint32_t, Entry> open_;
};

}  // namespace swarmcast::push
