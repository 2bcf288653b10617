// How `swarmcast deploy` and `swarmcast status NAME` show a deployment:
// each agent's state as a table for people, and the stragglers (agents
// not done, with why) for both.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "node/fleet_api.h"

namespace swarmcast::node::cli {

// Agents not done: failed first, then by bytes still missing.
std::vector<AgentState> Stragglers(const DeploymentStatus& s);
// Why one straggler is not done, in a few words ("silent for 40 s",
// "fetching 12.0 MiB of 64.0 MiB", the failure reason...).
std::string StragglerWhy(const AgentState& a, std::int64_t size, std::int64_t now);
nlohmann::json StragglersJson(const DeploymentStatus& s, std::int64_t now);
// The table of every agent, on stdout.
void PrintDeployment(const DeploymentStatus& s, std::int64_t now);

}  // namespace swarmcast::node::cli
