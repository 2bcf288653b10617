// Security tests: each one performs an attack (or provokes a failure an
// operator must hear about) against a real swarmcast-tracker process over
// real sockets on 127.0.0.1, and asserts the refusal. Nothing waits a fixed
// time: every wait is on the event itself, with a deadline.
#include <gtest/gtest.h>
#include <sqlite3.h>

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

}  // namespace
}  // namespace swarmcast::tracker::testing
