// Integration: the push channel for every layout a real swarm has, with
// real `swarmcast seed` and `get` processes on 127.0.0.x: a folder shaped
// like model weights (a few large shards, small json files beside them, an
// empty file, nested folders), the same as a hybrid torrent (libtorrent
// pads every file to a piece boundary), and 32 MiB pieces, twice the
// largest chunk-free frame the channel ever allowed.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>

#include "tests/node/push_swarm_fixture.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

class PushLayoutTest : public PushSwarmFixture {
 protected:
  // Files under `root`, relative path -> sha256.
  static std::map<std::string, std::string> Digests(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) out[fs::relative(e.path(), root).string()] = Sha256Of(e.path());
    }
    return out;
  }

  // A model-weights folder: odd-sized shards so that pieces straddle
  // files, json beside them, an empty file and two levels of folders.
  fs::path MakeModelFolder() {
    const fs::path m = Dir("seed") / "model";
    fs::create_directories(m / "tokenizer" / "vocab");
    WriteRandomFile(m / "model-00001-of-00003.safetensors", (5 << 20) + 12345, 11);
    WriteRandomFile(m / "model-00002-of-00003.safetensors", (3 << 20) + 777, 12);
    WriteRandomFile(m / "model-00003-of-00003.safetensors", (1 << 20) + 3, 13);
    std::ofstream(m / "config.json") << R"({"architectures":["Demo"],"hidden_size":4096})";
    std::ofstream(m / "generation_config.json") << R"({"temperature":0.7})";
    std::ofstream(m / "model.safetensors.index.json")
        << R"({"weight_map":{"a":"model-00001-of-00003.safetensors"}})";
    std::ofstream(m / "tokenizer" / "special_tokens_map.json") << R"({"bos":"<s>"})";
    WriteRandomFile(m / "tokenizer" / "vocab" / "merges.txt", 70000, 14);
    std::ofstream(m / "EMPTY");  // zero bytes
    return m;
  }

  // Every get ends with the seed's files, each by its sha256, and pieces
  // came by push. Returns the pieces pushed to all of them.
  std::int64_t ExpectCopies(std::vector<std::unique_ptr<Child>>& gets,
                            const std::map<std::string, std::string>& want,
                            const std::string& name) {
    std::int64_t pushed = 0;
    for (std::size_t i = 0; i < gets.size(); ++i) {
      SCOPED_TRACE("get " + std::to_string(i));
      EXPECT_EQ(gets[i]->Wait(120s), 0) << gets[i]->Stderr();
      const Json j = gets[i]->JsonOut();
      EXPECT_EQ(j["complete"], true) << j.dump();
      EXPECT_NE(j["push"]["endpoint"], nullptr) << j.dump();
      EXPECT_EQ(j["push"]["hash_failures"], 0) << j.dump();
      EXPECT_EQ(j["push"]["ended"].get<std::string>().find("bad"), std::string::npos) << j.dump();
      pushed += j["push"]["pieces_pushed"].get<std::int64_t>();
      EXPECT_EQ(Digests(Dir("peer" + std::to_string(i)) / name), want);
    }
    return pushed;
  }
};

TEST_F(PushLayoutTest, ModelWeightsFolderPushesToFourPeers) {
  const fs::path model = MakeModelFolder();
  const auto want = Digests(model);
  ASSERT_EQ(want.size(), 9u);
  ASSERT_EQ(want.count("EMPTY"), 1u);
  auto seed = StartSeed(model, "model", {"--fanout", "splice"});
  std::vector<std::unique_ptr<Child>> gets;
  for (int i = 0; i < 4; ++i) {
    gets.push_back(Get("model", "127.0.0." + std::to_string(3 + i), "peer" + std::to_string(i)));
  }
  const std::int64_t pushed = ExpectCopies(gets, want, "model");
  EXPECT_GT(pushed, 0) << "no piece came by push";
  EXPECT_EQ(gets[0]->Stderr().find("several files"), std::string::npos);
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << seed->Stderr();
  const Json sj = seed->JsonOut();
  EXPECT_GT(sj["push"]["pieces_sent"].get<std::int64_t>(), 0) << sj.dump();
  EXPECT_GT(sj["uploaded_push_bytes"].get<std::int64_t>(), 0) << sj.dump();
}

// A hybrid torrent pads every file but the last to a piece boundary (BEP
// 47): the pad bytes are in the pieces' hashes but in no file, so neither
// side sends or stores them.
TEST_F(PushLayoutTest, HybridFolderWithPadFilesPushes) {
  const fs::path model = MakeModelFolder();
  const auto want = Digests(model);
  auto seed = StartSeed(model, "model", {"--hybrid", "--piece-size", "256KiB"});
  std::vector<std::unique_ptr<Child>> gets;
  for (int i = 0; i < 2; ++i) {
    gets.push_back(Get("model", "127.0.0." + std::to_string(3 + i), "peer" + std::to_string(i)));
  }
  EXPECT_GT(ExpectCopies(gets, want, "model"), 0) << "no piece came by push";
}

// 32 MiB pieces: each travels as 32 chunks of 1 MiB (one frame of it
// would exceed the receiver's frame limit, which used to turn push off
// without a word).
TEST_F(PushLayoutTest, ThirtyTwoMebibytePiecesPush) {
  const fs::path file = Dir("seed") / "image.raw";
  WriteRandomFile(file, (64 << 20) + 4096, 21);
  auto seed = StartSeed(file, "image", {"--piece-size", "32MiB"});
  std::vector<std::unique_ptr<Child>> gets;
  for (int i = 0; i < 2; ++i) {
    gets.push_back(Get("image", "127.0.0." + std::to_string(3 + i), "peer" + std::to_string(i)));
  }
  std::int64_t pushed = 0;
  for (std::size_t i = 0; i < gets.size(); ++i) {
    ASSERT_EQ(gets[i]->Wait(120s), 0) << gets[i]->Stderr();
    const Json j = gets[i]->JsonOut();
    EXPECT_EQ(j["piece_length"], 32 << 20) << j.dump();
    EXPECT_EQ(j["push"]["hash_failures"], 0) << j.dump();
    pushed += j["push"]["pieces_pushed"].get<std::int64_t>();
    EXPECT_TRUE(SameContent(file, Dir("peer" + std::to_string(i)) / "image.raw"));
  }
  EXPECT_GT(pushed, 0) << "no piece came by push";
}

}  // namespace
}  // namespace swarmcast::node::testing
