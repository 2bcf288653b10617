// Piece hashes kept from an earlier hashing of the same files, so a
// restarted seed of an unchanged 50 GB image serves in seconds instead of
// reading it all again (100 s at 500 MB/s).
//
// An entry is keyed by the piece length and, for every file, its absolute
// path and FileIdentity (device, inode, size, mtime, ctime): a rewritten,
// replaced or touched file misses. A write that changes none of those
// (block-level edits under the file system) is not seen: `--rehash`.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "node/payload_files.h"
#include "node/piece_hasher.h"

namespace swarmcast::node {

// Where the cache lives: $SWARMCAST_CACHE_DIR, else $XDG_CACHE_HOME/swarmcast,
// else ~/.cache/swarmcast, with "hashes" below it; empty when none is set.
std::filesystem::path DefaultHashCacheDir();

class HashCache {
 public:
  // A file modified less than this before its hashing began is not cached:
  // file times advance in clock ticks (4 ms here), so a write in the same
  // tick as the read would leave the identity unchanged ("racy git").
  static constexpr std::chrono::milliseconds kDefaultSettle{2000};

  // `dir` empty: a cache that never hits and stores nothing.
  explicit HashCache(std::filesystem::path dir, std::chrono::milliseconds settle = kDefaultSettle)
      : dir_(std::move(dir)), settle_(settle) {}

  // The key of hashing `segments` (a pad has an empty path) whose files had
  // `identities` (one per segment with a path, in order) at `piece_length`.
  static std::string Key(const std::vector<HashSegment>& segments,
                         const std::vector<FileIdentity>& identities, std::int64_t piece_length);

  // The stored hashes for `key`, if an entry of exactly `pieces` hashes is
  // there; a damaged or foreign entry is a miss.
  std::optional<std::string> Lookup(const std::string& key, std::int64_t pieces) const;

  // Keeps `hashes` under `key`; the oldest entries go beyond a few hundred.
  // Returns why not when the directory is unsafe or cannot be written (the
  // caller logs it: a cache that cannot be written costs time, not data).
  std::optional<std::string> Store(const std::string& key, const std::string& hashes) const;

  const std::filesystem::path& dir() const { return dir_; }
  std::chrono::milliseconds settle() const { return settle_; }

 private:
  std::filesystem::path dir_;
  std::chrono::milliseconds settle_;
};

struct CachedHashes {
  std::string hashes;  // 20 bytes per piece
  bool from_cache = false;
  std::string warning;  // why the result was not kept, if it was not
};

// HashPieces(job) through `cache`: `identities` are those of job's files
// (one per segment with a path, in order) when they were listed. The result
// is kept only if no file changed while it was read (else the entry would
// pair the new identity with hashes of the old bytes): a change is an error.
// Files modified within cache.settle() before hashing began are hashed but
// not kept.
Result<CachedHashes, std::string> HashPiecesCached(const HashJob& job,
                                                   const std::vector<FileIdentity>& identities,
                                                   const HashCache& cache, bool rehash);

}  // namespace swarmcast::node
