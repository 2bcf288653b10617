// Validation of a published .torrent (BEP 3 metainfo, v1 or hybrid) and of
// registry names. Pure; every failure is a reason a person can act on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/result.h"
#include "tracker/types.h"

namespace swarmcast::tracker {

struct MetainfoSummary {
  InfoHash info_hash{};  // SHA-1 of the `info` value bytes as received (v1)
  std::string name;
  std::int64_t size = 0;
  std::int64_t piece_length = 0;
  std::int64_t pieces = 0;
  std::int64_t files = 0;
};

struct MetainfoLimits {
  std::size_t max_bytes = 16u << 20;
  std::size_t max_files = 100000;
  std::size_t max_path_components = 64;
  std::size_t max_component_length = 255;
};

// Checks: bencode; an `info` dictionary with a safe `name`; `piece length`
// a power of two >= 16 KiB; `pieces` a multiple of 20 bytes and exactly one
// hash per piece of the total size; either a single `length` or a non-empty
// `files` list whose paths are relative, with no `..`, `.` or empty parts.
// v2-only torrents (no `pieces`) are refused: the swarm's key is the v1
// info-hash.
Result<MetainfoSummary, std::string> CheckMetainfo(std::string_view torrent,
                                                   const MetainfoLimits& limits);

// Registry names: [A-Za-z0-9][A-Za-z0-9._-]{0,127}, and not 40 or 64 hex
// digits (those are info-hashes).
bool ValidSwarmName(std::string_view name);

}  // namespace swarmcast::tracker
