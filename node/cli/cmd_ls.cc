// swarmcast ls --tracker URL: the swarms the registry publishes.
#include <cstdio>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/json_output.h"
#include "node/units.h"

namespace swarmcast::node::cli {

int RunLs(int argc, char** argv) {
  CommonFlags common;
  TrackerFlags trk;
  po::options_description d("Options");
  AddTrackerOptions(d, trk);
  AddCommonOptions(d, common);
  po::variables_map vm;
  if (auto code = ParseArgs(argc, argv, d, {}, "swarmcast ls --tracker URL [--json]",
                            "Lists the swarms published in the tracker's registry: name,\n"
                            "info-hash, size, and the peers the tracker counts (seeders,\n"
                            "leechers, completed downloads).",
                            vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  if (trk.tracker.empty()) {
    log.Error("ls needs --tracker URL");
    return kExitUsage;
  }
  auto client = ToRegistryClient(trk, log);
  auto retry = ToRetryPolicy(trk, log);
  if (!client || !retry) return kExitUsage;
  auto swarms = WithRetries(*retry, log, "tracker", [&] { return client->ListSwarms(); });
  if (!swarms) {
    log.Error(ToString(swarms.error()));
    return ExitFor(swarms.error());
  }
  if (common.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const SwarmInfo& s : *swarms) {
      list.push_back({{"name", s.name},
                      {"info_hash", s.info_hash},
                      {"size", s.size},
                      {"seeders", s.seeders},
                      {"leechers", s.leechers},
                      {"completed", s.completed},
                      {"push", s.push.empty() ? nlohmann::json() : nlohmann::json(s.push)},
                      {"push_chain", s.push_chain},
                      {"created", s.created}});
    }
    Output().SetResult({{"tracker", client->url().ToString()}, {"swarms", std::move(list)}});
    return kExitOk;
  }
  if (swarms->empty()) {
    std::printf("no swarms published at %s\n", client->url().ToString().c_str());
    return kExitOk;
  }
  std::printf("%-28s %-40s %10s %7s %8s %9s %s\n", "NAME", "INFO-HASH", "SIZE", "SEEDERS",
              "LEECHERS", "COMPLETED", "PUSH");
  for (const SwarmInfo& s : *swarms) {
    std::printf("%-28s %-40s %10s %7lld %8lld %9lld %s\n", s.name.c_str(), s.info_hash.c_str(),
                FormatBytes(static_cast<double>(s.size)).c_str(), static_cast<long long>(s.seeders),
                static_cast<long long>(s.leechers), static_cast<long long>(s.completed),
                s.push.empty() ? "-" : (s.push_chain ? "chain" : "on"));
  }
  return kExitOk;
}

}  // namespace swarmcast::node::cli
