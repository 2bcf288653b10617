// SqliteStore against a real SQLite file whose write lock another
// connection holds, as another process could: the failed batch is kept
// for the next try, compacted to the latest change of each peer.
#include "tracker/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tracker/metrics.h"

namespace swarmcast::tracker {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(SqliteStore, AFailingDatabaseKeepsOneChangePerPeerAndWritesTheLatestLater) {
  const fs::path dir =
      fs::temp_directory_path() / ("swarmcast-store-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "tracker.db").string();
  Metrics metrics;
  auto store = SqliteStore::Open(path, metrics);
  ASSERT_TRUE(store) << store.error();

  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);

  InfoHash swarm{};
  swarm[0] = 7;
  for (int i = 0; i < 1000; ++i) {  // 100 announces from each of 10 peers
    Peer p;
    p.id[0] = static_cast<std::uint8_t>(i % 10);
    p.uploaded = i;
    (*store)->PeerUpdated(swarm, p);
  }
  (*store)->Start(20ms);
  // The writer waits out its busy timeout (5 s), fails, and keeps the batch.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (metrics.db_errors() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_GE(metrics.db_errors(), 1u) << "the locked database did not fail a write";
  EXPECT_LE((*store)->pending(), 10u) << "the retry kept every announce, not one per peer";

  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  (*store)->Stop();  // writes what is pending
  EXPECT_EQ((*store)->pending(), 0u);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(other, "SELECT peer_id, uploaded FROM peers", -1, &q, nullptr),
            SQLITE_OK);
  int rows = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    ++rows;
    const auto* id = static_cast<const std::uint8_t*>(sqlite3_column_blob(q, 0));
    ASSERT_NE(id, nullptr);
    EXPECT_EQ(sqlite3_column_int64(q, 1), 990 + id[0]) << "not the peer's latest change";
  }
  sqlite3_finalize(q);
  EXPECT_EQ(rows, 10);
  sqlite3_close(other);
  store->reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace swarmcast::tracker
