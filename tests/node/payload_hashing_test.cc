// The seed's hashing path on real files: what ListPayload lists and
// refuses, PieceHasher against a plain SHA-1 of the bytes and against
// libtorrent's own hashing, the hash cache's hits and misses, and the
// check of data against an existing metainfo.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "node/hash_cache.h"
#include "node/metainfo_builder.h"
#include "node/payload_check.h"
#include "node/payload_files.h"
#include "node/piece_hasher.h"

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;

class PayloadHashingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("swarmcast-hashing-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& rel, std::size_t size, unsigned seed = 1) {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::string data(size, '\0');
    std::mt19937 rng(seed + static_cast<unsigned>(size));
    for (char& c : data) c = static_cast<char>(rng());
    std::ofstream(p, std::ios::binary).write(data.data(), static_cast<std::streamsize>(size));
    return p;
  }
  static std::string Bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // SHA-1 of each piece of the concatenation, the plain way.
  static std::string ReferenceHashes(const std::string& all, std::size_t piece) {
    std::string out;
    for (std::size_t at = 0; at < all.size(); at += piece) {
      unsigned char d[SHA_DIGEST_LENGTH];
      SHA1(reinterpret_cast<const unsigned char*>(all.data() + at),
           std::min(piece, all.size() - at), d);
      out.append(reinterpret_cast<char*>(d), sizeof d);
    }
    return out;
  }
  fs::path dir_;
};

TEST_F(PayloadHashingTest, ListsAFolderInNameOrderFollowingLinksToFiles) {
  Write("w/b.safetensors", 1000);
  Write("w/a/config.json", 10);
  Write("w/empty", 0);
  Write("blobs/x", 77);
  fs::create_symlink(dir_ / "blobs/x", dir_ / "w/link");
  fs::create_directories(dir_ / "w/nothing-here");
  // "w/" names the folder itself.
  auto p = ListPayload(dir_.string() + "/w/");
  ASSERT_TRUE(p) << p.error();
  EXPECT_TRUE(p->is_directory);
  EXPECT_EQ(p->root, dir_ / "w");
  std::vector<std::string> names;
  for (const auto& f : p->files) names.push_back(f.torrent_path);
  EXPECT_EQ(names,
            (std::vector<std::string>{"w/a/config.json", "w/b.safetensors", "w/empty", "w/link"}));
  EXPECT_EQ(p->total_size, 1087);
  EXPECT_EQ(p->files[3].identity.size, 77) << "a link is listed with its target's size";
}

TEST_F(PayloadHashingTest, RefusesLinksToFoldersDanglingLinksAndFifos) {
  Write("d1/f", 10);
  fs::create_symlink(dir_ / "d1", dir_ / "d1/loop");
  auto loop = ListPayload(dir_ / "d1");
  ASSERT_FALSE(loop);
  EXPECT_NE(loop.error().find("a link to a folder"), std::string::npos) << loop.error();

  Write("d2/f", 10);
  fs::create_symlink(dir_ / "gone", dir_ / "d2/dangling");
  auto dangling = ListPayload(dir_ / "d2");
  ASSERT_FALSE(dangling);
  EXPECT_NE(dangling.error().find("a link to nothing"), std::string::npos) << dangling.error();

  Write("d3/f", 10);
  ASSERT_EQ(::mkfifo((dir_ / "d3/pipe").c_str(), 0600), 0);
  auto fifo = ListPayload(dir_ / "d3");
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().find("not a regular file"), std::string::npos) << fifo.error();

  fs::create_directories(dir_ / "d4/sub");
  Write("d4/zero", 0);
  EXPECT_FALSE(ListPayload(dir_ / "d4")) << "no bytes to share";
  EXPECT_FALSE(ListPayload(dir_ / "missing"));
}

