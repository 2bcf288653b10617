// The one check of a metainfo (.torrent, BEP 3 v1 or v1+v2 hybrid) that
// came from the network or a user, and the registry's name rules. The
// tracker runs it on every publish and the node on every metainfo it
// fetches or is given, with the same limits: what the tracker accepts, a
// `get` accepts.
//
// libtorrent sanitizes hostile paths silently (it would rename "../x" to
// "x"); swarmcast refuses such a torrent instead, so that what lands on disk
// is exactly what the publisher described, or nothing.
//
// Refused: more bytes, files, total size or nesting than MetainfoLimits
// allows; the reserved name ".swarmcast" (IsReservedName); a name or path element that is empty,
// "." or "..", holds '/',
// '\\' or NUL, or is over 255 bytes; symlinks and other special files
// (attr 'l', "symlink path"); a piece length that is not a power of two in
// [16 KiB, 64 MiB]; a piece count that does not match the total size;
// v2-only torrents (stock v1 clients could not join, and the swarm's key is
// the v1 info-hash). Pure: no I/O. Thread-compatible.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/result.h"

namespace swarmcast::proto {

struct MetainfoLimits {
  std::size_t max_bytes = 16u << 20;  // the tracker's --max-torrent may change it
  std::size_t max_files = 100'000;
  std::int64_t max_total_size = std::int64_t{1} << 46;  // 64 TiB
  std::int64_t min_piece_length = 16 << 10;
  std::int64_t max_piece_length = 64 << 20;
  std::size_t max_path_depth = 32;
  std::size_t max_path_element = 255;
};

using InfoHashBytes = std::array<std::uint8_t, 20>;

struct MetainfoSummary {
  InfoHashBytes info_hash{};  // SHA-1 of the `info` value's bytes (v1)
  std::string name;
  std::int64_t total_size = 0;
  std::int64_t piece_length = 0;
  std::int64_t num_pieces = 0;
  std::int64_t file_count = 0;  // entries of `files` (pad files included), or 1
  bool hybrid = false;          // has a v2 "file tree" beside the v1 "pieces"
  // Relative paths ("name" or "name/dir/file"), pad files left out.
  std::vector<std::string> paths;
};

// The summary, or why the torrent is refused (a reason a person can act
// on, without a prefix: the caller says what was being checked).
Result<MetainfoSummary, std::string> CheckMetainfo(std::string_view bytes,
                                                   const MetainfoLimits& limits = {});

// One path element as it may appear in a metainfo: non-empty, not "." or
// "..", no '/', '\\' or NUL, at most `max_len` bytes.
bool IsSafePathElement(std::string_view element, std::size_t max_len = 255);

// ".swarmcast" in any case: where a node stages downloads in its output
// directory, so no torrent may be named so.
bool IsReservedName(std::string_view name);

// A registry name: [A-Za-z0-9][A-Za-z0-9._-]{0,127}, and never 40 or 64 hex
// digits (those spell info-hashes, and the registry looks them up as such).
bool IsValidSwarmName(std::string_view name);
inline constexpr std::string_view kSwarmNameRule =
    "[A-Za-z0-9][A-Za-z0-9._-]{0,127}, not 40 or 64 hex digits";

// 40 hex digits: a BitTorrent v1 info-hash (SHA-1), either case.
bool IsInfoHashHex(std::string_view text);

}  // namespace swarmcast::proto
