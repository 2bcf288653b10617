// swarmcast deploy NAME --to all|label=K=V|N [--wait [DURATION]] [--share F] | --remove
#include <cmath>
#include <ctime>
#include <iostream>
#include <thread>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/deployment_view.h"
#include "node/cli/json_output.h"
#include "node/fleet_api.h"
#include "node/units.h"
#include "proto/fleet_names.h"
#include "proto/metainfo.h"

namespace swarmcast::node::cli {
namespace {

std::int64_t UnixNow() { return static_cast<std::int64_t>(std::time(nullptr)); }

// Agents that must be done for --share F of `total`: at least one.
std::int64_t Needed(std::int64_t total, double share) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(share * total - 1e-9)));
}

}  // namespace

int RunDeploy(int argc, char** argv) {
  CommonFlags common;
  TrackerFlags trk;
  std::string name, to, wait = "0";
  double share = 1.0;
  bool remove = false;
  po::options_description d("Options");
  d.add_options()("name", po::value(&name)->required(), "the published name to deploy")(
      "to", po::value(&to),
      "which agents: all, label=KEY=VALUE, or a count N (the first N agents to sync)")(
      "wait", po::value(&wait)->default_value(wait)->implicit_value("1h"),
      "wait up to this long until the agents are done (--wait alone: 1h); on time-out, "
      "name the stragglers and why, and exit 8")(
      "share", po::value(&share)->default_value(share),
      "with --wait: the fraction of the assigned agents that must be done (0 < F <= 1)")(
      "remove", po::bool_switch(&remove),
      "remove the deployment instead: agents stop fetching it and may evict it");
  AddTrackerOptions(d, trk);
  AddCommonOptions(d, common);
  po::positional_options_description pos;
  pos.add("name", 1);
  po::variables_map vm;
  if (auto code = ParseArgs(
          argc, argv, d, pos,
          "swarmcast deploy NAME --to all|label=KEY=VALUE|N [--wait [DURATION]] [--share F]\n"
          "       swarmcast deploy NAME --remove",
          "Assigns the published swarm NAME to the tracker's agents (swarmcast agent):\n"
          "all of them, those with a label, or a count. The tracker keeps the\n"
          "deployment; each agent fetches it, seeds it and reports back (swarmcast\n"
          "status NAME shows each agent). Deploying again with new content under NAME\n"
          "moves the agents to it. Needs an admin token, like publishing.",
          vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  if (!CheckSwarmName(name, log)) return kExitUsage;
  if (remove && (!to.empty() || !vm["wait"].defaulted())) {
    log.Error("--remove takes neither --to nor --wait");
    return kExitUsage;
  }
  if (!remove && to.empty()) {
    log.Error("--to all|label=KEY=VALUE|N is required (or --remove)");
    return kExitUsage;
  }
  if (!(share > 0 && share <= 1)) {
    log.Error("--share wants a fraction in (0, 1], e.g. 0.9");
    return kExitUsage;
  }
  auto wait_for = ParseDuration(wait);
  if (!wait_for) {
    log.Error("--wait: " + wait_for.error());
    return kExitUsage;
  }
  auto client = ToRegistryClient(trk, log);
  auto retry = ToRetryPolicy(trk, log);
  if (!client || !retry) return kExitUsage;

  if (remove) {
    // A retry after a lost reply gets 404: gone either way.
    auto gone =
        WithRetries(*retry, log, "tracker", [&] { return RemoveDeployment(*client, name); });
    if (!gone) {
      log.Error(ToString(gone.error()));
      Output().SetResult({{"name", name}, {"http_status", gone.error().http_status}});
      return ExitFor(gone.error());
    }
    if (common.json) {
      Output().SetResult({{"name", name}, {"info_hash", gone->info_hash}, {"deleted", true}});
    } else {
      std::cout << "removed deployment " << name << " (" << gone->info_hash << ")\n";
    }
    return kExitOk;
  }

  auto target = proto::ParseDeployTarget(to);
  if (!target) {
    log.Error("--to: " + target.error());
    return kExitUsage;
  }
  bool created = false;
  // The same deployment again keeps the agents' reports: safe to retry.
  auto deployed =
      WithRetries(*retry, log, "tracker", [&] { return Deploy(*client, name, *target, &created); });
  if (!deployed) {
    log.Error(ToString(deployed.error()));
    Output().SetResult({{"name", name}, {"http_status", deployed.error().http_status}});
    return ExitFor(deployed.error());
  }
  log.Info(std::string(created ? "deployed " : "re-deployed ") + name + " (" + deployed->info_hash +
           ") to " + target->ToString() + ": " + std::to_string(deployed->total) +
           " agents assigned so far");
  nlohmann::json result = {{"name", name},
                           {"info_hash", deployed->info_hash},
                           {"to", target->ToString()},
                           {"created", created}};
  if (wait_for->count() == 0) {
    result["total"] = deployed->total;
    result["done"] = deployed->done;
    if (common.json) {
      Output().SetResult(std::move(result));
    } else {
      std::cout << (created ? "deployed " : "re-deployed ") << name << " (" << deployed->info_hash
                << ") to " << target->ToString() << "\n";
    }
    return kExitOk;
  }

  const auto deadline = std::chrono::steady_clock::now() + *wait_for;
  std::optional<DeploymentStatus> last;
  // Polled often enough to return soon after the last agent's report.
  RegistryClient poller = client->WithTimeout(std::chrono::seconds(5));
  for (;;) {
    auto s = GetDeployment(poller, name);
    if (s) {
      last = std::move(*s);
      if (last->total > 0 && last->done >= Needed(last->total, share)) break;
    } else if (!Retryable(s.error(), false)) {
      log.Error(ToString(s.error()));
      return ExitFor(s.error());
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  const std::int64_t now = UnixNow();
  const bool complete = last && last->total > 0 && last->done >= Needed(last->total, share);
  result["total"] = last ? last->total : 0;
  result["done"] = last ? last->done : 0;
  result["failed"] = last ? last->failed : 0;
  result["share"] = share;
  result["complete"] = complete;
  result["stragglers"] = last ? StragglersJson(*last, now) : nlohmann::json::array();
  Output().SetResult(result);
  if (!common.json && last) PrintDeployment(*last, now);
  if (complete) return kExitOk;
  std::string names;
  if (last) {
    for (const AgentState& a : Stragglers(*last)) {
      if (names.size() > 400) {
        names += ", ...";
        break;
      }
      names +=
          (names.empty() ? "" : ", ") + a.agent + " (" + StragglerWhy(a, last->size, now) + ")";
    }
  }
  log.Error("deployment " + name + " not done within " + wait + ": " +
            std::to_string(last ? last->done : 0) + " of " +
            std::to_string(last ? last->total : 0) + " agents done" +
            (names.empty() ? std::string(" (no agent assigned yet)") : "; " + names));
  return kExitStalled;
}

}  // namespace swarmcast::node::cli
