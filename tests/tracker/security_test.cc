// Security tests: each one performs an attack (or provokes a failure an
// operator must hear about) against a real swarmcast-tracker process over
// real sockets on 127.0.0.1, and asserts the refusal. Nothing waits a fixed
// time: every wait is on the event itself, with a deadline.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "proto/bencode.h"
#include "tests/common/wait_until.h"
#include "tests/tracker/tracker_process.h"

namespace swarmcast::tracker::testing {
namespace {

using namespace std::chrono_literals;
using swarmcast::testing::WaitUntil;

std::string Bytes20(char c, int n) {
  std::string s(20, c);
  s[19] = static_cast<char>('0' + n % 10);
  s[18] = static_cast<char>('0' + n / 10 % 10);
  return s;
}

std::string AnnounceTarget(const std::string& ih, const std::string& pid, int port,
                           std::int64_t left, const std::string& extra = "") {
  return "/announce?info_hash=" + UrlEncode(ih) + "&peer_id=" + UrlEncode(pid) +
         "&port=" + std::to_string(port) + "&uploaded=0&downloaded=0&left=" + std::to_string(left) +
         extra;
}

std::string Torrent(const std::string& name, std::int64_t length) {
  proto::BencodeDict info;
  info["name"] = name;
  info["piece length"] = 16384;
  info["length"] = length;
  info["pieces"] = std::string(static_cast<std::size_t>((length + 16383) / 16384) * 20, 'p');
  proto::BencodeDict t;
  t["info"] = info;
  return proto::EncodeBencode(proto::BencodeValue(t));
}

std::string Hex(const std::string& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string FailureReason(const HttpResult& r) {
  auto v = proto::DecodeBencode(r.body);
  if (!v.ok()) return "<not bencode: " + r.body + ">";
  const proto::BencodeValue* f = v->Find("failure reason");
  return f && f->if_string() ? *f->if_string() : "";
}

// The compact IPv4 peer list of an announce reply, as "IP:PORT" strings.
std::vector<std::string> CompactPeers(const HttpResult& r) {
  std::vector<std::string> out;
  auto v = proto::DecodeBencode(r.body);
  if (!v.ok() || !v->Find("peers") || !v->Find("peers")->if_string()) return out;
  const std::string& b = *v->Find("peers")->if_string();
  for (std::size_t i = 0; i + 6 <= b.size(); i += 6) {
    auto u = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(b[k])); };
    out.push_back(std::to_string(u(i)) + "." + std::to_string(u(i + 1)) + "." +
                  std::to_string(u(i + 2)) + "." + std::to_string(u(i + 3)) + ":" +
                  std::to_string(u(i + 4) << 8 | u(i + 5)));
  }
  return out;
}

// A BEP 15 client on one socket, optionally bound to a source address.
class UdpClient {
 public:
  UdpClient(const std::string& host, std::uint16_t port, const std::string& source = "")
      : fd_(Connect(host, port, SOCK_DGRAM, source)) {}
  ~UdpClient() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  void Send(const std::string& d) { send(fd_, d.data(), d.size(), 0); }
  // The next datagram, or empty after `timeout`.
  std::string Receive(std::chrono::milliseconds timeout = 3000ms) {
    if (!swarmcast::testing::WaitReadable(fd_, timeout)) return {};
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
  static std::string Be(std::uint64_t v, int bytes) {
    std::string out;
    for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>(v >> (8 * i));
    return out;
  }
  static std::string ConnectRequest(std::uint32_t txid) {
    return Be(0x41727101980ULL, 8) + Be(0, 4) + Be(txid, 4);
  }
  static std::string AnnounceRequest(std::uint64_t conn, std::uint32_t txid, const std::string& ih,
                                     const std::string& pid, std::uint64_t left,
                                     std::uint32_t event, std::uint32_t key, std::uint16_t port) {
    return Be(conn, 8) + Be(1, 4) + Be(txid, 4) + ih + pid + Be(0, 8) + Be(left, 8) + Be(0, 8) +
           Be(event, 4) + Be(0, 4) + Be(key, 4) + Be(50, 4) + Be(port, 2);
  }
  // connect, then the connection id (0 on failure).
  std::uint64_t Handshake() {
    Send(ConnectRequest(7));
    std::string r = Receive();
    if (r.size() != 16) return 0;
    std::uint64_t id = 0;
    for (int i = 8; i < 16; ++i) id = id << 8 | static_cast<unsigned char>(r[i]);
    return id;
  }

 private:
  int fd_;
};

bool StderrHas(const TrackerProcess& t, const std::string& needle) {
  return WaitUntil(5s, [&] { return t.StderrText().find(needle) != std::string::npos; });
}

// ---- 1. Logging -----------------------------------------------------------

TEST(TrackerLog, StartupPublishAndRefusedWriteAreLogged) {
  TrackerProcess t;
  t.set_capture_stderr(true);
  ASSERT_TRUE(t.Start({"--admin-token", "sekrit"})) << t.error();
  EXPECT_TRUE(StderrHas(t, "swarmcast-tracker: listening on 127.0.0.1:" + std::to_string(t.port())))
      << t.StderrText();

  const std::string torrent = Torrent("img.raw", 100000);
  EXPECT_EQ(HttpPut(t.host(), t.port(), "/v1/swarms/img", torrent).status, 401);
  EXPECT_TRUE(StderrHas(
      t, "swarmcast-tracker: refused publish of 'img' from 127.0.0.1: 401 admin token missing"))
      << t.StderrText();

  auto put =
      HttpPut(t.host(), t.port(), "/v1/swarms/img", torrent, "Authorization: Bearer sekrit\r\n");
  ASSERT_EQ(put.status, 201) << put.body;
  EXPECT_TRUE(StderrHas(t, "swarmcast-tracker: published img ")) << t.StderrText();
  EXPECT_TRUE(StderrHas(t, " (created) from 127.0.0.1")) << t.StderrText();

  // Announces are not logged at info.
  const std::size_t before = t.StderrText().size();
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(HttpGet(t.host(), t.port(), AnnounceTarget(Bytes20('h', 1), Bytes20('p', i), 7000, 5))
                  .status,
              200);
  }
  EXPECT_EQ(t.StderrText().size(), before) << t.StderrText();
}

TEST(TrackerLog, LogLevelErrorHidesInfo) {
  TrackerProcess t;
  t.set_capture_stderr(true);
  ASSERT_TRUE(t.Start({"--log-level", "error"})) << t.error();
  ASSERT_EQ(HttpPut(t.host(), t.port(), "/v1/swarms/bad..name!", "x").status, 400);
  t.Stop();
  EXPECT_EQ(t.StderrText(), "");
}

// A database another process holds locked makes a batch fail: the failure
// is logged with the pending count, and so is the recovery.
TEST(TrackerLog, FailedDatabaseBatchIsLogged) {
  TrackerProcess t;
  t.set_capture_stderr(true);
  ASSERT_TRUE(t.Start({"--batch-ms", "50"})) << t.error();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((t.dir() + "/tracker.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(
      HttpGet(t.host(), t.port(), AnnounceTarget(Bytes20('h', 2), Bytes20('p', 1), 7000, 5)).status,
      200);
  // The tracker waits busy_timeout (5 s) for the lock before it gives up.
  EXPECT_TRUE(WaitUntil(15s, [&] {
    return t.StderrText().find(
               "swarmcast-tracker: error: database batch failed (1 in a row): "
               "database is locked; ") != std::string::npos;
  })) << t.StderrText();
  EXPECT_NE(t.StderrText().find("changes pending, retried next batch"), std::string::npos);
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_TRUE(WaitUntil(15s, [&] {
    return t.StderrText().find("swarmcast-tracker: warning: database writes work again") !=
           std::string::npos;
  })) << t.StderrText();
}

// ---- 2. Peer identity -----------------------------------------------------

// The attacker knows the victim's peer_id and announces it from another
// address, without the victim's key: before, this moved the victim's entry
// to the attacker (others were sent there), `stopped` removed it and
// `left=0&event=completed` marked it done. Now each is refused and the
// entry is untouched.
TEST(TrackerPeerIdentity, AnnounceWithVictimsPeerIdFromAnotherAddressChangesNothing) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start()) << t.error();
  const std::string ih = Bytes20('h', 3), victim = Bytes20('v', 1);
  ASSERT_EQ(FailureReason(
                HttpGetFrom("127.0.0.1", t.host(), t.port(),
                            AnnounceTarget(ih, victim, 7001, 100, "&event=started&key=1a2b3c4d"))),
            "");
  for (const std::string extra : {"", "&event=stopped", "&event=completed", "&key=99999999"}) {
    auto r =
        HttpGetFrom("127.0.0.2", t.host(), t.port(),
                    AnnounceTarget(ih, victim, 6666, extra == "&event=completed" ? 0 : 100, extra));
    EXPECT_EQ(FailureReason(r), "peer_id in use with another key") << extra;
  }
  // Another peer is still sent to the victim, not to the attacker.
  auto other =
      HttpGetFrom("127.0.0.3", t.host(), t.port(), AnnounceTarget(ih, Bytes20('o', 1), 7003, 100));
  EXPECT_EQ(CompactPeers(other), std::vector<std::string>{"127.0.0.1:7001"}) << other.body;
  auto summary = HttpGet(t.host(), t.port(), "/v1/swarms/" + Hex(ih));
  EXPECT_NE(summary.body.find("\"leechers\":2"), std::string::npos) << summary.body;
  EXPECT_NE(summary.body.find("\"completed\":0"), std::string::npos) << summary.body;
  auto peers = HttpGet(t.host(), t.port(), "/v1/swarms/" + Hex(ih) + "/peers");
  EXPECT_NE(peers.body.find("\"ip\":\"127.0.0.1\",\"port\":7001"), std::string::npos) << peers.body;
  EXPECT_EQ(peers.body.find("6666"), std::string::npos) << peers.body;
}

