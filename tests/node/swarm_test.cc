// Integration: real swarmcast-tracker, real `swarmcast` processes (and a
// stock client, aria2c) on 127.0.0.x, payloads in temporary directories.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>

#include <fstream>

#include "node/registry_client.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

class SwarmTest : public LocalSwarmTest {
 protected:
  std::unique_ptr<Child> Seed(const fs::path& file, const std::string& name, const std::string& ip,
                              std::vector<std::string> extra = {}) {
    // These tests pin down the BitTorrent wire (rate limits, bans, resume):
    // the push channel, which bypasses them, has its own tests in
    // push_swarm_test.cc.
    std::vector<std::string> a = {
        "seed",    file.string(), "--tracker",           url_, "--name",   name, "--listen",
        ip + ":0", "--json",      "--progress-interval", "1s", "--no-push"};
    a.insert(a.end(), extra.begin(), extra.end());
    return Run("seed-" + ip, a);
  }

  std::unique_ptr<Child> Get(const std::string& key, const std::string& ip, const fs::path& out,
                             std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {
        "get",     key,      "--tracker",           url_, "-o", out.string(), "--listen",
        ip + ":0", "--json", "--progress-interval", "1s"};
    a.insert(a.end(), extra.begin(), extra.end());
    return Run("get-" + ip + "-" + std::to_string(++runs_), a);
  }

  RegistryClient Client() { return RegistryClient(*ParseTrackerUrl(url_), 2s); }

  bool WaitPublished(const std::string& name, Child& seed) {
    auto c = Client();
    return WaitUntil(60s, [&] { return seed.Running() && c.GetSwarm(name).ok(); });
  }

  static std::string Logs(Child& c) {
    return "stdout:\n" + c.Stdout() + "\nstderr:\n" + c.Stderr();
  }

  int runs_ = 0;
};

TEST_F(SwarmTest, SeedAndFourPeersEndByteIdenticalAndALateJoinerToo) {
  const fs::path payload = Dir("seed") / "payload.bin";
  WriteRandomFile(payload, 16 << 20, 1);
  auto seed = Seed(payload, "payload", "127.0.0.2");
  ASSERT_TRUE(WaitPublished("payload", *seed)) << Logs(*seed);

  std::vector<std::unique_ptr<Child>> gets;
  for (int i = 0; i < 4; ++i) {
    const std::string ip = "127.0.0." + std::to_string(3 + i);
    gets.push_back(Get("payload", ip, Dir("peer" + std::to_string(i)), {"--linger", "60s"}));
  }
  for (int i = 0; i < 4; ++i) {
    auto rc = gets[i]->Wait(90s);
    ASSERT_EQ(rc, 0) << Logs(*gets[i]);
    const Json j = gets[i]->JsonOut();
    EXPECT_EQ(j["complete"], true) << j.dump();
    // Lingering ended because the tracker saw every peer done, well before
    // the 60 s linger ran out.
    EXPECT_EQ(j["end"], "swarm-complete") << j.dump();
    EXPECT_LT(j["total_seconds"].get<double>(), 50.0);
    EXPECT_EQ(j["hash_failures"], 0);
    EXPECT_TRUE(SameContent(payload, Dir("peer" + std::to_string(i)) / "payload.bin"));
    EXPECT_FALSE(fs::exists(Dir("peer" + std::to_string(i)) / ".swarmcast"))
        << "the staging directory is removed once the file is in place";
  }

  auto status = Run("status", {"status", "--tracker", url_, "payload", "--json"});
  ASSERT_EQ(status->Wait(20s), 0) << Logs(*status);
  const Json s = status->JsonOut();
  EXPECT_EQ(s["all_done"], true) << s.dump();
  EXPECT_GE(s["completed"].get<int>(), 4) << s.dump();
  EXPECT_EQ(s["running"], 0) << s.dump();

  // A peer that arrives after everyone else finished.
  auto late = Get("payload", "127.0.0.7", Dir("late"), {"--no-linger"});
  ASSERT_EQ(late->Wait(60s), 0) << Logs(*late);
  EXPECT_EQ(late->JsonOut()["end"], "completed");
  EXPECT_TRUE(SameContent(payload, Dir("late") / "payload.bin"));

  // Local status lists the running seed.
  auto local = Run("status-local", {"status", "--json"});
  ASSERT_EQ(local->Wait(20s), 0);
  bool listed = false;
  const Json transfers = local->JsonOut()["transfers"];
  for (const Json& t : transfers) {
    listed |= t["role"] == "seed" && t["name"] == "payload.bin";
  }
  EXPECT_TRUE(listed) << local->Stdout();

  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << Logs(*seed);
  const Json sj = seed->JsonOut();
  EXPECT_EQ(sj["end"], "interrupted");
  EXPECT_GT(sj["uploaded_bytes"].get<std::int64_t>(), 0);
}

