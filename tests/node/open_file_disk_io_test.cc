// The open-files disk back-end (node/open_file_disk_io.h), driven the way
// libtorrent drives it: blocks written, pieces hashed, blocks read, on a
// real io_context and real files in a temporary directory.
#include "node/open_file_disk_io.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <libtorrent/disk_buffer_holder.hpp>
#include <libtorrent/download_priority.hpp>
#include <libtorrent/file_storage.hpp>
#include <libtorrent/hasher.hpp>
#include <libtorrent/performance_counters.hpp>
#include <libtorrent/settings_pack.hpp>
#include <random>
#include <string>
#include <vector>

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;

constexpr int kPiece = 4 * lt::default_block_size;  // 64 KiB, four blocks

class OpenFileDiskIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("swarmcast-disk-io-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    save_path_ = dir_.string();
    // Two files that split piece 1 (a 100 KiB file and a 60 KiB one), with
    // an empty file between them: 160 KiB, three pieces, the last short.
    files_.set_piece_length(kPiece);
    files_.add_file("t/a.bin", 100 * 1024);
    files_.add_file("t/empty", 0);
    files_.add_file("t/sub/b.bin", 60 * 1024);
    files_.set_num_pieces(static_cast<int>((files_.total_size() + kPiece - 1) / kPiece));
    data_.resize(static_cast<std::size_t>(files_.total_size()));
    std::mt19937 rng(7);
    for (auto& c : data_) c = static_cast<char>(rng());
    disk_ = OpenFileDiskIoConstructor(ios_, settings_, counters_);
    lt::storage_params params(files_, nullptr, save_path_, lt::storage_mode_sparse, priorities_,
                              lt::sha1_hash());
    storage_ = disk_->new_torrent(params, nullptr);
  }
  void TearDown() override {
    storage_.reset();
    disk_.reset();
    fs::remove_all(dir_);
  }

  const char* At(int piece, int offset) const {
    return data_.data() + static_cast<std::ptrdiff_t>(piece) * kPiece + offset;
  }
  int PieceSize(int piece) const { return files_.piece_size(lt::piece_index_t(piece)); }

  lt::storage_error Write(int piece, int offset, int length) {
    lt::storage_error out;
    bool done = false;
    const lt::peer_request r{lt::piece_index_t(piece), offset, length};
    disk_->async_write(storage_, r, At(piece, offset), nullptr, [&](const lt::storage_error& e) {
      out = e;
      done = true;
    });
    Run(done);
    return out;
  }
  // Writes a piece's blocks in the given order.
  void WritePiece(int piece, const std::vector<int>& blocks) {
    for (int b : blocks) {
      const int offset = b * lt::default_block_size;
      const int length = std::min(lt::default_block_size, PieceSize(piece) - offset);
      ASSERT_FALSE(Write(piece, offset, length).ec) << "piece " << piece << " block " << b;
    }
  }
  std::pair<lt::sha1_hash, lt::storage_error> Hash(int piece) {
    std::pair<lt::sha1_hash, lt::storage_error> out;
    bool done = false;
    disk_->async_hash(storage_, lt::piece_index_t(piece), {}, lt::disk_interface::v1_hash,
                      [&](lt::piece_index_t, const lt::sha1_hash& h, const lt::storage_error& e) {
                        out = {h, e};
                        done = true;
                      });
    Run(done);
    return out;
  }
  std::pair<std::string, lt::storage_error> Read(int piece, int offset, int length) {
    std::pair<std::string, lt::storage_error> out;
    bool done = false;
    const lt::peer_request r{lt::piece_index_t(piece), offset, length};
    disk_->async_read(storage_, r, [&](lt::disk_buffer_holder b, const lt::storage_error& e) {
      if (!e.ec) out.first.assign(b.data(), static_cast<std::size_t>(length));
      out.second = e;
      done = true;
    });
    Run(done);
    return out;
  }
  lt::sha1_hash Expected(int piece) const {
    return lt::hasher(At(piece, 0), PieceSize(piece)).final();
  }
  std::string FileBytes(const std::string& name) const {
    std::ifstream in(dir_ / name, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // Handlers are posted, as libtorrent expects: run until this one ran.
  void Run(const bool& done) {
    ios_.restart();
    while (!done && ios_.run_one() > 0) {
    }
    ASSERT_TRUE(done) << "the handler was never called";
  }

  fs::path dir_;
  std::string save_path_;
  lt::file_storage files_;
  lt::aux::vector<lt::download_priority_t, lt::file_index_t> priorities_;
  std::vector<char> data_;
  boost::asio::io_context ios_;
  lt::settings_pack settings_;
  lt::counters counters_;
  std::unique_ptr<lt::disk_interface> disk_;
  lt::storage_holder storage_;
};

TEST_F(OpenFileDiskIoTest, PiecesWrittenInOrderHashAndReadBackAcrossFiles) {
  for (int p = 0; p < 3; ++p)
    WritePiece(p, p == 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 2, 3});
  for (int p = 0; p < 3; ++p) {
    auto [hash, e] = Hash(p);
    EXPECT_FALSE(e.ec) << e.ec.message();
    EXPECT_EQ(hash, Expected(p)) << "piece " << p;
  }
  // Piece 1 spans both files (and the empty one between them).
  auto [bytes, e] = Read(1, 2 * lt::default_block_size, lt::default_block_size);
  ASSERT_FALSE(e.ec) << e.ec.message();
  EXPECT_EQ(bytes, std::string(At(1, 2 * lt::default_block_size), lt::default_block_size));
  EXPECT_EQ(FileBytes("t/a.bin"), std::string(data_.data(), 100 * 1024));
  EXPECT_EQ(FileBytes("t/sub/b.bin"), std::string(data_.data() + 100 * 1024, 60 * 1024));
}

