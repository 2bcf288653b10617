// What swarmcast-sim prints: a JSON object (--json, schema 1) or a few
// lines of text, from the config and the result of one run.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tools/sim/sim_config.h"
#include "tools/sim/swarm.h"

namespace swarmcast::sim {

nlohmann::json ResultJson(const SimConfig& config, const SimResult& result, double wall_seconds,
                          bool per_node);
std::string ResultText(const SimConfig& config, const SimResult& result, double wall_seconds);

}  // namespace swarmcast::sim