TEST_F(SwarmTest, SeedLeavesAfterOneCopyAndPeersFinishFromEachOther) {
  const fs::path payload = Dir("seed") / "payload.bin";
  WriteRandomFile(payload, 16 << 20, 2);
  auto seed = Seed(payload, "once", "127.0.0.2", {"--stop-after-copies", "1"});
  ASSERT_TRUE(WaitPublished("once", *seed)) << Logs(*seed);

  std::vector<std::unique_ptr<Child>> gets;
  for (int i = 0; i < 3; ++i) {
    // Throttled; the third peer at half the rate of the others, so that it
    // is still far from done when the seed leaves.
    gets.push_back(Get("once", "127.0.0." + std::to_string(3 + i), Dir("peer" + std::to_string(i)),
                       {"--linger", "60s", "--max-download-rate", i == 2 ? "1MiB" : "2MiB"}));
  }
  ASSERT_EQ(seed->Wait(60s), 0) << Logs(*seed);
  EXPECT_EQ(seed->JsonOut()["end"], "copies-reached") << seed->Stdout();
  auto view = Client().GetCompletion("once");
  ASSERT_TRUE(view);
  EXPECT_GE(view->running + view->stale, 1) << "every peer had finished before the seed left";
  EXPECT_TRUE(gets[2]->Running());

  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(gets[i]->Wait(90s), 0) << Logs(*gets[i]);
    EXPECT_TRUE(SameContent(payload, Dir("peer" + std::to_string(i)) / "payload.bin"));
  }
}

// How many pieces of `partial` hold exactly the original's bytes.
int VerifiedPieces(const fs::path& original, const fs::path& partial, std::int64_t piece) {
  const std::string a = ReadAll(original), b = ReadAll(partial);
  int n = 0;
  for (std::size_t off = 0; off < a.size(); off += static_cast<std::size_t>(piece)) {
    const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(piece), a.size() - off);
    if (off + len <= b.size() && a.compare(off, len, b, off, len) == 0) ++n;
  }
  return n;
}

TEST_F(SwarmTest, KilledGetResumesFromVerifiedPieces) {
  const fs::path payload = Dir("seed") / "payload.bin";
  const std::int64_t size = 32 << 20, piece = 64 << 10, pieces = size / piece;
  WriteRandomFile(payload, size, 3);
  auto seed = Seed(payload, "resume", "127.0.0.2", {"--piece-size", "64KiB"});
  ASSERT_TRUE(WaitPublished("resume", *seed)) << Logs(*seed);
  const std::string hash = Client().GetSwarm("resume")->info_hash;

  const fs::path out = Dir("peer");
  auto get = Get("resume", "127.0.0.3", out, {"--no-linger", "--max-download-rate", "4MiB"});
  const fs::path status = Dir("state") / (std::to_string(get->pid()) + ".json");
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto j = Json::parse(ReadAll(status), nullptr, false);
    return !j.is_discarded() && j.value("done_bytes", std::int64_t{0}) >= size * 2 / 5;
  })) << Logs(*get);
  get->Signal(SIGKILL);
  ASSERT_EQ(get->Wait(10s), -SIGKILL);

  const fs::path partial = out / ".swarmcast" / hash / "payload.bin";
  EXPECT_FALSE(fs::exists(out / "payload.bin")) << "nothing under the final name before the end";
  const int on_disk = VerifiedPieces(payload, partial, piece);
  ASSERT_GE(on_disk, pieces * 2 / 5);
  ASSERT_LT(on_disk, pieces);

  auto again = Get("resume", "127.0.0.3", out, {"--no-linger"});
  ASSERT_EQ(again->Wait(60s), 0) << Logs(*again);
  const Json j = again->JsonOut();
  EXPECT_TRUE(SameContent(payload, out / "payload.bin"));
  std::printf(
      "[   info   ] %lld pieces, %d verified on disk at the kill, %d at restart, "
      "%lld bytes downloaded after it\n",
      static_cast<long long>(pieces), on_disk, j["pieces_at_start"].get<int>(),
      static_cast<long long>(j["downloaded_bytes"].get<std::int64_t>()));
  // At most a few pieces that were on disk are fetched again.
  EXPECT_GE(j["pieces_at_start"].get<int>(), on_disk - 4) << j.dump() << " on disk " << on_disk;
  EXPECT_LE(j["downloaded_bytes"].get<std::int64_t>(), (pieces - on_disk + 4) * piece)
      << j.dump() << " on disk " << on_disk;
}

