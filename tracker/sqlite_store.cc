#include "tracker/sqlite_store.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "tracker/sqlite_stmt.h"

namespace swarmcast::tracker {
namespace {

// Schema migrations: entry i takes the database from user_version i to i+1.
// Never edit a shipped entry; append a new one.
const char* const kMigrations[] = {
    // 1: swarms (registry entry optional) and peers.
    "CREATE TABLE swarms("
    "  id INTEGER PRIMARY KEY,"
    "  info_hash BLOB NOT NULL UNIQUE,"
    "  name TEXT UNIQUE,"
    "  torrent BLOB,"
    "  size INTEGER, piece_length INTEGER, pieces INTEGER, files INTEGER,"
    "  push TEXT,"
    "  created INTEGER NOT NULL,"
    "  completed INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE peers("
    "  info_hash BLOB NOT NULL, peer_id BLOB NOT NULL,"
    "  ip BLOB NOT NULL, port INTEGER NOT NULL,"
    "  uploaded INTEGER NOT NULL, downloaded INTEGER NOT NULL, left INTEGER NOT NULL,"
    "  event INTEGER NOT NULL, stopped INTEGER NOT NULL, counted INTEGER NOT NULL,"
    "  first_seen INTEGER NOT NULL, last_announce INTEGER NOT NULL,"
    "  PRIMARY KEY(info_hash, peer_id)) WITHOUT ROWID;",
    // 2: the peer's BEP 7 key (NULL: it sent none), so the binding of a
    // peer entry to its key survives a restart.
    "ALTER TABLE peers ADD COLUMN key INTEGER;",
    // 3: the .torrent bytes move to their own table, so that reading the
    // swarms at start-up (columns stored after a blob sit at the end of its
    // overflow chain) does not pull every torrent through the page cache;
    // who owns a name (NULL: published before owners were recorded; the
    // first accepted write claims it); when an entry lost its name to a
    // newer info-hash (NULL while named). A registry entry is a row whose
    // size is set; name NULL there means retired.
    "CREATE TABLE torrents(info_hash BLOB PRIMARY KEY, bytes BLOB NOT NULL);"
    "INSERT INTO torrents(info_hash, bytes)"
    "  SELECT info_hash, torrent FROM swarms WHERE torrent IS NOT NULL AND name IS NOT NULL;"
    "UPDATE swarms SET size = NULL WHERE name IS NULL;"
    "ALTER TABLE swarms DROP COLUMN torrent;"
    "ALTER TABLE swarms ADD COLUMN owner TEXT;"
    "ALTER TABLE swarms ADD COLUMN retired INTEGER;",
    // 4: the fleet (tracker/fleet.h): deployments, node agents and what
    // each agent reported per deployment. Written by SqliteFleetStore.
    "CREATE TABLE deployments(name TEXT PRIMARY KEY, info_hash BLOB NOT NULL,"
    "  size INTEGER NOT NULL, target TEXT NOT NULL, owner TEXT NOT NULL,"
    "  created INTEGER NOT NULL);"
    "CREATE TABLE agents(id TEXT PRIMARY KEY, labels TEXT NOT NULL, data_dir TEXT NOT NULL,"
    "  poll INTEGER NOT NULL, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL);"
    "CREATE TABLE agent_reports(deployment TEXT NOT NULL, agent TEXT NOT NULL,"
    "  state TEXT NOT NULL, reason TEXT NOT NULL, bytes INTEGER NOT NULL,"
    "  updated INTEGER NOT NULL, PRIMARY KEY(deployment, agent)) WITHOUT ROWID;",
    // 5: the publisher's whole-file SHA-256 pin (NULL: none).
    "ALTER TABLE swarms ADD COLUMN sha256 TEXT;",
    // 6: whether the seed links its push subscribers into a chain (NULL or
    // 0: it pushes to each; 1: a chain, and gets take a link's role).
    "ALTER TABLE swarms ADD COLUMN push_chain INTEGER;",
};
static_assert(std::size(kMigrations) == SqliteStore::kSchemaVersion);

bool Exec(sqlite3* db, const char* sql, std::string* error = nullptr) {
  char* msg = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
  if (rc != SQLITE_OK && error) *error = msg ? msg : sqlite3_errstr(rc);
  sqlite3_free(msg);
  return rc == SQLITE_OK;
}

}  // namespace

Result<std::unique_ptr<SqliteStore>, std::string> SqliteStore::Open(const std::string& path,
                                                                    Metrics& metrics,
                                                                    proto::Logger log) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string e =
        "cannot open database " + path + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return Unexpected(e);
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db, metrics, std::move(log)));
  std::string error;
  // WAL lets readers (sqlite3 CLI, backups) run beside the writer;
  // synchronous=NORMAL keeps every committed batch across a process crash.
  // A 32 MiB page cache holds the peers table's B-tree at a few hundred
  // thousand peers, so a batch rarely reads pages back from disk.
  if (!Exec(db,
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;"
            "PRAGMA cache_size=-32768;",
            &error) ||
      !store->Migrate(error) || !store->OpenReader(path, error)) {
    return Unexpected("database " + path + ": " + error);
  }
  return store;
}

