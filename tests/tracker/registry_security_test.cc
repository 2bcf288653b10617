// Attacks on the registry (issue 14, item 2 and the private-mode reads of
// item 4) against a real swarmcast-tracker over real sockets on 127.0.0.x
// and its real SQLite file: each test performs the attack and asserts the
// refusal, then that the rightful client still gets through.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "proto/hex.h"
#include "proto/metainfo.h"
#include "tests/common/wait_until.h"
#include "tests/tracker/tracker_process.h"

namespace swarmcast::tracker::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using swarmcast::testing::WaitUntil;
namespace fs = std::filesystem;

// One request on its own connection, from `source` when given.
HttpResult Request(const TrackerProcess& t, const std::string& method, const std::string& target,
                   const std::string& headers = "", const std::string& body = "",
                   const std::string& source = "") {
  return RawHttp(t.host(), t.port(),
                 method + " " + target + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + headers +
                     "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
                 std::chrono::milliseconds(5000), false, source);
}

std::string Bearer(const std::string& token) { return "Authorization: Bearer " + token + "\r\n"; }

Json Body(const HttpResult& r) { return Json::parse(r.body, nullptr, false); }

std::string InfoHashHex(const std::string& torrent) {
  auto m = proto::CheckMetainfo(torrent, {});
  return m ? proto::ToHex(m->info_hash) : "";
}

// The raw 20 bytes of a 40-hex info-hash, for an announce.
std::string Raw(const std::string& hex) {
  std::array<std::uint8_t, 20> b{};
  if (!proto::FromHex(hex, b)) return {};
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool StderrHas(const TrackerProcess& t, const std::string& needle) {
  return WaitUntil(5s, [&] { return t.StderrText().find(needle) != std::string::npos; });
}

// ---- Writes need a credential by default ----------------------------------

TEST(RegistryAuth, UnauthenticatedWritesAreRefusedByDefault) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start()) << t.error();
  const std::string torrent = Torrent("img.raw", 100000);
  EXPECT_EQ(Request(t, "PUT", "/v1/swarms/img", "", torrent).status, 401);
  EXPECT_EQ(Request(t, "PUT", "/v1/swarms/img", Bearer("guess"), torrent).status, 401);
  EXPECT_EQ(Request(t, "DELETE", "/v1/swarms/img").status, 401);
  EXPECT_EQ(Body(HttpGet(t.host(), t.port(), "/v1/swarms"))["swarms"].size(), 0u)
      << "a refused write stored nothing";
  EXPECT_TRUE(StderrHas(t, "refused registry write PUT /v1/swarms/img from 127.0.0.1: 401"));
  // The token the tracker made is the credential.
  ASSERT_EQ(t.admin_token().size(), 64u);
  EXPECT_EQ(Request(t, "PUT", "/v1/swarms/img", t.AuthHeader(), torrent).status, 201);
}

TEST(RegistryAuth, TheMadeTokenFileIs0600AndReusedAfterARestart) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start()) << t.error();
  const std::string path = t.dir() + "/tracker.db.token";
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, geteuid());
  const std::string token = t.admin_token();
  ASSERT_EQ(token.size(), 64u);
  EXPECT_TRUE(proto::IsHexDigits(token));
  EXPECT_TRUE(StderrHas(t, "registry writes need the admin token made now in " + path));
  ASSERT_EQ(Request(t, "PUT", "/v1/swarms/img", Bearer(token), Torrent("img", 5000)).status, 201);

  t.Stop();
  ASSERT_TRUE(t.Start()) << t.error();
  EXPECT_EQ(t.admin_token(), token) << "a restart made a new token";
  EXPECT_TRUE(StderrHas(t, "registry writes need the admin token kept in " + path));
  EXPECT_EQ(Request(t, "PUT", "/v1/swarms/img", Bearer(token), Torrent("img", 5000)).status, 200)
      << "the same publisher, recognised after the restart";
}

