#include "node/cli/deployment_view.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "node/units.h"

namespace swarmcast::node::cli {

std::vector<AgentState> Stragglers(const DeploymentStatus& s) {
  std::vector<AgentState> out;
  for (const AgentState& a : s.agents) {
    if (a.state != "done") out.push_back(a);
  }
  std::stable_sort(out.begin(), out.end(), [](const AgentState& a, const AgentState& b) {
    if ((a.state == "failed") != (b.state == "failed")) return a.state == "failed";
    return a.bytes < b.bytes;
  });
  return out;
}

std::string StragglerWhy(const AgentState& a, std::int64_t size, std::int64_t now) {
  std::string why;
  if (a.state == "failed") {
    why = a.reason.empty() ? "failed" : a.reason;
  } else if (a.state == "fetching") {
    why = "fetching, " + FormatBytes(static_cast<double>(a.bytes)) + " of " +
          FormatBytes(static_cast<double>(size));
  } else {
    why = a.updated == 0 ? "has not reported yet" : "pending";
  }
  if (a.silent) why += "; agent silent for " + std::to_string(now - a.last_seen) + " s";
  return why;
}

nlohmann::json StragglersJson(const DeploymentStatus& s, std::int64_t now) {
  nlohmann::json list = nlohmann::json::array();
  for (const AgentState& a : Stragglers(s)) {
    list.push_back({{"agent", a.agent},
                    {"state", a.state},
                    {"reason", a.reason},
                    {"bytes", a.bytes},
                    {"silent", a.silent},
                    {"why", StragglerWhy(a, s.size, now)}});
  }
  return list;
}

void PrintDeployment(const DeploymentStatus& s, std::int64_t now) {
  std::cout << "deployment " << s.name << " " << s.info_hash << " ("
            << FormatBytes(static_cast<double>(s.size)) << ") to " << s.to << ": done " << s.done
            << "/" << s.total << (s.failed ? ", failed " + std::to_string(s.failed) : "") << "\n";
  if (s.agents.empty()) return;
  std::printf("  %-28s %-9s %10s  %-24s %s\n", "AGENT", "STATE", "BYTES", "LABELS", "WHY");
  for (const AgentState& a : s.agents) {
    std::printf("  %-28.28s %-9s %10s  %-24.24s %s\n", a.agent.c_str(), a.state.c_str(),
                FormatBytes(static_cast<double>(a.bytes)).c_str(), a.labels.c_str(),
                a.state == "done" ? "" : StragglerWhy(a, s.size, now).c_str());
  }
}

}  // namespace swarmcast::node::cli