TEST_F(PayloadHashingTest, PiecesSpanFilesPadsAndEmptyFilesLikeThePlainHash) {
  const auto a = Write("a", 100'000), b = Write("b", 0), c = Write("c", 70'001);
  HashJob job;
  job.segments = {{a, 100'000}, {b, 0}, {{}, 3'000}, {c, 70'001}};
  job.piece_length = 16 << 10;
  std::int64_t calls = 0;
  job.progress = [&](std::int64_t done, std::int64_t total) {
    ++calls;
    EXPECT_EQ(done, calls);
    EXPECT_EQ(total, 11);
  };
  for (int threads : {1, 2, 5}) {
    calls = 0;
    job.threads = threads;
    auto h = HashPieces(job);
    ASSERT_TRUE(h) << h.error();
    const std::string all = Bytes(a) + std::string(3'000, '\0') + Bytes(c);
    EXPECT_EQ(*h, ReferenceHashes(all, 16 << 10)) << threads << " threads";
    EXPECT_EQ(calls, 11);
  }
}

TEST_F(PayloadHashingTest, AFileShorterThanListedIsAnErrorNotAWrongHash) {
  const auto a = Write("a", 1000);
  HashJob job;
  job.segments = {{a, 5000}};
  job.piece_length = 16 << 10;
  auto h = HashPieces(job);
  ASSERT_FALSE(h);
  EXPECT_NE(h.error().find("shorter than listed"), std::string::npos) << h.error();
  job.segments = {{dir_ / "missing", 10}};
  EXPECT_FALSE(HashPieces(job));
}

TEST_F(PayloadHashingTest, OurV1HashesAndLibtorrentsHybridAgreeOnAFolder) {
  Write("m/shard-1", (1 << 20) + 5);
  Write("m/shard-2", 3 << 20);
  Write("m/tokenizer.json", 4321);
  Write("m/sub/empty", 0);
  BuildOptions o;
  o.path = dir_ / "m";
  o.piece_size = 64 << 10;
  auto ours = BuildMetainfo(o);
  ASSERT_TRUE(ours) << ours.error();
  // Hybrid goes through libtorrent's set_piece_hashes: its v1 half must
  // carry the same bytes in the same order; compare by checking our data
  // against the hybrid metainfo piece by piece.
  o.hybrid = true;
  auto hybrid = BuildMetainfo(o);
  ASSERT_TRUE(hybrid) << hybrid.error();
  PayloadCheckOptions c;
  c.dir = dir_;
  auto check = CheckPayload(hybrid->bytes, c);
  ASSERT_TRUE(check) << check.error();
  EXPECT_EQ(check->bad_pieces, 0);
  auto check_v1 = CheckPayload(ours->bytes, c);
  ASSERT_TRUE(check_v1) << check_v1.error();
  EXPECT_EQ(check_v1->bad_pieces, 0);
  EXPECT_EQ(check_v1->pieces, ours->num_pieces);
  EXPECT_EQ(ours->num_files, 4);
}

TEST_F(PayloadHashingTest, CacheHitsOnlyWhileEveryFileIsUnchanged) {
  const fs::path f = Write("disk.img", 300'000);
  BuildOptions o;
  o.path = f;
  o.piece_size = 16 << 10;
  o.hash_cache_dir = dir_ / "cache" / "hashes";
  // The file was written just now: the settle rule (pinned down below)
  // would keep nothing.
  o.hash_cache_settle = std::chrono::milliseconds(0);
  auto first = BuildMetainfo(o);
  ASSERT_TRUE(first) << first.error();
  EXPECT_FALSE(first->hashes_from_cache);
  EXPECT_TRUE(first->cache_warning.empty()) << first->cache_warning;
  struct stat st {};
  ASSERT_EQ(::stat(o.hash_cache_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  std::int64_t progress_calls = 0;
  o.progress = [&](std::int64_t, std::int64_t) { ++progress_calls; };
  auto second = BuildMetainfo(o);
  ASSERT_TRUE(second) << second.error();
  EXPECT_TRUE(second->hashes_from_cache);
  EXPECT_EQ(progress_calls, 0) << "a hit reads no piece";
  EXPECT_EQ(second->info_hash, first->info_hash);

  o.rehash = true;
  auto forced = BuildMetainfo(o);
  ASSERT_TRUE(forced);
  EXPECT_FALSE(forced->hashes_from_cache);
  EXPECT_GT(progress_calls, 0);
  o.rehash = false;

  // Rewritten in place at the same size, the file's time set apart (file
  // times move in clock ticks; a same-tick rewrite is what the settle rule
  // is for): a miss.
  const std::string bytes = Bytes(f);
  std::string changed = bytes;
  changed[12345] ^= 1;
  std::ofstream(f, std::ios::binary | std::ios::trunc).write(changed.data(), changed.size());
  const struct timespec times[2] = {{.tv_sec = 1'000'000'000, .tv_nsec = 0},
                                    {.tv_sec = 1'000'000'000, .tv_nsec = 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, f.c_str(), times, 0), 0);
  auto third = BuildMetainfo(o);
  ASSERT_TRUE(third) << third.error();
  EXPECT_FALSE(third->hashes_from_cache);
  EXPECT_NE(third->info_hash, first->info_hash);

  // A damaged entry is a miss, not a wrong metainfo.
  for (const auto& e : fs::directory_iterator(o.hash_cache_dir)) {
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "swarmcast-piece-hashes 1\nxx";
  }
  auto fourth = BuildMetainfo(o);
  ASSERT_TRUE(fourth);
  EXPECT_FALSE(fourth->hashes_from_cache);
  EXPECT_EQ(fourth->info_hash, third->info_hash);
}

TEST_F(PayloadHashingTest, AFileModifiedJustBeforeHashingIsNotCached) {
  const fs::path f = Write("fresh.img", 100'000);
  BuildOptions o;
  o.path = f;
  o.hash_cache_dir = dir_ / "cache";
  o.hash_cache_settle = std::chrono::hours(1);  // the file is seconds old
  ASSERT_TRUE(BuildMetainfo(o));
  auto again = BuildMetainfo(o);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->hashes_from_cache);
  EXPECT_TRUE(!fs::exists(o.hash_cache_dir) || fs::is_empty(o.hash_cache_dir));
}

TEST_F(PayloadHashingTest, ACacheDirectoryOthersCanWriteIsNotUsed) {
  const fs::path f = Write("disk.img", 100'000);
  BuildOptions o;
  o.path = f;
  o.hash_cache_dir = dir_ / "shared";
  o.hash_cache_settle = std::chrono::milliseconds(0);
  fs::create_directories(o.hash_cache_dir);
  ::chmod(o.hash_cache_dir.c_str(), 0777);
  auto first = BuildMetainfo(o);
  ASSERT_TRUE(first) << first.error();
  EXPECT_NE(first->cache_warning.find("writable by others"), std::string::npos)
      << first->cache_warning;
  auto second = BuildMetainfo(o);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->hashes_from_cache);
}

TEST_F(PayloadHashingTest, CheckCountsPiecesThatDifferAndRefusesWrongSizes) {
  const fs::path f = Write("img", 200'000);
  BuildOptions o;
  o.path = f;
  o.piece_size = 16 << 10;
  auto built = BuildMetainfo(o);
  ASSERT_TRUE(built) << built.error();
  std::string bytes = Bytes(f);
  bytes[40'000] ^= 0x55;   // piece 2
  bytes[199'999] ^= 0x55;  // the last piece, 12
  std::ofstream(f, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
  PayloadCheckOptions c;
  c.dir = dir_;
  auto check = CheckPayload(built->bytes, c);
  ASSERT_TRUE(check) << check.error();
  EXPECT_EQ(check->pieces, 13);
  EXPECT_EQ(check->bad_pieces, 2);
  EXPECT_EQ(check->first_bad, 2);

  ::truncate(f.c_str(), 100);
  auto short_file = CheckPayload(built->bytes, c);
  ASSERT_FALSE(short_file);
  EXPECT_NE(short_file.error().find("the metainfo says 200000"), std::string::npos)
      << short_file.error();
}

}  // namespace
}  // namespace swarmcast::node
