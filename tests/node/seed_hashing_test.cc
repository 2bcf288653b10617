// Integration: what `swarmcast seed` hashes and checks before it serves,
// with real tracker and node processes on 127.0.0.x: a re-seed of an
// unchanged file reuses its piece hashes, a folder given as "dir/" with a
// link to a shard seeds and arrives whole, and `seed --torrent` refuses
// data that does not match before anything is published or pushed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>

#include "node/registry_client.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

class SeedHashingTest : public LocalSwarmTest {
 protected:
  std::unique_ptr<Child> Seed(const std::string& path, const std::string& name,
                              std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"seed", path,       "--tracker",   url_,     "--name",
                                  name,   "--listen", "127.0.0.2:0", "--json", "--no-push"};
    a.insert(a.end(), extra.begin(), extra.end());
    return Run("seed-" + name + "-" + std::to_string(++runs_), a);
  }

  std::unique_ptr<Child> Get(const std::string& name, const fs::path& out) {
    return Run("get-" + name + "-" + std::to_string(++runs_),
               {"get", name, "--tracker", url_, "-o", out.string(), "--listen", "127.0.0.3:0",
                "--no-linger", "--json"});
  }

  // The hash cache keeps only files that were last modified a moment
  // before hashing began (node/hash_cache.h: file times move in clock
  // ticks); wait until `path` is that old.
  static bool WaitSettled(const fs::path& path) {
    return WaitUntil(10s, [&] {
      struct stat st {};
      return ::stat(path.c_str(), &st) == 0 && std::time(nullptr) - st.st_ctim.tv_sec >= 3;
    });
  }

  int runs_ = 0;
};

TEST_F(SeedHashingTest, ASecondSeedOfAnUnchangedFileReusesItsHashes) {
  const fs::path file = Dir("seed") / "image.raw";
  WriteRandomFile(file, 6 << 20, 11);
  ASSERT_TRUE(WaitSettled(file));

  auto first = Seed(file.string(), "image");
  const std::string info_hash = WaitSeedPublished(*first);
  ASSERT_FALSE(info_hash.empty()) << first->Stderr();
  EXPECT_EQ(first->Stderr().find("reused from"), std::string::npos) << first->Stderr();
  first->Signal(SIGTERM);
  ASSERT_EQ(first->Wait(20s), 0) << first->Stderr();

  auto second = Seed(file.string(), "image");
  ASSERT_EQ(WaitSeedPublished(*second), info_hash) << second->Stderr();
  EXPECT_NE(second->Stderr().find("piece hashes of image.raw reused from"), std::string::npos)
      << second->Stderr();
  EXPECT_EQ(second->Stderr().find("hashing image.raw"), std::string::npos)
      << "no piece was read again:\n"
      << second->Stderr();

  // What the cached hashes describe is what peers get.
  auto get = Get("image", Dir("peer"));
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_TRUE(SameContent(file, Dir("peer") / "image.raw"));
  second->Signal(SIGTERM);
  EXPECT_EQ(second->Wait(20s), 0);
}

TEST_F(SeedHashingTest, AFolderGivenWithATrailingSlashAndALinkedShardArrivesWhole) {
  const fs::path model = Dir("seed") / "model";
  fs::create_directories(model / "tokenizer");
  WriteRandomFile(model / "shard-00001.bin", 3 << 20, 1);
  WriteRandomFile(Dir("blobs") / "abc123", (2 << 20) + 17, 2);
  fs::create_symlink(Dir("blobs") / "abc123", model / "shard-00002.bin");
  std::ofstream(model / "config.json") << R"({"layers": 2})";
  WriteRandomFile(model / "tokenizer" / "vocab.txt", 5000, 3);
  std::ofstream(model / "tokenizer" / "empty.txt").close();

  auto seed = Seed(model.string() + "/", "model");
  ASSERT_FALSE(WaitSeedPublished(*seed).empty()) << seed->Stderr();
  auto get = Get("model", Dir("peer"));
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  const fs::path got = Dir("peer") / "model";
  EXPECT_TRUE(SameContent(model / "shard-00001.bin", got / "shard-00001.bin"));
  EXPECT_TRUE(SameContent(Dir("blobs") / "abc123", got / "shard-00002.bin"));
  EXPECT_FALSE(fs::is_symlink(got / "shard-00002.bin")) << "a link arrives as the file it names";
  EXPECT_TRUE(SameContent(model / "config.json", got / "config.json"));
  EXPECT_TRUE(SameContent(model / "tokenizer" / "vocab.txt", got / "tokenizer" / "vocab.txt"));
  EXPECT_TRUE(fs::is_regular_file(got / "tokenizer" / "empty.txt"));
  EXPECT_EQ(fs::file_size(got / "tokenizer" / "empty.txt"), 0u);
  seed->Signal(SIGTERM);
  EXPECT_EQ(seed->Wait(20s), 0);
}

TEST_F(SeedHashingTest, ALinkToAFolderIsRefusedWithItsName) {
  const fs::path dir = Dir("seed") / "tree";
  fs::create_directories(dir);
  WriteRandomFile(dir / "a.bin", 100000, 4);
  fs::create_symlink(Dir("seed"), dir / "up");
  auto seed = Seed(dir.string(), "tree");
  ASSERT_EQ(seed->Wait(30s), 5) << seed->Stderr();
  EXPECT_NE(seed->Stderr().find("tree/up: a link to a folder"), std::string::npos)
      << seed->Stderr();
}

TEST_F(SeedHashingTest, SeedTorrentRefusesDataThatDoesNotMatchBeforePublishing) {
  const fs::path file = Dir("seed") / "disk.img";
  WriteRandomFile(file, 4 << 20, 7);
  const fs::path torrent = Dir("meta") / "disk.torrent";
  auto create = Run("create", {"create", file.string(), "-o", torrent.string(), "--json",
                               "--piece-size", "256KiB"});
  ASSERT_EQ(create->Wait(30s), 0) << create->Stderr();

  // One byte of piece 5 changes on disk after the metainfo was made.
  std::string bytes = ReadAll(file);
  bytes[5 * (256 << 10) + 100] ^= 0x5a;
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
  auto bad = Seed(file.string(), "disk", {"--torrent", torrent.string()});
  ASSERT_EQ(bad->Wait(30s), 5) << bad->Stderr();
  EXPECT_NE(bad->Stderr().find("1 of 16 pieces differ (the first is piece 5)"), std::string::npos)
      << bad->Stderr();
  RegistryClient c(*ParseTrackerUrl(url_), 2s);
  EXPECT_FALSE(c.GetSwarm("disk")) << "nothing was published";

  // The original bytes back: the same metainfo seeds and serves.
  WriteRandomFile(file, 4 << 20, 7);
  auto good = Seed(file.string(), "disk", {"--torrent", torrent.string()});
  ASSERT_FALSE(WaitSeedPublished(*good).empty()) << good->Stderr();
  EXPECT_NE(good->Stderr().find("checked disk.img against"), std::string::npos) << good->Stderr();
  auto get = Get("disk", Dir("peer"));
  ASSERT_EQ(get->Wait(60s), 0) << get->Stderr();
  EXPECT_TRUE(SameContent(file, Dir("peer") / "disk.img"));
  good->Signal(SIGTERM);
  EXPECT_EQ(good->Wait(20s), 0);
}

}  // namespace
}  // namespace swarmcast::node::testing
