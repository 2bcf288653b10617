// Attacks on a node through what it reads besides the checked metainfo
// (issue 14, item 1), against the real engine (RunTransfer, a libtorrent
// session on 127.0.0.1) and a real local listener standing in for the
// attacker's host:
// - a planted resume file naming other paths, trackers and web seeds;
// - a published torrent whose own tracker and url-list point elsewhere.
// Only the checked metainfo and the operator's flags may decide where bytes
// go and whom the node talks to.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <libtorrent/add_torrent_params.hpp>
#include <libtorrent/torrent_info.hpp>
#include <libtorrent/write_resume_data.hpp>
#include <random>
#include <thread>

#include "node/push/tcp.h"
#include "node/transfer.h"
#include "proto/bencode.h"
#include "tests/common/wait_until.h"
#include "tests/node/blob_torrent.h"

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using swarmcast::testing::WaitUntil;
namespace testing = swarmcast::node::testing;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The attacker's host: counts TCP connections made to it (tracker
// announces and web-seed requests alike).
class Listener {
 public:
  Listener() {
    auto l = push::ListenTcp("127.0.0.1", 0);
    EXPECT_TRUE(l.ok());
    port_ = l->port;
    fd_ = std::move(l->fd);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_.get(), POLLIN, 0};
        if (::poll(&p, 1, 50) == 1) {
          const int c = ::accept(fd_.get(), nullptr, nullptr);
          if (c >= 0) {
            ++connections_;
            ::close(c);
          }
        }
      }
    });
  }
  ~Listener() {
    stop_ = true;
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_; }

 private:
  std::uint16_t port_ = 0;
  push::UniqueFd fd_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

class NodeSecurityTest : public testing::BlobTorrentTest {
 protected:
  NodeSecurityTest() : BlobTorrentTest("security", (1 << 20) + 77, 3) {}

  // A get that receives every piece through the push seam (no peers).
  TransferOptions FedGet(std::thread& feeder) {
    TransferOptions o = GetOptions();
    o.hooks.on_ready = [this, &feeder](const PieceFeed& feed) {
      feeder = std::thread([feed, this] {
        for (std::int64_t i = 0; i < feed.pieces; ++i) {
          feed.add_piece(static_cast<std::uint32_t>(i), blob_.Piece(i, feed.piece_length));
        }
      });
    };
    o.hooks.on_stop = [&feeder] {
      if (feeder.joinable()) feeder.join();
    };
    return o;
  }
};

TEST_F(NodeSecurityTest, APlantedResumeFileCannotRedirectTheDownload) {
  Listener attacker;
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  // What a torrent named ".swarmcast" could once drop into the staging
  // area: resume data for this info-hash that maps the file outside -o,
  // moves the save path and adds the attacker's tracker and web seed.
  const lt::torrent_info ti(
      lt::span<const char>(torrent_.data(), static_cast<std::ptrdiff_t>(torrent_.size())),
      lt::from_span);
  lt::add_torrent_params p;
  p.info_hashes = ti.info_hashes();
  p.save_path = elsewhere.string();
  p.renamed_files[lt::file_index_t(0)] = (elsewhere / "stolen.bin").string();
  p.trackers = {attacker.url() + "/announce"};
  p.url_seeds = {attacker.url() + "/"};
  const fs::path staging = dir_ / "out" / ".swarmcast";
  fs::create_directories(staging);
  const std::vector<char> resume = lt::write_resume_data_buf(p);
  std::ofstream(staging / (hash_ + ".resume"), std::ios::binary)
      .write(resume.data(), static_cast<std::streamsize>(resume.size()));

  std::thread feeder;
  TransferOptions o = FedGet(feeder);
  auto report = RunTransfer(o);
  if (feeder.joinable()) feeder.join();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(ReadAll(dir_ / "out" / "blob.bin"), original_) << "the real download is in place";
  EXPECT_TRUE(fs::is_empty(elsewhere)) << "nothing may land outside -o";
  EXPECT_FALSE(fs::exists(elsewhere / "stolen.bin"));
}

TEST_F(NodeSecurityTest, ATorrentCannotBeNamedLikeTheStagingArea) {
  // The name is refused by the shared check the tracker and every get
  // run, so no torrent's files can land in DIR/.swarmcast.
  auto doc = proto::DecodeBencode(torrent_);
  ASSERT_TRUE(doc);
  (*doc->if_dict())["info"].if_dict()->insert_or_assign("name", proto::BencodeValue(".swarmcast"));
  TransferOptions o;
  o.role = TransferOptions::Role::kGet;
  o.torrent_bytes = proto::EncodeBencode(*doc);
  o.dir = dir_ / "out";
  auto r = RunTransfer(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, TransferError::Kind::kMetainfo) << r.error().message;
  EXPECT_FALSE(fs::exists(dir_ / "out" / ".swarmcast" / "x"));
}

// The metainfo's own announce URL and url-list point at the attacker. With
// --allow-torrent-urls (the control) the node contacts them within
// `contacted`; without it, it is left alone to stall for several times
// that long with no source, and the attacker sees nothing.
TEST_F(NodeSecurityTest, TheTorrentsOwnTrackersAndWebSeedsAreNotContacted) {
  Listener attacker;
  auto doc = proto::DecodeBencode(torrent_);
  ASSERT_TRUE(doc);
  (*doc->if_dict())["announce"] = proto::BencodeValue(attacker.url() + "/announce");
  (*doc->if_dict())["url-list"] = proto::BencodeValue(attacker.url() + "/");
  const std::string hostile = proto::EncodeBencode(*doc);

  auto options = [&](bool allow) {
    TransferOptions o;
    o.role = TransferOptions::Role::kGet;
    o.torrent_bytes = hostile;
    o.expected_info_hash = hash_;  // url-list and announce are outside info
    o.dir = dir_ / (allow ? "control" : "out");
    o.net.listen_ip = "127.0.0.1";
    o.torrent_urls = allow;
    return o;
  };
  std::chrono::steady_clock::duration contacted_after{};
  {
    TransferOptions control = options(true);
    control.stall_timeout = 60s;
    std::stop_source stop;
    const auto start = std::chrono::steady_clock::now();
    auto run = std::async(std::launch::async, [&control, token = stop.get_token()] {
      return RunTransfer(control, token);
    });
    const bool contacted = WaitUntil(60s, [&] { return attacker.connections() > 0; });
    contacted_after = std::chrono::steady_clock::now() - start;
    stop.request_stop();
    ASSERT_EQ(run.wait_for(30s), std::future_status::ready);
    ASSERT_TRUE(contacted) << "control: the node never contacted the torrent's URLs";
  }
  const int before = attacker.connections();
  TransferOptions o = options(false);
  o.stall_timeout = std::max<std::chrono::milliseconds>(
      3s, std::chrono::duration_cast<std::chrono::milliseconds>(contacted_after * 5));
  auto r = RunTransfer(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, TransferError::Kind::kStalled) << r.error().message;
  EXPECT_EQ(attacker.connections(), before) << "the torrent's own URLs were contacted";
}

}  // namespace
}  // namespace swarmcast::node
