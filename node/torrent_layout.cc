#include "node/torrent_layout.h"

#include <libtorrent/file_storage.hpp>
#include <libtorrent/torrent_info.hpp>

#include "node/session_config.h"

namespace swarmcast::node {

Result<proto::ContentLayout, std::string> TorrentLayout(std::string_view torrent_bytes) {
  std::shared_ptr<const lt::torrent_info> ti;
  try {
    ti = std::make_shared<lt::torrent_info>(
        lt::span<const char>(torrent_bytes.data(),
                             static_cast<std::ptrdiff_t>(torrent_bytes.size())),
        TorrentLoadLimits(), lt::from_span);
  } catch (const std::exception& e) {
    return Unexpected(std::string("metainfo refused: ") + e.what());
  }
  const lt::file_storage& fs = ti->files();
  std::vector<proto::LayoutFile> files;
  files.reserve(static_cast<std::size_t>(fs.num_files()));
  for (const lt::file_index_t f : fs.file_range()) {
    proto::LayoutFile lf;
    lf.pad = fs.pad_file_at(f);
    lf.size = static_cast<std::uint64_t>(fs.file_size(f));
    if (!lf.pad) lf.path = fs.file_path(f);
    files.push_back(std::move(lf));
  }
  const proto::Geometry g{static_cast<std::uint32_t>(ti->num_pieces()),
                          static_cast<std::uint32_t>(ti->piece_length()),
                          static_cast<std::uint64_t>(ti->total_size())};
  return proto::ContentLayout::Make(g, std::move(files));
}

}  // namespace swarmcast::node
