// The exact JSON of the registry API: the node's registry client and the
// scripts under tools/ read these fields (see tracker/README.md).
#include "tracker/registry_handler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <future>
#include <memory>

#include "proto/bencode.h"
#include "tests/tracker/test_torrent.h"
#include "tracker/announce_handler.h"
#include "tracker/siphash.h"
#include "tracker/sqlite_store.h"

namespace swarmcast::tracker {
namespace {

using testing::Torrent;

class FixedClock : public Clock {
 public:
  std::int64_t Now() const override { return 1000; }
};

// A real SQLite store in a scratch directory: torrent bytes are read back
// from it, and writes are answered after its commit.
class RegistryHandlerTest : public ::testing::Test {
 protected:
  RegistryHandlerTest() { store_->Start(std::chrono::milliseconds(5)); }
  ~RegistryHandlerTest() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Waits (with a deadline) for the reply, which a write sends from the
  // store's thread after the commit.
  HttpReply Call(std::string_view method, std::string_view path, std::string_view query = "",
                 std::string body = "") {
    auto reply = std::make_shared<std::promise<HttpReply>>();
    auto got = reply->get_future();
    registry_.Handle(method, path, query, std::move(body), "", "127.0.0.1",
                     [reply](HttpReply r) { reply->set_value(std::move(r)); });
    if (got.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
      ADD_FAILURE() << "no reply to " << method << " " << path;
      return HttpReply{0, "", ""};
    }
    return got.get();
  }
  std::string Hex() {
    auto m = proto::CheckMetainfo(torrent_, {});
    return m ? ToHex(m->info_hash) : "";
  }

  static std::string MakeDir() {
    char tmpl[] = "/tmp/swarmcast-registry-test-XXXXXX";
    return mkdtemp(tmpl) ? tmpl : "";
  }
  std::unique_ptr<SqliteStore> OpenStore() {
    auto s = SqliteStore::Open(dir_ + "/tracker.db", metrics_);
    if (!s) std::abort();  // the scratch directory is unusable: nothing to test
    return std::move(*s);
  }

  // In this order: the handler is built on the store.
  std::string dir_ = MakeDir();
  Metrics metrics_;
  std::unique_ptr<SqliteStore> store_ = OpenStore();
  SwarmTable table_{StateOptions{}, nullptr, 1};
  FixedClock clock_;
  RegistryHandler registry_{table_, store_.get(), clock_, RegistryConfig{}};
  AnnounceHandler announce_{table_, metrics_, clock_, AnnounceConfig{}};
  const std::string torrent_ = Torrent("image.img", 100000);
};

TEST_F(RegistryHandlerTest, PublishAndSummary) {
  HttpReply put = Call("PUT", "/v1/swarms/image-1", "push=127.0.0.1:7070", torrent_);
  EXPECT_EQ(put.status, 201u);
  EXPECT_EQ(put.content_type, "application/json");
  EXPECT_EQ(put.body,
            R"({"name":"image-1","info_hash":")" + Hex() +
                R"(","size":100000,"piece_length":16384,"pieces":7,"files":1,)"
                R"("push":"127.0.0.1:7070","push_chain":false,"sha256":null,"previous":null})");
  HttpReply again = Call("PUT", "/v1/swarms/image-1", "", torrent_);
  EXPECT_EQ(again.status, 200u);
  EXPECT_EQ(again.body, R"({"name":"image-1","info_hash":")" + Hex() +
                            R"(","size":100000,"piece_length":16384,"pieces":7,"files":1,)"
                            R"("push":null,"push_chain":false,"sha256":null,"previous":null})");
  const std::string summary = R"({"name":"image-1","info_hash":")" + Hex() +
                              R"(","size":100000,"seeders":0,"leechers":0,"completed":0,)"
                              R"("push":null,"push_chain":false,"sha256":null,"created":1000})";
  EXPECT_EQ(Call("GET", "/v1/swarms/image-1").body, summary);
  EXPECT_EQ(Call("GET", "/v1/swarms/" + Hex()).body, summary);
  EXPECT_EQ(Call("GET", "/v1/swarms").body, R"({"swarms":[)" + summary + "]}");
}

TEST_F(RegistryHandlerTest, ASha256PinIsCheckedStoredAndShown) {
  const std::string pin(64, 'a');
  HttpReply put = Call("PUT", "/v1/swarms/image-1", "sha256=" + std::string(64, 'A'), torrent_);
  ASSERT_EQ(put.status, 201u) << put.body;
  EXPECT_NE(put.body.find(R"("sha256":")" + pin + R"(")"), std::string::npos) << put.body;
  EXPECT_NE(Call("GET", "/v1/swarms/image-1").body.find(R"("sha256":")" + pin + R"(")"),
            std::string::npos);
  struct Case {
    std::string query;
    std::string body;
  } bad[] = {
      {"sha256=" + std::string(63, 'a'), torrent_},
      {"sha256=" + std::string(65, 'a'), torrent_},
      {"sha256=" + std::string(63, 'a') + "g", torrent_},
      {"sha256=", torrent_},
      {"sha256=%00" + std::string(62, 'a'), torrent_},
  };
  for (const Case& c : bad) {
    HttpReply r = Call("PUT", "/v1/swarms/image-2", c.query, Torrent("other", 5));
    EXPECT_EQ(r.status, 400u) << c.query;
    EXPECT_EQ(r.body, R"({"error":"invalid sha256: want 64 hex digits"})") << c.query;
  }
}