TEST(TrackerPeerIdentity, WithoutKeyTheEntryIsBoundToItsAddress) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start()) << t.error();
  const std::string ih = Bytes20('h', 4), victim = Bytes20('v', 2);
  ASSERT_EQ(FailureReason(HttpGetFrom("127.0.0.1", t.host(), t.port(),
                                      AnnounceTarget(ih, victim, 7001, 100))),
            "");
  for (const std::string extra : {"", "&event=stopped", "&key=1234"}) {
    EXPECT_EQ(FailureReason(HttpGetFrom("127.0.0.2", t.host(), t.port(),
                                        AnnounceTarget(ih, victim, 6666, 100, extra))),
              "peer_id in use from another address")
        << extra;
  }
  // From its own address the peer may go on (and then bind a key).
  EXPECT_EQ(FailureReason(HttpGetFrom("127.0.0.1", t.host(), t.port(),
                                      AnnounceTarget(ih, victim, 7001, 50, "&key=abcd"))),
            "");
  auto peers = HttpGet(t.host(), t.port(), "/v1/swarms/" + Hex(ih) + "/peers");
  EXPECT_NE(peers.body.find("\"ip\":\"127.0.0.1\",\"port\":7001"), std::string::npos) << peers.body;
  EXPECT_NE(peers.body.find("\"left\":50"), std::string::npos) << peers.body;
}

