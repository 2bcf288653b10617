// PushDownload against a real PushSender on loopback, with a test-owned
// "control thread" (a queue drained by the test).
#include "node/push/push_download.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "node/push/push_sender.h"

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;

class ControlQueue {
 public:
  void Post(std::function<void()> f) {
    std::lock_guard lock(mu_);
    q_.push_back(std::move(f));
    cv_.notify_all();
  }
  // Runs posted work until `done` holds or `limit` passes.
  bool RunUntil(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      std::unique_lock lock(mu_);
      if (!cv_.wait_until(lock, deadline, [&] { return !q_.empty(); })) return done();
      auto f = std::move(q_.front());
      q_.pop_front();
      lock.unlock();
      f();
    }
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
};

class PushDownloadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::signal(SIGPIPE, SIG_IGN); }
  void SetUp() override {
    path_ = "/tmp/swarmcast-pushdl-" + std::to_string(::getpid());
    std::ofstream(path_) << std::string(8 * kPiece, 'z');
    const std::filesystem::path p(path_);
    source_.root = p.parent_path();
    source_.layout = std::make_shared<const proto::ContentLayout>(
        *proto::ContentLayout::SingleFile({8, kPiece, 8 * kPiece}, p.filename().string()));
    source_.info_hash.assign(20, 0x42);
    PushSenderOptions o;
    o.bind_address = "127.0.0.1";
    o.fanout = FanoutKind::kCopy;
    auto sender = PushSender::Start(source_, o, proto::Logger());
    ASSERT_TRUE(sender.ok()) << sender.error();
    sender_ = std::move(*sender);
  }
  void TearDown() override {
    download_.reset();
    sender_.reset();
    std::remove(path_.c_str());
  }

  // budget 0: the least, two pieces.
  void StartDownload(std::uint64_t budget = kDefaultPushBudget) {
    PushReceiverOptions o;
    o.budget = budget;
    o.endpoint = "127.0.0.1:" + std::to_string(sender_->port());
    PushIdentity id;
    id.info_hash = source_.info_hash;
    id.layout = source_.layout;
    PushDownload::Hooks hooks;
    hooks.post = [this](std::function<void()> f) { control_.Post(std::move(f)); };
    hooks.add_piece = [this](std::uint32_t piece, std::vector<char> data) {
      added_.push_back(piece);
      EXPECT_EQ(data.size(), kPiece);
    };
    hooks.log = proto::Logger();
    auto d = PushDownload::Start(o, id, std::vector<bool>(8, false), hooks);
    ASSERT_TRUE(d.ok()) << d.error();
    download_ = std::move(*d);
  }

  static constexpr std::uint32_t kPiece = 16 << 10;
  std::string path_;
  PushSource source_;
  std::unique_ptr<PushSender> sender_;
  ControlQueue control_;
  std::vector<std::uint32_t> added_;
  std::unique_ptr<PushDownload> download_;
};

TEST_F(PushDownloadTest, PushedPiecesReachLibtorrentOnTheControlThread) {
  StartDownload();
  ASSERT_TRUE(control_.RunUntil([&] { return added_.size() == 8; }, 10s));
  EXPECT_EQ(download_->pieces_pushed(), 8u);
  for (std::uint32_t p = 0; p < 8; ++p) download_->OnPieceVerified(p);
  EXPECT_TRUE(download_->active());
  EXPECT_EQ(download_->hash_failures(), 0);
}

TEST_F(PushDownloadTest, RepeatedHashFailuresOfPushedPiecesEndTheChannel) {
  StartDownload();
  ASSERT_TRUE(control_.RunUntil([&] { return added_.size() == 8; }, 10s));
  download_->OnHashFailed(0);
  download_->OnHashFailed(1);
  EXPECT_TRUE(download_->active());
  download_->OnHashFailed(1);  // counted once: no longer a pushed piece
  EXPECT_TRUE(download_->active());
  download_->OnHashFailed(2);
  EXPECT_FALSE(download_->active());
  EXPECT_EQ(download_->hash_failures(), kMaxPushHashFailures);
  EXPECT_NE(download_->end_reason().find("hash check"), std::string::npos);
}

TEST_F(PushDownloadTest, FailuresOfPiecesFromPeersDoNotCount) {
  StartDownload();
  ASSERT_TRUE(control_.RunUntil([&] { return added_.size() == 8; }, 10s));
  download_->OnPieceVerified(3);  // verified: no longer pending
  for (int i = 0; i < 5; ++i) download_->OnHashFailed(3);
  EXPECT_TRUE(download_->active());
  EXPECT_EQ(download_->hash_failures(), 0);
}

// A pushed piece keeps its room in the receiver's budget until libtorrent
// has judged it (written and checked, or failed), however it ends; with
// room for two pieces, the receiver takes no third before that.
TEST_F(PushDownloadTest, PiecesHoldTheirRoomUntilLibtorrentJudgesThem) {
  StartDownload(0);
  ASSERT_TRUE(control_.RunUntil([&] { return added_.size() == 2; }, 10s));
  ASSERT_TRUE(
      control_.RunUntil([&] { return download_->receiver_stats().held_bytes == 2 * kPiece; }, 10s));
  EXPECT_EQ(download_->receiver_stats().budget, 2 * kPiece);
  // The seed sent more, but the receiver stopped reading: its socket holds
  // them. Each verdict makes room for one more piece.
  download_->OnPieceVerified(added_[0]);
  ASSERT_TRUE(control_.RunUntil([&] { return added_.size() == 3; }, 10s));
  download_->OnHashFailed(added_[1]);
  ASSERT_TRUE(control_.RunUntil([&] { return added_.size() == 4; }, 10s));
  // A verdict that never comes (a lost alert) is given up on in the end.
  download_->OnTick(0, std::chrono::steady_clock::now() + kHandOverTimeout);
  ASSERT_TRUE(control_.RunUntil([&] { return added_.size() == 6; }, 10s));
  download_->OnPieceVerified(added_[4]);
  download_->OnPieceVerified(added_[5]);
  ASSERT_TRUE(control_.RunUntil([&] { return added_.size() == 8; }, 10s));
  EXPECT_LE(download_->peak_held_bytes(), 2 * kPiece);
  EXPECT_EQ(download_->payload_bytes(), 8u * kPiece) << "the seed sends every piece once";
}

}  // namespace
}  // namespace swarmcast::push
