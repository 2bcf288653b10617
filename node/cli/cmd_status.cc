// swarmcast status [--tracker URL NAME]
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <thread>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/deployment_view.h"
#include "node/cli/json_output.h"
#include "node/file_io.h"
#include "node/fleet_api.h"
#include "node/units.h"
#include "proto/metainfo.h"

namespace swarmcast::node::cli {
namespace {

using Json = nlohmann::json;

// The tracker's text on a terminal: control bytes become '?', so a
// hostile tracker cannot move the cursor or clear the screen.
std::string Printable(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s;
}

// Transfers running on this machine, from the status files they keep in
// StateDir(). Files of processes that are gone are removed.
int LocalStatus(const CommonFlags& common, const proto::Logger& log) {
  const auto dir = StateDir();
  if (auto why = UnsafeStateDir(dir)) {
    log.Error("not reading status files: " + *why);
    return kExitStorage;
  }
  Json list = Json::array();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    auto text = ReadFileBounded(entry.path(), 1 << 20);
    if (!text) continue;
    Json j = Json::parse(*text, nullptr, false);
    if (j.is_discarded()) continue;  // a writer's rename is atomic: not ours
    if (!WriterAlive(j)) {
      // Left behind by a killed process (its pid may have been reused).
      std::filesystem::remove(entry.path(), ec);
      continue;
    }
    list.push_back(std::move(j));
  }
  if (common.json) {
    Output().SetResult({{"state_dir", dir.string()}, {"transfers", list}});
    return kExitOk;
  }
  if (list.empty()) {
    std::cout << "no transfers running (" << dir.string() << ")\n";
    return kExitOk;
  }
  std::printf("%-7s %-5s %-28s %-18s %7s %12s %12s %5s\n", "PID", "ROLE", "NAME", "STATE", "DONE",
              "DOWN", "UP", "PEERS");
  for (const Json& j : list) {
    const double total = j.value("total_bytes", 0.0);
    const double done = j.value("done_bytes", 0.0);
    std::printf("%-7ld %-5s %-28.28s %-18.18s %6.1f%% %10s/s %10s/s %5d\n", j.value("pid", 0L),
                j.value("role", "").c_str(), j.value("name", "").c_str(),
                j.value("state", "").c_str(), total > 0 ? 100 * done / total : 100.0,
                FormatBytes(j.value("down_rate", 0.0)).c_str(),
                FormatBytes(j.value("up_rate", 0.0)).c_str(), j.value("peers", 0));
  }
  return kExitOk;
}

int SwarmStatus(RegistryClient& client, const RetryPolicy& retry, const std::string& key,
                const CommonFlags& common, const proto::Logger& log) {
  auto swarm = WithRetries(retry, log, "tracker", [&] { return client.GetSwarm(key); });
  if (!swarm) {
    log.Error(ToString(swarm.error()));
    return ExitFor(swarm.error());
  }
  auto view = WithRetries(retry, log, "tracker", [&] { return client.GetCompletion(key); });
  if (!view) {
    log.Error(ToString(view.error()));
    return ExitFor(view.error());
  }
  // The deployment of that name, when there is one: each agent's state.
  std::optional<DeploymentStatus> deployment;
  if (proto::IsValidSwarmName(key)) {
    auto dep = WithRetries(retry, log, "tracker", [&] { return GetDeployment(client, key); });
    if (dep) {
      deployment = std::move(*dep);
    } else if (dep.error().kind != RegistryError::Kind::kNotFound) {
      log.Warning("deployment of " + key + ": " + ToString(dep.error()));
    }
  }
  if (common.json) {
    Json stragglers = Json::array();
    for (const Straggler& s : view->stragglers) {
      stragglers.push_back({{"peer", s.peer},
                            {"ip", s.ip},
                            {"port", s.port},
                            {"left", s.left},
                            {"since", s.since},
                            {"last_announce", s.last_announce},
                            {"why", s.why},
                            {"reason", s.reason},
                            {"idle_seconds", s.idle_seconds},
                            {"rate", s.rate}});
    }
    Json j = {{"name", swarm->name},         {"info_hash", swarm->info_hash},
              {"size", swarm->size},         {"seeders", swarm->seeders},
              {"leechers", swarm->leechers}, {"completed", swarm->completed},
              {"total", view->total},        {"done", view->done},
              {"running", view->running},    {"stale", view->stale},
              {"all_done", view->AllDone()}, {"stragglers", stragglers}};
    j["deployment"] = Json();
    if (deployment) {
      Json dj = deployment->raw;
      dj["stragglers"] = StragglersJson(*deployment, std::time(nullptr));
      j["deployment"] = std::move(dj);
    }
    Output().SetResult(std::move(j));
    return kExitOk;
  }
  std::cout << swarm->name << " " << swarm->info_hash << " ("
            << FormatBytes(static_cast<double>(swarm->size)) << ")\n"
            << "  done " << view->done << "/" << view->total << ", running " << view->running
            << ", stale " << view->stale << (view->AllDone() ? "  -- every peer is done" : "")
            << "\n";
  if (!view->stragglers.empty()) {
    std::printf("  %-15s %-6s %12s %-12s %s\n", "IP", "PORT", "LEFT", "WHY", "DETAIL");
    for (const Straggler& s : view->stragglers) {
      std::printf("  %-15s %-6lld %12s %-12s %s\n", s.ip.c_str(), static_cast<long long>(s.port),
                  FormatBytes(static_cast<double>(s.left)).c_str(),
                  Printable(s.why.empty() ? "-" : s.why).c_str(), Printable(s.reason).c_str());
    }
  }
  if (deployment) PrintDeployment(*deployment, std::time(nullptr));
  return kExitOk;
}

}  // namespace