// The connection GET .../torrent reads through, so that no torrent's bytes
// need to stay in memory. A small page cache: each read is one blob, read
// once.
bool SqliteStore::OpenReader(const std::string& path, std::string& error) {
  MutexLock lock(read_mu_);  // uncontended: no other thread has the store yet
  if (sqlite3_open_v2(path.c_str(), &reader_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK ||
      !Exec(reader_, "PRAGMA busy_timeout=5000; PRAGMA cache_size=-512;", &error) ||
      sqlite3_prepare_v2(reader_, "SELECT bytes FROM torrents WHERE info_hash = ?", -1,
                         &read_torrent_, nullptr) != SQLITE_OK) {
    if (error.empty()) error = std::string("read connection: ") + sqlite3_errmsg(reader_);
    return false;
  }
  return true;
}

SqliteStore::SqliteStore(sqlite3* db, Metrics& metrics, proto::Logger log)
    : db_(db), metrics_(metrics), log_(std::move(log)) {}

SqliteStore::~SqliteStore() {
  Stop();
  {
    MutexLock lock(read_mu_);
    sqlite3_finalize(read_torrent_);
    sqlite3_close(reader_);
  }
  sqlite3_close(db_);
}

bool SqliteStore::Migrate(std::string& error) {
  SqliteStmt v(db_, "PRAGMA user_version");
  if (!v || sqlite3_step(v.get()) != SQLITE_ROW) {
    error = std::string("not a database or unreadable: ") + sqlite3_errmsg(db_);
    return false;
  }
  int version = sqlite3_column_int(v.get(), 0);
  if (version > kSchemaVersion) {
    error = "schema version " + std::to_string(version) + " is newer than this build's " +
            std::to_string(kSchemaVersion);
    return false;
  }
  for (; version < kSchemaVersion; ++version) {
    std::string sql = std::string("BEGIN IMMEDIATE;") + kMigrations[version] +
                      "PRAGMA user_version=" + std::to_string(version + 1) + ";COMMIT;";
    if (!Exec(db_, sql.c_str(), &error)) {
      Exec(db_, "ROLLBACK");
      error = "migration to schema " + std::to_string(version + 1) + " failed: " + error;
      return false;
    }
  }
  return true;
}

Result<SqliteStore::LoadStats, std::string> SqliteStore::Load(SwarmTable& table, std::int64_t now) {
  LoadStats stats;
  const std::int64_t oldest = now - table.options().expire_after;
  {
    SqliteStmt del(db_, "DELETE FROM peers WHERE last_announce < ?");
    del.Int(1, oldest);
    if (!del.Run()) return Unexpected(std::string("expiring peers: ") + sqlite3_errmsg(db_));
    stats.expired = static_cast<std::size_t>(sqlite3_changes(db_));
  }
  // The torrent bytes stay on disk (their own table).
  SqliteStmt s(db_,
               "SELECT info_hash, name, size IS NOT NULL, size, piece_length, pieces, files, push,"
               " created, completed, owner, retired, sha256, push_chain FROM swarms");
  if (!s) return Unexpected(std::string("reading swarms: ") + sqlite3_errmsg(db_));
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    InfoHash ih;
    if (!ColumnArray(s.get(), 0, ih)) continue;
    std::optional<RegistryEntry> entry;
    if (sqlite3_column_int(s.get(), 2) != 0) {
      RegistryEntry e;
      e.name = ColumnText(s.get(), 1);  // empty: retired
      e.owner = ColumnText(s.get(), 10);
      e.retired = sqlite3_column_int64(s.get(), 11);
      e.size = sqlite3_column_int64(s.get(), 3);
      e.piece_length = sqlite3_column_int64(s.get(), 4);
      e.pieces = sqlite3_column_int64(s.get(), 5);
      e.files = sqlite3_column_int64(s.get(), 6);
      e.push = ColumnText(s.get(), 7);
      e.sha256 = ColumnText(s.get(), 12);
      e.push_chain = sqlite3_column_int(s.get(), 13) != 0;
      e.created = sqlite3_column_int64(s.get(), 8);
      entry = std::move(e);
    }
    table.RestoreSwarm(ih, std::move(entry), sqlite3_column_int64(s.get(), 9),
                       sqlite3_column_int64(s.get(), 8));
    ++stats.swarms;
  }
  SqliteStmt p(db_,
               "SELECT info_hash, peer_id, ip, port, uploaded, downloaded, left, event, stopped,"
               " counted, first_seen, last_announce, key FROM peers");
  if (!p) return Unexpected(std::string("reading peers: ") + sqlite3_errmsg(db_));
  while (sqlite3_step(p.get()) == SQLITE_ROW) {
    InfoHash ih;
    Peer peer;
    if (!ColumnArray(p.get(), 0, ih) || !ColumnArray(p.get(), 1, peer.id)) continue;
    int iplen = sqlite3_column_bytes(p.get(), 2);
    if (iplen != 4 && iplen != 16) continue;
    std::memcpy(peer.addr.ip.data(), sqlite3_column_blob(p.get(), 2),
                static_cast<std::size_t>(iplen));
    peer.addr.v6 = iplen == 16;
    peer.addr.port = static_cast<std::uint16_t>(sqlite3_column_int(p.get(), 3));
    peer.uploaded = sqlite3_column_int64(p.get(), 4);
    peer.downloaded = sqlite3_column_int64(p.get(), 5);
    peer.left = sqlite3_column_int64(p.get(), 6);
    int ev = sqlite3_column_int(p.get(), 7);
    peer.last_event = ev >= 0 && ev <= 3 ? static_cast<AnnounceEvent>(ev) : AnnounceEvent::kNone;
    peer.stopped = sqlite3_column_int(p.get(), 8) != 0;
    peer.counted_complete = sqlite3_column_int(p.get(), 9) != 0;
    peer.first_seen = sqlite3_column_int64(p.get(), 10);
    peer.last_announce = sqlite3_column_int64(p.get(), 11);
    peer.persisted_at = peer.last_announce;
    peer.has_key = sqlite3_column_type(p.get(), 12) != SQLITE_NULL;
    peer.key = static_cast<std::uint64_t>(sqlite3_column_int64(p.get(), 12));
    table.RestorePeer(ih, peer);
    ++stats.peers;
  }
  return stats;
}

