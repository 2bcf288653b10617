#include "node/push/piece_assembler.h"

#include <gtest/gtest.h>

#include <numeric>

namespace swarmcast::push {
namespace {

using Clock = std::chrono::steady_clock;
using proto::ChunkErrc;

// 16 KiB pieces over a 10000-byte file, a pad file to the piece boundary,
// and a 20000-byte file: piece 0 has 10000 data bytes and 6384 pad bytes.
std::shared_ptr<const proto::ContentLayout> Layout() {
  auto l = proto::ContentLayout::Make(
      {3, 16384, 36384}, {{"t/a", 10000, false}, {"", 6384, true}, {"t/b", 20000, false}});
  EXPECT_TRUE(l.ok());
  return std::make_shared<const proto::ContentLayout>(std::move(*l));
}

std::vector<std::uint8_t> Bytes(std::size_t n, std::uint8_t first) {
  std::vector<std::uint8_t> b(n);
  std::iota(b.begin(), b.end(), first);
  return b;
}

TEST(PieceAssembler, OutOfOrderChunksMakeAPieceWithZeroPadding) {
  PieceAssembler a(Layout());
  const auto now = Clock::now();
  const auto tail = Bytes(6000, 7);
  const auto head = Bytes(4000, 1);
  EXPECT_TRUE(a.Starts(0));
  EXPECT_EQ(a.piece_bytes(0), 16384u);
  auto r = a.Add({0, 4000, tail}, now);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_FALSE(a.Starts(0));
  r = a.Add({0, 0, head}, now);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(*r);
  EXPECT_EQ((*r)->piece, 0u);
  const std::vector<char>& d = (*r)->data;
  ASSERT_EQ(d.size(), 16384u);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), d.begin(),
                         [](std::uint8_t x, char y) { return x == static_cast<std::uint8_t>(y); }));
  EXPECT_EQ(static_cast<std::uint8_t>(d[4000]), 7);
  for (std::size_t i = 10000; i < d.size(); ++i) ASSERT_EQ(d[i], 0) << i;
  EXPECT_TRUE(a.Starts(0));
  EXPECT_EQ(a.partial_pieces(), 0u);
}

TEST(PieceAssembler, InterleavedPiecesAndTheLastPiece) {
  PieceAssembler a(Layout());
  const auto now = Clock::now();
  ASSERT_TRUE(a.Add({1, 0, Bytes(8192, 0)}, now).ok());
  ASSERT_TRUE(a.Add({2, 0, Bytes(1000, 0)}, now).ok());
  EXPECT_EQ(a.partial_pieces(), 2u);
  auto one = a.Add({1, 8192, Bytes(8192, 0)}, now);
  ASSERT_TRUE(one.ok() && *one);
  EXPECT_EQ((*one)->piece, 1u);
  auto two = a.Add({2, 1000, Bytes(20000 - 16384 - 1000, 0)}, now);  // the last piece: 3616 bytes
  ASSERT_TRUE(two.ok() && *two);
  EXPECT_EQ((*two)->data.size(), 3616u);
}

TEST(PieceAssembler, RefusesOverlapsAndChunksAgainstTheLayout) {
  PieceAssembler a(Layout());
  const auto now = Clock::now();
  ASSERT_TRUE(a.Add({1, 100, Bytes(100, 0)}, now).ok());
  EXPECT_EQ(a.Add({1, 150, Bytes(100, 0)}, now).error(), ChunkErrc::kOverlapsReceived);
  EXPECT_EQ(a.Add({1, 50, Bytes(51, 0)}, now).error(), ChunkErrc::kOverlapsReceived);
  EXPECT_EQ(a.Add({1, 100, Bytes(1, 0)}, now).error(), ChunkErrc::kOverlapsReceived);
  EXPECT_TRUE(a.Add({1, 50, Bytes(50, 0)}, now).ok());   // just before
  EXPECT_TRUE(a.Add({1, 200, Bytes(50, 0)}, now).ok());  // just after
  EXPECT_EQ(a.Add({0, 9990, Bytes(20, 0)}, now).error(), ChunkErrc::kCrossesFileBoundary);
  EXPECT_EQ(a.Add({0, 12000, Bytes(10, 0)}, now).error(), ChunkErrc::kInPadFile);
  EXPECT_EQ(a.Add({2, 3000, Bytes(1000, 0)}, now).error(), ChunkErrc::kOutsidePiece);
  EXPECT_EQ(a.Add({3, 0, Bytes(1, 0)}, now).error(), ChunkErrc::kOutsidePiece);
  // A refused chunk keeps nothing: only piece 1 is being assembled.
  EXPECT_EQ(a.partial_pieces(), 1u);
}

TEST(PieceAssembler, ExpireDropAndClearFreeTheirRoom) {
  PieceAssembler a(Layout());
  const auto t0 = Clock::now();
  ASSERT_TRUE(a.Add({0, 0, Bytes(10, 0)}, t0).ok());
  ASSERT_TRUE(a.Add({1, 0, Bytes(10, 0)}, t0 + std::chrono::seconds(30)).ok());
  EXPECT_EQ(a.Expire(t0 + std::chrono::seconds(10)), 16384u);  // piece 0 only
  EXPECT_TRUE(a.Starts(0));
  EXPECT_FALSE(a.Starts(1));
  EXPECT_EQ(a.Clear(), 16384u);
  EXPECT_EQ(a.partial_pieces(), 0u);
  ASSERT_TRUE(a.Add({2, 0, Bytes(10, 0)}, t0).ok());
  EXPECT_EQ(a.Drop(1), 0u);  // not being assembled
  EXPECT_EQ(a.Drop(2), 3616u);
  EXPECT_TRUE(a.Starts(2));
}

}  // namespace
}  // namespace swarmcast::push