// A peer whose address changes (DHCP, a new NAT mapping) keeps its entry
// when it sends its key; UDP's key field binds the same way as HTTP's.
TEST(TrackerPeerIdentity, SameKeyMayMoveAndUdpKeyBinds) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start()) << t.error();
  const std::string ih = Bytes20('h', 5), peer = Bytes20('v', 3);
  UdpClient udp(t.host(), t.port(), "127.0.0.1");
  ASSERT_TRUE(udp.ok());
  std::uint64_t conn = udp.Handshake();
  ASSERT_NE(conn, 0u);
  udp.Send(UdpClient::AnnounceRequest(conn, 9, ih, peer, 100, 2, 0x1a2b3c4d, 7001));
  std::string reply = udp.Receive();
  ASSERT_GE(reply.size(), 20u);
  ASSERT_EQ(reply.substr(0, 4), UdpClient::Be(1, 4));  // announce, not error

  EXPECT_EQ(FailureReason(HttpGetFrom("127.0.0.2", t.host(), t.port(),
                                      AnnounceTarget(ih, peer, 6666, 0, "&event=completed"))),
            "peer_id in use with another key");
  // Same key (libtorrent sends the UDP key as 8 hex digits over HTTP).
  EXPECT_EQ(FailureReason(HttpGetFrom("127.0.0.2", t.host(), t.port(),
                                      AnnounceTarget(ih, peer, 7002, 100, "&key=1A2B3C4D"))),
            "");
  auto peers = HttpGet(t.host(), t.port(), "/v1/swarms/" + Hex(ih) + "/peers");
  EXPECT_NE(peers.body.find("\"ip\":\"127.0.0.2\",\"port\":7002"), std::string::npos) << peers.body;
}

// The binding is in the database too: a restart does not unbind a key.
TEST(TrackerPeerIdentity, KeyBindingSurvivesRestart) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start()) << t.error();
  const std::string ih = Bytes20('h', 7), victim = Bytes20('v', 5);
  ASSERT_EQ(FailureReason(HttpGetFrom("127.0.0.1", t.host(), t.port(),
                                      AnnounceTarget(ih, victim, 7001, 100, "&key=5eed"))),
            "");
  t.Stop();  // a clean stop writes the final batch
  ASSERT_TRUE(t.Start()) << t.error();
  EXPECT_EQ(FailureReason(HttpGetFrom("127.0.0.2", t.host(), t.port(),
                                      AnnounceTarget(ih, victim, 6666, 0, "&event=completed"))),
            "peer_id in use with another key");
  EXPECT_EQ(FailureReason(HttpGetFrom("127.0.0.1", t.host(), t.port(),
                                      AnnounceTarget(ih, victim, 7001, 90, "&key=5eed"))),
            "");
}

// Peer ids were published by /peers and /completion, which is what made
// the impersonation easy. Now neither shows them.
TEST(TrackerPeerIdentity, PeerViewsDoNotPublishPeerIds) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start()) << t.error();
  const std::string ih = Bytes20('h', 6), pid = Bytes20('v', 4);
  ASSERT_EQ(FailureReason(HttpGet(t.host(), t.port(), AnnounceTarget(ih, pid, 7001, 100))), "");
  for (const char* view : {"/peers", "/completion"}) {
    auto r = HttpGet(t.host(), t.port(), "/v1/swarms/" + Hex(ih) + view);
    ASSERT_EQ(r.status, 200) << view;
    EXPECT_EQ(r.body.find("peer_id"), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find(Hex(pid)), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find(pid), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("\"peer\":\""), std::string::npos) << r.body;
  }
  // The token is stable for a peer.
  auto a = HttpGet(t.host(), t.port(), "/v1/swarms/" + Hex(ih) + "/completion");
  auto b = HttpGet(t.host(), t.port(), "/v1/swarms/" + Hex(ih) + "/completion");
  EXPECT_EQ(a.body, b.body);
}

}  // namespace
}  // namespace swarmcast::tracker::testing
