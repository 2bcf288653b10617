// A libtorrent disk back-end that keeps each file open, for the data path.
//
// libtorrent 2.0.8's posix back-end (posix_disk_io) opens and closes the
// file for every 16 KiB block it reads or writes (fopen, fstat, fseek,
// fread or fwrite, fclose), and checks a piece's hash by reading the whole
// piece back, block by block. On the bench LAN at N = 16 that was 290,000
// open/stat/seek/close calls for 1 GiB delivered, plus the read-back.
//
// This back-end serves the three calls of the data path itself, on the
// calling thread like posix_disk_io (so it needs no locks):
// - reads and writes go through a descriptor kept open per file (pread,
//   pwrite; at most kMaxOpenFiles per torrent);
// - a piece whose blocks were written in order (a pushed piece handed over
//   by add_piece, usually a wire piece too) is SHA-1 hashed as it is
//   written, so its hash check reads nothing back; any other piece is read
//   back and hashed as before.
// Everything else (checking files at start, moving, renaming, deleting,
// file priorities, v2 hashes) goes to posix_disk_io, which it wraps. A
// torrent with renamed files, symlinks or a file not to be downloaded
// (part files) goes to posix_disk_io entirely, and so does one that had a
// file renamed, from then on; a moved one is served here again at its new
// path once the move succeeded.
//
// Internal to node/ (libtorrent types).
#pragma once

#include <libtorrent/disk_interface.hpp>
#include <libtorrent/io_context.hpp>
#include <memory>

namespace libtorrent {
struct counters;
struct settings_interface;
}  // namespace libtorrent

namespace swarmcast::node {

inline constexpr int kMaxOpenFiles = 64;

// A disk_io_constructor for lt::session_params.
std::unique_ptr<lt::disk_interface> OpenFileDiskIoConstructor(
    lt::io_context& ios, const lt::settings_interface& settings, lt::counters& counters);

}  // namespace swarmcast::node
