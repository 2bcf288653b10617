#include "tracker/fleet_store.h"

#include <functional>

#include "tracker/sqlite_stmt.h"

namespace swarmcast::tracker {

Result<std::unique_ptr<SqliteFleetStore>, std::string> SqliteFleetStore::Open(
    const std::string& path, proto::Logger log) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    std::string e = "fleet connection to " + path + ": " + (db ? sqlite3_errmsg(db) : "no memory");
    sqlite3_close(db);
    return Unexpected(e);
  }
  // The batched writer may hold the write lock for one batch: wait for it.
  sqlite3_exec(db, "PRAGMA busy_timeout=5000; PRAGMA synchronous=NORMAL;", nullptr, nullptr,
               nullptr);
  return std::unique_ptr<SqliteFleetStore>(new SqliteFleetStore(db, std::move(log)));
}

SqliteFleetStore::~SqliteFleetStore() { sqlite3_close(db_); }

bool SqliteFleetStore::Write(const char* what, const std::function<bool()>& body) {
  if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK && body() &&
      sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK) {
    return true;
  }
  log_.Error(std::string("fleet database write (") + what + ") failed: " + sqlite3_errmsg(db_));
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return false;
}

bool SqliteFleetStore::SaveDeployment(const Deployment& d, bool reset_reports) {
  return Write("deployment", [&] {
    if (reset_reports &&
        !SqliteStmt(db_, "DELETE FROM agent_reports WHERE deployment = ?").Text(1, d.name).Run()) {
      return false;
    }
    return SqliteStmt(
               db_,
               "INSERT OR REPLACE INTO deployments(name, info_hash, size, target, owner, created)"
               " VALUES(?,?,?,?,?,?)")
        .Text(1, d.name)
        .Blob(2, d.info_hash.data(), d.info_hash.size())
        .Int(3, d.size)
        .Text(4, d.target.ToString())
        .Text(5, d.owner)
        .Int(6, d.created)
        .Run();
  });
}

bool SqliteFleetStore::DeleteDeployment(const std::string& name) {
  return Write("removal", [&] {
    return SqliteStmt(db_, "DELETE FROM agent_reports WHERE deployment = ?").Text(1, name).Run() &&
           SqliteStmt(db_, "DELETE FROM deployments WHERE name = ?").Text(1, name).Run();
  });
}

bool SqliteFleetStore::SaveAgent(const AgentRecord& a) {
  return Write("agent", [&] {
    return SqliteStmt(
               db_,
               "INSERT OR REPLACE INTO agents(id, labels, data_dir, poll, first_seen, last_seen)"
               " VALUES(?,?,?,?,?,?)")
        .Text(1, a.id)
        .Text(2, proto::FormatLabels(a.labels))
        .Text(3, a.data_dir)
        .Int(4, a.poll_seconds)
        .Int(5, a.first_seen)
        .Int(6, a.last_seen)
        .Run();
  });
}

bool SqliteFleetStore::SaveReport(const std::string& deployment, const std::string& agent,
                                  const AgentReport& r) {
  return Write("report", [&] {
    return SqliteStmt(
               db_,
               "INSERT OR REPLACE INTO agent_reports(deployment, agent, state, reason, bytes,"
               " updated) VALUES(?,?,?,?,?,?)")
        .Text(1, deployment)
        .Text(2, agent)
        .Text(3, r.state)
        .Text(4, r.reason)
        .Int(5, r.bytes)
        .Int(6, r.updated)
        .Run();
  });
}

Result<SqliteFleetStore::LoadStats, std::string> SqliteFleetStore::Load(Fleet& fleet) {
  LoadStats stats;
  {
    SqliteStmt s(db_, "SELECT name, info_hash, size, target, owner, created FROM deployments");
    if (!s) return Unexpected(std::string("reading deployments: ") + sqlite3_errmsg(db_));
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      Deployment d;
      d.name = ColumnText(s.get(), 0);
      auto target = proto::ParseDeployTarget(ColumnText(s.get(), 3));
      if (!ColumnArray(s.get(), 1, d.info_hash) || !target) {
        log_.Warning("skipping unreadable deployment row '" + d.name + "'");
        continue;
      }
      d.size = sqlite3_column_int64(s.get(), 2);
      d.target = *target;
      d.owner = ColumnText(s.get(), 4);
      d.created = sqlite3_column_int64(s.get(), 5);
      fleet.Restore(std::move(d));
      ++stats.deployments;
    }
  }
  {
    SqliteStmt s(db_, "SELECT id, labels, data_dir, poll, first_seen, last_seen FROM agents");
    if (!s) return Unexpected(std::string("reading agents: ") + sqlite3_errmsg(db_));
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      AgentRecord a;
      a.id = ColumnText(s.get(), 0);
      auto labels = proto::ParseLabels(ColumnText(s.get(), 1));
      if (!proto::IsValidAgentId(a.id) || !labels) {
        log_.Warning("skipping unreadable agent row '" + a.id + "'");
        continue;
      }
      a.labels = std::move(*labels);
      a.data_dir = ColumnText(s.get(), 2);
      a.poll_seconds = sqlite3_column_int64(s.get(), 3);
      a.first_seen = sqlite3_column_int64(s.get(), 4);
      a.last_seen = sqlite3_column_int64(s.get(), 5);
      fleet.Restore(std::move(a));
      ++stats.agents;
    }
  }
  {
    SqliteStmt s(db_, "SELECT deployment, agent, state, reason, bytes, updated FROM agent_reports");
    if (!s) return Unexpected(std::string("reading agent reports: ") + sqlite3_errmsg(db_));
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      AgentReport r;
      r.state = ColumnText(s.get(), 2);
      if (!IsValidReportState(r.state)) continue;
      r.reason = ColumnText(s.get(), 3);
      r.bytes = sqlite3_column_int64(s.get(), 4);
      r.updated = sqlite3_column_int64(s.get(), 5);
      fleet.Restore(ColumnText(s.get(), 0), ColumnText(s.get(), 1), std::move(r));
      ++stats.reports;
    }
  }
  return stats;
}

}  // namespace swarmcast::tracker
