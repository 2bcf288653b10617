// Names in the tracker's registry and info-hash spellings.
#pragma once

#include <cstdint>
#include <string_view>

namespace swarmcast::node {

// A registry name: [A-Za-z0-9][A-Za-z0-9._-]{0,127}, and never 40 or 64 hex
// digits (those spell info-hashes, and the registry looks them up as such).
bool IsValidSwarmName(std::string_view name);

// 40 hex digits: a BitTorrent v1 info-hash (SHA-1), either case.
bool IsInfoHashHex(std::string_view text);

// Piece size for a payload of `total_size` bytes: the power of two that
// gives about 1024 pieces, kept within [64 KiB, 16 MiB]. Measured on the
// emulated LAN (see docs/architecture.md): 64 KiB-1 MiB pieces perform
// alike while 4 MiB pieces on a 64 MiB file were slower, so small files get
// small pieces; very large files grow the piece so the metainfo stays small.
std::int64_t ChoosePieceSize(std::int64_t total_size);

}  // namespace swarmcast::node
