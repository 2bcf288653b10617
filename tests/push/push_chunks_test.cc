// Pieces of every size and layout over the real push channel on loopback:
// a folder with nested, empty and pad files (chunks never cross a file
// boundary nor carry pad bytes), and pieces larger than one frame may
// carry (they travel as 1 MiB chunks).
#include <gtest/gtest.h>

#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

TEST_F(PushChannelTest, FolderWithNestedEmptyAndPadFilesPushes) {
  // 64 KiB pieces: pieces straddle files, a pad file fills one to the
  // piece boundary, and empty files lie between and at the end.
  MakeContent({{"m/shard-1.bin", 150000, false},
               {"", 3 * kPieceLength - 150000, true},
               {"m/config.json", 300, false},
               {"m/empty", 0, false},
               {"m/sub/deeper/vocab.txt", 90000, false},
               {"m/shard-2.bin", 200001, false},
               {"m/zero", 0, false}},
              kPieceLength, scratch_);
  const std::uint32_t pieces = geometry().piece_count;
  for (const auto kind : {FanoutKind::kCopy, FanoutKind::kSendfile, FanoutKind::kSplice}) {
    SCOPED_TRACE(std::string(FanoutKindName(kind)));
    auto sender = StartSender(kind);
    ASSERT_TRUE(sender);
    Sink sinks[2];
    std::vector<std::unique_ptr<PushReceiver>> receivers;
    for (auto& sink : sinks) receivers.push_back(Receive(sender->port(), sink));
    for (auto& sink : sinks) {
      ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= pieces; }, 20s))
          << sink.pieces.size() << " pieces; ended: " << sink.end_reason;
      std::lock_guard lock(sink.mu);
      EXPECT_FALSE(sink.corrupt) << "a piece differs from the content (pad bytes must be zero)";
      EXPECT_EQ(std::set<std::uint32_t>(sink.pieces.begin(), sink.pieces.end()).size(), pieces);
    }
    // The pad file's 46608 bytes never went out: the seed sent each
    // receiver the data bytes only.
    std::uint64_t data = 0;
    for (const auto& f : source_.layout->files()) data += f.pad ? 0 : f.size;
    WaitUntil(20s, [&] { return sender->stats().payload_bytes >= 2 * data; });
    EXPECT_EQ(sender->stats().payload_bytes, 2 * data);
  }
}

TEST_F(PushChannelTest, PiecesLargerThanAFrameTravelAsChunks) {
  // 4 MiB pieces: four chunks each, where one frame of the piece would be
  // over the receiver's 1 MiB frame limit.
  MakeFile(3 * (4u << 20) + 12345, 4u << 20);
  auto sender = StartSender(FanoutKind::kSplice);
  ASSERT_TRUE(sender);
  Sink sink;
  auto r = Receive(sender->port(), sink);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= 4; }, 20s))
      << sink.pieces.size() << " pieces; ended: " << sink.end_reason;
  std::lock_guard lock(sink.mu);
  EXPECT_FALSE(sink.corrupt);
  EXPECT_FALSE(sink.ended) << sink.end_reason;
  EXPECT_EQ(sink.pieces.size(), 4u);
}

}  // namespace
}  // namespace swarmcast::push
