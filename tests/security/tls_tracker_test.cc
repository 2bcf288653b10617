// The node against an https:// tracker (issue 14, item 5): the real
// swarmcast and swarmcast-tracker binaries on 127.0.0.x, certificates
// made in the test. A seed and a get complete over HTTPS with --ca-file
// (their only way to find each other is the HTTPS announce); every
// certificate a node must not trust (unknown CA, another host, expired)
// ends the command quickly with exit code 3 and the reason; and, inside
// the test process, libtorrent's own announces verify the tracker against
// exactly the CA the node was given.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <future>
#include <mutex>
#include <optional>
#include <stop_token>

#include "node/registry_client.h"
#include "node/tls_client.h"
#include "node/transfer.h"
#include "tests/common/test_pki.h"
#include "tests/node/blob_torrent.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using swarmcast::testing::CertSpec;
using swarmcast::testing::TestCa;
using Clock = std::chrono::steady_clock;

// A CA, and an HTTPS tracker on 127.0.0.1 whose certificate is `spec`;
// the scratch directory, Dir(), Run() and Env() (state, cache, the
// tracker's made admin token) are LocalSwarmTest's.
class TlsTrackerTest : public LocalSwarmTest {
 protected:
  // The tracker starts in each test, with the certificate it needs.
  void SetUp() override {
    dir_ =
        std::make_unique<TempDir>(::testing::UnitTest::GetInstance()->current_test_info()->name());
    token_file_ = dir_->path() / "tracker.db.token";
  }
  void StartTracker(const CertSpec& spec = CertSpec{.ip_sans = {"127.0.0.1"}}) {
    ca_.WriteCert(Path("ca.pem"));
    ca_.Issue(spec, Path("server.pem"), Path("server.key"));
    auto tls = MakeClientTlsContext(Path("ca.pem"));
    ASSERT_TRUE(tls) << tls.error();
    tls_ = *tls;
    auto t = swarmcast::node::testing::StartTracker(
        dir_->path(), {"--tls-cert", Path("server.pem"), "--tls-key", Path("server.key")}, tls_);
    ASSERT_TRUE(t.child) << ReadAll(dir_->path() / "tracker.err");
    tracker_ = std::move(t.child);
    port_ = t.port;
    url_ = Url();
  }
  std::string Path(const std::string& name) const { return (dir_->path() / name).string(); }
  std::string Url(const std::string& host = "127.0.0.1") const {
    return "https://" + host + ":" + std::to_string(port_);
  }
  RegistryClient Client() { return RegistryClient(*ParseTrackerUrl(Url()), 2s, {}, tls_); }
  static std::string Logs(Child& c) {
    return "stdout:\n" + c.Stdout() + "\nstderr:\n" + c.Stderr();
  }

  // A get that must be refused: exit 3 well before its own timeouts, with
  // `reason` on stderr.
  void ExpectGetRefused(const std::vector<std::string>& extra, const std::string& reason,
                        const std::string& host = "127.0.0.1") {
    std::vector<std::string> args = {"get",       "anything",          "--tracker", Url(host),
                                     "-o",        Dir("out").string(), "--listen",  "127.0.0.3:0",
                                     "--no-push", "--no-linger"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto start = Clock::now();
    auto get = Run("get", args);
    const auto rc = get->Wait(30s);
    ASSERT_TRUE(rc.has_value()) << "the get hung against a refused certificate";
    EXPECT_EQ(*rc, 3) << Logs(*get);
    EXPECT_NE(get->Stderr().find(reason), std::string::npos)
        << "want '" << reason << "' in " << Logs(*get);
    EXPECT_EQ(get->Stderr().find("retrying"), std::string::npos)
        << "a refused certificate is final, not retried: " << Logs(*get);
    RecordProperty(
        "refused_after_ms",
        static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()));
    EXPECT_TRUE(fs::is_empty(Dir("out")));
  }

  TestCa ca_;
  ClientTlsContext tls_;
};

