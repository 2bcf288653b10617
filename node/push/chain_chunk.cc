#include "node/push/chain_chunk.h"

#include <algorithm>

namespace swarmcast::push {

std::uint32_t ChainChunkLength(std::uint64_t total_size, std::size_t links,
                               double bytes_per_second) {
  const std::uint64_t by_size = total_size / kChainDelayShare / std::max<std::size_t>(links, 1);
  const double by_rate = bytes_per_second / kChainHopsPerSecond;
  std::uint32_t chunk = kMaxChainChunk;
  while (chunk > kMinChainChunk && (chunk > by_size || chunk > by_rate)) chunk /= 2;
  return chunk;
}

}  // namespace swarmcast::push
