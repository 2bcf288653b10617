#include "node/metainfo_builder.h"

#include <libtorrent/create_torrent.hpp>
#include <libtorrent/file_storage.hpp>
#include <libtorrent/posix_disk_io.hpp>
#include <libtorrent/settings_pack.hpp>
#include <libtorrent/torrent_info.hpp>
#include <map>
#include <sstream>
#include <thread>

#include "node/hash_cache.h"
#include "node/payload_check.h"
#include "node/payload_files.h"
#include "node/piece_hasher.h"

namespace swarmcast::node {
namespace fs = std::filesystem;
namespace {

// The v1 hashes of ct's pieces, from the cache or by reading the files.
Result<CachedHashes, std::string> V1Hashes(const lt::create_torrent& ct, const Payload& payload,
                                           const BuildOptions& o) {
  std::map<std::string, const PayloadFile*> by_path;
  for (const auto& f : payload.files) by_path[f.torrent_path] = &f;
  auto in = HashInputsFor(
      ct.files(),
      [&](const std::string& torrent_path, std::int64_t) -> Result<PayloadFile, std::string> {
        const auto it = by_path.find(torrent_path);
        if (it == by_path.end()) return Unexpected("internal: " + torrent_path + " not listed");
        return *it->second;
      });
  if (!in) return Unexpected(std::move(in.error()));
  in->job.threads = o.hashing_threads;
  in->job.progress = o.progress;
  return HashPiecesCached(in->job, in->identities, HashCache(o.hash_cache_dir, o.hash_cache_settle),
                          o.rehash);
}

}  // namespace

Result<BuiltMetainfo, std::string> BuildMetainfo(const BuildOptions& o) {
  auto payload = ListPayload(o.path);
  if (!payload) return Unexpected(std::move(payload.error()));
  lt::file_storage files;
  for (const auto& f : payload->files) files.add_file(f.torrent_path, f.identity.size);
  const std::int64_t piece = o.piece_size > 0 ? o.piece_size : ChoosePieceSize(files.total_size());
  if (piece < (16 << 10) || (piece & (piece - 1)) != 0 || piece > (64 << 20)) {
    return Unexpected(std::string("piece size must be a power of two in [16 KiB, 64 MiB]"));
  }

  lt::create_flags_t flags = {};
  if (!o.hybrid) flags |= lt::create_torrent::v1_only;
  lt::create_torrent ct(files, static_cast<int>(piece), flags);
  if (!o.announce_url.empty()) ct.add_tracker(o.announce_url);
  if (!o.comment.empty()) ct.set_comment(o.comment.c_str());
  ct.set_creator("swarmcast 0.1");

  BuiltMetainfo out;
  if (!o.hybrid) {
    auto hashes = V1Hashes(ct, *payload, o);
    if (!hashes) return Unexpected(o.path.string() + ": " + hashes.error());
    out.hashes_from_cache = hashes->from_cache;
    out.cache_warning = hashes->warning;
    for (const lt::piece_index_t p : ct.piece_range()) {
      const auto at = static_cast<std::size_t>(static_cast<int>(p)) * 20;
      ct.set_hash(p, lt::sha1_hash(hashes->hashes.data() + at));
    }
  } else {
    lt::settings_pack sp;
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    sp.set_int(lt::settings_pack::hashing_threads,
               o.hashing_threads > 0 ? o.hashing_threads : cores);
    const std::int64_t total = ct.num_pieces();
    std::int64_t done = 0;
    lt::error_code ec;
    lt::set_piece_hashes(
        ct, payload->root.parent_path().string(), sp, lt::posix_disk_io_constructor,
        [&](lt::piece_index_t) {
          ++done;
          if (o.progress) o.progress(done, total);
        },
        ec);
    if (ec) return Unexpected(o.path.string() + ": hashing failed: " + ec.message());
  }

  std::vector<char> buf = ct.generate_buf();
  out.bytes.assign(buf.begin(), buf.end());
  // The info-hash is taken from libtorrent's own parse of the bytes we
  // just wrote, so it is the one every client computes.
  lt::torrent_info ti(out.bytes, lt::from_span);
  std::ostringstream hex;
  hex << ti.info_hashes().v1;
  out.info_hash = hex.str();
  out.name = ti.name();
  out.total_size = ti.total_size();
  out.piece_length = ti.piece_length();
  out.num_pieces = ti.num_pieces();
  out.num_files = ti.num_files();
  return out;
}

}  // namespace swarmcast::node
