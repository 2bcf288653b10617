// A scratch directory with a random file and its metainfo, and the piece
// slicing the engine tests feed through the push seam (PieceFeed). Shared
// by the node's engine tests and its security tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "node/metainfo_builder.h"
#include "node/transfer.h"

namespace swarmcast::node::testing {

struct BlobTorrent {
  std::filesystem::path dir;  // holds src/blob.bin; removed by the owner
  std::string content, torrent, info_hash;

  // `size` pseudo-random bytes (per `seed`) in DIR/src/blob.bin, 16 KiB
  // pieces. An empty torrent on failure (check `torrent.empty()`).
  static BlobTorrent Make(const std::string& tag, std::size_t size, unsigned seed) {
    BlobTorrent b;
    b.dir = std::filesystem::temp_directory_path() /
            ("swarmcast-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(b.dir / "src");
    b.content.resize(size);
    std::mt19937 rng(seed);
    for (char& c : b.content) c = static_cast<char>(rng());
    std::ofstream(b.dir / "src" / "blob.bin", std::ios::binary) << b.content;
    BuildOptions o;
    o.path = b.dir / "src" / "blob.bin";
    o.piece_size = 16 << 10;
    if (auto built = BuildMetainfo(o)) {
      b.torrent = built->bytes;
      b.info_hash = built->info_hash;
    }
    return b;
  }

  // The bytes of piece `i` at `piece_length`.
  std::vector<char> Piece(std::int64_t i, std::int64_t piece_length) const {
    const auto off = static_cast<std::size_t>(i * piece_length);
    const auto len =
        std::min<std::size_t>(static_cast<std::size_t>(piece_length), content.size() - off);
    return std::vector<char>(content.begin() + off, content.begin() + off + len);
  }
};

// A fixture that makes a BlobTorrent before each test and removes its
// directory after: dir_, original_ (the content), torrent_, hash_.
class BlobTorrentTest : public ::testing::Test {
 protected:
  BlobTorrentTest(std::string tag, std::size_t size, unsigned seed)
      : tag_(std::move(tag)), size_(size), seed_(seed) {}
  void SetUp() override {
    blob_ = BlobTorrent::Make(tag_, size_, seed_);
    ASSERT_FALSE(blob_.torrent.empty()) << "could not build the test torrent";
    dir_ = blob_.dir;
    original_ = blob_.content;
    torrent_ = blob_.torrent;
    hash_ = blob_.info_hash;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A get of the blob into dir_/out on 127.0.0.1, no peers; a failed test
  // ends at the stall timeout instead of hanging.
  TransferOptions GetOptions() const {
    TransferOptions o;
    o.role = TransferOptions::Role::kGet;
    o.torrent_bytes = torrent_;
    o.expected_info_hash = hash_;
    o.dir = dir_ / "out";
    o.net.listen_ip = "127.0.0.1";
    o.stall_timeout = std::chrono::seconds(60);
    return o;
  }

  BlobTorrent blob_;
  std::filesystem::path dir_;
  std::string original_, torrent_, hash_;

 private:
  std::string tag_;
  std::size_t size_;
  unsigned seed_;
};

}  // namespace swarmcast::node::testing
