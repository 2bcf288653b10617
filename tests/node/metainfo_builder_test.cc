// Hashing real files with libtorrent and checking what comes out with
// swarmcast's own untrusted-metainfo check.
#include "node/metainfo_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "node/file_io.h"
#include "proto/metainfo.h"

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;

class MetainfoBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("swarmcast-builder-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& rel, std::size_t size) {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::string data(size, '\0');
    std::mt19937 rng(static_cast<unsigned>(size));
    for (char& c : data) c = static_cast<char>(rng());
    std::ofstream(p, std::ios::binary).write(data.data(), static_cast<std::streamsize>(size));
    return p;
  }
  fs::path dir_;
};

TEST_F(MetainfoBuilderTest, SingleFileV1WithProgress) {
  const fs::path f = Write("disk.img", (3 << 20) + 12345);
  BuildOptions o;
  o.path = f;
  o.announce_url = "http://127.0.0.1:6969/announce";
  std::int64_t calls = 0, last_total = 0;
  o.progress = [&](std::int64_t done, std::int64_t total) {
    ++calls;
    EXPECT_EQ(done, calls);
    last_total = total;
  };
  auto built = BuildMetainfo(o);
  ASSERT_TRUE(built) << built.error();
  EXPECT_EQ(built->name, "disk.img");
  EXPECT_EQ(built->total_size, (3 << 20) + 12345);
  EXPECT_EQ(built->piece_length, 64 << 10);
  EXPECT_EQ(built->num_pieces, 49);
  EXPECT_EQ(calls, 49);
  EXPECT_EQ(last_total, 49);
  EXPECT_EQ(built->info_hash.size(), 40u);

  auto summary = proto::CheckMetainfo(built->bytes);
  ASSERT_TRUE(summary) << summary.error();
  EXPECT_FALSE(summary->hybrid);
  EXPECT_EQ(summary->num_pieces, 49);
}

TEST_F(MetainfoBuilderTest, DirectoryHybridPassesTheCheck) {
  Write("set/a.bin", 100'000);
  Write("set/sub/b.bin", 300'000);
  BuildOptions o;
  o.path = dir_ / "set";
  o.hybrid = true;
  o.piece_size = 16 << 10;
  auto built = BuildMetainfo(o);
  ASSERT_TRUE(built) << built.error();
  auto summary = proto::CheckMetainfo(built->bytes);
  ASSERT_TRUE(summary) << summary.error();
  EXPECT_TRUE(summary->hybrid);
  EXPECT_EQ(summary->paths.size(), 2u);
  EXPECT_EQ(summary->total_size, built->total_size);
}

TEST_F(MetainfoBuilderTest, SameContentSameInfoHash) {
  const fs::path f = Write("x.bin", 200'000);
  BuildOptions o;
  o.path = f;
  auto a = BuildMetainfo(o);
  auto b = BuildMetainfo(o);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->info_hash, b->info_hash);
}

TEST_F(MetainfoBuilderTest, RefusesMissingEmptyAndBadPieceSizes) {
  BuildOptions o;
  o.path = dir_ / "missing";
  EXPECT_FALSE(BuildMetainfo(o));
  o.path = Write("empty", 0);
  EXPECT_FALSE(BuildMetainfo(o));
  o.path = Write("y.bin", 1000);
  o.piece_size = 3000;
  EXPECT_FALSE(BuildMetainfo(o));
}

TEST_F(MetainfoBuilderTest, AtomicWriteAndBoundedRead) {
  const fs::path p = dir_ / "state.json";
  ASSERT_FALSE(WriteFileAtomically(p, "one"));
  ASSERT_FALSE(WriteFileAtomically(p, "two"));
  EXPECT_EQ(*ReadFileBounded(p, 10), "two");
  EXPECT_FALSE(ReadFileBounded(p, 2));
  EXPECT_FALSE(ReadFileBounded(dir_, 10));
  EXPECT_TRUE(WriteFileAtomically(dir_ / "no" / "such" / "dir", "x"));
}

TEST(PieceSize, From256To1024PiecesWithinBounds) {
  EXPECT_EQ(ChoosePieceSize(1), 64 << 10);
  EXPECT_EQ(ChoosePieceSize(16 << 20), 64 << 10);
  EXPECT_EQ(ChoosePieceSize(32 << 20), 128 << 10);
  EXPECT_EQ(ChoosePieceSize(64 << 20), 256 << 10);
  EXPECT_EQ(ChoosePieceSize(256 << 20), 1 << 20);
  EXPECT_EQ(ChoosePieceSize(std::int64_t{1} << 30), 1 << 20);
  EXPECT_EQ(ChoosePieceSize(std::int64_t{4} << 30), 4 << 20);
  EXPECT_EQ(ChoosePieceSize(std::int64_t{1} << 40), 16 << 20);
  for (std::int64_t size : {std::int64_t{20} << 20, std::int64_t{100} << 20,
                            std::int64_t{300} << 20, std::int64_t{7} << 30}) {
    const std::int64_t p = ChoosePieceSize(size);
    EXPECT_EQ(p & (p - 1), 0) << size;
    EXPECT_GE(size / p, 256) << size;
    EXPECT_LE(size / p, 1024) << size;
  }
}

}  // namespace
}  // namespace swarmcast::node