TEST_F(TlsTrackerTest, SeedAndGetCompleteOverHttpsWithTheCaFile) {
  StartTracker();
  const fs::path payload = Dir("seed") / "payload.bin";
  WriteRandomFile(payload, 4 << 20, 7);
  // No push channel and no --connect: the get finds the seed only through
  // the tracker's answer to its HTTPS announce.
  auto seed = Run("seed", {"seed", payload.string(), "--tracker", Url(), "--ca-file",
                           Path("ca.pem"), "--listen", "127.0.0.2:0", "--no-push", "--json"});
  auto client = Client();
  ASSERT_TRUE(WaitUntil(60s, [&] { return seed->Running() && client.GetSwarm("payload.bin"); }))
      << Logs(*seed);
  // Lingering ends early only once the tracker has heard, from the get's
  // own HTTPS announce, that it is done.
  auto get = Run("get", {"get", "payload.bin", "--tracker", Url(), "--ca-file", Path("ca.pem"),
                         "-o", Dir("out").string(), "--listen", "127.0.0.3:0", "--no-push",
                         "--linger", "90s", "--json"});
  ASSERT_EQ(get->Wait(120s), 0) << Logs(*get);
  EXPECT_TRUE(SameContent(payload, Dir("out") / "payload.bin"));
  EXPECT_EQ(get->JsonOut()["end"], "swarm-complete") << Logs(*get);
  EXPECT_EQ(seed->Stderr().find("tracker:"), std::string::npos)
      << "announce failed: " << Logs(*seed);
  seed->Signal(SIGTERM);
  EXPECT_EQ(seed->Wait(20s), 0) << Logs(*seed);
}

TEST_F(TlsTrackerTest, WithoutTheCaFileTheTrackerIsNotTrusted) {
  StartTracker();
  ExpectGetRefused({}, "certificate refused: unable to get local issuer certificate");
}

TEST_F(TlsTrackerTest, ACaFileOfAnotherCaIsRefused) {
  StartTracker();
  TestCa other("another CA");
  other.WriteCert(Path("other-ca.pem"));
  ExpectGetRefused({"--ca-file", Path("other-ca.pem")},
                   "certificate refused: unable to get local issuer certificate");
}

TEST_F(TlsTrackerTest, ACertificateForAnotherAddressIsRefused) {
  StartTracker(CertSpec{.ip_sans = {"127.0.0.2"}});
  ExpectGetRefused({"--ca-file", Path("ca.pem")}, "certificate refused: IP address mismatch");
}

TEST_F(TlsTrackerTest, ACertificateForAnotherNameIsRefusedAndTheRightNameWorks) {
  StartTracker(CertSpec{.ip_sans = {"127.0.0.2"}, .dns_sans = {"localhost"}});
  // By name: SNI and the name check pass, the publish goes through.
  const fs::path payload = Dir("seed") / "named.bin";
  WriteRandomFile(payload, 64 << 10, 8);
  auto seed = Run("seed", {"seed", payload.string(), "--tracker", Url("localhost"), "--ca-file",
                           Path("ca.pem"), "--listen", "127.0.0.2:0", "--no-push", "--json"});
  RegistryClient by_name(*ParseTrackerUrl(Url("localhost")), 2s, {}, tls_);
  ASSERT_TRUE(WaitUntil(60s, [&] {
    return !seed->Running() || by_name.GetSwarm("named.bin").ok();
  })) << Logs(*seed);
  EXPECT_TRUE(by_name.GetSwarm("named.bin")) << "the seed did not publish: " << Logs(*seed);
  seed->Signal(SIGTERM);
  seed->Wait(20s);
  // By IP the same certificate names nothing the client asked for.
  ExpectGetRefused({"--ca-file", Path("ca.pem")}, "certificate refused: IP address mismatch");
}

TEST_F(TlsTrackerTest, ACertificateForAnotherHostNameIsRefused) {
  StartTracker(CertSpec{.ip_sans = {"127.0.0.2"}, .dns_sans = {"tracker.example"}});
  ExpectGetRefused({"--ca-file", Path("ca.pem")}, "certificate refused: hostname mismatch",
                   "localhost");
}

TEST_F(TlsTrackerTest, AnExpiredCertificateIsRefused) {
  StartTracker(CertSpec{.ip_sans = {"127.0.0.1"}, .not_before = -48h, .not_after = -24h});
  ExpectGetRefused({"--ca-file", Path("ca.pem")}, "certificate refused: certificate has expired");
}

TEST_F(TlsTrackerTest, AnHttpsUrlForAPlainHttpTrackerIsRefusedNotRetried) {
  StartTracker();
  auto plain = swarmcast::node::testing::StartTracker(Dir("plain"));
  ASSERT_TRUE(plain.child);
  port_ = plain.port;  // the URL below now names the plain tracker
  ExpectGetRefused({}, "wrong version number");
}