TEST_F(RegistryHandlerTest, APushChainIsCheckedStoredAndShown) {
  HttpReply put = Call("PUT", "/v1/swarms/image-1", "push=127.0.0.1:7070&push_chain=1", torrent_);
  ASSERT_EQ(put.status, 201u) << put.body;
  EXPECT_NE(put.body.find(R"("push_chain":true)"), std::string::npos) << put.body;
  EXPECT_NE(Call("GET", "/v1/swarms/image-1").body.find(R"("push_chain":true)"), std::string::npos);
  EXPECT_NE(Call("GET", "/v1/swarms").body.find(R"("push_chain":true)"), std::string::npos);
  // A re-publish without it turns the chain off: the record says what the
  // seed now runs.
  ASSERT_EQ(Call("PUT", "/v1/swarms/image-1", "push=127.0.0.1:7070", torrent_).status, 200u);
  EXPECT_NE(Call("GET", "/v1/swarms/image-1").body.find(R"("push_chain":false)"),
            std::string::npos);
  struct Case {
    std::string query;
    std::string error;
  } bad[] = {
      {"push=127.0.0.1:7070&push_chain=2", "invalid push_chain: want 0 or 1"},
      {"push=127.0.0.1:7070&push_chain=", "invalid push_chain: want 0 or 1"},
      {"push=127.0.0.1:7070&push_chain=true", "invalid push_chain: want 0 or 1"},
      {"push_chain=1", "push_chain=1 needs a push endpoint"},
  };
  for (const Case& c : bad) {
    HttpReply r = Call("PUT", "/v1/swarms/image-2", c.query, Torrent("other", 5));
    EXPECT_EQ(r.status, 400u) << c.query;
    EXPECT_EQ(r.body, R"({"error":")" + c.error + R"("})") << c.query;
  }
  EXPECT_EQ(Call("GET", "/v1/swarms/image-2").status, 404u) << "nothing stored";
}

TEST_F(RegistryHandlerTest, UnpublishedSwarmHasNulls) {
  announce_.Announce("info_hash=" + std::string(20, 'u') + "&peer_id=" + std::string(20, 'a') +
                         "&port=6001&left=5",
                     "", boost::asio::ip::make_address("127.0.0.1"));
  EXPECT_EQ(
      Call("GET", "/v1/swarms/7575757575757575757575757575757575757575").body,
      R"({"name":null,"info_hash":"7575757575757575757575757575757575757575","size":null,)"
      R"("seeders":0,"leechers":1,"completed":0,"push":null,"push_chain":false,"sha256":null,"created":1000})");
  // The list holds published swarms only.
  EXPECT_EQ(Call("GET", "/v1/swarms").body, R"({"swarms":[]})");
}

TEST_F(RegistryHandlerTest, PeersAndCompletion) {
  ASSERT_EQ(Call("PUT", "/v1/swarms/image-1", "", torrent_).status, 201u);
  auto m = proto::CheckMetainfo(torrent_, {});
  ASSERT_TRUE(m.ok());
  const std::string ih(reinterpret_cast<const char*>(m->info_hash.data()), 20);
  auto announce = [&](char peer, int port, std::int64_t left, const char* event) {
    std::string hash;
    for (unsigned char c : ih) {
      static const char kHex[] = "0123456789ABCDEF";
      hash += '%';
      hash += kHex[c >> 4];
      hash += kHex[c & 15];
    }
    announce_.Announce("info_hash=" + hash + "&peer_id=" + std::string(20, peer) +
                           "&port=" + std::to_string(port) + "&uploaded=1&downloaded=2&left=" +
                           std::to_string(left) + "&event=" + event,
                       "", boost::asio::ip::make_address("127.0.0.1"));
  };
  announce('n', 6001, 500, "started");
  announce('m', 6002, 0, "completed");
  // The views show a keyed hash of (swarm, peer id), never the peer id.
  auto token = [&](char peer) {
    std::string buf = ih + std::string(20, peer);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(SipHash24(SipKey{}, buf.data(), buf.size())));
    return std::string(hex);
  };
  EXPECT_EQ(Call("GET", "/v1/swarms/image-1/peers").body,
            R"({"peers":[{"peer":")" + token('n') +
                R"(","ip":"127.0.0.1",)"
                R"("port":6001,"uploaded":1,"downloaded":2,"left":500,"event":"started",)"
                R"("state":"running","first_seen":1000,"last_announce":1000},)"
                R"({"peer":")" +
                token('m') +
                R"(","ip":"127.0.0.1",)"
                R"("port":6002,"uploaded":1,"downloaded":2,"left":0,"event":"completed",)"
                R"("state":"done","first_seen":1000,"last_announce":1000}]})");
  EXPECT_EQ(Call("GET", "/v1/swarms/image-1/completion").body,
            R"({"total":2,"done":1,"running":1,"stale":0,"stragglers":[)"
            R"({"peer":")" +
                token('n') +
                R"(","ip":"127.0.0.1",)"
                R"("port":6001,"left":500,"since":1000,"last_announce":1000,)"
                // Why it is not done: one announce, so no rate yet.
                R"("why":"downloading","reason":"downloading","idle_seconds":0,"rate":-1}]})");
  HttpReply torrent = Call("GET", "/v1/swarms/image-1/torrent");
  EXPECT_EQ(torrent.content_type, "application/x-bittorrent");
  EXPECT_EQ(torrent.body, torrent_);
}