int RunStatus(int argc, char** argv) {
  CommonFlags common;
  TrackerFlags trk;
  std::string key, watch;
  po::options_description d("Options");
  d.add_options()("swarm", po::value(&key), "registry name or info-hash (with --tracker)")(
      "watch", po::value(&watch)->implicit_value("2s"),
      "with --tracker URL NAME: redraw every INTERVAL (--watch alone: 2s) until interrupted");
  AddTrackerOptions(d, trk);
  AddCommonOptions(d, common);
  po::positional_options_description pos;
  pos.add("swarm", 1);
  po::variables_map vm;
  if (auto code =
          ParseArgs(argc, argv, d, pos, "swarmcast status [--tracker URL NAME|INFOHASH] [--json]",
                    "Without NAME: the seeds and downloads running on this machine\n"
                    "(from the status files in $SWARMCAST_STATE_DIR, else\n"
                    "$XDG_RUNTIME_DIR/swarmcast, else /tmp/swarmcast-UID).\n"
                    "With NAME: the swarm's completion as the tracker (--tracker, or the\n"
                    "configured one) sees it: how many peers are done, still running or\n"
                    "stale, and the stragglers; and when NAME is deployed to the fleet\n"
                    "(swarmcast deploy), each agent's state.",
                    vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  // By NAME, not by --tracker: on a node whose config file names the
  // tracker, a bare `status` still lists this machine's transfers.
  if (key.empty()) return LocalStatus(common, log);
  if (trk.tracker.empty()) {
    log.Error("a swarm name needs --tracker URL");
    return kExitUsage;
  }
  if (!proto::IsValidSwarmName(key) && !proto::IsInfoHashHex(key)) {
    log.Error("status --tracker wants a swarm name or 40-hex info-hash");
    return kExitUsage;
  }
  auto client = ToRegistryClient(trk, log);
  auto retry = ToRetryPolicy(trk, log);
  if (!client || !retry) return kExitUsage;
  if (watch.empty()) return SwarmStatus(*client, *retry, key, common, log);
  auto every = ParseDuration(watch);
  if (!every || every->count() < 100) {
    log.Error("--watch wants an interval of at least 100ms, e.g. 2s");
    return kExitUsage;
  }
  if (common.json) {
    log.Error("--watch redraws for a person; for scripts, run status --json in a loop");
    return kExitUsage;
  }
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  for (;;) {
    // On a terminal: home and clear, then the view, so it redraws in place.
    if (tty) std::fputs("\033[H\033[2J", stdout);
    std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&now));
    std::printf("%s  (every %s; Ctrl-C to stop)\n", stamp, watch.c_str());
    std::fflush(stdout);
    if (const int code = SwarmStatus(*client, *retry, key, common, log); code != kExitOk) {
      return code;
    }
    std::fflush(stdout);
    std::this_thread::sleep_for(*every);
  }
}

}  // namespace swarmcast::node::cli
