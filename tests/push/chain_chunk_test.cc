// ChainChunkLength: a chain's chunks shrink as its line grows and as its
// links slow down, so that a hop's lag and the whole line's stay bounded.
#include "node/push/chain_chunk.h"

#include <gtest/gtest.h>

namespace swarmcast::push {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;
constexpr double kGigabit = 125e6;  // bytes per second
constexpr double k100Mbit = 12.5e6;
constexpr double k10Mbit = 1.25e6;

TEST(ChainChunkLengthTest, AShortLineOnAFastLinkTakesTheLargest) {
  EXPECT_EQ(ChainChunkLength(64 * kMiB, 1, 10 * kGigabit), kMaxChainChunk);
  EXPECT_EQ(ChainChunkLength(64 * kMiB, 8, 10 * kGigabit), 64u * 1024);
  EXPECT_EQ(ChainChunkLength(16 * kMiB, 2, kGigabit), 64u * 1024);
}

TEST(ChainChunkLengthTest, TheChunkHalvesAsTheLineDoubles) {
  EXPECT_EQ(ChainChunkLength(64 * kMiB, 16, kGigabit), 32u * 1024);
  EXPECT_EQ(ChainChunkLength(64 * kMiB, 32, kGigabit), 16u * 1024);
  EXPECT_EQ(ChainChunkLength(16 * kMiB, 4, kGigabit), 32u * 1024);
  EXPECT_EQ(ChainChunkLength(16 * kMiB, 8, kGigabit), 16u * 1024);
}

TEST(ChainChunkLengthTest, ASlowLinkGetsChunksItCarriesInAMillisecond) {
  EXPECT_EQ(ChainChunkLength(64 * kMiB, 1, 4 * k100Mbit), 32u * 1024);
  EXPECT_EQ(ChainChunkLength(64 * kMiB, 1, k100Mbit), kMinChainChunk);
  EXPECT_EQ(ChainChunkLength(64 * kMiB, 1, k10Mbit), kMinChainChunk);
}

TEST(ChainChunkLengthTest, NoRateKnownYetGetsTheLeast) {
  // The line's first pieces: a whole piece then would lag every link
  // that joins later, on a slow link, to the end.
  EXPECT_EQ(ChainChunkLength(1024 * kMiB, 1, 0), kMinChainChunk);
}

TEST(ChainChunkLengthTest, BothLagsStayWithinTheirBoundsUntilTheFloor) {
  for (std::uint64_t size : {4 * kMiB, 16 * kMiB, 64 * kMiB, 1024 * kMiB}) {
    for (std::size_t links = 1; links <= 1024; links *= 2) {
      for (double rate : {k10Mbit, k100Mbit, kGigabit, 10 * kGigabit}) {
        const std::uint32_t chunk = ChainChunkLength(size, links, rate);
        EXPECT_GE(chunk, kMinChainChunk);
        EXPECT_LE(chunk, kMaxChainChunk);
        if (chunk > kMinChainChunk) {
          EXPECT_LE(links * chunk, size / kChainDelayShare) << size << " " << links;
          EXPECT_LE(chunk / rate, 1 / kChainHopsPerSecond) << rate;
        }
      }
    }
  }
}

TEST(ChainChunkLengthTest, NoLinksOrAnEmptyFileStaysInRange) {
  EXPECT_EQ(ChainChunkLength(0, 8, kGigabit), kMinChainChunk);
  EXPECT_EQ(ChainChunkLength(64 * kMiB, 0, 10 * kGigabit), kMaxChainChunk);
  EXPECT_EQ(ChainChunkLength(1, 1024, kGigabit), kMinChainChunk);
}

}  // namespace
}  // namespace swarmcast::push
