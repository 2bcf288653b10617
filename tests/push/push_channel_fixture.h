// The push channel's loopback tests share this: a content file (or folder)
// of random bytes, a real PushSender on 127.0.0.1 and real PushReceivers
// whose pieces a Sink collects and checks against the content.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "node/push/push_receiver.h"
#include "node/push/push_sender.h"
#include "tests/common/wait_until.h"

namespace swarmcast::push {

using namespace std::chrono_literals;
using swarmcast::testing::DrainUntilClosed;
using swarmcast::testing::WaitReadable;
using swarmcast::testing::WaitUntil;

constexpr std::uint32_t kPieceLength = 64 << 10;
constexpr std::uint64_t kFileSize = 40 * kPieceLength + 1234;  // short last piece

// Collects what one receiver got, and how its channel ended. Like a real
// consumer it gives each piece's room back at once, unless `hold` is set:
// then it keeps the room (a disk that does not write) until Unhold().
struct Sink {
  std::mutex mu;
  std::condition_variable cv;
  std::multiset<std::uint32_t> pieces;
  std::multiset<std::uint32_t> to_forward;  // came as PIECE, not DIRECT
  std::vector<std::string> data_of;
  bool ended = false;
  std::string end_reason;
  bool corrupt = false;
  bool hold = false;
  std::uint64_t owed = 0;  // room not given back yet
  PushReceiver* receiver = nullptr;

  // Under `mu`: give back what is owed, if the receiver is known yet.
  void Settle() {
    if (receiver == nullptr || hold || owed == 0) return;
    receiver->Release(owed);
    owed = 0;
  }
  void Attach(PushReceiver* r) {
    std::lock_guard lock(mu);
    receiver = r;
    Settle();
  }
  void Unhold() {
    std::lock_guard lock(mu);
    hold = false;
    Settle();
  }

  bool WaitFor(std::function<bool()> pred, std::chrono::milliseconds limit) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, limit, pred);
  }
};

class PushChannelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::signal(SIGPIPE, SIG_IGN); }

  void SetUp() override {
    scratch_ =
        std::filesystem::temp_directory_path() / ("swarmcast-push-" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch_);
    MakeFile(kFileSize);
  }

  // (Re)writes the shared file with `size` random bytes, in pieces of
  // `piece_length`.
  void MakeFile(std::uint64_t size, std::uint32_t piece_length = kPieceLength) {
    MakeContent({{"content.bin", size, false}}, piece_length, scratch_);
  }

  // Writes `files` (in torrent order; pad files are not written, their
  // bytes are zeros) under `root` with random bytes; content_ becomes the
  // torrent's byte stream and source_ its push source.
  void MakeContent(const std::vector<proto::LayoutFile>& files, std::uint32_t piece_length,
                   const std::filesystem::path& root) {
    std::mt19937 rng(7);
    content_.clear();
    for (const proto::LayoutFile& f : files) {
      std::string bytes(f.size, '\0');
      if (!f.pad) {
        for (auto& c : bytes) c = static_cast<char>(rng());
        std::filesystem::create_directories((root / f.path).parent_path());
        FILE* out = std::fopen((root / f.path).c_str(), "wb");
        ASSERT_NE(out, nullptr);
        ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), out), bytes.size());
        std::fclose(out);
      }
      content_ += bytes;
    }
    const std::uint64_t size = content_.size();
    const proto::Geometry g{static_cast<std::uint32_t>((size + piece_length - 1) / piece_length),
                            piece_length, size};
    auto layout = proto::ContentLayout::Make(g, files);
    ASSERT_TRUE(layout.ok()) << layout.error();
    source_.root = root;
    source_.layout = std::make_shared<const proto::ContentLayout>(std::move(*layout));
    source_.info_hash.assign(20, 0xab);
  }
  const proto::Geometry& geometry() const { return source_.layout->geometry(); }
  void TearDown() override { std::filesystem::remove_all(scratch_); }

  PushIdentity Identity() const {
    PushIdentity id;
    id.info_hash = source_.info_hash;
    id.layout = source_.layout;
    return id;
  }

  std::unique_ptr<PushReceiver> Receive(std::uint16_t port, Sink& sink, std::vector<bool> have = {},
                                        PushIdentity identity = {}, std::string from = {},
                                        PushReceiverOptions o = {}) {
    if (identity.info_hash.empty()) identity = Identity();
    if (have.empty()) have.assign(geometry().piece_count, false);
    o.endpoint = "127.0.0.1:" + std::to_string(port);
    o.source_address = std::move(from);
    const std::uint32_t piece_length = identity.geometry().piece_length;
    auto r = PushReceiver::Start(
        o, identity, have,
        [this, &sink, piece_length](std::uint32_t piece, std::vector<char> data, bool forward) {
          std::lock_guard lock(sink.mu);
          if (forward) sink.to_forward.insert(piece);
          const auto want = content_.substr(std::size_t{piece} * piece_length, data.size());
          if (std::string(data.begin(), data.end()) != want) sink.corrupt = true;
          sink.pieces.insert(piece);
          sink.owed += data.size();
          sink.Settle();
          sink.cv.notify_all();
        },
        [&sink](const std::string& why) {
          std::lock_guard lock(sink.mu);
          sink.ended = true;
          sink.end_reason = why;
          sink.cv.notify_all();
        });
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
    if (!r.ok()) return nullptr;
    sink.Attach(r->get());
    return std::move(*r);
  }

  std::unique_ptr<PushSender> StartSender(FanoutKind kind, std::chrono::milliseconds stall = 10s,
                                          PushSenderOptions o = {}) {
    o.bind_address = "127.0.0.1";
    o.fanout = kind;
    o.stall_timeout = stall;
    auto s = PushSender::Start(source_, o, proto::Logger());
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error());
    return s.ok() ? std::move(*s) : nullptr;
  }

  std::filesystem::path scratch_;
  std::string content_;
  PushSource source_;
};

inline std::string Encode(const proto::Message& m) {
  std::vector<std::uint8_t> out(proto::EncodedSize(m));
  auto n = proto::EncodeMessage(m, out);
  EXPECT_TRUE(n.ok());
  return std::string(out.begin(), out.end());
}

}  // namespace swarmcast::push
