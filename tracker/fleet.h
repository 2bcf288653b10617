// The fleet: node agents (`swarmcast agent`), the deployments an admin put
// on them (`swarmcast deploy`) and what each agent reported back. See
// tracker/README.md, "Fleet API".
//
// An agent syncs every few seconds: it sends its labels and one report per
// assignment it knows, and gets back the deployments it is assigned. A
// deployment to `all` or to `label=K=V` reaches every registered agent that
// matches, now or later; one to a count N reaches the first N agents that
// sync after it (they are recorded, so the set is stable across restarts).
//
// Every change is written through `FleetStore` before the call returns, so
// a reply the client saw survives a restart. Threads: any; one mutex
// (mu_) guards all of it and is held across the store's write, which keeps
// the database in the order memory changed (writes are small rows on a
// WAL database without fsync, sub-millisecond).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proto/fleet_names.h"
#include "proto/mutex.h"
#include "proto/result.h"
#include "tracker/types.h"

namespace swarmcast::tracker {

struct Deployment {
  std::string name;      // the registry name deployed
  InfoHash info_hash{};  // what the name pointed at when deployed
  std::int64_t size = 0;
  proto::DeployTarget target;
  std::string owner;  // the publisher identity that deployed it
  std::int64_t created = 0;
};

// What an agent last said about one deployment.
struct AgentReport {
  std::string state = "pending";  // pending, fetching, done, failed
  std::string reason;             // why it failed (or what it waits for)
  std::int64_t bytes = 0;         // verified bytes on the agent's disk
  std::int64_t updated = 0;       // unix s of the last change
};
inline bool IsValidReportState(std::string_view s) {
  return s == "pending" || s == "fetching" || s == "done" || s == "failed";
}

struct AgentRecord {
  std::string id;
  proto::Labels labels;
  std::string data_dir;
  std::int64_t poll_seconds = 5;  // how often it says it syncs
  std::int64_t first_seen = 0, last_seen = 0;
};

// Durable storage of the fleet (SqliteFleetStore); each returns false when
// the write failed (the caller answers 500 and the change stays in memory).
class FleetStore {
 public:
  virtual ~FleetStore() = default;
  // Replaces the deployment; with reset_reports its reports go too (new
  // content or target: earlier reports are about something else).
  virtual bool SaveDeployment(const Deployment& d, bool reset_reports) = 0;
  virtual bool DeleteDeployment(const std::string& name) = 0;
  virtual bool SaveAgent(const AgentRecord& a) = 0;
  virtual bool SaveReport(const std::string& deployment, const std::string& agent,
                          const AgentReport& r) = 0;
};

struct FleetLimits {
  std::size_t max_agents = 100000;
  std::size_t max_deployments = 1024;
};

struct FleetError {
  unsigned status = 400;  // HTTP status of the refusal
  std::string reason;
};

// One agent's sync: what it is and what it reports.
struct AgentSync {
  AgentRecord agent;  // id, labels, data_dir, poll_seconds
  struct Item {
    std::string name;
    InfoHash info_hash{};
    AgentReport report;
  };
  std::vector<Item> reports;
};

struct Assignment {
  std::string name;
  InfoHash info_hash{};
  std::int64_t size = 0;
};

struct DeploymentView {
  Deployment deployment;
  struct Row {
    AgentRecord agent;
    AgentReport report;
  };
  std::vector<Row> agents;  // in agent id order
};

class Fleet {
 public:
  Fleet(FleetStore* store, FleetLimits limits) : store_(store), limits_(limits) {}

  // Restoring what the store holds (start-up, before serving).
  void Restore(Deployment d) EXCLUDES(mu_);
  void Restore(AgentRecord a) EXCLUDES(mu_);
  void Restore(const std::string& deployment, const std::string& agent, AgentReport r)
      EXCLUDES(mu_);

  // Creates (true) or replaces (false) a deployment; 403 when another
  // publisher deployed the name, 503 at the cap, 500 when not stored.
  Result<bool, FleetError> Deploy(Deployment d) EXCLUDES(mu_);
  // 404 unknown, 403 another publisher's, 500 not stored.
  Result<Deployment, FleetError> Remove(const std::string& name, const std::string& owner)
      EXCLUDES(mu_);
  // Registers or refreshes the agent, records its reports (those about a
  // deployment it is not assigned, or about other content, are ignored)
  // and returns its assignments. 503 at the agent cap.
  Result<std::vector<Assignment>, FleetError> Sync(AgentSync sync, std::int64_t now) EXCLUDES(mu_);

  std::optional<DeploymentView> View(const std::string& name) const EXCLUDES(mu_);
  std::vector<DeploymentView> List() const EXCLUDES(mu_);
  std::size_t agents() const EXCLUDES(mu_);
  std::vector<AgentRecord> Agents() const EXCLUDES(mu_);  // in id order

 private:
  using ReportKey = std::pair<std::string, std::string>;  // deployment, agent
  bool Assigned(const Deployment& d, const AgentRecord& a) const REQUIRES(mu_);
  std::size_t Chosen(const std::string& deployment) const REQUIRES(mu_);
  DeploymentView ViewLocked(const Deployment& d) const REQUIRES(mu_);

  FleetStore* const store_;  // may be null (unit tests)
  const FleetLimits limits_;
  mutable Mutex mu_;
  std::map<std::string, Deployment> deployments_ GUARDED_BY(mu_);
  std::map<std::string, AgentRecord> agents_ GUARDED_BY(mu_);
  std::map<ReportKey, AgentReport> reports_ GUARDED_BY(mu_);
  // When each agent's row was last written: last_seen alone is refreshed
  // in the database at most once a minute.
  std::map<std::string, std::int64_t> saved_seen_ GUARDED_BY(mu_);
};

}  // namespace swarmcast::tracker