// A local attacker who can write the database's directory plants the token
// file before the first start: as a symlink (to read the token the tracker
// would write through it, or to have a file of theirs used), readable by
// others, or owned by another user. Each is refused and nothing is written
// through the link.
TEST(RegistryAuth, APlantedOrExposedTokenFileIsRefused) {
  TrackerProcess t;
  const std::string path = t.dir() + "/tracker.db.token";
  const std::string victim = t.dir() + "/victim";
  { std::ofstream(victim) << "attacker-chosen-token\n"; }

  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  EXPECT_FALSE(t.Start());
  EXPECT_NE(t.error().find("is a symlink"), std::string::npos) << t.error();
  EXPECT_EQ(ReadFile(victim), "attacker-chosen-token\n");
  ASSERT_EQ(unlink(path.c_str()), 0);

  // A dangling link: the tracker must not create the file it points at.
  const std::string elsewhere = t.dir() + "/created-through-link";
  ASSERT_EQ(symlink(elsewhere.c_str(), path.c_str()), 0);
  EXPECT_FALSE(t.Start());
  EXPECT_FALSE(fs::exists(elsewhere));
  ASSERT_EQ(unlink(path.c_str()), 0);

  { std::ofstream(path) << "readable-by-all\n"; }
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  EXPECT_FALSE(t.Start());
  EXPECT_NE(t.error().find("has mode 0644"), std::string::npos) << t.error();

  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  if (geteuid() == 0) {  // only root can give a file away
    ASSERT_EQ(chown(path.c_str(), 4242, 4242), 0);
    EXPECT_FALSE(t.Start());
    EXPECT_NE(t.error().find("is owned by uid 4242"), std::string::npos) << t.error();
    ASSERT_EQ(chown(path.c_str(), geteuid(), getegid()), 0);
  }
  // The operator's own 0600 file is used as it is.
  ASSERT_TRUE(t.Start()) << t.error();
  EXPECT_EQ(Request(t, "PUT", "/v1/swarms/img", Bearer("readable-by-all"), Torrent("i", 99)).status,
            201);
}

TEST(RegistryAuth, AnOpenRegistryIsLoggedAndAddressesOwnTheirNames) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start({"--open-registry"})) << t.error();
  EXPECT_TRUE(StderrHas(t, "swarmcast-tracker: warning: registry is open (--open-registry)"));
  EXPECT_FALSE(fs::exists(t.dir() + "/tracker.db.token")) << "no token in open mode";
  const std::string torrent = Torrent("img", 5000);
  ASSERT_EQ(Request(t, "PUT", "/v1/swarms/img?push=127.0.0.1:7000", "", torrent).status, 201);
  // Another host may not re-point or delete it.
  auto hijack = Request(t, "PUT", "/v1/swarms/img?push=127.0.0.66:7000", "", torrent, "127.0.0.66");
  EXPECT_EQ(hijack.status, 403) << hijack.body;
  EXPECT_EQ(Body(hijack)["error"], "name 'img' belongs to another publisher");
  EXPECT_EQ(Request(t, "DELETE", "/v1/swarms/img", "", "", "127.0.0.66").status, 403);
  EXPECT_EQ(Body(HttpGet(t.host(), t.port(), "/v1/swarms/img"))["push"], "127.0.0.1:7000");
  // The publishing host may.
  EXPECT_EQ(Request(t, "PUT", "/v1/swarms/img?push=127.0.0.1:7001", "", torrent).status, 200);
  EXPECT_EQ(Request(t, "DELETE", "/v1/swarms/img").status, 200);
}

// ---- Names have an owner --------------------------------------------------

class RegistryOwners : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(t_.Start(
        {"--admin-token", "alice-token", "--admin-token", "bob-token", "--batch-ms", "50"}))
        << t_.error();
  }
  HttpResult Put(const std::string& who, const std::string& target, const std::string& torrent) {
    return Request(t_, "PUT", target, Bearer(who + "-token"), torrent);
  }
  TrackerProcess t_;
  const std::string v1_ = Torrent("base.img", 300000);
  const std::string v2_ = Torrent("base.img", 400000);
};

