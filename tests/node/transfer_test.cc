// The engine with a real libtorrent session but no peers: every piece comes
// in through the push-channel seam (PieceFeed::add_piece), one of them
// corrupted first. Listens on 127.0.0.1 only; no tracker, no network.
#include "node/transfer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#include "node/metainfo_builder.h"
#include "tests/node/blob_torrent.h"

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class TransferTest : public testing::BlobTorrentTest {
 protected:
  TransferTest() : BlobTorrentTest("transfer", (1 << 20) + 5000, 7) {}

  bool posted_on_control_ = false;  // written on the control thread only
};

TEST_F(TransferTest, PiecesFedThroughTheSeamAreVerifiedAndMovedIntoPlace) {
  TransferOptions o = GetOptions();
  std::thread feeder;
  std::atomic<int> verified{0};
  std::int64_t pieces = 0;
  // Set on the control thread when libtorrent has judged the bad piece 3:
  // the good copy is fed only then, since a second add_piece of a piece
  // still being checked is dropped.
  std::promise<void> bad_piece_judged;
  auto judged = bad_piece_judged.get_future();
  o.hooks.on_ready = [&](const PieceFeed& feed) {
    pieces = feed.pieces;
    EXPECT_EQ(feed.piece_length, 16 << 10);
    EXPECT_EQ(std::count(feed.have.begin(), feed.have.end(), true), 0);
    // A push receiver runs on its own thread; so does this feeder.
    feeder = std::thread([feed, this, &judged] {
      for (std::int64_t i = 0; i < feed.pieces; ++i) {
        std::vector<char> piece = blob_.Piece(i, feed.piece_length);
        if (i == 3) {
          std::vector<char> bad = piece;
          bad[100] ^= 1;
          feed.add_piece(static_cast<std::uint32_t>(i), bad);
          ASSERT_EQ(judged.wait_for(std::chrono::seconds(60)), std::future_status::ready)
              << "the corrupt piece was never reported";
        }
        feed.add_piece(static_cast<std::uint32_t>(i), piece);
      }
      feed.post([this] { posted_on_control_ = true; });
      feed.add_piece(9999, std::vector<char>(10));    // out of range: dropped
      feed.add_piece(0, std::vector<char>(10, 'x'));  // wrong size: dropped
    });
  };
  o.hooks.on_piece_verified = [&](std::uint32_t) { ++verified; };
  std::vector<std::uint32_t> failed;
  o.hooks.on_hash_failed = [&](std::uint32_t piece) {
    if (failed.empty()) bad_piece_judged.set_value();
    failed.push_back(piece);
  };
  o.hooks.on_stop = [&] {
    if (feeder.joinable()) feeder.join();
  };
  auto report = RunTransfer(o);
  if (feeder.joinable()) feeder.join();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->end, TransferEnd::kCompleted);
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(report->pieces_done, pieces);
  EXPECT_GE(report->hash_failures, 1);
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed.front(), 3u);
  EXPECT_EQ(verified.load(), pieces);
  EXPECT_TRUE(posted_on_control_);
  EXPECT_EQ(ReadAll(dir_ / "out" / "blob.bin"), original_);
  EXPECT_FALSE(fs::exists(dir_ / "out" / ".swarmcast" / hash_));
}

TEST_F(TransferTest, RefusesAWrongInfoHashAndAnExistingTarget) {
  TransferOptions o = GetOptions();
  o.expected_info_hash = std::string(40, '0');
  auto r = RunTransfer(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, TransferError::Kind::kMetainfo);

  o = GetOptions();
  fs::create_directories(o.dir);
  std::ofstream(o.dir / "blob.bin") << "mine";
  r = RunTransfer(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, TransferError::Kind::kStorage);
  EXPECT_EQ(ReadAll(o.dir / "blob.bin"), "mine");
}

}  // namespace
}  // namespace swarmcast::node
