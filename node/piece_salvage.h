// After a restart from resume data: finds the pieces that are on disk and
// pass their hash check although the resume data does not list them (the
// pieces verified in the last moments before a SIGKILL, after the last
// save). Without this they would be downloaded again; at LAN rates one
// save round trip under load is hundreds of pieces.
//
// Internal to node/ (includes libtorrent headers). Reads only regions the
// file system reports as data (SEEK_DATA), so the never-written rest of a
// sparse file costs nothing. Runs on the calling (control) thread.
#pragma once

#include <functional>
#include <libtorrent/bitfield.hpp>
#include <libtorrent/torrent_info.hpp>
#include <string>
#include <vector>

namespace swarmcast::node {

// Calls `found` with each piece missing from `have` whose bytes under
// `save_path` hash to the metainfo's v1 piece hash; returns how many.
int SalvageVerifiedPieces(const lt::torrent_info& ti, const std::string& save_path,
                          const lt::typed_bitfield<lt::piece_index_t>& have,
                          const std::function<void(lt::piece_index_t, std::vector<char>)>& found);

}  // namespace swarmcast::node