void SqliteStore::Start(std::chrono::milliseconds batch_interval) {
  writer_ = std::thread([this, batch_interval] {
    // The writer yields the CPU to the network threads: announce latency
    // matters more than when a batch lands (on Linux, nice is per thread).
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
    WriterLoop(batch_interval);
  });
}

void SqliteStore::Stop() {
  {
    MutexLock lock(pending_mu_);
    if (stopping_ && !writer_.joinable()) return;
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (writer_.joinable()) writer_.join();
}

std::size_t SqliteStore::pending() const {
  MutexLock lock(pending_mu_);
  return pending_.peers.size() + pending_.swarms.size() + pending_.publishes.size() + writing_;
}

Result<std::optional<std::string>, std::string> SqliteStore::ReadTorrent(const InfoHash& ih) {
  {
    MutexLock lock(pending_mu_);
    if (auto it = unwritten_.find(ih); it != unwritten_.end()) {
      if (!it->second) return std::optional<std::string>();  // removed, not yet committed
      return std::optional<std::string>(*it->second);
    }
  }
  MutexLock lock(read_mu_);
  sqlite3_bind_blob(read_torrent_, 1, ih.data(), static_cast<int>(ih.size()), SQLITE_STATIC);
  const int rc = sqlite3_step(read_torrent_);
  Result<std::optional<std::string>, std::string> out = std::optional<std::string>();
  if (rc == SQLITE_ROW && sqlite3_column_type(read_torrent_, 0) != SQLITE_NULL) {
    const void* blob = sqlite3_column_blob(read_torrent_, 0);
    out = std::optional<std::string>(
        std::string(static_cast<const char*>(blob ? blob : ""),
                    static_cast<std::size_t>(sqlite3_column_bytes(read_torrent_, 0))));
  } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    out = Unexpected(std::string(sqlite3_errmsg(reader_)));
  }
  sqlite3_reset(read_torrent_);
  sqlite3_clear_bindings(read_torrent_);
  return out;
}

