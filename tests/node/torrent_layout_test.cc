// The push channel's chunks land where libtorrent puts those bytes: for
// real torrents of a folder (v1, and hybrid with pad files), every chunk
// of proto::ContentLayout is exactly one slice of lt::file_storage's
// map_block, and what a piece's chunks leave out is pad files alone.
#include "node/torrent_layout.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <libtorrent/file_storage.hpp>
#include <libtorrent/torrent_info.hpp>
#include <random>

#include "node/metainfo_builder.h"

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;

class TorrentLayoutTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("swarmcast-layout-" + std::to_string(::getpid()));
    const fs::path m = dir_ / "model";
    fs::create_directories(m / "sub" / "deeper");
    std::mt19937 rng(3);
    for (const auto& [rel, size] :
         std::vector<std::pair<std::string, std::size_t>>{{"a.safetensors", 100000},
                                                          {"b.json", 700},
                                                          {"empty", 0},
                                                          {"sub/deeper/c.bin", 50001},
                                                          {"sub/d.txt", 16384}}) {
      std::string data(size, '\0');
      for (char& c : data) c = static_cast<char>(rng());
      std::ofstream(m / rel, std::ios::binary) << data;
    }
    BuildOptions o;
    o.path = m;
    o.piece_size = 16 << 10;
    o.hybrid = GetParam();
    auto built = BuildMetainfo(o);
    ASSERT_TRUE(built.ok()) << built.error();
    torrent_ = built->bytes;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string torrent_;
};

TEST_P(TorrentLayoutTest, ChunksAreLibtorrentsSlicesAndPadIsAllTheyLeaveOut) {
  auto layout = TorrentLayout(torrent_);
  ASSERT_TRUE(layout.ok()) << layout.error();
  const lt::torrent_info ti(torrent_, lt::from_span);
  const lt::file_storage& fs = ti.files();
  ASSERT_EQ(layout->files().size(), static_cast<std::size_t>(fs.num_files()));
  bool any_pad = false;
  for (const lt::file_index_t f : fs.file_range()) {
    const auto& lf = layout->files()[static_cast<std::size_t>(static_cast<int>(f))];
    EXPECT_EQ(lf.pad, fs.pad_file_at(f));
    EXPECT_EQ(lf.size, static_cast<std::uint64_t>(fs.file_size(f)));
    if (!lf.pad) EXPECT_EQ(lf.path, fs.file_path(f));
    any_pad = any_pad || lf.pad;
  }
  EXPECT_EQ(any_pad, GetParam()) << "a hybrid torrent pads its files, a v1 one does not";
  for (const lt::piece_index_t p : fs.piece_range()) {
    const auto piece = static_cast<std::uint32_t>(static_cast<int>(p));
    std::uint64_t chunked = 0;
    for (const proto::Chunk& c : layout->ChunksOf(piece, 4096)) {
      const auto slices =
          fs.map_block(p, static_cast<std::int64_t>(c.piece_offset), static_cast<int>(c.length));
      ASSERT_EQ(slices.size(), 1u) << "piece " << piece << " at " << c.piece_offset;
      EXPECT_EQ(static_cast<int>(slices[0].file_index), static_cast<int>(c.file));
      EXPECT_EQ(static_cast<std::uint64_t>(slices[0].offset), c.file_offset);
      EXPECT_EQ(static_cast<std::uint64_t>(slices[0].size), c.length);
      chunked += c.length;
    }
    std::uint64_t pad = 0;
    for (const lt::file_slice& s : fs.map_block(p, 0, fs.piece_size(p))) {
      if (fs.pad_file_at(s.file_index)) pad += static_cast<std::uint64_t>(s.size);
    }
    EXPECT_EQ(chunked + pad, static_cast<std::uint64_t>(fs.piece_size(p))) << "piece " << piece;
  }
}

INSTANTIATE_TEST_SUITE_P(V1AndHybrid, TorrentLayoutTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "hybrid" : "v1"; });

}  // namespace
}  // namespace swarmcast::node
