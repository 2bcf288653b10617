// Checks data on disk against a metainfo's v1 piece hashes before a seed
// serves or pushes it (`seed --torrent`): every piece is read and hashed
// by PieceHasher, or its hashes come from the HashCache when no file
// changed since an earlier check or `create`.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "node/hash_cache.h"
#include "node/payload_files.h"
#include "node/piece_hasher.h"
#include "proto/result.h"

namespace libtorrent {
class file_storage;
}

namespace swarmcast::node {

// What hashing a metainfo's file layout needs: the job's segments (pad
// files as zeros) and the identities of the files, in layout order.
struct HashInputs {
  HashJob job;
  std::vector<FileIdentity> identities;
};
// Where the file at `torrent_path` (of `size` bytes in the layout) is on
// disk and what its identity is; an error when it is not there as listed.
using FileLocator = std::function<Result<PayloadFile, std::string>(const std::string& torrent_path,
                                                                   std::int64_t size)>;
Result<HashInputs, std::string> HashInputsFor(const libtorrent::file_storage& layout,
                                              const FileLocator& locate);

struct PayloadCheckOptions {
  std::filesystem::path dir;  // the files are at dir/<path in the metainfo>
  // A single-file torrent's file is at dir/<this> instead (get --as); empty:
  // the metainfo's name.
  std::string single_file_name;
  std::filesystem::path hash_cache_dir;  // empty: no cache
  // Files modified this recently are not cached (hash_cache.h); tests shorten it.
  std::chrono::milliseconds hash_cache_settle = HashCache::kDefaultSettle;
  bool rehash = false;
  int threads = 0;  // 0: one per core
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct PayloadCheck {
  std::int64_t pieces = 0;
  std::int64_t bad_pieces = 0;  // hash differs from the metainfo's
  std::int64_t first_bad = -1;
  bool from_cache = false;
  std::string cache_warning;
};

// `torrent_bytes` must have passed proto::CheckMetainfo. Fails when a file
// is missing, is not a regular file, or has another size than listed; a
// piece that hashes differently is counted, not an error.
Result<PayloadCheck, std::string> CheckPayload(std::string_view torrent_bytes,
                                               const PayloadCheckOptions& options);

// After a get verified every piece and moved the content to
// dir/<name>: keeps the metainfo's piece hashes in the cache under the
// files' identities now, so checking the same files again (a get run a
// second time) reads nothing. No settle wait: the writer was this process
// and it is done. `single_file_name` as in PayloadCheckOptions. Returns why
// not, if not.
// With `sha256` (a single file's whole-file digest, 64 hex), keeps that too,
// under the same identities (WholeFileSha256FromCache).
std::optional<std::string> RememberVerifiedPayload(std::string_view torrent_bytes,
                                                   const std::filesystem::path& dir,
                                                   const std::filesystem::path& hash_cache_dir,
                                                   const std::string& single_file_name = {},
                                                   const std::string& sha256 = {});

// The whole-file SHA-256 a finished get kept for the single file of
// `torrent_bytes` at dir/<name or single_file_name>, if the file is
// unchanged since (same identity); nullopt otherwise.
std::optional<std::string> WholeFileSha256FromCache(std::string_view torrent_bytes,
                                                    const std::filesystem::path& dir,
                                                    const std::filesystem::path& hash_cache_dir,
                                                    const std::string& single_file_name = {});

}  // namespace swarmcast::node