// The attack: re-PUT a public torrent with push= to redirect (or
// clear) the push endpoint every get connects to, or squat and delete.
TEST_F(RegistryOwners, AnotherPublisherCannotRepointMoveOrDelete) {
  ASSERT_EQ(Put("alice", "/v1/swarms/base-image?push=127.0.0.1:7070", v1_).status, 201);
  auto repoint = Put("bob", "/v1/swarms/base-image?push=127.0.0.66:7070", v1_);
  EXPECT_EQ(repoint.status, 403);
  EXPECT_EQ(Body(repoint)["error"], "name 'base-image' belongs to another publisher");
  EXPECT_TRUE(StderrHas(t_,
                        "refused registry write PUT /v1/swarms/base-image from 127.0.0.1: 403 "
                        "name 'base-image' belongs to another publisher (body not read)"))
      << t_.StderrText();
  EXPECT_EQ(Put("bob", "/v1/swarms/base-image", v2_).status, 403) << "moved by another";
  EXPECT_EQ(Request(t_, "DELETE", "/v1/swarms/base-image", Bearer("bob-token")).status, 403);
  const Json now = Body(HttpGet(t_.host(), t_.port(), "/v1/swarms/base-image"));
  EXPECT_EQ(now["push"], "127.0.0.1:7070");
  EXPECT_EQ(now["info_hash"], InfoHashHex(v1_));
  // Bob's own names are his; alice's stays hers.
  EXPECT_EQ(Put("bob", "/v1/swarms/bobs-image", v2_).status, 201);
  EXPECT_EQ(Put("alice", "/v1/swarms/base-image?push=127.0.0.1:7071", v1_).status, 200);
  EXPECT_EQ(Body(HttpGet(t_.host(), t_.port(), "/v1/swarms/base-image"))["push"], "127.0.0.1:7071");
}

// An image rebuilt under its name: the name moves to the new info-hash;
// peers still on the old one keep announcing and fetching it by hash.
TEST_F(RegistryOwners, AMovedNameLeavesTheOldInfoHashAnnounceableAndFetchable) {
  const std::string old_hex = InfoHashHex(v1_), new_hex = InfoHashHex(v2_);
  ASSERT_EQ(Put("alice", "/v1/swarms/base-image", v1_).status, 201);
  auto seed = HttpGet(t_.host(), t_.port(),
                      AnnounceTarget(Raw(old_hex), Bytes20('s', 1), 7001, 0, "&event=started"));
  ASSERT_EQ(seed.status, 200);

  auto moved = Put("alice", "/v1/swarms/base-image", v2_);
  ASSERT_EQ(moved.status, 200) << moved.body;
  EXPECT_EQ(Body(moved)["info_hash"], new_hex);
  EXPECT_EQ(Body(moved)["previous"], old_hex);
  EXPECT_EQ(Body(HttpGet(t_.host(), t_.port(), "/v1/swarms/base-image"))["info_hash"], new_hex);
  EXPECT_EQ(HttpGet(t_.host(), t_.port(), "/v1/swarms/base-image/torrent").body, v2_);

  auto check_old = [&] {
    EXPECT_EQ(HttpGet(t_.host(), t_.port(), "/v1/swarms/" + old_hex + "/torrent").body, v1_);
    const Json old = Body(HttpGet(t_.host(), t_.port(), "/v1/swarms/" + old_hex));
    EXPECT_TRUE(old["name"].is_null()) << old.dump();
    EXPECT_EQ(old["size"], 300000);
    // A late peer on the old build still finds the seed.
    auto late =
        HttpGet(t_.host(), t_.port(), AnnounceTarget(Raw(old_hex), Bytes20('l', 1), 7002, 5));
    EXPECT_EQ(late.body.find("failure reason"), std::string::npos) << late.body;
    EXPECT_NE(late.body.find("5:peers6:"), std::string::npos) << "the seed was not handed out";
  };
  check_old();
  // Durable: after a restart the name is still moved and the old hash served.
  t_.Stop();
  ASSERT_TRUE(t_.Start({"--admin-token", "alice-token", "--admin-token", "bob-token"}))
      << t_.error();
  EXPECT_EQ(Body(HttpGet(t_.host(), t_.port(), "/v1/swarms/base-image"))["info_hash"], new_hex);
  check_old();
  const Json list = Body(HttpGet(t_.host(), t_.port(), "/v1/swarms"));
  ASSERT_EQ(list["swarms"].size(), 1u) << "a retired info-hash is not listed";
  EXPECT_EQ(list["swarms"][0]["info_hash"], new_hex);
}

TEST_F(RegistryOwners, TheOwnerDeletesANameAndItStaysDeleted) {
  const std::string hex = InfoHashHex(v1_);
  ASSERT_EQ(Put("alice", "/v1/swarms/base-image", v1_).status, 201);
  auto gone = Request(t_, "DELETE", "/v1/swarms/base-image", Bearer("alice-token"));
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(Body(gone)["info_hash"], hex);
  EXPECT_EQ(Body(gone)["deleted"], true);
  EXPECT_TRUE(StderrHas(t_, "unpublished base-image " + hex + " from 127.0.0.1"));
  EXPECT_EQ(HttpGet(t_.host(), t_.port(), "/v1/swarms/base-image").status, 404);
  EXPECT_EQ(Request(t_, "DELETE", "/v1/swarms/base-image", Bearer("alice-token")).status, 404);
  t_.Stop();
  ASSERT_TRUE(t_.Start({"--admin-token", "alice-token", "--admin-token", "bob-token"}))
      << t_.error();
  EXPECT_EQ(HttpGet(t_.host(), t_.port(), "/v1/swarms/base-image").status, 404);
  EXPECT_EQ(HttpGet(t_.host(), t_.port(), "/v1/swarms/" + hex + "/torrent").status, 404);
  // The name is free again, for anyone.
  EXPECT_EQ(Put("bob", "/v1/swarms/base-image", v1_).status, 201);
}