void SqliteStore::PeerUpdated(const InfoHash& swarm, const Peer& peer) {
  bool wake;
  {
    MutexLock lock(pending_mu_);
    pending_.peers.push_back({swarm, peer, false});
    wake = pending_.peers.size() == kEarlyFlush;
    urgent_ |= wake;
  }
  if (wake) wake_.NotifyAll();
}

void SqliteStore::PeerRemoved(const InfoHash& swarm, const PeerId& peer) {
  PeerChange c{swarm, Peer{}, true};
  c.peer.id = peer;
  bool wake;
  {
    MutexLock lock(pending_mu_);
    pending_.peers.push_back(c);
    wake = pending_.peers.size() == kEarlyFlush;
    urgent_ |= wake;
  }
  if (wake) wake_.NotifyAll();
}

void SqliteStore::SwarmCounters(const InfoHash& swarm, std::int64_t completed,
                                std::int64_t created) {
  MutexLock lock(pending_mu_);
  pending_.swarms.push_back({swarm, false, completed, created});
}

void SqliteStore::SwarmRemoved(const InfoHash& swarm) {
  MutexLock lock(pending_mu_);
  pending_.swarms.push_back({swarm, true, 0, 0});
}

void SqliteStore::PersistRegistry(RegistryWrite write, std::function<void(bool ok)> done) {
  {
    MutexLock lock(pending_mu_);
    if (write.kind == RegistryWrite::Kind::kStore) unwritten_[write.ih] = write.torrent;
    if (write.kind == RegistryWrite::Kind::kRemove) unwritten_[write.ih] = nullptr;
    pending_.publishes.push_back({std::move(write), std::move(done)});
    urgent_ = true;
  }
  wake_.NotifyAll();
}

// Under pending_mu_. A committed write's bytes are in the database now;
// a later write of the same info-hash, still pending, keeps its own.
void SqliteStore::Committed(const std::vector<Publish>& publishes) {
  for (const Publish& p : publishes) {
    const RegistryWrite& w = p.write;
    if (w.kind == RegistryWrite::Kind::kUpdate) continue;
    auto it = unwritten_.find(w.ih);
    if (it != unwritten_.end() && it->second == w.torrent) unwritten_.erase(it);
  }
}

