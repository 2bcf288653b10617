// The default piece size for a payload: pure, so that the node (which
// builds metainfo with it) and the simulator (tools/sim/, which must cut
// the file the way the node would) share one rule.
#pragma once

#include <cstdint>

namespace swarmcast::proto {

// A power of two: 1 MiB, halved while the file would have fewer than 256
// pieces (down to 64 KiB), doubled while it would have more than 1024 (up
// to 16 MiB). So 16 MiB gets 64 KiB pieces, 64 MiB 256 KiB, 256 MiB to
// 1 GiB 1 MiB, 4 GiB 4 MiB, 16 GiB and up 16 MiB.
//
// Why these bounds (docs/benchmarks.md, "Fewer, larger pieces, and the
// piece the probe cut (session 34)"): every piece costs each receiver a
// fixed amount of CPU (a hash check, a HAVE, libtorrent's bookkeeping,
// thread hand-offs), so a 64 MiB file in 256 KiB pieces took 17% less
// CPU than in 64 KiB ones, in the same time. But the chain and the
// BitTorrent wire spread work by pieces: a 16 MiB file in 64 pieces to 64
// receivers took 1.13x of the limit against 1.10x in 256, so a file keeps
// at least 256 where it can. Past 1024 pieces the metainfo (20 bytes a
// piece, sent to every receiver) grows instead.
constexpr std::int64_t ChoosePieceSize(std::int64_t total_size) {
  constexpr std::int64_t kMin = 64 << 10;
  constexpr std::int64_t kMax = 16 << 20;
  constexpr std::int64_t kFewest = 256, kMost = 1024;
  std::int64_t piece = 1 << 20;
  while (piece > kMin && total_size / piece < kFewest) piece /= 2;
  while (piece < kMax && total_size / piece > kMost) piece *= 2;
  return piece;
}

}  // namespace swarmcast::proto