TEST_F(OpenFileDiskIoTest, APieceWrittenInOrderIsHashedWithoutReadingItBack) {
  WritePiece(0, {0, 1, 2, 3});
  // Spoil the file behind the back-end's back: a read-back would see it.
  {
    std::fstream f(dir_ / "t/a.bin", std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(5);
    f.put(static_cast<char>(~data_[5]));
  }
  EXPECT_EQ(Hash(0).first, Expected(0));
  // The running hash is used once: the next check reads the file.
  EXPECT_NE(Hash(0).first, Expected(0));
}

TEST_F(OpenFileDiskIoTest, PiecesWrittenOutOfOrderOrTwiceAreHashedFromDisk) {
  WritePiece(0, {2, 0, 3, 1});
  WritePiece(1, {0, 1, 1, 2, 3});  // block 1 again: the running hash is given up
  EXPECT_EQ(Hash(0).first, Expected(0));
  EXPECT_EQ(Hash(1).first, Expected(1));
}

TEST_F(OpenFileDiskIoTest, AHashCheckAfterAPartialPieceReadsWhatIsOnDisk) {
  WritePiece(0, {0, 1});
  // Half a piece: the check reads the file, which ends there (an error),
  // rather than trusting the running hash of half the piece.
  auto [hash, e] = Hash(0);
  EXPECT_EQ(e.ec, lt::errors::file_too_short) << e.ec.message();
  WritePiece(0, {2, 3});
  EXPECT_EQ(Hash(0).first, Expected(0));
}

TEST_F(OpenFileDiskIoTest, ReadingAFileNeverWrittenIsAnErrorNotACrash) {
  auto [bytes, e] = Read(0, 0, lt::default_block_size);
  EXPECT_EQ(e.ec, boost::system::errc::no_such_file_or_directory) << e.ec.message();
  EXPECT_EQ(e.operation, lt::operation_t::file_open);
  EXPECT_EQ(e.file(), lt::file_index_t(0));
}

TEST_F(OpenFileDiskIoTest, AFileShorterThanTheTorrentSaysIsAnError) {
  WritePiece(0, {0});
  auto [bytes, e] = Read(0, lt::default_block_size, lt::default_block_size);
  EXPECT_EQ(e.ec, lt::errors::file_too_short) << e.ec.message();
}

TEST_F(OpenFileDiskIoTest, ASeedReadsAndHashesFilesItNeverWrote) {
  for (int p = 0; p < 3; ++p)
    WritePiece(p, p == 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 2, 3});
  storage_.reset();  // closes the descriptors and forgets the running hashes
  lt::storage_params params(files_, nullptr, save_path_, lt::storage_mode_sparse, priorities_,
                            lt::sha1_hash());
  storage_ = disk_->new_torrent(params, nullptr);
  auto [bytes, e] = Read(0, 0, lt::default_block_size);
  ASSERT_FALSE(e.ec) << e.ec.message();
  EXPECT_EQ(bytes, std::string(At(0, 0), lt::default_block_size));
  EXPECT_EQ(Hash(0).first, Expected(0));
}

TEST_F(OpenFileDiskIoTest, AMovedTorrentIsServedFromItsNewPlace) {
  WritePiece(0, {0, 1, 2, 3});
  const fs::path moved = dir_ / "moved";
  fs::create_directories(moved);
  lt::status_t status{};
  lt::storage_error error;
  bool done = false;
  disk_->async_move_storage(storage_, moved.string(), lt::move_flags_t::fail_if_exist,
                            [&](lt::status_t s, const std::string&, const lt::storage_error& e) {
                              status = s;
                              error = e;
                              done = true;
                            });
  Run(done);
  ASSERT_FALSE(error.ec) << error.ec.message();
  ASSERT_EQ(status, lt::status_t::no_error);
  ASSERT_TRUE(fs::exists(moved / "t/a.bin"));
  auto [bytes, e] = Read(0, lt::default_block_size, lt::default_block_size);
  ASSERT_FALSE(e.ec) << e.ec.message();
  EXPECT_EQ(bytes, std::string(At(0, lt::default_block_size), lt::default_block_size));
  WritePiece(1, {0, 1, 2, 3});
  EXPECT_EQ(Hash(1).first, Expected(1));
  EXPECT_FALSE(fs::exists(dir_ / "t/sub/b.bin"));
  EXPECT_TRUE(fs::exists(moved / "t/sub/b.bin"));
}

}  // namespace
}  // namespace swarmcast::node
