// Checks a metainfo (.torrent) that came from the network or a user before
// any of it reaches libtorrent or the file system. libtorrent sanitizes
// hostile paths silently (it would rename "../x" to "x"); swarmcast refuses
// such a torrent instead, so that what lands on disk is exactly what the
// publisher described, or nothing.
//
// Refused: paths that are absolute, contain "..", ".", empty elements,
// '/', '\\' or NUL inside an element, or elements over 255 bytes; symlinks
// and other special files (attr 'l', "symlink path"); more files, bytes,
// pieces or nesting than MetainfoLimits allows; a piece count that does
// not match the total size; v2-only torrents (stock v1 clients could not
// join). Pure: no I/O. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/result.h"

namespace swarmcast::node {

struct MetainfoLimits {
  std::size_t max_bytes = 32u << 20;
  std::size_t max_files = 100'000;
  std::int64_t max_total_size = std::int64_t{1} << 46;  // 64 TiB
  std::int64_t min_piece_length = 16 << 10;
  std::int64_t max_piece_length = 64 << 20;
  std::size_t max_path_depth = 32;
  std::size_t max_path_element = 255;
};

struct MetainfoSummary {
  std::string name;
  std::int64_t total_size = 0;
  std::int64_t piece_length = 0;
  std::int64_t num_pieces = 0;
  bool hybrid = false;  // has a v2 "file tree" beside the v1 "pieces"
  // Relative paths ("name" or "name/dir/file"), pad files left out.
  std::vector<std::string> paths;
};

Result<MetainfoSummary, std::string> CheckMetainfo(std::string_view bytes,
                                                   const MetainfoLimits& limits = {});

// One path element as it may appear in a metainfo: non-empty, not "." or
// "..", no '/', '\\' or NUL, at most `max_len` bytes.
bool IsSafePathElement(std::string_view element, std::size_t max_len = 255);

}  // namespace swarmcast::node