// A stop signal that arrives while a get is already ending on its own
// (complete, saying goodbye to a tracker that does not answer) is its
// first signal, not a second one: the get ends as it would have, exit
// code and --json report included. (The bench ends every process once
// the last get is done, often while the others are ending by themselves.)
TEST_F(SwarmTest, OneStopSignalWhileTheGetIsEndingKeepsItsReport) {
  const fs::path payload = Dir("seed") / "payload.bin";
  WriteRandomFile(payload, 2 << 20, 4);
  auto seed = Seed(payload, "ending", "127.0.0.2");
  ASSERT_TRUE(WaitPublished("ending", *seed)) << Logs(*seed);
  const fs::path out = Dir("peer");
  auto get = Get("ending", "127.0.0.3", out, {"--no-linger", "--max-download-rate", "1MiB"});
  const fs::path status = Dir("state") / (std::to_string(get->pid()) + ".json");
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto j = Json::parse(ReadAll(status), nullptr, false);
    return !j.is_discarded() && j.value("done_bytes", std::int64_t{0}) > 0;
  })) << Logs(*get);
  // A tracker that takes connections and answers nothing: the get's last
  // announce holds its ending for libtorrent's stop timeout (1 s).
  tracker_->Signal(SIGSTOP);
  const bool ending =
      WaitUntil(60s, [&] { return get->Stderr().find("complete 100.0%") != std::string::npos; });
  get->Signal(SIGTERM);
  const auto rc = get->Wait(30s);
  tracker_->Signal(SIGCONT);
  ASSERT_TRUE(ending) << Logs(*get);
  ASSERT_EQ(rc, 0) << Logs(*get);
  const Json j = get->JsonOut();
  EXPECT_EQ(j["complete"], true) << Logs(*get);
  EXPECT_EQ(j["end"], "completed") << Logs(*get);
  EXPECT_TRUE(SameContent(payload, out / "payload.bin"));
}

std::string Aria2c() {
  for (const char* p : {"/usr/bin/aria2c", "/usr/local/bin/aria2c"}) {
    if (fs::exists(p)) return p;
  }
  return {};
}

// aria2c flags that keep it on this machine: no DHT, no local peer
// discovery, no peer exchange.
std::vector<std::string> AriaArgs(const std::string& ip) {
  return {Aria2c(), "--enable-dht=false", "--enable-dht6=false", "--bt-enable-lpd=false",
          "--enable-peer-exchange=false", "--interface=" + ip,
          // A range: aria2 takes the first port in it that binds, so no
          // port is picked here and bound later (another process could
          // take it in between).
          "--listen-port=40000-49999", "--file-allocation=none", "--console-log-level=warn",
          "--summary-interval=0", "--bt-tracker-interval=5"};
}

