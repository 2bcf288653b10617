// The tracker's HTTPS listener (--tls-cert, --tls-key; issue 14, item 5)
// against the real binary on 127.0.0.1, with certificates made in the
// test (tests/common/test_pki.h): what it serves, whom it refuses, that a
// client which never finishes its handshake is cut off at the deadline
// without holding up anyone else, and the start-up refusals.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "proto/bencode.h"
#include "tests/common/test_pki.h"
#include "tests/common/wait_until.h"
#include "tests/tracker/https_client.h"
#include "tests/tracker/tracker_process.h"

namespace swarmcast::tracker::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using swarmcast::testing::CertSpec;
using swarmcast::testing::TestCa;
using swarmcast::testing::WaitUntil;
using Clock = std::chrono::steady_clock;

// A CA and a server certificate for 127.0.0.1 in the tracker's directory.
class TrackerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_.WriteCert(Path("ca.pem"));
    ca_.Issue(CertSpec{.ip_sans = {"127.0.0.1"}}, Path("server.pem"), Path("server.key"));
  }
  std::string Path(const std::string& name) const { return tracker_.dir() + "/" + name; }
  std::vector<std::string> TlsArgs() const {
    return {"--tls-cert", Path("server.pem"), "--tls-key", Path("server.key")};
  }
  bool StartTls(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = TlsArgs();
    args.insert(args.end(), extra.begin(), extra.end());
    return tracker_.Start(args);
  }
  TlsClientOptions Trusting() const { return {.ca_file = Path("ca.pem")}; }
  std::uint64_t HandshakeFailures() {
    auto r = HttpsGet(tracker_.host(), tracker_.port(), "/metrics", Trusting());
    const std::string key = "\nswarmcast_tracker_tls_handshake_failures_total ";
    const std::size_t at = r.http.body.find(key);
    return at == std::string::npos ? ~0ull : std::stoull(r.http.body.substr(at + key.size()));
  }

  TestCa ca_;
  TrackerProcess tracker_;
};

TEST_F(TrackerTlsTest, ServesRegistryAndAnnouncesOverHttps) {
  ASSERT_TRUE(StartTls()) << tracker_.error() << tracker_.StderrText();
  // The log line follows the --json line Start() waited for.
  EXPECT_TRUE(WaitUntil(10s, [&] {
    return tracker_.StderrText().find("(HTTPS+UDP)") != std::string::npos;
  })) << tracker_.StderrText();
  auto list = HttpsGet(tracker_.host(), tracker_.port(), "/v1/swarms", Trusting());
  ASSERT_TRUE(list.handshake) << list.error;
  EXPECT_EQ(list.http.status, 200);
  EXPECT_EQ(list.http.body, R"({"swarms":[]})");
  auto announce = HttpsGet(tracker_.host(), tracker_.port(),
                           AnnounceTarget(Bytes20('h', 1), Bytes20('p', 1), 6881, 100), Trusting());
  ASSERT_TRUE(announce.handshake) << announce.error;
  auto reply = proto::DecodeBencode(announce.http.body);
  ASSERT_TRUE(reply.ok()) << announce.http.body;
  EXPECT_NE(reply->Find("interval"), nullptr);
  EXPECT_EQ(HandshakeFailures(), 0u);
}

TEST_F(TrackerTlsTest, RequestLimitsApplyOverTlsAsOverTcp) {
  ASSERT_TRUE(StartTls({"--max-header-bytes", "1024"})) << tracker_.error();
  auto big = HttpsRaw(
      tracker_.host(), tracker_.port(),
      "GET /v1/swarms HTTP/1.1\r\nHost: t\r\nX-Pad: " + std::string(4096, 'x') + "\r\n\r\n",
      Trusting());
  ASSERT_TRUE(big.handshake) << big.error;
  EXPECT_EQ(big.http.status, 431);
}

TEST_F(TrackerTlsTest, PlainHttpClientGetsNothingAndTrackerKeepsServing) {
  ASSERT_TRUE(StartTls()) << tracker_.error();
  auto plain = HttpGet(tracker_.host(), tracker_.port(), "/v1/swarms");
  EXPECT_EQ(plain.status, 0) << "a plain HTTP request was answered: " << plain.body;
  EXPECT_EQ(plain.body.find("swarms"), std::string::npos);
  auto after = HttpsGet(tracker_.host(), tracker_.port(), "/v1/swarms", Trusting());
  ASSERT_TRUE(after.handshake) << after.error;
  EXPECT_EQ(after.http.status, 200);
  EXPECT_GE(HandshakeFailures(), 1u);
}