TEST_F(RegistryHandlerTest, Errors) {
  struct Case {
    const char* method;
    std::string path, query, body;
    unsigned status;
    std::string json;
  } cases[] = {
      {"GET", "/v1/swarms/nope", "", "", 404, R"({"error":"unknown swarm"})"},
      {"GET", "/v1/swarms/x/y/z", "", "", 404, R"({"error":"unknown swarm"})"},
      {"DELETE", "/v1/swarms/x", "", "", 404, R"({"error":"unknown name"})"},
      {"DELETE", "/v1/swarms/x/torrent", "", "", 405, R"({"error":"method not allowed"})"},
      {"POST", "/v1/swarms", "", "", 405, R"({"error":"method not allowed"})"},
      {"PUT", "/v1/swarms/x", "", "not bencode", 400,
       R"j({"error":"invalid torrent: not bencode (bencode: unexpected character at byte 0)"})j"},
      {"PUT", "/v1/swarms/y", "push=nonsense", Torrent("y", 5), 400,
       R"({"error":"invalid push endpoint: want IP:PORT"})"},
  };
  for (const Case& c : cases) {
    HttpReply r = Call(c.method, c.path, c.query, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path;
    EXPECT_EQ(r.body, c.json) << c.method << " " << c.path;
  }
  ASSERT_EQ(Call("PUT", "/v1/swarms/image-1", "", torrent_).status, 201u);
  EXPECT_EQ(Call("PUT", "/v1/swarms/other", "", torrent_).body,
            R"({"error":"info_hash already published as 'image-1'"})");
  EXPECT_EQ(Call("GET", "/v1/swarms/image-1/nope").body, R"({"error":"not found"})");
}

TEST_F(RegistryHandlerTest, MoveKeepsTheOldMetainfoAndDeleteDropsIt) {
  const std::string rebuilt = Torrent("image.img", 200000);
  auto m = proto::CheckMetainfo(rebuilt, {});
  ASSERT_TRUE(m.ok());
  const std::string old_hex = Hex(), new_hex = ToHex(m->info_hash);
  ASSERT_EQ(Call("PUT", "/v1/swarms/image-1", "", torrent_).status, 201u);
  HttpReply moved = Call("PUT", "/v1/swarms/image-1", "", rebuilt);
  EXPECT_EQ(moved.status, 200u);
  EXPECT_EQ(moved.body, R"({"name":"image-1","info_hash":")" + new_hex +
                            R"(","size":200000,"piece_length":16384,"pieces":13,"files":1,)"
                            R"("push":null,"push_chain":false,"sha256":null,"previous":")" +
                            old_hex + R"("})");
  EXPECT_EQ(Call("GET", "/v1/swarms/image-1/torrent").body, rebuilt);
  EXPECT_EQ(Call("GET", "/v1/swarms/" + old_hex + "/torrent").body, torrent_);
  EXPECT_EQ(
      Call("GET", "/v1/swarms/" + old_hex).body,
      R"({"name":null,"info_hash":")" + old_hex +
          R"(","size":100000,"seeders":0,"leechers":0,"completed":0,"push":null,"push_chain":false,"sha256":null,)"
          R"("created":1000})");

  HttpReply gone = Call("DELETE", "/v1/swarms/image-1");
  EXPECT_EQ(gone.status, 200u);
  EXPECT_EQ(gone.body, R"({"name":"image-1","info_hash":")" + new_hex + R"(","deleted":true})");
  EXPECT_EQ(Call("GET", "/v1/swarms/image-1").status, 404u);
  EXPECT_EQ(Call("GET", "/v1/swarms/" + new_hex + "/torrent").status, 404u);
  EXPECT_EQ(Call("GET", "/v1/swarms").body, R"({"swarms":[]})");
}

}  // namespace
}  // namespace swarmcast::tracker