TEST_F(SwarmTest, StockClientDownloadsFromASwarmcastSeed) {
  ASSERT_FALSE(Aria2c().empty()) << "aria2c missing: run tools/install-deps";
  const fs::path payload = Dir("seed") / "payload.bin";
  WriteRandomFile(payload, 8 << 20, 4);
  auto seed = Seed(payload, "interop", "127.0.0.2");
  ASSERT_TRUE(WaitPublished("interop", *seed)) << Logs(*seed);
  auto torrent = Client().GetTorrent("interop");
  ASSERT_TRUE(torrent);
  const fs::path tfile = dir_->path() / "interop.torrent";
  std::ofstream(tfile, std::ios::binary) << *torrent;

  auto args = AriaArgs("127.0.0.8");
  for (const char* a : {"--seed-time=0", "--bt-stop-timeout=60"}) args.push_back(a);
  args.push_back("--dir=" + Dir("aria").string());
  args.push_back(tfile.string());
  Child aria(args, dir_->path() / "aria");
  ASSERT_EQ(aria.Wait(90s), 0) << aria.Stdout() << aria.Stderr();
  EXPECT_TRUE(SameContent(payload, Dir("aria") / "payload.bin"));
}

TEST_F(SwarmTest, PeerServingCorruptDataIsBannedAndEveryCopyEndsCorrect) {
  ASSERT_FALSE(Aria2c().empty()) << "aria2c missing: run tools/install-deps";
  const fs::path payload = Dir("seed") / "payload.bin";
  WriteRandomFile(payload, 8 << 20, 5);
  // The honest seed is slow, so the peers take most pieces from the bad one.
  auto seed = Seed(payload, "corrupt", "127.0.0.2", {"--max-upload-rate", "1MiB"});
  ASSERT_TRUE(WaitPublished("corrupt", *seed)) << Logs(*seed);
  auto torrent = Client().GetTorrent("corrupt");
  ASSERT_TRUE(torrent);
  const fs::path tfile = dir_->path() / "corrupt.torrent";
  std::ofstream(tfile, std::ios::binary) << *torrent;

  // A stock client seeding a copy with every byte flipped, without checking
  // it first: every piece it serves fails the hash check.
  std::string bad = ReadAll(payload);
  for (char& c : bad) c = static_cast<char>(~c);
  std::ofstream(Dir("bad") / "payload.bin", std::ios::binary) << bad;
  auto args = AriaArgs("127.0.0.9");
  for (const char* a :
       {"--bt-seed-unverified=true", "--check-integrity=false", "--seed-ratio=0.0"}) {
    args.push_back(a);
  }
  args.push_back("--dir=" + Dir("bad").string());
  args.push_back(tfile.string());
  Child bad_seed(args, dir_->path() / "bad-aria");
  auto client = Client();
  ASSERT_TRUE(WaitUntil(30s, [&] {
    auto s = client.GetSwarm("corrupt");
    return s && s->seeders >= 2;
  })) << "the bad seed never announced";

  std::vector<std::unique_ptr<Child>> gets;
  for (int i = 0; i < 2; ++i) {
    gets.push_back(Get("corrupt", "127.0.0." + std::to_string(3 + i),
                       Dir("peer" + std::to_string(i)), {"--linger", "30s"}));
  }
  int failures = 0, bans = 0;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(gets[i]->Wait(120s), 0) << Logs(*gets[i]);
    const Json j = gets[i]->JsonOut();
    failures += j["hash_failures"].get<int>();
    bans += j["banned_peers"].get<int>();
    EXPECT_TRUE(SameContent(payload, Dir("peer" + std::to_string(i)) / "payload.bin"));
  }
  std::printf("[   info   ] hash failures %d, peers banned %d\n", failures, bans);
  EXPECT_GE(failures, 1);
  EXPECT_GE(bans, 1);
}

