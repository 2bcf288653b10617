// The files a seed shares from PATH, in the order the metainfo lists them,
// with the identity that tells whether a file changed since it was hashed.
// No libtorrent here: the hasher and the hash cache work on this list.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "proto/result.h"

namespace swarmcast::node {

// What stat(2) says about a file's content: if all of it is equal, the file
// was not rewritten in between. ctime is here because mtime can be set back
// by any writer (touch -d, rsync -t) while ctime cannot.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

struct PayloadFile {
  // Relative to PATH's parent, starting with PATH's own name: "disk.img",
  // or "weights/shards/model-00001.safetensors". '/'-separated.
  std::string torrent_path;
  std::filesystem::path disk_path;  // absolute; a link is kept, not resolved
  FileIdentity identity;            // of the file the path reaches
};

struct Payload {
  std::filesystem::path root;  // PATH, absolute, no trailing separator
  bool is_directory = false;
  std::vector<PayloadFile> files;
  std::int64_t total_size = 0;
};

// Lists PATH: a regular file, or a directory walked in byte order of the
// names (so the same folder gives the same metainfo on every machine).
// Inside a directory, a symbolic link to a regular file is followed (model
// caches are trees of links to blobs); a link to a directory, a dangling
// link, or a device, socket or FIFO is refused with a message naming it,
// rather than silently left out of the swarm. Empty directories hold no
// file and are not listed (BitTorrent cannot carry them).
Result<Payload, std::string> ListPayload(const std::filesystem::path& path);

// The identity of the file `path` reaches now (links followed).
Result<FileIdentity, std::string> IdentityOf(const std::filesystem::path& path);

}  // namespace swarmcast::node
