#include "node/payload_check.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <libtorrent/torrent_info.hpp>

#include "node/hash_cache.h"
#include "node/payload_files.h"
#include "node/piece_hasher.h"

namespace swarmcast::node {

Result<PayloadCheck, std::string> CheckPayload(std::string_view torrent_bytes,
                                               const PayloadCheckOptions& o) {
  lt::error_code ec;
  const lt::torrent_info ti(torrent_bytes, ec, lt::from_span);
  if (ec) return Unexpected("metainfo: " + ec.message());
  if (!ti.info_hashes().has_v1()) return Unexpected("metainfo has no v1 piece hashes to check");
  const lt::file_storage& layout = ti.files();
  HashJob job;
  job.piece_length = ti.piece_length();
  job.threads = o.threads;
  job.progress = o.progress;
  std::vector<FileIdentity> identities;
  for (const lt::file_index_t i : layout.file_range()) {
    if (layout.pad_file_at(i)) {
      job.segments.push_back({.path = {}, .size = layout.file_size(i)});
      continue;
    }
    const std::filesystem::path path = o.dir / layout.file_path(i);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      return Unexpected(path.string() + ": " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) return Unexpected(path.string() + ": not a regular file");
    if (st.st_size != layout.file_size(i)) {
      return Unexpected(path.string() + " is " + std::to_string(st.st_size) +
                        " bytes; the metainfo says " + std::to_string(layout.file_size(i)));
    }
    auto id = IdentityOf(path);
    if (!id) return Unexpected(std::move(id.error()));
    identities.push_back(*id);
    job.segments.push_back({.path = path, .size = layout.file_size(i)});
  }

  PayloadCheck out;
  out.pieces = ti.num_pieces();
  auto hashes =
      HashPiecesCached(job, identities, HashCache(o.hash_cache_dir, o.hash_cache_settle), o.rehash);
  if (!hashes) return Unexpected(std::move(hashes.error()));
  out.from_cache = hashes->from_cache;
  out.cache_warning = hashes->warning;
  for (const lt::piece_index_t p : ti.piece_range()) {
    const auto at = static_cast<std::size_t>(static_cast<int>(p)) * 20;
    if (lt::sha1_hash(hashes->hashes.data() + at) != ti.hash_for_piece(p)) {
      if (out.first_bad < 0) out.first_bad = static_cast<int>(p);
      ++out.bad_pieces;
    }
  }
  return out;
}

}  // namespace swarmcast::node