TEST_F(SwarmTest, GetGivesUpWhenNothingArrivesAndResumesLater) {
  const fs::path payload = Dir("seed") / "payload.bin";
  WriteRandomFile(payload, 4 << 20, 7);
  auto seed = Seed(payload, "gone", "127.0.0.2");
  ASSERT_TRUE(WaitPublished("gone", *seed)) << Logs(*seed);
  seed->Signal(SIGTERM);
  ASSERT_EQ(seed->Wait(20s), 0) << Logs(*seed);

  // The registry still has the swarm, but nobody serves it.
  const fs::path out = Dir("peer");
  auto stalled = Get("gone", "127.0.0.3", out, {"--no-linger", "--stall-timeout", "2s"});
  EXPECT_EQ(stalled->Wait(30s), 8) << Logs(*stalled);
  EXPECT_NE(stalled->Stderr().find("no progress"), std::string::npos) << stalled->Stderr();
  EXPECT_FALSE(fs::exists(out / "payload.bin"));

  // Once a seed is back, the same command completes.
  auto again_seed = Seed(payload, "gone", "127.0.0.4");
  ASSERT_TRUE(WaitUntil(30s, [&] {
    auto s = Client().GetSwarm("gone");
    return s && s->seeders >= 1;
  }));
  auto again = Get("gone", "127.0.0.3", out, {"--no-linger", "--stall-timeout", "30s"});
  ASSERT_EQ(again->Wait(60s), 0) << Logs(*again);
  EXPECT_TRUE(SameContent(payload, out / "payload.bin"));
}

TEST_F(SwarmTest, ClearErrorsAndNoFileUnderTheFinalName) {
  const fs::path payload = Dir("seed") / "payload.bin";
  WriteRandomFile(payload, 8 << 20, 6);
  auto seed = Seed(payload, "errors", "127.0.0.2");
  ASSERT_TRUE(WaitPublished("errors", *seed)) << Logs(*seed);

  auto missing = Get("no-such-swarm", "127.0.0.3", Dir("x"), {"--no-linger"});
  EXPECT_EQ(missing->Wait(20s), 3) << Logs(*missing);
  EXPECT_NE(missing->Stderr().find("404"), std::string::npos) << missing->Stderr();

  auto bad_name = Get("../etc", "127.0.0.3", Dir("x"), {"--no-linger"});
  EXPECT_EQ(bad_name->Wait(20s), 2) << Logs(*bad_name);

  // The target exists: refused, left alone.
  const fs::path taken = Dir("taken");
  std::ofstream(taken / "payload.bin") << "mine";
  auto exists = Get("errors", "127.0.0.3", taken, {"--no-linger"});
  EXPECT_EQ(exists->Wait(20s), 5) << Logs(*exists);
  EXPECT_EQ(ReadAll(taken / "payload.bin"), "mine");

  // A read-only file system.
  const fs::path ro = Dir("ro");
  if (::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): read-only and full-disk cases skipped";
  }
  auto readonly = Get("errors", "127.0.0.3", ro, {"--no-linger"});
  EXPECT_EQ(readonly->Wait(20s), 5) << Logs(*readonly);
  EXPECT_NE(readonly->Stderr().find("Read-only"), std::string::npos) << readonly->Stderr();

  // Too small from the start: refused before downloading.
  const fs::path small = Dir("small");
  ASSERT_EQ(::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=4m"), 0);
  auto tiny = Get("errors", "127.0.0.3", small, {"--no-linger"});
  EXPECT_EQ(tiny->Wait(20s), 5) << Logs(*tiny);
  EXPECT_NE(tiny->Stderr().find("not enough space"), std::string::npos) << tiny->Stderr();

  // The disk fills up during the download.
  const fs::path full = Dir("full");
  ASSERT_EQ(::mount("tmpfs", full.c_str(), "tmpfs", 0, "size=12m"), 0);
  auto filling = Get("errors", "127.0.0.3", full, {"--no-linger", "--max-download-rate", "2MiB"});
  ASSERT_TRUE(WaitUntil(20s, [&] { return fs::exists(full / ".swarmcast"); }));
  {
    std::ofstream filler(full / "filler", std::ios::binary);
    const std::string block(1 << 16, 'f');
    while (filler.write(block.data(), block.size())) {
    }
  }
  EXPECT_EQ(filling->Wait(30s), 5) << Logs(*filling);
  EXPECT_NE(filling->Stderr().find("No space left"), std::string::npos) << filling->Stderr();
  EXPECT_FALSE(fs::exists(full / "payload.bin"));
}

}  // namespace
}  // namespace swarmcast::node::testing
