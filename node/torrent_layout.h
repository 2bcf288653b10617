// The layout of a torrent's files as the push channel needs it
// (proto/content_layout.h), read through libtorrent's own parse and
// file_storage, so that the seed's reads, the receiver's checks and
// libtorrent's writes agree on where every byte goes: file order, empty
// files, nested folders and BEP 47 pad files included.
#pragma once

#include <string>
#include <string_view>

#include "proto/content_layout.h"
#include "proto/result.h"

namespace swarmcast::node {

// `torrent_bytes` must have passed proto::CheckMetainfo. Paths are
// relative to the directory holding the content ("name" or
// "name/dir/file"). Fails with why libtorrent refused it.
Result<proto::ContentLayout, std::string> TorrentLayout(std::string_view torrent_bytes);

}  // namespace swarmcast::node
