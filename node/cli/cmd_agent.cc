// swarmcast agent --tracker URL --data-dir DIR [--labels K=V,...] [--quota SIZE]
#include <sys/stat.h>

#include "node/agent/agent_id.h"
#include "node/agent/agent_service.h"
#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/json_output.h"
#include "node/cli/metrics_endpoint.h"
#include "node/metrics_server.h"
#include "node/units.h"
#include "proto/fleet_names.h"

namespace swarmcast::node::cli {

int RunAgent(int argc, char** argv) {
  CommonFlags common;
  NetworkFlags net;
  TrackerFlags trk;
  std::string data_dir, labels_text, quota_text = "0", poll_text = "5s", id;
  MetricsFlags metrics_flags;
  po::options_description d("Options");
  d.add_options()("data-dir", po::value(&data_dir)->required(),
                  "where the agent keeps its id, its ledger and the content it fetched")(
      "labels", po::value(&labels_text),
      "KEY=VALUE[,KEY=VALUE...] a deployment can select this agent by (e.g. rack=r12,role=gpu)")(
      "quota", po::value(&quota_text)->default_value(quota_text),
      "bytes of content to keep (e.g. 200GiB; 0: no quota): content no longer assigned is "
      "evicted least recently used first to make room")(
      "poll-interval", po::value(&poll_text)->default_value(poll_text),
      "how often to sync with the tracker (+-20% jitter), at least 1s")(
      "id", po::value(&id),
      "agent id (default: the one kept in DATA_DIR/agent-id, made at first start from the "
      "host name)");
  AddMetricsOptions(d, metrics_flags);
  AddTrackerOptions(d, trk);
  AddNetworkOptions(d, net);
  AddCommonOptions(d, common);
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto code = ParseArgs(
          argc, argv, d, pos,
          "swarmcast agent --tracker URL --data-dir DIR [--labels K=V,...] [--quota SIZE]",
          "Runs until interrupted: registers with the tracker's fleet API under its id\n"
          "(kept in DATA_DIR/agent-id) and labels, fetches every deployment assigned to\n"
          "it with `swarmcast get` (push, verification, resume), keeps what it fetched\n"
          "seeded within --quota, and reports each one's state (pending, fetching,\n"
          "done, failed) back. Killed and restarted, it resumes from the verified\n"
          "pieces. It authenticates with an agent, announce or admin token\n"
          "(--token-file, --token or $SWARMCAST_TOKEN).",
          vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  auto labels = proto::ParseLabels(labels_text);
  if (!labels) {
    log.Error("--labels: " + labels.error());
    return kExitUsage;
  }
  auto quota = ParseByteSize(quota_text);
  if (!quota) {
    log.Error("--quota: " + quota.error());
    return kExitUsage;
  }
  auto poll = ParseDuration(poll_text);
  if (!poll || poll->count() < 1000) {
    log.Error("--poll-interval wants at least 1s, e.g. 5s");
    return kExitUsage;
  }
  auto client = ToRegistryClient(trk, log);
  auto netopts = ToNetworkOptions(net, log);
  if (!client || !netopts || !ToRetryPolicy(trk, log)) return kExitUsage;

  const std::filesystem::path dir = std::filesystem::absolute(data_dir).lexically_normal();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    log.Error("cannot create " + dir.string() + ": " + ec.message());
    return kExitStorage;
  }
  auto agent_id = LoadOrCreateAgentId(dir, id);
  if (!agent_id) {
    log.Error(agent_id.error());
    return kExitStorage;
  }

  AgentOptions o;
  o.data_dir = dir;
  o.id = *agent_id;
  o.labels = std::move(*labels);
  o.quota = *quota;
  o.poll = *poll;
  o.log = log;
  // The children get everything on their command line: no config file of
  // their own (a [get] section could contradict what the agent passes).
  o.child_args = {"--tracker",
                  client->url().ToString(),
                  "--timeout",
                  trk.timeout,
                  "--tracker-retry",
                  trk.retry_for,
                  "--listen",
                  net.listen,
                  "--disk-io",
                  net.disk_io,
                  "--max-download-rate",
                  net.max_download_rate,
                  "--max-upload-rate",
                  net.max_upload_rate};
  for (const std::string& c : net.connect) {
    o.child_args.push_back("--connect");
    o.child_args.push_back(c);
  }
  if (!trk.ca_file.empty()) {
    o.child_args.push_back("--ca-file");
    o.child_args.push_back(trk.ca_file);
  }
  if (common.verbose) o.child_args.push_back("-v");
  // The token through the environment, not argv: /proc/PID/environ is
  // readable only by the same user.
  o.child_env = {"SWARMCAST_CONFIG=", "SWARMCAST_TRACKER=", "SWARMCAST_TOKEN=" + client->token(),
                 "SWARMCAST_STATE_DIR=" + (dir / "state").string(),
                 "SWARMCAST_CACHE_DIR=" + (dir / "cache").string()};
  AgentService agent(std::move(o), std::move(*client));
  if (auto why = agent.Open()) {
    log.Error(*why);
    return kExitStorage;
  }
  // The agent's own view (node/agent/agent_metrics.h); its children's
  // transfers are not scraped through it.
  AgentMetrics metrics;
  std::unique_ptr<MetricsServer> metrics_server;
  if (!metrics_flags.listen.empty()) {
    auto ep = proto::ParseEndpoint(metrics_flags.listen, {.allow_port_zero = true});
    if (!ep) {
      log.Error("--metrics-listen '" + metrics_flags.listen + "': " + ep.error());
      return kExitUsage;
    }
    auto server = MetricsServer::Start(*ep, [&metrics] { return metrics.Text(); });
    if (!server) {
      log.Error("--metrics-listen: " + server.error());
      return kExitUsage;
    }
    metrics_server = std::move(*server);
    log.Info("metrics on http://" + metrics_server->address() + "/metrics");
    agent.SetMetrics(&metrics);
  }
  const int code = agent.Run();
  Output().SetResult(agent.Summary());
  return code;
}

}  // namespace swarmcast::node::cli
