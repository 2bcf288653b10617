// Hashes a file or directory into a metainfo (.torrent) that stock
// BitTorrent clients can read: BitTorrent v1 by default, or hybrid v1+v2.
// v1 pieces are hashed by PieceHasher (one thread per core, reading in
// small blocks) and kept in the HashCache; hybrid torrents need v2 merkle
// trees and are hashed by libtorrent through its pread back-end (bounded
// memory too, but one core and not cached). Progress is reported per
// finished piece on the calling thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "node/hash_cache.h"
#include "proto/piece_size.h"
#include "proto/result.h"

namespace swarmcast::node {

struct BuildOptions {
  std::filesystem::path path;   // a regular file or a directory
  std::int64_t piece_size = 0;  // 0: ChoosePieceSize(total size)
  bool hybrid = false;          // v1+v2; default v1 only
  std::string announce_url;     // may be empty
  std::string comment;
  int hashing_threads = 0;  // 0: one per core
  // Reuse and keep v1 piece hashes here (see hash_cache.h); empty: no cache.
  std::filesystem::path hash_cache_dir;
  // Files modified this recently are not cached (hash_cache.h); tests shorten it.
  std::chrono::milliseconds hash_cache_settle = HashCache::kDefaultSettle;
  bool rehash = false;  // ignore a cached entry (and replace it)
  // Called on the calling thread after each piece: (pieces done, total).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct BuiltMetainfo {
  std::string bytes;      // the bencoded .torrent
  std::string info_hash;  // v1 info-hash, 40 hex
  std::string name;
  std::int64_t total_size = 0;
  std::int64_t piece_length = 0;
  std::int64_t num_pieces = 0;
  std::int64_t num_files = 0;
  bool hashes_from_cache = false;
  // Set when the cache could not be written (the torrent is still good).
  std::string cache_warning;
};

// Piece size for a payload of `total_size` bytes (proto/piece_size.h).
using proto::ChoosePieceSize;

// Fails (with a message naming the path) when the path is missing, is not
// a regular file or directory, holds no data, cannot be read, or holds
// what ListPayload refuses (links to folders, dangling links, devices).
Result<BuiltMetainfo, std::string> BuildMetainfo(const BuildOptions& options);

}  // namespace swarmcast::node
