#include "proto/content_layout.h"

#include <gtest/gtest.h>

namespace swarmcast::proto {
namespace {

constexpr std::uint32_t kMiB = 1u << 20;

ContentLayout Make(const Geometry& g, std::vector<LayoutFile> files) {
  auto l = ContentLayout::Make(g, std::move(files));
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error());
  return std::move(*l);
}

// The example of docs/protocol.md, "Chunks".
TEST(ContentLayout, ChunksFollowFilesAndTheChunkLimit) {
  const std::uint64_t total = 3 * kMiB / 2 + 10 * kMiB;
  const ContentLayout l =
      Make({3, 4 * kMiB, total},
           {{"d/a", 3 * kMiB / 2, false}, {"d/e", 0, false}, {"d/b", 10 * kMiB, false}});
  const std::vector<Chunk> want = {{0, 0, 0, kMiB},
                                   {0, kMiB, kMiB, kMiB / 2},
                                   {2, 0, 3 * kMiB / 2, kMiB},
                                   {2, kMiB, 5 * kMiB / 2, kMiB},
                                   {2, 2 * kMiB, 7 * kMiB / 2, kMiB / 2}};
  EXPECT_EQ(l.ChunksOf(0), want);
  EXPECT_EQ(l.DataBytes(0), 4 * kMiB);
  // The last piece: what is left of file 2, 3.5 MiB.
  const auto last = l.ChunksOf(2);
  ASSERT_EQ(last.size(), 4u);
  EXPECT_EQ(last.front(), (Chunk{2, 6 * kMiB + kMiB / 2, 0, kMiB}));
  EXPECT_EQ(last.back(), (Chunk{2, 9 * kMiB + kMiB / 2, 3 * kMiB, kMiB / 2}));
  EXPECT_EQ(l.DataBytes(2), 7 * kMiB / 2);
  // Every byte of the content is in exactly one chunk, in order.
  std::uint64_t covered = 0;
  for (std::uint32_t p = 0; p < 3; ++p) {
    for (const Chunk& c : l.ChunksOf(p)) {
      EXPECT_EQ(std::uint64_t{p} * 4 * kMiB + c.piece_offset, l.file_start(c.file) + c.file_offset);
      EXPECT_LE(c.length, kMaxChunkLength);
      EXPECT_FALSE(l.CheckChunk(p, c.piece_offset, c.length));
      covered += c.length;
    }
  }
  EXPECT_EQ(covered, total);
}

TEST(ContentLayout, PadFilesAreNeverChunks) {
  // 16 KiB pieces: a 10000-byte file padded to the piece, then 20000 bytes.
  const ContentLayout l = Make({3, 16384, 16384 + 20000},
                               {{"t/a", 10000, false}, {"", 6384, true}, {"t/b", 20000, false}});
  EXPECT_EQ(l.ChunksOf(0), (std::vector<Chunk>{{0, 0, 0, 10000}}));
  EXPECT_EQ(l.DataBytes(0), 10000u);
  EXPECT_EQ(l.ChunksOf(1), (std::vector<Chunk>{{2, 0, 0, 16384}}));
  EXPECT_EQ(l.ChunksOf(2), (std::vector<Chunk>{{2, 16384, 0, 20000 - 16384}}));
  EXPECT_EQ(l.CheckChunk(0, 10000, 1), ChunkErrc::kInPadFile);
  EXPECT_EQ(l.CheckChunk(0, 9999, 2), ChunkErrc::kCrossesFileBoundary);
  EXPECT_FALSE(l.CheckChunk(0, 9999, 1));
}

TEST(ContentLayout, CheckChunkRefusesWhatBreaksTheRules) {
  const ContentLayout l = Make({2, 16384, 20000}, {{"t/a", 100, false}, {"t/b", 19900, false}});
  EXPECT_FALSE(l.CheckChunk(0, 0, 100));
  EXPECT_FALSE(l.CheckChunk(0, 100, 16284));
  EXPECT_EQ(l.CheckChunk(0, 50, 100), ChunkErrc::kCrossesFileBoundary);
  EXPECT_EQ(l.CheckChunk(0, 16000, 385), ChunkErrc::kOutsidePiece);
  EXPECT_EQ(l.CheckChunk(1, 0, 3617), ChunkErrc::kOutsidePiece);  // last piece: 3616 bytes
  EXPECT_FALSE(l.CheckChunk(1, 0, 3616));
  EXPECT_EQ(l.CheckChunk(2, 0, 1), ChunkErrc::kOutsidePiece);
  EXPECT_EQ(l.CheckChunk(0, 0, 0), ChunkErrc::kOutsidePiece);
  EXPECT_EQ(l.CheckChunk(0, 0xFFFFFFFF, 2), ChunkErrc::kOutsidePiece);
  EXPECT_EQ(make_error_code(ChunkErrc::kInPadFile).message(), "chunk inside a pad file");
}

TEST(ContentLayout, EmptyFilesAnywhereHoldNoBytes) {
  const ContentLayout l = Make({1, 16384, 10}, {{"t/e0", 0, false},
                                                {"t/a", 4, false},
                                                {"t/e1", 0, false},
                                                {"t/e2", 0, false},
                                                {"t/b", 6, false},
                                                {"t/e3", 0, false}});
  EXPECT_EQ(l.ChunksOf(0), (std::vector<Chunk>{{1, 0, 0, 4}, {4, 0, 4, 6}}));
  EXPECT_FALSE(l.CheckChunk(0, 4, 6));
  EXPECT_EQ(l.CheckChunk(0, 3, 2), ChunkErrc::kCrossesFileBoundary);
}

TEST(ContentLayout, MakeChecksTheSizes) {
  EXPECT_FALSE(ContentLayout::Make({1, 16384, 10}, {{"a", 9, false}}).ok());
  EXPECT_FALSE(ContentLayout::Make({1, 16384, 10}, {{"a", 11, false}}).ok());
  EXPECT_FALSE(ContentLayout::Make({1, 16384, 10}, {}).ok());
  EXPECT_FALSE(ContentLayout::Make({1, 1000, 10}, {{"a", 10, false}}).ok());
  auto single = ContentLayout::SingleFile({1, 16384, 10}, "a");
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->files(), (std::vector<LayoutFile>{{"a", 10, false}}));
}

TEST(ContentLayout, SmallerChunkLimit) {
  const ContentLayout l = Make({1, 16384, 10000}, {{"a", 10000, false}});
  const auto chunks = l.ChunksOf(0, 4096);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[2], (Chunk{0, 8192, 8192, 10000 - 8192}));
}

}  // namespace
}  // namespace swarmcast::proto