// A database from before owners (schema 2) is migrated in place; its names
// have no owner, and the first accepted write claims one.
TEST(RegistryMigration, ASchemaTwoDatabaseGetsOwnersAndKeepsItsSwarms) {
  TrackerProcess t;
  const std::string torrent = Torrent("old.img", 70000);
  const std::string hex = InfoHashHex(torrent);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((t.dir() + "/tracker.db").c_str(), &db), SQLITE_OK);
    const char* schema2 =
        "CREATE TABLE swarms(id INTEGER PRIMARY KEY, info_hash BLOB NOT NULL UNIQUE,"
        " name TEXT UNIQUE, torrent BLOB, size INTEGER, piece_length INTEGER, pieces INTEGER,"
        " files INTEGER, push TEXT, created INTEGER NOT NULL,"
        " completed INTEGER NOT NULL DEFAULT 0);"
        "CREATE TABLE peers(info_hash BLOB NOT NULL, peer_id BLOB NOT NULL, ip BLOB NOT NULL,"
        " port INTEGER NOT NULL, uploaded INTEGER NOT NULL, downloaded INTEGER NOT NULL,"
        " left INTEGER NOT NULL, event INTEGER NOT NULL, stopped INTEGER NOT NULL,"
        " counted INTEGER NOT NULL, first_seen INTEGER NOT NULL,"
        " last_announce INTEGER NOT NULL, key INTEGER,"
        " PRIMARY KEY(info_hash, peer_id)) WITHOUT ROWID;"
        "PRAGMA user_version=2;";
    ASSERT_EQ(sqlite3_exec(db, schema2, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_stmt* ins = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "INSERT INTO swarms(info_hash, name, torrent, size, piece_length,"
                                 " pieces, files, push, created) VALUES(?, 'old', ?, 70000, 16384,"
                                 " 5, 1, '127.0.0.1:7000', 1)",
                                 -1, &ins, nullptr),
              SQLITE_OK);
    const std::string raw = Raw(hex);
    sqlite3_bind_blob(ins, 1, raw.data(), 20, SQLITE_STATIC);
    sqlite3_bind_blob(ins, 2, torrent.data(), static_cast<int>(torrent.size()), SQLITE_STATIC);
    ASSERT_EQ(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_finalize(ins);
    sqlite3_close(db);
  }
  ASSERT_TRUE(t.Start({"--admin-token", "alice-token", "--admin-token", "bob-token"})) << t.error();
  EXPECT_EQ(HttpGet(t.host(), t.port(), "/v1/swarms/old/torrent").body, torrent);
  EXPECT_EQ(Request(t, "PUT", "/v1/swarms/old", Bearer("alice-token"), torrent).status, 200);
  EXPECT_EQ(Request(t, "PUT", "/v1/swarms/old", Bearer("bob-token"), torrent).status, 403)
      << "alice's write claimed the unowned name";
  t.Stop();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((t.dir() + "/tracker.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 6)
      << "migrated to the current schema (4: the fleet tables, 5: sha256 pins, 6: push chains)";
  sqlite3_finalize(q);
  // The owner is a digest of the token, never the token itself.
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT owner FROM swarms", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  const std::string owner = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
  EXPECT_EQ(owner.substr(0, 6), "token:");
  EXPECT_EQ(owner.find("alice"), std::string::npos);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

// ---- Private mode: reads need a token -------------------------------------

TEST(PrivateReads, EveryReadThatRevealsASwarmNeedsAToken) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start({"--announce-token", "s3cret", "--admin-token", "adm1n"})) << t.error();
  const std::string torrent = Torrent("img", 40000);
  ASSERT_EQ(Request(t, "PUT", "/v1/swarms/img", Bearer("adm1n"), torrent).status, 201);
  const std::string hex = InfoHashHex(torrent);
  ASSERT_EQ(
      HttpGet(t.host(), t.port(),
              "/announce/s3cret" + AnnounceTarget(Raw(hex), Bytes20('p', 1), 7000, 5).substr(9))
          .status,
      200);
  const std::string reads[] = {"/v1/swarms",
                               "/v1/swarms/img",
                               "/v1/swarms/" + hex,
                               "/v1/swarms/img/torrent",
                               "/v1/swarms/img/peers",
                               "/v1/swarms/img/completion",
                               "/metrics"};
  for (const std::string& r : reads) {
    auto none = HttpGet(t.host(), t.port(), r);
    EXPECT_EQ(none.status, 401) << r << ": " << none.body;
    EXPECT_EQ(none.body.find(hex), std::string::npos) << r << " leaked the info-hash";
    EXPECT_EQ(none.body.find("img"), std::string::npos) << r << " leaked the name";
    EXPECT_EQ(Request(t, "GET", r, Bearer("s3creT")).status, 401) << r;
    // A query token is not accepted: URLs are logged by every proxy.
    EXPECT_EQ(HttpGet(t.host(), t.port(), r + "?token=s3cret").status, 401) << r;
    EXPECT_EQ(Request(t, "GET", r, Bearer("s3cret")).status, 200) << r << " with announce token";
    EXPECT_EQ(Request(t, "GET", r, Bearer("adm1n")).status, 200) << r << " with admin token";
  }
  EXPECT_EQ(Request(t, "GET", "/v1/swarms/img/torrent", Bearer("s3cret")).body, torrent);
  EXPECT_EQ(HttpGet(t.host(), t.port(), "/healthz").status, 200) << "liveness stays open";
  // A publisher takes part in its swarms: its token announces too.
  auto by_admin =
      HttpGet(t.host(), t.port(),
              "/announce/adm1n" + AnnounceTarget(Raw(hex), Bytes20('p', 2), 7001, 0).substr(9));
  EXPECT_EQ(by_admin.body.find("failure reason"), std::string::npos) << by_admin.body;
}

