// SHA-1 of every piece of a payload laid out as consecutive files
// (BitTorrent v1 piece hashes), read sequentially with pread in small
// blocks: memory is one block per thread whatever the file size, where
// mapping the file made the whole image resident (4 GiB file: 4.1 GB RSS).
// Workers take pieces in order from a shared counter, so the reads stay
// close to one sequential stream for the disk's read-ahead.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "proto/result.h"

namespace swarmcast::node {

struct HashSegment {
  std::filesystem::path path;  // empty: a pad file, hashed as zeros
  std::int64_t size = 0;
};

struct HashJob {
  std::vector<HashSegment> segments;  // in metainfo order
  std::int64_t piece_length = 0;      // > 0
  int threads = 0;                    // 0: one per core
  // Called on the calling thread once per finished piece, in order of
  // completion: (pieces done, total).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

// 20 bytes per piece, piece 0 first. Fails with a message naming the file
// when one cannot be opened or is shorter than listed (it changed).
Result<std::string, std::string> HashPieces(const HashJob& job);

}  // namespace swarmcast::node
