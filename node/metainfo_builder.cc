#include "node/metainfo_builder.h"

#include <libtorrent/create_torrent.hpp>
#include <libtorrent/file_storage.hpp>
#include <libtorrent/settings_pack.hpp>
#include <libtorrent/torrent_info.hpp>
#include <sstream>
#include <thread>

namespace swarmcast::node {
namespace fs = std::filesystem;

Result<BuiltMetainfo, std::string> BuildMetainfo(const BuildOptions& o) {
  std::error_code fec;
  const fs::path path = fs::absolute(o.path, fec);
  const auto st = fs::status(path, fec);
  if (fec || !fs::exists(st)) return Unexpected(o.path.string() + ": no such file or directory");
  if (!fs::is_regular_file(st) && !fs::is_directory(st)) {
    return Unexpected(o.path.string() + ": not a regular file or directory");
  }

  lt::file_storage files;
  // Only regular files: sockets, devices and FIFOs inside a directory are
  // left out rather than read.
  lt::add_files(files, path.string(),
                [](const std::string& p) {
                  std::error_code ec;
                  const auto s = fs::symlink_status(p, ec);
                  return !ec && (fs::is_regular_file(s) || fs::is_directory(s));
                },
                {});
  if (files.num_files() == 0 || files.total_size() == 0) {
    return Unexpected(o.path.string() + ": holds no data to share");
  }
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

  lt::settings_pack sp;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  sp.set_int(lt::settings_pack::hashing_threads, o.hashing_threads > 0 ? o.hashing_threads : cores);
  sp.set_int(lt::settings_pack::aio_threads, cores);
  const std::int64_t total = ct.num_pieces();
  std::int64_t done = 0;
  lt::error_code ec;
  lt::set_piece_hashes(
      ct, path.parent_path().string(), sp,
      [&](lt::piece_index_t) {
        ++done;
        if (o.progress) o.progress(done, total);
      },
      ec);
  if (ec) return Unexpected(o.path.string() + ": hashing failed: " + ec.message());

  BuiltMetainfo out;
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

std::int64_t ChoosePieceSize(std::int64_t total_size) {
  constexpr std::int64_t kMin = 64 << 10;
  constexpr std::int64_t kMax = 16 << 20;
  std::int64_t piece = kMin;
  while (piece < kMax && total_size / piece > 1024) piece *= 2;
  return piece;
}

}  // namespace swarmcast::node