// ---- Torrent bytes live in SQLite, not in RAM -----------------------------

long long RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

// Before, every stored torrent's bytes stayed in memory (20 unauthenticated
// 4 MiB PUTs took the tracker from 10 to 135 MB). Now 20 x 4 MiB published
// and each fetched back leave the RSS about where it was, and a restart
// does not load them.
TEST(TorrentMemory, StoredTorrentsDoNotGrowTheTrackersMemory) {
  TrackerProcess t;
  ASSERT_TRUE(t.Start()) << t.error();
  const std::string auth = t.AuthHeader();
  auto torrent = [](int i) {  // 4 MiB: 209715 pieces of 20 bytes
    return Torrent("img" + std::to_string(i), std::int64_t{209715 - i} * 16384);
  };
  // One publish and fetch first, so that buffers and caches that any
  // tracker allocates once are counted in the baseline.
  ASSERT_EQ(Request(t, "PUT", "/v1/swarms/warm", auth, torrent(99)).status, 201);
  ASSERT_EQ(HttpGet(t.host(), t.port(), "/v1/swarms/warm/torrent").body.size(), torrent(99).size());
  const long long before = RssKiB(t.pid());
  std::size_t stored = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string bytes = torrent(i);
    stored += bytes.size();
    ASSERT_EQ(Request(t, "PUT", "/v1/swarms/img" + std::to_string(i), auth, bytes).status, 201);
    ASSERT_EQ(HttpGet(t.host(), t.port(), "/v1/swarms/img" + std::to_string(i) + "/torrent").body,
              bytes);
  }
  const long long after = RssKiB(t.pid());
  t.Stop();
  ASSERT_TRUE(t.Start()) << t.error();
  const long long restarted = RssKiB(t.pid());
  ASSERT_EQ(HttpGet(t.host(), t.port(), "/v1/swarms/img7/torrent").body, torrent(7));
  std::printf(
      "tracker RSS: %lld KiB before, %lld KiB after storing %zu KiB in 20 torrents; "
      "%lld KiB after a restart\n",
      before, after, stored / 1024, restarted);
  EXPECT_LT(after - before, static_cast<long long>(stored / 1024) / 4)
      << "RSS grew by " << (after - before) << " KiB for " << stored / 1024 << " KiB stored";
  EXPECT_LT(restarted, static_cast<long long>(stored / 1024) / 2)
      << "the restart loaded the torrents";
}

}  // namespace
}  // namespace swarmcast::tracker::testing
