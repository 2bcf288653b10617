// The whole-file SHA-256 of a single-file download, computed while it is
// written. libtorrent verifies pieces in any order; the digest needs the
// bytes in file order. So each verified piece is marked here, and a worker
// thread hashes the verified prefix: whenever the piece at the frontier is
// verified, it reads that piece back with pread (just written, so it is
// normally served from the page cache, not the disk) and moves on.
// Pieces verified at the start (a resumed get) are read from disk as the
// frontier reaches them.
//
// So there is no second pass over the file after the download, but every
// byte is read back once, from memory unless the page cache evicted it;
// bytes_read() says how much (docs/benchmarks.md measures the cost).
//
// Threads: MarkVerified and the destructor from the owner's thread; the
// worker calls `done` once, on its own thread, with the lowercase hex
// digest or why none (the file could not be read).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "proto/mutex.h"
#include "proto/result.h"

namespace swarmcast::node {

class WholeFileDigest {
 public:
  using Done = std::function<void(Result<std::string, std::string>)>;
  // `file` holds `size` bytes when complete, in pieces of `piece_length`.
  WholeFileDigest(std::filesystem::path file, std::int64_t size, std::int64_t piece_length,
                  Done done);
  // Stops the worker (an unfinished digest is dropped, `done` not called).
  ~WholeFileDigest();
  WholeFileDigest(const WholeFileDigest&) = delete;
  WholeFileDigest& operator=(const WholeFileDigest&) = delete;

  // Piece `piece` passed its hash check (idempotent; out of range ignored).
  void MarkVerified(std::int64_t piece);
  std::int64_t bytes_read() const;

 private:
  void Work();

  const std::filesystem::path file_;
  const std::int64_t size_, piece_length_, pieces_;
  Done done_;
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<bool> verified_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::int64_t bytes_read_ GUARDED_BY(mu_) = 0;
  std::thread worker_;  // last: starts once the members above exist
};

// SHA-256 of a whole file in one sequential read (the lowercase hex
// digest), for a file that was complete before this process ran.
Result<std::string, std::string> Sha256OfFile(const std::filesystem::path& file);

}  // namespace swarmcast::node
