// The seed's wire gate (node/wire_gate.h) with two real libtorrent sessions
// on 127.0.0.1 in this process: while the gate says the push channel
// serves the peer, the seed, its only source, sends it nothing over the
// wire; once the gate lets go, the peer is reconnected and the download
// completes. No tracker: the get connects to the seed directly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>

#include "node/metainfo_builder.h"
#include "node/transfer.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Requests a stop when the test leaves its scope, failed assertion or not,
// so that no transfer outlives the test (std::async's future would wait).
struct StopOnExit {
  std::stop_source& source;
  ~StopOnExit() { source.request_stop(); }
};

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
  // Each call is the gate deciding about the peer: at its INTERESTED
  // message, at a request, and once a second per connection (tick).
  std::atomic<int> gate_checks{0};
  std::promise<std::uint16_t> seed_port;
  TransferOptions seed;
  seed.role = TransferOptions::Role::kSeed;
  seed.torrent_bytes = built->bytes;
  seed.expected_info_hash = built->info_hash;
  seed.dir = dir / "src";
  seed.data_verified = true;
  seed.net.listen_ip = "127.0.0.1";
  seed.served_by_push = [&](std::string_view ip) {
    ++gate_checks;
    return gated && ip == "127.0.0.1";
  };
  seed.hooks.on_listening = [&seed_port](std::uint16_t port) { seed_port.set_value(port); };
  std::stop_source stop_seed;
  auto seed_run = std::async(std::launch::async, [&seed, token = stop_seed.get_token()] {
    return RunTransfer(seed, token);
  });
  const StopOnExit seed_stops{stop_seed};  // before seed_run's destructor waits
  auto port = seed_port.get_future();
  ASSERT_EQ(port.wait_for(60s), std::future_status::ready) << "the seed never listened";

  TransferOptions get;
  get.role = TransferOptions::Role::kGet;
  get.torrent_bytes = built->bytes;
  get.expected_info_hash = built->info_hash;
  get.dir = dir / "out";
  get.net.listen_ip = "127.0.0.1";
  get.peers = {proto::Endpoint{"127.0.0.1", port.get()}};
  get.stall_timeout = 60s;
  std::atomic<int> verified{0};
  get.hooks.on_piece_verified = [&verified](std::uint32_t) { ++verified; };
  std::stop_source stop_get;
  auto get_run = std::async(
      std::launch::async, [&get, token = stop_get.get_token()] { return RunTransfer(get, token); });
  const StopOnExit get_stops{stop_get};

  // Not a timed wait: the peer connected and asked (its INTERESTED reached
  // the gate), and the gate held it through several of its checks, each a
  // chance for the seed to have served it. Over loopback the whole file
  // would have come long before.
  ASSERT_TRUE(testing::WaitUntil(60s, [&] { return gate_checks.load() >= 5; }))
      << "the peer never reached the seed's gate";
  EXPECT_EQ(verified.load(), 0) << "the seed served a pushed peer over the wire";
  gated = false;

  const auto report = get_run.get();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->complete);
  EXPECT_EQ(ReadAll(dir / "out" / "blob.bin"), data);
  stop_seed.request_stop();
  ASSERT_EQ(seed_run.wait_for(20s), std::future_status::ready) << "the seed did not stop";
  const auto seed_report = seed_run.get();
  ASSERT_TRUE(seed_report) << seed_report.error().message;
  EXPECT_EQ(seed_report->end, TransferEnd::kInterrupted);
  EXPECT_GE(seed_report->uploaded_bytes, static_cast<std::int64_t>(data.size()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace swarmcast::node
