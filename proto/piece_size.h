// The default piece size for a payload: pure, so that the node (which
// builds metainfo with it) and the simulator (tools/sim/, which must cut
// the file the way the node would) share one rule.
#pragma once

#include <cstdint>

namespace swarmcast::proto {

// The power of two that gives about 1024 pieces, kept within [64 KiB,
// 16 MiB]. Measured on the emulated LAN (see docs/architecture.md): 64 KiB-1
// MiB pieces perform alike while 4 MiB pieces on a 64 MiB file were slower,
// so small files get small pieces; very large files grow the piece so the
// metainfo stays small.
constexpr std::int64_t ChoosePieceSize(std::int64_t total_size) {
  constexpr std::int64_t kMin = 64 << 10;
  constexpr std::int64_t kMax = 16 << 20;
  std::int64_t piece = kMin;
  while (piece < kMax && total_size / piece > 1024) piece *= 2;
  return piece;
}

}  // namespace swarmcast::proto