TEST_F(TrackerTlsTest, ClientOfferingOnlyTls11IsRefused) {
  ASSERT_TRUE(StartTls()) << tracker_.error();
  TlsClientOptions old = Trusting();
  old.max_version = TLS1_1_VERSION;
  auto r = HttpsGet(tracker_.host(), tracker_.port(), "/v1/swarms", old);
  EXPECT_FALSE(r.handshake);
  EXPECT_NE(r.error.find("protocol version"), std::string::npos) << r.error;
  EXPECT_EQ(HttpsGet(tracker_.host(), tracker_.port(), "/v1/swarms", Trusting()).http.status, 200);
}

TEST_F(TrackerTlsTest, SilentAndStalledHandshakesAreDroppedAtTheDeadlineWithoutBlockingOthers) {
  constexpr auto kDeadline = 3000ms;
  ASSERT_TRUE(StartTls({"--tls-handshake-timeout-ms", std::to_string(kDeadline.count())}))
      << tracker_.error();
  // Ten clients that connect and say nothing, and ten that stop in the
  // middle of a ClientHello (a record header promising bytes that never
  // come).
  struct Stalled {
    int fd;
    Clock::time_point connected;
  };
  std::vector<Stalled> stalled;
  for (int i = 0; i < 20; ++i) {
    const int fd = Connect(tracker_.host(), tracker_.port(), SOCK_STREAM);
    ASSERT_GE(fd, 0);
    if (i % 2 == 1) {
      static const char kPartialHello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
      ASSERT_EQ(send(fd, kPartialHello, sizeof kPartialHello, MSG_NOSIGNAL),
                static_cast<ssize_t>(sizeof kPartialHello));
    }
    stalled.push_back({fd, Clock::now()});
  }
  // While they hang, others are served: every request below completes
  // while all twenty are still connected, not after they were dropped.
  for (int i = 0; i < 3; ++i) {
    auto r = HttpsGet(tracker_.host(), tracker_.port(), "/v1/swarms", Trusting());
    ASSERT_TRUE(r.handshake) << r.error;
    EXPECT_EQ(r.http.status, 200);
  }
  for (const Stalled& s : stalled) {
    EXPECT_FALSE(swarmcast::testing::WaitReadable(s.fd, 0ms))
        << "dropped before the real clients were served: they waited behind it";
  }
  // Each stalled connection is closed by the tracker (EOF), not before its
  // deadline (a timer does not fire early) and well within a bound.
  for (const Stalled& s : stalled) {
    ASSERT_TRUE(swarmcast::testing::WaitReadable(s.fd, 20s)) << "never dropped";
    char b;
    EXPECT_LE(recv(s.fd, &b, 1, 0), 0);
    const auto held = Clock::now() - s.connected;
    EXPECT_GE(held, kDeadline - 50ms);
    close(s.fd);
  }
  EXPECT_TRUE(WaitUntil(10s, [&] { return HandshakeFailures() >= 20u; }));
}

TEST_F(TrackerTlsTest, ConnectionCapCountsConnectionsStillInTheirHandshake) {
  ASSERT_TRUE(StartTls({"--max-connections", "4", "--tls-handshake-timeout-ms", "60000"}))
      << tracker_.error();
  std::vector<int> silent;
  for (int i = 0; i < 4; ++i)
    silent.push_back(Connect(tracker_.host(), tracker_.port(), SOCK_STREAM));
  // The four are accepted (and counted) in order; a fifth is closed at once.
  EXPECT_TRUE(WaitUntil(10s, [&] {
    return !HttpsGet(tracker_.host(), tracker_.port(), "/v1/swarms", Trusting()).handshake;
  }));
  close(silent.back());
  silent.pop_back();
  EXPECT_TRUE(WaitUntil(10s, [&] {
    return HttpsGet(tracker_.host(), tracker_.port(), "/v1/swarms", Trusting()).http.status == 200;
  }));
  for (int fd : silent) close(fd);
}