void SqliteStore::WriterLoop(std::chrono::milliseconds interval) {
  for (;;) {
    Batch batch;
    bool last;
    {
      MutexLock lock(pending_mu_);
      const auto until = std::chrono::steady_clock::now() + interval;
      while (!urgent_ && !stopping_) {
        const auto left = until - std::chrono::steady_clock::now();
        if (left <= decltype(left)::zero()) break;
        wake_.WaitFor(pending_mu_, left);
      }
      std::swap(batch, pending_);
      writing_ = batch.peers.size() + batch.swarms.size() + batch.publishes.size();
      urgent_ = false;
      last = stopping_;
    }
    if (!batch.empty()) {
      auto start = std::chrono::steady_clock::now();
      std::size_t rows = 0;
      std::string error;
      bool ok = WriteBatch(batch, rows, error);
      metrics_.db_write_latency().Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (ok) {
        metrics_.CountDbRows(rows);
        if (failed_batches_ > 0) {
          log_.Warning("database writes work again after " + std::to_string(failed_batches_) +
                       " failed batches");
        }
        failed_batches_ = 0;
      } else {
        // Keep the failed changes for the next try (a full disk may clear);
        // newer pending changes for the same key win.
        metrics_.CountDbError();
        KeepLatestPerPeer(batch.peers);
        MutexLock lock(pending_mu_);
        pending_.peers.insert(pending_.peers.begin(), batch.peers.begin(), batch.peers.end());
        pending_.swarms.insert(pending_.swarms.begin(), batch.swarms.begin(), batch.swarms.end());
        ++failed_batches_;
        // Under pending_mu_: the count includes what arrived meanwhile.
        log_.Error("database batch failed (" + std::to_string(failed_batches_) +
                   " in a row): " + error + "; " +
                   std::to_string(pending_.peers.size() + pending_.swarms.size() +
                                  pending_.publishes.size()) +
                   " changes pending, retried next batch");
      }
      for (Publish& p : batch.publishes) {
        if (p.done) p.done(ok);
        p.done = nullptr;
      }
      bool stored = false;
      for (const Publish& p : batch.publishes) {
        stored |= p.write.kind == RegistryWrite::Kind::kStore;
      }
      // The page cache now holds the pages of torrents just written, which
      // no announce will read: give them back (rare; publishes are few).
      if (ok && stored) sqlite3_db_release_memory(db_);
      MutexLock lock(pending_mu_);
      if (ok) {
        Committed(batch.publishes);
      } else {
        // Registry writes are retried like the rest, in their order, before
        // any that came meanwhile; their callers already heard of the failure.
        pending_.publishes.insert(pending_.publishes.begin(),
                                  std::make_move_iterator(batch.publishes.begin()),
                                  std::make_move_iterator(batch.publishes.end()));
      }
      writing_ = 0;
    }
    if (last) return;
  }
}

// After a failed write only the latest change of each peer is kept (all
// that WriteBatch would write of them), so a database that keeps failing
// holds at most one change per peer, not one per announce.
void SqliteStore::KeepLatestPerPeer(std::vector<PeerChange>& peers) {
  std::vector<std::uint32_t> order(peers.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key_less = [&](std::uint32_t a, std::uint32_t b) {
    if (int c = std::memcmp(peers[a].swarm.data(), peers[b].swarm.data(), 20)) return c < 0;
    return std::memcmp(peers[a].peer.id.data(), peers[b].peer.id.data(), 20) < 0;
  };
  std::stable_sort(order.begin(), order.end(), key_less);  // equal keys: oldest first
  std::vector<PeerChange> kept;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const bool newer_follows = i + 1 < order.size() && !key_less(order[i], order[i + 1]);
    if (!newer_follows) kept.push_back(std::move(peers[order[i]]));
  }
  peers = std::move(kept);
}

