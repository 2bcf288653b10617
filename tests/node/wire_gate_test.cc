// The seed's wire gate (node/wire_gate.h) with two real libtorrent sessions
// on 127.0.0.1 in this process: while the gate says the push channel
// serves the peer, the seed, its only source, sends it nothing over the
// wire; once the gate lets go, the peer is reconnected and the download
// completes. No tracker: the get connects to the seed directly.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#include "node/metainfo_builder.h"
#include "node/transfer.h"

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(WireGate, PushedPeerGetsNothingOverTheWireUntilTheGateLetsGo) {
  const fs::path dir = fs::temp_directory_path() / ("swarmcast-gate-" + std::to_string(::getpid()));
  fs::create_directories(dir / "src");
  std::string data(1 << 20, '\0');
  std::mt19937 rng(11);
  for (char& c : data) c = static_cast<char>(rng());
  std::ofstream(dir / "src" / "blob.bin", std::ios::binary) << data;
  BuildOptions b;
  b.path = dir / "src" / "blob.bin";
  b.piece_size = 16 << 10;
  auto built = BuildMetainfo(b);
  ASSERT_TRUE(built) << built.error();

  std::atomic<bool> gated{true};
  const int port = FreeLoopbackPort();
  TransferOptions seed;
  seed.role = TransferOptions::Role::kSeed;
  seed.torrent_bytes = built->bytes;
  seed.expected_info_hash = built->info_hash;
  seed.dir = dir / "src";
  seed.data_verified = true;
  seed.net.listen_ip = "127.0.0.1";
  seed.net.listen_port = port;
  seed.served_by_push = [&gated](std::string_view ip) { return gated && ip == "127.0.0.1"; };
  auto seed_run = std::async(std::launch::async, [&seed] { return RunTransfer(seed); });

  TransferOptions get;
  get.role = TransferOptions::Role::kGet;
  get.torrent_bytes = built->bytes;
  get.expected_info_hash = built->info_hash;
  get.dir = dir / "out";
  get.net.listen_ip = "127.0.0.1";
  get.peers = {"127.0.0.1:" + std::to_string(port)};
  get.stall_timeout = 30s;
  std::atomic<int> verified{0};
  get.hooks.on_piece_verified = [&verified](std::uint32_t) { ++verified; };
  auto get_run = std::async(std::launch::async, [&get] { return RunTransfer(get); });

  // The whole file takes milliseconds over loopback: after 3 s with the
  // gate closed, not one piece may have come.
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(verified.load(), 0) << "the seed served a pushed peer over the wire";
  gated = false;

  const auto report = get_run.get();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(ReadAll(dir / "out" / "blob.bin"), data);
  // A seed runs until interrupted; its signal set takes this SIGTERM.
  ::kill(::getpid(), SIGTERM);
  ASSERT_EQ(seed_run.wait_for(20s), std::future_status::ready) << "the seed did not stop";
  const auto seed_report = seed_run.get();
  ASSERT_TRUE(seed_report) << seed_report.error().message;
  EXPECT_GE(seed_report->uploaded_bytes, static_cast<std::int64_t>(data.size()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace swarmcast::node
