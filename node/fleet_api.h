// The node's side of the tracker's fleet API (tracker/README.md, "Fleet
// API"): an agent's sync, deploying, removing and reading a deployment.
// Replies are checked before use: counts bounded, names, ids and hashes
// validated; a reply that fails the check is a kBadResponse error.
//
// Synchronous, like RegistryClient under it; one thread per client.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "node/registry_client.h"
#include "proto/fleet_names.h"

namespace swarmcast::node {

inline constexpr std::size_t kMaxAssignments = 1024;

struct AgentAssignment {
  std::string name;
  std::string info_hash;  // 40 hex
  std::int64_t size = 0;
};

struct AgentReportItem {
  std::string name;
  std::string info_hash;
  std::string state;  // pending, fetching, done, failed
  std::string reason;
  std::int64_t bytes = 0;
};

struct AgentSyncRequest {
  std::string id;
  proto::Labels labels;
  std::string data_dir;
  std::int64_t poll_seconds = 5;
  std::vector<AgentReportItem> reports;
};

// PUT /v1/agents/{id}: registers or refreshes the agent, sends its
// reports, returns its assignments.
Result<std::vector<AgentAssignment>, RegistryError> SyncAgent(RegistryClient& client,
                                                              const AgentSyncRequest& request);

struct AgentState {
  std::string agent;
  std::string labels;  // "k=v,k=v"
  std::string state, reason;
  std::int64_t bytes = 0, updated = 0, last_seen = 0;
  bool silent = false;
};

struct DeploymentStatus {
  std::string name, info_hash, to;
  std::int64_t size = 0, created = 0, total = 0, done = 0, failed = 0;
  std::vector<AgentState> agents;  // GetDeployment only
  nlohmann::json raw;              // the tracker's object, for --json
};

// PUT /v1/deployments/{name} {"to": target}; `created` says 201.
Result<DeploymentStatus, RegistryError> Deploy(RegistryClient& client, const std::string& name,
                                               const proto::DeployTarget& target, bool* created);
// DELETE /v1/deployments/{name}.
Result<DeploymentStatus, RegistryError> RemoveDeployment(RegistryClient& client,
                                                         const std::string& name);
// GET /v1/deployments/{name}: each agent's state.
Result<DeploymentStatus, RegistryError> GetDeployment(RegistryClient& client,
                                                      const std::string& name);

}  // namespace swarmcast::node