TEST_F(TlsTrackerTest, AMissingCaFileOrACaFileForPlainHttpIsABadCommandLine) {
  StartTracker();
  auto missing = Run("missing", {"get", "x", "--tracker", Url(), "--ca-file", Path("absent.pem"),
                                 "-o", Dir("out").string()});
  EXPECT_EQ(missing->Wait(20s), 2) << Logs(*missing);
  EXPECT_NE(missing->Stderr().find("--ca-file " + Path("absent.pem") + ": no such file"),
            std::string::npos)
      << Logs(*missing);
  auto plain = Run("plain", {"get", "x", "--tracker", "http://127.0.0.1:" + std::to_string(port_),
                             "--ca-file", Path("ca.pem"), "-o", Dir("out").string()});
  EXPECT_EQ(plain->Wait(20s), 2) << Logs(*plain);
  EXPECT_NE(plain->Stderr().find("--ca-file is for an https:// tracker"), std::string::npos)
      << Logs(*plain);
}

// libtorrent makes its own TLS context for announces. In this process
// (no --ca-file handling in between) a seed's HTTPS announce first runs
// with the default paths the test inherited (the system's CAs, which do
// not know the test CA) and must fail; then with the default paths
// pointed at the CA as --ca-file does, and must reach the tracker.
class LibtorrentHttpsAnnounceTest : public TlsTrackerTest {
 protected:
  void SetUp() override {
    TlsTrackerTest::SetUp();
    for (const char* name : kVariables) {
      const char* v = std::getenv(name);
      saved_.emplace_back(v != nullptr ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  void TearDown() override {
    for (std::size_t i = 0; i < saved_.size(); ++i) {
      if (saved_[i]) {
        ::setenv(kVariables[i], saved_[i]->c_str(), 1);
      } else {
        ::unsetenv(kVariables[i]);
      }
    }
  }
  static constexpr const char* kVariables[] = {"SSL_CERT_FILE", "SSL_CERT_DIR"};
  std::vector<std::optional<std::string>> saved_;
};

TEST_F(LibtorrentHttpsAnnounceTest, AnnouncesVerifyTheTrackerAgainstTheCaFile) {
  StartTracker();
  BlobTorrent blob = BlobTorrent::Make("https-announce", 256 << 10, 11);
  ASSERT_FALSE(blob.torrent.empty());
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { fs::remove_all(dir); }
  } cleanup{blob.dir};
  auto client = Client();
  auto peers_known = [&] {
    auto swarm = client.GetSwarm(blob.info_hash);
    return swarm ? swarm->seeders : 0;
  };
  // Runs a seed until `until` holds or 60 s pass; what it logged.
  auto seed_until = [&](const std::function<bool(const std::string& log)>& until) {
    auto log = std::make_shared<std::string>();
    auto mutex = std::make_shared<std::mutex>();
    TransferOptions o;
    o.role = TransferOptions::Role::kSeed;
    o.torrent_bytes = blob.torrent;
    o.expected_info_hash = blob.info_hash;
    o.dir = blob.dir / "src";
    o.data_verified = true;
    o.announce_url = Url() + "/announce";
    o.net.listen_ip = "127.0.0.1";
    o.log = proto::Logger("seed", proto::LogLevel::kDebug, [log, mutex](std::string_view line) {
      std::lock_guard lock(*mutex);
      log->append(line).append("\n");
    });
    std::stop_source stop;
    auto run = std::async(std::launch::async,
                          [&o, token = stop.get_token()] { return RunTransfer(o, token); });
    const bool held = WaitUntil(60s, [&] {
      std::lock_guard lock(*mutex);
      return until(*log);
    });
    stop.request_stop();
    EXPECT_EQ(run.wait_for(30s), std::future_status::ready);
    std::lock_guard lock(*mutex);
    return std::make_pair(held, *log);
  };

  auto [refused, refused_log] = seed_until([](const std::string& log) {
    return log.find("certificate verify failed") != std::string::npos;
  });
  EXPECT_TRUE(refused) << "libtorrent announced to a tracker it cannot verify:\n" << refused_log;
  EXPECT_EQ(peers_known(), 0) << "the refused announce reached the tracker";

  UseCaFileForDefaultVerifyPaths(Path("ca.pem"));
  auto [reached, reached_log] = seed_until([&](const std::string&) { return peers_known() > 0; });
  EXPECT_TRUE(reached) << "libtorrent did not trust the CA file:\n" << reached_log;
  EXPECT_EQ(reached_log.find("certificate verify failed"), std::string::npos) << reached_log;
}

}  // namespace
}  // namespace swarmcast::node::testing
