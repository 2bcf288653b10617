// The tracker's durable state in SQLite (WAL mode). Announces never touch
// the database: SwarmTable reports each change to this StateSink, which
// only appends it to a pending log under a mutex. A writer thread takes the
// log every batch interval (or early, once it holds kEarlyFlush changes),
// keeps the latest change per peer and per swarm, and writes them in key
// order in one transaction; a crash loses at most one interval. A registry
// write wakes the writer at once and is acknowledged after its commit.
//
// Torrent bytes are not kept in memory: ReadTorrent reads them from a
// second, read-only connection (WAL lets it read beside the writer). Only
// the bytes of a publish not yet committed are held, in unwritten_, so a
// read between the publish and its commit (or after a failed commit,
// until the retry lands) still finds them.
//
// Threads: the sink methods, PersistRegistry and ReadTorrent may be called
// from any thread (pending_mu_ guards the pending log and unwritten_;
// read_mu_ the read connection). Open, Load and Start are called once, on
// the main thread, before serving; Stop flushes and joins.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "proto/log.h"
#include "proto/mutex.h"
#include "proto/result.h"
#include "tracker/metrics.h"
#include "tracker/registry_handler.h"
#include "tracker/swarm_state.h"

namespace swarmcast::tracker {

class SqliteStore final : public StateSink, public RegistryStore {
 public:
  static constexpr int kSchemaVersion = 6;

  // Opens or creates the database and brings its schema up to date. Fails
  // (with a reason) on an unreadable file or a schema newer than this build.
  // A failed batch is logged on `log` (error) with the pending count.
  static Result<std::unique_ptr<SqliteStore>, std::string> Open(const std::string& path,
                                                                Metrics& metrics,
                                                                proto::Logger log = {});
  ~SqliteStore() override;

  struct LoadStats {
    std::size_t swarms = 0, peers = 0, expired = 0;
  };
  // Reads swarms and live peers (announced within expire_after of now) into
  // `table`; deletes expired peer rows.
  Result<LoadStats, std::string> Load(SwarmTable& table, std::int64_t now);

  void Start(std::chrono::milliseconds batch_interval);
  void Stop();  // writes what is pending, then joins the writer

  // Changes not yet committed (waiting, or in the batch being written).
  std::size_t pending() const;

  // StateSink
  void PeerUpdated(const InfoHash& swarm, const Peer& peer) override;
  void PeerRemoved(const InfoHash& swarm, const PeerId& peer) override;
  void SwarmCounters(const InfoHash& swarm, std::int64_t completed, std::int64_t created) override;
  void SwarmRemoved(const InfoHash& swarm) override;

  // RegistryStore
  void PersistRegistry(RegistryWrite write, std::function<void(bool ok)> done) override;
  Result<std::optional<std::string>, std::string> ReadTorrent(const InfoHash& ih) override;

 private:
  struct PeerChange {
    InfoHash swarm;
    Peer peer;  // for a removal only peer.id is meaningful
    bool removed;
  };
  struct SwarmChange {
    InfoHash swarm;
    bool removed = false;
    std::int64_t completed = 0, created = 0;
  };
  struct Publish {
    RegistryWrite write;
    std::function<void(bool)> done;  // null once called (a retried write)
  };
  struct Batch {
    std::vector<PeerChange> peers;  // in the order they happened
    std::vector<SwarmChange> swarms;
    std::vector<Publish> publishes;  // registry writes, in order
    bool empty() const { return peers.empty() && swarms.empty() && publishes.empty(); }
  };
  static constexpr std::size_t kEarlyFlush = 1u << 15;

  SqliteStore(sqlite3* db, Metrics& metrics, proto::Logger log);
  bool OpenReader(const std::string& path, std::string& error);
  void Committed(const std::vector<Publish>& publishes) REQUIRES(pending_mu_);
  bool Migrate(std::string& error);
  void WriterLoop(std::chrono::milliseconds interval);
  static void KeepLatestPerPeer(std::vector<PeerChange>& peers);
  bool WriteBatch(Batch& batch, std::size_t& rows, std::string& error);

  sqlite3* db_;  // used by the writer thread only, once started
  Metrics& metrics_;
  const proto::Logger log_;
  int failed_batches_ = 0;  // in a row; writer thread only

  // Readers (ReadTorrent, any HTTP thread) share one connection and its
  // prepared statement (opened SQLITE_OPEN_NOMUTEX: this lock is the only
  // one).
  Mutex read_mu_;
  sqlite3* reader_ GUARDED_BY(read_mu_) = nullptr;
  sqlite3_stmt* read_torrent_ GUARDED_BY(read_mu_) = nullptr;

  // What the StateSink/RegistryStore callers (network threads) hand the
  // writer thread.
  mutable Mutex pending_mu_;
  CondVar wake_;
  Batch pending_ GUARDED_BY(pending_mu_);
  // Bytes of stored torrents not yet committed, by info-hash (the latest).
  std::unordered_map<InfoHash, std::shared_ptr<const std::string>, ByteArrayHash> unwritten_
      GUARDED_BY(pending_mu_);
  std::size_t writing_ GUARDED_BY(pending_mu_) = 0;  // changes in the batch being written now
  bool urgent_ GUARDED_BY(pending_mu_) = false;
  bool stopping_ GUARDED_BY(pending_mu_) = false;
  std::thread writer_;
};

}  // namespace swarmcast::tracker