TEST_F(TrackerTlsTest, ExpiredCertificateStartsWithAWarningAndClientsRefuseIt) {
  ca_.Issue(CertSpec{.ip_sans = {"127.0.0.1"}, .not_before = -48h, .not_after = -24h},
            Path("server.pem"), Path("server.key"));
  ASSERT_TRUE(StartTls()) << tracker_.error();
  // Warned before the listening line, so already written.
  EXPECT_NE(tracker_.StderrText().find("the certificate has expired"), std::string::npos)
      << tracker_.StderrText();
  auto r = HttpsGet(tracker_.host(), tracker_.port(), "/v1/swarms", Trusting());
  EXPECT_FALSE(r.handshake);
  EXPECT_NE(r.error.find("certificate has expired"), std::string::npos) << r.error;
}

// Start-up refusals: each one exits by itself, non-zero, naming the file
// and the reason, and creates no database.
class TrackerTlsStartupTest : public TrackerTlsTest {
 protected:
  // `json_line`: the refusal comes after the command line was read, so
  // --json reports it on stdout as well.
  void ExpectRefused(const std::vector<std::string>& args, const std::string& reason,
                     bool json_line = true) {
    EXPECT_FALSE(tracker_.Start(args)) << "started with a bad TLS setup";
    EXPECT_EQ(tracker_.exit_code(), 2) << tracker_.error();
    EXPECT_NE(tracker_.StderrText().find(reason), std::string::npos)
        << "want '" << reason << "' in: " << tracker_.StderrText();
    if (json_line) {
      EXPECT_NE(tracker_.error().find(R"("event":"error")"), std::string::npos) << tracker_.error();
    }
    EXPECT_FALSE(fs::exists(Path("tracker.db")));
  }
};

TEST_F(TrackerTlsStartupTest, MissingCertificateFile) {
  ExpectRefused({"--tls-cert", Path("absent.pem"), "--tls-key", Path("server.key")},
                "--tls-cert " + Path("absent.pem") + ": cannot open: No such file or directory");
}

TEST_F(TrackerTlsStartupTest, CertificatePathIsADirectory) {
  fs::create_directory(Path("certdir"));
  ExpectRefused({"--tls-cert", Path("certdir"), "--tls-key", Path("server.key")},
                "not a regular file");
}

TEST_F(TrackerTlsStartupTest, CertificateFileIsNotPem) {
  std::ofstream(Path("garbage.pem")) << "this is not a certificate\n";
  ExpectRefused({"--tls-cert", Path("garbage.pem"), "--tls-key", Path("server.key")},
                "not a PEM file");
}

TEST_F(TrackerTlsStartupTest, KeyOfAnotherCertificate) {
  ca_.Issue(CertSpec{.ip_sans = {"127.0.0.1"}}, Path("other.pem"), Path("other.key"));
  ExpectRefused({"--tls-cert", Path("server.pem"), "--tls-key", Path("other.key")},
                "does not belong to the certificate");
}

TEST_F(TrackerTlsStartupTest, KeyReadableByOthers) {
  ASSERT_EQ(chmod(Path("server.key").c_str(), 0644), 0);
  ExpectRefused(TlsArgs(), "readable by other users (mode 0644)");
}

TEST_F(TrackerTlsStartupTest, KeyReadableByTheGroupOfANonRootOwner) {
  ASSERT_EQ(chmod(Path("server.key").c_str(), 0640), 0);
  if (getuid() == 0) {
    // Owned by root, 0640 is the accepted way to share a key with a
    // service group; hand the file to another owner to see the refusal.
    ASSERT_EQ(chown(Path("server.key").c_str(), 65534, 65534), 0);
  }
  ExpectRefused(TlsArgs(), "readable by other users (mode 0640)");
}

TEST_F(TrackerTlsStartupTest, RootOwnedKeyMayBeGroupReadable) {
  if (getuid() != 0) GTEST_SKIP() << "needs a root-owned key file";
  ASSERT_EQ(chmod(Path("server.key").c_str(), 0640), 0);
  EXPECT_TRUE(StartTls()) << tracker_.error() << tracker_.StderrText();
}

TEST_F(TrackerTlsStartupTest, CertificateWithoutKey) {
  ExpectRefused({"--tls-cert", Path("server.pem")}, "--tls-cert and --tls-key go together",
                /*json_line=*/false);
}

}  // namespace
}  // namespace swarmcast::tracker::testing
