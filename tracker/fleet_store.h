// The fleet's tables (schema 4, created by SqliteStore's migrations) on a
// connection of their own to the tracker's database. Writes are
// synchronous and each is its own transaction: the fleet changes at human
// and poll pace, not at announce pace, so they skip the batched writer
// and are durable (WAL, synchronous=NORMAL) when the call returns.
//
// Threads: Open and Load once at start-up; the FleetStore methods from
// Fleet, which calls them under its mutex (one caller at a time).
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>

#include "proto/log.h"
#include "proto/result.h"
#include "tracker/fleet.h"

namespace swarmcast::tracker {

class SqliteFleetStore final : public FleetStore {
 public:
  // `path` must already hold schema 4 or later (SqliteStore::Open ran).
  static Result<std::unique_ptr<SqliteFleetStore>, std::string> Open(const std::string& path,
                                                                     proto::Logger log);
  ~SqliteFleetStore() override;

  struct LoadStats {
    std::size_t deployments = 0, agents = 0, reports = 0;
  };
  // Reads every deployment, agent and report into `fleet`; rows that do not
  // parse (a hand-edited database) are skipped with a warning.
  Result<LoadStats, std::string> Load(Fleet& fleet);

  bool SaveDeployment(const Deployment& d, bool reset_reports) override;
  bool DeleteDeployment(const std::string& name) override;
  bool SaveAgent(const AgentRecord& a) override;
  bool SaveReport(const std::string& deployment, const std::string& agent,
                  const AgentReport& r) override;

 private:
  SqliteFleetStore(sqlite3* db, proto::Logger log) : db_(db), log_(std::move(log)) {}
  // Runs `sql` with text/int bindings in one transaction; logs a failure.
  bool Write(const char* what, const std::function<bool()>& body);

  sqlite3* db_;
  const proto::Logger log_;
};

}  // namespace swarmcast::tracker