bool SqliteStore::WriteBatch(Batch& batch, std::size_t& rows, std::string& error) {
  // Only the latest change per peer is written, in key order: sorted keys
  // touch each B-tree page once instead of at random.
  std::vector<std::uint32_t> order(batch.peers.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key_less = [&](std::uint32_t a, std::uint32_t b) {
    const PeerChange& x = batch.peers[a];
    const PeerChange& y = batch.peers[b];
    if (int c = std::memcmp(x.swarm.data(), y.swarm.data(), 20)) return c < 0;
    if (int c = std::memcmp(x.peer.id.data(), y.peer.id.data(), 20)) return c < 0;
    return a < b;
  };
  std::sort(order.begin(), order.end(), key_less);
  auto same_key = [&](std::uint32_t a, std::uint32_t b) {
    return batch.peers[a].swarm == batch.peers[b].swarm &&
           batch.peers[a].peer.id == batch.peers[b].peer.id;
  };

  if (!Exec(db_, "BEGIN IMMEDIATE", &error)) return false;
  bool ok = true;
  {
    SqliteStmt del_swarm(db_, "DELETE FROM swarms WHERE info_hash = ?");
    SqliteStmt del_swarm_peers(db_, "DELETE FROM peers WHERE info_hash = ?");
    SqliteStmt up_swarm(db_,
                        "INSERT INTO swarms(info_hash, created, completed) VALUES(?, ?, ?)"
                        " ON CONFLICT(info_hash) DO UPDATE SET completed = excluded.completed");
    SqliteStmt publish(db_,
                       "INSERT INTO swarms(info_hash, name, owner, size, piece_length, pieces,"
                       " files, push, created, retired, sha256, push_chain)"
                       " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)"
                       " ON CONFLICT(info_hash) DO UPDATE SET name = excluded.name,"
                       " owner = excluded.owner, size = excluded.size,"
                       " piece_length = excluded.piece_length, pieces = excluded.pieces,"
                       " files = excluded.files, push = excluded.push, retired = NULL,"
                       " sha256 = excluded.sha256, push_chain = excluded.push_chain");
    // Before the new row takes the name: names are UNIQUE.
    SqliteStmt retire(db_, "UPDATE swarms SET name = NULL, retired = ? WHERE info_hash = ?");
    SqliteStmt update(db_,
                      "UPDATE swarms SET push = ?, owner = ?, sha256 = ?, push_chain = ?"
                      " WHERE info_hash = ?");
    SqliteStmt remove(
        db_,
        "UPDATE swarms SET name = NULL, owner = NULL, size = NULL,"
        " piece_length = NULL, pieces = NULL, files = NULL, push = NULL, retired = NULL,"
        " sha256 = NULL, push_chain = NULL"
        " WHERE info_hash = ?");
    SqliteStmt put_torrent(db_, "INSERT OR REPLACE INTO torrents(info_hash, bytes) VALUES(?, ?)");
    SqliteStmt del_torrent(db_, "DELETE FROM torrents WHERE info_hash = ?");
    SqliteStmt up_peer(db_,
                       "INSERT INTO peers(info_hash, peer_id, ip, port, uploaded, downloaded,"
                       " left, event, stopped, counted, first_seen, last_announce, key)"
                       " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                       " ON CONFLICT(info_hash, peer_id) DO UPDATE SET ip = excluded.ip,"
                       " port = excluded.port, uploaded = excluded.uploaded,"
                       " downloaded = excluded.downloaded, left = excluded.left,"
                       " event = excluded.event, stopped = excluded.stopped,"
                       " counted = excluded.counted, last_announce = excluded.last_announce,"
                       " key = excluded.key");
    SqliteStmt del_peer(db_, "DELETE FROM peers WHERE info_hash = ? AND peer_id = ?");
    ok = del_swarm && del_swarm_peers && up_swarm && publish && retire && update && remove &&
         put_torrent && del_torrent && up_peer && del_peer;
    // Swarm rows first (a peer row may belong to a swarm created in this
    // batch); in order, so a removal followed by a re-creation ends as a row.
    for (const SwarmChange& change : batch.swarms) {
      if (!ok) break;
      if (change.removed) {
        del_swarm.Blob(1, change.swarm.data(), 20);
        del_swarm_peers.Blob(1, change.swarm.data(), 20);
        del_torrent.Blob(1, change.swarm.data(), 20);
        ok = del_swarm.Run() && del_swarm_peers.Run() && del_torrent.Run();
      } else {
        up_swarm.Blob(1, change.swarm.data(), 20);
        up_swarm.Int(2, change.created);
        up_swarm.Int(3, change.completed);
        ok = up_swarm.Run();
      }
      ++rows;
    }
    for (const Publish& p : batch.publishes) {
      if (!ok) break;
      const RegistryWrite& w = p.write;
      const RegistryEntry& e = w.entry;
      switch (w.kind) {
        case RegistryWrite::Kind::kStore: {
          if (w.retire) {
            retire.Int(1, w.retired_at);
            retire.Blob(2, w.retire->data(), 20);
            ok = retire.Run();
            if (!ok) break;
          }
          static const std::string kNone;
          const std::string& torrent = w.torrent ? *w.torrent : kNone;
          publish.Blob(1, w.ih.data(), 20);
          publish.TextOrNull(2, e.name);
          publish.TextOrNull(3, e.owner);
          publish.Int(4, e.size);
          publish.Int(5, e.piece_length);
          publish.Int(6, e.pieces);
          publish.Int(7, e.files);
          publish.TextOrNull(8, e.push);
          publish.Int(9, e.created);
          publish.TextOrNull(10, e.sha256);
          publish.Int(11, e.push_chain ? 1 : 0);
          put_torrent.Blob(1, w.ih.data(), 20);
          put_torrent.Blob(2, torrent.data(), torrent.size());
          ok = publish.Run() && put_torrent.Run();
          break;
        }
        case RegistryWrite::Kind::kUpdate:
          update.TextOrNull(1, e.push);
          update.TextOrNull(2, e.owner);
          update.TextOrNull(3, e.sha256);
          update.Int(4, e.push_chain ? 1 : 0);
          update.Blob(5, w.ih.data(), 20);
          ok = update.Run();
          break;
        case RegistryWrite::Kind::kRemove:
          remove.Blob(1, w.ih.data(), 20);
          del_torrent.Blob(1, w.ih.data(), 20);
          ok = remove.Run() && del_torrent.Run();
          break;
      }
      ++rows;
    }
    for (std::size_t i = 0; i < order.size() && ok; ++i) {
      if (i + 1 < order.size() && same_key(order[i], order[i + 1])) continue;  // superseded
      const PeerChange& c = batch.peers[order[i]];
      if (c.removed) {
        del_peer.Blob(1, c.swarm.data(), 20);
        del_peer.Blob(2, c.peer.id.data(), 20);
        ok = del_peer.Run();
      } else {
        const Peer& p = c.peer;
        up_peer.Blob(1, c.swarm.data(), 20);
        up_peer.Blob(2, p.id.data(), 20);
        up_peer.Blob(3, p.addr.ip.data(), p.addr.v6 ? 16 : 4);
        up_peer.Int(4, p.addr.port);
        up_peer.Int(5, p.uploaded);
        up_peer.Int(6, p.downloaded);
        up_peer.Int(7, p.left);
        up_peer.Int(8, static_cast<int>(p.last_event));
        up_peer.Int(9, p.stopped);
        up_peer.Int(10, p.counted_complete);
        up_peer.Int(11, p.first_seen);
        up_peer.Int(12, p.last_announce);
        if (p.has_key) {
          up_peer.Int(13, static_cast<std::int64_t>(p.key));
        } else {
          sqlite3_bind_null(up_peer.get(), 13);
        }
        ok = up_peer.Run();
      }
      ++rows;
    }
  }
  if (!ok) {
    error = sqlite3_errmsg(db_);
    Exec(db_, "ROLLBACK");
    return false;
  }
  return Exec(db_, "COMMIT", &error);
}

}  // namespace swarmcast::tracker
